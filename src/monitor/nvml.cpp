// NVML (NVIDIA's management library), loaded with dlopen and never linked:
// rig builds and runs where there is no NVIDIA driver. Reads each GPU's
// power (mW), temperature (C) and total energy (mJ, where the GPU has it).
#include <dlfcn.h>

#include "monitor/sources.hpp"

namespace rig::monitor {
namespace {

using nvmlReturn = int;  // NVML_SUCCESS == 0
using nvmlDevice = void*;
using InitFn = nvmlReturn (*)();
using CountFn = nvmlReturn (*)(unsigned*);
using HandleFn = nvmlReturn (*)(unsigned, nvmlDevice*);
using PowerFn = nvmlReturn (*)(nvmlDevice, unsigned*);
using TempFn = nvmlReturn (*)(nvmlDevice, int, unsigned*);
using EnergyFn = nvmlReturn (*)(nvmlDevice, unsigned long long*);
using ShutdownFn = nvmlReturn (*)();

class Nvml final : public MonitorSource {
 public:
  explicit Nvml(std::string library) : library_(std::move(library)) {}
  ~Nvml() override {
    if (initialized_ && shutdown_) shutdown_();
    if (handle_) dlclose(handle_);
  }
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  std::string name() const override { return "nvml"; }
  SourceKind kind() const override { return SourceKind::host; }
  SourceStatus probe() override {
    SourceStatus s;
    s.name = name();
    s.kind = kind();
    s.state = SourceState::unavailable;
    if (library_.empty()) {
      s.detail = "NVML not tried (no library set)";
      return s;
    }
    handle_ = dlopen(library_.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle_) {
      const char* e = dlerror();
      s.detail = "no NVML on this host: dlopen(" + library_ + "): " + (e ? e : "failed");
      return s;
    }
    auto init = sym<InitFn>("nvmlInit_v2");
    auto count = sym<CountFn>("nvmlDeviceGetCount_v2");
    auto handle = sym<HandleFn>("nvmlDeviceGetHandleByIndex_v2");
    power_ = sym<PowerFn>("nvmlDeviceGetPowerUsage");
    temp_ = sym<TempFn>("nvmlDeviceGetTemperature");
    energy_ = sym<EnergyFn>("nvmlDeviceGetTotalEnergyConsumption");
    shutdown_ = sym<ShutdownFn>("nvmlShutdown");
    if (!init || !count || !handle || !power_ || !temp_) {
      s.detail = library_ + " lacks the NVML functions rig reads";
      return s;
    }
    if (const int rc = init(); rc != 0) {
      s.detail = "nvmlInit failed (NVML error " + std::to_string(rc) + ")";
      return s;
    }
    initialized_ = true;
    unsigned n = 0;
    if (count(&n) != 0 || n == 0) {
      s.detail = "NVML reports no GPU";
      return s;
    }
    for (unsigned i = 0; i < n; ++i) {
      nvmlDevice d = nullptr;
      if (handle(i, &d) == 0) gpus_.push_back(d);
    }
    if (gpus_.empty()) {
      s.detail = "NVML gives no handle for its GPUs";
      return s;
    }
    first_energy_.assign(gpus_.size(), std::nullopt);
    s.state = SourceState::available;
    s.detail = std::to_string(gpus_.size()) + " GPU(s) through " + library_;
    return s;
  }
  void sample(Nanos, std::map<std::string, double>& out, std::vector<std::string>&) override {
    for (size_t i = 0; i < gpus_.size(); ++i) {
      const std::string id = "nvml" + std::to_string(i);
      unsigned mw = 0, c = 0;
      if (power_(gpus_[i], &mw) == 0) out["power_w:" + id] = mw / 1e3;
      if (temp_(gpus_[i], 0 /* NVML_TEMPERATURE_GPU */, &c) == 0) out["temp_c:" + id] = c;
      unsigned long long mj = 0;
      if (energy_ && energy_(gpus_[i], &mj) == 0) {
        const double j = static_cast<double>(mj) / 1e3;
        if (!first_energy_[i]) first_energy_[i] = j;
        // The counter is monotonic since the driver loaded; a drop is a reset.
        if (j >= *first_energy_[i]) out["energy_j:" + id] = j - *first_energy_[i];
      }
    }
  }

 private:
  template <class F>
  F sym(const char* name) {
    return reinterpret_cast<F>(dlsym(handle_, name));
  }
  std::string library_;
  void* handle_ = nullptr;
  bool initialized_ = false;
  PowerFn power_ = nullptr;
  TempFn temp_ = nullptr;
  EnergyFn energy_ = nullptr;
  ShutdownFn shutdown_ = nullptr;
  std::vector<nvmlDevice> gpus_;
  std::vector<std::optional<double>> first_energy_;
};

}  // namespace

std::unique_ptr<MonitorSource> nvml_source(const std::string& library) {
  return std::make_unique<Nvml>(library);
}

}  // namespace rig::monitor

// DeviceConformance: the contract of rig/device.hpp, run against every
// device: cpu, sim, null, remote (a served sim on 127.0.0.1, port picked by
// the kernel) and hailo (its sources on the HailoRT test double).
//
// A device is added by one factory below (how to open it, a small model it
// runs) and one line in the Devices list. Each case drives the device through
// a check function that returns the violations it saw as text: the typed tests
// expect none, and BrokenDevice shows that a device breaking the contract (a
// fixture that implements Device directly) is caught.
//
// Deterministic: sim and hailo run on virtual clocks; the real-clock devices
// are bounded only by what cannot flake (a cancelled 60 s loop returns before
// its 60 s; every figure is checked against the device's own clock).
//
// One file on purpose (over 600 lines): the checks, the five device cases
// and the broken fixture are one suite, and a new device reads them together.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "device_conformance.hpp"
#include "devices/cpu/cpu_device.hpp"
#include "devices/hailo/hailo_device.hpp"
#include "hailo_double.hpp"
#include "server/server.hpp"

namespace rig::conformance {
namespace {

namespace hd = hailo_double;

// ---- the devices under test ------------------------------------------------
// Each: kName, open() -> Result<std::unique_ptr<Device>>, model() -> ModelSource.
// A factory outlives its device (it may hold what the device needs).

struct CpuCase {
  static constexpr const char* kName = "cpu";
  Result<std::unique_ptr<Device>> open() {
    auto spec = parse_spec("cpu:threads=1,workers=2,depth=4");
    if (!spec) return tl::unexpected(spec.error());
    return open_cpu_device(spec->params);
  }
  ModelSource model() { return transport_model(); }
};

struct SimCase {
  static constexpr const char* kName = "sim";
  Result<std::unique_ptr<Device>> open() {
    return open_device("sim:compute=1ms,bw=1GB/s,lat=0.1ms,depth=4,load=0ms");
  }
  ModelSource model() { return transport_model(); }
};

struct NullCase {
  static constexpr const char* kName = "null";
  Result<std::unique_ptr<Device>> open() { return open_device("null:depth=4"); }
  ModelSource model() { return transport_model(); }
};

// A sim served by rig serve in this process; the server stops with the case.
struct RemoteCase {
  static constexpr const char* kName = "remote";
  std::unique_ptr<server::Server> server;
  Result<std::unique_ptr<Device>> open() {
    auto sim = open_device("sim:compute=100us,bw=1GB/s,depth=4,load=0ms");
    if (!sim) return tl::unexpected(sim.error());
    server::ServerSettings s;
    s.listen = "127.0.0.1:0";
    auto started = server::Server::start(std::move(*sim), s);
    if (!started) return tl::unexpected(started.error());
    server = std::move(*started);
    return open_device(server->address() + "?calibrate=0");
  }
  ModelSource model() { return transport_model(); }
};

// The hailo device's own sources on the HailoRT test double (virtual clock).
struct HailoCase {
  static constexpr const char* kName = "hailo";
  std::filesystem::path dir;
  HailoCase() {
    hd::reset();
    hd::script().for_duration = hd::ForDuration::works;
    dir = std::filesystem::path(::testing::TempDir()) /
          ("conformance_hailo_" + std::to_string(::getpid()) + "_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "tiny.hef") << hd::hef_text(
        {"network_group tiny", "input in0 8x8x3 uint8", "output out0 1x1x10 uint8"});
  }
  ~HailoCase() {
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  }
  HailoCase(const HailoCase&) = delete;
  HailoCase& operator=(const HailoCase&) = delete;
  Result<std::unique_ptr<Device>> open() {
    return open_hailo_device({{"depth", "4"}}, hd::clock());
  }
  ModelSource model() {
    ModelSource m;
    m.path = (dir / "tiny.hef").string();
    return m;
  }
};

// Every device: append a factory above and its name here.
using ConformanceDevices = ::testing::Types<CpuCase, SimCase, NullCase, RemoteCase, HailoCase>;

}  // namespace
}  // namespace rig::conformance

#include "device_conformance_suite.hpp"

namespace rig::conformance {
namespace {

// ---- a device that breaks the contract is caught ----------------------------

// Implements Device directly, like the null device, but takes any number of
// requests: past its queue depth a submit succeeds instead of queue_full.
class OverfullDevice final : public Device {
 public:
  DeviceInfo info() const override {
    DeviceInfo i;
    i.spec = i.kind = "overfull";
    i.queue_depth = 2;
    return i;
  }
  Clock& clock() override { return steady_clock(); }
  Result<LoadTimings> load(const ModelSource& source) override {
    auto bytes = read_model_source(source);
    if (!bytes) return tl::unexpected(bytes.error());
    auto info = inspect_onnx(bytes->bytes, model_display_name(source));
    if (!info) return tl::unexpected(info.error());
    model_ = std::move(*info);
    bindings_ = 0;
    return LoadTimings{};
  }
  const ModelInfo& model_info() const override { return model_; }
  Result<BindingId> bind(const Bindings& b) override {
    if (auto ok = check_bindings(model_, b); !ok) return tl::unexpected(ok.error());
    return bindings_++;
  }
  Result<InferenceTimings> run(BindingId) override { return InferenceTimings{}; }
  Result<void> submit(BindingId binding, uint64_t tag) override {
    Completion c;
    c.tag = tag;
    c.binding = binding;
    ready_.push_back(c);  // the bug: no check against queue_depth
    return {};
  }
  Result<Completion> wait_next(Nanos) override {
    if (ready_.empty()) return fail(ErrorCode::invalid_argument, "nothing in flight");
    Completion c = ready_.front();
    ready_.pop_front();
    return c;
  }
  uint32_t in_flight() const override { return static_cast<uint32_t>(ready_.size()); }
  Result<DurationRun> run_for_duration(BindingId, Nanos, Nanos) override {
    return fail(ErrorCode::unsupported, "no loop");
  }
  ByteCounters bytes() const override { return {}; }

 private:
  ModelInfo model_;
  BindingId bindings_ = 0;
  std::deque<Completion> ready_;
};

TEST(DeviceConformanceCatches, ASubmitPastTheQueueDepth) {
  OverfullDevice broken;
  const auto v = check_queue_depth(broken, transport_model());
  ASSERT_FALSE(v.empty());
  EXPECT_NE(join(v).find("a submit past the queue depth (2) succeeded; expected queue_full"),
            std::string::npos)
      << join(v);
}

}  // namespace
}  // namespace rig::conformance

// The cpu device's ONNX Runtime runtime (cpu:runtime=ort): one Ort::Session
// per worker, all created from the same normalised bytes and options.
//
// load(): parse = rig's normalisation pass in its ONNX-valid form (with the
// checks every reader makes: initializer sizes, opsets, --shape), compile =
// creating the sessions (ONNX Runtime's graph optimisation and kernel
// selection). bind(): tensors (Ort::Value) over the caller's buffers, inputs
// and outputs, so that Session::Run reads and writes the caller's memory
// with no copies. The first Run allocates ONNX Runtime's arena and stays cold.
//
// Timing of one inference: compute = Session::Run; transfer_in and
// transfer_out are 0 (no copies). ONNX Runtime offers no per-run device-side
// timing beyond its profiler, which profile() uses (a separate session with
// profiling on, so that the measured sessions never pay for it).
//
// ONNX Runtime throws Ort::Exception; every call is wrapped. A model it
// refuses at session creation is `unsupported` with its message.

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>

#include <onnxruntime_cxx_api.h>
#include <nlohmann/json.hpp>

#include "devices/cpu/cpu_runtime.hpp"
#include "rig/units.hpp"

namespace rig::cpu {
namespace {

ONNXTensorElementDataType ort_type(ElementType t) {
  switch (t) {
    case ElementType::f32:
      return ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT;
    case ElementType::f16:
      return ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16;
    case ElementType::f64:
      return ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE;
    case ElementType::u8:
      return ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8;
    case ElementType::boolean:
      return ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL;
    case ElementType::i8:
      return ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8;
    case ElementType::u16:
      return ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT16;
    case ElementType::i16:
      return ONNX_TENSOR_ELEMENT_DATA_TYPE_INT16;
    case ElementType::i32:
      return ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32;
    case ElementType::i64:
      return ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64;
  }
  return ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
}

// While any is alive, std::cerr writes nowhere. Debian 13's ONNX Runtime
// registers ONNX's operator schemas again when its environment is made (the
// shared libonnx registered them when it loaded), and ONNX reports each
// duplicate, 567 lines of "Schema error: ... already registered", on
// std::cerr. The swap is process-wide, so it is counted under a lock: the
// first one in silences, the last one out restores what was there, however
// sessions are created across threads. Another thread's std::cerr output in
// that span is lost too; rig writes to std::cerr only from the thread that
// drives the device.
class SilencedCerr {
 public:
  SilencedCerr() {
    std::lock_guard lock(mutex_);
    if (count_++ == 0) saved_ = std::cerr.rdbuf(nullptr);
  }
  ~SilencedCerr() {
    std::lock_guard lock(mutex_);
    if (--count_ == 0) std::cerr.rdbuf(saved_);
  }
  SilencedCerr(const SilencedCerr&) = delete;
  SilencedCerr& operator=(const SilencedCerr&) = delete;

 private:
  static inline std::mutex mutex_;
  static inline int count_ = 0;
  static inline std::streambuf* saved_ = nullptr;
};

// A fresh folder under the temporary directory, removed with everything in
// it when this goes out of scope, whatever path the caller leaves by.
class TempFolder {
 public:
  TempFolder() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "rig-ort-profile-XXXXXX").string();
    if (::mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~TempFolder() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;

  // Empty when the folder could not be made.
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// One environment per process, as ONNX Runtime asks; its log shows errors only.
Ort::Env& ort_env() {
  static Ort::Env env = [] {
    SilencedCerr quiet;
    return Ort::Env(ORT_LOGGING_LEVEL_ERROR, "rig");
  }();
  return env;
}

std::string ort_version() {
  return Ort::GetVersionString();
}

// The first line of an ONNX Runtime message.
std::string first_line(const std::string& what) {
  return what.substr(0, what.find('\n'));
}

// The tensors over the caller's buffers, in the model's order.
class OrtBuffers final : public BoundBuffers {
 public:
  using BoundBuffers::BoundBuffers;
  std::vector<Ort::Value> inputs;
  std::vector<Ort::Value> outputs;
};

struct OrtModel {
  std::vector<std::byte> bytes;  // what the sessions were created from
  std::vector<std::string> input_names, output_names;
  std::vector<const char*> input_ptrs, output_ptrs;  // into the names above
};

Ort::SessionOptions session_options(const CpuConfig& config) {
  Ort::SessionOptions options;
  options.SetIntraOpNumThreads(static_cast<int>(config.threads));
  options.SetInterOpNumThreads(static_cast<int>(config.inter_threads));
  const std::map<std::string, GraphOptimizationLevel> levels = {
      {"disable", GraphOptimizationLevel::ORT_DISABLE_ALL},
      {"basic", GraphOptimizationLevel::ORT_ENABLE_BASIC},
      {"extended", GraphOptimizationLevel::ORT_ENABLE_EXTENDED},
      {"all", GraphOptimizationLevel::ORT_ENABLE_ALL}};
  options.SetGraphOptimizationLevel(levels.at(config.optimization));
  options.SetExecutionMode(config.execution == "parallel" ? ExecutionMode::ORT_PARALLEL
                                                          : ExecutionMode::ORT_SEQUENTIAL);
  return options;
}

Result<Ort::Session> create_session(const OrtModel& model, const Ort::SessionOptions& options) {
  try {
    Ort::Env& env = ort_env();
    // The schemas' re-registration (SilencedCerr) can also come with a
    // session: a profiling one brings it in rig profile.
    SilencedCerr quiet;
    return Ort::Session(env, model.bytes.data(), model.bytes.size(), options);
  } catch (const std::exception& e) {
    return fail(ErrorCode::unsupported,
                "ONNX Runtime " + ort_version() + " refused the model: " + first_line(e.what()));
  }
}

// The profiler's file: a JSON array of events; a node's kernel is
// {"cat": "Node", "name": "<node>_kernel_time", "dur": <us>, "args": {"op_name": ...}},
// a run is {"cat": "Session", "name": "model_run", "ts": <us>, "dur": <us>}.
// The first run (warm-up) is left out: events before its end are skipped.
std::vector<LayerTime> profile_layers_from(const nlohmann::json& events);

Result<std::vector<LayerTime>> parse_profile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return fail(ErrorCode::io, "cannot read ONNX Runtime's profile " + path);
  nlohmann::json events = nlohmann::json::parse(in, nullptr, false);
  if (!events.is_array())
    return fail(ErrorCode::device, "ONNX Runtime's profile " + path + " is not a JSON array");
  // nlohmann's value() throws on an event whose keys hold other types than
  // ONNX Runtime writes: a profile rig cannot read is an error, not a crash.
  try {
    return profile_layers_from(events);
  } catch (const nlohmann::json::exception& e) {
    return fail(ErrorCode::device,
                "ONNX Runtime's profile " + path + " has an event rig cannot read: " + e.what());
  }
}

std::vector<LayerTime> profile_layers_from(const nlohmann::json& events) {
  const std::string suffix = "_kernel_time";
  double warm_end_us = -1;
  for (const auto& e : events) {
    if (!e.is_object()) continue;
    if (e.value("cat", "") == "Session" && e.value("name", "") == "model_run") {
      warm_end_us = e.value("ts", 0.0) + e.value("dur", 0.0);
      break;
    }
  }
  std::vector<LayerTime> layers;
  std::map<std::string, size_t> index;
  for (const auto& e : events) {
    if (!e.is_object() || e.value("cat", "") != "Node") continue;
    std::string name = e.value("name", "");
    if (name.size() <= suffix.size() ||
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    if (e.value("ts", 0.0) < warm_end_us) continue;
    name.resize(name.size() - suffix.size());
    auto [it, added] = index.try_emplace(name, layers.size());
    if (added) {
      LayerTime layer;
      layer.name = name;
      if (e.contains("args") && e["args"].is_object())
        layer.op_type = e["args"].value("op_name", "");
      layers.push_back(std::move(layer));
    }
    LayerTime& layer = layers[it->second];
    layer.total += Nanos(static_cast<int64_t>(e.value("dur", 0.0) * 1000));
    ++layer.calls;
  }
  return layers;
}

class OrtSession final : public Session {
 public:
  OrtSession(Ort::Session session, std::shared_ptr<const OrtModel> model, const CpuConfig& config)
      : session_(std::move(session)), model_(std::move(model)), config_(config) {}

  Result<InferenceTimings> infer(BoundBuffers& bound) override {
    InferenceTimings timings;
    const Nanos t0 = steady_clock().now();
    if (auto ok = run_on(session_, bound); !ok) return tl::unexpected(ok.error());
    timings.compute = steady_clock().now() - t0;
    timings.transfer_in = Nanos{0};
    timings.transfer_out = Nanos{0};
    return timings;
  }

  // The outputs land in the caller's buffers on every frame.
  Result<void> loop_begin(BoundBuffers& bound) override {
    looped_ = &bound;
    return {};
  }
  Result<void> loop_forward() override { return run_on(session_, *looped_); }
  Result<void> loop_end(BoundBuffers&) override {
    looped_ = nullptr;
    return {};
  }

  Result<LayerProfile> profile(BoundBuffers& bound, uint32_t runs) override {
    LayerProfile profile;
    profile.profiler = "onnxruntime " + ort_version();
    // ONNX Runtime writes PREFIX_<date>.json; each profile gets its own
    // folder, so concurrent profiles never share a name and nothing is left
    // behind when profiling fails.
    TempFolder folder;
    if (folder.path().empty())
      return fail(ErrorCode::io, "cannot make a folder for ONNX Runtime's profile under " +
                                     std::filesystem::temp_directory_path().string());
    const std::string prefix = folder.path() + "/rig-ort-profile";
    std::string path;
    try {
      Ort::SessionOptions options = session_options(config_);
      options.EnableProfiling(prefix.c_str());
      auto session = create_session(*model_, options);
      if (!session) return tl::unexpected(session.error());
      if (auto ok = run_on(*session, bound); !ok) return tl::unexpected(ok.error());  // warm-up
      const Nanos t0 = steady_clock().now();
      for (uint32_t run = 0; run < runs; ++run)
        if (auto ok = run_on(*session, bound); !ok) return tl::unexpected(ok.error());
      profile.wall = steady_clock().now() - t0;
      Ort::AllocatorWithDefaultOptions allocator;
      path = session->EndProfilingAllocated(allocator).get();
    } catch (const std::exception& e) {
      return fail(ErrorCode::device, "ONNX Runtime profiling failed: " + first_line(e.what()));
    }
    auto layers = parse_profile(path);
    if (!layers) return tl::unexpected(layers.error());
    profile.layers = std::move(*layers);
    return profile;
  }

 private:
  Result<void> run_on(Ort::Session& session, BoundBuffers& bound) {
    auto& buffers = static_cast<OrtBuffers&>(bound);
    try {
      session.Run(run_options_, model_->input_ptrs.data(), buffers.inputs.data(),
                  buffers.inputs.size(), model_->output_ptrs.data(), buffers.outputs.data(),
                  buffers.outputs.size());
    } catch (const std::exception& e) {
      return fail(ErrorCode::device, "ONNX Runtime inference failed: " + first_line(e.what()));
    }
    return {};
  }

  Ort::Session session_;
  std::shared_ptr<const OrtModel> model_;
  const CpuConfig config_;
  Ort::RunOptions run_options_;
  BoundBuffers* looped_ = nullptr;
};

class OrtRuntime final : public Runtime {
 public:
  explicit OrtRuntime(const CpuConfig& config) : config_(config) {}

  void describe(DeviceInfo& info) const override {
    info.description = "ONNX Runtime " + ort_version() + " on the host CPU (" +
                       std::to_string(config_.threads) + " intra-op threads, " +
                       std::to_string(config_.workers) + " sessions)";
    info.properties["onnxruntime_version"] = ort_version();
    info.properties["backend"] = "onnxruntime";
    info.properties["inter_threads"] = std::to_string(config_.inter_threads);
    info.properties["optimization"] = config_.optimization;
    info.properties["execution"] = config_.execution;
  }

  Result<LoadedModel> load(ModelBytes read, const std::string& name,
                           const std::vector<InputShape>& shapes, LoadTimings& timings) override {
    const Nanos t1 = steady_clock().now();
    // ONNX Runtime reads standard ONNX: the pass without OpenCV's forms.
    NormalizeOptions normalize;
    normalize.shapes = shapes;
    auto normalized = normalize_onnx(read.bytes, normalize, name);
    if (!normalized) return tl::unexpected(normalized.error());
    auto model = std::make_shared<OrtModel>();
    if (normalized->changed())
      model->bytes = std::move(normalized->bytes);
    else
      model->bytes.assign(read.bytes.begin(), read.bytes.end());
    auto info = inspect_onnx(model->bytes, name);
    if (!info) return tl::unexpected(info.error());
    info->normalization = std::move(normalized->report);
    for (const auto& t : info->inputs) model->input_names.push_back(t.name);
    for (const auto& t : info->outputs) model->output_names.push_back(t.name);
    for (const auto& n : model->input_names) model->input_ptrs.push_back(n.c_str());
    for (const auto& n : model->output_names) model->output_ptrs.push_back(n.c_str());
    for (const auto* list : {&info->inputs, &info->outputs})
      for (const auto& t : *list)
        if (ort_type(t.type) == ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED)
          return fail(ErrorCode::unsupported, "tensor '" + t.name +
                                                  "' has a type rig's ort "
                                                  "runtime does not bind");
    const Nanos t2 = steady_clock().now();
    timings.parse = t2 - t1;

    LoadedModel loaded;
    try {
      const Ort::SessionOptions options = session_options(config_);
      for (uint32_t w = 0; w < config_.workers; ++w) {
        auto session = create_session(*model, options);
        if (!session) return tl::unexpected(session.error());
        loaded.sessions.push_back(
            std::make_unique<OrtSession>(std::move(*session), model, config_));
      }
    } catch (const std::exception& e) {
      return fail(ErrorCode::device, "ONNX Runtime session options: " + first_line(e.what()));
    }
    loaded.info = std::move(*info);
    timings.compile = steady_clock().now() - t2;
    return loaded;
  }

  Result<std::unique_ptr<BoundBuffers>> bind(const ModelInfo& model,
                                             const Bindings& buffers) override {
    auto bound = std::make_unique<OrtBuffers>(buffers);
    try {
      const Ort::MemoryInfo memory =
          Ort::MemoryInfo::CreateCpu(OrtDeviceAllocator, OrtMemTypeDefault);
      auto tensor = [&](const TensorInfo& t, std::byte* data) {
        return Ort::Value::CreateTensor(memory, data, t.bytes, t.shape.data(), t.shape.size(),
                                        ort_type(t.type));
      };
      for (size_t i = 0; i < model.inputs.size(); ++i)  // ONNX Runtime only reads inputs
        bound->inputs.push_back(
            tensor(model.inputs[i], const_cast<std::byte*>(buffers.inputs[i].data())));
      for (size_t i = 0; i < model.outputs.size(); ++i)
        bound->outputs.push_back(tensor(model.outputs[i], buffers.outputs[i].data()));
    } catch (const std::exception& e) {
      return fail(ErrorCode::device,
                  "ONNX Runtime cannot wrap the buffers: " + first_line(e.what()));
    }
    return std::unique_ptr<BoundBuffers>(std::move(bound));
  }

 private:
  const CpuConfig config_;
};

}  // namespace

Result<std::unique_ptr<Runtime>> make_ort_runtime(const CpuConfig& config) {
  return std::unique_ptr<Runtime>(std::make_unique<OrtRuntime>(config));
}

}  // namespace rig::cpu

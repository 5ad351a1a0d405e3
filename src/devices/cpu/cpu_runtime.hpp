// What the cpu device's worker pool (cpu_device.cpp) asks of a runtime:
// OpenCV DNN (opencv_runtime.cpp) or ONNX Runtime (ort_runtime.cpp, built
// when configure found it: RIG_WITH_ONNXRUNTIME). The pool owns the queue,
// the threads, the bindings and the on-device loop; a runtime turns a model
// into one Session per worker and runs inferences on caller-owned buffers.
// Nothing here throws: each runtime catches its library's exceptions and
// returns them as Error values.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "rig/device.hpp"
#include "rig/model.hpp"

namespace rig::cpu {

enum class RuntimeKind { opencv, ort };
std::string_view to_string(RuntimeKind kind);

// Whether this build has ONNX Runtime (found at configure time).
bool ort_built();

// The cpu device's spec, validated (cpu_config.cpp; the parameters and their
// defaults are documented in cpu_device.hpp).
struct CpuConfig {
  RuntimeKind runtime = RuntimeKind::opencv;
  uint32_t threads = 1;
  uint32_t workers = 1;
  uint32_t depth = 2;
  // ONNX Runtime only.
  uint32_t inter_threads = 1;
  std::string optimization = "all";      // disable, basic, extended, all
  std::string execution = "sequential";  // sequential, parallel
};

Result<CpuConfig> parse_cpu_config(const std::map<std::string, std::string>& params);

// Buffers registered by bind(): the caller's spans, and whatever a runtime
// wraps around them (ONNX Runtime: tensors over the same memory). Owned by
// the pool; stable while a request is in flight on them.
class BoundBuffers {
 public:
  explicit BoundBuffers(Bindings b) : buffers(std::move(b)) {}
  virtual ~BoundBuffers() = default;
  BoundBuffers(const BoundBuffers&) = delete;
  BoundBuffers& operator=(const BoundBuffers&) = delete;
  Bindings buffers;
};

// One inference context (an OpenCV Net, an ONNX Runtime session). Driven by
// one thread at a time: the pool holds its worker's mutex around each call.
class Session {
 public:
  virtual ~Session() = default;
  // One inference from the buffers' inputs to their outputs. Timings:
  // transfer_in / transfer_out are copies into and out of the runtime (0 when
  // it works on the caller's memory), compute the runtime's run call.
  virtual Result<InferenceTimings> infer(BoundBuffers& buffers) = 0;
  // The on-device loop: loop_begin once (inputs in), loop_forward per frame,
  // loop_end once (the last frame's outputs into the buffers).
  virtual Result<void> loop_begin(BoundBuffers& buffers) = 0;
  virtual Result<void> loop_forward() = 0;
  virtual Result<void> loop_end(BoundBuffers& buffers) = 0;
  // `runs` inferences under the runtime's per-layer profiler; `wall` is
  // their elapsed time (a profiling session's creation and warm-up excluded).
  virtual Result<LayerProfile> profile(BoundBuffers& buffers, uint32_t runs) = 0;
};

struct LoadedModel {
  ModelInfo info;
  std::vector<std::unique_ptr<Session>> sessions;  // one per worker
};

class Runtime {
 public:
  virtual ~Runtime() = default;
  // Fills description and properties (the effective settings) of `info`.
  virtual void describe(DeviceInfo& info) const = 0;
  // Parse (rig's checks and normalisation, the runtime's import) and compile
  // (the runtime's sessions, one per worker) the bytes read; sets
  // timings.parse and timings.compile.
  virtual Result<LoadedModel> load(ModelBytes read, const std::string& name,
                                   const std::vector<InputShape>& shapes, LoadTimings& timings) = 0;
  // Wraps checked buffers of the loaded model (allocation and binding).
  virtual Result<std::unique_ptr<BoundBuffers>> bind(const ModelInfo& model,
                                                     const Bindings& buffers) = 0;
};

std::unique_ptr<Runtime> make_opencv_runtime(const CpuConfig& config);
// Fails with unsupported, saying why, when ONNX Runtime is not built.
Result<std::unique_ptr<Runtime>> make_ort_runtime(const CpuConfig& config);

}  // namespace rig::cpu

// The cpu device's ort runtime in a build without ONNX Runtime
// (cmake/RigOnnxRuntime.cmake did not find it): refused by name.
#include "devices/cpu/cpu_runtime.hpp"

namespace rig::cpu {

Result<std::unique_ptr<Runtime>> make_ort_runtime(const CpuConfig&) {
  return fail(ErrorCode::unsupported,
              "cpu:runtime=ort is not built: ONNX Runtime was not found at configure time; on "
              "Debian 13 install libonnxruntime-dev and configure again");
}

}  // namespace rig::cpu

// The cpu device: ONNX models on the host CPU, in-process, through one of
// two runtimes. Spec:
//   cpu[:runtime=ort|opencv,threads=N,workers=N,depth=N,
//        inter_threads=N,optimization=disable|basic|extended|all,
//        execution=sequential|parallel]
//   runtime        ort (ONNX Runtime's C++ API) where the build found ONNX
//                  Runtime, and then the default; else opencv (OpenCV DNN).
//                  runtime=ort in a build without it is `unsupported`
//                  ("not built: ...", exit 2).
//   threads        intra-op threads, default: all hardware threads, under
//                  both runtimes. OpenCV's is process-wide (cv::setNumThreads:
//                  the last cpu device opened sets it); ONNX Runtime's is per
//                  session.
//   workers        inference workers, each with its own Net or session, default 1
//   depth          queue depth (requests in flight), default 2 x workers
//   inter_threads  (ort) inter-op threads, default 1 (used with execution=parallel)
//   optimization   (ort) graph optimisation level, default all
//   execution      (ort) sequential (default) or parallel
// Unknown parameters, a parameter of the other runtime (named), values out
// of range and unknown choices are invalid_argument. DeviceInfo::spec and
// properties hold every effective value.
//
// load(): read = reading the file; parse = rig's normalisation pass and
// checks (every model, either runtime) plus OpenCV's import; compile =
// configuring the Nets (opencv) or creating the sessions, ONNX Runtime's
// graph optimisation (ort). bind() is the allocation and binding (ort: tensors
// over the caller's buffers, no copies); the first inference stays cold under
// both. An op a runtime cannot take is `unsupported` and named; a failed
// load leaves no model loaded. Every ElementType is accepted: ONNX Runtime
// binds each as it is; OpenCV takes u8, bool and f32 as they are and others
// converted to f32, and its outputs are converted to the declared type.
// profile_layers(): ONNX Runtime's profiler or OpenCV's per-layer timings.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "rig/device.hpp"

namespace rig {

// `params`: a DeviceSpec's params (rig/device_spec.hpp), link profiles expanded.
Result<std::unique_ptr<Device>> open_cpu_device(const std::map<std::string, std::string>& params);

}  // namespace rig

// The cpu device: ONNX models through OpenCV DNN, in-process.
// Spec: cpu[:threads=N,workers=N,depth=N]
//   threads  OpenCV's intra-op threads (cv::setNumThreads), default: all cores.
//            Process-wide in OpenCV: the last cpu device opened sets it.
//   workers  inference workers, each with its own cv::dnn::Net, default 1
//   depth    queue depth (requests in flight), default 2 x workers
// Unknown parameters, 0 and non-integers are invalid_argument.
//
// load(): read = reading the file, parse = ONNX inspection plus one
// cv::dnn::readNetFromONNX per worker, compile = configuring the Nets and
// starting the workers. OpenCV allocates layers on the first forward, so the
// first inference stays cold. An op OpenCV cannot import is `unsupported` and
// named; a failed load leaves no model loaded. Inputs of any ElementType are
// accepted (u8, bool and f32 as they are, others converted to f32); outputs
// are converted from OpenCV's f32 to the declared type.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "rig/device.hpp"

namespace rig {

// `params`: a DeviceSpec's params (rig/device_spec.hpp), link profiles expanded.
Result<std::unique_ptr<Device>> open_cpu_device(const std::map<std::string, std::string>& params);

}  // namespace rig

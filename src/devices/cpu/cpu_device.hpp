// The cpu device: ONNX models through OpenCV DNN, in-process.
// Spec: cpu[:threads=N,workers=N,depth=N]
//   threads  OpenCV's intra-op threads (cv::setNumThreads), default: all cores
//   workers  inference workers, each with its own cv::dnn::Net, default 1
//   depth    queue depth (requests in flight), default 2 x workers
#pragma once

#include <memory>

#include "rig/device.hpp"
#include "rig/units.hpp"

namespace rig {

Result<std::unique_ptr<Device>> open_cpu_device(const Spec& spec);

}  // namespace rig

// The cpu device's import of an ONNX model into OpenCV 4.6 DNN: what
// OpenCV needs patched in, one cv::dnn::Net per worker, each configured for
// OpenCV's own CPU backend, and OpenCV's failures mapped to Error values that
// name the op. Every OpenCV call is wrapped: nothing here throws.
#pragma once

#include <cstddef>
#include <set>
#include <span>
#include <string>
#include <vector>

#include <opencv2/dnn.hpp>

#include "rig/device.hpp"
#include "rig/error.hpp"

namespace rig::cpu {

// The first line of an OpenCV message without its "OpenCV(4.6.0) file:line:
// error: (-2:Unspecified error)" prefix.
std::string short_reason(const std::string& what);

// The model as OpenCV 4.6 takes it: every graph output's shape declared,
// filled in from what inspect_onnx inferred. The op types name the culprit
// when the import fails.
struct OpenCvModel {
  std::set<std::string> op_types;
  // Every node whose op OpenCV 4.6's importer has no parser for (see
  // opencv_has_parser): "Op 'node' (opset N, inputs 1x3x8x8, 64)".
  std::vector<std::string> unparsed;
  std::string patched;  // the model re-serialized; empty: the bytes as given
};

// Whether OpenCV 4.6.0's ONNX importer has a parser for the op; `domain`
// "" is ai.onnx. The table is in opencv_ops.cpp.
bool opencv_has_parser(const std::string& domain, const std::string& op);

OpenCvModel prepare_for_opencv(std::span<const std::byte> bytes, const ModelInfo& info);

// Parse: `count` nets, all from the same bytes (the patched ones when there
// are). Failures are unsupported, naming the op OpenCV refused.
Result<std::vector<cv::dnn::Net>> import_nets(std::span<const std::byte> bytes,
                                              const OpenCvModel& model, uint32_t count);

// Compile: configures each net for OpenCV's own backend on the CPU and returns
// OpenCV's names of the model's outputs, in the model's order. OpenCV
// allocates its layers on the first forward(), which therefore stays cold, as
// on a fresh device.
Result<std::vector<std::string>> configure_nets(std::vector<cv::dnn::Net>& nets,
                                                const ModelInfo& info,
                                                const std::set<std::string>& op_types);

}  // namespace rig::cpu

// What tells model variants apart without running them: digests of the
// artifact and of an ONNX model's weights, and a short list of per-tensor
// facts (quantisation scales and zero points, parameter counts). Read by
// rig compare.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "rig/error.hpp"

namespace rig {

struct TensorFact {
  std::string tensor;  // the initializer's name, or "" for a model-wide fact
  std::string fact;    // "quantisation scale", "zero point", "initializers", "parameters"
  double value = 0;
};

struct ModelWeights {
  std::string artifact_sha256;                // of the whole file
  std::optional<std::string> weights_sha256;  // ONNX only: initializers in graph order
  std::vector<TensorFact> facts;              // at most kMaxTensorFacts per-tensor facts
};

inline constexpr size_t kMaxTensorFacts = 8;

// The weights digest covers, for each initializer in graph order, its data
// type, its dims and its elements as little-endian bytes (raw_data, or the
// typed field re-encoded), so a renamed but otherwise equal model has the same
// digest. Bytes that do not parse as ONNX are treated as another format: the
// artifact digest alone, no error.
ModelWeights model_weights(std::span<const std::byte> artifact);

}  // namespace rig

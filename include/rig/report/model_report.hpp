// rig model's reporters: a model's inputs and outputs with their byte sizes.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "rig/device.hpp"
#include "rig/model.hpp"

namespace rig {

// "PATH" then one line per tensor: direction, name, type, shape, bytes.
std::string format_model_text(const std::string& path, const ModelInfo& model);

// "wrote PATH (SIZE): in BYTES, out BYTES" for a model rig built.
std::string format_model_written_text(const std::string& path, size_t file_bytes,
                                      const ModelInfo& model);

// What `rig model inspect` found: the model's facts, the inputs and outputs
// after the normalisation pass (with what it did), and whether the cpu
// device loads it, with every reason when not.
struct ModelInspection {
  std::string path;
  OnnxFacts facts;
  std::optional<ModelInfo> info;    // after the pass; absent when the pass refused
  std::optional<Error> pass_error;  // the pass's refusal (e.g. a dynamic dimension)
  bool runs_on_cpu = false;
  std::vector<std::string> cpu_reasons;  // why not, each one
};

std::string format_model_inspection_text(const ModelInspection& inspection);
std::string model_inspection_to_json(const ModelInspection& inspection);

// "identity_removed 3, constant_folded 12" (empty when none).
std::string format_rewrites(const ModelRewrites& rewrites);

}  // namespace rig

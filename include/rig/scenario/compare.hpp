// rig compare: model variants side by side on one device and one input. Per
// variant: the artifact's sha256 and, for ONNX, its weights' sha256, a few
// per-tensor facts, output statistics, the output bytes differing from the
// first variant's, and a rerun for determinism.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "rig/device.hpp"
#include "rig/environment.hpp"
#include "rig/model_weights.hpp"
#include "rig/scenario/run.hpp"
#include "rig/tensor_io.hpp"

namespace rig {

struct CompareSettings {
  std::vector<std::string> models;          // where each came from (model_origin), in order
  std::string device = kDefaultDeviceSpec;  // device spec, as given
  std::vector<InputItem> inputs;            // as rig run's --input; empty: generated from seed
  uint64_t seed = 1;
};

struct VariantOutput {
  TensorInfo info;
  TensorStats stats;
};

struct VariantResult {
  std::string model;  // origin
  std::string name;   // display name
  // Digests and facts; weights.artifact_sha256 is empty when the artifact is
  // not on this host (a model under a remote server's --model-dir).
  ModelWeights weights;
  std::vector<std::string> input_sources;
  std::vector<VariantOutput> outputs;
  uint64_t output_bytes = 0;
  // Against the first variant; nullopt when the output sizes differ (then
  // `note` says so). The first variant's is 0.
  std::optional<uint64_t> bytes_differing_from_first;
  uint64_t rerun_bytes_differing = 0;  // the same variant run twice
  bool deterministic = false;          // rerun_bytes_differing == 0
  std::optional<std::string> note;
};

struct CompareResult {
  CompareSettings settings;
  DeviceInfo device;
  Environment environment;
  bool virtual_clock = false;
  // Why the outputs say nothing of the models, on a device that does not
  // compute them (the sim, null, or a server hosting one): then no variant's
  // outputs are compared with the first's. nullopt on a device that does.
  std::optional<std::string> outputs_not_the_models;
  std::vector<VariantResult> variants;
};

// Needs at least two models. Fails naming the variant when one does not load
// or run, or when its inputs cannot be fed.
Result<CompareResult> run_compare(Device& device, std::span<const ModelSource> models,
                                  const CompareSettings& settings);

}  // namespace rig

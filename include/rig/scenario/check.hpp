// rig check: the contract a scoring loop needs from a device, each line
// pass/fail with its evidence:
//  1. two different inputs give different outputs (differing bytes of total);
//  2. the same input twice gives bit-identical outputs (or, when
//     nondeterminism is allowed, the largest difference, reported);
//  3. an undersized and an oversized input buffer, and an undersized output
//     buffer, are refused by bind with invalid_argument;
//  4. nothing is written outside any buffer: every buffer sits between guard
//     bytes of a known pattern, checked after each device call.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "rig/device.hpp"
#include "rig/environment.hpp"
#include "rig/scenario/settings.hpp"

namespace rig {

struct CheckSettings {
  std::string model;                        // where the model came from (model_origin)
  std::string device = kDefaultDeviceSpec;  // device spec, as given
  bool allow_nondeterministic = false;
  uint64_t seed = 1;        // of the two generated inputs (seed, seed + 1000)
  size_t guard_bytes = 64;  // on each side of every buffer
};

Result<void> validate(const CheckSettings& settings);

struct CheckLine {
  std::string name;  // "different inputs give different outputs", ...
  bool passed = false;
  std::string evidence;                     // one line a person reads
  std::optional<uint64_t> differing_bytes;  // lines 1 and 2
  std::optional<uint64_t> total_bytes;
  std::optional<double> max_difference;  // line 2: largest element difference
  std::optional<Error> refusal;          // lines 3: what bind returned
};

struct CheckResult {
  CheckSettings settings;
  DeviceInfo device;
  ModelInfo model;
  Environment environment;
  bool virtual_clock = false;
  std::vector<CheckLine> checks;
  uint64_t guarded_calls = 0;  // device calls after which the guards were checked
  bool passed = false;         // every line passed
};

// Fails only when the model does not load or a correctly sized run fails;
// every contract breach is a failed line.
Result<CheckResult> run_check(Device& device, const ModelSource& model,
                              const CheckSettings& settings);

}  // namespace rig

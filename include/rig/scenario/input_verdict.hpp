// The verdicts of the results a command reads (rig predict reads a bench
// result and, with --ladder, a ladder result; rig fit --ladder a ladder
// result; rig place bench and predict results). A command that derives its
// figures from a result carries that result's verdict into its own: one rule
// `input_valid` per input, which invalidates. With `strict` an INVALID input
// is refused before anything is derived (refuse_invalid_inputs).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "rig/error.hpp"
#include "rig/scenario/verdict.hpp"

namespace rig {

struct InputVerdict {
  std::string source;  // the file read
  std::string tool;    // the document's tool, e.g. "rig bench"
  // The document's verdict.valid; nullopt: it records none (a rig predict
  // result before schema 6).
  std::optional<bool> valid;
  std::vector<std::string> reasons;  // its verdict.reasons
};

// "VALID", "INVALID", or "none" (no verdict recorded).
std::string input_status(const InputVerdict& input);

struct JudgedInputs {
  std::vector<InputVerdict> inputs;  // in the order read
  bool strict = false;               // --strict: an INVALID input was refused
  Verdict verdict;                   // one input_valid rule per input
};

// The verdict of a command over its inputs: rule `input_valid` per input,
// `invalidates`; an input without a verdict meets it and says so. `reader`
// names the command in findings ("predict").
JudgedInputs judge_inputs(std::vector<InputVerdict> inputs, bool strict, std::string_view reader);

// With `strict`, invalid_argument naming the first INVALID input and its
// reasons ("predict --strict: cpu1.json is INVALID (...)"); else success.
Result<void> refuse_invalid_inputs(const std::vector<InputVerdict>& inputs, bool strict,
                                   std::string_view reader);

}  // namespace rig

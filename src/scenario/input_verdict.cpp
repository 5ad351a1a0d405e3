#include "rig/scenario/input_verdict.hpp"

#include <utility>

namespace rig {
namespace {

std::string joined(const std::vector<std::string>& reasons) {
  std::string out;
  for (const auto& r : reasons) out += (out.empty() ? "" : "; ") + r;
  return out.empty() ? std::string("no reason recorded") : out;
}

}  // namespace

std::string input_status(const InputVerdict& input) {
  if (!input.valid) return "none";
  return *input.valid ? "VALID" : "INVALID";
}

JudgedInputs judge_inputs(std::vector<InputVerdict> inputs, bool strict, std::string_view reader) {
  JudgedInputs j;
  j.strict = strict;
  for (const auto& in : inputs) {
    RuleOutcome o;
    o.rule = "input_valid";
    o.severity = Severity::invalidates;
    o.evidence = in.source + " (" + in.tool + "): " + input_status(in);
    if (!in.valid) {
      o.evidence += ", no verdict recorded (its own inputs' verdicts are in that result)";
    } else if (!*in.valid) {
      o.met = false;
      o.findings.push_back(in.source + " is INVALID (" + joined(in.reasons) +
                           "): " + std::string(reader) +
                           " derives its figures from it; re-measure it until VALID, or give "
                           "--strict to refuse it");
    }
    j.verdict.add(std::move(o));
  }
  j.inputs = std::move(inputs);
  return j;
}

Result<void> refuse_invalid_inputs(const std::vector<InputVerdict>& inputs, bool strict,
                                   std::string_view reader) {
  if (!strict) return {};
  for (const auto& in : inputs)
    if (in.valid && !*in.valid)
      return fail(ErrorCode::invalid_argument,
                  std::string(reader) + " --strict: " + in.source + " is INVALID (" +
                      joined(in.reasons) +
                      "); re-measure it until VALID, or drop --strict to carry its verdict into "
                      "the result");
  return {};
}

}  // namespace rig

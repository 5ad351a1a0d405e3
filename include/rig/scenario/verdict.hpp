// The verdict of a result: every rule checked, each met or not with its
// evidence and what to change, in the way MLPerf LoadGen names each
// constraint. A rule that is not met either invalidates the result (a reason)
// or warns (a confound that does not invalidate it). Each scenario's
// judge(XResult), declared beside its result (rig/scenario/bench.hpp, ...),
// composes the rules that apply to it; the rules themselves are small named
// functions: the shared ones in src/scenario/rules.cpp and
// confound_rules.cpp, each scenario's own beside its judge.
#pragma once

#include <optional>

#include "rig/error.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace rig {

enum class Severity { invalidates, warns };
std::string_view to_string(Severity severity);

struct RuleOutcome {
  std::string rule;  // stable name, e.g. "enough_samples", "repeats_agree"
  Severity severity = Severity::invalidates;
  bool met = true;
  std::string evidence;               // what was measured, e.g. "3 repeats, spread 2.1%"
  std::vector<std::string> findings;  // when not met: one message each, with what to change
  std::string threshold;  // what the rule compares against, e.g. "others_cpu_max 0.10" (confounds)
};

struct Verdict {
  bool valid = true;
  std::vector<RuleOutcome> rules;     // every rule checked, met or not, in order
  std::vector<std::string> reasons;   // findings of unmet invalidating rules
  std::vector<std::string> warnings;  // findings of unmet warning rules

  // The first failure of the device or of the link to it during the run (an
  // error whose exit status is 3: disconnected, timeout, protocol, device,
  // queue_full), whatever the phase; the command then exits 3 (the result is
  // still written).
  std::optional<Error> failure;

  // Appends a rule's outcome and files its findings as reasons or warnings.
  void add(RuleOutcome outcome);
  // Records `error` as the failure when it is one of the device or link and
  // none was recorded yet.
  void saw(const std::optional<Error>& error);
};

// The exit status for a verdict: 3 when the device or link failed during the
// run (Verdict::failure), else with --strict 1 when INVALID, else 0.
int strict_exit_status(const Verdict& verdict, bool strict);

}  // namespace rig

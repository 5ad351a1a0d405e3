// The verdict of a result: every rule checked, each met or not with its
// evidence and what to change, in the way MLPerf LoadGen names each
// constraint. A rule that is not met either invalidates the result (a reason)
// or warns (a confound that does not invalidate it). judge() composes the
// rules that apply to each scenario; the rules themselves are small named
// functions in src/scenario/verdict.cpp.
#pragma once

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

  // Appends a rule's outcome and files its findings as reasons or warnings.
  void add(RuleOutcome outcome);
};

struct BenchResult;
struct LoopResult;
struct LadderResult;
struct SweepResult;
struct AbResult;
struct ConfoundInputs;

Verdict judge(const BenchResult& result);
Verdict judge(const LoopResult& result);
Verdict judge(const LadderResult& result);
Verdict judge(const SweepResult& result);
Verdict judge(const AbResult& result);

// The confound rules over a result's monitor record, cold start and
// environment (rig/scenario/confounds.hpp), in the order reported:
// host_contention, steal_time, thermal_drift, clock_drop, power_limited,
// device_warnings, cold_caches, shared_link. Each warns, or invalidates when
// inputs.settings->strict.
void add_confound_rules(Verdict& verdict, const ConfoundInputs& inputs);

// --strict: the exit status for a verdict (1 when INVALID and strict, else 0).
int strict_exit_status(const Verdict& verdict, bool strict);

}  // namespace rig

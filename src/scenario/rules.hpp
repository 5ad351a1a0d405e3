// The verdict rules more than one scenario checks, and the pieces every rule
// is built from. Private to the scenarios: each scenario's judge() (beside
// its run_x(), e.g. judge(BenchResult) in bench.cpp) composes these with its
// own rules, in the order their findings are reported. Defined in rules.cpp;
// the confounds (add_confound_rules, add_environment_confounds) in
// confound_rules.cpp.
//
// A rule is a function returning a RuleOutcome: its stable name, whether it
// invalidates or warns, the evidence, and (when not met) one finding per
// problem with what to change. Where a scenario checks a shared rule under a
// name of its own (no_lone_frame_errors), the name is the rule's `rule`
// parameter.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rig/device.hpp"
#include "rig/engine.hpp"
#include "rig/environment.hpp"
#include "rig/error.hpp"
#include "rig/monitor/monitor.hpp"
#include "rig/scenario/confounds.hpp"
#include "rig/scenario/point.hpp"
#include "rig/scenario/stability.hpp"
#include "rig/scenario/verdict.hpp"
#include "rig/stats.hpp"

namespace rig {

// ---------------------------------------------------------------------------
// Building a rule

// A met rule with its name, severity and evidence.
RuleOutcome outcome(std::string rule, Severity severity, std::string evidence);
// Adds a finding and marks the rule not met.
void finding(RuleOutcome& o, std::string message);
// "repeat 1" for i = 0: how findings name a repeat.
std::string repeat_name(size_t i);

// ---------------------------------------------------------------------------
// Every scenario

// depth_within_queue (warns): the depth asked for ran, or each clamp's note.
RuleOutcome depth_within_queue(const std::vector<std::string>& clamped_notes);
RuleOutcome depth_within_queue(const std::optional<std::string>& clamped_note);
// no_errors (invalidates): `errors` failed inferences `where` ("in lone
// frames"), naming the first.
RuleOutcome no_errors(uint64_t errors, const std::optional<Error>& first, std::string_view where,
                      std::string rule = "no_errors");
// not_cut_short (invalidates): a stop request (SIGINT, SIGTERM) ended the
// run early; `what` says where.
RuleOutcome not_cut_short(bool cut_short, const std::string& what);

// quiet_host (warns): the environment's warnings; on a virtual clock the
// host's load before the run is left out (it cannot move a simulated figure).
RuleOutcome quiet_host(const Environment& env, bool virtual_clock);
// device_without_warnings (warns): the warnings the device gave at open.
// `rule` and `prefix` name the device when a result has two (A/B).
RuleOutcome device_without_warnings(const DeviceInfo& device,
                                    std::string rule = "device_without_warnings",
                                    const std::string& prefix = "device: ");
// real_clock (warns): a virtual clock's figures are a model; `message` says so.
RuleOutcome real_clock(bool virtual_clock, std::string message);
// clock_across_link (invalidates): a remote device on an unpaced virtual
// clock timed here by the wall clock; `rule` and `who` name the device when
// a result has two (A/B). `lone` (may be null) gives the evidence figures.
RuleOutcome clock_across_link(const DeviceInfo& device, const LatencyResult* lone,
                              const std::string& rule = "clock_across_link",
                              const std::string& who = "");

// figures_consistent (invalidates): no lone frame below its device compute
// or the declared costs' floor, load parts within the load, the first
// inference at least its compute. `ttfo` and `lone` may be null (not checked).
RuleOutcome figures_consistent(const DeviceInfo& device, const ModelInfo& model,
                               const TtfoResult* ttfo, const LatencyResult* lone);

// The confounds every single-device result is checked for, in this order:
// quiet_host, device_without_warnings, real_clock (with `clock_message`),
// clock_across_link, then add_environment_confounds. Then each judge adds
// add_confound_rules (rig/scenario/confounds.hpp) over its inputs.
void add_confounds(Verdict& v, const Environment& env, const DeviceInfo& device, bool virtual_clock,
                   std::string clock_message, bool strict = false,
                   const LatencyResult* lone = nullptr);
// debug_build and cpu_governor: environment facts every result has. Each
// warns, or invalidates when `strict` (--strict-confounds).
void add_environment_confounds(Verdict& v, const Environment& env, bool virtual_clock, bool strict);

// The confound rules' inputs common to every result: its monitor record,
// thresholds, environment, device and clock. The judge adds the runs' windows
// and the cold-start figures where it has them.
ConfoundInputs confound_inputs(const MonitorRecord& monitor, const ConfoundSettings& settings,
                               const Environment& environment, const DeviceInfo& device,
                               bool virtual_clock);
// The same from a single-device result with `effective.confounds`.
template <class R>
ConfoundInputs confound_inputs(const R& r) {
  return confound_inputs(r.monitor, r.effective.confounds, r.environment, r.device,
                         r.virtual_clock);
}

// ---------------------------------------------------------------------------
// Repeats and their stability (rig bench's steady state)

// all_repeats_ran (invalidates).
RuleOutcome all_repeats_ran(size_t ran, uint32_t wanted);
// Per repeat `i`, so that each repeat's findings come together in the
// order the repeats ran: enough_samples, device_returned_requests and
// repeat_stable invalidate; rate_precise and warmup_settled warn.
// repeat_stable judges on enough data (judge_stability): a repeat whose
// windows held too few frames to tell a change from the frame-time noise
// warns instead ("too few frames per window (N): raise --duration").
RuleOutcome enough_samples(const SteadyRepeat& rep, size_t i, uint64_t min);
RuleOutcome device_returned_requests(const SteadyRepeat& rep, size_t i);
RuleOutcome repeat_stable(const SteadyRepeat& rep, size_t i, double tolerance);
RuleOutcome rate_precise(const SteadyRepeat& rep, size_t i, double tolerance);
RuleOutcome warmup_settled(const SteadyRepeat& rep, size_t i, Nanos cap);
// repeats_agree (invalidates): the repeats' rate spread within `tolerance`.
RuleOutcome repeats_agree(const Summary& rate, double tolerance);

// A single pipelined run (rig loop's host rate, rig soak's run):
// pipelined_run_completed (invalidates; `rule` renames it) and
// pipelined_run_stable (warns).
RuleOutcome pipelined_run_completed(const SteadyRepeat& steady,
                                    std::string rule = "pipelined_run_completed");
RuleOutcome pipelined_run_stable(const SteadyRepeat& steady, double tolerance);

// ---------------------------------------------------------------------------
// Samples and percentiles

// enough_lone_frames (invalidates): at least 10 lone frames.
RuleOutcome enough_lone_frames(uint64_t samples);
// Why a percentile's interval is not stated, after "p99: ": "not enough
// samples (n = 200, p99 needs >= 368 for a 95% interval); 168 more samples
// needed (RAISE)", or, where the count sufficed but its 8 batches were
// still correlated, that, with the lag-1 figure and what to raise.
std::string unstated_percentile(const PercentileInterval& ci, const std::string& raise);

// percentiles_resolved (warns; `rule` renames it): percentiles whose
// interval needs more samples than were taken are reported as "not enough
// samples", with how many more; `what` names the figure, `raise` what to
// change.
RuleOutcome percentiles_resolved(const Summary& s, const std::string& what,
                                 const std::string& raise,
                                 std::string rule = "percentiles_resolved");

// ---------------------------------------------------------------------------
// The declared cap: a rate above what the device's declared costs allow is
// impossible (the span ended inside a pipeline's filling or draining).

// The rounding a rate may exceed its cap by: wider when timed by the wall
// clock across a link than on the sim's own clock.
double cap_rounding(bool virtual_clock);
// rate_within_declared_cap (invalidates): `rate` against `cap` (none: met).
RuleOutcome within_declared_cap(const std::string& name, double rate,
                                const std::optional<double>& cap, double rounding);

// ---------------------------------------------------------------------------
// Points (rig ladder's rungs, rig sweep's depths), each named.

using NamedPoints = std::vector<std::pair<std::string, const PointResult*>>;
// points_stable, rate_within_declared_cap (each point's fastest repeat) and
// no_errors over every point; all invalidate.
// points_stable invalidates only for a repeat judged unstable on enough
// data (judge_stability); points_stability_resolved (warns) names the points
// whose windows held too few frames to judge.
RuleOutcome points_stable(const NamedPoints& points);
RuleOutcome points_stability_resolved(const NamedPoints& points, double tolerance);
RuleOutcome points_within_declared_cap(const NamedPoints& points, double rounding);
RuleOutcome points_without_errors(const NamedPoints& points);

}  // namespace rig

// The verdict rules: one small named function per constraint, each returning
// whether it was met, the evidence, and (when not met) what to change. The
// judge() functions compose the rules that apply to each scenario, in the
// order their findings are reported.
#include "rig/scenario/verdict.hpp"

#include "rig/scenario/ab.hpp"
#include "rig/scenario/bench.hpp"
#include "rig/scenario/ladder.hpp"
#include "rig/scenario/loop.hpp"
#include "rig/scenario/sweep.hpp"
#include "rig/units.hpp"

namespace rig {
namespace {

RuleOutcome outcome(std::string rule, Severity severity, std::string evidence) {
  RuleOutcome o;
  o.rule = std::move(rule);
  o.severity = severity;
  o.evidence = std::move(evidence);
  return o;
}

// Adds a finding and marks the rule not met.
void finding(RuleOutcome& o, std::string message) {
  o.met = false;
  o.findings.push_back(std::move(message));
}

std::string repeat_name(size_t i) {
  return "repeat " + std::to_string(i + 1);
}

// ---------------------------------------------------------------------------
// Rules shared by every scenario

RuleOutcome depth_within_queue(const std::vector<std::string>& clamped_notes) {
  RuleOutcome o = outcome("depth_within_queue", Severity::warns,
                          clamped_notes.empty() ? "the depth asked for was run" : "clamped");
  for (const auto& n : clamped_notes) finding(o, n);
  return o;
}

RuleOutcome depth_within_queue(const std::optional<std::string>& clamped_note) {
  return depth_within_queue(clamped_note ? std::vector<std::string>{*clamped_note}
                                         : std::vector<std::string>{});
}

RuleOutcome no_errors(uint64_t errors, const std::optional<Error>& first, std::string_view where) {
  RuleOutcome o = outcome("no_errors", Severity::invalidates,
                          std::to_string(errors) + " failed inference(s) " + std::string(where));
  if (errors > 0)
    finding(o, std::to_string(errors) + " inference(s) failed; first: " +
                   (first ? first->to_string() : std::string("unknown")));
  return o;
}

RuleOutcome quiet_host(const Environment& env) {
  RuleOutcome o = outcome("quiet_host", Severity::warns,
                          std::to_string(env.warnings.size()) + " environment warning(s)");
  for (const auto& w : env.warnings) finding(o, w);
  return o;
}

// `rule` and `prefix` name the device when a result has two (A/B).
RuleOutcome device_without_warnings(const DeviceInfo& device,
                                    std::string rule = "device_without_warnings",
                                    const std::string& prefix = "device: ") {
  RuleOutcome o = outcome(std::move(rule), Severity::warns,
                          std::to_string(device.warnings.size()) + " device warning(s)");
  for (const auto& w : device.warnings) finding(o, prefix + w);
  return o;
}

RuleOutcome real_clock(bool virtual_clock, std::string message) {
  RuleOutcome o =
      outcome("real_clock", Severity::warns, virtual_clock ? "virtual clock" : "real clock");
  if (virtual_clock) finding(o, std::move(message));
  return o;
}

// The confounds every result is checked for: the host, the device, the clock.
void add_confounds(Verdict& v, const Environment& env, const DeviceInfo& device, bool virtual_clock,
                   std::string clock_message) {
  v.add(quiet_host(env));
  v.add(device_without_warnings(device));
  v.add(real_clock(virtual_clock, std::move(clock_message)));
}

const char* kVirtualClock =
    "virtual clock: figures are the sim device's model, not a measurement of hardware";

// ---------------------------------------------------------------------------
// rig bench

RuleOutcome all_repeats_ran(size_t ran, uint32_t wanted) {
  RuleOutcome o = outcome("all_repeats_ran", Severity::invalidates,
                          std::to_string(ran) + " of " + std::to_string(wanted) + " repeats ran");
  if (ran < wanted)
    finding(o, "only " + std::to_string(ran) + " of " + std::to_string(wanted) + " repeats ran");
  return o;
}

// Per repeat, so that each repeat's findings come together, in the order
// the repeats ran.
RuleOutcome enough_samples(const SteadyRepeat& rep, size_t i, uint64_t min) {
  RuleOutcome o = outcome("enough_samples", Severity::invalidates,
                          repeat_name(i) + ": " + std::to_string(rep.inferences) +
                              " inferences, at least " + std::to_string(min) + " wanted");
  if (rep.inferences < min)
    finding(o, repeat_name(i) + ": too few samples (" + std::to_string(rep.inferences) + " < " +
                   std::to_string(min) + "); raise --duration or check the device");
  return o;
}

RuleOutcome device_returned_requests(const SteadyRepeat& rep, size_t i) {
  RuleOutcome o = outcome("device_returned_requests", Severity::invalidates,
                          repeat_name(i) + (rep.device_stuck ? ": requests stuck on the device"
                                                             : ": every request came back"));
  if (rep.device_stuck)
    finding(o, repeat_name(i) +
                   ": the device did not return every request after an error "
                   "(its buffers are kept alive); restart the device");
  return o;
}

RuleOutcome repeat_stable(const SteadyRepeat& rep, size_t i, double tolerance) {
  const std::string spread = rep.last_windows_spread
                                 ? format_fixed(*rep.last_windows_spread * 100, 1) + "%"
                                 : std::string("n/a: fewer than 3 windows");
  RuleOutcome o = outcome("repeat_stable", Severity::invalidates,
                          repeat_name(i) + ": last 3 windows differ by " + spread + ", at most " +
                              format_fixed(tolerance * 100, 1) + "% wanted");
  if (!rep.stable)
    finding(o, repeat_name(i) + ": not stable (last 3 windows differ by " + spread + " > " +
                   format_fixed(tolerance * 100, 1) +
                   "%); check for throttling or contention, or raise --duration");
  return o;
}

RuleOutcome rate_precise(const SteadyRepeat& rep, size_t i, double tolerance) {
  const std::string half = rep.rate_half_width
                               ? "+/-" + format_fixed(*rep.rate_half_width * 100, 2) + "%"
                               : std::string("n/a: fewer than 2 windows");
  RuleOutcome o = outcome("rate_precise", Severity::warns,
                          repeat_name(i) + ": rate 95% interval " + half + ", at most +/-" +
                              format_fixed(tolerance * 100, 1) + "% wanted");
  if (rep.capped && !rep.precise && !rep.aborted)
    finding(o, repeat_name(i) + ": the rate's interval (" + half + ") stayed wider than +/-" +
                   format_fixed(tolerance * 100, 1) +
                   "% up to the cap; raise --max-duration-factor or --rate-tolerance");
  return o;
}

RuleOutcome warmup_settled(const SteadyRepeat& rep, size_t i, Nanos cap) {
  RuleOutcome o = outcome("warmup_settled", Severity::warns,
                          repeat_name(i) + ": warm-up " + format_duration(rep.warmup) +
                              ", capped at " + format_duration(cap));
  if (!rep.warmup_settled && !rep.aborted)
    finding(o, repeat_name(i) + ": warm-up hit its cap of " + format_duration(cap) +
                   " before the rate settled");
  return o;
}

RuleOutcome repeats_agree(const Summary& rate, double tolerance) {
  RuleOutcome o = outcome("repeats_agree", Severity::invalidates,
                          rate.spread ? "spread " + format_fixed(*rate.spread * 100, 1) + "%"
                                      : std::string("spread n/a"));
  if (rate.spread && *rate.spread > tolerance)
    finding(o, "repeats disagree: spread " + format_fixed(*rate.spread * 100, 1) + "% > " +
                   format_fixed(tolerance * 100, 1) +
                   "%; the host or device is not steady (see warnings)");
  return o;
}

RuleOutcome enough_lone_frames(uint64_t samples) {
  constexpr uint64_t kMin = 10;
  RuleOutcome o = outcome("enough_lone_frames", Severity::invalidates,
                          std::to_string(samples) + " lone frames");
  if (samples < kMin)
    finding(o, "lone-frame latency: too few samples (" + std::to_string(samples) + " < " +
                   std::to_string(kMin) + ")");
  return o;
}

// Percentiles whose interval needs more samples than were taken: reported as
// "not enough samples", with how many more the rule needs.
RuleOutcome percentiles_resolved(const Summary& s, const std::string& what,
                                 const std::string& raise) {
  const PercentileInterval* cis[] = {&s.p90_ci, &s.p99_ci};
  std::string evidence = what + ": " + std::to_string(s.count) + " samples";
  for (const auto* ci : cis)
    evidence += ", p" + format_fixed(ci->p, 0) + " needs " + std::to_string(ci->needs);
  RuleOutcome o = outcome("percentiles_resolved", Severity::warns, evidence);
  for (const auto* ci : cis)
    if (s.count > 0 && !ci->enough())
      finding(o, what + " p" + format_fixed(ci->p, 0) +
                     ": not enough samples (n = " + std::to_string(ci->count) + ", p" +
                     format_fixed(ci->p, 0) + " needs >= " + std::to_string(ci->needs) + " for a " +
                     format_fixed(ci->confidence * 100, 0) + "% interval); " +
                     std::to_string(ci->more_needed()) + " more samples needed (" + raise + ")");
  return o;
}

// ---------------------------------------------------------------------------
// rig bench --rate: offered load

RuleOutcome offered_run_completed(const OfferedRun& o) {
  RuleOutcome out = outcome("offered_run_completed", Severity::invalidates,
                            std::to_string(o.completed) + " of " + std::to_string(o.arrivals) +
                                " measured frames completed");
  if (o.device_stuck)
    finding(out,
            "the device did not return every request (its buffers are kept alive); "
            "restart the device");
  else if (o.aborted)
    finding(out, "the offered-load run aborted: " +
                     (o.first_error ? o.first_error->to_string() : std::string("aborted")));
  if (o.arrivals == 0) finding(out, "no frame arrived in the measured time; raise --duration");
  return out;
}

RuleOutcome frames_on_time(const OfferedRun& o, Nanos threshold) {
  RuleOutcome out =
      outcome("frames_on_time", Severity::warns,
              std::to_string(o.late) + " of " + std::to_string(o.submitted) + " frames (" +
                  format_fixed(o.late_share * 100, 2) + "%) submitted more than " +
                  format_duration(threshold) + " after their arrival, at most " +
                  format_fixed(kLateShareLimit * 100, 0) + "% wanted");
  if (o.late_share > kLateShareLimit)
    finding(out, format_fixed(o.late_share * 100, 1) + "% of frames were submitted late (median " +
                     (o.lateness_ms.median ? format_ms(*o.lateness_ms.median) : "n/a") + ", max " +
                     (o.lateness_ms.max ? format_ms(*o.lateness_ms.max) : "n/a") +
                     " behind schedule): every request slot was busy, or the host could not "
                     "keep the schedule; the latency from arrival includes the wait");
  return out;
}

RuleOutcome no_dropped_frames(const OfferedRun& o) {
  RuleOutcome out =
      outcome("no_dropped_frames", Severity::warns, std::to_string(o.dropped) + " frames dropped");
  if (o.dropped > 0)
    finding(out, std::to_string(o.dropped) + " of " + std::to_string(o.arrivals) +
                     " frames were dropped with every request slot in flight (--on-full drop)");
  return out;
}

RuleOutcome keeps_up(const OfferedRun& o) {
  RuleOutcome out = outcome("keeps_up", Severity::warns,
                            "achieved " + format_fixed(o.achieved_rate, 2) + " frames/s of " +
                                format_fixed(o.scheduled_rate, 2) + " arrived (" +
                                format_fixed(o.offered_rate, 2) + " offered)");
  if (!o.keeps_up && !o.aborted)
    finding(out, "the device does not keep up with " + format_fixed(o.offered_rate, 2) +
                     " frames/s: it completed " + format_fixed(o.achieved_rate, 2) +
                     " frames/s; lower --rate or find the highest rate with rig sweep --rate");
  return out;
}

RuleOutcome rig_not_limiting(const OverheadResult& overhead) {
  RuleOutcome o = outcome("rig_not_limiting", Severity::warns,
                          overhead.measured ? overhead.note : "not measured");
  if (overhead.limiting) finding(o, overhead.note);
  return o;
}

// ---------------------------------------------------------------------------
// rig loop

RuleOutcome pipelined_run_completed(const SteadyRepeat& steady) {
  RuleOutcome o = outcome("pipelined_run_completed", Severity::invalidates,
                          std::to_string(steady.inferences) + " pipelined frames");
  if (steady.aborted)
    finding(o, "the pipelined run aborted: " +
                   (steady.first_error ? steady.first_error->to_string() : std::string("aborted")));
  return o;
}

RuleOutcome pipelined_run_stable(const SteadyRepeat& steady, double tolerance) {
  RuleOutcome o = outcome("pipelined_run_stable", Severity::warns,
                          "last 3 windows within " + format_fixed(tolerance * 100, 1) + "%");
  if (!steady.aborted && !steady.stable)
    finding(o, "the pipelined run was not stable (last 3 windows differ by " +
                   (steady.last_windows_spread
                        ? format_fixed(*steady.last_windows_spread * 100, 1) + "%"
                        : std::string("n/a")) +
                   "); its rate and the transfer cost are rough; raise --duration");
  return o;
}

RuleOutcome loop_completed_frames(const DurationRun& loop) {
  RuleOutcome o = outcome("loop_completed_frames", Severity::warns,
                          std::to_string(loop.frames_completed) + " frames looped");
  if (loop.frames_completed == 0)
    finding(o, "the device loop completed no frame; raise --duration");
  return o;
}

RuleOutcome comparable_clocks(bool mixed) {
  RuleOutcome o = outcome("comparable_clocks", Severity::warns,
                          mixed ? "device virtual, host real" : "one kind of clock");
  if (mixed)
    finding(o,
            "the server's device runs on a virtual clock while the host's is real: the two "
            "rates are not comparable, so no transfer cost is given");
  return o;
}

RuleOutcome cost_is_transfers(const LoopResult& r) {
  RuleOutcome o = outcome("cost_is_transfers", Severity::warns,
                          r.transfer_cost_ms ? "cost " + format_ms(*r.transfer_cost_ms)
                                             : std::string("no transfer cost"));
  if (!r.transfer_cost_ms) return o;
  if (r.effective.sleep_between_frames > Nanos(0))
    finding(o,
            "the device rate includes the sleeps between frames, so the difference is not the "
            "transfer cost alone");
  else if (*r.transfer_cost_ms < 0)
    finding(o,
            "the host pipeline was faster than the device loop; the difference is noise or the "
            "loop runs one frame at a time where the pipeline overlaps");
  return o;
}

// ---------------------------------------------------------------------------
// rig ladder, rig sweep: their points

RuleOutcome points_stable(const std::vector<std::pair<std::string, const PointResult*>>& points) {
  RuleOutcome o =
      outcome("points_stable", Severity::invalidates, std::to_string(points.size()) + " points");
  for (const auto& [name, p] : points)
    if (p->errors == 0 && !p->stable)
      finding(o, name + ": a repeat was not stable; raise --duration");
  return o;
}

RuleOutcome points_without_errors(
    const std::vector<std::pair<std::string, const PointResult*>>& points) {
  uint64_t errors = 0;
  for (const auto& point : points) errors += point.second->errors;
  RuleOutcome o =
      outcome("no_errors", Severity::invalidates, std::to_string(errors) + " failed inference(s)");
  for (const auto& [name, p] : points)
    if (p->errors > 0)
      finding(o, name + ": " + std::to_string(p->errors) + " inference(s) failed; first: " +
                     (p->first_error ? p->first_error->to_string() : std::string("unknown")));
  return o;
}

// ---------------------------------------------------------------------------
// rig ab

RuleOutcome enough_pairs(size_t pairs, double alpha) {
  const uint32_t least = ab_min_pairs(alpha);
  RuleOutcome o = outcome("enough_pairs", Severity::invalidates,
                          std::to_string(pairs) + " pairs; the U test reaches alpha " +
                              format_fixed(alpha, 2) + " from " + std::to_string(least));
  if (pairs < least)
    finding(o, "insufficient data: " + std::to_string(pairs) +
                   " pair(s); the Mann-Whitney U test cannot reach alpha " +
                   format_fixed(alpha, 2) + " with fewer than " + std::to_string(least) +
                   " (google/benchmark recommends at least " + std::to_string(kAbRecommendedPairs) +
                   "); raise --pairs");
  return o;
}

RuleOutcome ab_resolved(const AbResult& r) {
  RuleOutcome o =
      outcome("ab_resolved", Severity::warns, "verdict " + std::string(to_string(r.verdict)));
  if (r.verdict == AbVerdict::ambiguous)
    finding(o, "the A/B result is ambiguous" +
                   (r.pairs_recommended ? ": about " + std::to_string(*r.pairs_recommended) +
                                              " pairs would likely resolve it (raise --pairs)"
                                        : std::string()));
  return o;
}

}  // namespace

std::string_view to_string(Severity severity) {
  return severity == Severity::invalidates ? "invalidates" : "warns";
}

void Verdict::add(RuleOutcome o) {
  if (!o.met)
    for (const auto& f : o.findings)
      (o.severity == Severity::invalidates ? reasons : warnings).push_back(f);
  rules.push_back(std::move(o));
  valid = reasons.empty();
}

Verdict judge(const BenchResult& r) {
  Verdict v;
  const std::string lone_raise = "raise --latency-samples or --latency-duration";
  if (r.offered) {
    const OfferedRun& o = *r.offered;
    v.add(depth_within_queue(r.depth_note));
    v.add(no_errors(r.latency.errors + o.errors,
                    r.latency.first_error ? r.latency.first_error : o.first_error,
                    "in lone frames and the offered-load run"));
    v.add(offered_run_completed(o));
    v.add(frames_on_time(o, r.effective.offered.late_threshold));
    v.add(no_dropped_frames(o));
    v.add(keeps_up(o));
    v.add(percentiles_resolved(o.latency_ms, "latency at the offered rate", "raise --duration"));
    v.add(enough_lone_frames(r.latency.samples));
    v.add(percentiles_resolved(r.latency.overall_ms, "lone-frame latency", lone_raise));
    v.rules.back().rule = "lone_percentiles_resolved";
    add_confounds(v, r.environment, r.device, r.virtual_clock, kVirtualClock);
    return v;
  }
  const auto& repeats = r.steady.repeats;
  uint64_t errors = r.latency.errors;
  std::optional<Error> first = r.latency.first_error;
  for (const auto& rep : repeats) {
    errors += rep.errors;
    if (!first && rep.first_error) first = rep.first_error;
  }
  v.add(depth_within_queue(r.depth_note));
  v.add(no_errors(errors, first, "in lone frames and repeats"));
  v.add(all_repeats_ran(repeats.size(), r.effective.point.repeats));
  v.add(rig_not_limiting(r.overhead));
  for (size_t i = 0; i < repeats.size(); ++i) {
    v.add(enough_samples(repeats[i], i, r.effective.point.min_inferences));
    v.add(device_returned_requests(repeats[i], i));
    v.add(repeat_stable(repeats[i], i, r.effective.point.stability_tolerance));
    v.add(rate_precise(repeats[i], i, r.effective.point.rate_tolerance));
    v.add(warmup_settled(repeats[i], i, r.effective.point.warmup_max));
  }
  v.add(repeats_agree(r.steady.rate, r.effective.repeat_tolerance));
  v.add(enough_lone_frames(r.latency.samples));
  v.add(percentiles_resolved(r.latency.overall_ms, "lone-frame latency", lone_raise));
  v.rules.back().rule = "lone_percentiles_resolved";
  add_confounds(v, r.environment, r.device, r.virtual_clock, kVirtualClock);
  return v;
}

Verdict judge(const LoopResult& r) {
  Verdict v;
  v.add(depth_within_queue(r.depth_note));
  v.add(pipelined_run_completed(r.steady));
  v.add(pipelined_run_stable(r.steady, r.effective.point.stability_tolerance));
  v.add(loop_completed_frames(r.loop));
  v.add(comparable_clocks(r.mixed_clocks));
  v.add(cost_is_transfers(r));
  add_confounds(v, r.environment, r.device, r.virtual_clock,
                r.device.kind + " runs on a virtual clock; both rates are simulated");
  return v;
}

Verdict judge(const LadderResult& r) {
  std::vector<std::pair<std::string, const PointResult*>> points;
  uint64_t lone_errors = 0;
  std::optional<Error> lone_first;
  for (const auto& rung : r.rungs) {
    points.emplace_back(rung.size, &rung.pipelined);
    lone_errors += rung.lone_errors;
    if (!lone_first && rung.lone_first_error) lone_first = rung.lone_first_error;
  }
  Verdict v;
  v.add(depth_within_queue(r.depth_note));
  v.add(points_without_errors(points));
  v.add(no_errors(lone_errors, lone_first, "in lone frames"));
  v.rules.back().rule = "no_lone_frame_errors";
  v.add(points_stable(points));
  add_confounds(v, r.environment, r.device, r.virtual_clock, kVirtualClock);
  return v;
}

Verdict judge(const SweepResult& r) {
  std::vector<std::pair<std::string, const PointResult*>> points;
  for (const auto& p : r.points)
    points.emplace_back("depth " + std::to_string(p.result.depth), &p.result);
  Verdict v;
  v.add(points_without_errors(points));
  v.add(no_errors(r.lone.errors, r.lone.first_error, "in lone frames"));
  v.rules.back().rule = "no_lone_frame_errors";
  v.add(points_stable(points));
  add_confounds(v, r.environment, r.device, r.virtual_clock, kVirtualClock);
  return v;
}

Verdict judge(const AbResult& r) {
  Verdict v;
  v.add(depth_within_queue(r.depth_notes));
  v.add(enough_pairs(r.ratios.size(), r.settings.alpha));
  v.add(ab_resolved(r));
  v.add(quiet_host(r.environment));
  if (r.shared_device) {
    v.add(device_without_warnings(r.device_a));
  } else {
    v.add(device_without_warnings(r.device_a, "device_a_without_warnings", "device A: "));
    v.add(device_without_warnings(r.device_b, "device_b_without_warnings", "device B: "));
  }
  v.add(real_clock(r.virtual_clock, kVirtualClock));
  return v;
}

int strict_exit_status(const Verdict& verdict, bool strict) {
  return strict && !verdict.valid ? 1 : 0;
}

}  // namespace rig

// The shared verdict rules (scenario/rules.hpp), Verdict::add and ::saw,
// and strict_exit_status. Each rule is one small named function; the
// scenarios' judge() functions compose them with their own.
#include "scenario/rules.hpp"

#include <algorithm>
#include <cmath>

#include "rig/units.hpp"

namespace rig {

RuleOutcome outcome(std::string rule, Severity severity, std::string evidence) {
  RuleOutcome o;
  o.rule = std::move(rule);
  o.severity = severity;
  o.evidence = std::move(evidence);
  return o;
}

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

RuleOutcome no_errors(uint64_t errors, const std::optional<Error>& first, std::string_view where,
                      std::string rule) {
  RuleOutcome o = outcome(std::move(rule), Severity::invalidates,
                          std::to_string(errors) + " failed inference(s) " + std::string(where));
  if (errors > 0)
    finding(o, std::to_string(errors) + " inference(s) failed; first: " +
                   (first ? first->to_string() : std::string("unknown")));
  return o;
}

// On a virtual clock the host's load before the run cannot move a figure
// (the simulation's times are not the host's): that warning is left out.
RuleOutcome quiet_host(const Environment& env, bool virtual_clock) {
  std::vector<std::string> found;
  for (const auto& w : env.warnings)
    if (!(virtual_clock && w.rfind("host busy before the run", 0) == 0)) found.push_back(w);
  RuleOutcome o = outcome(
      "quiet_host", Severity::warns,
      std::to_string(found.size()) + " environment warning(s)" +
          (found.size() != env.warnings.size() ? " (the host's load is left out on a virtual clock)"
                                               : ""));
  for (auto& w : found) finding(o, std::move(w));
  return o;
}

RuleOutcome device_without_warnings(const DeviceInfo& device, std::string rule,
                                    const std::string& prefix) {
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

namespace {

// ---------------------------------------------------------------------------
// Consistency: a figure that contradicts the device's own report is
// impossible, not fast or slow. Each check names both numbers.

// A lone frame (run() call to return) holds its device compute, so no
// order statistic of the lone frames is below the same one of the
// device-reported compute times; and with declared costs, no lone frame is
// shorter than the declared in + latency + compute + out + latency.
void lone_frames_consistent(RuleOutcome& o, const LatencyResult& lone, const DeviceInfo& device,
                            const ModelInfo& model) {
  const Summary& all = lone.overall_ms;
  const Summary& hw = lone.hardware_ms;
  if (all.median && hw.median && *all.median < *hw.median * (1 - kDeclaredCapRounding))
    finding(o, "lone frame p50 " + format_ms(*all.median) +
                   " is shorter than its device compute p50 " + format_ms(*hw.median) +
                   " (lone frame >= device compute): the two are not timed on one clock; "
                   "figures from a virtual clock timed across a link mean nothing");
  if (device.declared_costs && all.min && model.input_bytes() + model.output_bytes() > 0) {
    const double floor_ms = declared_lone_s(*device.declared_costs, model) * 1e3;
    if (*all.min < floor_ms * (1 - kDeclaredCapRounding))
      finding(o, "fastest lone frame " + format_ms(*all.min) + " is shorter than the " +
                     format_ms(floor_ms) +
                     " the device's declared costs allow (lone frame >= in + latency + compute "
                     "+ out + latency): the device broke its own bounds");
  }
}

// The cold start: the device's load parts within the load timed around
// them, and the first inference at least its device compute.
void cold_start_consistent(RuleOutcome& o, const TtfoResult& t) {
  if (t.total <= Nanos(0)) return;
  const LoadTimings& b = t.load_breakdown;
  const Nanos parts = b.read + b.parse + b.compile;
  if (to_seconds(parts) > to_seconds(t.load) * (1 + kDeclaredCapRounding))
    finding(o, "load " + format_duration(t.load) + " is shorter than its parts " +
                   format_duration(parts) + " (read " + format_duration(b.read) + " + parse " +
                   format_duration(b.parse) + " + compile " + format_duration(b.compile) +
                   "; parts <= whole): the parts are not timed on the load's clock");
  if (const auto& c = t.first_timings.compute;
      c && to_seconds(t.first_inference) < to_seconds(*c) * (1 - kDeclaredCapRounding))
    finding(o, "first inference " + format_duration(t.first_inference) +
                   " is shorter than its device compute " + format_duration(*c) +
                   " (first inference >= device compute)");
}

}  // namespace

RuleOutcome figures_consistent(const DeviceInfo& device, const ModelInfo& model,
                               const TtfoResult* ttfo, const LatencyResult* lone) {
  RuleOutcome o =
      outcome("figures_consistent", Severity::invalidates,
              "lone frame >= device compute" +
                  std::string(device.declared_costs ? " and >= the declared lone frame" : "") +
                  "; load parts <= load; first inference >= its compute");
  if (lone) lone_frames_consistent(o, *lone, device, model);
  if (ttfo) cold_start_consistent(o, *ttfo);
  return o;
}

// A device on a virtual clock served by rig serve and timed here by the
// wall clock: the link's times are real and the device's are simulated, so
// no figure is either. Served as ever (protocol tests rely on it), never
// VALID. A clock paced to the wall clock (the sim's realtime=1) is timed
// like a real device.
RuleOutcome clock_across_link(const DeviceInfo& device, const LatencyResult* lone,
                              const std::string& rule, const std::string& who) {
  const bool unpaced =
      device.kind == "remote" && device.clock == ClockKind::virtual_time && !device.paced_clock;
  RuleOutcome o = outcome(rule, Severity::invalidates,
                          device.kind != "remote" ? "no link timed by the wall clock"
                          : unpaced               ? "virtual device clock, wall-clock link"
                                    : "the device's clock can be timed by the wall clock");
  if (!unpaced) return o;
  std::string figures;
  if (lone && lone->overall_ms.median && lone->hardware_ms.median)
    figures = " (a lone frame of " + format_ms(*lone->overall_ms.median) +
              " timed here beside a device compute of " + format_ms(*lone->hardware_ms.median) +
              " on its virtual clock)";
  finding(o, who +
                 "the server's device runs on a virtual clock that is not paced to the wall clock, "
                 "timed here across the link by the wall clock" +
                 figures +
                 ": simulated device times and real link times do not add up to any real "
                 "figure; serve the sim with realtime=1 (rig serve -d 'sim:...,realtime=1')");
  return o;
}

// The confounds every result is checked for: the host, the device, the clock.
void add_confounds(Verdict& v, const Environment& env, const DeviceInfo& device, bool virtual_clock,
                   std::string clock_message, bool strict, const LatencyResult* lone) {
  v.add(quiet_host(env, virtual_clock));
  v.add(device_without_warnings(device));
  v.add(real_clock(virtual_clock, std::move(clock_message)));
  v.add(clock_across_link(device, lone));
  add_environment_confounds(v, env, virtual_clock, strict);
}

ConfoundInputs confound_inputs(const MonitorRecord& monitor, const ConfoundSettings& settings,
                               const Environment& environment, const DeviceInfo& device,
                               bool virtual_clock) {
  ConfoundInputs in;
  in.monitor = &monitor;
  in.settings = &settings;
  in.environment = &environment;
  in.device = &device;
  in.virtual_clock = virtual_clock;
  return in;
}

// ---------------------------------------------------------------------------
// Repeats and their stability, samples and percentiles, the declared cap

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
  if (!rep.stable && (rep.aborted || rep.cut_short))
    finding(o, repeat_name(i) + ": cut short " +
                   (rep.cut_short ? std::string("by a signal")
                                  : "by " + (rep.first_error ? rep.first_error->to_string()
                                                             : std::string("an error"))) +
                   " after " + std::to_string(rep.inferences) +
                   " measured inferences, before its windows could show it stable");
  else if (!rep.stable) {
    // Judged on enough data: a spread the frame-time noise explains for
    // windows this short is not a change (stability.hpp); it warns.
    const StabilityJudgement j = judge_stability(rep, tolerance);
    if (j.state == Stability::unstable)
      finding(o, repeat_name(i) + ": not stable (last 3 windows differ by " + spread + " > " +
                     format_fixed(tolerance * 100, 1) + "%" +
                     (j.noise_spread ? ", beyond the " + format_fixed(*j.noise_spread * 100, 1) +
                                           "% that frame-time noise gives " +
                                           std::to_string(j.frames_per_window) + "-frame windows"
                                     : std::string()) +
                     "); check for throttling or contention, or raise --duration");
    else if (j.state == Stability::unresolved) {
      o.severity = Severity::warns;
      finding(o, unresolved_stability_text(j, tolerance, repeat_name(i) + ": "));
    }
  }
  return o;
}

RuleOutcome rate_precise(const SteadyRepeat& rep, size_t i, double tolerance) {
  const std::string half = rep.rate_half_width
                               ? "+/-" + format_fixed(*rep.rate_half_width * 100, 2) + "%"
                               : std::string("n/a: fewer than 2 windows");
  RuleOutcome o = outcome("rate_precise", Severity::warns,
                          repeat_name(i) + ": rate 95% interval " + half + ", at most +/-" +
                              format_fixed(tolerance * 100, 1) + "% wanted");
  if (rep.capped && !rep.precise && !rep.aborted && !rep.cut_short)
    finding(o, repeat_name(i) + ": the rate's interval (" + half + ") stayed wider than +/-" +
                   format_fixed(tolerance * 100, 1) +
                   "% up to the cap; raise --max-duration-factor or --rate-tolerance");
  return o;
}

// A rate above what the device's declared costs allow is impossible: the
// span ended inside a pipeline's filling or draining, not at its rate.
// Timed by the wall clock across a link (a remote device hosting a sim),
// the span's first and last completions arrive with the link's and the
// scheduler's jitter, so the rounding is wider than on the sim's own clock.
constexpr double kWallClockCapRounding = 0.01;

double cap_rounding(bool virtual_clock) {
  return virtual_clock ? kDeclaredCapRounding : kWallClockCapRounding;
}

RuleOutcome within_declared_cap(const std::string& name, double rate,
                                const std::optional<double>& cap, double rounding) {
  RuleOutcome o = outcome("rate_within_declared_cap", Severity::invalidates,
                          cap ? name + ": " + format_fixed(rate, 1) +
                                    "/s, the declared costs allow " + format_fixed(*cap, 1) +
                                    "/s (+" + format_fixed(rounding * 100, 1) + "% rounding)"
                              : name + ": the device declares no costs");
  if (cap && rate > *cap * (1 + rounding))
    finding(o, name + ": rate " + format_fixed(rate, 1) + "/s is above the " +
                   format_fixed(*cap, 1) +
                   "/s the device's declared costs allow at this depth; the span did not reach "
                   "the steady state: raise --duration");
  return o;
}

RuleOutcome warmup_settled(const SteadyRepeat& rep, size_t i, Nanos cap) {
  RuleOutcome o = outcome("warmup_settled", Severity::warns,
                          repeat_name(i) + ": warm-up " + format_duration(rep.warmup) +
                              ", capped at " + format_duration(cap));
  if (!rep.warmup_settled && !rep.aborted && !rep.cut_short)
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

std::string unstated_percentile(const PercentileInterval& ci, const std::string& raise) {
  const std::string p = "p" + format_fixed(ci.p, 0);
  if (ci.count >= ci.needs && ci.needs > 0)
    return "not stated: the " + std::to_string(ci.count) + " samples are correlated (lag-1 " +
           (ci.lag1 ? format_fixed(*ci.lag1, 2) : std::string("n/a")) +
           ") and even their 8 batches of " + std::to_string(ci.batch_size) +
           " were, so no interval holds its confidence (" + raise + " for longer batches)";
  return "not enough samples (n = " + std::to_string(ci.count) + ", " + p +
         " needs >= " + std::to_string(ci.needs) + " for a " +
         format_fixed(ci.confidence * 100, 0) + "% interval); " + std::to_string(ci.more_needed()) +
         " more samples needed (" + raise + ")";
}

// Percentiles whose interval needs more samples than were taken: reported as
// "not enough samples", with how many more the rule needs.
RuleOutcome percentiles_resolved(const Summary& s, const std::string& what,
                                 const std::string& raise, std::string rule) {
  const PercentileInterval* cis[] = {&s.p90_ci, &s.p99_ci};
  std::string evidence = what + ": " + std::to_string(s.count) + " samples";
  for (const auto* ci : cis)
    evidence += ", p" + format_fixed(ci->p, 0) + " needs " + std::to_string(ci->needs);
  RuleOutcome o = outcome(std::move(rule), Severity::warns, evidence);
  for (const auto* ci : cis)
    if (s.count > 0 && !ci->enough())
      finding(o, what + " p" + format_fixed(ci->p, 0) + ": " + unstated_percentile(*ci, raise));
  return o;
}

// ---------------------------------------------------------------------------
// A single pipelined run (rig loop, rig soak)

RuleOutcome pipelined_run_completed(const SteadyRepeat& steady, std::string rule) {
  RuleOutcome o = outcome(std::move(rule), Severity::invalidates,
                          std::to_string(steady.inferences) + " pipelined frames");
  if (steady.aborted)
    finding(o, "the pipelined run aborted: " +
                   (steady.first_error ? steady.first_error->to_string() : std::string("aborted")));
  return o;
}

RuleOutcome pipelined_run_stable(const SteadyRepeat& steady, double tolerance) {
  RuleOutcome o = outcome("pipelined_run_stable", Severity::warns,
                          "last 3 windows within " + format_fixed(tolerance * 100, 1) + "%");
  if (steady.aborted || steady.stable) return o;
  if (const StabilityJudgement j = judge_stability(steady, tolerance);
      j.state == Stability::unresolved)
    finding(o, unresolved_stability_text(j, tolerance, "the pipelined run: ") +
                   "; its rate and the transfer cost are rough");
  else
    finding(o, "the pipelined run was not stable (last 3 windows differ by " +
                   (steady.last_windows_spread
                        ? format_fixed(*steady.last_windows_spread * 100, 1) + "%"
                        : std::string("n/a")) +
                   "); its rate and the transfer cost are rough; raise --duration");
  return o;
}

// ---------------------------------------------------------------------------
// rig ladder, rig sweep: their points

// A point whose repeats held too few frames per window to judge is not
// unstable: points_stability_resolved warns about it.
RuleOutcome points_stable(const NamedPoints& points) {
  RuleOutcome o =
      outcome("points_stable", Severity::invalidates, std::to_string(points.size()) + " points");
  for (const auto& [name, p] : points) {
    if (p->errors != 0 || p->stable) continue;
    const auto unstable = std::find_if(p->stability.begin(), p->stability.end(), [](const auto& j) {
      return j.state == Stability::unstable;
    });
    if (unstable != p->stability.end())
      finding(o, name + ": a repeat was not stable (last 3 windows differ by " +
                     format_fixed(unstable->spread.value_or(0) * 100, 1) +
                     "%, beyond the tolerance" +
                     (unstable->noise_spread
                          ? " and the " + format_fixed(*unstable->noise_spread * 100, 1) +
                                "% that frame-time noise gives " +
                                std::to_string(unstable->frames_per_window) + "-frame windows"
                          : std::string()) +
                     "); check for throttling or contention, or raise --duration");
    else if (p->stability.empty())
      finding(o, name + ": no repeat counted a span; raise --duration");
  }
  return o;
}

RuleOutcome points_stability_resolved(const NamedPoints& points, double tolerance) {
  RuleOutcome o = outcome("points_stability_resolved", Severity::warns,
                          "enough frames per window to judge every point's stability");
  for (const auto& [name, p] : points) {
    if (p->errors != 0 || p->stable) continue;
    const bool unstable = std::any_of(p->stability.begin(), p->stability.end(),
                                      [](const auto& j) { return j.state == Stability::unstable; });
    const auto unresolved =
        std::find_if(p->stability.begin(), p->stability.end(),
                     [](const auto& j) { return j.state == Stability::unresolved; });
    if (!unstable && unresolved != p->stability.end())
      finding(o, unresolved_stability_text(*unresolved, tolerance, name + ": "));
  }
  return o;
}

// Each point's fastest repeat against the cap its device declares
// (within_declared_cap).
RuleOutcome points_within_declared_cap(const NamedPoints& points, double rounding) {
  RuleOutcome o =
      outcome("rate_within_declared_cap", Severity::invalidates, "the device declares no costs");
  for (const auto& [name, p] : points) {
    if (!p->declared_cap || p->repeat_rates.empty()) continue;
    const double fastest = *std::max_element(p->repeat_rates.begin(), p->repeat_rates.end());
    RuleOutcome one = within_declared_cap(name, fastest, p->declared_cap, rounding);
    o.evidence = "every point's fastest repeat within its declared cap (+" +
                 format_fixed(rounding * 100, 1) + "% rounding)";
    for (auto& f : one.findings) finding(o, std::move(f));
  }
  return o;
}

RuleOutcome points_without_errors(const NamedPoints& points) {
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

// A run a stop request (the first SIGINT or SIGTERM) ended early: its
// figures are what was measured up to the cut, not what was asked for.
RuleOutcome not_cut_short(bool cut_short, const std::string& what) {
  RuleOutcome o = outcome("not_cut_short", Severity::invalidates,
                          cut_short ? what : std::string("ran to its stop rules"));
  if (cut_short)
    finding(o, "cut short by a signal (SIGINT or SIGTERM): " + what +
                   "; the figures are what was measured up to the cut");
  return o;
}

void Verdict::saw(const std::optional<Error>& error) {
  if (!failure && error && exit_code_for(error->code) == 3) failure = error;
}

int strict_exit_status(const Verdict& verdict, bool strict) {
  if (verdict.failure) return 3;
  return strict && !verdict.valid ? 1 : 0;
}

}  // namespace rig

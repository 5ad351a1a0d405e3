// rig loop: the device's own rate beside the host-observed pipelined rate.
// The verdict is judge(LoopResult), at the end of this file.
#include "rig/scenario/loop.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "rig/model_graph.hpp"
#include "rig/units.hpp"
#include "scenario/monitored_run.hpp"
#include "scenario/rules.hpp"

namespace rig {

Result<void> validate(const LoopSettings& s) {
  if (s.device.empty()) return fail(ErrorCode::invalid_argument, "device spec is empty");
  if (s.sleep_between_frames < Nanos(0))
    return fail(ErrorCode::invalid_argument, "sleep between frames must be >= 0");
  if (auto ok = validate(s.confounds); !ok) return ok;
  return validate(s.point);
}

namespace {

// The device rate's interval and midpoint (LoopResult's contract), from
// the count alone (the frame cut off, the sleeps).
void set_device_rate(LoopResult& r) {
  const DurationRun& l = r.loop;
  if (!(l.frames_per_second > 0)) return;
  double lower = l.frames_per_second, upper = l.frames_per_second;
  if (l.rate_step > 0) {
    upper = l.frames_per_second + l.rate_step;
  } else if (l.frames_completed && l.elapsed > Nanos(0)) {
    // Frame k (1-based) ends at k P - sleep, P = frame + sleep, 1 / P the
    // rate. N frames finished within T: N P - sleep <= T, rate >= N / (T +
    // sleep). None cut off: frame N + 1 had not started, N P >= T, rate <=
    // N / T (exact with no sleep). One cut off: it started, N P < T, and did
    // not finish, (N + 1) P - sleep > T: rate in (N / T, (N + 1) / (T +
    // sleep)). Unknown: the union.
    const double n = static_cast<double>(*l.frames_completed);
    const double t = to_seconds(l.elapsed), sleep = to_seconds(r.effective.sleep_between_frames);
    const double next = (n + 1) / (t + sleep);
    if (l.frames_aborted && *l.frames_aborted == 0) {
      lower = n / (t + sleep);
      upper = n / t;
    } else if (l.frames_aborted) {
      lower = n / t;
      upper = next;
    } else {
      lower = n / (t + sleep);
      upper = std::max(n / t, next);
    }
  }
  r.device_rate_lower = lower;
  r.device_rate_upper = upper;
  r.device_rate = (lower + upper) / 2;
  r.device_rate_uncertainty = (upper - lower) / (upper + lower);
}

// Frame-time noise (issue 36): the count of a loop of length T of frames
// whose times vary is itself random (a renewal count: its variance grows
// as T). The pipelined run's windows show that noise at the window's
// length w; scaled to the loop's, the rate's relative half-width is
// t(k - 1) x cv(window rates) x sqrt(w / T) over k windows. The device
// rate's interval is widened by it. Assumes the loop's frames vary as the
// pipeline's do (both bound by the device's compute); docs/methodology.md.
void widen_for_noise(LoopResult& r) {
  if (!r.device_rate || r.loop.elapsed <= Nanos(0)) return;
  std::vector<double> rates;
  double window_s = 0;
  for (const WindowFigure& w : r.steady.windows) {
    rates.push_back(w.rate);
    window_s += w.duration_s;
  }
  if (rates.size() < 3) return;
  window_s /= static_cast<double>(rates.size());
  const Summary s = summarize(rates);
  if (!s.mean || !s.stddev || !(*s.mean > 0)) return;
  const double cv = *s.stddev / *s.mean;
  const double noise = student_t_quantile(0.975, static_cast<double>(rates.size() - 1)) * cv *
                       std::sqrt(window_s / to_seconds(r.loop.elapsed));
  r.device_rate_noise = noise;
  if (!(noise > 0)) return;
  const double lower = *r.device_rate_lower * (1 - std::min(noise, 0.99));
  const double upper = *r.device_rate_upper * (1 + noise);
  r.device_rate_lower = lower;
  r.device_rate_upper = upper;
  r.device_rate = (lower + upper) / 2;
  r.device_rate_uncertainty = (upper - lower) / (upper + lower);
}

}  // namespace

Result<LoopResult> run_loop(Device& device, const ModelSource& model,
                            const LoopSettings& settings) {
  if (auto ok = validate(settings); !ok) return tl::unexpected(ok.error());
  LoopResult r;
  start_result(r, device, settings);
  r.effective.point.repeats = 1;
  r.mixed_clocks = !r.virtual_clock && r.device.clock == ClockKind::virtual_time;
  // As rig bench: more than the device takes would only fail with queue_full.
  uint32_t depth = settle_depth(r);

  MonitoredRun watch(settings.monitor, device, settings.point.observer);
  const PointSettings point = watch.watched(r.effective.point);
  auto cold = cold_start(device, model, depth, point.seed, point.observer, point.inputs.get());
  if (!cold) return tl::unexpected(cold.error());
  depth = settle_depth_after_load(r, device);  // the loaded model's queue
  r.ttfo = cold->ttfo;
  r.model = device.model_info();
  r.model.sha256 = model_sha256(model);  // after the cold start: never timed

  // 1. The device's own rate.
  watch.monitor().measured_begin("device_loop");
  const Nanos loop_start = device.clock().now();
  auto loop = device.run_for_duration(cold->workspace.bindings[0], settings.point.duration,
                                      settings.sleep_between_frames);
  watch.monitor().measured_end();
  if (!loop && exit_code_for(loop.error().code) == 3) {
    r.loop_error = loop.error();
    r.monitor = watch.monitor().finish();
    r.monitor.energy.reason = "unavailable: the device's loop failed";
    r.verdict = judge(r);
    return r;
  }
  if (!loop) return tl::unexpected(loop.error());
  // The device's span of its loop lies inside the call's (as a frame's
  // timings inside its elapsed time: implausible_timings).
  const Nanos call = device.clock().now() - loop_start;
  const Nanos limit = r.mixed_clocks ? kMaxDuration : call;
  if (loop->elapsed < Nanos(0) || loop->elapsed > limit)
    return fail(ErrorCode::device, "implausible device timing: the loop's elapsed " +
                                       std::to_string(loop->elapsed.count()) +
                                       " ns is outside [0, " + std::to_string(limit.count()) +
                                       " ns]" + (r.mixed_clocks ? "" : ", the call's duration"));
  r.loop = *loop;
  set_device_rate(r);

  // 2. The host-observed pipelined rate of the same model.
  r.steady = measure_steady(device, cold->workspace, steady_settings(point, depth));
  if (!r.steady.aborted) r.host_rate = r.steady.rate;
  widen_for_noise(r);

  // A fallback loop includes the transfers itself: no difference to take.
  if (r.device_rate && r.host_rate && *r.host_rate > 0 && !r.mixed_clocks &&
      !r.loop.includes_transfers) {
    // The device's time per frame is its period less the sleep after it.
    const double host_ms = 1e3 / *r.host_rate, sleep_ms = to_ms(r.effective.sleep_between_frames);
    r.transfer_cost_ms = host_ms - (1e3 / *r.device_rate - sleep_ms);
    r.transfer_cost_lower_ms = host_ms - (1e3 / *r.device_rate_lower - sleep_ms);
    r.transfer_cost_upper_ms = host_ms - (1e3 / *r.device_rate_upper - sleep_ms);
    r.transfer_cost_share = *r.transfer_cost_ms / host_ms;
  }
  r.monitor = watch.monitor().finish();
  r.monitor.energy.reason = "unavailable: rig loop states no energy figure (rig bench does)";
  r.verdict = judge(r);
  return r;
}

// ---------------------------------------------------------------------------
// The verdict: the device loop's own rules, then the shared ones.

namespace {

RuleOutcome loop_ran(const std::optional<Error>& loop_error) {
  RuleOutcome o =
      outcome("loop_ran", Severity::invalidates,
              loop_error ? loop_error->to_string() : std::string("the device's loop returned"));
  if (loop_error)
    finding(o,
            "the device's loop failed: " + loop_error->message + "; nothing after it was measured");
  return o;
}

RuleOutcome loop_completed_frames(const DurationRun& loop) {
  if (!loop.frames_completed) {
    // The device gives a rate only (HailoRT): a rate of 0 is the only sign.
    RuleOutcome o = outcome("loop_completed_frames", Severity::warns,
                            "frame count unknown; rate " + format_fixed(loop.frames_per_second, 0) +
                                (loop.rate_step > 0 ? " (truncated)" : "") + " frames/s");
    if (loop.frames_per_second == 0)
      finding(o,
              "the device reported 0 frames/s: fewer than one frame per second completed (its "
              "rate is truncated to an integer); lengthen --duration or shorten --sleep");
    return o;
  }
  RuleOutcome o = outcome("loop_completed_frames", Severity::warns,
                          std::to_string(*loop.frames_completed) + " frames looped");
  if (*loop.frames_completed == 0)
    finding(o, "the device loop completed no frame; raise --duration");
  return o;
}

// The loop figure is the device's own loop, not a host-driven fallback.
RuleOutcome loop_on_device(const DurationRun& loop) {
  RuleOutcome o = outcome(
      "loop_on_device", Severity::warns,
      loop.includes_transfers ? "host-driven pipelined loop (fallback)" : "the device's own loop");
  if (loop.includes_transfers)
    finding(o,
            "the device's own loop was not available, so the loop rate is a host-driven "
            "pipelined loop on the same input and includes the per-frame transfers (see the "
            "loop's notes)");
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

// The device rate's interval (N / (T + sleep) .. (N + 1) / T) is narrow
// enough to state the rate: at most kLoopRateResolution either side.
RuleOutcome device_rate_resolved(const LoopResult& r) {
  RuleOutcome o =
      outcome("device_rate_resolved", Severity::warns,
              r.device_rate_uncertainty
                  ? "+/-" + format_fixed(*r.device_rate_uncertainty * 100, 2) + "% device rate"
                  : std::string("no device rate"));
  o.threshold = "+/-" + format_fixed(kLoopRateResolution * 100, 0) + "%";
  if (!r.device_rate_uncertainty || *r.device_rate_uncertainty <= kLoopRateResolution) return o;
  // Half-width 1 / (2N + 1) of the midpoint: N frames resolve it.
  const double frames = std::ceil((1 / kLoopRateResolution - 1) / 2);
  const DurationRun& l = r.loop;
  const bool noisy = r.device_rate_noise && *r.device_rate_noise > *r.device_rate_uncertainty / 2;
  const std::string why =
      noisy ? "the frames' times vary (+/-" + format_fixed(*r.device_rate_noise * 100, 1) +
                  "% over the loop, from the pipelined run's windows)"
      : l.frames_aborted && *l.frames_aborted == 0
          ? "the loop ended between frames, so the time after the last one is not known to be a "
            "whole period"
          : "the frame cut off at the end ran but is not counted";
  finding(o, "the device loop completed too few frames to state its rate: it lies in [" +
                 format_fixed(*r.device_rate_lower, 3) + ", " +
                 format_fixed(*r.device_rate_upper, 3) + "] frames/s (+/-" +
                 format_fixed(*r.device_rate_uncertainty * 100, 1) + "%), because " + why +
                 "; a loop of " +
                 format_duration(std::chrono::duration_cast<Nanos>(
                     std::chrono::duration<double>(frames / *r.device_rate_lower))) +
                 " or more (--duration) states it within +/-" +
                 format_fixed(kLoopRateResolution * 100, 0) + "%");
  return o;
}

RuleOutcome cost_is_transfers(const LoopResult& r) {
  RuleOutcome o = outcome("cost_is_transfers", Severity::warns,
                          r.transfer_cost_ms ? "cost " + format_ms(*r.transfer_cost_ms)
                                             : std::string("no transfer cost"));
  if (!r.transfer_cost_ms) return o;
  const double lower = r.transfer_cost_lower_ms.value_or(*r.transfer_cost_ms);
  const double upper = r.transfer_cost_upper_ms.value_or(*r.transfer_cost_ms);
  if (r.effective.sleep_between_frames > Nanos(0) && upper < 0)
    finding(o,
            "the device's time per frame (its period less the sleep) is longer than the host "
            "pipeline's: the sleeps are not exact, or the loop runs one frame at a time where "
            "the pipeline overlaps");
  else if (upper < 0)
    finding(o,
            "the host pipeline was faster than the device loop; the difference is noise or the "
            "loop runs one frame at a time where the pipeline overlaps");
  else if (lower < 0)
    finding(o, "the transfer cost lies in [" + format_ms(lower) + ", " + format_ms(upper) +
                   "]: it holds 0, so the device rate's uncertainty (too few frames in the loop) "
                   "hides it; a negative figure in it is not a saving; raise --duration");
  return o;
}

}  // namespace

Verdict judge(const LoopResult& r) {
  Verdict v;
  v.saw(r.loop_error);
  v.add(loop_ran(r.loop_error));
  v.saw(r.steady.first_error);
  v.add(depth_within_queue(r.depth_note));
  v.add(pipelined_run_completed(r.steady));
  v.add(pipelined_run_stable(r.steady, r.effective.point.stability_tolerance));
  v.add(loop_completed_frames(r.loop));
  v.add(loop_on_device(r.loop));
  v.add(comparable_clocks(r.mixed_clocks));
  v.add(device_rate_resolved(r));
  v.add(cost_is_transfers(r));
  v.add(figures_consistent(r.device, r.model, &r.ttfo, nullptr));
  add_confounds(v, r.environment, r.device, r.virtual_clock,
                r.device.kind + " runs on a virtual clock; both rates are simulated",
                r.effective.confounds.strict);
  ConfoundInputs in = confound_inputs(r);
  in.runs.push_back(&r.steady.windows);
  if (r.ttfo.total > Nanos(0)) in.first_inference = r.ttfo.first_inference;
  if (r.host_rate && *r.host_rate > 0) in.time_per_frame_ms = 1e3 / *r.host_rate;
  in.warmup_inferences = r.steady.warmup_inferences;
  add_confound_rules(v, in);
  return v;
}

}  // namespace rig

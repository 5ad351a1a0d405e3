// rig loop: the device's own rate beside the host-observed pipelined rate.
// The verdict is judge(LoopResult) (verdict.cpp).
#include "rig/scenario/loop.hpp"

#include "rig/model_graph.hpp"
#include "rig/units.hpp"
#include "scenario/monitored_run.hpp"

namespace rig {

Result<void> validate(const LoopSettings& s) {
  if (s.device.empty()) return fail(ErrorCode::invalid_argument, "device spec is empty");
  if (s.sleep_between_frames < Nanos(0))
    return fail(ErrorCode::invalid_argument, "sleep between frames must be >= 0");
  if (auto ok = validate(s.confounds); !ok) return ok;
  return validate(s.point);
}

namespace {

// The device rate's interval and midpoint (LoopResult's contract).
void set_device_rate(LoopResult& r) {
  const DurationRun& l = r.loop;
  if (!(l.frames_per_second > 0)) return;
  double lower = l.frames_per_second, upper = l.frames_per_second;
  if (l.rate_step > 0) {
    upper = l.frames_per_second + l.rate_step;
  } else if (l.frames_completed && l.elapsed > Nanos(0)) {
    // N frames finished within T: N periods (each a frame and a sleep) fit
    // in T + one sleep. Frame N + 1 did not finish within T, or the rate
    // would have counted it. A device that says it cut nothing off, with no
    // sleep, ended its last frame at T: N / T exactly.
    const double n = static_cast<double>(*l.frames_completed);
    const double t = to_seconds(l.elapsed), sleep = to_seconds(r.effective.sleep_between_frames);
    lower = n / (t + sleep);
    const bool exact = sleep == 0 && l.frames_aborted && *l.frames_aborted == 0;
    upper = exact ? n / t : (n + 1) / t;
  }
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
  const uint32_t depth = settle_depth(r);

  MonitoredRun watch(settings.monitor, device, settings.point.observer);
  const PointSettings point = watch.watched(r.effective.point);
  auto cold = cold_start(device, model, depth, point.seed, point.observer, point.inputs.get());
  if (!cold) return tl::unexpected(cold.error());
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

  // A fallback loop includes the transfers itself: no difference to take.
  if (r.device_rate && r.host_rate && *r.host_rate > 0 && !r.mixed_clocks &&
      !r.loop.includes_transfers) {
    const double host_ms = 1e3 / *r.host_rate;
    r.transfer_cost_ms = host_ms - 1e3 / *r.device_rate;
    r.transfer_cost_lower_ms = host_ms - 1e3 / *r.device_rate_lower;
    r.transfer_cost_upper_ms = host_ms - 1e3 / *r.device_rate_upper;
    r.transfer_cost_share = *r.transfer_cost_ms / host_ms;
  }
  r.monitor = watch.monitor().finish();
  r.monitor.energy.reason = "unavailable: rig loop states no energy figure (rig bench does)";
  r.verdict = judge(r);
  return r;
}

}  // namespace rig

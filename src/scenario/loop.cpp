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
  auto cold = cold_start(device, model, depth, point.seed, point.observer);
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
  if (r.loop.frames_per_second > 0) r.device_rate = r.loop.frames_per_second;
  if (r.device_rate && r.loop.rate_step > 0)
    r.device_rate_upper = r.loop.frames_per_second + r.loop.rate_step;

  // 2. The host-observed pipelined rate of the same model.
  r.steady = measure_steady(device, cold->workspace, steady_settings(point, depth));
  if (!r.steady.aborted) r.host_rate = r.steady.rate;

  // A fallback loop includes the transfers itself: no difference to take.
  if (r.device_rate && r.host_rate && *r.host_rate > 0 && !r.mixed_clocks &&
      !r.loop.includes_transfers) {
    r.transfer_cost_ms = 1e3 / *r.host_rate - 1e3 / *r.device_rate;
    r.transfer_cost_share = *r.transfer_cost_ms / (1e3 / *r.host_rate);
  }
  r.monitor = watch.monitor().finish();
  r.monitor.energy.reason = "unavailable: rig loop states no energy figure (rig bench does)";
  r.verdict = judge(r);
  return r;
}

}  // namespace rig

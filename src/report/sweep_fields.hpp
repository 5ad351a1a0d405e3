// rig sweep's documents (by depth, and --rate) as tables of keys
// (json_walkers.hpp): sweep_to_json and rate_sweep_to_json write them, the
// page reads them back. docs/results-schema.md, "rig sweep". Private to the
// reporters.
#pragma once

#include <optional>

#include "report/monitor_fields.hpp"
#include "report/schema_fields.hpp"
#include "rig/scenario/rate_search.hpp"
#include "rig/scenario/sweep.hpp"

namespace rig::report {

template <class Io>
void sweep_settings_fields(Io& io, SweepSettings& s) {
  io.value("min_depth", s.min_depth);
  io.value("max_depth", s.max_depth);
  io.value("knee_fraction", s.knee_fraction);
  io.value("refine", s.refine);
  io.value("latency_samples", s.latency_samples);
  io.object("point", [&](Io& p) { point_settings_fields(p, s.point); });
  monitor_confound_settings_fields(io, s.monitor, s.confounds);
}

template <class Io>
void sweep_point_fields(Io& io, SweepPoint& p) {
  point_fields(io, p.result);
  io.value("refined", p.refined);
  io.number("fraction_of_best", p.fraction_of_best);
}

template <class Io>
void sweep_fields(Io& io, SweepResult& r) {
  requested_effective_fields(io, r.requested, r.effective, sweep_settings_fields<Io>);
  environment_device_fields(io, r.environment, r.virtual_clock, r.device);
  io.object("model", [&](Io& m) { model_summary_fields(m, r.model, r.model_path); });
  io.object("results", [&](Io& x) {
    x.array("points", r.points, sweep_point_fields<Io>);
    x.value("skipped_depths", r.skipped);
    optional_u32(x, "knee", r.knee);
    optional_u32(x, "best_depth", r.best_depth);
    x.number("best_rate_per_s", r.best_rate);
    x.value("queue_depth", r.queue_depth);
    x.derived("max_in_flight", r.device.queue_depth);
    x.enumeration(
        "knee_vs_queue", r.knee_vs_queue,
        {KneeVsQueue::below, KneeVsQueue::at_queue_depth, KneeVsQueue::queue_limited,
         KneeVsQueue::above_queue_depth, KneeVsQueue::still_rising, KneeVsQueue::unknown});
    x.enumeration("limited_by", r.limited_by,
                  {LimitedBy::compute, LimitedBy::link_in, LimitedBy::link_out,
                   LimitedBy::link_shared, LimitedBy::queue, LimitedBy::unknown},
                  7);
    x.number("limit_busy_share", r.limit_busy_share, 7);
    x.number("limit_ms_per_frame", r.limit_ms_per_frame, 7);
    x.summary("lone_ms", r.lone.overall_ms);
    x.summary("lone_hardware_ms", r.lone.hardware_ms);
    x.number("single_shot_ms", r.single_shot_ms);
    x.number("pipelined_ms", r.pipelined_ms);
    x.number("round_trip_ms", r.round_trip_ms);
    x.number("round_trip_share", r.round_trip_share);
    x.ms("ttfo_ms", r.ttfo.total);
  });
  io.value("notes", r.notes);
  io.object(
      "monitor", [&](Io& m) { monitor_fields(m, r.monitor); }, 3);
  io.object("verdict", [&](Io& v) { verdict_fields(v, r.verdict); });
  io.derived("input_data", input_data_json(r.effective.point.inputs.get(), r.effective.point.seed));
}

template <class Io>
void rate_sweep_settings_fields(Io& io, RateSweepSettings& s) {
  io.value("min_rate_per_s", s.min_rate);
  io.value("max_rate_per_s", s.max_rate);
  io.ms("latency_bound_ms", s.latency_bound);
  io.value("max_probes", s.max_probes);
  io.value("resolution", s.resolution);
  io.enumeration("arrival", s.arrival, {Arrival::constant, Arrival::poisson});
  io.enumeration("on_full", s.on_full, {QueueFull::wait, QueueFull::drop});
  io.ms("late_threshold_ms", s.late_threshold);
  io.value("depth", s.depth);
  io.seconds("duration_s", s.point.duration);
  io.value("windows", s.point.windows);
  io.seconds("request_timeout_s", s.point.request_timeout);
  io.value("seed", s.point.seed);
  io.value("latency_samples", s.latency_samples);
  io.value("confidence", s.confidence);
  monitor_confound_settings_fields(io, s.monitor, s.confounds, 4);
}

template <class Io>
void rate_probe_fields(Io& io, RateProbe& p) {
  OfferedRun& o = p.run;
  io.value("offered_rate_per_s", p.rate);
  if constexpr (Io::reading) o.offered_rate = p.rate;
  io.value("scheduled_rate_per_s", o.scheduled_rate);
  io.value("achieved_rate_per_s", o.achieved_rate);
  io.number("p99_ms", p.p99_ms);
  io.value("p99_enough", p.p99_enough);
  io.value("keeps_up", p.keeps_up);
  io.value("meets", p.meets);
  io.value("depth", o.depth);
  io.value("arrivals", o.arrivals);
  io.value("completed", o.completed);
  io.value("dropped", o.dropped);
  io.value("late", o.late);
  io.value("late_share", o.late_share);
  io.number("late_share_upper", o.late_share_upper, 7);
  io.summary("latency_from_arrival_ms", o.latency_ms);
  io.summary("latency_from_submission_ms", o.service_ms);
  io.value("errors", o.errors);
  io.error("first_error", o.first_error);
  io.value("aborted", o.aborted);
}

template <class Io>
void rate_sweep_fields(Io& io, RateSweepResult& r) {
  io.derived("kind", "rate");
  requested_effective_fields(io, r.requested, r.effective, rate_sweep_settings_fields<Io>);
  environment_device_fields(io, r.environment, r.virtual_clock, r.device);
  io.object("model", [&](Io& m) { model_summary_fields(m, r.model, r.model_path); });
  io.object("results", [&](Io& x) {
    x.array("probes", r.search.probes, rate_probe_fields<Io>);
    x.number("best_rate_per_s", r.search.best_rate);
    x.number("first_failing_rate_per_s", r.search.first_failing_rate);
    x.enumeration(
        "search_end", r.search.end,
        {RateSearchEnd::max_rate_met, RateSearchEnd::min_rate_failed, RateSearchEnd::resolved,
         RateSearchEnd::probes_exhausted, RateSearchEnd::probe_failed, RateSearchEnd::not_run});
    x.ms("latency_bound_ms", r.effective.latency_bound);
    x.summary("lone_ms", r.lone.overall_ms);
    x.ms("ttfo_ms", r.ttfo.total);
  });
  io.value("notes", r.notes);
  io.object(
      "monitor", [&](Io& m) { monitor_fields(m, r.monitor); }, 4);
  io.object("verdict", [&](Io& v) { verdict_fields(v, r.verdict); });
  io.derived("input_data", input_data_json(r.effective.point.inputs.get(), r.effective.point.seed));
}

}  // namespace rig::report

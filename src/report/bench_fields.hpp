// rig bench's document as one table of keys (json_walkers.hpp): a
// JsonWriter walks it to build the document, a JsonReader walks the same
// table to read one back (read_bench_json, rig predict, rig place, the page),
// so every key is named once and the reader cannot drift from the writer.
// docs/results-schema.md, "rig bench". Private to the reporters.
#pragma once

#include <algorithm>
#include <cmath>

#include "report/monitor_fields.hpp"
#include "report/schema_fields.hpp"
#include "rig/scenario/bench.hpp"

namespace rig::report {

template <class Io>
void bench_settings_fields(Io& io, BenchSettings& s) {
  io.value("model", s.model);
  io.value("device", s.device);
  io.value("depth", s.depth);
  io.seconds("duration_s", s.point.duration);
  io.value("min_inferences", s.point.min_inferences);
  io.value("repeats", s.point.repeats);
  io.value("windows", s.point.windows);
  io.number("stability_tolerance", s.point.stability_tolerance);
  io.number("repeat_tolerance", s.repeat_tolerance);
  io.seconds("warmup_max_s", s.point.warmup_max);
  io.value("latency_samples", s.latency_samples);
  io.seconds("latency_max_s", s.latency_max);
  io.seconds("request_timeout_s", s.point.request_timeout);
  io.value("reservoir_capacity", s.reservoir_capacity);
  io.value("seed", s.point.seed);
  io.number("overhead_limit", s.overhead_limit);
  monitor_confound_settings_fields(io, s.monitor, s.confounds);
  io.number("confidence", s.confidence, 3);
  io.number("rate_tolerance", s.point.rate_tolerance, 3);
  io.number("max_duration_factor", s.point.max_duration_factor, 3);
  io.object(
      "offered",
      [&](Io& o) {
        o.number("rate_per_s", s.offered.rate);
        o.enumeration("arrival", s.offered.arrival, {Arrival::constant, Arrival::poisson});
        o.enumeration("on_full", s.offered.on_full, {QueueFull::wait, QueueFull::drop});
        o.ms("late_threshold_ms", s.offered.late_threshold);
      },
      3);
}

template <class Io>
void offered_fields(Io& io, OfferedRun& o) {
  io.number("offered_rate_per_s", o.offered_rate);
  io.number("scheduled_rate_per_s", o.scheduled_rate);
  io.number("achieved_rate_per_s", o.achieved_rate);
  io.value("keeps_up", o.keeps_up);
  io.value("depth", o.depth);
  io.value("arrivals", o.arrivals);
  io.value("submitted", o.submitted);
  io.value("completed", o.completed);
  io.value("dropped", o.dropped);
  io.value("late", o.late);
  io.number("late_share", o.late_share);
  io.number("late_share_upper", o.late_share_upper, 7);
  io.summary("lateness_ms", o.lateness_ms);
  io.summary("latency_from_arrival_ms", o.latency_ms);
  io.summary("latency_from_submission_ms", o.service_ms);
  io.seconds("span_s", o.span);
  io.value("errors", o.errors);
  io.error("first_error", o.first_error);
  io.value("aborted", o.aborted);
  io.value("cut_short", o.cut_short, 5);
  io.value("device_stuck", o.device_stuck);
  io.array("windows", o.windows, window_fields<Io>);
}

template <class Io>
void repeat_fields(Io& io, SteadyRepeat& rep) {
  io.value("depth", rep.depth);
  io.value("inferences", rep.inferences);
  io.seconds("elapsed_s", rep.elapsed);
  io.number("rate_per_s", rep.rate);
  io.value("stable", rep.stable);
  io.number("last_windows_spread", rep.last_windows_spread);
  io.number("rate_half_width", rep.rate_half_width, 3);
  io.value("precise", rep.precise, 3);
  io.value("capped", rep.capped, 3);
  io.number("declared_cap_per_s", rep.declared_cap, 5);
  io.seconds("warmup_s", rep.warmup);
  io.value("warmup_inferences", rep.warmup_inferences);
  io.value("warmup_settled", rep.warmup_settled);
  io.summary("latency_ms", rep.latency_ms);
  io.value("errors", rep.errors);
  io.error("first_error", rep.first_error);
  io.value("aborted", rep.aborted);
  io.value("cut_short", rep.cut_short, 5);
  io.array("windows", rep.windows, window_fields<Io>);
}

template <class Io>
void latency_fields(Io& io, LatencyResult& l) {
  io.value("samples", l.samples);
  io.value("cut_short", l.cut_short, 5);
  io.value("errors", l.errors);
  io.error("first_error", l.first_error);
  io.summary("overall_ms", l.overall_ms);
  io.summary("hardware_ms", l.hardware_ms);
  io.summary("transfer_in_ms", l.transfer_in_ms);
  io.summary("transfer_out_ms", l.transfer_out_ms);
  io.summary("queue_wait_ms", l.queue_wait_ms);
  io.number("bus_share", l.bus_share);
  io.number("rig_round_trip_ms", l.rig_round_trip_ms, 3);
}

template <class Io>
void bytes_fields(Io& io, BytesResult& b) {
  io.value("model_in", b.model_in);
  io.value("model_out", b.model_out);
  io.number("payload_in_per_inference", b.payload_in);
  io.number("payload_out_per_inference", b.payload_out);
  io.number("link_in_per_inference", b.link_in);
  io.number("link_out_per_inference", b.link_out);
  io.number("payload_mb_per_s", b.payload_mb_per_s);
  io.number("link_mb_per_s", b.link_mb_per_s);
}

template <class Io>
void overhead_fields(Io& io, OverheadResult& o) {
  io.value("measured", o.measured);
  io.number("bookkeeping_ns_per_inference", o.bookkeeping_ns_per_inference);
  io.number("bookkeeping_share", o.bookkeeping_share);
  io.number("wait_fraction", o.wait_fraction);
  io.value("limiting", o.limiting);
  io.value("note", o.note);
}

template <class Io>
void bench_fields(Io& io, BenchResult& r) {
  requested_effective_fields(io, r.requested, r.effective, bench_settings_fields<Io>);
  environment_device_fields(io, r.environment, r.virtual_clock, r.device, /*loop_whole=*/false);
  io.object("model", [&](Io& m) { model_fields(m, r.model); });
  io.derived("input_data", input_data_json(r.effective.point.inputs.get(), r.effective.point.seed));
  io.object("ttfo", [&](Io& t) { ttfo_fields(t, r.ttfo); });
  io.object("steady", [&](Io& s) {
    s.value("depth", r.steady.depth);
    s.summary("rate_per_s", r.steady.rate);
    s.number("time_per_frame_ms", r.steady.time_per_frame_ms);
    s.value("stable", r.steady.stable);
    s.array("repeats", r.steady.repeats, repeat_fields<Io>);
  });
  io.optional_object("offered", r.offered, offered_fields<Io>, 3);
  io.object("latency", [&](Io& l) { latency_fields(l, r.latency); });
  io.object("bytes", [&](Io& b) { bytes_fields(b, r.bytes); });
  io.object("overhead", [&](Io& o) { overhead_fields(o, r.overhead); });
  io.object(
      "monitor", [&](Io& m) { monitor_fields(m, r.monitor); }, 3);
  io.object("verdict", [&](Io& v) { verdict_fields(v, r.verdict); });
}

}  // namespace rig::report

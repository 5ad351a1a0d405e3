// rig loop's document as one table of keys (json_walkers.hpp): loop_to_json
// writes it, read_loop reads it back (the page). docs/results-schema.md, "rig
// loop". Private to the reporters.
#pragma once

#include "report/monitor_fields.hpp"
#include "report/schema_fields.hpp"
#include "rig/scenario/loop.hpp"

namespace rig::report {

template <class Io>
void loop_settings_fields(Io& io, LoopSettings& s) {
  point_settings_fields(io, s.point);
  io.value("model", s.model);
  io.value("device", s.device);
  io.value("depth", s.depth);
  io.ms("sleep_between_frames_ms", s.sleep_between_frames);
  monitor_confound_settings_fields(io, s.monitor, s.confounds);
}

template <class Io>
void loop_fields(Io& io, LoopResult& r) {
  // Version 1 had flat settings (the effective ones), the device at the top
  // level and steady.rate: read into today's places.
  const bool v1 = Io::reading && io.version() < 2;
  if (v1) {
    io.object("settings", [&](Io& s) { loop_settings_fields(s, r.effective); });
    io.object("device", [&](Io& d) { device_fields(d, r.device); });
  } else {
    io.object("settings", [&](Io& s) {
      s.object("requested", [&](Io& q) { loop_settings_fields(q, r.requested); });
      s.object("effective", [&](Io& e) { loop_settings_fields(e, r.effective); });
    });
  }
  io.object("environment", [&](Io& e) {
    environment_fields(e, r.environment, r.virtual_clock);
    if (!v1) e.object("device", [&](Io& d) { device_fields(d, r.device); });
    e.value("mixed_clocks", r.mixed_clocks, 2);
  });
  io.object(
      "model", [&](Io& m) { model_fields(m, r.model); }, 2);
  io.object(
      "ttfo", [&](Io& t) { ttfo_fields(t, r.ttfo); }, 2);
  io.object("loop", [&](Io& l) {
    l.optional_count("frames_completed", r.loop.frames_completed);
    l.optional_count("frames_aborted", r.loop.frames_aborted);
    l.seconds("elapsed_s", r.loop.elapsed);
    l.number("frames_per_second", r.loop.frames_per_second);
    l.number("frames_per_second_upper", r.device_rate_upper, 4);
    l.number("rate_per_s", r.device_rate, 5);
    l.number("rate_per_s_lower", r.device_rate_lower, 5);
    l.number("rate_uncertainty", r.device_rate_uncertainty, 5);
    l.number("rate_noise", r.device_rate_noise, 7);
    l.number("rate_step", r.loop.rate_step, 4);
    l.value("includes_transfers", r.loop.includes_transfers, 4);
    l.value("notes", r.loop.notes, 4);
    l.error("error", r.loop_error);
  });
  io.object("steady", [&](Io& s) {
    SteadyRepeat& st = r.steady;
    s.value("depth", st.depth);
    s.value("inferences", st.inferences);
    s.seconds("elapsed_s", st.elapsed);
    s.number("rate_per_s", r.host_rate, 2);
    if (v1) s.number("rate", r.host_rate);
    s.value("stable", st.stable);
    s.value("aborted", st.aborted);
    s.value("errors", st.errors);
    s.error("first_error", st.first_error);
    uint64_t windows = st.windows.size();
    s.value("windows", windows, 2);
    s.seconds("warmup_s", st.warmup);
    s.number("payload_in_per_inference", st.payload_in_per_inference);
    s.number("payload_out_per_inference", st.payload_out_per_inference);
    s.number("link_in_per_inference", st.link_in_per_inference);
    s.number("link_out_per_inference", st.link_out_per_inference);
  });
  io.object(
      "transfer_cost",
      [&](Io& t) {
        t.number("per_frame_ms", r.transfer_cost_ms);
        t.number("share_of_host_frame_time", r.transfer_cost_share);
        t.number("lower_ms", r.transfer_cost_lower_ms, 5);
        t.number("upper_ms", r.transfer_cost_upper_ms, 5);
      },
      2);
  io.object(
      "monitor", [&](Io& m) { monitor_fields(m, r.monitor); }, 3);
  io.object(
      "verdict", [&](Io& v) { verdict_fields(v, r.verdict); }, 2);
  io.derived("input_data", input_data_json(r.effective.point.inputs.get(), r.effective.point.seed));
}

}  // namespace rig::report

// rig soak's document as one table of keys (json_walkers.hpp): soak_to_json
// writes it, the page reads it back. docs/results-schema.md, "rig soak".
// Private to the reporters.
#pragma once

#include "report/monitor_fields.hpp"
#include "report/schema_fields.hpp"
#include "rig/scenario/soak.hpp"

namespace rig::report {

template <class Io>
void soak_settings_fields(Io& io, SoakSettings& s) {
  monitor_confound_settings_fields(io, s.monitor, s.confounds, 1);
  io.value("model", s.model);
  io.value("device", s.device);
  io.value("depth", s.depth);
  io.seconds("duration_s", s.duration);
  io.seconds("short_s", s.short_span);
  io.seconds("long_s", s.long_span);
  io.seconds("window_s", s.window);
  io.seconds("cooldown_s", s.cooldown);
  io.seconds("warmup_max_s", s.warmup_max);
  io.seconds("request_timeout_s", s.request_timeout);
  io.value("seed", s.seed);
  io.number("drift_floor", s.drift_floor);
}

template <class Io>
void soak_span_fields(Io& io, SoakSpan& s) {
  io.number("start_s", s.start_s);
  io.number("duration_s", s.duration_s);
  io.value("inferences", s.inferences);
  io.value("windows", s.windows);
  io.number("rate_per_s", s.rate);
  io.number("spread", s.spread);
}

template <class Io>
void soak_window_fields(Io& io, SoakWindow& w) {
  io.number("start_s", w.start_s);
  io.number("duration_s", w.duration_s);
  io.value("inferences", w.inferences);
  io.number("rate_per_s", w.rate);
  io.number("temperature_c", w.temperature_c);
}

template <class Io>
void soak_fields(Io& io, SoakResult& r) {
  requested_effective_fields(io, r.requested, r.effective, soak_settings_fields<Io>);
  environment_device_fields(io, r.environment, r.virtual_clock, r.device);
  io.object("model", [&](Io& m) { model_fields(m, r.model); });
  io.object("ttfo", [&](Io& t) { ttfo_fields(t, r.ttfo); });
  io.object("soak", [&](Io& s) {
    s.value("depth", r.run.depth);
    s.seconds("elapsed_s", r.run.elapsed);
    s.value("inferences", r.run.inferences);
    s.number("rate_per_s", r.run.rate);
    s.seconds("warmup_s", r.run.warmup);
    s.value("errors", r.run.errors);
    s.error("first_error", r.run.first_error);
    s.value("aborted", r.run.aborted);
    s.value("temperature_sensor", r.temperature_sensor);
    s.array("windows", r.windows, soak_window_fields<Io>);
    s.object("short", [&](Io& x) { soak_span_fields(x, r.short_run); });
    s.object("long", [&](Io& x) { soak_span_fields(x, r.long_run); });
    s.number("drift", r.drift);
    s.number("noise", r.noise);
    s.value("drift_exceeds_noise", r.drift_exceeds_noise);
  });
  io.object("monitor", [&](Io& m) { monitor_fields(m, r.monitor); });
  io.object("verdict", [&](Io& v) { verdict_fields(v, r.verdict); });
  io.derived("input_data", input_data_json(r.effective.inputs.get(), r.effective.seed));
}

}  // namespace rig::report

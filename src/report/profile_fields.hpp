// rig profile's document as one table of keys (json_walkers.hpp):
// profile_to_json writes it, the page reads it back. docs/results-schema.md,
// "rig profile". Private to the reporters.
#pragma once

#include "report/schema_fields.hpp"
#include "rig/scenario/profile.hpp"

namespace rig::report {

template <class Io>
void profile_settings_fields(Io& io, ProfileSettings& s) {
  io.value("model", s.model);
  io.value("device", s.device);
  io.value("runs", s.runs);
  io.value("top", s.top);
  io.value("seed", s.seed);
}

template <class Io>
void profiled_layer_fields(Io& io, ProfiledLayer& l, uint64_t rank) {
  io.value("rank", rank);
  io.value("name", l.name);
  io.value("op_type", l.op_type);
  io.value("calls", l.calls);
  io.number("total_ms", l.total_ms);
  io.number("per_run_ms", l.per_run_ms);
  io.number("share", l.share);
}

template <class Io>
void profile_fields(Io& io, ProfileResult& r) {
  requested_effective_fields(io, r.requested, r.effective, profile_settings_fields<Io>);
  environment_device_fields(io, r.environment, r.virtual_clock, r.device);
  io.object("model", [&](Io& m) { model_fields(m, r.model); });
  io.object("ttfo", [&](Io& t) { ttfo_fields(t, r.ttfo); });
  io.object("profile", [&](Io& p) {
    p.value("profiler", r.profiler);
    p.value("runs", r.runs);
    p.number("wall_per_run_ms", r.wall_per_run_ms);
    p.number("layers_per_run_ms", r.layers_per_run_ms);
    uint64_t rank = 0;
    p.array("layers", r.layers,
            [&](Io& l, ProfiledLayer& layer) { profiled_layer_fields(l, layer, ++rank); });
  });
  io.object("verdict", [&](Io& v) { verdict_fields(v, r.verdict); });
}

}  // namespace rig::report

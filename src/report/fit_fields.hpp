// rig fit's document as one table of keys (json_walkers.hpp): fit_to_json
// writes it, the page reads it back. docs/results-schema.md, "rig fit".
// Private to the reporters.
#pragma once

#include "report/schema_fields.hpp"
#include "rig/scenario/fit.hpp"

namespace rig::report {

template <class Io>
void fit_settings_fields(Io& io, FitResult& r) {
  FitSettings& s = r.settings;
  io.value("model", s.model);
  io.number("params", s.params);
  io.number("device_memory_bytes", s.device_memory_bytes);
  io.value("bits", s.bits);
  io.optional_object("link", s.link, [](Io& l, LinkProfile& x) { link_fields(l, x); });
  io.value("link_from", s.link_from);
  io.number("activation_bytes", s.activation_bytes);
  io.value("strict", r.inputs.strict);
}

template <class Io>
void weight_group_fields(Io& io, WeightGroup& g) {
  io.value("tensors", g.tensors);
  io.value("elements", g.elements);
  io.value("bytes", g.bytes);
  io.value("floating", g.floating);
}

template <class Io>
void fit_row_fields(Io& io, FitRow& x) {
  io.value("bits", x.bits);
  io.number("weight_bytes", x.weight_bytes);
  io.number("need_bytes", x.need_bytes);
  io.enumeration("placement", x.placement,
                 {Placement::resident, Placement::streamed, Placement::cannot_run});
  io.number("spare_bytes", x.spare_bytes);
  io.number("streamed_bytes_per_inference", x.streamed_bytes);
  io.number("load_ms", x.load_ms);
  io.number("floor_ms", x.floor_ms);
  io.number("lone_floor_ms", x.lone_floor_ms);
  io.number("best_rate_per_s", x.best_rate_per_s);
  io.number("frame_ms", x.frame_ms);
}

// A figure the result keeps beside a flag saying whether it is known: null
// when it is not.
template <class Io>
void known_number(Io& io, const char* key, double& v, bool known) {
  std::optional<double> n = known ? std::optional<double>(v) : std::nullopt;
  io.number(key, n);
  if constexpr (Io::reading) v = n.value_or(0);
}

template <class Io>
void fit_fields(Io& io, FitResult& r) {
  io.derived("kind", "fit");
  io.object("settings", [&](Io& s) { fit_settings_fields(s, r); });
  io.object("model", [&](Io& m) {
    GraphWeights& w = r.weights;
    m.value("from_graph", r.from_graph);
    m.value("tensors", w.tensors);
    m.value("parameters", w.parameters);
    m.value("float_parameters", w.float_parameters);
    m.value("stored_bytes", w.stored_bytes);
    m.value("non_float_bytes", w.non_float_bytes);
    m.value("external_tensors", w.external_tensors);
    m.value("constant_tensors", w.constant_tensors);
    m.map("by_type", w.by_type, weight_group_fields<Io>);
  });
  io.object("working", [&](Io& w) {
    w.value("known", r.working_known);
    known_number(w, "bytes", r.working_bytes, r.working_known);
    w.value("from", r.working_from);
  });
  io.object("results", [&](Io& x) {
    x.array("rows", r.rows, fit_row_fields<Io>);
    x.object("frame", [&](Io& f) {
      f.value("counted", r.frame_known);
      known_number(f, "bytes_in", r.frame_in_bytes, r.frame_known);
      known_number(f, "bytes_out", r.frame_out_bytes, r.frame_known);
    });
  });
  io.array("inputs", r.inputs.inputs, input_verdict_fields<Io>);
  io.object("verdict", [&](Io& v) { verdict_fields(v, r.inputs.verdict); });
}

}  // namespace rig::report

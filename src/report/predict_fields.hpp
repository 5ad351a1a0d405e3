// rig predict's document as one table of keys (json_walkers.hpp):
// prediction_to_json writes it; the page and rig place read it back.
// docs/results-schema.md, "rig predict". Private to the reporters.
#pragma once

#include <limits>
#include <string>

#include "report/schema_fields.hpp"
#include "rig/link_profile.hpp"
#include "rig/scenario/predict.hpp"

namespace rig::report {

// What a rig predict document holds: the bench result it read, what it took
// from it, and the prediction.
struct PredictDoc {
  std::string result_path;
  PredictSource source;
  Prediction prediction;
  // results.prediction.traffic_mb_per_s, derived from the prediction on
  // write; read back as the document holds it.
  std::optional<double> traffic_mb_per_s;
};

template <class Io>
void link_profile_fields(Io& io, LinkProfile& l) {
  link_fields(io, l);
  io.derived("round_trip_ms", to_ms(l.round_trip()));
}

template <class Io>
void predict_source_fields(Io& io, PredictSource& s) {
  io.value("device_spec", s.device_spec);
  io.value("model", s.model_name);
  io.value("model_sha256", s.model_sha256, 3);
  io.number("compute_ms", s.compute_ms);
  io.value("compute_from", s.compute_from);
  io.number("bytes_in", s.bytes_in);
  io.number("bytes_out", s.bytes_out);
  io.value("depth", s.depth);
  io.number("measured_rate_per_s", s.measured_rate);
  io.number("measured_lone_ms", s.measured_lone_ms);
  io.number("measured_spread", s.measured_spread, 5);
}

template <class Io>
void prediction_fields(Io& io, PredictSource& s, Prediction& p,
                       std::optional<double>& traffic_mb_per_s) {
  io.number("rate_per_s", p.rate);
  io.enumeration("rate_model", p.rate_model, {RateModel::closed_form, RateModel::event_simulation},
                 5);
  io.number("closed_form_rate_per_s", p.closed_form_rate, 5);
  io.number("rate_uncertainty", p.rate_uncertainty, 5);
  io.value("uncertainty_note", p.uncertainty_note, 5);
  io.value("depth_note", p.depth_note, 7);
  io.number("ms_per_frame", p.ms_per_frame);
  io.enumeration("bound", p.bound, {Bottleneck::bus, Bottleneck::compute, Bottleneck::latency});
  io.number("lone_ms", p.lone_ms);
  io.number("transfer_in_ms", p.transfer_in_ms);
  io.number("transfer_out_ms", p.transfer_out_ms);
  io.number("bus_ms_per_frame", p.bus_ms_per_frame);
  io.number("compute_ms_per_frame", p.compute_ms_per_frame);
  io.value("compute_overlaps", p.compute_overlaps);
  io.number("traffic_in_bytes_per_s", p.traffic_in_bytes_per_s);
  io.number("traffic_out_bytes_per_s", p.traffic_out_bytes_per_s);
  if constexpr (!Io::reading)
    traffic_mb_per_s = (p.traffic_in_bytes_per_s + p.traffic_out_bytes_per_s) / 1e6;
  io.number("traffic_mb_per_s", traffic_mb_per_s);
  io.number("bus_utilization", p.bus_utilization);
  io.number("bus_idle", p.bus_idle);
  io.number("ttfo_ms", p.ttfo_ms);
  io.object("ttfo", [&](Io& t) {
    t.number("load_ms", s.load_ms);
    t.number("allocate_ms", s.allocate_ms);
    t.number("first_compute_ms", p.first_compute_ms);
    // Read back as NaN (absent) unless the document holds it.
    double first = Io::reading ? std::numeric_limits<double>::quiet_NaN()
                               : p.ttfo_ms - s.load_ms - s.allocate_ms;
    t.number("first_inference_ms", first);
    if constexpr (Io::reading) s.first_inference_ms = first;
  });
}

template <class Io>
void predict_fields(Io& io, PredictDoc& d) {
  Prediction& p = d.prediction;
  io.object("settings", [&](Io& s) {
    s.value("result", d.result_path);
    s.value("strict", p.inputs.strict, 6);
    s.value("depth", p.depth);
    s.value("requested_depth", p.requested_depth, 7);
    s.object("link", [&](Io& l) { link_profile_fields(l, p.link); });
  });
  io.object("results", [&](Io& x) {
    x.object("source", [&](Io& s) { predict_source_fields(s, d.source); });
    x.object("prediction", [&](Io& q) { prediction_fields(q, d.source, p, d.traffic_mb_per_s); });
  });
  io.array("inputs", p.inputs.inputs, input_verdict_fields<Io>, 6);
  io.object(
      "verdict", [&](Io& v) { verdict_fields(v, p.inputs.verdict); }, 6);
}

}  // namespace rig::report

// rig place's document as one table of keys (json_walkers.hpp): place_to_json
// writes it, the page reads it back. docs/results-schema.md, "rig place".
// Private to the reporters.
#pragma once

#include <algorithm>

#include "report/schema_fields.hpp"
#include "rig/scenario/place.hpp"

namespace rig::report {

// One stage of an assignment: its stage by name, its candidate by index
// (with that candidate's device and source beside it, for a reader).
template <class Io>
void stage_placement_fields(Io& io, StagePlacement& p, PlaceResult& r) {
  std::string stage;
  if constexpr (!Io::reading) stage = r.stages[p.stage].name;
  io.value("stage", stage);
  if constexpr (Io::reading) {
    auto it = std::find_if(r.stages.begin(), r.stages.end(),
                           [&](const PlaceStage& s) { return s.name == stage; });
    p.stage = static_cast<size_t>(it - r.stages.begin());  // size(): not found
  }
  io.value("candidate", p.candidate);
  if constexpr (!Io::reading) {
    io.derived("device", r.candidates[p.candidate].device);
    io.derived("source", r.candidates[p.candidate].source);
  }
  io.number("bytes_in", p.bytes_in);
  io.number("bytes_out", p.bytes_out);
  io.number("transfer_in_ms", p.transfer_in_ms);
  io.number("transfer_out_ms", p.transfer_out_ms);
  io.number("compute_ms", p.compute_ms);
}

template <class Io>
void place_stage_fields(Io& io, PlaceStage& s) {
  io.value("name", s.name);
  io.value("model", s.model);
  io.value("sha256", s.sha256);
  io.number("input_bytes", s.input_bytes);
  io.number("output_bytes", s.output_bytes);
  io.value("candidates", s.candidates);
}

template <class Io>
void place_candidate_fields(Io& io, PlaceCandidate& c) {
  io.value("source", c.source);
  io.value("device", c.device);
  io.value("model", c.model_name);
  io.value("model_sha256", c.model_sha256);
  io.value("predicted", c.predicted);
  io.number("rate_per_s", c.rate_per_s);
  io.number("compute_ms", c.compute_ms);
  io.number("compute_ms_per_frame", c.compute_ms_per_frame);
  io.number("lone_ms", c.lone_ms);
  io.number("bytes_in", c.bytes_in);
  io.number("bytes_out", c.bytes_out);
  std::optional<uint32_t> depth;  // 0: unknown, written as null
  if (c.depth > 0) depth = c.depth;
  optional_u32(io, "depth", depth);
  if constexpr (Io::reading) c.depth = depth.value_or(0);
  io.optional_object("link", c.link, [](Io& l, LinkProfile& x) { link_fields(l, x, false); });
  io.number("energy_per_inference_j", c.energy_j);
  io.value("caveats", c.caveats);
}

template <class Io>
void assignment_fields(Io& io, Assignment& a, PlaceResult& r) {
  io.array("stages", a.stages, [&](Io& s, StagePlacement& p) { stage_placement_fields(s, p, r); });
  io.number("rate_per_s", a.rate_per_s);
  io.value("bound", a.bound);
  io.number("resource_rate_per_s", a.resource_rate_per_s);
  io.number("depth_rate_per_s", a.depth_rate_per_s);
  io.number("measured_scale", a.measured_scale);
  io.number("lone_ms", a.lone_ms);
  io.number("transfer_ms", a.transfer_ms);
  io.number("transfer_share", a.transfer_share);
  io.number("bytes_moved_per_frame", a.bytes_moved_per_frame);
  io.number("bus_utilization", a.bus_utilization);
  io.number("bus_headroom", a.bus_headroom);
  io.value("busiest_link", a.busiest_link);
  io.number("energy_per_frame_j", a.energy_j);
  io.value("meets_rate", a.meets_rate);
  io.value("meets_latency", a.meets_latency);
  io.value("meets", a.meets);
  io.number("shortfall", a.shortfall);
  io.value("caveats", a.caveats);
}

template <class Io>
void place_fields(Io& io, PlaceResult& r) {
  io.derived("kind", "place");
  io.object("settings", [&](Io& s) {
    s.object("workload", [&](Io& w) {
      w.number("fps", r.workload.fps);
      w.number("latency_ms", r.workload.latency_ms);
      w.value("frame", r.workload.frame_text);
      w.number("frame_bytes", r.workload.frame_bytes);
      w.value("frame_mapping", r.frame_mapping);
    });
    // The results read, in order: each candidate's source.
    std::vector<std::string> sources;
    for (const auto& c : r.candidates) sources.push_back(c.source);
    s.value("results", sources);
    s.value("strict", r.inputs.strict);
  });
  io.object("results", [&](Io& x) {
    x.array("stages", r.stages, place_stage_fields<Io>);
    x.array("candidates", r.candidates, place_candidate_fields<Io>);
    x.array("assignments", r.assignments,
            [&](Io& a, Assignment& v) { assignment_fields(a, v, r); });
    x.value("met", r.met);
    x.value("reason", r.reason);
  });
  io.array("inputs", r.inputs.inputs, input_verdict_fields<Io>);
  io.object("verdict", [&](Io& v) { verdict_fields(v, r.inputs.verdict); });
}

}  // namespace rig::report

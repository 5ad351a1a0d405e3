// rig ladder's document as one table of keys (json_walkers.hpp):
// ladder_to_json writes it, read_ladder reads it back (the page, and
// read_ladder_link for rig predict and rig fit). docs/results-schema.md, "rig
// ladder". Private to the reporters.
#pragma once

#include <optional>
#include <string>

#include "report/monitor_fields.hpp"
#include "report/schema_fields.hpp"
#include "rig/scenario/ladder.hpp"

namespace rig::report {

template <class Io>
void link_fit_fields(Io& io, LinkFit& f) {
  io.value("points", f.points);
  io.number("fixed_ms", f.fixed_ms);
  io.number("bandwidth_bytes_per_s", f.bandwidth_bytes_per_s);
  std::optional<double> mb;
  if (f.bandwidth_bytes_per_s) mb = *f.bandwidth_bytes_per_s / 1e6;
  io.number("bandwidth_mb_per_s", mb);
  io.numbers("residuals_ms", f.residuals_ms);
  io.numbers("relative_residuals", f.relative_residuals);
  io.number("rms_relative_residual", f.rms_relative_residual);
  io.number("max_relative_residual", f.max_relative_residual);
  io.number("r_squared", f.r_squared);
}

template <class Io>
void ladder_settings_fields(Io& io, LadderSettings& s) {
  io.value("sizes", s.sizes);
  io.value("depth", s.depth);
  io.value("latency_samples", s.latency_samples);
  io.value("plateau_tolerance", s.plateau_tolerance);
  io.value("latency_bound_margin", s.latency_bound_margin);
  io.value("compute_bound_share", s.compute_bound_share);
  io.value("out_heavy", s.out_heavy, 5);
  io.derived("transport", {{"input_type", "u8"},
                           {"channels", 4},
                           {"output_fraction", output_fraction(RungShape::in_heavy)},
                           {"out_heavy_output_fraction", output_fraction(RungShape::out_heavy)}});
  io.object("point", [&](Io& p) { point_settings_fields(p, s.point); });
  monitor_confound_settings_fields(io, s.monitor, s.confounds);
}

template <class Io>
void rung_fields(Io& io, LadderRung& g) {
  io.value("size", g.size);
  io.enumeration("shape", g.shape, {RungShape::in_heavy, RungShape::out_heavy}, 5);
  io.value("in_direction_fit", g.in_direction_fit, 5);
  io.value("width", g.frame.width);
  io.value("height", g.frame.height);
  io.value("bytes_in", g.bytes_in);
  io.value("bytes_out", g.bytes_out);
  io.object("pipelined", [&](Io& p) { point_fields(p, g.pipelined); });
  io.number("mb_per_s", g.mb_per_s);
  io.summary("lone_ms", g.lone_ms);
  io.number("compute_ms", g.compute_ms);
  io.number("link_ms", g.link_ms);
  io.value("lone_errors", g.lone_errors);
  io.enumeration("bound", g.bound,
                 {RungBound::link, RungBound::latency, RungBound::compute, RungBound::failed});
  io.value("in_bandwidth_fit", g.in_bandwidth_fit);
}

// A source of a per-direction bandwidth: null when none.
template <class Io>
void direction_source_fields(Io& io, const char* key, DirectionSource& d) {
  std::optional<std::string> text;
  if (d != DirectionSource::none) text = std::string(to_string(d));
  io.value(key, text, 5);
  if constexpr (Io::reading) {
    d = DirectionSource::none;
    if (text)
      if (auto e = enum_from(*text, {DirectionSource::pipelined, DirectionSource::lone_frames}))
        d = *e;
  }
}

template <class Io>
void ladder_results_fields(Io& io, LadderResult& r) {
  io.array("rungs", r.rungs, rung_fields<Io>);
  io.object("plateau", [&](Io& p) {
    p.value("found", r.plateau.found);
    std::vector<std::string> sizes;
    if (r.plateau.found)
      for (size_t i = r.plateau.first; i <= r.plateau.last && i < r.rungs.size(); ++i)
        sizes.push_back(r.rungs[i].size);
    p.value("sizes", sizes);
    if constexpr (Io::reading) {
      for (size_t i = 0; i < r.rungs.size() && !sizes.empty(); ++i)
        if (r.rungs[i].size == sizes.front()) {
          r.plateau.first = i;
          r.plateau.last = i + sizes.size() - 1;
          break;
        }
    }
    p.number("median_mb_per_s", r.plateau.median_mb_per_s);
    p.number("min_mb_per_s", r.plateau.min_mb_per_s);
    p.number("max_mb_per_s", r.plateau.max_mb_per_s);
    p.value("tolerance", r.plateau.tolerance);
  });
  const auto mb = [](const std::optional<double>& bytes_per_s) {
    return bytes_per_s ? std::optional<double>(*bytes_per_s / 1e6) : std::nullopt;
  };
  io.number("bandwidth_bytes_per_s", r.bandwidth_bytes_per_s);
  io.derived("bandwidth_mb_per_s", json_number(mb(r.bandwidth_bytes_per_s)));
  std::optional<std::string> bandwidth_from;
  if (r.bandwidth_bytes_per_s)
    bandwidth_from = r.bandwidth_from_lone_frames ? "lone_frames" : "pipelined";
  io.value("bandwidth_from", bandwidth_from);
  io.enumeration("duplex", r.duplex, kDuplexes);
  std::optional<std::string> duplex_from;
  if (r.duplex != Duplex::unknown) duplex_from = r.duplex_from_device ? "device" : "inferred";
  io.value("duplex_from", duplex_from);
  if constexpr (Io::reading) {
    r.bandwidth_from_lone_frames = bandwidth_from == "lone_frames";
    r.duplex_from_device = duplex_from == "device";
  }
  io.number("bw_in_bytes_per_s", r.bw_in_bytes_per_s, 5);
  io.derived("bw_in_mb_per_s", json_number(mb(r.bw_in_bytes_per_s)));
  direction_source_fields(io, "bw_in_from", r.bw_in_from);
  io.number("bw_out_bytes_per_s", r.bw_out_bytes_per_s, 5);
  io.derived("bw_out_mb_per_s", json_number(mb(r.bw_out_bytes_per_s)));
  direction_source_fields(io, "bw_out_from", r.bw_out_from);
  io.number("direction_fit_max_relative_residual", r.direction_fit_max_relative_residual, 5);
  const std::optional<LinkProfile> link = measured_link(r);
  io.derived("link", link ? json(to_sim_params(*link)) : json(nullptr));
  io.number("round_trip_ms", r.round_trip_ms);
  io.number("per_transfer_ms", r.per_transfer_ms);
  io.number("rig_round_trip_ms", r.rig_round_trip_ms, 3);
  io.object("pipelined_fit", [&](Io& f) { link_fit_fields(f, r.pipelined_fit); });
  io.object("lone_fit", [&](Io& f) { link_fit_fields(f, r.lone_fit); });
  io.object("reproducibility", [&](Io& p) {
    p.number("worst_spread", r.worst_spread);
    std::optional<std::string> worst;
    if (r.worst_spread_rung && *r.worst_spread_rung < r.rungs.size())
      worst = r.rungs[*r.worst_spread_rung].label();
    p.value("worst_size", worst);
    if constexpr (Io::reading) {
      r.worst_spread_rung.reset();
      for (size_t i = 0; i < r.rungs.size() && worst; ++i)
        if (r.rungs[i].label() == *worst) r.worst_spread_rung = i;
    }
  });
}

template <class Io>
void ladder_fields(Io& io, LadderResult& r) {
  requested_effective_fields(io, r.requested, r.effective, ladder_settings_fields<Io>);
  environment_device_fields(io, r.environment, r.virtual_clock, r.device);
  io.object("results", [&](Io& x) { ladder_results_fields(x, r); });
  io.value("notes", r.notes);
  io.object(
      "monitor", [&](Io& m) { monitor_fields(m, r.monitor); }, 3);
  io.object("verdict", [&](Io& v) { verdict_fields(v, r.verdict); });
}

// What rig predict and rig fit read of a ladder (read_ladder_link): the
// ladder, whether it has its results, and version 4's one bandwidth for both
// directions.
struct LadderLinkRead {
  LadderResult ladder;
  bool has_results = false;
  std::optional<double> direction_bandwidth;  // version 4
};

template <class Io>
void ladder_link_fields(Io& io, LadderLinkRead& l) {
  ladder_fields(io, l.ladder);
  const json* results = nullptr;
  io.subtree("results", results);
  l.has_results = results && results->is_object();
  io.object("results", [&](Io& x) {
    x.number("direction_bandwidth_bytes_per_s", l.direction_bandwidth, kJsonSchemaVersion + 1);
  });
}

}  // namespace rig::report

// rig ladder: the link, characterized with transport models at each frame
// size. Two fits, each over the times that measure what it estimates:
//   bandwidth      pipelined time per frame vs bytes: a saturated pipeline
//                  hides the fixed latency, so the slope is the link's rate;
//   fixed latency  lone-frame (depth 1) link time vs bytes: nothing overlaps,
//                  so the intercept is the round trip of a zero-byte frame.
// Bytes per frame are in + out: on a half-duplex link both directions share
// the channel (the seed note's MB/s column counts them together). On a
// full-duplex link they overlap, and the busier direction (the input, for
// transport frames) is fitted alone for one direction's bandwidth.
#include <algorithm>
#include <cmath>
#include <set>

#include "rig/scenario/ladder.hpp"
#include "rig/units.hpp"
#include "scenario/analysis_notes.hpp"
#include "scenario/monitored_run.hpp"

namespace rig {
namespace {

std::string join_sizes(const std::vector<LadderRung>& rungs, RungBound bound) {
  std::string s;
  for (const auto& r : rungs)
    if (r.bound == bound) s += (s.empty() ? "" : ", ") + r.size;
  return s;
}

}  // namespace

std::string_view to_string(RungBound bound) {
  switch (bound) {
    case RungBound::link:
      return "link";
    case RungBound::latency:
      return "latency";
    case RungBound::compute:
      return "compute";
    case RungBound::failed:
      return "failed";
  }
  return "failed";
}

Result<void> validate(const LadderSettings& s) {
  auto bad = [](const std::string& m) { return fail(ErrorCode::invalid_argument, m); };
  if (auto ok = validate(s.point); !ok) return ok;
  if (s.sizes.size() < 2)
    return bad("the ladder needs at least two frame sizes to fit the link model, got " +
               std::to_string(s.sizes.size()));
  std::set<std::pair<int64_t, int64_t>> seen;
  for (const auto& size : s.sizes) {
    auto frame = parse_frame_size(size);
    if (!frame) return tl::unexpected(frame.error());
    if (!seen.emplace(frame->width, frame->height).second)
      return bad("frame size '" + size + "' is given twice");
  }
  if (s.depth == 0) return bad("depth must be >= 1");
  if (s.latency_samples == 0) return bad("latency samples must be >= 1");
  if (!(s.plateau_tolerance > 0)) return bad("plateau tolerance must be positive");
  if (!(s.latency_bound_margin >= 0)) return bad("latency-bound margin must not be negative");
  if (!(s.compute_bound_share > 0)) return bad("compute-bound share must be positive");
  return validate(s.confounds);
}

namespace {

// One rung: its transport model cold-started, lone frames timed, then the
// pipelined repeats.
Result<LadderRung> measure_rung(Device& device, const std::string& size, uint32_t depth,
                                const LadderSettings& s) {
  LadderRung rung;
  rung.size = size;
  rung.frame = *parse_frame_size(size);  // validated by run_ladder
  TransportSpec spec;
  spec.frame = rung.frame;
  auto bytes = build_transport_model(spec);
  if (!bytes) {
    Error e = bytes.error();
    e.message = "frame " + size + ": " + e.message;
    return tl::unexpected(e);
  }
  ModelSource model;
  model.bytes = std::move(*bytes);
  model.name = "transport-" + size;
  auto cold = cold_start(device, model, depth, s.point.seed, s.point.observer);
  if (!cold) {
    Error e = cold.error();
    e.message = "frame " + size + ": " + e.message;
    return tl::unexpected(e);
  }
  const ModelInfo& info = device.model_info();
  rung.bytes_in = static_cast<double>(info.input_bytes());
  rung.bytes_out = static_cast<double>(info.output_bytes());

  const LatencyResult lone =
      measure_latency(device, cold->workspace,
                      latency_settings(s.latency_samples, s.point.duration, s.point.request_timeout,
                                       s.point.observer));
  rung.lone_ms = lone.overall_ms;
  rung.lone_errors = lone.errors;
  rung.lone_first_error = lone.first_error;
  rung.compute_ms = lone.hardware_ms.median;
  // The link's share of a lone frame: what the client saw less what the
  // device says it spent computing (a transport model's compute is small but
  // not zero on a real device, and grows with the frame).
  if (lone.overall_ms.median)
    rung.link_ms = *lone.overall_ms.median - rung.compute_ms.value_or(0.0);

  rung.pipelined = measure_point(device, cold->workspace, depth, s.point);
  if (rung.pipelined.ms_per_frame)
    rung.mb_per_s = (rung.bytes_in + rung.bytes_out) / *rung.pipelined.ms_per_frame / 1e3;
  return rung;
}

// The lone-frame fit, then which rungs are link-bound when pipelined and the
// bandwidth fit over them; returns the pipelined points' busier-direction
// bytes and times for the full-duplex direction fit.
struct PipelinedPoints {
  std::vector<double> busier_bytes, ms;
};

PipelinedPoints fit_rungs(LadderResult& r, uint32_t depth, const LadderSettings& s) {
  // The lone-frame fit first: nothing overlaps at depth 1, so it holds for
  // every rung that completed.
  std::vector<double> lone_x, lone_y;
  for (auto& rung : r.rungs) {
    const bool ok = rung.pipelined.ms_per_frame && rung.lone_ms.median && rung.link_ms &&
                    rung.pipelined.errors == 0 && rung.lone_errors == 0;
    rung.bound = ok ? RungBound::link : RungBound::failed;
    if (!ok) continue;
    lone_x.push_back(rung.bytes_in + rung.bytes_out);
    lone_y.push_back(*rung.link_ms);
  }
  r.lone_fit = fit_link(lone_x, lone_y);

  // Which rungs measure the link when pipelined.
  std::vector<double> pipe_x;
  PipelinedPoints points;
  for (auto& rung : r.rungs) {
    if (rung.bound == RungBound::failed) continue;
    const double b = rung.bytes_in + rung.bytes_out;
    const double t = *rung.pipelined.ms_per_frame;
    if (rung.compute_ms && *rung.compute_ms >= s.compute_bound_share * t)
      rung.bound = RungBound::compute;
    else if (r.lone_fit.bandwidth_bytes_per_s
                 ? t > (1 + s.latency_bound_margin) * b / *r.lone_fit.bandwidth_bytes_per_s * 1e3
                 : t * depth <= (1 + s.latency_bound_margin) * *rung.lone_ms.median)
      rung.bound = RungBound::latency;
    if (rung.bound != RungBound::link) continue;
    rung.in_bandwidth_fit = true;
    pipe_x.push_back(b);
    points.busier_bytes.push_back(std::max(rung.bytes_in, rung.bytes_out));
    points.ms.push_back(t);
  }
  r.pipelined_fit = fit_link(pipe_x, points.ms);
  if (r.pipelined_fit.bandwidth_bytes_per_s) {
    r.bandwidth_bytes_per_s = r.pipelined_fit.bandwidth_bytes_per_s;
  } else if (r.lone_fit.bandwidth_bytes_per_s) {
    r.bandwidth_bytes_per_s = r.lone_fit.bandwidth_bytes_per_s;
    r.bandwidth_from_lone_frames = true;
    r.notes.push_back(
        "bandwidth from lone frames: fewer than two sizes were link-bound when pipelined" +
        std::string(depth == 1 ? " (depth 1 does not pipeline)"
                               : "; raise --depth or add larger sizes"));
  }
  return points;
}

// Pipelined over lone-frame bandwidth, when both fits have one.
std::optional<double> overlap_of(const LadderResult& r) {
  if (r.pipelined_fit.bandwidth_bytes_per_s && r.lone_fit.bandwidth_bytes_per_s)
    return *r.pipelined_fit.bandwidth_bytes_per_s / *r.lone_fit.bandwidth_bytes_per_s;
  return std::nullopt;
}

// Half or full duplex (the device's word, else inferred), and one direction's
// bandwidth.
void settle_duplex(LadderResult& r, const PipelinedPoints& points) {
  const std::optional<double> overlap = overlap_of(r);
  if (r.device.duplex != Duplex::unknown) {
    r.duplex = r.device.duplex;
    r.duplex_from_device = true;
  } else if (overlap) {
    r.duplex = *overlap > 1.1 ? Duplex::full : Duplex::half;
  }
  if (r.duplex == Duplex::half) {
    r.direction_bandwidth_bytes_per_s = r.bandwidth_bytes_per_s;
  } else if (r.duplex == Duplex::full) {
    r.direction_bandwidth_bytes_per_s =
        r.bandwidth_from_lone_frames
            ? r.lone_fit.bandwidth_bytes_per_s
            : fit_link(points.busier_bytes, points.ms).bandwidth_bytes_per_s;
  }
  r.round_trip_ms = r.lone_fit.fixed_ms;
  if (r.round_trip_ms) r.per_transfer_ms = *r.round_trip_ms / 2;
  r.rig_round_trip_ms = link_floor_ms(r.device);
}

void find_plateau_and_spread(LadderResult& r, const LadderSettings& s) {
  std::vector<std::optional<double>> mbs;
  for (const auto& rung : r.rungs) mbs.push_back(rung.mb_per_s);
  r.plateau = find_plateau(mbs, s.plateau_tolerance);
  for (size_t i = 0; i < r.rungs.size(); ++i) {
    const auto& spread = r.rungs[i].pipelined.rate.spread;
    if (spread && (!r.worst_spread || *spread > *r.worst_spread)) {
      r.worst_spread = spread;
      r.worst_spread_rung = i;
    }
  }
}

// What the figures do not show, and what to change.
void add_notes(LadderResult& r, uint32_t depth, const LadderSettings& s) {
  if (auto sizes = join_sizes(r.rungs, RungBound::failed); !sizes.empty()) {
    std::string first;
    for (const auto& rung : r.rungs)
      if (rung.bound == RungBound::failed && rung.pipelined.first_error && first.empty())
        first = ": " + rung.pipelined.first_error->to_string();
    r.notes.push_back("failed at " + sizes + first);
  }
  if (auto sizes = join_sizes(r.rungs, RungBound::latency); !sizes.empty() && depth > 1)
    r.notes.push_back("latency-bound at depth " + std::to_string(depth) + ": " + sizes +
                      " (pipelined, a frame takes longer than its bytes need at the lone-frame "
                      "bandwidth: fixed latency or a per-frame cost is not hidden); left out of "
                      "the bandwidth fit; raise --depth or add larger sizes");
  if (auto sizes = join_sizes(r.rungs, RungBound::compute); !sizes.empty())
    r.notes.push_back("compute-bound: " + sizes + " (the device's compute is >= " +
                      format_fixed(s.compute_bound_share * 100, 0) +
                      "% of the time per frame, so the rung measures compute, not the link); "
                      "left out of the bandwidth fit");
  if (!r.plateau.found)
    r.notes.push_back("no plateau: MB/s of no two consecutive sizes agree within " +
                      format_fixed(s.plateau_tolerance * 100, 0) + "%; add larger sizes");
  else if (r.plateau.last + 1 < r.rungs.size())
    r.notes.push_back("MB/s leaves the plateau above " + r.rungs[r.plateau.last].size);
  if (r.round_trip_ms && *r.round_trip_ms < 0)
    r.notes.push_back(
        "the lone-frame fit's intercept is negative: the fixed latency is below "
        "what these sizes resolve; add smaller sizes");
  const std::optional<double> overlap = overlap_of(r);
  if (overlap && *overlap > 1.1 && !(r.duplex_from_device && r.duplex == Duplex::full))
    r.notes.push_back(
        "pipelined frames move " + format_fixed(*overlap, 2) + "x the lone-frame bandwidth: " +
        (r.duplex_from_device
             ? std::string("the device reports a half-duplex link, so it overlaps its transfers")
             : std::string("the link overlaps the two directions (full duplex, inferred: the "
                           "device does not say) or the device overlaps its transfers")));
  else if (overlap && *overlap < 0.9)
    r.notes.push_back("pipelining loses bandwidth: " + format_fixed((1 - *overlap) * 100, 1) +
                      "% below lone frames (contention on the link or the host)");
  for (const auto& rung : r.rungs) {
    const auto& rate = rung.pipelined.rate.median;
    const auto& little = rung.pipelined.little_rate.median;
    if (rate && little && *little > *rate * 1.02)
      r.notes.push_back(rung.size + ": depth / mean latency gives " + format_fixed(*little, 2) +
                        " frames/s against " + format_fixed(*rate, 2) +
                        " counted (used): requests were not in flight all the time (the rig's "
                        "own work between a completion and the next submit)");
  }
  for (const auto& rung : r.rungs)
    if (rung.bound != RungBound::failed && !rung.pipelined.stable)
      r.notes.push_back(rung.size +
                        ": a repeat was not stable (its last windows disagree by more "
                        "than the tolerance); raise --duration");
  add_clock_and_device_notes(r);
}

}  // namespace

Result<LadderResult> run_ladder(Device& device, const LadderSettings& s) {
  if (auto ok = validate(s); !ok) return tl::unexpected(ok.error());
  LadderResult r;
  start_result(r, device, s);
  const uint32_t depth = settle_depth(r);
  if (r.depth_note) r.notes.push_back(*r.depth_note);

  MonitoredRun watch(s.monitor, device, s.point.observer);
  LadderSettings watched = s;
  watched.point = watch.watched(s.point);
  for (const auto& size : s.sizes) {
    auto rung = measure_rung(device, size, depth, watched);
    if (!rung) return tl::unexpected(rung.error());
    r.rungs.push_back(std::move(*rung));
  }
  r.monitor = watch.monitor().finish();
  r.monitor.energy.reason = "unavailable: rig ladder states no energy figure (rig bench does)";
  std::stable_sort(r.rungs.begin(), r.rungs.end(), [](const LadderRung& a, const LadderRung& b) {
    return a.bytes_in + a.bytes_out < b.bytes_in + b.bytes_out;
  });
  const PipelinedPoints points = fit_rungs(r, depth, s);
  settle_duplex(r, points);
  find_plateau_and_spread(r, s);
  add_notes(r, depth, s);
  r.verdict = judge(r);
  return r;
}

}  // namespace rig

// rig ladder: the link, characterized with transport models at each frame
// size. Fits, each over the times that measure what it estimates:
//   bandwidth      pipelined time per frame vs bytes: a saturated pipeline
//                  hides the fixed latency, so the slope is the link's rate;
//   fixed latency  lone-frame (depth 1) link time vs bytes: nothing overlaps,
//                  so the intercept is the round trip of a zero-byte frame.
// Every size is measured in-heavy (output 1/4 of the input) and out-heavy
// (output 4x): with two byte ratios, time = a + in / bw_in + out / bw_out has
// one solution, so each direction is identified. The in-heavy rungs alone
// also give the seed note's view, in + out bytes over one channel.
#include <algorithm>
#include <cmath>
#include <set>
#include <span>

#include "rig/scenario/ladder.hpp"
#include "rig/units.hpp"
#include "scenario/analysis_notes.hpp"
#include "scenario/monitored_run.hpp"
#include "scenario/rules.hpp"

namespace rig {
namespace {

std::string join_sizes(const std::vector<LadderRung>& rungs, RungBound bound) {
  std::string s;
  for (const auto& r : rungs)
    if (r.bound == bound) s += (s.empty() ? "" : ", ") + r.label();
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

std::string_view to_string(RungShape shape) {
  return shape == RungShape::out_heavy ? "out_heavy" : "in_heavy";
}

double output_fraction(RungShape shape) {
  return shape == RungShape::out_heavy ? 4.0 : 0.25;
}

std::string LadderRung::label() const {
  return shape == RungShape::out_heavy ? size + " out-heavy" : size;
}

std::string_view to_string(DirectionSource source) {
  switch (source) {
    case DirectionSource::none:
      return "none";
    case DirectionSource::pipelined:
      return "pipelined";
    case DirectionSource::lone_frames:
      return "lone_frames";
  }
  return "none";
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
Result<LadderRung> measure_rung(Device& device, const std::string& size, RungShape shape,
                                uint32_t depth, const LadderSettings& s) {
  LadderRung rung;
  rung.size = size;
  rung.shape = shape;
  rung.frame = *parse_frame_size(size);  // validated by run_ladder
  // Out-heavy: the frame halved each side, so that its bytes mirror the
  // in-heavy rung's (in B / 4, out B) and the ladder's time stays bounded.
  if (shape == RungShape::out_heavy)
    rung.frame = FrameSize{std::max<int64_t>(1, rung.frame.width / 2),
                           std::max<int64_t>(1, rung.frame.height / 2)};
  TransportSpec spec;
  spec.frame = rung.frame;
  spec.output_fraction = output_fraction(shape);
  auto bytes = build_transport_model(spec);
  if (!bytes) {
    Error e = bytes.error();
    e.message = "frame " + size + ": " + e.message;
    return tl::unexpected(e);
  }
  ModelSource model;
  model.bytes = std::move(*bytes);
  model.name = "transport-" + size + (shape == RungShape::out_heavy ? "-out-heavy" : "");
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

// Least squares ms = a + in * s_in + out * s_out over the rungs given: a
// rung's two crossings, each at its direction's bandwidth.
struct DirectionFit {
  std::optional<double> fixed_ms, bw_in, bw_out;  // bandwidths: nullopt unless slope > 0
  std::optional<double> max_relative_residual;
};

DirectionFit fit_directions(std::span<const double> in, std::span<const double> out,
                            std::span<const double> ms) {
  DirectionFit f;
  const size_t n = ms.size();
  if (n < 3) return f;
  double mi = 0, mo = 0, my = 0;
  for (size_t k = 0; k < n; ++k) mi += in[k], mo += out[k], my += ms[k];
  mi /= static_cast<double>(n), mo /= static_cast<double>(n), my /= static_cast<double>(n);
  double sii = 0, soo = 0, sio = 0, siy = 0, soy = 0;
  for (size_t k = 0; k < n; ++k) {
    const double di = in[k] - mi, d_o = out[k] - mo, dy = ms[k] - my;
    sii += di * di, soo += d_o * d_o, sio += di * d_o, siy += di * dy, soy += d_o * dy;
  }
  const double det = sii * soo - sio * sio;
  // One byte ratio only (or one size): the two directions cannot be told apart.
  if (!(det > 1e-9 * sii * soo)) return f;
  const double s_in = (siy * soo - soy * sio) / det, s_out = (soy * sii - siy * sio) / det;
  f.fixed_ms = my - s_in * mi - s_out * mo;
  if (s_in > 0) f.bw_in = 1e3 / s_in;
  if (s_out > 0) f.bw_out = 1e3 / s_out;
  double worst = 0;
  for (size_t k = 0; k < n; ++k)
    if (ms[k] > 0)
      worst =
          std::max(worst, std::fabs(ms[k] - (*f.fixed_ms + s_in * in[k] + s_out * out[k])) / ms[k]);
  f.max_relative_residual = worst;
  return f;
}

bool completed(const LadderRung& rung) {
  return rung.pipelined.ms_per_frame && rung.lone_ms.median && rung.link_ms &&
         rung.pipelined.errors == 0 && rung.lone_errors == 0;
}

// The lone-frame fits: nothing overlaps at depth 1, so they hold for every
// rung that completed.
DirectionFit fit_lone(LadderResult& r) {
  std::vector<double> lone_x, lone_y, in, out, ms;
  for (auto& rung : r.rungs) {
    rung.bound = completed(rung) ? RungBound::link : RungBound::failed;
    if (rung.bound == RungBound::failed) continue;
    in.push_back(rung.bytes_in);
    out.push_back(rung.bytes_out);
    ms.push_back(*rung.link_ms);
    if (rung.shape != RungShape::in_heavy) continue;
    lone_x.push_back(rung.bytes_in + rung.bytes_out);
    lone_y.push_back(*rung.link_ms);
  }
  r.lone_fit = fit_link(lone_x, lone_y);
  DirectionFit lone = fit_directions(in, out, ms);
  if (!lone.bw_in || !lone.bw_out) lone = {};
  r.direction_fit_max_relative_residual = lone.max_relative_residual;
  return lone;
}

// A rung's crossings at the lone-frame fit's bandwidths, ms.
double in_ms(const LadderRung& rung, const DirectionFit& lone) {
  return rung.bytes_in / *lone.bw_in * 1e3;
}
double out_ms(const LadderRung& rung, const DirectionFit& lone) {
  return rung.bytes_out / *lone.bw_out * 1e3;
}

// The largest share by which a pipelined frame beats its lone crossings
// (1 when they agree): above 1 the two directions overlap.
std::optional<double> overlap_of(const LadderResult& r, const DirectionFit& lone) {
  if (!lone.bw_in) {
    if (r.pipelined_fit.bandwidth_bytes_per_s && r.lone_fit.bandwidth_bytes_per_s)
      return *r.pipelined_fit.bandwidth_bytes_per_s / *r.lone_fit.bandwidth_bytes_per_s;
    return std::nullopt;
  }
  std::optional<double> best;
  for (const auto& rung : r.rungs)
    if (rung.bound != RungBound::failed)
      best = std::max(best.value_or(0.0),
                      (in_ms(rung, lone) + out_ms(rung, lone)) / *rung.pipelined.ms_per_frame);
  return best;
}

void settle_duplex(LadderResult& r, const DirectionFit& lone) {
  if (r.device.duplex != Duplex::unknown) {
    r.duplex = r.device.duplex;
    r.duplex_from_device = true;
  } else if (const auto overlap = overlap_of(r, lone)) {
    r.duplex = *overlap > 1.1 ? Duplex::full : Duplex::half;
  }
}

// Which rungs measure the link when pipelined: not compute-bound, and no
// slower than their crossings need (the busier direction's on a full-duplex
// link, both back to back on a half-duplex one) by more than the margin.
void classify_rungs(LadderResult& r, const DirectionFit& lone, uint32_t depth,
                    const LadderSettings& s) {
  for (auto& rung : r.rungs) {
    if (rung.bound == RungBound::failed) continue;
    const double t = *rung.pipelined.ms_per_frame;
    std::optional<double> need_ms;
    if (lone.bw_in)
      need_ms = r.duplex == Duplex::full ? std::max(in_ms(rung, lone), out_ms(rung, lone))
                                         : in_ms(rung, lone) + out_ms(rung, lone);
    else if (r.lone_fit.bandwidth_bytes_per_s)
      need_ms = (rung.bytes_in + rung.bytes_out) / *r.lone_fit.bandwidth_bytes_per_s * 1e3;
    if (rung.compute_ms && *rung.compute_ms >= s.compute_bound_share * t)
      rung.bound = RungBound::compute;
    else if (need_ms ? t > (1 + s.latency_bound_margin) * *need_ms
                     : t * depth <= (1 + s.latency_bound_margin) * *rung.lone_ms.median)
      rung.bound = RungBound::latency;
  }
}

// The in-heavy rungs' in + out bandwidth: the pipelined fit over the link-
// bound ones, else the lone-frame fit.
void fit_in_plus_out(LadderResult& r, uint32_t depth) {
  std::vector<double> x, y;
  for (auto& rung : r.rungs) {
    if (rung.bound != RungBound::link || rung.shape != RungShape::in_heavy) continue;
    rung.in_bandwidth_fit = true;
    x.push_back(rung.bytes_in + rung.bytes_out);
    y.push_back(*rung.pipelined.ms_per_frame);
  }
  r.pipelined_fit = fit_link(x, y);
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
}

// Each direction's bandwidth: the pipelined fit for the duplex where it has
// the rungs, else the lone frames'.
void fit_each_direction(LadderResult& r, const DirectionFit& lone) {
  if (!lone.bw_in) return;
  std::optional<double> bw_in, bw_out;
  auto use = [&](std::vector<LadderRung*>& rungs) {
    for (auto* rung : rungs) rung->in_direction_fit = true;
  };
  if (r.duplex == Duplex::half) {
    std::vector<double> in, out, ms;
    std::vector<LadderRung*> fitted;
    bool shapes[2] = {false, false};
    for (auto& rung : r.rungs) {
      if (rung.bound != RungBound::link) continue;
      in.push_back(rung.bytes_in);
      out.push_back(rung.bytes_out);
      ms.push_back(*rung.pipelined.ms_per_frame);
      fitted.push_back(&rung);
      shapes[rung.shape == RungShape::out_heavy] = true;
    }
    const DirectionFit pipelined =
        shapes[0] && shapes[1] ? fit_directions(in, out, ms) : DirectionFit{};
    if (pipelined.bw_in && pipelined.bw_out) {
      bw_in = pipelined.bw_in;
      bw_out = pipelined.bw_out;
      use(fitted);
    }
  } else if (r.duplex == Duplex::full) {
    // Each link-bound rung measures its busier direction alone.
    std::vector<double> x[2], ms[2];
    std::vector<LadderRung*> fitted[2];
    for (auto& rung : r.rungs) {
      if (rung.bound != RungBound::link) continue;
      const int dir = out_ms(rung, lone) > in_ms(rung, lone) ? 1 : 0;
      x[dir].push_back(dir ? rung.bytes_out : rung.bytes_in);
      ms[dir].push_back(*rung.pipelined.ms_per_frame);
      fitted[dir].push_back(&rung);
    }
    for (int dir : {0, 1}) {
      const auto bw = fit_link(x[dir], ms[dir]).bandwidth_bytes_per_s;
      if (!bw) continue;
      (dir ? bw_out : bw_in) = bw;
      use(fitted[dir]);
    }
  }
  r.bw_in_bytes_per_s = bw_in ? bw_in : lone.bw_in;
  r.bw_in_from = bw_in ? DirectionSource::pipelined : DirectionSource::lone_frames;
  r.bw_out_bytes_per_s = bw_out ? bw_out : lone.bw_out;
  r.bw_out_from = bw_out ? DirectionSource::pipelined : DirectionSource::lone_frames;
}

DirectionFit fit_rungs(LadderResult& r, uint32_t depth, const LadderSettings& s) {
  const DirectionFit lone = fit_lone(r);
  settle_duplex(r, lone);
  classify_rungs(r, lone, depth, s);
  fit_in_plus_out(r, depth);
  // Without direction fits the duplex is inferred from the in-heavy fits,
  // which needed the classification first.
  if (!lone.bw_in && r.duplex == Duplex::unknown) settle_duplex(r, lone);
  fit_each_direction(r, lone);
  r.round_trip_ms = lone.fixed_ms ? lone.fixed_ms : r.lone_fit.fixed_ms;
  r.rig_round_trip_ms = link_floor_ms(r.device);
  // A served device's round trip holds rig's own on the network to the
  // server (the protocol ping, measured at open): the device's link has
  // what is left.
  if (r.round_trip_ms)
    r.per_transfer_ms = r.rig_round_trip_ms
                            ? std::max(0.0, *r.round_trip_ms - *r.rig_round_trip_ms) / 2
                            : *r.round_trip_ms / 2;
  return lone;
}

void find_plateau_and_spread(LadderResult& r, const LadderSettings& s) {
  // The in-heavy rungs come first (run_ladder sorts them so): the plateau's
  // indices are theirs.
  std::vector<std::optional<double>> mbs;
  for (const auto& rung : r.rungs)
    if (rung.shape == RungShape::in_heavy) mbs.push_back(rung.mb_per_s);
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
void add_notes(LadderResult& r, const DirectionFit& lone, uint32_t depth, const LadderSettings& s) {
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
  else if (r.plateau.last + 1 <
           static_cast<size_t>(std::count_if(r.rungs.begin(), r.rungs.end(), [](const auto& g) {
             return g.shape == RungShape::in_heavy;
           })))
    r.notes.push_back("MB/s leaves the plateau above " + r.rungs[r.plateau.last].size);
  if (!lone.bw_in)
    r.notes.push_back(std::string("each direction's bandwidth is not identified: ") +
                      (s.out_heavy
                           ? "fewer than three rungs completed, or the lone frames do not fit "
                             "in / bw_in + out / bw_out"
                           : "only in-heavy rungs were measured") +
                      "; the in + out bandwidth is the in-heavy frames' over one channel");
  else if (r.bw_in_from == DirectionSource::lone_frames ||
           r.bw_out_from == DirectionSource::lone_frames)
    r.notes.push_back(
        "bandwidth of " +
        std::string(r.bw_in_from == DirectionSource::lone_frames
                        ? (r.bw_out_from == DirectionSource::lone_frames ? "both directions"
                                                                         : "the input direction")
                        : "the output direction") +
        " from lone frames: too few link-bound rungs pipelined for it" +
        (r.duplex == Duplex::full ? " (on a full-duplex link a rung measures only its busier "
                                    "direction)"
                                  : "") +
        "; raise --depth or add larger sizes");
  // Below a microsecond a negative intercept is the fit's rounding of zero.
  if (r.round_trip_ms && *r.round_trip_ms < -1e-3)
    r.notes.push_back(
        "the lone-frame fit's intercept is negative: the fixed latency is below "
        "what these sizes resolve; add smaller sizes");
  const std::optional<double> overlap = overlap_of(r, lone);
  if (overlap && *overlap > 1.1 && !(r.duplex_from_device && r.duplex == Duplex::full))
    r.notes.push_back(
        "pipelined frames move up to " + format_fixed(*overlap, 2) +
        "x the lone-frame bandwidth: " +
        (r.duplex_from_device
             ? std::string("the device reports a half-duplex link, so it overlaps its transfers")
             : std::string("the link overlaps the two directions (full duplex, inferred: the "
                           "device does not say) or the device overlaps its transfers")));
  if (const auto loss = overlap_of(r, DirectionFit{}); loss && *loss < 0.9)
    r.notes.push_back("pipelining loses bandwidth: " + format_fixed((1 - *loss) * 100, 1) +
                      "% below lone frames (contention on the link or the host)");
  for (const auto& rung : r.rungs) {
    const auto& rate = rung.pipelined.rate.median;
    const auto& little = rung.pipelined.little_rate.median;
    if (rate && little && *little > *rate * 1.02)
      r.notes.push_back(rung.label() + ": depth / mean latency gives " + format_fixed(*little, 2) +
                        " frames/s against " + format_fixed(*rate, 2) +
                        " counted (used): requests were not in flight all the time (the rig's "
                        "own work between a completion and the next submit)");
  }
  for (const auto& rung : r.rungs)
    if (rung.bound != RungBound::failed &&
        std::any_of(rung.pipelined.stability.begin(), rung.pipelined.stability.end(),
                    [](const auto& j) { return j.state == Stability::unstable; }))
      r.notes.push_back(rung.label() +
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
  for (const auto& size : s.sizes)
    for (RungShape shape : {RungShape::in_heavy, RungShape::out_heavy}) {
      if (shape == RungShape::out_heavy && !s.out_heavy) continue;
      auto rung = measure_rung(device, size, shape, depth, watched);
      if (!rung) return tl::unexpected(rung.error());
      r.rungs.push_back(std::move(*rung));
    }
  r.monitor = watch.monitor().finish();
  r.monitor.energy.reason = "unavailable: rig ladder states no energy figure (rig bench does)";
  std::stable_sort(r.rungs.begin(), r.rungs.end(), [](const LadderRung& a, const LadderRung& b) {
    if (a.shape != b.shape) return a.shape == RungShape::in_heavy;
    return a.bytes_in + a.bytes_out < b.bytes_in + b.bytes_out;
  });
  const DirectionFit lone = fit_rungs(r, depth, s);
  find_plateau_and_spread(r, s);
  add_notes(r, lone, depth, s);
  drop_poor_fits(r);
  r.verdict = judge(r);
  return r;
}

// A poor fit's line does not describe the times: a device whose time per
// frame is not bytes over a link, or a link the fit's model does not hold.
namespace {

constexpr double kPoorFitResidual = kLadderPoorFitResidual;

bool poor_fit(const std::optional<double>& max_relative_residual) {
  return max_relative_residual && *max_relative_residual > kPoorFitResidual;
}

}  // namespace

// Bandwidths from a poor fit are dropped, with a note saying so: no figure
// and no --link spec is given from them.
void drop_poor_fits(LadderResult& r) {
  const std::string limit = format_fixed(kPoorFitResidual * 100, 0) + "%";
  const LinkFit& in_plus_out = r.bandwidth_from_lone_frames ? r.lone_fit : r.pipelined_fit;
  if (r.bandwidth_bytes_per_s && poor_fit(in_plus_out.max_relative_residual)) {
    r.bandwidth_bytes_per_s.reset();
    r.notes.push_back("poor fit: the in-heavy frames' " +
                      std::string(r.bandwidth_from_lone_frames ? "lone-frame" : "pipelined") +
                      " times stray from fixed + bytes / bandwidth by up to " +
                      format_fixed(*in_plus_out.max_relative_residual * 100, 1) + "% (> " + limit +
                      "): no in + out bandwidth is given; the time per frame is not set by the "
                      "bytes crossing a link");
  }
  if (r.bw_in_bytes_per_s && poor_fit(r.direction_fit_max_relative_residual)) {
    r.bw_in_bytes_per_s.reset();
    r.bw_out_bytes_per_s.reset();
    r.notes.push_back(
        "poor fit: the lone frames stray from round trip + in / bw_in + out / "
        "bw_out by up to " +
        format_fixed(*r.direction_fit_max_relative_residual * 100, 1) + "% (> " + limit +
        "): no bandwidth per direction and no --link spec is given");
  }
}

std::optional<LinkProfile> measured_link(const LadderResult& r) {
  if (!r.bw_in_bytes_per_s || !r.bw_out_bytes_per_s) return std::nullopt;
  LinkProfile link;
  link.name = "measured";
  link.bw_in = *r.bw_in_bytes_per_s;
  link.bw_out = *r.bw_out_bytes_per_s;
  if (r.per_transfer_ms && *r.per_transfer_ms > 0)
    link.latency = Nanos(static_cast<int64_t>(std::llround(*r.per_transfer_ms * 1e6)));
  link.queue_depth = std::max<uint32_t>(1, r.device.queue_depth);
  link.full_duplex = r.duplex == Duplex::full;
  link.source = "rig ladder on " + r.device.spec;
  return link;
}

// ---------------------------------------------------------------------------
// The verdict: the points' rules, each rung's consistency, the confounds.

namespace {

// A ladder's rungs, each a model of its own size: every rung's lone frames
// hold its device compute and, with declared costs, the declared lone frame
// for the rung's bytes.
RuleOutcome rungs_consistent(const DeviceInfo& device, const std::vector<LadderRung>& rungs) {
  RuleOutcome o =
      outcome("figures_consistent", Severity::invalidates,
              "each rung: lone frame >= device compute" +
                  std::string(device.declared_costs ? " and >= the declared lone frame" : ""));
  for (const auto& rung : rungs) {
    const Summary& all = rung.lone_ms;
    if (all.median && rung.compute_ms &&
        *all.median < *rung.compute_ms * (1 - kDeclaredCapRounding))
      finding(o, rung.label() + ": lone frame p50 " + format_ms(*all.median) +
                     " is shorter than its device compute p50 " + format_ms(*rung.compute_ms) +
                     " (lone frame >= device compute)");
    if (const auto& c = device.declared_costs; c && all.min && c->bw_in > 0 && c->bw_out > 0) {
      const double floor_ms =
          (rung.bytes_in / c->bw_in + to_seconds(c->latency) + to_seconds(c->compute) +
           rung.bytes_out / c->bw_out + to_seconds(c->latency)) *
          1e3;
      if (*all.min < floor_ms * (1 - kDeclaredCapRounding))
        finding(o, rung.label() + ": fastest lone frame " + format_ms(*all.min) +
                       " is shorter than the " + format_ms(floor_ms) +
                       " the device's declared costs allow (lone frame >= in + latency + compute "
                       "+ out + latency)");
    }
  }
  return o;
}

}  // namespace

Verdict judge(const LadderResult& r) {
  NamedPoints points;
  uint64_t lone_errors = 0;
  std::optional<Error> lone_first;
  for (const auto& rung : r.rungs) {
    points.emplace_back(rung.label(), &rung.pipelined);
    lone_errors += rung.lone_errors;
    if (!lone_first && rung.lone_first_error) lone_first = rung.lone_first_error;
  }
  Verdict v;
  for (const auto& rung : r.rungs) v.saw(rung.lone_first_error);
  for (const auto& [name, p] : points) v.saw(p->first_error);
  v.add(depth_within_queue(r.depth_note));
  v.add(points_without_errors(points));
  v.add(no_errors(lone_errors, lone_first, "in lone frames", "no_lone_frame_errors"));
  v.add(points_stable(points));
  v.add(points_stability_resolved(points, r.effective.point.stability_tolerance));
  v.add(points_within_declared_cap(points, cap_rounding(r.virtual_clock)));
  v.add(rungs_consistent(r.device, r.rungs));
  add_confounds(v, r.environment, r.device, r.virtual_clock, kVirtualClockNote,
                r.effective.confounds.strict);
  add_confound_rules(v, confound_inputs(r));
  return v;
}

}  // namespace rig

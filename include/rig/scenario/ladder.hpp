// rig ladder: the link, characterized with transport models (negligible
// compute) at each frame size: each direction's bandwidth, the fixed latency
// per transfer, the duplex, and the plateau.
// Drives any Device through its interface from the calling thread only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rig/device.hpp"
#include "rig/environment.hpp"
#include "rig/link_profile.hpp"
#include "rig/model.hpp"
#include "rig/monitor/monitor.hpp"
#include "rig/scenario/confounds.hpp"
#include "rig/scenario/point.hpp"
#include "rig/scenario/settings.hpp"
#include "rig/scenario/verdict.hpp"

namespace rig {

struct LadderSettings {
  std::vector<std::string> sizes = {"512p", "720p", "1080p", "4k"};
  uint32_t depth = 4;  // pipelined depth; clamped to the device's queue depth
  PointSettings point;
  uint64_t latency_samples = 20;    // lone frames per size
  double plateau_tolerance = 0.10;  // MB/s agreement within the plateau
  // A rung enters the bandwidth fit only when the pipeline hides the fixed
  // latency: its pipelined time per frame is within this share above the
  // time its bytes take to cross in a lone frame (bytes / the lone-frame
  // fit's bandwidth). Above it the rung is latency-bound: the depth is too
  // shallow, or the requests travel in clumps that leave the link idle while
  // they all wait out the latency together ...
  double latency_bound_margin = 0.03;
  // ... and it stays out when the device-reported compute time is at least
  // this share of the pipelined time per frame (it measures compute).
  double compute_bound_share = 0.8;
  // Also measure every size with an out-heavy transport model (output 4x the
  // input, on the frame halved each side) beside the in-heavy one (output
  // 1/4): two byte ratios tell the two directions apart. Without them each direction's bandwidth is
  // not identified, and bw_in / bw_out stay nullopt.
  bool out_heavy = true;
  MonitorSettings monitor;     // sampled beside every rung (--no-monitor)
  ConfoundSettings confounds;  // the confound rules' thresholds, --strict-confounds
};

Result<void> validate(const LadderSettings& settings);

enum class RungBound { link, latency, compute, failed };
std::string_view to_string(RungBound bound);

// The transport model's byte ratio: in-heavy (output 1/4 of the input, the
// seed note's) or out-heavy (output 4x the input, on the frame halved each
// side: the in-heavy rung's bytes mirrored).
enum class RungShape { in_heavy, out_heavy };
std::string_view to_string(RungShape shape);
double output_fraction(RungShape shape);  // 0.25, 4

struct LadderRung {
  std::string size;  // as given ("512p", "640x480")
  RungShape shape = RungShape::in_heavy;
  FrameSize frame;                     // the model's input frame (halved when out-heavy)
  double bytes_in = 0, bytes_out = 0;  // per frame, the model's declared sizes
  PointResult pipelined;
  std::optional<double> mb_per_s;    // (in + out) / pipelined time per frame, 10^6 B/s
  Summary lone_ms;                   // lone frames (depth 1), client-observed
  std::optional<double> compute_ms;  // device-reported compute, median; nullopt when unknown
  std::optional<double> link_ms;     // lone median - compute (or the lone median)
  uint64_t lone_errors = 0;
  std::optional<Error> lone_first_error;
  RungBound bound = RungBound::failed;
  bool in_bandwidth_fit = false;  // in pipelined_fit (in-heavy rungs)
  bool in_direction_fit = false;  // in the pipelined per-direction fit
  // "512p", or "512p out-heavy": unique within a ladder.
  std::string label() const;
};

// How each direction's bandwidth was identified.
enum class DirectionSource { none, pipelined, lone_frames };
std::string_view to_string(DirectionSource source);

struct LadderResult {
  LadderSettings requested;
  LadderSettings effective;  // depth clamped to the device
  Environment environment;
  DeviceInfo device;
  bool virtual_clock = false;
  // In-heavy rungs sorted by bytes per frame, then the out-heavy ones.
  std::vector<LadderRung> rungs;
  Plateau plateau;  // over the in-heavy rungs
  // Lone-frame link time (client-observed minus device-reported compute) vs
  // (in + out) bytes over every in-heavy rung: the seed note's view of the
  // link as one channel.
  LinkFit lone_fit;
  // Pipelined time per frame vs (in + out) bytes over the link-bound
  // in-heavy rungs: its slope is the in-heavy frames' MB/s; its intercept
  // the per-frame cost pipelining does not hide.
  LinkFit pipelined_fit;
  // Of in + out bytes of in-heavy frames: the pipelined fit's, else the lone
  // fit's. On an asymmetric link it is neither direction's bandwidth.
  std::optional<double> bandwidth_bytes_per_s;
  bool bandwidth_from_lone_frames = false;
  // Each direction's bandwidth, bytes per second (nullopt when not
  // identified: no out-heavy rungs, or too few completed). Lone frames cross
  // one way then the other, so over every completed rung of both shapes
  //   lone link time = round trip + in / bw_in + out / bw_out
  // (least squares in three parameters). Pipelined and link-bound, a half-
  // duplex channel carries in + out back to back:
  //   time per frame = c + in / bw_in + out / bw_out
  // and a full-duplex link is as slow as its busier direction:
  //   time per frame = c + in / bw_in   (rungs whose input crossing is longer)
  //                  = c + out / bw_out (the others).
  // Each direction comes from the pipelined fit where it has enough link-
  // bound rungs (three of both shapes for half duplex, two for a full-duplex
  // direction), else from the lone-frame fit.
  std::optional<double> bw_in_bytes_per_s, bw_out_bytes_per_s;
  DirectionSource bw_in_from = DirectionSource::none, bw_out_from = DirectionSource::none;
  // The three-parameter lone-frame fit's residuals, relative (nullopt with no fit).
  std::optional<double> direction_fit_max_relative_residual;
  // Half duplex: in and out share one channel. Full duplex: one each, so
  // pipelined in and out overlap. From the device's "duplex" property
  // ("half", "full") where it has one, else inferred: full when some rung's
  // pipelined time per frame is below 1 / 1.1 of its lone-frame crossings
  // (in / bw_in + out / bw_out; a device that overlaps its transfers looks
  // the same; without direction fits the in-heavy fits' bandwidths are
  // compared instead); unknown without pipelined and lone figures.
  Duplex duplex = Duplex::unknown;
  bool duplex_from_device = false;
  // The fixed latency of a frame's two crossings: the intercept of the
  // three-parameter lone fit, else of lone_fit.
  std::optional<double> round_trip_ms;
  // One crossing of the device's link: (round trip - rig_round_trip_ms, at
  // least 0) / 2; round trip / 2 where rig's own is not measured.
  std::optional<double> per_transfer_ms;
  // Of round_trip_ms, the floor rig's protocol pays on this link with no
  // device (DeviceInfo::link_floor); remote devices only.
  std::optional<double> rig_round_trip_ms;
  std::optional<double> worst_spread;  // largest repeat spread of any rung
  std::optional<size_t> worst_spread_rung;
  std::vector<std::string> notes;         // what to change, and what the figures do not show
  std::optional<std::string> depth_note;  // the depth clamp, when it happened (also a note)
  MonitorRecord monitor;                  // the monitor's series over every rung
  Verdict verdict;                        // judge(): errors, stability, the clock, confounds
};

// The verdict's rules: the depth, errors (pipelined, then lone frames as
// no_lone_frame_errors), the points' stability and declared cap, each rung's
// consistency, the confounds. Pure.
Verdict judge(const LadderResult& result);

// Builds each transport model (u8, 4 channels, output 1/4 of the input, and
// with out_heavy output 4x the input), cold-starts it, times lone frames, then measures pipelined
// repeats. Fails when a size is malformed or a model does not load; a rung whose inferences fail is
// kept and marked failed.
Result<LadderResult> run_ladder(Device& device, const LadderSettings& settings);

// The link the ladder identified, as a profile for rig predict, fit and
// place: bw_in, bw_out, per-transfer latency (0 when negative or not
// fitted), duplex (half when unknown), the device's queue depth; name
// "measured". nullopt when a direction's bandwidth was not identified.
std::optional<LinkProfile> measured_link(const LadderResult& result);

// A fit whose points stray from its line by more than this share (the
// largest |relative residual|) is poor: it states no bandwidth.
inline constexpr double kLadderPoorFitResidual = 0.10;

// Drops the bandwidths of a poor fit, each with a note saying so: then no
// figure and no --link spec is given from it. run_ladder calls it once the
// fits are made.
void drop_poor_fits(LadderResult& result);

}  // namespace rig

// rig ladder: the link, characterized with transport models (negligible
// compute) at each frame size: bandwidth, fixed latency, duplex, plateau.
// Drives any Device through its interface from the calling thread only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rig/device.hpp"
#include "rig/environment.hpp"
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
  MonitorSettings monitor;     // sampled beside every rung (--no-monitor)
  ConfoundSettings confounds;  // the confound rules' thresholds, --strict-confounds
};

Result<void> validate(const LadderSettings& settings);

enum class RungBound { link, latency, compute, failed };
std::string_view to_string(RungBound bound);

struct LadderRung {
  std::string size;  // as given ("512p", "640x480")
  FrameSize frame;
  double bytes_in = 0, bytes_out = 0;  // per frame, the model's declared sizes
  PointResult pipelined;
  std::optional<double> mb_per_s;    // (in + out) / pipelined time per frame, 10^6 B/s
  Summary lone_ms;                   // lone frames (depth 1), client-observed
  std::optional<double> compute_ms;  // device-reported compute, median; nullopt when unknown
  std::optional<double> link_ms;     // lone median - compute (or the lone median)
  uint64_t lone_errors = 0;
  std::optional<Error> lone_first_error;
  RungBound bound = RungBound::failed;
  bool in_bandwidth_fit = false;
};

struct LadderResult {
  LadderSettings requested;
  LadderSettings effective;  // depth clamped to the device
  Environment environment;
  DeviceInfo device;
  bool virtual_clock = false;
  std::vector<LadderRung> rungs;  // sorted by bytes per frame
  Plateau plateau;
  // Lone-frame link time (client-observed minus device-reported compute) vs
  // (in + out) bytes over every rung: its intercept is the round trip.
  LinkFit lone_fit;
  // Pipelined time per frame vs (in + out) bytes over the link-bound rungs:
  // its slope is the bandwidth; its intercept the per-frame cost pipelining
  // does not hide.
  LinkFit pipelined_fit;
  // Of in + out bytes: the pipelined fit's, else the lone fit's.
  std::optional<double> bandwidth_bytes_per_s;
  bool bandwidth_from_lone_frames = false;
  // Half duplex: in and out share one channel, and bandwidth_bytes_per_s is
  // its rate. Full duplex: pipelined, in and out overlap, so in + out bytes
  // move faster than either direction (1.25x for transport frames on a
  // symmetric link). From the device's "duplex" property ("half", "full")
  // where it has one, else inferred: full when the pipelined fit's bandwidth
  // is above 1.1x the lone-frame fit's (a device that overlaps its transfers
  // looks the same); unknown without both fits.
  Duplex duplex = Duplex::unknown;
  bool duplex_from_device = false;
  // One direction's bandwidth. Half duplex: the shared channel's,
  // bandwidth_bytes_per_s. Full duplex: the input direction's, which bounds a
  // pipelined transport frame (it carries 4x the output's bytes): the
  // pipelined time per frame fitted against bytes in, or the lone-frame fit's
  // bandwidth when the bandwidth comes from lone frames (a lone frame's two
  // crossings do not overlap). nullopt while the duplex is unknown.
  std::optional<double> direction_bandwidth_bytes_per_s;
  std::optional<double>
      round_trip_ms;  // lone fit intercept: fixed latency of a frame's two crossings
  std::optional<double> per_transfer_ms;  // round trip / 2: one crossing
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

// Builds each transport model (u8, 4 channels, output 1/4 of the input),
// cold-starts it, times lone frames, then measures pipelined repeats. Fails
// when a size is malformed or a model does not load; a rung whose
// inferences fail is kept and marked failed.
Result<LadderResult> run_ladder(Device& device, const LadderSettings& settings);

}  // namespace rig

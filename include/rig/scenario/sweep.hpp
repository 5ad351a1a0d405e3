// rig sweep: pipelined rate against depth, the knee against the device's
// own queue, and the round trip that pipelining hides. Drives any Device from
// the calling thread only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rig/device.hpp"
#include "rig/engine.hpp"
#include "rig/environment.hpp"
#include "rig/monitor/monitor.hpp"
#include "rig/scenario/confounds.hpp"
#include "rig/scenario/point.hpp"
#include "rig/scenario/settings.hpp"
#include "rig/scenario/verdict.hpp"

namespace rig {

struct SweepSettings {
  uint32_t min_depth = 1, max_depth = 64;  // powers of two in between, clamped to the queue depth
  PointSettings point = {.max_duration_factor = 5};  // rig sweep's default cap: 5 x duration
  double knee_fraction = 0.95;  // knee: the smallest depth reaching this share of the best rate
  bool refine = true;           // bisect between the knee and the depth measured before it
  uint64_t latency_samples = 50;
  MonitorSettings monitor;     // sampled beside every depth (--no-monitor)
  ConfoundSettings confounds;  // the confound rules' thresholds, --strict-confounds
};

Result<void> validate(const SweepSettings& settings);

// Parses "1..64" or "64" (= 1..64).
Result<std::pair<uint32_t, uint32_t>> parse_depth_range(std::string_view text);

// The knee against the device's own queue depth Q (device_queue_depth). "One
// step" is one step of the unrefined sweep (powers of two); "rising at the top"
// means the deepest depth swept still gained more than half of what linear
// scaling from the depth measured before it would give.
enum class KneeVsQueue {
  below,              // the knee is more than one step below Q: the rate flattens before the
                      // queue fills
  at_queue_depth,     // the knee is within one step below Q (or at it) and the rate is flat
                      // there: the depths beyond Q that a connection takes, or the last step
                      // into Q, add no rate
  queue_limited,      // the knee is within one step of Q, the sweep ends at Q (the deepest the
                      // device takes), the rate is still rising there (more than half of
                      // linear scaling) and no resource saturates (LimitedBy): a deeper
                      // queue would raise it
  above_queue_depth,  // the knee is above Q (a remote device's connection takes more than Q):
                      // the requests the server holds cover the link's round trip
  still_rising,       // --depth stopped the sweep below Q while the rate was still rising
  unknown,            // no knee, or fewer than two depths measured
};
std::string_view to_string(KneeVsQueue k);

// The resource that limits the best rate, named from what saturates there:
// a resource whose time per frame x the best rate reaches kSaturatedShare of
// its time (compute; the link's shared channel on half duplex, each
// direction on full) limits it, and no queue would raise the rate; the queue
// limits it only when none saturates and the rate was still rising (more
// than half of linear scaling) at the device's queue depth. The times per
// frame are the device's declared costs (the sim) or, without them, the lone
// frames' device-reported compute and transfers.
enum class LimitedBy { compute, link_in, link_out, link_shared, queue, unknown };
std::string_view to_string(LimitedBy l);
// Busy share at which a resource counts as saturated: the rate's counting
// rounding (kDeclaredCapRounding) and the lone frames' own spread fit inside it.
inline constexpr double kSaturatedShare = 0.97;

struct SweepPoint {
  PointResult result;
  bool refined = false;                    // added by the bisection
  std::optional<double> fraction_of_best;  // median rate / best median rate
};

struct SweepResult {
  SweepSettings requested;
  SweepSettings effective;  // depths clamped to the device
  Environment environment;
  DeviceInfo device;
  ModelInfo model;
  bool virtual_clock = false;
  TtfoResult ttfo;
  LatencyResult lone;              // lone frames (depth 1)
  std::vector<SweepPoint> points;  // sorted by depth
  std::vector<uint32_t> skipped;   // requested depths above DeviceInfo::queue_depth
  uint32_t queue_depth = 0;        // the device's own (device_queue_depth): the knee's reference
  std::optional<uint32_t> knee;
  std::optional<uint32_t> best_depth;
  std::optional<double> best_rate;  // frames/s
  KneeVsQueue knee_vs_queue = KneeVsQueue::unknown;
  LimitedBy limited_by = LimitedBy::unknown;
  // The limiting resource's busy share at the best rate (best rate x its
  // time per frame); nullopt for the queue and when none is named.
  std::optional<double> limit_busy_share;
  std::optional<double> limit_ms_per_frame;  // that resource's time per frame
  // Single-shot time: depth-1 time per frame (the lone-frame median when depth
  // 1 was not swept); pipelined: 1000 / best rate. Their difference is the part
  // of a lone frame that pipelining hides: the round trip, plus every stage but
  // the slowest.
  std::optional<double> single_shot_ms, pipelined_ms, round_trip_ms, round_trip_share;
  std::string model_path;  // where the model came from (model_origin)
  std::vector<std::string> notes;
  MonitorRecord monitor;  // the monitor's series over the whole sweep
  Verdict verdict;        // judge(): errors, stability, the clock, confounds
};

// The verdict's rules: errors (the points', then lone frames as
// no_lone_frame_errors), the points' stability and declared cap,
// consistency, the confounds. Pure.
Verdict judge(const SweepResult& result);

Result<SweepResult> run_sweep(Device& device, const ModelSource& model,
                              const SweepSettings& settings);

}  // namespace rig

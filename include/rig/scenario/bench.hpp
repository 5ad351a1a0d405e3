// rig bench: the three quantities apart — time to first output (cold),
// steady-state rate (pipelined, warm) and bytes per inference — plus lone-frame
// latency, the rig's own overhead, and a VALID/INVALID verdict with reasons.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "rig/device.hpp"
#include "rig/engine.hpp"
#include "rig/environment.hpp"
#include "rig/monitor/monitor.hpp"
#include "rig/scenario/confounds.hpp"
#include "rig/scenario/settings.hpp"
#include "rig/scenario/verdict.hpp"

namespace rig {

// An offered-load run (rig bench --rate): frames arrive on a schedule and
// are submitted at their arrival instead of keeping a depth full; it replaces
// the steady-state repeats and runs for the point's duration.
struct OfferedLoad {
  double rate = 0;  // frames/s; 0: closed loop (the steady-state repeats)
  Arrival arrival = Arrival::constant;
  QueueFull on_full = QueueFull::wait;
  Nanos late_threshold{std::chrono::milliseconds(1)};
  bool enabled() const { return rate > 0; }
};

// What the user asked for. Defaults keep the demo near a minute on 2 cores.
struct BenchSettings {
  std::string model;  // where the model came from, for the record (model_origin)
  std::string device = kDefaultDeviceSpec;  // device spec, as given
  uint32_t depth = 0;                       // requests in flight; 0 = the device's queue depth
  // The steady-state repeats: at least 2 s and 100 inferences each, then on
  // until stable and precise (the adaptive stop), up to 20 s.
  PointSettings point = {
      .duration = std::chrono::seconds(2), .min_inferences = 100, .max_duration_factor = 10};
  double repeat_tolerance = 0.10;  // repeats must agree within this (spread)
  // 400 lone frames: enough for p90 and p99 intervals at 95% (p99 needs 368);
  // up to 15 s (the demo CNN takes ~36 ms a frame on a busy 2-core host).
  uint64_t latency_samples = 400;
  Nanos latency_max{std::chrono::seconds(15)};
  double confidence = kDefaultConfidence;  // of every percentile's interval
  OfferedLoad offered;
  size_t reservoir_capacity = 65536;  // latency samples kept, in time order (OrderedSample)
  double overhead_limit = 0.05;       // flag the rig when its bookkeeping exceeds this share
  MonitorSettings monitor;            // sampled beside the run (--no-monitor, --idle)
  ConfoundSettings confounds;         // the confound rules' thresholds, --strict-confounds
};

// Checks ranges (depth >= 1 once resolved, positive durations, ...); the
// message names the setting. Independent of NDEBUG.
Result<void> validate(const BenchSettings& settings);

struct SteadyResult {
  uint32_t depth = 0;
  std::vector<SteadyRepeat> repeats;
  Summary rate;                             // across repeats, inferences per second
  std::optional<double> time_per_frame_ms;  // 1000 / median rate
  bool stable = false;                      // every repeat stable and repeats agree
};

struct BytesResult {
  double payload_in = 0, payload_out = 0;  // per inference
  double link_in = 0, link_out = 0;        // per inference, 0 for in-process devices
  size_t model_in = 0, model_out = 0;      // the model's frame sizes
  std::optional<double> payload_mb_per_s;  // (in + out) x median rate / 1e6
  std::optional<double> link_mb_per_s;
};

struct OverheadResult {
  bool measured = false;  // false on virtual clocks
  double bookkeeping_ns_per_inference = 0;
  double bookkeeping_share = 0;  // of the time per frame
  double wait_fraction = 0;      // share of measured time spent waiting on the device
  bool limiting = false;
  std::string note;
};

struct BenchResult {
  BenchSettings requested;
  BenchSettings effective;  // depth resolved, clamped to the device
  Environment environment;
  DeviceInfo device;
  ModelInfo model;
  TtfoResult ttfo;
  LatencyResult latency;
  SteadyResult steady;                // empty when offered load ran instead
  std::optional<OfferedRun> offered;  // rig bench --rate
  BytesResult bytes;
  OverheadResult overhead;
  // The monitor's series over the whole run (aligned with the windows), its
  // sources, the device's warnings, and energy per inference (record.energy).
  MonitorRecord monitor;
  Verdict verdict;  // judge(BenchResult)
  bool virtual_clock = false;
  // A stop request (the first SIGINT or SIGTERM) ended it early: what was
  // measured is kept, and the verdict says it was cut short.
  bool cut_short = false;
  // Notes of the run itself that the verdict's rules read: the depth clamp.
  std::optional<std::string> depth_note;
};

// The verdict's rules, in the order reported: not_cut_short, the depth, the
// errors, then with --rate the offered run's rules, else each repeat's
// (samples, stability, precision, warm-up, the declared cap) and their
// agreement; the lone frames' samples and percentiles, consistency, the
// confounds. Pure: reads the result only.
Verdict judge(const BenchResult& result);

// Runs the whole benchmark on an opened device. Fails only when nothing can be
// measured (the model does not load or bind); later failures make the result
// INVALID with reasons and keep what was seen.
Result<BenchResult> run_bench(Device& device, const ModelSource& model,
                              const BenchSettings& settings);

}  // namespace rig

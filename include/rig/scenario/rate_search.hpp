// The highest offered rate whose p99 latency (from the scheduled arrival)
// meets a bound while the device keeps up: MLPerf's server-scenario
// question, answered by a bounded search over offered-load runs
// (measure_offered), bisecting the rate on a log scale. find_max_rate is the
// search on a prepared workspace; run_rate_sweep (rig sweep --rate) is the
// whole scenario: cold start, lone frames, the search, the verdict.
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
#include "rig/scenario/settings.hpp"
#include "rig/scenario/verdict.hpp"

namespace rig {

struct RateSearchSettings {
  double min_rate = 10, max_rate = 1000;               // frames/s, 0 < min <= max
  Nanos latency_bound{std::chrono::milliseconds(10)};  // p99 from arrival, at most
  uint32_t max_probes = 10;                            // offered-load runs, at most
  double resolution = 0.02;                            // stop when hi / lo - 1 <= this
  OfferedSettings offered;                             // each probe's run (rate set per probe)
};

struct RateProbe {
  double rate = 0;
  std::optional<double> p99_ms;  // latency from arrival
  bool p99_enough = false;       // its interval exists (PercentileInterval::enough)
  bool keeps_up = false;
  // Keeps up, and the upper ends of the p99's interval and of the late
  // share's are within the bound and kLateShareLimit (an unstated p99
  // interval does not meet: the claim would not hold its confidence).
  bool meets = false;
  OfferedRun run;  // the probe's whole offered-load run
};

// Why the search stopped.
enum class RateSearchEnd {
  max_rate_met,      // the highest rate of the range met the bound: raise it
  min_rate_failed,   // the lowest rate did not: no rate in the range meets it
  resolved,          // best and first failing rate within `resolution`
  probes_exhausted,  // max_probes ran out before the resolution
  probe_failed,      // a probe aborted (device failure, timeout, stuck)
  not_run,           // the settings were out of range
};
std::string_view to_string(RateSearchEnd end);

struct RateSearch {
  std::vector<RateProbe> probes;             // in the order run
  std::optional<double> best_rate;           // the highest rate probed that met the bound
  std::optional<double> first_failing_rate;  // the lowest rate probed that did not
  RateSearchEnd end = RateSearchEnd::not_run;
};

// Probes max_rate, then min_rate, then bisects between the highest rate that
// met the bound and the lowest that did not, until `resolution` or
// `max_probes`; stops at a probe that aborted. The workspace needs
// settings.offered.depth slots.
RateSearch find_max_rate(Device& device, const Workspace& workspace,
                         const RateSearchSettings& settings);

// ---------------------------------------------------------------------------
// rig sweep --rate

struct RateSweepSettings {
  double min_rate = 10, max_rate = 1000;  // frames/s
  Nanos latency_bound{std::chrono::milliseconds(10)};
  uint32_t max_probes = 10;
  double resolution = 0.02;
  Arrival arrival = Arrival::constant;
  QueueFull on_full = QueueFull::wait;
  Nanos late_threshold{std::chrono::milliseconds(1)};
  uint32_t depth = 0;  // request slots; 0 = the device's queue depth
  // Each probe runs for point.duration in point.windows windows, after the
  // shared warm-up window; repeats, tolerances and the adaptive stop do not
  // apply (an offered-load run's length is its schedule).
  PointSettings point;
  uint64_t latency_samples = 50;  // lone frames before the search
  double confidence = kDefaultConfidence;
  MonitorSettings monitor;     // sampled beside the lone frames and every probe (--no-monitor)
  ConfoundSettings confounds;  // the confound rules' thresholds, --strict-confounds
};

// Names the bad setting; independent of NDEBUG.
Result<void> validate(const RateSweepSettings& settings);

// Parses "10/s..1000/s" (each end as parse_frame_rate reads it).
Result<std::pair<double, double>> parse_rate_range(std::string_view text);

struct RateSweepResult {
  RateSweepSettings requested;
  RateSweepSettings effective;  // depth resolved, clamped to the device
  Environment environment;
  DeviceInfo device;
  ModelInfo model;
  bool virtual_clock = false;
  TtfoResult ttfo;
  LatencyResult lone;  // lone frames (depth 1), the floor of every probe's latency
  RateSearch search;
  std::optional<std::string> depth_note;  // the depth clamp
  std::string model_path;                 // where the model came from (model_origin)
  std::vector<std::string> notes;
  MonitorRecord monitor;  // the monitor's series over the whole search
  Verdict verdict;        // judge(RateSweepResult): errors, the search, the clock, confounds
};

// The verdict's rules: the depth, lone-frame errors, every probe ran, the
// search bracketed and resolved the best rate, each probe's p99 had the
// samples its interval needs and the bound lies outside the deciding
// probes' intervals, then the confounds. Pure.
Verdict judge(const RateSweepResult& result);

// Fails only when nothing can be measured (the model does not load or bind);
// a probe that fails makes the result INVALID and ends the search.
Result<RateSweepResult> run_rate_sweep(Device& device, const ModelSource& model,
                                       const RateSweepSettings& settings);

}  // namespace rig

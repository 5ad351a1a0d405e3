// The confounds: what may have spoiled a measurement, each a named verdict
// rule (src/scenario/confound_rules.cpp) over the monitor's series, the device's
// warnings, the cold start and the environment. They warn; with
// --strict-confounds each raised one invalidates. Thresholds are settings;
// docs/methodology.md (section 9) gives the anchors they were compared with.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "rig/device.hpp"
#include "rig/engine.hpp"
#include "rig/environment.hpp"
#include "rig/monitor/monitor.hpp"
#include "rig/scenario/verdict.hpp"

namespace rig {

struct ConfoundSettings {
  bool strict = false;  // --strict-confounds: a raised confound invalidates
  // host_contention: mean share of the host's CPU time other processes used
  // during the measured part, and the mean PSI "some" stall share (cpu, io).
  double others_cpu_max = 0.10;
  double psi_some_max_pct = 10.0;
  double steal_max = 0.02;  // steal_time: mean share of CPU time stolen
  // thermal_drift: the rate's linear trend across a run's windows (relative
  // change first to last window) beyond this and beyond twice the windows'
  // scatter around the trend; or a temperature rising more than this.
  double drift_max = 0.05;
  double temp_rise_max_c = 5.0;
  // clock_drop: a frequency falling below this share of its first value in
  // the run (nvbench's throttle threshold: 75% of the base clock), or a
  // throttle counter increasing.
  double clock_drop_ratio = 0.75;
  // cold_caches: the first inference costs more than this many steady
  // frames and the first measured window is still slower than the run's
  // median by more than drift_max (the warm-up ended too early).
  double cold_first_ratio = 10.0;
  // shared_link: other traffic on the link's interface, as a share of rig's
  // own link bytes during the measured part.
  double shared_link_max = 0.05;
};

// Names the bad setting; independent of NDEBUG.
Result<void> validate(const ConfoundSettings& settings);

// What the confound rules read from a result.
struct ConfoundInputs {
  const MonitorRecord* monitor = nullptr;
  const ConfoundSettings* settings = nullptr;
  const Environment* environment = nullptr;
  const DeviceInfo* device = nullptr;
  bool virtual_clock = false;
  std::vector<const std::vector<WindowFigure>*> runs;  // each measured run's windows
  // cold_caches: the first inference, the steady time per frame, and the
  // warm-up frames of the first run (evidence).
  std::optional<Nanos> first_inference;
  std::optional<double> time_per_frame_ms;
  std::optional<uint64_t> warmup_inferences;
};

// The confound rules over a result's monitor record, cold start and
// environment, in the order reported: host_contention, steal_time,
// thermal_drift, clock_drop, power_limited, device_warnings, cold_caches,
// shared_link, device_shared (a device behind rig serve that other
// connections used during the run; its model reloads invalidate). Each
// warns, or invalidates when inputs.settings->strict. A null monitor or
// settings reads as an empty record and the default thresholds.
void add_confound_rules(Verdict& verdict, const ConfoundInputs& inputs);

// A run's rate trend: the least-squares slope of window rate against the
// window's middle, as the relative change from the first window to the last,
// and the windows' relative scatter around it (residual stddev / mean).
struct RateTrend {
  double change = 0;
  double scatter = 0;
  size_t windows = 0;
};
std::optional<RateTrend> rate_trend(const std::vector<WindowFigure>& windows);

}  // namespace rig

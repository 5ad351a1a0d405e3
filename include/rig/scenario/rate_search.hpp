// The highest offered rate whose p99 latency (from the scheduled arrival)
// meets a bound while the device keeps up: MLPerf's server-scenario
// question, answered by a bounded search over offered-load runs
// (measure_offered), bisecting the rate on a log scale.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "rig/device.hpp"
#include "rig/engine.hpp"

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
  bool meets = false;  // keeps up and p99 <= bound
};

struct RateSearch {
  std::vector<RateProbe> probes;             // in the order run
  std::optional<double> best_rate;           // the highest rate probed that met the bound
  std::optional<double> first_failing_rate;  // the lowest rate probed that did not
};

// Probes max_rate, then min_rate, then bisects between the highest rate that
// met the bound and the lowest that did not, until `resolution` or
// `max_probes`. The workspace needs settings.offered.depth slots.
RateSearch find_max_rate(Device& device, const Workspace& workspace,
                         const RateSearchSettings& settings);

}  // namespace rig

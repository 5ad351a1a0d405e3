// Building blocks of the characterization scenarios: a pipelined
// measurement point (repeats of measure_steady at one depth), the link fit and
// the plateau. docs/methodology.md explains each figure.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "rig/device.hpp"
#include "rig/engine.hpp"
#include "rig/scenario/settings.hpp"
#include "rig/scenario/stability.hpp"
#include "rig/stats.hpp"

namespace rig {

struct PointResult {
  uint32_t depth = 0;
  // The rate of each repeat: the engine's SteadyRepeat::rate, completions
  // counted over a span of whole pipeline cycles (docs/methodology.md, section
  // 3) -- the figure rig bench reports and rig predict reads. A repeat that
  // counted no span (aborted in the warm-up) has none.
  std::vector<double> repeat_rates;  // frames/s, per repeat that has one
  Summary rate;                      // across repeats, frames/s
  // Diagnostic only: Little's law, depth / mean pipelined latency, per repeat.
  // It equals the rate while `depth` requests are always in flight, and reads
  // above it by the share of each cycle a slot spends between its completion
  // and its next submit (the rig's own bookkeeping, or a submit that waited).
  Summary little_rate;
  std::optional<double> ms_per_frame;  // 1000 / median rate
  bool stable = false;                 // every repeat stable
  // Each counted repeat's stability judged on enough data (stability.hpp):
  // the verdict tells a repeat too short to judge from an unstable one. Not
  // in the document: the verdict's points_stable and
  // points_stability_resolved rules state it.
  std::vector<StabilityJudgement> stability;
  // The cap the device's declared costs imply at this depth (frames/s;
  // SteadyRepeat::declared_cap); nullopt when it declares none.
  std::optional<double> declared_cap;
  uint64_t errors = 0;
  std::optional<Error> first_error;
  bool aborted = false;
};

// The workspace needs at least `depth` slots.
PointResult measure_point(Device& device, const Workspace& workspace, uint32_t depth,
                          const PointSettings& settings);

// Least squares y = fixed + x / bandwidth over (bytes, milliseconds).
struct LinkFit {
  size_t points = 0;
  std::optional<double> fixed_ms;               // intercept
  std::optional<double> bandwidth_bytes_per_s;  // 1 / slope; nullopt unless slope > 0
  std::vector<double> residuals_ms;             // observed - fitted, per point
  std::vector<double> relative_residuals;       // residual / observed, per point
  std::optional<double> rms_relative_residual;
  std::optional<double> max_relative_residual;  // largest |relative residual|
  std::optional<double> r_squared;              // nullopt when the times do not vary
};

// Needs two distinct x values; fewer leave every figure nullopt.
LinkFit fit_link(std::span<const double> bytes, std::span<const double> ms);

// The longest run of consecutive rungs (by size) whose MB/s agree within
// `tolerance` ((max - min) / median); ties go to the larger frames. Found
// only with at least two rungs.
struct Plateau {
  bool found = false;
  size_t first = 0, last = 0;  // rung indices, inclusive
  std::optional<double> median_mb_per_s, min_mb_per_s, max_mb_per_s;
  double tolerance = 0;
};

Plateau find_plateau(std::span<const std::optional<double>> mb_per_s, double tolerance);

}  // namespace rig

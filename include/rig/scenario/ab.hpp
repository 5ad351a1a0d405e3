// rig ab: two configurations measured in interleaved pairs (each pair's
// order drawn from a recorded seed) with a stated test's verdict. Each side is a parsed device spec
// (knobs applied) and a depth; the devices are opened through the caller's DeviceOpener, so the
// scenario links no device.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "rig/device.hpp"
#include "rig/device_spec.hpp"
#include "rig/environment.hpp"
#include "rig/monitor/monitor.hpp"
#include "rig/scenario/confounds.hpp"
#include "rig/scenario/point.hpp"
#include "rig/scenario/settings.hpp"
#include "rig/scenario/verdict.hpp"
#include "rig/stats.hpp"

namespace rig {

// One side: a device spec (knobs applied) and a pipeline depth (0: as rig
// bench, DeviceInfo::queue_depth, the most requests the device takes in
// flight; for a remote device that is the connection's, which keeps the
// hosted device's queue full across the link's round trip).
struct AbConfig {
  DeviceSpec spec;
  uint32_t depth = 0;
  std::vector<std::string> knobs;  // as given, KNOB=VALUE
};

// Applies KNOB=VALUE settings to a base configuration: `depth` sets the
// pipeline depth; any other knob sets that device spec parameter through
// DeviceSpec::set (threads for cpu, link for sim, compute, bw, ...). Device
// spec knobs need a kind:key=value spec (not tcp:// or unix:). Errors name the
// knob.
Result<AbConfig> apply_knobs(const AbConfig& base, std::span<const std::string> knobs);

using DeviceOpener = std::function<Result<std::unique_ptr<Device>>(const DeviceSpec& spec)>;

// The spec a side's run of pair `pair` (from 0) opens when the sides differ
// and each run reopens its device: a sim reopened with one seed would replay
// one jitter sequence, so every run would be the same draw and a side's
// spread would collapse to a point. Pair 0 opens the spec as given; pair k
// a sim with seed = splitmix64(seed ^ splitmix64(k)) of the spec's seed
// (default 1). Other kinds come back unchanged.
DeviceSpec ab_run_spec(const DeviceSpec& spec, uint32_t pair);

// The A/B test: the rates of A's runs against B's by the Mann-Whitney U
// test (two-sided, alpha), and the effect, B's rate over A's, as the
// Hodges-Lehmann ratio (the median of every b_j / a_i) with its
// distribution-free interval at 1 - alpha. google/benchmark's U-test
// guidance: at least 9 repetitions of each side.
inline constexpr uint32_t kAbRecommendedPairs = 9;

struct AbSettings {
  uint32_t pairs = kAbRecommendedPairs;  // >= 1
  PointSettings point;                   // one repeat per run; `repeats` is ignored
  double alpha = 0.05;                   // the test's significance level
  // "same" when the effect's interval lies within 1 / (1 + same_within) ..
  // 1 + same_within of 1.
  double same_within = 0.03;
  uint64_t order_seed = 1;     // the generator of each pair's order (A B or B A)
  MonitorSettings monitor;     // sampled beside every run (--no-monitor)
  ConfoundSettings confounds;  // the confound rules' thresholds, --strict-confounds
};

Result<void> validate(const AbSettings& settings);

// The fewest pairs for which the U test can reach `alpha` at all (4 at 0.05).
uint32_t ab_min_pairs(double alpha);

// same: no significant difference and the effect's interval within
// same_within; a_faster / b_faster: significant (p < alpha) with an interval
// that excludes 1; ambiguous: neither (more pairs may resolve it).
enum class AbVerdict { same, a_faster, b_faster, ambiguous, failed };
std::string_view to_string(AbVerdict v);

struct AbTest {
  std::string name = "mann_whitney_u";
  double u = 0;  // pairs of runs with B's rate above A's (ties one half)
  double p_value = 1;
  bool exact = false;
  double alpha = 0.05;
  // B / A: the Hodges-Lehmann ratio and its interval at 1 - alpha (nullopt:
  // too few pairs for an interval at that confidence).
  std::optional<double> ratio, ratio_lower, ratio_upper;
  double confidence = 0.95;
};

struct AbResult {
  AbConfig a, b;
  AbSettings settings;
  Environment environment;
  DeviceInfo device_a, device_b;
  ModelInfo model;
  bool virtual_clock = false;
  // Both sides on one device (same spec): loaded once, runs continue on it.
  // Otherwise each run opens its side's device afresh, because device settings
  // can be process-wide (OpenCV's thread count) and hardware may take one
  // handle at a time.
  bool shared_device = false;
  uint32_t depth_a = 0, depth_b = 0;     // effective
  std::vector<std::string> order;        // per pair, "AB" or "BA", from order_seed
  std::vector<double> rates_a, rates_b;  // frames/s, per pair
  std::vector<double> ratios;            // B / A, per pair
  Summary rate_a, rate_b, ratio;
  AbTest test;
  // An ambiguous result: the pairs that would likely resolve it (the
  // interval's width shrinks as 1 / sqrt(pairs)), at least kAbRecommendedPairs.
  std::optional<uint32_t> pairs_recommended;
  AbVerdict verdict = AbVerdict::failed;
  std::string verdict_text;
  std::string model_path;  // where the model came from (model_origin)
  std::vector<std::string> notes;
  std::vector<std::string> depth_notes;  // each side's depth clamp (also in notes)
  // The monitor's series over every run. A shared device is watched from its
  // open to the end; sides opened afresh are watched run by run, and the
  // runs' records are joined in order (times continue from the run before;
  // each run is one measured repeat; its device's warnings name the run).
  MonitorRecord monitor;
  Verdict judgement;  // judge(AbResult): the rules behind `verdict`, for --strict and JSON
};

// The rules behind the A/B verdict: the depths, enough pairs, a resolved
// answer, then the host's and each device's confounds (one device's when
// both sides shared it). Pure.
Verdict judge(const AbResult& result);

// The test, the effect and the verdict of the rates (fills ratios, the
// summaries, test, pairs_recommended, verdict and verdict_text).
void decide_ab(AbResult& result);

Result<AbResult> run_ab(const DeviceOpener& open, const ModelSource& model, const AbConfig& a,
                        const AbConfig& b, const AbSettings& settings);

}  // namespace rig

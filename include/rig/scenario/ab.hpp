// rig ab: two configurations measured in interleaved pairs (A B A B ...)
// with a noise verdict. Each side is a parsed device spec (knobs applied) and
// a depth; the devices are opened through the caller's DeviceOpener, so the
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

// A verdict needs the runs' own spread as its noise estimate, and the spread
// of fewer than 3 pairs is not one (of 1 pair it is 0).
inline constexpr uint32_t kAbMinPairsForVerdict = 3;

struct AbSettings {
  uint32_t pairs = 5;   // >= 1; fewer than kAbMinPairsForVerdict give insufficient_data
  PointSettings point;  // one repeat per run; `repeats` is ignored
};

Result<void> validate(const AbSettings& settings);

// insufficient_data: fewer than kAbMinPairsForVerdict pairs ran; the rates
// and ratios are reported, but no side is named.
enum class AbVerdict { no_difference, a_faster, b_faster, insufficient_data, failed };
std::string_view to_string(AbVerdict v);

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
  std::vector<double> rates_a, rates_b;  // frames/s, per pair
  std::vector<double> ratios;            // B / A, per pair
  Summary rate_a, rate_b, ratio;
  std::optional<double> difference;  // median ratio - 1: B relative to A
  // The runs' own spread: the largest of A's, B's and the ratios' (max - min)
  // / median. With at least kAbMinPairsForVerdict pairs the verdict is "no
  // difference" when |difference| <= noise, else the faster side.
  std::optional<double> noise;
  AbVerdict verdict = AbVerdict::failed;
  std::string verdict_text;
  std::string model_path;  // where the model came from (model_origin)
  std::vector<std::string> notes;
  std::vector<std::string> depth_notes;  // each side's depth clamp (also in notes)
  Verdict judgement;  // judge(AbResult): the rules behind `verdict`, for --strict and JSON
};

Result<AbResult> run_ab(const DeviceOpener& open, const ModelSource& model, const AbConfig& a,
                        const AbConfig& b, const AbSettings& settings);

}  // namespace rig

// Settings shared by every scenario, and the one mapping of them onto the
// engine's phases: a pipelined measurement point (PointSettings), the depth a
// scenario runs at (resolve_depth), the engine settings derived from both, and
// the fields every result starts with (start_result, settle_depth).
// Settings are plain structs with documented defaults; validate() names the
// bad setting and does not depend on NDEBUG.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "rig/device.hpp"
#include "rig/engine.hpp"
#include "rig/environment.hpp"
#include "rig/input_data.hpp"

namespace rig {

// The device spec every command and scenario runs on when none is given
// (-d's default, every Settings' `device`).
inline constexpr const char* kDefaultDeviceSpec = "cpu";

// One pipelined measurement point: `repeats` x measure_steady at one depth.
// rig bench embeds it with its own defaults (at least 2 s and 100 inferences,
// up to 20 s while the stop rule is unmet).
struct PointSettings {
  Nanos duration{std::chrono::seconds(2)};  // measured time per repeat, at least
  uint64_t min_inferences = 20;             // completions per repeat, at least
  uint32_t windows = 10;                    // per repeat (stability compares the last 3)
  double stability_tolerance = 0.05;
  // The adaptive stop (SteadySettings): the rate's interval half-width, as a
  // share of the rate, at most this; and the cap, duration x this factor.
  double rate_tolerance = 0.02;
  double max_duration_factor = 2.0;
  Nanos warmup_max{std::chrono::seconds(5)};
  Nanos request_timeout{std::chrono::seconds(30)};
  uint32_t repeats = 3;
  uint64_t seed = 1;
  // --input (rig/scenario/run.hpp, read_input_files): the frames bound in
  // place of generated data; null: generated from `seed`. Shared, not copied.
  std::shared_ptr<const InputFiles> inputs = nullptr;
  // Told of every phase, window and inference (monitor, trace, progress).
  // Not owned, not a setting of the result: reports never print it.
  EngineObserver* observer = nullptr;
};

// Names the bad setting; independent of NDEBUG.
Result<void> validate(const PointSettings& settings);

// The engine's settings for repeat `repeat` (0-based) of a point at `depth`:
// seed + repeat, and the warm-up window every scenario shares
// (default_warmup_window). reservoir_capacity keeps the engine's default.
SteadySettings steady_settings(const PointSettings& point, uint32_t depth, uint32_t repeat = 0);

// The engine's settings for an offered-load run of a point at `depth` (rig
// bench --rate, each probe of rig sweep --rate): the point's duration,
// windows, warm-up window, request timeout, seed and observer. The rate, the
// arrivals and what a full queue does are the caller's.
OfferedSettings offered_settings(const PointSettings& point, uint32_t depth);

// The engine's lone-frame settings.
LatencySettings latency_settings(uint64_t samples, Nanos max_duration, Nanos request_timeout,
                                 EngineObserver* observer = nullptr);

// The depth a scenario runs at: `requested`, or the device's queue depth
// (DeviceInfo::queue_depth, the most requests it takes in flight) when
// `requested` is 0. A depth above it is clamped, with a note that says so.
struct DepthChoice {
  uint32_t depth = 1;
  std::optional<std::string> clamped_note;  // "depth 64 exceeds the device's queue depth 8; ..."
};
DepthChoice resolve_depth(const DeviceInfo& info, uint32_t requested);

// The fields every scenario's result starts with: the settings as requested
// and (until resolved) effective, the device's facts, its clock, and the
// environment.
template <class R, class Settings>
void start_result(R& r, Device& device, const Settings& settings) {
  r.requested = settings;
  r.effective = settings;
  r.device = device.info();
  r.virtual_clock = device.clock().is_virtual();
  r.environment = collect_environment();
}

// The depth a result runs at (resolve_depth of its requested depth), filed
// as its effective depth and, when clamped, its depth_note.
template <class R>
uint32_t settle_depth(R& r) {
  const DepthChoice c = resolve_depth(r.device, r.requested.depth);
  r.effective.depth = c.depth;
  r.depth_note = c.clamped_note;
  return c.depth;
}

// A device may learn its queue depth only from the loaded model (HailoRT's
// async queue size belongs to the configured model; before the load the
// hailo device states HailoRT's usual 32). After the cold start the result's
// queue depths are what the device now states, and the depth is settled
// again: a depth settled before the load could exceed the loaded model's
// queue, and every submit past it is refused as queue full. The device's
// properties after the load are merged in.
template <class R>
uint32_t settle_depth_after_load(R& r, const Device& device) {
  const DeviceInfo loaded = device.info();
  r.device.queue_depth = loaded.queue_depth;
  r.device.own_queue_depth = loaded.own_queue_depth;
  // What the device learnt of the model (HailoRT's queue size, its streams,
  // whether it measures latency) joins what it said before the load.
  for (const auto& [key, value] : loaded.properties) r.device.properties[key] = value;
  return settle_depth(r);
}

// The device's own queue depth (DeviceInfo::device_queue_depth): for a remote
// device the hosted device's, while queue_depth is what one connection may
// keep in flight. queue_depth stays the limit on requests in flight.
uint32_t device_queue_depth(const DeviceInfo& info);

}  // namespace rig

// The one mapping of scenario settings onto the engine's, and the one depth
// rule every scenario follows.
#include "rig/scenario/settings.hpp"

#include <algorithm>

#include "rig/units.hpp"

namespace rig {

Result<void> validate(const PointSettings& s) {
  auto bad = [](const std::string& m) { return fail(ErrorCode::invalid_argument, m); };
  if (s.duration <= Nanos(0))
    return bad("duration must be positive, got " + format_duration(s.duration));
  if (s.min_inferences == 0) return bad("min inferences must be >= 1");
  if (s.windows < 3) return bad("windows must be >= 3 (stability compares the last 3)");
  if (!(s.stability_tolerance > 0)) return bad("stability tolerance must be positive");
  if (!(s.rate_tolerance > 0)) return bad("rate tolerance must be positive");
  if (!(s.max_duration_factor >= 1) || s.max_duration_factor > 1000)
    return bad("max duration factor must be in 1..1000");
  if (s.warmup_max < Nanos(0)) return bad("warm-up cap must not be negative");
  if (s.request_timeout <= Nanos(0)) return bad("request timeout must be positive");
  if (s.repeats == 0) return bad("repeats must be >= 1");
  return {};
}

SteadySettings steady_settings(const PointSettings& p, uint32_t depth, uint32_t repeat) {
  SteadySettings s;
  s.depth = depth;
  s.min_duration = p.duration;
  s.min_inferences = p.min_inferences;
  s.windows = p.windows;
  s.stability_tolerance = p.stability_tolerance;
  s.rate_tolerance = p.rate_tolerance;
  s.max_duration_factor = p.max_duration_factor;
  s.warmup_max = p.warmup_max;
  s.warmup_window = default_warmup_window(p.duration, p.windows);
  s.request_timeout = p.request_timeout;
  s.seed = p.seed + repeat;
  s.observer = p.observer;
  return s;
}

OfferedSettings offered_settings(const PointSettings& p, uint32_t depth) {
  OfferedSettings s;
  s.duration = p.duration;
  s.warmup = default_warmup_window(p.duration, p.windows);
  s.windows = p.windows;
  s.depth = depth;
  s.request_timeout = p.request_timeout;
  s.seed = p.seed;
  s.observer = p.observer;
  return s;
}

LatencySettings latency_settings(uint64_t samples, Nanos max_duration, Nanos request_timeout,
                                 EngineObserver* observer) {
  LatencySettings s;
  s.observer = observer;
  s.samples = samples;
  s.max_duration = max_duration;
  s.request_timeout = request_timeout;
  return s;
}

DepthChoice resolve_depth(const DeviceInfo& info, uint32_t requested) {
  const uint32_t queue = std::max<uint32_t>(1, info.queue_depth);
  DepthChoice c;
  c.depth = requested == 0 ? queue : requested;
  if (c.depth > queue) {
    c.clamped_note = "depth " + std::to_string(c.depth) + " exceeds the device's queue depth " +
                     std::to_string(queue) + "; clamped to " + std::to_string(queue);
    c.depth = queue;
  }
  return c;
}

uint32_t device_queue_depth(const DeviceInfo& info) {
  return info.device_queue_depth();
}

}  // namespace rig

// rig sweep: pipelined rate against depth, the knee, and the round trip that
// pipelining hides.
#include <algorithm>
#include <bit>
#include <charconv>

#include "rig/model.hpp"
#include "rig/model_graph.hpp"
#include "rig/scenario/sweep.hpp"
#include "rig/units.hpp"
#include "scenario/analysis_notes.hpp"
#include "scenario/monitored_run.hpp"
#include "scenario/rules.hpp"

namespace rig {
namespace {

constexpr uint32_t kMaxDepth = 65536;

Result<uint32_t> parse_depth(std::string_view text, std::string_view whole) {
  uint32_t v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || v == 0 ||
      v > kMaxDepth)
    return fail(ErrorCode::invalid_argument, "depth range '" + std::string(whole) + "': '" +
                                                 std::string(text) + "' is not a depth in 1.." +
                                                 std::to_string(kMaxDepth) +
                                                 " (use N or LO..HI, e.g. 1..64)");
  return v;
}

// The index of the point at `depth`, inserting it (sorted) if absent.
size_t find_point(const std::vector<SweepPoint>& points, uint32_t depth) {
  for (size_t i = 0; i < points.size(); ++i)
    if (points[i].result.depth == depth) return i;
  return points.size();
}

double median_rate(const SweepPoint& p) {
  return p.result.rate.median.value_or(0.0);
}

// Best rate and the knee over every measured point.
void locate_knee(SweepResult& r, double fraction) {
  r.best_rate.reset();
  r.best_depth.reset();
  r.knee.reset();
  for (const auto& p : r.points)
    if (p.result.rate.median && (!r.best_rate || *p.result.rate.median > *r.best_rate)) {
      r.best_rate = p.result.rate.median;
      r.best_depth = p.result.depth;
    }
  if (!r.best_rate || *r.best_rate <= 0) return;
  for (auto& p : r.points) {
    if (!p.result.rate.median) continue;
    p.fraction_of_best = *p.result.rate.median / *r.best_rate;
    if (!r.knee && *p.fraction_of_best >= fraction) r.knee = p.result.depth;
  }
}

// What saturates at the best rate (LimitedBy): each resource's time per
// frame, from the declared costs where the device models them, else from the
// lone frames' device-reported parts; the busiest at kSaturatedShare or more
// is named. A measured compute busier than the whole time (a device that
// computes frames in parallel) is not a single server and is not named.
void name_saturated(SweepResult& r) {
  r.limited_by = LimitedBy::unknown;
  r.limit_busy_share.reset();
  r.limit_ms_per_frame.reset();
  if (!r.best_rate || *r.best_rate <= 0) return;
  std::optional<double> compute_ms, in_ms, out_ms;
  Duplex duplex = r.device.duplex;
  if (const auto& c = r.device.declared_costs; c && c->bw_in > 0 && c->bw_out > 0) {
    compute_ms = to_ms(c->compute);
    in_ms = static_cast<double>(r.model.input_bytes()) / c->bw_in * 1e3;
    out_ms = static_cast<double>(r.model.output_bytes()) / c->bw_out * 1e3;
    duplex = c->duplex;
  } else {
    compute_ms = r.lone.hardware_ms.median;
    in_ms = r.lone.transfer_in_ms.median;
    out_ms = r.lone.transfer_out_ms.median;
  }
  std::vector<std::pair<LimitedBy, double>> busy;
  const double rate = *r.best_rate;
  if (compute_ms && rate * *compute_ms / 1e3 <= 1 + (1 - kSaturatedShare))
    busy.emplace_back(LimitedBy::compute, *compute_ms);
  if (duplex == Duplex::half && in_ms && out_ms) {
    busy.emplace_back(LimitedBy::link_shared, *in_ms + *out_ms);
  } else {
    if (in_ms) busy.emplace_back(LimitedBy::link_in, *in_ms);
    if (out_ms) busy.emplace_back(LimitedBy::link_out, *out_ms);
  }
  for (const auto& [what, ms] : busy) {
    const double share = rate * ms / 1e3;
    if (share >= kSaturatedShare && (!r.limit_busy_share || share > *r.limit_busy_share)) {
      r.limited_by = what;
      r.limit_busy_share = share;
      r.limit_ms_per_frame = ms;
    }
  }
}

// The knee against the device's own queue depth (see KneeVsQueue); `hi` is
// the deepest depth swept. A saturated resource (name_saturated, run first)
// rules out the queue as the limit.
KneeVsQueue classify_knee(const SweepResult& r, uint32_t hi) {
  if (!r.knee || r.points.size() < 2) return KneeVsQueue::unknown;
  const uint32_t q = r.queue_depth, knee = *r.knee;
  // Rising at the top: the last step gained more than half of linear scaling.
  bool rising_at_top = false;
  const SweepPoint& top = r.points.back();
  const SweepPoint& before = r.points[r.points.size() - 2];
  if (top.result.depth == hi && median_rate(before) > 0) {
    const double gain = median_rate(top) / median_rate(before) - 1;
    const double linear = static_cast<double>(hi) / before.result.depth - 1;
    rising_at_top = gain > 0.5 * linear;
  }
  // One step below Q: above the deepest unrefined depth below it.
  uint32_t step_below_q = 0;
  for (const auto& p : r.points)
    if (!p.refined && p.result.depth < q) step_below_q = std::max(step_below_q, p.result.depth);
  if (knee > q) return KneeVsQueue::above_queue_depth;
  if (knee > step_below_q) {
    // The sweep ends at Q: the rate reaching its best only there, or still
    // climbing into it, means the queue stopped it.
    const bool saturated = r.limit_busy_share.has_value();
    if (hi == q && rising_at_top && !saturated) return KneeVsQueue::queue_limited;
    return KneeVsQueue::at_queue_depth;
  }
  if (hi < q && rising_at_top) return KneeVsQueue::still_rising;
  return KneeVsQueue::below;
}

}  // namespace

std::string_view to_string(KneeVsQueue k) {
  switch (k) {
    case KneeVsQueue::below:
      return "below_queue_depth";
    case KneeVsQueue::at_queue_depth:
      return "at_queue_depth";
    case KneeVsQueue::queue_limited:
      return "limited_by_queue_depth";
    case KneeVsQueue::above_queue_depth:
      return "above_queue_depth";
    case KneeVsQueue::still_rising:
      return "still_rising";
    case KneeVsQueue::unknown:
      return "unknown";
  }
  return "unknown";
}

std::string_view to_string(LimitedBy l) {
  switch (l) {
    case LimitedBy::compute:
      return "compute";
    case LimitedBy::link_in:
      return "link_in";
    case LimitedBy::link_out:
      return "link_out";
    case LimitedBy::link_shared:
      return "link_shared";
    case LimitedBy::queue:
      return "queue";
    case LimitedBy::unknown:
      return "unknown";
  }
  return "unknown";
}

Result<std::pair<uint32_t, uint32_t>> parse_depth_range(std::string_view text) {
  const auto dots = text.find("..");
  if (dots == std::string_view::npos) {
    auto hi = parse_depth(text, text);
    if (!hi) return tl::unexpected(hi.error());
    return std::pair<uint32_t, uint32_t>{1, *hi};
  }
  auto lo = parse_depth(text.substr(0, dots), text);
  if (!lo) return tl::unexpected(lo.error());
  auto hi = parse_depth(text.substr(dots + 2), text);
  if (!hi) return tl::unexpected(hi.error());
  if (*lo > *hi)
    return fail(ErrorCode::invalid_argument,
                "depth range '" + std::string(text) + "' runs backwards (LO must be <= HI)");
  return std::pair<uint32_t, uint32_t>{*lo, *hi};
}

Result<void> validate(const SweepSettings& s) {
  auto bad = [](const std::string& m) { return fail(ErrorCode::invalid_argument, m); };
  if (auto ok = validate(s.point); !ok) return ok;
  if (s.min_depth == 0) return bad("the sweep's smallest depth must be >= 1");
  if (s.min_depth > s.max_depth)
    return bad("the sweep's depth range runs backwards: " + std::to_string(s.min_depth) + ".." +
               std::to_string(s.max_depth));
  if (s.max_depth > kMaxDepth) return bad("the sweep's largest depth must be <= 65536");
  if (!(s.knee_fraction > 0 && s.knee_fraction <= 1))
    return bad("knee fraction must be in (0, 1], got " + format_fixed(s.knee_fraction, 3));
  if (s.latency_samples == 0) return bad("latency samples must be >= 1");
  return validate(s.confounds);
}

namespace {

// lo, the powers of two above it, and hi; the requested depths above hi go
// to r.skipped.
std::vector<uint32_t> plan_depths(SweepResult& r, const SweepSettings& s, uint32_t hi) {
  std::vector<uint32_t> depths;
  for (uint64_t d = s.min_depth; d <= hi; d = std::bit_floor(d) * 2)
    depths.push_back(static_cast<uint32_t>(d));
  if (depths.back() != hi) depths.push_back(hi);
  for (uint64_t d = std::bit_floor(static_cast<uint64_t>(hi)) * 2; d <= s.max_depth; d *= 2)
    r.skipped.push_back(static_cast<uint32_t>(d));
  if (s.max_depth > hi && (r.skipped.empty() || r.skipped.back() != s.max_depth))
    r.skipped.push_back(s.max_depth);
  return depths;
}

// Measures one depth and inserts its point in depth order.
const SweepPoint& measure_depth(SweepResult& r, Device& device, const Workspace& ws, uint32_t depth,
                                bool refined, const SweepSettings& s) {
  SweepPoint p;
  p.result = measure_point(device, ws, depth, s.point);
  p.result.depth = depth;
  p.refined = refined;
  auto at = std::lower_bound(r.points.begin(), r.points.end(), depth,
                             [](const SweepPoint& q, uint32_t d) { return q.result.depth < d; });
  return *r.points.insert(at, std::move(p));
}

// Refine: the knee lies between the last depth below it and the knee itself.
void refine_knee(SweepResult& r, Device& device, const Workspace& ws, const SweepSettings& s) {
  const size_t k = find_point(r.points, *r.knee);
  if (k == 0) return;
  uint32_t below = r.points[k - 1].result.depth, knee = *r.knee;
  while (knee - below > 1) {
    const uint32_t mid = below + (knee - below) / 2;
    const SweepPoint& p = measure_depth(r, device, ws, mid, true, s);
    if (median_rate(p) >= s.knee_fraction * *r.best_rate)
      knee = mid;
    else
      below = mid;
  }
  locate_knee(r, s.knee_fraction);
}

// The round trip: single shot minus pipelined time per frame.
void round_trip(SweepResult& r) {
  const size_t one = find_point(r.points, 1);
  if (one < r.points.size() && r.points[one].result.ms_per_frame)
    r.single_shot_ms = r.points[one].result.ms_per_frame;
  else
    r.single_shot_ms = r.lone.overall_ms.median;
  if (r.best_rate && *r.best_rate > 0) r.pipelined_ms = 1000.0 / *r.best_rate;
  if (r.single_shot_ms && r.pipelined_ms && *r.single_shot_ms > 0) {
    r.round_trip_ms = *r.single_shot_ms - *r.pipelined_ms;
    r.round_trip_share = *r.round_trip_ms / *r.single_shot_ms;
  }
}

void add_notes(SweepResult& r, uint32_t queue) {
  if (!r.skipped.empty()) {
    std::string list;
    for (uint32_t d : r.skipped) list += (list.empty() ? "" : ", ") + std::to_string(d);
    r.notes.push_back("not run: depth " + list + " (above the device's queue depth " +
                      std::to_string(queue) + ")");
  }
  for (const auto& p : r.points) {
    if (p.result.errors > 0 && p.result.first_error)
      r.notes.push_back("depth " + std::to_string(p.result.depth) + ": " +
                        std::to_string(p.result.errors) +
                        " inference(s) failed; first: " + p.result.first_error->to_string());
    else if (std::any_of(p.result.stability.begin(), p.result.stability.end(),
                         [](const auto& j) { return j.state == Stability::unstable; }))
      r.notes.push_back("depth " + std::to_string(p.result.depth) +
                        ": a repeat was not stable; raise --duration");
  }
  // The cpu device's queue is its depth= (2 x workers= by default): where
  // the sweep reached it, say which setting raises it.
  if (r.device.kind == "cpu" && r.effective.max_depth >= r.queue_depth &&
      (r.knee_vs_queue == KneeVsQueue::queue_limited ||
       r.knee_vs_queue == KneeVsQueue::at_queue_depth))
    r.notes.push_back("the cpu device's queue depth is " + std::to_string(r.queue_depth) +
                      ": cpu:workers=N raises it (its default depth is 2 x workers), "
                      "cpu:depth=N sets it");
  if (r.round_trip_ms && *r.round_trip_ms < 0)
    r.notes.push_back("pipelining made frames slower than a single shot: contention, not overlap");
  add_clock_and_device_notes(r);
}

}  // namespace

Result<SweepResult> run_sweep(Device& device, const ModelSource& model,
                              const SweepSettings& settings) {
  if (auto ok = validate(settings); !ok) return tl::unexpected(ok.error());
  SweepResult r;
  start_result(r, device, settings);
  MonitoredRun watch(settings.monitor, device, settings.point.observer);
  SweepSettings s = settings;
  s.point = watch.watched(settings.point);
  // `queue` bounds the requests in flight; the knee is compared with the
  // device's own queue depth, which a remote connection exceeds.
  const uint32_t queue = std::max<uint32_t>(1, r.device.queue_depth);
  r.queue_depth = device_queue_depth(r.device);
  if (s.min_depth > queue)
    return fail(ErrorCode::invalid_argument,
                "the sweep starts at depth " + std::to_string(s.min_depth) +
                    ", above the device's queue depth " + std::to_string(queue));
  const uint32_t hi = std::min(s.max_depth, queue);
  r.effective.max_depth = hi;
  std::vector<uint32_t> depths = plan_depths(r, s, hi);

  auto cold = cold_start(device, model, hi, s.point.seed, s.point.observer, s.point.inputs.get());
  if (!cold) return tl::unexpected(cold.error());
  // A queue the loaded model states smaller than the one stated before the
  // load (settle_depth_after_load): the depths past it are not measured.
  if (const DeviceInfo loaded = device.info(); loaded.queue_depth < queue) {
    r.device.queue_depth = loaded.queue_depth;
    r.device.own_queue_depth = loaded.own_queue_depth;
    r.queue_depth = device_queue_depth(r.device);
    const uint32_t loaded_hi = std::min(hi, std::max<uint32_t>(1, loaded.queue_depth));
    std::erase_if(depths, [&](uint32_t d) { return d > loaded_hi; });
    if (depths.empty() || depths.back() != loaded_hi) depths.push_back(loaded_hi);
    r.effective.max_depth = loaded_hi;
    r.notes.push_back("the loaded model's queue depth is " + std::to_string(loaded.queue_depth) +
                      ", below the " + std::to_string(queue) +
                      " the device stated before the load: the sweep stops at depth " +
                      std::to_string(loaded_hi));
  }
  r.ttfo = cold->ttfo;
  r.model = device.model_info();
  r.model.sha256 = model_sha256(model);  // after the cold start: never timed
  r.model_path = model_origin(model);
  const Workspace& ws = cold->workspace;
  r.lone = measure_latency(device, ws,
                           latency_settings(s.latency_samples, s.point.duration,
                                            s.point.request_timeout, s.point.observer));

  for (uint32_t d : depths) {
    const SweepPoint& p = measure_depth(r, device, ws, d, false, s);
    if (p.result.aborted && p.result.repeat_rates.empty()) break;  // the device failed
  }
  locate_knee(r, s.knee_fraction);
  if (!r.best_rate) {
    for (const auto& p : r.points)
      if (p.result.first_error) return tl::unexpected(*p.result.first_error);
    return fail(ErrorCode::device, "the sweep completed no inferences at any depth");
  }
  if (s.refine && r.knee) refine_knee(r, device, ws, s);
  name_saturated(r);
  r.knee_vs_queue = classify_knee(r, hi);
  if (r.knee_vs_queue == KneeVsQueue::queue_limited) r.limited_by = LimitedBy::queue;
  round_trip(r);
  add_notes(r, queue);
  r.monitor = watch.monitor().finish();
  r.monitor.energy.reason = "unavailable: rig sweep states no energy figure (rig bench does)";
  r.verdict = judge(r);
  return r;
}

// ---------------------------------------------------------------------------
// The verdict: the points' rules, consistency, the confounds.

Verdict judge(const SweepResult& r) {
  NamedPoints points;
  for (const auto& p : r.points)
    points.emplace_back("depth " + std::to_string(p.result.depth), &p.result);
  Verdict v;
  v.saw(r.lone.first_error);
  for (const auto& [name, p] : points) v.saw(p->first_error);
  v.add(points_without_errors(points));
  v.add(no_errors(r.lone.errors, r.lone.first_error, "in lone frames", "no_lone_frame_errors"));
  v.add(points_stable(points));
  v.add(points_stability_resolved(points, r.effective.point.stability_tolerance));
  v.add(points_within_declared_cap(points, cap_rounding(r.virtual_clock)));
  v.add(figures_consistent(r.device, r.model, &r.ttfo, &r.lone));
  add_confounds(v, r.environment, r.device, r.virtual_clock, kVirtualClockNote,
                r.effective.confounds.strict);
  add_confound_rules(v, confound_inputs(r));
  return v;
}

}  // namespace rig

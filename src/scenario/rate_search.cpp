// The bounded search for the highest rate that meets a latency bound, and
// rig sweep --rate around it.
#include "rig/scenario/rate_search.hpp"

#include <algorithm>
#include <cmath>

#include "rig/model.hpp"
#include "rig/model_graph.hpp"
#include "rig/units.hpp"
#include "scenario/analysis_notes.hpp"
#include "scenario/monitored_run.hpp"
#include "scenario/rules.hpp"

namespace rig {

std::string_view to_string(RateSearchEnd end) {
  switch (end) {
    case RateSearchEnd::max_rate_met:
      return "max_rate_met";
    case RateSearchEnd::min_rate_failed:
      return "min_rate_failed";
    case RateSearchEnd::resolved:
      return "resolved";
    case RateSearchEnd::probes_exhausted:
      return "probes_exhausted";
    case RateSearchEnd::probe_failed:
      return "probe_failed";
    case RateSearchEnd::not_run:
      return "not_run";
  }
  return "not_run";
}

RateSearch find_max_rate(Device& device, const Workspace& workspace, const RateSearchSettings& s) {
  RateSearch out;
  const double bound_ms = to_ms(s.latency_bound);
  auto probe = [&](double rate) {
    OfferedSettings os = s.offered;
    os.rate = rate;
    RateProbe p;
    p.run = measure_offered(device, workspace, os);
    p.rate = rate;
    p.p99_ms = p.run.latency_ms.p99;
    p.p99_enough = p.run.latency_ms.p99_ci.enough();
    p.keeps_up = p.run.keeps_up;
    // Meets at the stated confidence: the upper ends of the p99's interval
    // and of the late share's are within the bound and the late limit, so
    // that a claimed rate misses either no more often than (1 - confidence) / 2.
    const PercentileInterval& ci = p.run.latency_ms.p99_ci;
    p.meets = p.run.keeps_up && ci.enough() && *ci.upper <= bound_ms && p.run.late_share_upper &&
              *p.run.late_share_upper <= kLateShareLimit;
    const bool aborted = p.run.aborted;
    out.probes.push_back(std::move(p));
    if (aborted) {
      out.end = RateSearchEnd::probe_failed;
      return false;
    }
    if (out.probes.back().meets)
      out.best_rate = std::max(out.best_rate.value_or(0), rate);
    else
      out.first_failing_rate = std::min(out.first_failing_rate.value_or(rate), rate);
    return out.probes.back().meets;
  };
  auto failed = [&] { return out.end == RateSearchEnd::probe_failed; };
  if (!(s.min_rate > 0) || s.max_rate < s.min_rate || s.max_probes == 0) return out;
  if (probe(s.max_rate)) {
    out.end = RateSearchEnd::max_rate_met;
    return out;
  }
  if (failed()) return out;
  if (out.probes.size() >= s.max_probes) {
    out.end = RateSearchEnd::probes_exhausted;
    return out;
  }
  if (!probe(s.min_rate)) {
    if (!failed()) out.end = RateSearchEnd::min_rate_failed;
    return out;
  }
  double lo = s.min_rate, hi = s.max_rate;
  while (out.probes.size() < s.max_probes && hi / lo - 1 > s.resolution) {
    const double mid = std::sqrt(lo * hi);
    (probe(mid) ? lo : hi) = mid;
    if (failed()) return out;
  }
  out.end = hi / lo - 1 > s.resolution ? RateSearchEnd::probes_exhausted : RateSearchEnd::resolved;
  return out;
}

// ---------------------------------------------------------------------------
// rig sweep --rate

Result<std::pair<double, double>> parse_rate_range(std::string_view text) {
  const auto dots = text.find("..");
  const auto bad = [&](const std::string& why) {
    return fail(ErrorCode::invalid_argument, "rate range '" + std::string(text) + "': " + why +
                                                 " (use LO..HI, e.g. 10/s..1000/s)");
  };
  if (dots == std::string_view::npos) return bad("no '..' between the lowest and highest rate");
  auto lo = parse_frame_rate(text.substr(0, dots));
  if (!lo) return bad(lo.error().message);
  auto hi = parse_frame_rate(text.substr(dots + 2));
  if (!hi) return bad(hi.error().message);
  if (*lo > *hi) return bad("it runs backwards (LO must be <= HI)");
  return std::pair<double, double>{*lo, *hi};
}

Result<void> validate(const RateSweepSettings& s) {
  auto bad = [](const std::string& m) { return fail(ErrorCode::invalid_argument, m); };
  if (auto ok = validate(s.point); !ok) return ok;
  if (!(s.min_rate > 0) || !std::isfinite(s.min_rate) || !std::isfinite(s.max_rate))
    return bad("the rate range must be positive, e.g. --rate 10/s..1000/s");
  if (s.max_rate < s.min_rate)
    return bad("the rate range runs backwards: " + format_fixed(s.min_rate, 2) + ".." +
               format_fixed(s.max_rate, 2) + " frames/s");
  if (s.latency_bound <= Nanos(0)) return bad("latency bound must be positive, e.g. 10ms");
  if (s.max_probes < 2) return bad("max probes must be >= 2 (the range's two ends)");
  if (!(s.resolution > 0)) return bad("rate resolution must be positive");
  if (s.late_threshold < Nanos(0)) return bad("late threshold must not be negative");
  if (s.latency_samples == 0) return bad("latency samples must be >= 1");
  if (!(s.confidence > 0 && s.confidence < 1))
    return bad("confidence must be between 0 and 1 (exclusive), e.g. 0.95");
  return validate(s.confounds);
}

namespace {

void add_notes(RateSweepResult& r) {
  const auto& s = r.search;
  const std::string bound = format_duration(r.effective.latency_bound);
  switch (s.end) {
    case RateSearchEnd::max_rate_met:
      r.notes.push_back("the highest rate of the range (" + format_fixed(r.effective.max_rate, 2) +
                        "/s) met the bound: the device may do more; raise --rate's upper end");
      break;
    case RateSearchEnd::min_rate_failed:
      if (const RateProbe* low = s.probes.size() >= 2 ? &s.probes[1] : nullptr;
          low && low->keeps_up && !low->run.latency_ms.p99_ci.enough() &&
          !(low->run.latency_ms.min &&
            *low->run.latency_ms.min > to_ms(r.effective.latency_bound))) {
        // Unjudged, not failed: its frames did not all miss the bound, too
        // few of them to say that 99% met it.
        r.notes.push_back(
            "no probe could be judged: at " + format_fixed(low->rate, 2) +
            "/s the p99's interval needs " + std::to_string(low->run.latency_ms.p99_ci.needs) +
            " frames, the probe had " + std::to_string(low->run.latency_ms.p99_ci.count) +
            " (a claimed rate must meet the bound at the interval's upper end); "
            "raise --duration");
        break;
      }
      r.notes.push_back("no rate in the range met p99 <= " + bound + ", not even " +
                        format_fixed(r.effective.min_rate, 2) +
                        "/s; lower --rate's lower end or raise --latency-bound (a lone frame "
                        "takes " +
                        (r.lone.overall_ms.median ? format_ms(*r.lone.overall_ms.median) : "n/a") +
                        ")");
      break;
    case RateSearchEnd::probes_exhausted:
      r.notes.push_back("the search ran out of probes (--max-probes " +
                        std::to_string(r.effective.max_probes) +
                        ") before the best and the first failing rate were within " +
                        format_fixed(r.effective.resolution * 100, 1) + "%");
      break;
    case RateSearchEnd::probe_failed:
      r.notes.push_back("a probe failed; the search stopped there");
      break;
    case RateSearchEnd::resolved:
    case RateSearchEnd::not_run:
      break;
  }
  if (r.depth_note) r.notes.push_back(*r.depth_note);
  add_clock_and_device_notes(r);
}

}  // namespace

Result<RateSweepResult> run_rate_sweep(Device& device, const ModelSource& model,
                                       const RateSweepSettings& s) {
  if (auto ok = validate(s); !ok) return tl::unexpected(ok.error());
  RateSweepResult r;
  start_result(r, device, s);
  uint32_t depth = settle_depth(r);
  MonitoredRun watch(s.monitor, device, s.point.observer);
  EngineObserver* observer = watch.observer();

  auto cold = cold_start(device, model, depth, s.point.seed, observer, s.point.inputs.get());
  if (!cold) return tl::unexpected(cold.error());
  depth = settle_depth_after_load(r, device);  // the loaded model's queue
  r.ttfo = cold->ttfo;
  r.model = device.model_info();
  r.model.sha256 = model_sha256(model);  // after the cold start: never timed
  r.model_path = model_origin(model);
  const Workspace& ws = cold->workspace;
  LatencySettings lone =
      latency_settings(s.latency_samples, s.point.duration, s.point.request_timeout, observer);
  lone.confidence = s.confidence;
  r.lone = measure_latency(device, ws, lone);

  RateSearchSettings rs;
  rs.min_rate = s.min_rate;
  rs.max_rate = s.max_rate;
  rs.latency_bound = s.latency_bound;
  rs.max_probes = s.max_probes;
  rs.resolution = s.resolution;
  OfferedSettings& os = rs.offered;
  os = offered_settings(s.point, depth);
  os.arrival = s.arrival;
  os.on_full = s.on_full;
  os.late_threshold = s.late_threshold;
  os.confidence = s.confidence;
  os.observer = observer;
  r.search = find_max_rate(device, ws, rs);
  r.monitor = watch.monitor().finish();
  r.monitor.energy.reason = "unavailable: rig sweep states no energy figure (rig bench does)";
  add_notes(r);
  r.verdict = judge(r);
  return r;
}

// ---------------------------------------------------------------------------
// rig sweep --rate: every probe ran, the search bracketed and resolved the
// best rate, each probe's p99 had the samples its interval needs.
namespace {

std::string probe_name(const RateProbe& p) {
  return "probe at " + format_fixed(p.rate, 2) + "/s";
}

RuleOutcome probes_completed(const RateSearch& s) {
  size_t failed = 0;
  for (const auto& p : s.probes) failed += p.run.aborted || p.run.errors > 0 ? 1 : 0;
  RuleOutcome o = outcome("probes_completed", Severity::invalidates,
                          std::to_string(s.probes.size() - failed) + " of " +
                              std::to_string(s.probes.size()) + " probes ran without errors");
  if (s.probes.empty()) finding(o, "no probe ran");
  for (const auto& p : s.probes) {
    if (p.run.device_stuck)
      finding(o, probe_name(p) +
                     ": the device did not return every request (its buffers are kept alive); "
                     "restart the device");
    else if (p.run.aborted || p.run.errors > 0)
      finding(o, probe_name(p) + ": " + std::to_string(p.run.errors) +
                     " inference(s) failed; first: " +
                     (p.run.first_error ? p.run.first_error->to_string() : std::string("aborted")));
  }
  return o;
}

RuleOutcome rate_bracketed(const RateSweepResult& r) {
  const auto& s = r.search;
  RuleOutcome o =
      outcome("rate_bracketed", Severity::warns,
              "best " + (s.best_rate ? format_fixed(*s.best_rate, 2) + "/s" : std::string("none")) +
                  ", first failing " +
                  (s.first_failing_rate ? format_fixed(*s.first_failing_rate, 2) + "/s"
                                        : std::string("none")) +
                  " in " + format_fixed(r.effective.min_rate, 2) + ".." +
                  format_fixed(r.effective.max_rate, 2) + "/s");
  o.threshold = "latency_bound " + format_duration(r.effective.latency_bound);
  if (s.end == RateSearchEnd::max_rate_met)
    finding(o, "the highest rate of the range met the bound, so the best rate is at least " +
                   format_fixed(r.effective.max_rate, 2) + "/s; raise --rate's upper end");
  else if (s.end == RateSearchEnd::min_rate_failed)
    finding(o, "no rate in the range met p99 <= " + format_duration(r.effective.latency_bound) +
                   "; lower --rate's lower end or raise --latency-bound");
  return o;
}

RuleOutcome search_resolved(const RateSweepResult& r) {
  const auto& s = r.search;
  RuleOutcome o = outcome("search_resolved", Severity::warns,
                          std::to_string(s.probes.size()) + " probes of at most " +
                              std::to_string(r.effective.max_probes) +
                              ", stopped: " + std::string(to_string(s.end)));
  o.threshold = "resolution " + format_fixed(r.effective.resolution, 3);
  if (s.end == RateSearchEnd::probes_exhausted)
    finding(o, "the probes ran out with the best rate " +
                   (s.best_rate ? format_fixed(*s.best_rate, 2) : std::string("n/a")) +
                   "/s and the first failing " +
                   (s.first_failing_rate ? format_fixed(*s.first_failing_rate, 2)
                                         : std::string("n/a")) +
                   "/s further apart than " + format_fixed(r.effective.resolution * 100, 1) +
                   "%; raise --max-probes");
  return o;
}

// A probe's p99 without an interval: its meets / fails rests on a point
// estimate from too few frames. The frames a probe measures are about its
// achieved rate x duration.
RuleOutcome probe_percentiles_resolved(const RateSweepResult& r) {
  const auto& s = r.search;
  size_t resolved = 0;
  for (const auto& p : s.probes) resolved += p.p99_enough ? 1 : 0;
  RuleOutcome o = outcome("probe_percentiles_resolved", Severity::warns,
                          std::to_string(resolved) + " of " + std::to_string(s.probes.size()) +
                              " probes have a p99 interval");
  for (const auto& p : s.probes) {
    const PercentileInterval& ci = p.run.latency_ms.p99_ci;
    if (p.p99_enough || p.run.aborted) continue;
    // Frames come back at the achieved rate (below the offered one when the
    // device falls behind).
    const double per_s = p.run.achieved_rate > 0 ? p.run.achieved_rate : p.rate;
    const double seconds = per_s > 0 ? static_cast<double>(ci.needs) / per_s : 0;
    finding(o, probe_name(p) + ": p99 from arrival: " +
                   unstated_percentile(ci, "raise --duration to at least " +
                                               format_fixed(std::ceil(seconds), 0) + "s"));
  }
  return o;
}

// The two probes that decide the answer (the best rate and the first failing
// one): a bound inside a p99's interval means that probe's side of the
// bound rests on the point estimate, within the noise of its sample.
RuleOutcome bound_outside_intervals(const RateSweepResult& r) {
  const auto& s = r.search;
  const double bound_ms = to_ms(r.effective.latency_bound);
  RuleOutcome o = outcome("bound_outside_intervals", Severity::warns,
                          "the best and the first failing probe's p99 interval against the bound");
  o.threshold = "latency_bound " + format_duration(r.effective.latency_bound);
  for (const auto& p : s.probes) {
    const bool deciding = (s.best_rate && p.rate == *s.best_rate) ||
                          (s.first_failing_rate && p.rate == *s.first_failing_rate);
    const PercentileInterval& ci = p.run.latency_ms.p99_ci;
    if (!deciding || !ci.enough() || !p.keeps_up) continue;
    if (*ci.lower <= bound_ms && bound_ms <= *ci.upper)
      finding(o, probe_name(p) + ": the bound " + format_ms(bound_ms) + " lies inside its p99's " +
                     format_fixed(ci.confidence * 100, 0) + "% interval (" + format_ms(*ci.lower) +
                     " - " + format_ms(*ci.upper) + "): whether it " +
                     (p.meets ? "meets" : "misses") +
                     " the bound is within the noise of its frames; raise --duration");
  }
  return o;
}

}  // namespace

Verdict judge(const RateSweepResult& r) {
  Verdict v;
  v.saw(r.lone.first_error);
  for (const auto& p : r.search.probes) v.saw(p.run.first_error);
  v.add(depth_within_queue(r.depth_note));
  v.add(no_errors(r.lone.errors, r.lone.first_error, "in lone frames", "no_lone_frame_errors"));
  v.add(probes_completed(r.search));
  v.add(rate_bracketed(r));
  v.add(search_resolved(r));
  v.add(probe_percentiles_resolved(r));
  v.add(bound_outside_intervals(r));
  add_confounds(v, r.environment, r.device, r.virtual_clock, kVirtualClockNote,
                r.effective.confounds.strict);
  add_confound_rules(v, confound_inputs(r));
  return v;
}

}  // namespace rig

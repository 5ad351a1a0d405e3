// rig ab: two configurations measured in interleaved pairs, so slow changes
// of the host or device (heat, contention) fall on both sides alike; the
// order within each pair is drawn from a seed, so a drift that favours the
// first (or second) run of a pair falls on both sides too. The verdict is the
// Mann-Whitney U test of the two sides' rates with the Hodges-Lehmann ratio
// and its interval (docs/methodology.md).
#include <algorithm>
#include <cmath>

#include "rig/model.hpp"
#include "rig/model_graph.hpp"
#include "rig/scenario/ab.hpp"
#include "rig/units.hpp"
#include "scenario/analysis_notes.hpp"
#include "scenario/monitored_run.hpp"
#include "scenario/rules.hpp"

namespace rig {
namespace {

std::string side_label(const char* name, const AbConfig& c) {
  std::string knobs;
  for (const auto& k : c.knobs) knobs += (knobs.empty() ? "" : ", ") + k;
  return std::string(name) + (knobs.empty() ? "" : " (" + knobs + ")");
}

// The side's depth, with the clamp note prefixed by the side's name.
uint32_t side_depth(AbResult& r, const DeviceInfo& info, uint32_t wanted, const char* side) {
  const DepthChoice c = resolve_depth(info, wanted);
  if (c.clamped_note) {
    r.depth_notes.push_back(std::string(side) + ": " + *c.clamped_note);
    r.notes.push_back(r.depth_notes.back());
  }
  return c.depth;
}

// One run: a rate, or the error that prevented it.
Result<double> one_run(Device& device, const Workspace& ws, uint32_t depth,
                       const PointSettings& point, const std::string& what) {
  const PointResult p = measure_point(device, ws, depth, point);
  if (!p.rate.median) {
    Error e = p.first_error.value_or(Error{ErrorCode::device, "no inference completed"});
    e.message = what + ": " + e.message;
    return tl::unexpected(e);
  }
  return *p.rate.median;
}

}  // namespace

std::string_view to_string(AbVerdict v) {
  switch (v) {
    case AbVerdict::same:
      return "same";
    case AbVerdict::a_faster:
      return "a_faster";
    case AbVerdict::b_faster:
      return "b_faster";
    case AbVerdict::ambiguous:
      return "ambiguous";
    case AbVerdict::failed:
      return "failed";
  }
  return "failed";
}

uint32_t ab_min_pairs(double alpha) {
  return static_cast<uint32_t>(mann_whitney_min_n(alpha));
}

Result<AbConfig> apply_knobs(const AbConfig& base, std::span<const std::string> knobs) {
  AbConfig c = base;
  for (const auto& knob : knobs) {
    const auto eq = knob.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == knob.size())
      return fail(
          ErrorCode::invalid_argument,
          "knob '" + knob + "' is not KNOB=VALUE (e.g. depth=4, threads=2, link=usb3-gen2)");
    const std::string key = knob.substr(0, eq), value = knob.substr(eq + 1);
    c.knobs.push_back(knob);
    if (key == "depth") {
      auto n = parse_count(value);
      if (!n || *n == 0 || *n > 65536)
        return fail(ErrorCode::invalid_argument,
                    "knob depth=" + value + ": depth must be an integer in 1..65536");
      c.depth = static_cast<uint32_t>(*n);
      continue;
    }
    if (c.spec.remote())
      return fail(ErrorCode::invalid_argument,
                  "knob '" + knob + "' sets a device spec parameter, but '" + c.spec.given_text() +
                      "' has none; only depth applies to a remote device");
    if (value.find(',') != std::string::npos)
      return fail(ErrorCode::invalid_argument,
                  "knob '" + knob + "': a value must not contain ',' (give one knob per --a/--b)");
    if (auto ok = c.spec.set(key, value); !ok) {  // replaces the base spec's value
      Error e = ok.error();
      e.message = "knob '" + knob + "': " + e.message;
      return tl::unexpected(e);
    }
  }
  return c;
}

Result<void> validate(const AbSettings& s) {
  if (s.pairs == 0) return fail(ErrorCode::invalid_argument, "pairs must be >= 1");
  if (!(s.alpha > 0 && s.alpha < 0.5))
    return fail(ErrorCode::invalid_argument, "alpha must be in (0, 0.5), e.g. 0.05");
  if (!(s.same_within > 0 && s.same_within < 1))
    return fail(ErrorCode::invalid_argument, "same-within must be in (0, 1), e.g. 0.02");
  if (auto ok = validate(s.confounds); !ok) return ok;
  PointSettings one = s.point;
  one.repeats = 1;
  return validate(one);
}

namespace {

Error on_side(Error e, const std::string& side) {
  e.message = side + ": " + e.message;
  return e;
}

// Each pair's order, "AB" or "BA", from the seed (splitmix64).
std::vector<std::string> pair_orders(uint64_t seed, uint32_t pairs) {
  std::vector<std::string> order;
  uint64_t state = seed;
  for (uint32_t i = 0; i < pairs; ++i) {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    order.push_back((z >> 63) ? "BA" : "AB");
  }
  return order;
}

uint64_t mix64(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace

DeviceSpec ab_run_spec(const DeviceSpec& spec, uint32_t pair) {
  if (spec.kind != "sim" || pair == 0) return spec;
  uint64_t base = 1;  // the sim's default seed
  if (auto it = spec.params.find("seed"); it != spec.params.end())
    if (auto n = parse_count(it->second)) base = *n;
  DeviceSpec run = spec;
  // Never fails: a sim spec takes any integer seed.
  (void)run.set("seed", std::to_string(mix64(base ^ mix64(pair))));
  return run;
}

namespace {

// Both sides on one device: loaded once, the runs continue on it.
Result<void> run_shared(AbResult& r, const DeviceOpener& open, const ModelSource& model) {
  auto device = open(r.a.spec);
  if (!device) return tl::unexpected(on_side(device.error(), "A"));
  std::optional<MonitoredRun> watch;
  watch.emplace(r.settings.monitor, **device, r.settings.point.observer);
  const PointSettings point = watch->watched(r.settings.point);
  r.device_a = r.device_b = (*device)->info();
  r.virtual_clock = (*device)->clock().is_virtual();
  r.depth_a = side_depth(r, r.device_a, r.a.depth, "A");
  r.depth_b = side_depth(r, r.device_a, r.b.depth, "B");
  auto cold = cold_start(**device, model, std::max(r.depth_a, r.depth_b), point.seed,
                         point.observer, point.inputs.get());
  if (!cold) return tl::unexpected(on_side(cold.error(), "A"));
  // The loaded model's queue may be smaller than the one stated before the
  // load (settle_depth_after_load): both sides are settled against it.
  if (const DeviceInfo loaded = (*device)->info(); loaded.queue_depth < r.device_a.queue_depth) {
    r.device_a.queue_depth = r.device_b.queue_depth = loaded.queue_depth;
    r.device_a.own_queue_depth = r.device_b.own_queue_depth = loaded.own_queue_depth;
    r.depth_a = side_depth(r, r.device_a, r.a.depth, "A");
    r.depth_b = side_depth(r, r.device_a, r.b.depth, "B");
  }
  r.model = (*device)->model_info();
  r.model.sha256 = model_sha256(model);  // after the cold start: never timed
  for (uint32_t i = 0; i < r.settings.pairs; ++i) {
    PointSettings p = point;
    p.seed = point.seed + i;
    const std::string pair = " (pair " + std::to_string(i + 1) + ")";
    double rate[2] = {0, 0};
    for (char side : r.order[i]) {
      const bool is_a = side == 'A';
      auto rs = one_run(**device, cold->workspace, is_a ? r.depth_a : r.depth_b, p,
                        std::string(1, side) + pair);
      if (!rs) return tl::unexpected(rs.error());
      rate[is_a ? 0 : 1] = *rs;
    }
    r.rates_a.push_back(rate[0]);
    r.rates_b.push_back(rate[1]);
  }
  r.monitor = watch->monitor().finish();
  watch.reset();    // before the device it watches
  device->reset();  // before the buffers it has bound
  return {};
}

// The sides differ in device spec: each run opens and loads its side's
// device afresh, because device settings can be process-wide (OpenCV's
// thread count) and hardware may take one handle at a time.
Result<void> run_fresh(AbResult& r, const DeviceOpener& open, const ModelSource& model) {
  const PointSettings& point = r.settings.point;
  bool seen_a = false, seen_b = false;
  for (uint32_t i = 0; i < r.settings.pairs; ++i) {
    for (char side_name : r.order[i]) {
      const int side = side_name == 'A' ? 0 : 1;
      const char* name = side == 0 ? "A" : "B";
      const AbConfig& config = side == 0 ? r.a : r.b;
      auto device = open(ab_run_spec(config.spec, i));
      if (!device) return tl::unexpected(on_side(device.error(), name));
      const DeviceInfo info = (*device)->info();
      uint32_t& depth = side == 0 ? r.depth_a : r.depth_b;
      if (!(side == 0 ? seen_a : seen_b)) {
        (side == 0 ? seen_a : seen_b) = true;
        (side == 0 ? r.device_a : r.device_b) = info;
        r.virtual_clock = r.virtual_clock || (*device)->clock().is_virtual();
        depth = side_depth(r, info, config.depth, name);
      }
      const uint32_t run_depth = std::min(depth, std::max<uint32_t>(1, info.queue_depth));
      const std::string run = std::string(name) + " (pair " + std::to_string(i + 1) + ")";
      std::optional<MonitoredRun> watch;
      watch.emplace(r.settings.monitor, **device, point.observer);
      PointSettings p = watch->watched(point);
      auto cold = cold_start(**device, model, run_depth, p.seed, p.observer, p.inputs.get());
      if (!cold) return tl::unexpected(on_side(cold.error(), name));
      if (r.model.name.empty()) {
        r.model = (*device)->model_info();
        r.model.sha256 = model_sha256(model);
      }
      p.seed = point.seed + i;
      auto rate = one_run(**device, cold->workspace, run_depth, p, run);
      if (!rate) return tl::unexpected(rate.error());
      (side == 0 ? r.rates_a : r.rates_b).push_back(*rate);
      append_run(r.monitor, watch->monitor().finish(), run);
      watch.reset();    // before the device it watches
      device->reset();  // before the buffers it has bound
    }
  }
  return {};
}

}  // namespace

void decide_ab(AbResult& r) {
  r.ratios.clear();
  for (size_t i = 0; i < r.rates_a.size(); ++i) r.ratios.push_back(r.rates_b[i] / r.rates_a[i]);
  r.rate_a = summarize(r.rates_a);
  r.rate_b = summarize(r.rates_b);
  r.ratio = summarize(r.ratios);
  const AbSettings& s = r.settings;
  const size_t n = std::min(r.rates_a.size(), r.rates_b.size());
  r.test = AbTest{};
  r.test.alpha = s.alpha;
  r.test.confidence = 1 - s.alpha;
  r.pairs_recommended.reset();
  if (n == 0) {
    r.verdict = AbVerdict::failed;
    r.verdict_text = "no pair ran";
    return;
  }
  const UTest u = mann_whitney_u(r.rates_a, r.rates_b);
  r.test.u = u.u;
  r.test.p_value = u.p_value;
  r.test.exact = u.exact;
  // The effect on a log scale, so that B/A and A/B are symmetric.
  std::vector<double> la, lb;
  for (double v : r.rates_a) la.push_back(std::log(v));
  for (double v : r.rates_b) lb.push_back(std::log(v));
  const ShiftEstimate hl = hodges_lehmann(la, lb, 1 - s.alpha);
  if (hl.estimate) r.test.ratio = std::exp(*hl.estimate);
  if (hl.lower) r.test.ratio_lower = std::exp(*hl.lower);
  if (hl.upper) r.test.ratio_upper = std::exp(*hl.upper);

  const std::string la_name = side_label("A", r.a), lb_name = side_label("B", r.b);
  const std::string interval = r.test.ratio_lower ? format_fixed(*r.test.ratio_lower, 4) + "-" +
                                                        format_fixed(*r.test.ratio_upper, 4)
                                                  : std::string("none (too few pairs)");
  const std::string stated = "B/A " + format_fixed(r.test.ratio.value_or(1), 4) + ", " +
                             format_fixed((1 - s.alpha) * 100, 0) + "% interval " + interval +
                             "; Mann-Whitney U = " + format_fixed(u.u, 1) +
                             ", p = " + format_fixed(u.p_value, 4) + " (alpha " +
                             format_fixed(s.alpha, 2) + ", " + std::to_string(n) + " pairs)";
  const double margin = std::log1p(s.same_within);
  const bool significant = u.p_value < s.alpha && hl.lower && (*hl.lower > 0 || *hl.upper < 0);
  const bool within = hl.lower && *hl.lower >= -margin && *hl.upper <= margin;
  if (significant) {
    const bool b_faster = *hl.lower > 0;
    r.verdict = b_faster ? AbVerdict::b_faster : AbVerdict::a_faster;
    const double by = std::exp(std::fabs(*hl.estimate)) - 1;
    const double lo = std::exp(b_faster ? *hl.lower : -*hl.upper) - 1;
    const double hi = std::exp(b_faster ? *hl.upper : -*hl.lower) - 1;
    // Significant but inside the margin: real, and too small to matter.
    const std::string negligible =
        within ? " (within +/-" + format_fixed(s.same_within * 100, 1) + "%: negligible)" : "";
    r.verdict_text = (b_faster ? lb_name : la_name) + " is faster: +" + format_fixed(by * 100, 2) +
                     "% frames/s" + negligible + " (interval +" + format_fixed(lo * 100, 2) +
                     "% to +" + format_fixed(hi * 100, 2) + "%; " + stated + ")";
    return;
  }
  if (within && u.p_value >= s.alpha) {
    r.verdict = AbVerdict::same;
    r.verdict_text = "same: no significant difference, and the effect's interval lies within +/-" +
                     format_fixed(s.same_within * 100, 1) + "% (" + stated + ")";
    return;
  }
  r.verdict = AbVerdict::ambiguous;
  // The interval's half-width shrinks as 1 / sqrt(pairs): the pairs that
  // would bring it inside the margin (same) or off 1 (different),
  // whichever comes first; at least google/benchmark's 9.
  uint32_t want = std::max<uint32_t>(kAbRecommendedPairs, static_cast<uint32_t>(n) + 1);
  if (hl.lower) {
    const double half = (*hl.upper - *hl.lower) / 2, d = std::fabs(*hl.estimate);
    double best = 1e9;
    if (d > 0) best = std::min(best, static_cast<double>(n) * std::pow(half / d, 2));
    if (margin > d)
      best = std::min(best, static_cast<double>(n) * std::pow(half / (margin - d), 2));
    if (best < 1e9)
      want = std::max(want, static_cast<uint32_t>(std::min(100000.0, std::ceil(best))));
  }
  r.pairs_recommended = want;
  r.verdict_text = "ambiguous: neither a significant difference nor an interval within +/-" +
                   format_fixed(s.same_within * 100, 1) + "% (" + stated + "); about " +
                   std::to_string(want) + " pairs would likely resolve it: raise --pairs";
}

Result<AbResult> run_ab(const DeviceOpener& open, const ModelSource& model, const AbConfig& a,
                        const AbConfig& b, const AbSettings& s) {
  if (auto ok = validate(s); !ok) return tl::unexpected(ok.error());
  AbResult r;
  r.a = a;
  r.b = b;
  r.settings = s;
  r.settings.point.repeats = 1;
  r.environment = collect_environment();
  r.model_path = model_origin(model);
  r.shared_device = a.spec.text() == b.spec.text();
  r.order = pair_orders(s.order_seed, s.pairs);
  auto ran = r.shared_device ? run_shared(r, open, model) : run_fresh(r, open, model);
  if (!ran) return tl::unexpected(ran.error());
  decide_ab(r);
  r.monitor.energy.reason = "unavailable: rig ab states no energy figure (rig bench does)";
  if (!r.shared_device)
    r.notes.push_back(
        "the sides differ in device spec: each run opened and loaded its device "
        "afresh (load time is not measured)");
  if (!r.shared_device && (a.spec.kind == "sim" || b.spec.kind == "sim"))
    r.notes.push_back(
        "each run of a sim side opened the sim with its own seed (pair 1: the spec's seed; "
        "pair k: one derived from it and k), so that a side's runs are independent draws, "
        "not one jitter sequence replayed");
  if (r.virtual_clock) r.notes.push_back(kVirtualClockNote);
  r.judgement = judge(r);
  return r;
}

// ---------------------------------------------------------------------------
// The verdict: enough pairs, a resolved answer, each device's confounds.

namespace {

RuleOutcome enough_pairs(size_t pairs, double alpha) {
  const uint32_t least = ab_min_pairs(alpha);
  RuleOutcome o = outcome("enough_pairs", Severity::invalidates,
                          std::to_string(pairs) + " pairs; the U test reaches alpha " +
                              format_fixed(alpha, 2) + " from " + std::to_string(least));
  if (pairs < least)
    finding(o, "insufficient data: " + std::to_string(pairs) +
                   " pair(s); the Mann-Whitney U test cannot reach alpha " +
                   format_fixed(alpha, 2) + " with fewer than " + std::to_string(least) +
                   " (google/benchmark recommends at least " + std::to_string(kAbRecommendedPairs) +
                   "); raise --pairs");
  return o;
}

RuleOutcome ab_resolved(const AbResult& r) {
  RuleOutcome o =
      outcome("ab_resolved", Severity::warns, "verdict " + std::string(to_string(r.verdict)));
  if (r.verdict == AbVerdict::ambiguous)
    finding(o, "the A/B result is ambiguous" +
                   (r.pairs_recommended ? ": about " + std::to_string(*r.pairs_recommended) +
                                              " pairs would likely resolve it (raise --pairs)"
                                        : std::string()));
  return o;
}

}  // namespace

Verdict judge(const AbResult& r) {
  Verdict v;
  v.add(depth_within_queue(r.depth_notes));
  v.add(enough_pairs(r.ratios.size(), r.settings.alpha));
  v.add(ab_resolved(r));
  v.add(quiet_host(r.environment, r.virtual_clock));
  if (r.shared_device) {
    v.add(device_without_warnings(r.device_a));
  } else {
    v.add(device_without_warnings(r.device_a, "device_a_without_warnings", "device A: "));
    v.add(device_without_warnings(r.device_b, "device_b_without_warnings", "device B: "));
  }
  v.add(real_clock(r.virtual_clock, kVirtualClockNote));
  if (r.shared_device) {
    v.add(clock_across_link(r.device_a, nullptr));
  } else {
    v.add(clock_across_link(r.device_a, nullptr, "clock_across_link_a", "device A: "));
    v.add(clock_across_link(r.device_b, nullptr, "clock_across_link_b", "device B: "));
  }
  add_environment_confounds(v, r.environment, r.virtual_clock, r.settings.confounds.strict);
  add_confound_rules(v, confound_inputs(r.monitor, r.settings.confounds, r.environment, r.device_a,
                                        r.virtual_clock));
  return v;
}

}  // namespace rig

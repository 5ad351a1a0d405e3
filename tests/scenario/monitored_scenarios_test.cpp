// The monitor beside rig loop, ladder, sweep, sweep --rate and ab (issue 10): on the sim,
// a scripted contention series raises host_contention in each verdict and a
// quiet one does not; --no-monitor skips the rule and saying why; a device
// warning raised through the dynamic channel reaches the verdict; the JSON
// carries the record and the settings; ab's fresh sides join their runs'
// records in order.
#include <gtest/gtest.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "rig/model.hpp"
#include "rig/report/ab_report.hpp"
#include "rig/report/ladder_report.hpp"
#include "rig/report/loop_report.hpp"
#include "rig/report/sweep_report.hpp"
#include "rig/scenario/ab.hpp"
#include "rig/scenario/ladder.hpp"
#include "rig/scenario/loop.hpp"
#include "rig/scenario/rate_search.hpp"
#include "rig/scenario/sweep.hpp"

namespace rig {
namespace {

using namespace std::chrono_literals;
using Script = std::vector<std::map<std::string, double>>;

const Script kBusy = {{{"others_cpu", 0.6}}};
const Script kQuiet = {{{"others_cpu", 0.01}}};
const char* kSim = "sim:compute=1ms,depth=4";

ModelSource small_model() {
  TransportSpec spec;
  spec.frame = {8, 8};
  auto bytes = build_transport_model(spec);
  EXPECT_TRUE(bytes.has_value());
  ModelSource m;
  m.bytes = bytes.value_or(std::vector<std::byte>{});
  m.name = "t8";
  return m;
}

// The monitor settings with `script` as an extra source; off when `off`.
MonitorSettings monitor(const Script& script, bool off = false) {
  MonitorSettings m;
  m.enabled = !off;
  m.extra_sources = [script] {
    std::vector<std::unique_ptr<MonitorSource>> v;
    v.push_back(std::make_unique<ScriptedSource>("script", script));
    return v;
  };
  return m;
}

PointSettings quick_point() {
  PointSettings p;
  p.duration = 200ms;
  p.repeats = 1;
  p.min_inferences = 10;
  return p;
}

std::unique_ptr<Device> sim(const std::string& spec = kSim) {
  auto device = open_device(spec);
  EXPECT_TRUE(device.has_value()) << spec;
  return device ? std::move(*device) : nullptr;
}

const RuleOutcome& rule(const Verdict& v, std::string_view name) {
  auto it = std::find_if(v.rules.begin(), v.rules.end(),
                         [&](const RuleOutcome& r) { return r.rule == name; });
  EXPECT_NE(it, v.rules.end()) << name;
  static RuleOutcome none;
  return it == v.rules.end() ? none : *it;
}

LoopResult loop(const Script& script, bool off = false, const std::string& spec = kSim) {
  LoopSettings s;
  s.device = spec;
  s.point = quick_point();
  s.monitor = monitor(script, off);
  auto device = sim(spec);
  auto r = run_loop(*device, small_model(), s);
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().to_string());
  return r ? *r : LoopResult{};
}

LadderResult ladder(const Script& script, bool off = false) {
  LadderSettings s;
  s.sizes = {"64x64", "128x128"};
  s.point = quick_point();
  s.latency_samples = 5;
  s.monitor = monitor(script, off);
  auto device = sim();
  auto r = run_ladder(*device, s);
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().to_string());
  return r ? *r : LadderResult{};
}

SweepResult sweep(const Script& script, bool off = false) {
  SweepSettings s;
  s.min_depth = 1;
  s.max_depth = 4;
  s.refine = false;
  s.latency_samples = 5;
  s.point = quick_point();
  s.monitor = monitor(script, off);
  auto device = sim();
  auto r = run_sweep(*device, small_model(), s);
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().to_string());
  return r ? *r : SweepResult{};
}

RateSweepResult rate_sweep(const Script& script, bool off = false, bool strict = false) {
  RateSweepSettings s;
  s.min_rate = 100;
  s.max_rate = 2000;
  s.latency_bound = 20ms;
  s.max_probes = 4;
  s.latency_samples = 5;
  s.point = quick_point();
  s.monitor = monitor(script, off);
  s.confounds.strict = strict;
  auto device = sim();
  auto r = run_rate_sweep(*device, small_model(), s);
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().to_string());
  return r ? *r : RateSweepResult{};
}

Result<std::unique_ptr<Device>> open_parsed(const DeviceSpec& spec) {
  return open_device(spec);
}

// Same spec on both sides: one shared device; a knob that changes the spec:
// each run opens its side afresh.
AbResult ab(const Script& script, std::vector<std::string> b_knobs, bool off = false,
            const std::string& spec = kSim) {
  AbConfig base;
  auto parsed = parse_device_spec(spec);
  EXPECT_TRUE(parsed.has_value());
  base.spec = parsed.value_or(DeviceSpec{});
  auto a = apply_knobs(base, {});
  auto b = apply_knobs(base, b_knobs);
  EXPECT_TRUE(a && b);
  AbSettings s;
  s.pairs = 4;
  s.point = quick_point();
  s.monitor = monitor(script, off);
  auto r = run_ab(open_parsed, small_model(), *a, *b, s);
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().to_string());
  return r ? *r : AbResult{};
}

TEST(MonitoredScenarios, LoopRaisesContentionOnlyOnABusySeries) {
  const LoopResult busy = loop(kBusy);
  EXPECT_FALSE(rule(busy.verdict, "host_contention").met);
  EXPECT_TRUE(rule(loop(kQuiet).verdict, "host_contention").met);
  // The device loop is the first measured part, the pipelined run the second.
  bool loop_sampled = false, run_sampled = false;
  for (const auto& s : busy.monitor.samples) {
    loop_sampled |= s.phase == "device_loop" && s.repeat == 1;
    run_sampled |= s.phase == "measure" && s.repeat == 2;
  }
  EXPECT_TRUE(loop_sampled);
  EXPECT_TRUE(run_sampled);
  const auto doc = nlohmann::json::parse(loop_to_json(busy));
  EXPECT_TRUE(doc["monitor"]["enabled"].get<bool>());
  EXPECT_FALSE(doc["monitor"]["host_sampled"].get<bool>());  // a virtual clock
  EXPECT_TRUE(doc["settings"]["effective"]["confounds"].contains("others_cpu_max"));
  const std::string text = format_loop_text(busy);
  EXPECT_NE(text.find("host_contention"), std::string::npos) << text;
  EXPECT_LT(text.find("confounds:"), text.find("device loop")) << text;
}

TEST(MonitoredScenarios, LoopReadsTheDevicesWarningsAfterItsOwnLoop) {
  const LoopResult r = loop({}, false, "sim:compute=1ms,depth=4,warn=firmware 1.2 is old");
  EXPECT_FALSE(rule(r.verdict, "device_warnings").met);
}

TEST(MonitoredScenarios, NoMonitorSkipsTheRuleAndSaysWhy) {
  const LoopResult r = loop(kBusy, true);
  const RuleOutcome& o = rule(r.verdict, "host_contention");
  EXPECT_TRUE(o.met);
  EXPECT_NE(o.evidence.find("--no-monitor"), std::string::npos) << o.evidence;
  EXPECT_TRUE(r.monitor.samples.empty());
  const SweepResult s = sweep(kBusy, true);
  EXPECT_NE(rule(s.verdict, "host_contention").evidence.find("--no-monitor"), std::string::npos);
}

TEST(MonitoredScenarios, LadderRaisesContentionOnlyOnABusySeries) {
  const LadderResult busy = ladder(kBusy);
  EXPECT_FALSE(rule(busy.verdict, "host_contention").met);
  EXPECT_TRUE(rule(ladder(kQuiet).verdict, "host_contention").met);
  // One measured part per rung: an in-heavy and an out-heavy rung per size.
  uint32_t repeats = 0;
  for (const auto& s : busy.monitor.samples) repeats = std::max(repeats, s.repeat);
  EXPECT_EQ(repeats, 4u);
  const auto doc = nlohmann::json::parse(ladder_to_json(busy));
  EXPECT_FALSE(doc["monitor"]["samples"].empty());
  EXPECT_TRUE(doc["settings"]["requested"]["monitor"]["enabled"].get<bool>());
  EXPECT_NE(format_ladder_text(busy).find("host_contention"), std::string::npos);
}

TEST(MonitoredScenarios, SweepRaisesContentionOnlyOnABusySeries) {
  const SweepResult busy = sweep(kBusy);
  EXPECT_FALSE(rule(busy.verdict, "host_contention").met);
  EXPECT_TRUE(rule(sweep(kQuiet).verdict, "host_contention").met);
  uint32_t repeats = 0;
  for (const auto& s : busy.monitor.samples) repeats = std::max(repeats, s.repeat);
  EXPECT_EQ(repeats, busy.points.size());  // one measured part per depth
  const auto doc = nlohmann::json::parse(sweep_to_json(busy));
  EXPECT_FALSE(doc["monitor"]["samples"].empty());
  EXPECT_NE(format_sweep_text(busy).find("host_contention"), std::string::npos);
}

TEST(MonitoredScenarios, RateSweepRaisesContentionOnlyOnABusySeries) {
  const RateSweepResult busy = rate_sweep(kBusy);
  ASSERT_GE(busy.search.probes.size(), 2u);
  EXPECT_FALSE(rule(busy.verdict, "host_contention").met);
  EXPECT_EQ(rule(busy.verdict, "host_contention").severity, Severity::warns);
  EXPECT_TRUE(busy.verdict.valid);  // a confound warns unless strict
  EXPECT_TRUE(rule(rate_sweep(kQuiet).verdict, "host_contention").met);
  uint32_t repeats = 0;
  for (const auto& s : busy.monitor.samples) repeats = std::max(repeats, s.repeat);
  EXPECT_EQ(repeats, busy.search.probes.size());  // one measured part per probe
  const auto doc = nlohmann::json::parse(rate_sweep_to_json(busy));
  EXPECT_FALSE(doc["monitor"]["samples"].empty());
  EXPECT_TRUE(doc["settings"]["effective"]["monitor"]["enabled"].get<bool>());
  EXPECT_TRUE(doc["settings"]["effective"]["confounds"].contains("others_cpu_max"));
  EXPECT_EQ(doc["monitor"]["energy"]["reason"],
            "unavailable: rig sweep states no energy figure (rig bench does)");
  const std::string text = format_rate_sweep_text(busy);
  EXPECT_LT(text.find("confounds:"), text.find("lone frame")) << text;  // at the top
  EXPECT_NE(text.find("host_contention"), std::string::npos) << text;

  const RateSweepResult off = rate_sweep(kBusy, true);
  EXPECT_TRUE(off.monitor.samples.empty());
  EXPECT_TRUE(rule(off.verdict, "host_contention").met);
  EXPECT_NE(rule(off.verdict, "host_contention").evidence.find("--no-monitor"), std::string::npos);

  const RateSweepResult strict = rate_sweep(kBusy, false, true);
  EXPECT_FALSE(strict.verdict.valid);
  EXPECT_EQ(rule(strict.verdict, "host_contention").severity, Severity::invalidates);

  RateSweepSettings bad;
  bad.confounds.others_cpu_max = -1;
  auto refused = validate(bad);
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.error().message.find("others"), std::string::npos) << refused.error().message;
}

TEST(MonitoredScenarios, AbOnOneSharedDeviceIsWatchedThroughout) {
  const AbResult busy = ab(kBusy, {"depth=2"});
  ASSERT_TRUE(busy.shared_device);
  EXPECT_FALSE(rule(busy.judgement, "host_contention").met);
  EXPECT_TRUE(rule(ab(kQuiet, {"depth=2"}).judgement, "host_contention").met);
  uint32_t repeats = 0;
  for (const auto& s : busy.monitor.samples) repeats = std::max(repeats, s.repeat);
  EXPECT_EQ(repeats, 8u);  // 4 pairs, two runs each
  const auto doc = nlohmann::json::parse(ab_to_json(busy));
  EXPECT_FALSE(doc["monitor"]["samples"].empty());
  EXPECT_TRUE(doc["settings"]["confounds"].contains("strict"));
  EXPECT_NE(format_ab_text(busy).find("host_contention"), std::string::npos);
}

TEST(MonitoredScenarios, AbWithFreshSidesJoinsEachRunsRecordInOrder) {
  const AbResult r = ab(kBusy, {"compute=2ms"}, false, "sim:compute=1ms,depth=4,warn=fw old");
  ASSERT_FALSE(r.shared_device);
  EXPECT_FALSE(rule(r.judgement, "host_contention").met);
  // Eight runs, each one measured part, numbered in order; times never go back.
  uint32_t repeats = 0;
  double last_t = 0;
  for (const auto& s : r.monitor.samples) {
    EXPECT_GE(s.repeat, repeats);
    repeats = std::max(repeats, s.repeat);
    EXPECT_GE(s.t_s, last_t);
    last_t = s.t_s;
  }
  EXPECT_EQ(repeats, 8u);
  // Every run's device raised the warning; each names its run.
  ASSERT_FALSE(r.monitor.device_warnings.empty());
  EXPECT_EQ(
      r.monitor.device_warnings.front().when.rfind(r.order[0].substr(0, 1) + " (pair 1), ", 0), 0u)
      << r.monitor.device_warnings.front().when;
  EXPECT_FALSE(rule(r.judgement, "device_warnings").met);
}

TEST(MonitoredScenarios, AStrictConfoundInvalidatesEveryScenario) {
  LoopSettings s;
  s.device = kSim;
  s.point = quick_point();
  s.monitor = monitor(kBusy);
  s.confounds.strict = true;
  auto device = sim();
  auto r = run_loop(*device, small_model(), s);
  ASSERT_TRUE(r.has_value());
  EXPECT_FALSE(r->verdict.valid);
  EXPECT_EQ(rule(r->verdict, "host_contention").severity, Severity::invalidates);
}

TEST(MonitoredScenarios, BadThresholdsAreRefusedByName) {
  SweepSettings s;
  s.confounds.others_cpu_max = -1;
  auto ok = validate(s);
  ASSERT_FALSE(ok.has_value());
  EXPECT_NE(ok.error().message.find("others"), std::string::npos) << ok.error().message;
}

}  // namespace
}  // namespace rig

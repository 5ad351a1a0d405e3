// The confound rules: each raised on a scripted series (a sim whose compute
// grows, a scripted contention series, a scripted clock drop, a warning
// injected through the device interface) and not raised on a clean one;
// warnings unless --strict-confounds; host rules skipped on virtual clocks.
// rig soak recovers a scripted slowdown as drift.
#include <gtest/gtest.h>

#include <algorithm>

#include "rig/model.hpp"
#include "rig/report/bench_report.hpp"
#include "rig/report/soak_report.hpp"
#include "rig/scenario/bench.hpp"
#include "rig/scenario/confounds.hpp"
#include "rig/scenario/soak.hpp"
#include "rig/scenario/verdict.hpp"

namespace rig {
namespace {

using namespace std::chrono_literals;

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

using Script = std::vector<std::map<std::string, double>>;

BenchSettings quick(const std::string& spec, Script script = {}) {
  BenchSettings s;
  s.device = spec;
  s.point.duration = 1s;
  s.point.repeats = 1;
  s.point.min_inferences = 10;
  s.latency_samples = 20;
  if (!script.empty())
    s.monitor.extra_sources = [script] {
      std::vector<std::unique_ptr<MonitorSource>> v;
      v.push_back(std::make_unique<ScriptedSource>("script", script));
      return v;
    };
  return s;
}

BenchResult bench(const BenchSettings& s) {
  auto device = open_device(s.device);
  EXPECT_TRUE(device.has_value()) << s.device;
  auto r = run_bench(**device, small_model(), s);
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().to_string());
  return r ? *r : BenchResult{};
}

const RuleOutcome& rule(const Verdict& v, std::string_view name) {
  auto it = std::find_if(v.rules.begin(), v.rules.end(),
                         [&](const RuleOutcome& r) { return r.rule == name; });
  EXPECT_NE(it, v.rules.end()) << name;
  static RuleOutcome none;
  return it == v.rules.end() ? none : *it;
}

bool raised(const BenchResult& r, std::string_view name) {
  return !rule(r.verdict, name).met;
}

const char* kClean = "sim:compute=1ms,depth=4";

TEST(Confounds, NoneRaisedOnACleanSimRunAndHostRulesSayWhyTheyAreSkipped) {
  const BenchResult r = bench(quick(kClean));
  for (const char* name : {"host_contention", "steal_time", "thermal_drift", "clock_drop",
                           "power_limited", "device_warnings", "cold_caches", "shared_link",
                           "device_throttled", "debug_build", "cpu_governor"}) {
    const RuleOutcome& o = rule(r.verdict, name);
    EXPECT_TRUE(o.met) << name << ": " << (o.findings.empty() ? "" : o.findings[0]);
    EXPECT_EQ(o.severity, Severity::warns) << name;
    EXPECT_FALSE(o.threshold.empty()) << name;
  }
  for (const char* host : {"host_contention", "steal_time", "shared_link"})
    EXPECT_NE(rule(r.verdict, host).evidence.find("skipped: virtual clock"), std::string::npos)
        << host << ": " << rule(r.verdict, host).evidence;
  EXPECT_TRUE(r.verdict.valid);
}

TEST(Confounds, HostContentionFromAScriptedSeries) {
  EXPECT_TRUE(raised(bench(quick(kClean, {{{"others_cpu", 0.6}, {"psi_cpu_some", 1}}})),
                     "host_contention"));
  EXPECT_TRUE(raised(bench(quick(kClean, {{{"psi_io_some", 40}}})), "host_contention"));
  const BenchResult quiet = bench(quick(kClean, {{{"others_cpu", 0.01}, {"psi_cpu_some", 1}}}));
  EXPECT_FALSE(raised(quiet, "host_contention"));
  EXPECT_NE(rule(quiet.verdict, "host_contention").evidence.find("others' CPU 1.0%"),
            std::string::npos)
      << rule(quiet.verdict, "host_contention").evidence;
}

TEST(Confounds, AConfoundWarnsUnlessStrict) {
  BenchSettings s = quick(kClean, {{{"others_cpu", 0.6}}});
  const BenchResult warned = bench(s);
  EXPECT_TRUE(warned.verdict.valid);
  EXPECT_EQ(rule(warned.verdict, "host_contention").severity, Severity::warns);
  s.confounds.strict = true;
  const BenchResult strict = bench(s);
  EXPECT_FALSE(strict.verdict.valid);
  EXPECT_EQ(rule(strict.verdict, "host_contention").severity, Severity::invalidates);
  ASSERT_FALSE(strict.verdict.reasons.empty());
  EXPECT_NE(strict.verdict.reasons[0].find("host contention"), std::string::npos);
}

TEST(Confounds, StealTime) {
  EXPECT_TRUE(raised(bench(quick(kClean, {{{"steal", 0.10}}})), "steal_time"));
  EXPECT_FALSE(raised(bench(quick(kClean, {{{"steal", 0.001}}})), "steal_time"));
}

TEST(Confounds, ThermalDriftFromGrowingComputeOrRisingTemperature) {
  const BenchResult drifting = bench(quick("sim:compute=1ms,depth=4,drift=0.2"));
  EXPECT_TRUE(raised(drifting, "thermal_drift"));
  EXPECT_NE(rule(drifting.verdict, "thermal_drift").findings[0].find("rate drifted -"),
            std::string::npos);
  EXPECT_TRUE(
      raised(bench(quick("sim:compute=1ms,depth=4,temp=40:60,sensor_step=1s")), "thermal_drift"));
  EXPECT_FALSE(
      raised(bench(quick("sim:compute=1ms,depth=4,temp=50:51,sensor_step=1s")), "thermal_drift"));
}

// Issue 27, item 7: the drift rule names the direction and the shape of the
// change, and names heating only where a temperature or clock reading
// supports it; beside another client of the device it blames the sharing.
TEST(Confounds, DriftNamesItsDirectionAndHeatingOnlyWithAReading) {
  constexpr auto npos = std::string::npos;
  // Compute grows: the rate falls as a trend; nothing read supports heating.
  const BenchResult falling = bench(quick("sim:compute=1ms,depth=4,drift=0.2"));
  const RuleOutcome& f = rule(falling.verdict, "thermal_drift");
  ASSERT_FALSE(f.met);
  EXPECT_NE(f.findings[0].find("rate drifted -"), npos) << f.findings[0];
  EXPECT_EQ(f.findings[0].find("heating"), npos) << f.findings[0];
  EXPECT_NE(f.findings[0].find("no temperature, clock, contention or sharing reading"), npos)
      << f.findings[0];
  // The same fall beside a temperature rising 2 C (below temp_rise_max):
  // heating is named, with the reading.
  const BenchResult hot =
      bench(quick("sim:compute=1ms,depth=4,drift=0.2,temp=40:41:42:43,sensor_step=250ms"));
  const RuleOutcome& h = rule(hot.verdict, "thermal_drift");
  ASSERT_FALSE(h.met);
  EXPECT_NE(h.findings[0].find("heating"), npos) << h.findings[0];
  EXPECT_NE(h.findings[0].find("device:temperature_c rose"), npos) << h.findings[0];
  // The rate rises (compute 0.8x from 1 s) under host contention: "+", the
  // contention, not heating; filed under host_contention, not thermal_drift
  // (issue 38, item 7).
  BenchSettings up =
      quick("sim:compute=1ms,depth=4,slow_at=1s,slow_factor=0.8", {{{"others_cpu", 0.6}}});
  up.point.duration = 2s;
  const BenchResult rising = bench(up);
  const RuleOutcome& r = rule(rising.verdict, "thermal_drift");
  EXPECT_TRUE(r.met) << (r.findings.empty() ? "" : r.findings[0]);
  EXPECT_NE(r.evidence.find("rate stepped +"), npos) << r.evidence;
  EXPECT_NE(r.evidence.find("host contention (other processes' CPU 60.0%"), npos) << r.evidence;
  EXPECT_NE(r.evidence.find("host_contention, steal_time) explain it"), npos) << r.evidence;
  EXPECT_EQ(r.evidence.find("heating"), npos) << r.evidence;
  EXPECT_TRUE(raised(rising, "host_contention"));
  // Two clients on one server: the sharing rule explains it, drift is not blamed.
  Script shared;
  for (double n = 0; n < 40; ++n)
    shared.push_back({{"device:server.other_requests", 10 * n},
                      {"device:server.model_reloads", 0},
                      {"device:server.other_connections", 1}});
  const BenchResult other = bench(quick("sim:compute=1ms,depth=4,drift=0.2", shared));
  const RuleOutcome& o = rule(other.verdict, "thermal_drift");
  EXPECT_TRUE(o.met) << (o.findings.empty() ? "" : o.findings[0]);
  EXPECT_NE(o.evidence.find("device_shared) explains it"), npos) << o.evidence;
  EXPECT_TRUE(raised(other, "device_shared"));
}

// A -20% step is a step at a window, not a trend.
TEST(Confounds, AStepIsDescribedAsAStep) {
  BenchSettings s = quick("sim:compute=1ms,depth=4,slow_at=1s,slow_factor=1.25");
  s.point.duration = 2s;
  const BenchResult step = bench(s);
  const RuleOutcome& o = rule(step.verdict, "thermal_drift");
  ASSERT_FALSE(o.met) << o.evidence;
  EXPECT_NE(o.findings[0].find("rate stepped -"), std::string::npos) << o.findings[0];
  EXPECT_EQ(o.findings[0].find("drifted"), std::string::npos) << o.findings[0];
}

TEST(Confounds, ClockDropFromAScriptedClockOrThrottleCounter) {
  EXPECT_TRUE(raised(bench(quick("sim:compute=1ms,depth=4,clock_mhz=1000:600,sensor_step=1s")),
                     "clock_drop"));
  EXPECT_FALSE(raised(bench(quick("sim:compute=1ms,depth=4,clock_mhz=1000:900,sensor_step=1s")),
                      "clock_drop"));
  // Scripted per sample: start, warm-up... the counter rises within the measured part.
  EXPECT_TRUE(raised(bench(quick(kClean, {{{"throttle_events", 0}},
                                          {{"throttle_events", 0}},
                                          {{"throttle_events", 0}},
                                          {{"throttle_events", 5}}})),
                     "clock_drop"));
  EXPECT_FALSE(raised(bench(quick(kClean, {{{"throttle_events", 7}}})), "clock_drop"));
}

TEST(Confounds, DeviceWarningsThroughTheDynamicChannel) {
  const BenchResult usb = bench(quick(
      "sim:compute=1ms,depth=4,warn=USB-C source electrical current advertised: 1.5A. The module "
      "may run in reduced-performance mode"));
  EXPECT_TRUE(raised(usb, "power_limited"));
  EXPECT_FALSE(raised(usb, "device_warnings"));
  const std::string& f = rule(usb.verdict, "power_limited").findings.at(0);
  EXPECT_NE(f.find("1.5A"), std::string::npos);
  EXPECT_NE(f.find("the runtime's own warning, not a power reading"), std::string::npos);
  EXPECT_NE(f.find("after load"), std::string::npos);
  const BenchResult other = bench(quick("sim:compute=1ms,depth=4,warn=firmware 1.2 is old"));
  EXPECT_TRUE(raised(other, "device_warnings"));
  EXPECT_FALSE(raised(other, "power_limited"));
}

// HailoRT's own words for a throttling notification (device_common/device.cpp,
// 5.2.0), carried by the sim's scripted warning.
TEST(Confounds, DeviceThrottledFromHailoRTsThrottlingLine) {
  const BenchResult hot =
      bench(quick("sim:compute=1ms,depth=4,warn=Device 127.0.0.9 throttling state is now: "
                  "THROTTLING_HEAVY"));
  EXPECT_TRUE(raised(hot, "device_throttled"));
  EXPECT_FALSE(raised(hot, "device_warnings"));
  EXPECT_FALSE(raised(hot, "power_limited"));
  const std::string& f = rule(hot.verdict, "device_throttled").findings.at(0);
  EXPECT_NE(f.find("THROTTLING_HEAVY"), std::string::npos) << f;
  const BenchResult cool = bench(quick(
      "sim:compute=1ms,depth=4,warn=Device 127.0.0.9 throttling state is now: THROTTLING_NONE"));
  EXPECT_FALSE(raised(cool, "device_throttled"));
  EXPECT_FALSE(raised(cool, "device_warnings"));
  EXPECT_NE(rule(cool.verdict, "device_throttled").evidence.find("1 back to THROTTLING_NONE"),
            std::string::npos)
      << rule(cool.verdict, "device_throttled").evidence;
  EXPECT_FALSE(raised(bench(quick(kClean)), "device_throttled"));
}

TEST(Confounds, ColdCaches) {
  // Cold until 0.5 s of virtual time (compute x 2), then warm; no warm-up at all.
  const std::string cold = "sim:compute=2ms,depth=4,first=200ms,slow_at=500ms,slow_factor=0.5";
  BenchSettings s = quick(cold);
  s.point.warmup_max = 0s;
  s.latency_samples = 1;
  EXPECT_TRUE(raised(bench(s), "cold_caches"));
  // The warm-up outlasts the cold state.
  s.point.warmup_max = 5s;
  EXPECT_FALSE(raised(bench(s), "cold_caches"));
  // An expensive first inference alone, the windows steady.
  EXPECT_FALSE(raised(bench(quick("sim:compute=1ms,depth=4,first=500ms")), "cold_caches"));
  EXPECT_FALSE(raised(bench(quick(kClean)), "cold_caches"));
}

// Cumulative link counters, one entry per sample: rig's bytes and others' growing.
Script link_script(double other_per_sample, double rig_per_sample) {
  Script s;
  for (int i = 0; i < 100; ++i)
    s.push_back(
        {{"link_other_bytes", i * other_per_sample}, {"link_rig_bytes", i * rig_per_sample}});
  return s;
}

TEST(Confounds, SharedLink) {
  EXPECT_TRUE(raised(bench(quick(kClean, link_script(5e6, 1e6))), "shared_link"));
  EXPECT_FALSE(raised(bench(quick(kClean, link_script(1e3, 1e6))), "shared_link"));
}

// A unix socket crosses no interface: the other traffic is what the server
// moved on its other connections (server.other_link_bytes).
TEST(Confounds, SharedLinkOnAUnixSocketReadsTheServersOtherConnections) {
  auto unix_script = [](double other_per_sample, double rig_per_sample) {
    Script s;
    for (int i = 0; i < 100; ++i)
      s.push_back({{"device:server.other_link_bytes", i * other_per_sample},
                   {"link_rig_bytes", i * rig_per_sample}});
    return s;
  };
  EXPECT_TRUE(raised(bench(quick(kClean, unix_script(5e6, 1e6))), "shared_link"));
  EXPECT_FALSE(raised(bench(quick(kClean, unix_script(1e3, 1e6))), "shared_link"));
}

// The loads a scenario makes itself (a ladder's model per size) are not
// sharing: the server counts a connection's own loads, and only the rest
// are others' reloads, which invalidate without --strict-confounds and say
// why.
TEST(Confounds, DeviceSharedLeavesTheRunsOwnLoadsOut) {
  auto series = [](double reloads_per_sample, double own_per_sample) {
    Script s;
    for (int i = 0; i < 64; ++i)
      s.push_back({{"device:server.model_reloads", reloads_per_sample * i},
                   {"device:server.own_model_loads", own_per_sample * i},
                   {"device:server.other_requests", 0},
                   {"device:server.other_connections", 0}});
    return s;
  };
  const BenchResult own = bench(quick(kClean, series(1, 1)));
  const RuleOutcome& o = rule(own.verdict, "device_shared");
  EXPECT_TRUE(o.met) << o.evidence;
  EXPECT_NE(o.evidence.find("0 model reloads by others"), std::string::npos) << o.evidence;
  const BenchResult others = bench(quick(kClean, series(2, 1)));
  const RuleOutcome& x = rule(others.verdict, "device_shared");
  ASSERT_FALSE(x.met);
  EXPECT_EQ(x.severity, Severity::invalidates);
  EXPECT_NE(x.findings.at(0).find("invalid without --strict-confounds"), std::string::npos)
      << x.findings.at(0);
  EXPECT_FALSE(others.verdict.valid);
}

// The server's counters, as a remote device reads them at every window:
// others' requests during the run warn; model reloads invalidate; a device
// not behind rig serve has no counters and the rule says so.
TEST(Confounds, DeviceSharedFromTheServersCounters) {
  auto series = [](double reloads_per_sample, double requests_per_sample) {
    Script s;
    for (int i = 0; i < 64; ++i)
      s.push_back({{"device:server.model_reloads", reloads_per_sample * i},
                   {"device:server.other_requests", requests_per_sample * i},
                   {"device:server.other_connections", 1}});
    return s;
  };
  const BenchResult shared = bench(quick(kClean, series(0, 10)));
  const RuleOutcome& o = rule(shared.verdict, "device_shared");
  ASSERT_FALSE(o.met) << o.evidence;
  EXPECT_EQ(o.severity, Severity::warns);
  EXPECT_NE(o.findings.at(0).find("device shared with 1 other client; 0 model reloads"),
            std::string::npos)
      << o.findings.at(0);
  EXPECT_TRUE(shared.verdict.valid);
  const BenchResult reloaded = bench(quick(kClean, series(1, 10)));
  EXPECT_FALSE(rule(reloaded.verdict, "device_shared").met);
  EXPECT_EQ(rule(reloaded.verdict, "device_shared").severity, Severity::invalidates);
  EXPECT_FALSE(reloaded.verdict.valid);
  EXPECT_TRUE(rule(bench(quick(kClean, series(0, 0))).verdict, "device_shared").met);
  const BenchResult alone = bench(quick(kClean));
  const RuleOutcome& none = rule(alone.verdict, "device_shared");
  EXPECT_TRUE(none.met);
  EXPECT_NE(none.evidence.find("not a device behind rig serve"), std::string::npos)
      << none.evidence;
}

TEST(Confounds, BuildAndGovernorFromTheEnvironmentOnRealClocksOnly) {
  BenchResult r;
  r.environment.facts = {{"build_type", "debug"}, {"cpu_governor", "powersave"}};
  r.monitor.enabled = true;
  r.monitor.host_sampled = true;
  Verdict v = judge(r);
  EXPECT_FALSE(rule(v, "debug_build").met);
  EXPECT_FALSE(rule(v, "cpu_governor").met);
  r.environment.facts = {{"build_type", "release"}, {"cpu_governor", "performance"}};
  v = judge(r);
  EXPECT_TRUE(rule(v, "debug_build").met);
  EXPECT_TRUE(rule(v, "cpu_governor").met);
  r.environment.facts = {{"build_type", "debug"}, {"cpu_governor", "powersave"}};
  r.virtual_clock = true;
  v = judge(r);
  EXPECT_TRUE(rule(v, "debug_build").met);
  EXPECT_NE(rule(v, "cpu_governor").evidence.find("skipped: virtual clock"), std::string::npos);
}

TEST(Confounds, TheReportPutsRaisedConfoundsFirstAndTheJsonStatesThresholds) {
  const BenchResult r = bench(quick("sim:compute=1ms,depth=4,warn=low power mode"));
  const std::string text = format_bench_text(r);
  const auto confounds = text.find("confounds: ");
  ASSERT_NE(confounds, std::string::npos);
  EXPECT_LT(confounds, text.find("time to first output"));
  EXPECT_NE(text.find("power_limited: power limited"), std::string::npos);
  const std::string json = bench_to_json(r);
  EXPECT_NE(json.find("\"threshold\": \"clock_drop_ratio 0.75"), std::string::npos);
  auto back = read_bench_json(json, "r.json");
  ASSERT_TRUE(back.has_value()) << back.error().to_string();
  EXPECT_EQ(back->monitor.samples.size(), r.monitor.samples.size());
  EXPECT_EQ(back->monitor.device_warnings.size(), 1u);
  EXPECT_EQ(rule(back->verdict, "power_limited").threshold,
            rule(r.verdict, "power_limited").threshold);
}

TEST(Confounds, EnergyOnTheSimsScriptedPower) {
  const BenchResult r = bench(quick("sim:compute=2ms,depth=4,power=5,idle_power=2"));
  const EnergyFigure& e = r.monitor.energy;
  ASSERT_TRUE(e.available) << e.reason;
  EXPECT_EQ(e.sensor, "device:power_w");
  EXPECT_DOUBLE_EQ(*e.mean_power_w, 5);
  EXPECT_DOUBLE_EQ(*e.idle_power_w, 2);
  ASSERT_TRUE(r.steady.time_per_frame_ms);
  EXPECT_NEAR(*e.joules_per_inference, 3 * *r.steady.time_per_frame_ms / 1e3, 1e-12);
  EXPECT_NE(format_bench_text(r).find("energy per inference"), std::string::npos);
}

// ---------------------------------------------------------------------------
// rig soak

SoakSettings soak(const std::string& spec) {
  SoakSettings s;
  s.device = spec;
  s.duration = 20s;
  s.short_span = 4s;
  s.long_span = 6s;
  return s;
}

SoakResult run(const SoakSettings& s) {
  auto device = open_device(s.device);
  EXPECT_TRUE(device.has_value());
  auto r = run_soak(**device, small_model(), s);
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().to_string());
  return r ? *r : SoakResult{};
}

TEST(Soak, AScriptedThermalSlowdownIsRecoveredAsDrift) {
  const SoakResult r = run(soak("sim:compute=2ms,depth=4,slow_at=10s,slow_factor=1.25,temp=40:60"));
  ASSERT_TRUE(r.short_run.rate && r.long_run.rate);
  EXPECT_NEAR(*r.short_run.rate, 500, 1);
  EXPECT_NEAR(*r.long_run.rate, 400, 1);
  ASSERT_TRUE(r.drift);
  EXPECT_NEAR(*r.drift, -0.2, 0.005);
  EXPECT_TRUE(r.drift_exceeds_noise);
  EXPECT_FALSE(rule(r.verdict, "drift_within_noise").met);
  EXPECT_EQ(r.temperature_sensor, "device:temperature_c");
  ASSERT_FALSE(r.windows.empty());
  EXPECT_EQ(r.windows.size(), 25u);  // 20 s in windows of min(4, 6) / 5
  EXPECT_DOUBLE_EQ(r.windows.back().temperature_c.value_or(0), 60);
  const std::string json = soak_to_json(r);
  EXPECT_NE(json.find("\"drift_exceeds_noise\": true"), std::string::npos);
  EXPECT_NE(format_soak_text(r).find("beyond the noise"), std::string::npos);
}

TEST(Soak, ACleanRunHasNoDrift) {
  const SoakResult r = run(soak("sim:compute=2ms,depth=4"));
  ASSERT_TRUE(r.drift);
  EXPECT_NEAR(*r.drift, 0, 1e-9);
  EXPECT_FALSE(r.drift_exceeds_noise);
  EXPECT_TRUE(rule(r.verdict, "drift_within_noise").met);
  EXPECT_TRUE(r.verdict.valid);
}

TEST(Soak, ACooldownGoesThroughTheDeviceClock) {
  SoakSettings s = soak("sim:compute=2ms,depth=4,temp=80:30,sensor_step=1m");
  s.cooldown = 2min;  // the scripted temperature has fallen by the start
  const SoakResult r = run(s);
  EXPECT_DOUBLE_EQ(r.windows.front().temperature_c.value_or(0), 30);
  bool cooled = false;
  for (const auto& sample : r.monitor.samples) cooled = cooled || sample.phase == "cooldown";
  EXPECT_TRUE(cooled);
}

TEST(Soak, ADurationShorterThanShortPlusLongIsANamedError) {
  SoakSettings s = soak("sim");
  s.duration = 9s;
  auto ok = validate(s);
  ASSERT_FALSE(ok.has_value());
  EXPECT_NE(ok.error().message.find("--duration 9.000 s is shorter than --short"),
            std::string::npos)
      << ok.error().message;
}

TEST(Soak, SpansAreWholeWindows) {
  SoakResult r;
  r.effective.short_span = 2s;
  r.effective.long_span = 3s;
  for (int i = 0; i < 10; ++i)
    r.windows.push_back({i * 1.0, 1.0, static_cast<uint64_t>(i < 5 ? 100 : 90),
                         i < 5 ? 100.0 : 90.0, std::nullopt});
  summarize_soak(r);
  EXPECT_EQ(r.short_run.windows, 2u);
  EXPECT_EQ(r.long_run.windows, 3u);
  EXPECT_DOUBLE_EQ(*r.short_run.rate, 100);
  EXPECT_DOUBLE_EQ(*r.long_run.rate, 90);
  EXPECT_NEAR(*r.drift, -0.1, 1e-12);
  EXPECT_TRUE(r.drift_exceeds_noise);
}

}  // namespace
}  // namespace rig

namespace rig {
// One slow last window is not a step: each part of a step holds at least two
// windows, and its two means differ by more than twice the scatter about
// them. A real step in the middle of the same run still is one.
TEST(Confounds, OneOddWindowIsNotAStep) {
  auto windows = [](const std::vector<double>& rates) {
    std::vector<WindowFigure> w;
    for (size_t i = 0; i < rates.size(); ++i)
      w.push_back(
          {static_cast<double>(i) * 0.1, 0.1, static_cast<uint64_t>(rates[i] / 10), rates[i]});
    return w;
  };
  auto drift = [](const std::vector<WindowFigure>& run) {
    MonitorRecord m;  // the monitor off: no reading explains anything
    ConfoundSettings s;
    ConfoundInputs in;
    in.monitor = &m;
    in.settings = &s;
    in.runs.push_back(&run);  // not = {&run}: gcc 14 -Warray-bounds misreads the copy
    Verdict v;
    add_confound_rules(v, in);
    for (const auto& r : v.rules)
      if (r.rule == "thermal_drift") return r;
    ADD_FAILURE() << "no thermal_drift rule";
    return RuleOutcome{};
  };
  const auto odd_last = windows({1000, 1001, 999, 1000, 1002, 998, 1000, 1001, 999, 700});
  const RuleOutcome last = drift(odd_last);
  for (const auto& f : last.findings) EXPECT_EQ(f.find("rate stepped"), std::string::npos) << f;
  const auto stepped = windows({1000, 1001, 999, 1000, 1002, 800, 801, 799, 800, 802});
  const RuleOutcome step = drift(stepped);
  ASSERT_FALSE(step.met) << step.evidence;
  EXPECT_NE(step.findings[0].find("rate stepped -20.0% at window 6 of 10"), std::string::npos)
      << step.findings[0];
}

}  // namespace rig

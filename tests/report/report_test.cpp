// The reporters against fixture results (as google/benchmark's
// reporter_output_test does): every scenario's text has the lines a reader
// looks for, its JSON the keys docs/results-schema.md lists, and a bench
// document reads back into the result it was written from.
// Over 600 lines: one fixture result per scenario, shared by every reporter test.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "rig/report/ab_report.hpp"
#include "rig/report/bench_report.hpp"
#include "rig/report/document.hpp"
#include "rig/report/ladder_report.hpp"
#include "rig/report/loop_report.hpp"
#include "rig/report/predict_report.hpp"
#include "rig/report/sweep_report.hpp"
#include "rig/stats.hpp"

namespace rig {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

Summary summary_of(std::initializer_list<double> values) {
  const std::vector<double> v(values);
  return summarize(v);
}

DeviceInfo fixture_device() {
  DeviceInfo d;
  d.spec = "sim:bw=290MB/s,compute=2ms,depth=32,lat=0.45ms";
  d.kind = "sim";
  d.description = "simulated accelerator";
  d.queue_depth = 64;
  d.own_queue_depth = 32;
  d.in_process = false;
  d.duplex = Duplex::half;
  d.clock = ClockKind::virtual_time;
  d.memory_bytes = 8ull << 30;
  d.properties = {{"compute_ms", "2.000000"}};
  d.warnings = {"reduced-performance power mode"};
  return d;
}

Verdict fixture_verdict() {
  Verdict v;
  RuleOutcome ok;
  ok.rule = "enough_samples";
  ok.evidence = "at least 100 inferences per repeat";
  v.add(ok);
  RuleOutcome warn;
  warn.rule = "real_clock";
  warn.severity = Severity::warns;
  warn.evidence = "virtual clock";
  warn.met = false;
  warn.findings = {"virtual clock: figures are the sim device's model"};
  v.add(warn);
  return v;
}

BenchResult fixture_bench() {
  BenchResult r;
  r.requested.model = "m.onnx";
  r.requested.depth = 64;
  r.requested.point.duration = 2s;
  r.effective = r.requested;
  r.effective.depth = 32;
  r.environment.facts = {{"host", "box"}, {"kernel", "6.1"}};
  r.environment.warnings = {"CPU scaling enabled"};
  r.device = fixture_device();
  r.model.name = "m";
  r.model.inputs = {{"in", ElementType::u8, {1, 4, 64, 64}, 16384}};
  r.model.outputs = {{"out", ElementType::f32, {1, 4, 16, 16}, 4096}};
  r.ttfo.load = 250ms;
  r.ttfo.load_breakdown.compile = 250ms;
  r.ttfo.allocate = 1ms;
  r.ttfo.first_inference = 3500us;
  r.ttfo.first_timings.compute = 2ms;
  r.ttfo.total = r.ttfo.load + r.ttfo.allocate + r.ttfo.first_inference;
  r.latency.samples = 200;
  r.latency.overall_ms = summary_of({3.0, 3.1, 3.2});
  r.latency.hardware_ms = summary_of({2.0, 2.0, 2.0});
  r.latency.bus_share = 1.0 / 3.1;
  r.latency.first_error = Error{ErrorCode::timeout, "late"};
  r.device.link_floor = LinkFloor{200, 48us, 41us, 0us, 12ms};
  r.latency.rig_round_trip_ms = 0.048;
  SteadyRepeat rep;
  rep.depth = 32;
  rep.inferences = 1000;
  rep.elapsed = 2s;
  rep.rate = 500;
  rep.stable = true;
  rep.last_windows_spread = 0.01;
  rep.warmup = 300ms;
  rep.warmup_inferences = 150;
  rep.warmup_settled = true;
  rep.latency_ms = summary_of({60, 64, 70});
  rep.windows = {{0, 0.2, 100, 500}, {0.2, 0.2, 100, 500}, {0.4, 0.2, 100, 500}};
  r.steady.depth = 32;
  r.steady.repeats.assign(2, rep);
  r.steady.rate = summary_of({500, 500});
  r.steady.time_per_frame_ms = 2.0;
  r.steady.stable = true;
  r.bytes.model_in = 16384;
  r.bytes.model_out = 4096;
  r.bytes.payload_in = 16384;
  r.bytes.payload_out = 4096;
  r.bytes.payload_mb_per_s = 10.24;
  r.overhead.note = "not measured";
  r.verdict = fixture_verdict();
  r.virtual_clock = true;
  return r;
}

TEST(BenchReport, TextHasEveryQuantityWithItsUnit) {
  const std::string text = format_bench_text(fixture_bench());
  for (const char* needle :
       {"rig bench: m on sim:bw=290MB/s", "time to first output (cold)", "total",
        "load (read+parse+compile)", "steady state (pipelined, warm, depth 32)", "500.0 /s",
        "= 2.000 ms per frame", "lone-frame latency (depth 1, 200 samples)", "bus share of latency",
        "bytes per inference", "payload in / out", "16.38 kB", "10.24 MB/s", "rig overhead",
        "verdict: VALID", "warning: real_clock: virtual clock: figures are the sim device's model",
        "rig round trip, no device", "on this link: median of 200 protocol pings, min 41.00 us"})
    EXPECT_NE(text.find(needle), std::string::npos) << needle << " in\n" << text;
}

// Issue 27: p95 beside p50, p90 and p99, with its interval, in the text and
// the JSON (version 6), and read back.
TEST(BenchReport, P95WithItsIntervalInTextAndJson) {
  const BenchResult r = fixture_bench();
  ASSERT_TRUE(r.latency.overall_ms.p95.has_value());
  const std::string text = format_bench_text(r);
  EXPECT_NE(text.find("overall p95"), std::string::npos) << text;
  const json doc = json::parse(bench_to_json(r));
  const json& overall = doc["latency"]["overall_ms"];
  EXPECT_EQ(overall["p95"].get<double>(), *r.latency.overall_ms.p95);
  EXPECT_EQ(overall["intervals"]["p95"]["p"], 95);
  EXPECT_EQ(overall["intervals"]["p95"]["needs"], 72);
  EXPECT_EQ(overall["intervals"]["p95"]["enough"], r.latency.overall_ms.p95_ci.enough());
  auto back = read_bench_json(doc.dump(), "r.json");
  ASSERT_TRUE(back.has_value()) << back.error().to_string();
  EXPECT_EQ(back->latency.overall_ms.p95, r.latency.overall_ms.p95);
  EXPECT_EQ(back->latency.overall_ms.p95_ci.upper, r.latency.overall_ms.p95_ci.upper);
  // A version-5 document has no p95: read without it.
  json v5 = doc;
  v5["schema_version"] = 5;
  v5["latency"]["overall_ms"].erase("p95");
  v5["latency"]["overall_ms"]["intervals"].erase("p95");
  auto five = read_bench_json(v5.dump(), "v5.json");
  ASSERT_TRUE(five.has_value()) << five.error().to_string();
  EXPECT_FALSE(five->latency.overall_ms.p95.has_value());
}

TEST(BenchReport, JsonHasTheDocumentedKeys) {
  const json doc = json::parse(bench_to_json(fixture_bench()));
  EXPECT_EQ(doc["schema_version"], kJsonSchemaVersion);
  EXPECT_EQ(doc["tool"], "rig bench");
  for (const char* key : {"settings", "environment", "model", "ttfo", "steady", "latency", "bytes",
                          "overhead", "verdict"})
    EXPECT_TRUE(doc.contains(key)) << key;
  EXPECT_EQ(doc["settings"]["requested"]["depth"], 64);
  EXPECT_EQ(doc["settings"]["effective"]["depth"], 32);
  EXPECT_EQ(doc["settings"]["effective"]["duration_s"], 2.0);
  EXPECT_EQ(doc["environment"]["host"], "box");
  EXPECT_EQ(doc["environment"]["device"]["device_queue_depth"], 32);
  EXPECT_EQ(doc["environment"]["device"]["duplex"], "half");
  EXPECT_EQ(doc["environment"]["device"]["clock"], "virtual");
  EXPECT_EQ(doc["ttfo"]["load_ms"], 250.0);
  EXPECT_EQ(doc["ttfo"]["first_inference_device"]["compute_ms"], 2.0);
  EXPECT_TRUE(doc["ttfo"]["first_inference_device"]["transfer_in_ms"].is_null());
  EXPECT_EQ(doc["latency"]["first_error"]["code"], "timeout");
  EXPECT_EQ(doc["steady"]["repeats"][0]["windows"].size(), 3u);
  EXPECT_TRUE(doc["bytes"]["link_mb_per_s"].is_null());
  EXPECT_EQ(doc["verdict"]["status"], "VALID");
  // Every rule checked is listed, met or not.
  ASSERT_EQ(doc["verdict"]["rules"].size(), 2u);
  EXPECT_EQ(doc["verdict"]["rules"][0]["rule"], "enough_samples");
  EXPECT_EQ(doc["verdict"]["rules"][0]["met"], true);
  EXPECT_EQ(doc["verdict"]["rules"][1]["severity"], "warns");
  EXPECT_EQ(doc["verdict"]["rules"][1]["met"], false);
}

// Write -> read -> equal, field by field.
void expect_equal(const Summary& a, const Summary& b, const char* what) {
  EXPECT_EQ(a.count, b.count) << what;
  EXPECT_EQ(a.median, b.median) << what;
  EXPECT_EQ(a.p95, b.p95) << what;
  EXPECT_EQ(a.p99, b.p99) << what;
  EXPECT_EQ(a.spread, b.spread) << what;
  EXPECT_EQ(a.mdape, b.mdape) << what;
}

TEST(BenchReport, JsonRoundTrip) {
  const BenchResult in = fixture_bench();
  auto out = read_bench_json(bench_to_json(in), "fixture.json");
  ASSERT_TRUE(out.has_value()) << out.error().to_string();
  EXPECT_EQ(out->requested.model, in.requested.model);
  EXPECT_EQ(out->requested.depth, in.requested.depth);
  EXPECT_EQ(out->effective.depth, in.effective.depth);
  EXPECT_EQ(out->effective.point.duration, in.effective.point.duration);
  EXPECT_EQ(out->effective.point.seed, in.effective.point.seed);
  EXPECT_EQ(out->environment.facts, in.environment.facts);
  EXPECT_EQ(out->environment.warnings, in.environment.warnings);
  EXPECT_EQ(out->virtual_clock, in.virtual_clock);
  EXPECT_EQ(out->device.spec, in.device.spec);
  EXPECT_EQ(out->device.queue_depth, in.device.queue_depth);
  EXPECT_EQ(out->device.device_queue_depth(), in.device.device_queue_depth());
  EXPECT_EQ(out->device.in_process, in.device.in_process);
  EXPECT_EQ(out->device.duplex, in.device.duplex);
  EXPECT_EQ(out->device.clock, in.device.clock);
  EXPECT_EQ(out->device.memory_bytes, in.device.memory_bytes);
  EXPECT_EQ(out->device.properties, in.device.properties);
  EXPECT_EQ(out->device.warnings, in.device.warnings);
  EXPECT_EQ(out->model.name, in.model.name);
  ASSERT_EQ(out->model.inputs.size(), 1u);
  EXPECT_EQ(out->model.inputs[0].type, ElementType::u8);
  EXPECT_EQ(out->model.inputs[0].shape, in.model.inputs[0].shape);
  EXPECT_EQ(out->model.outputs[0].bytes, 4096u);
  EXPECT_EQ(out->ttfo.load, in.ttfo.load);
  EXPECT_EQ(out->ttfo.total, in.ttfo.total);
  EXPECT_EQ(out->ttfo.first_timings.compute, in.ttfo.first_timings.compute);
  EXPECT_FALSE(out->ttfo.first_timings.transfer_in.has_value());
  EXPECT_EQ(out->latency.samples, in.latency.samples);
  expect_equal(out->latency.overall_ms, in.latency.overall_ms, "overall");
  expect_equal(out->latency.hardware_ms, in.latency.hardware_ms, "hardware");
  EXPECT_EQ(out->latency.bus_share, in.latency.bus_share);
  ASSERT_TRUE(out->latency.first_error.has_value());
  EXPECT_EQ(out->latency.first_error->code, ErrorCode::timeout);
  EXPECT_EQ(out->latency.first_error->message, "late");
  ASSERT_EQ(out->steady.repeats.size(), 2u);
  const SteadyRepeat& a = out->steady.repeats[1];
  const SteadyRepeat& b = in.steady.repeats[1];
  EXPECT_EQ(a.inferences, b.inferences);
  EXPECT_EQ(a.elapsed, b.elapsed);
  EXPECT_EQ(a.rate, b.rate);
  EXPECT_EQ(a.warmup, b.warmup);
  EXPECT_EQ(a.last_windows_spread, b.last_windows_spread);
  expect_equal(a.latency_ms, b.latency_ms, "pipelined");
  ASSERT_EQ(a.windows.size(), 3u);
  EXPECT_EQ(a.windows[2].start_s, b.windows[2].start_s);
  EXPECT_EQ(a.windows[2].inferences, b.windows[2].inferences);
  expect_equal(out->steady.rate, in.steady.rate, "rate");
  EXPECT_EQ(out->steady.time_per_frame_ms, in.steady.time_per_frame_ms);
  EXPECT_EQ(out->bytes.payload_in, in.bytes.payload_in);
  EXPECT_EQ(out->bytes.payload_mb_per_s, in.bytes.payload_mb_per_s);
  EXPECT_EQ(out->bytes.link_mb_per_s, in.bytes.link_mb_per_s);
  EXPECT_EQ(out->overhead.note, in.overhead.note);
  ASSERT_TRUE(out->device.link_floor);
  EXPECT_EQ(out->device.link_floor->median, in.device.link_floor->median);
  EXPECT_EQ(out->device.link_floor->round_trips, 200u);
  EXPECT_EQ(out->latency.rig_round_trip_ms, in.latency.rig_round_trip_ms);
  EXPECT_EQ(out->verdict.valid, in.verdict.valid);
  EXPECT_EQ(out->verdict.warnings, in.verdict.warnings);
  ASSERT_EQ(out->verdict.rules.size(), 2u);
  EXPECT_EQ(out->verdict.rules[1].rule, "real_clock");
  EXPECT_EQ(out->verdict.rules[1].severity, Severity::warns);
  EXPECT_EQ(out->verdict.rules[1].findings, in.verdict.rules[1].findings);
  // And the document it gives is the same document.
  EXPECT_EQ(bench_to_json(*out), bench_to_json(in));
}

TEST(BenchReport, ReaderAcceptsListedVersionsAndRefusesOthersByName) {
  json doc = json::parse(bench_to_json(fixture_bench()));
  // Version 1 had no verdict rules and no typed device facts.
  json v1 = doc;
  v1["schema_version"] = 1;
  v1["verdict"].erase("rules");
  for (const char* key : {"device_queue_depth", "duplex", "clock", "memory_bytes"})
    v1["environment"]["device"].erase(key);
  auto old = read_bench_json(v1.dump(), "v1.json");
  ASSERT_TRUE(old.has_value()) << old.error().to_string();
  EXPECT_TRUE(old->verdict.rules.empty());
  EXPECT_EQ(old->device.duplex, Duplex::unknown);
  // A version-2 document must have them.
  json v2 = doc;
  v2["verdict"].erase("rules");
  auto missing = read_bench_json(v2.dump(), "v2.json");
  ASSERT_FALSE(missing.has_value());
  EXPECT_NE(missing.error().message.find("field 'verdict.rules' is missing"), std::string::npos)
      << missing.error().message;
  // A version-2 document has no link floor: it reads as none.
  json v2_floor = doc;
  v2_floor["schema_version"] = 2;
  v2_floor["latency"].erase("rig_round_trip_ms");
  for (const char* key : {"link_floor_median_ms", "link_floor_min_ms", "link_floor_round_trips",
                          "link_floor_spent_ms"})
    v2_floor["environment"]["device"].erase(key);
  auto two = read_bench_json(v2_floor.dump(), "v2.json");
  ASSERT_TRUE(two.has_value()) << two.error().to_string();
  EXPECT_FALSE(two->device.link_floor);
  EXPECT_FALSE(two->latency.rig_round_trip_ms);
  doc["schema_version"] = 8;
  auto future = read_bench_json(doc.dump(), "v8.json");
  ASSERT_FALSE(future.has_value());
  EXPECT_NE(future.error().message.find(
                "schema_version 8 is not one this rig reads (1, 2, 3, 4, 5, 6, 7)"),
            std::string::npos)
      << future.error().message;
  auto text = read_bench_json("{ nope", "bad.json");
  ASSERT_FALSE(text.has_value());
  EXPECT_NE(text.error().message.find("bad.json: not JSON"), std::string::npos);
}

TEST(BenchReport, ReaderRefusesNumbersOutsideTheirType) {
  const json good = json::parse(bench_to_json(fixture_bench()));
  for (const json& bad : {json(18446744073709551616.0), json(-1), json(2.5), json("7")}) {
    json doc = good;
    doc["settings"]["requested"]["seed"] = bad;
    auto r = read_bench_json(doc.dump(), "r.json");
    ASSERT_FALSE(r.has_value()) << bad.dump();
    EXPECT_NE(r.error().message.find("field 'settings.requested.seed' must be a whole number in "
                                     "0..18446744073709551615"),
              std::string::npos)
        << r.error().message;
  }
  json doc = good;
  doc["settings"]["requested"]["seed"] = 18446744073709551615ull;
  auto max = read_bench_json(doc.dump(), "r.json");
  ASSERT_TRUE(max.has_value()) << max.error().to_string();
  EXPECT_EQ(max->requested.point.seed, 18446744073709551615ull);
  doc = good;
  doc["steady"]["repeats"][0]["windows"][1]["inferences"] = nullptr;
  auto null_count = read_bench_json(doc.dump(), "r.json");
  ASSERT_FALSE(null_count.has_value());
  EXPECT_NE(null_count.error().message.find("steady.repeats[0].windows[1].inferences"),
            std::string::npos)
      << null_count.error().message;
}

TEST(LoopReport, TextAndJsonInTheCommonLayout) {
  LoopResult r;
  r.requested.model = "m.onnx";
  r.requested.depth = 0;
  r.effective = r.requested;
  r.effective.depth = 4;
  r.device = fixture_device();
  r.device.in_process = true;
  r.model.name = "m";
  r.loop = {1500, 1, 3s, 500.0};
  r.device_rate = 500.0;
  r.steady.depth = 4;
  r.steady.inferences = 1200;
  r.steady.elapsed = 3s;
  r.steady.rate = 400.0;
  r.steady.stable = true;
  r.host_rate = 400.0;
  r.transfer_cost_ms = 0.5;
  r.transfer_cost_share = 0.2;
  r.verdict = fixture_verdict();
  const std::string text = format_loop_text(r);
  for (const char* needle :
       {"rig loop: m on sim:", "frames completed      1500",
        "device rate           500.00 frames/s", "(2.000 ms per frame)",
        "host rate             400.00 frames/s",
        "cost of per-frame transfers: 500.0 us per frame (20.0% of the host-observed frame time)",
        "verdict: VALID"})
    EXPECT_NE(text.find(needle), std::string::npos) << needle << " in\n" << text;
  const json doc = json::parse(loop_to_json(r));
  EXPECT_EQ(doc["schema_version"], kJsonSchemaVersion);
  EXPECT_EQ(doc["tool"], "rig loop");
  EXPECT_EQ(doc["settings"]["requested"]["depth"], 0);
  EXPECT_EQ(doc["settings"]["effective"]["depth"], 4);
  EXPECT_EQ(doc["settings"]["effective"]["duration_s"], 3.0);
  EXPECT_EQ(doc["environment"]["device"]["spec"], r.device.spec);
  EXPECT_EQ(doc["loop"]["frames_completed"], 1500);
  EXPECT_EQ(doc["steady"]["rate_per_s"], 400.0);
  EXPECT_EQ(doc["transfer_cost"]["per_frame_ms"], 0.5);
  EXPECT_EQ(doc["verdict"]["status"], "VALID");
  EXPECT_TRUE(doc.contains("ttfo"));
  // An aborted pipelined run has no host rate: null, never NaN.
  r.host_rate.reset();
  r.transfer_cost_ms.reset();
  r.transfer_cost_share.reset();
  const json aborted = json::parse(loop_to_json(r));
  EXPECT_TRUE(aborted["steady"]["rate_per_s"].is_null());
  EXPECT_TRUE(aborted["transfer_cost"]["per_frame_ms"].is_null());
  EXPECT_NE(format_loop_text(r).find("INVALID: aborted"), std::string::npos);
}

PointResult fixture_point(uint32_t depth, double rate) {
  PointResult p;
  p.depth = depth;
  p.repeat_rates = {rate, rate};
  p.rate = summary_of({rate, rate});
  p.ms_per_frame = 1000 / rate;
  p.stable = true;
  return p;
}

TEST(LadderReport, TableFitsAndVerdict) {
  LadderResult r;
  r.device = fixture_device();
  r.effective.depth = 4;
  LadderRung rung;
  rung.size = "512p";
  rung.frame = {512, 512};
  rung.bytes_in = 1048576;
  rung.bytes_out = 262144;
  rung.pipelined = fixture_point(4, 220);
  rung.mb_per_s = 288.4;
  rung.lone_ms = summary_of({5.4});
  rung.bound = RungBound::link;
  rung.in_bandwidth_fit = true;
  r.rungs = {rung};
  r.duplex = Duplex::half;
  r.duplex_from_device = true;
  r.bandwidth_bytes_per_s = 290e6;
  r.bw_in_bytes_per_s = 290e6;
  r.bw_out_bytes_per_s = 290e6;
  r.bw_in_from = r.bw_out_from = DirectionSource::pipelined;
  r.round_trip_ms = 0.9;
  r.per_transfer_ms = 0.45;
  r.notes = {"virtual clock"};
  r.verdict = fixture_verdict();
  const std::string text = format_ladder_text(r);
  for (const char* needle :
       {"rig ladder on sim:", "queue depth 32 (64 in flight per connection)", "512p", "288.4",
        "bandwidth: in 290.0 MB/s (pipelined), out 290.0 MB/s (pipelined)",
        "in-heavy frames: 290.0 MB/s", "duplex: half (the device says so)",
        "fixed latency: 900.0 us", "notes:\n  - virtual clock", "verdict: VALID"})
    EXPECT_NE(text.find(needle), std::string::npos) << needle << " in\n" << text;
  const json doc = json::parse(ladder_to_json(r));
  EXPECT_EQ(doc["tool"], "rig ladder");
  EXPECT_EQ(doc["results"]["rungs"][0]["size"], "512p");
  EXPECT_EQ(doc["results"]["bandwidth_mb_per_s"], 290.0);
  EXPECT_EQ(doc["results"]["duplex_from"], "device");
  EXPECT_EQ(doc["results"]["bw_in_mb_per_s"], 290.0);
  EXPECT_EQ(doc["results"]["bw_in_from"], "pipelined");
  EXPECT_EQ(doc["environment"]["device"]["device_queue_depth"], 32);
  EXPECT_EQ(doc["verdict"]["rules"].size(), 2u);
}

TEST(SweepReport, KneeAndRoundTripLines) {
  SweepResult r;
  r.device = fixture_device();
  r.model.name = "m";
  r.model_path = "m.onnx";
  r.effective.max_depth = 32;
  r.effective.point.repeats = 3;
  r.points = {{fixture_point(1, 200), false, 0.4},
              {fixture_point(8, 490), false, 0.98},
              {fixture_point(32, 500), false, 1.0}};
  r.queue_depth = 32;
  r.knee = 8;
  r.best_depth = 32;
  r.best_rate = 500;
  r.knee_vs_queue = KneeVsQueue::below;
  r.single_shot_ms = 5;
  r.pipelined_ms = 2;
  r.round_trip_ms = 3;
  r.round_trip_share = 0.6;
  r.verdict = fixture_verdict();
  const std::string text = format_sweep_text(r);
  for (const char* needle :
       {"rig sweep: m on sim:", "knee: depth 8 (the smallest depth with >= 95% of the best",
        "queue depth 32: the knee is below it", "round trip: 3.000 ms of the 5.000 ms single shot",
        "verdict: VALID"})
    EXPECT_NE(text.find(needle), std::string::npos) << needle << " in\n" << text;
  const json doc = json::parse(sweep_to_json(r));
  EXPECT_EQ(doc["tool"], "rig sweep");
  EXPECT_EQ(doc["model"]["path"], "m.onnx");
  EXPECT_EQ(doc["results"]["knee"], 8);
  EXPECT_EQ(doc["results"]["knee_vs_queue"], "below_queue_depth");
  EXPECT_EQ(doc["results"]["points"].size(), 3u);
  EXPECT_EQ(doc["verdict"]["status"], "VALID");
}

// rig sweep --rate: each probe's line (p99 with its interval, or "not
// enough samples", or "aborted"), the best and first failing rate; JSON
// with kind "rate", the documented keys, null for a p99 never measured.
TEST(SweepReport, RateSearchProbesBestAndFirstFailing) {
  RateSweepResult r;
  r.device = fixture_device();
  r.model.name = "m";
  r.model_path = "m.onnx";
  r.effective.min_rate = 10;
  r.effective.max_rate = 1000;
  r.effective.depth = 8;
  auto probe = [](double rate, std::initializer_list<double> ms, bool keeps, bool meets) {
    RateProbe p;
    p.rate = rate;
    p.run.offered_rate = rate;
    p.run.achieved_rate = keeps ? rate : 500;
    p.run.latency_ms = summary_of(ms);
    p.p99_ms = p.run.latency_ms.p99;
    p.p99_enough = p.run.latency_ms.p99_ci.enough();
    p.keeps_up = keeps;
    p.meets = meets;
    return p;
  };
  std::vector<double> many(400, 2.0);
  RateProbe resolved;
  resolved.rate = 400;
  resolved.run.offered_rate = 400;
  resolved.run.achieved_rate = 400;
  resolved.run.latency_ms = summarize(many);
  resolved.p99_ms = 2.0;
  resolved.p99_enough = true;
  resolved.keeps_up = resolved.meets = true;
  RateProbe failed;
  failed.rate = 700;
  failed.run.aborted = true;
  failed.run.errors = 1;
  r.search.probes = {probe(1000, {500, 600, 700}, false, false), probe(10, {2, 2, 2}, true, true),
                     resolved, failed};
  r.search.best_rate = 400;
  r.search.first_failing_rate = 1000;
  r.search.end = RateSearchEnd::probe_failed;
  r.verdict = fixture_verdict();
  const std::string text = format_rate_sweep_text(r);
  for (const char* needle :
       {"rig sweep --rate: m on sim:", "offered/s", "not enough samples (n = 3", "2.000 ms (95% CI",
        "aborted", "best rate meeting the bound: 400.00", "first failing rate: 1000.00",
        "search stopped: probe_failed"})
    EXPECT_NE(text.find(needle), std::string::npos) << needle << " in\n" << text;
  const std::string serialized = rate_sweep_to_json(r);
  EXPECT_EQ(serialized.find("NaN"), std::string::npos);
  const json doc = json::parse(serialized);
  EXPECT_EQ(doc["tool"], "rig sweep");
  EXPECT_EQ(doc["kind"], "rate");
  EXPECT_EQ(doc["schema_version"], kJsonSchemaVersion);
  for (const char* key :
       {"min_rate_per_s", "max_rate_per_s", "latency_bound_ms", "max_probes", "resolution",
        "arrival", "on_full", "late_threshold_ms", "depth", "duration_s", "windows",
        "request_timeout_s", "seed", "latency_samples", "confidence"})
    EXPECT_TRUE(doc["settings"]["effective"].contains(key)) << key;
  ASSERT_EQ(doc["results"]["probes"].size(), 4u);
  for (const char* key : {"offered_rate_per_s", "scheduled_rate_per_s", "achieved_rate_per_s",
                          "p99_ms", "p99_enough", "keeps_up", "meets", "depth", "arrivals",
                          "completed", "dropped", "late", "late_share", "latency_from_arrival_ms",
                          "latency_from_submission_ms", "errors", "first_error", "aborted"})
    EXPECT_TRUE(doc["results"]["probes"][0].contains(key)) << key;
  EXPECT_TRUE(doc["results"]["probes"][3]["p99_ms"].is_null());
  EXPECT_EQ(doc["results"]["best_rate_per_s"], 400.0);
  EXPECT_EQ(doc["results"]["first_failing_rate_per_s"], 1000.0);
  EXPECT_EQ(doc["results"]["search_end"], "probe_failed");
  r.search.best_rate.reset();
  EXPECT_TRUE(json::parse(rate_sweep_to_json(r))["results"]["best_rate_per_s"].is_null());
  EXPECT_NE(format_rate_sweep_text(r).find("best rate meeting the bound: none"), std::string::npos);
}

TEST(AbReport, PairsAndVerdictText) {
  AbResult r;
  r.a.knobs = {"depth=1"};
  r.b.knobs = {"depth=8"};
  r.device_a = r.device_b = fixture_device();
  r.depth_a = 1;
  r.depth_b = 8;
  r.model.name = "m";
  r.model_path = "m.onnx";
  r.rates_a = {100, 101, 99};
  r.rates_b = {400, 404, 396};
  r.ratios = {4, 4, 4};
  r.rate_a = summary_of({100, 101, 99});
  r.rate_b = summary_of({400, 404, 396});
  r.ratio = summary_of({4, 4, 4});
  r.verdict = AbVerdict::b_faster;
  r.verdict_text = "B (depth=8) is faster: +300.00% frames/s";
  r.judgement = fixture_verdict();
  const std::string text = format_ab_text(r);
  for (const char* needle : {"rig ab: m, 3 interleaved pairs", "A: depth=1  ->  sim:",
                             "B: depth=8  ->  sim:", "4.0000", "result: B (depth=8) is faster"})
    EXPECT_NE(text.find(needle), std::string::npos) << needle << " in\n" << text;
  const json doc = json::parse(ab_to_json(r));
  EXPECT_EQ(doc["tool"], "rig ab");
  EXPECT_EQ(doc["results"]["verdict"], "b_faster");
  EXPECT_EQ(doc["results"]["pairs"].size(), 3u);
  EXPECT_EQ(doc["model"]["path"], "m.onnx");
  EXPECT_TRUE(doc["environment"].contains("device_a"));
  EXPECT_EQ(doc["verdict"]["valid"], true);
}

TEST(PredictReport, SourceAndPrediction) {
  PredictSource s;
  s.model_name = "m";
  s.device_spec = "sim";
  s.compute_ms = 2;
  s.compute_from = "latency.hardware_ms.median";
  s.bytes_in = 150528;
  s.bytes_out = 1000;
  s.depth = 32;
  auto link = parse_link_profile("usb3-gen2");
  ASSERT_TRUE(link.has_value());
  const Prediction p = predict(s, *link);
  const std::string text = format_prediction_text(s, p);
  for (const char* needle : {"rig predict: m measured on sim", "link usb3-gen2",
                             "steady:", "lone frame:", "time to first output:", "bus:"})
    EXPECT_NE(text.find(needle), std::string::npos) << needle << " in\n" << text;
  const json doc = json::parse(prediction_to_json("r.json", s, p));
  EXPECT_EQ(doc["schema_version"], kJsonSchemaVersion);
  EXPECT_EQ(doc["tool"], "rig predict");
  EXPECT_EQ(doc["settings"]["result"], "r.json");
  EXPECT_EQ(doc["settings"]["link"]["name"], "usb3-gen2");
  EXPECT_EQ(doc["results"]["prediction"]["bound"], std::string(to_string(p.bound)));
  EXPECT_EQ(doc["results"]["source"]["bytes_in"], 150528.0);
}

}  // namespace
}  // namespace rig

// rig fit, rig place and rig diff against hand-computed answers.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "rig/device.hpp"
#include "rig/model.hpp"
#include "rig/report/bench_report.hpp"
#include "rig/report/diff_report.hpp"
#include "rig/report/fit_report.hpp"
#include "rig/report/place_report.hpp"
#include "rig/scenario/bench.hpp"
#include "rig/scenario/fit.hpp"
#include "rig/scenario/place.hpp"

namespace rig {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

GraphWeights raw_count(double n) {
  GraphWeights w;
  w.parameters = w.float_parameters = static_cast<uint64_t>(n);
  return w;
}

// The seed (002): 24.045 GB at bf16 does not fit 8 GB; about 6 GB at four
// bits stays resident.
TEST(Fit, TheSeedsCase) {
  FitSettings s;
  s.params = 12.0225e9;
  s.device_memory_bytes = 8.0 * (1ull << 30);
  s.bits = {16, 4};
  ASSERT_TRUE(validate(s).has_value());
  const FitResult r = plan_fit(s, raw_count(*s.params), false);
  ASSERT_EQ(r.rows.size(), 2u);
  EXPECT_DOUBLE_EQ(r.rows[0].weight_bytes, 24.045e9);
  EXPECT_EQ(r.rows[0].placement, Placement::streamed);
  EXPECT_NEAR(r.rows[1].weight_bytes, 6.01125e9, 1);
  EXPECT_EQ(r.rows[1].placement, Placement::resident);
  const json doc = json::parse(fit_to_json(r));
  EXPECT_EQ(doc["kind"], "fit");
  EXPECT_EQ(doc["results"]["rows"][0]["placement"], "streamed");
  EXPECT_EQ(doc["results"]["rows"][1]["placement"], "resident");
}

// 1e9 fp32 parameters (4 GB) in 1 GB with 0.2 GB working memory on a
// 1 GB/s link with 1 ms per transfer: 3.2 GB cross per inference, a floor of
// 3200 ms (3201 ms lone), at best 0.3125 inferences/s. At 4 bits the 0.5 GB
// stay resident after a 501 ms load.
TEST(Fit, StreamedFloorOnAGivenLink) {
  FitSettings s;
  s.params = 1e9;
  s.device_memory_bytes = 1e9;
  s.activation_bytes = 0.2e9;
  s.bits = {32, 4};
  auto link = parse_link_profile("bw=1GB/s,lat=1ms,depth=1");
  ASSERT_TRUE(link.has_value());
  s.link = *link;
  const FitResult r = plan_fit(s, raw_count(1e9), false);
  const FitRow& streamed = r.rows[0];
  EXPECT_EQ(streamed.placement, Placement::streamed);
  EXPECT_NEAR(streamed.streamed_bytes, 3.2e9, 1);
  EXPECT_NEAR(*streamed.floor_ms, 3200.0, 1e-6);
  EXPECT_NEAR(*streamed.lone_floor_ms, 3201.0, 1e-6);
  EXPECT_NEAR(*streamed.best_rate_per_s, 0.3125, 1e-9);
  const FitRow& resident = r.rows[1];
  EXPECT_EQ(resident.placement, Placement::resident);
  EXPECT_NEAR(*resident.load_ms, 501.0, 1e-6);
  EXPECT_NE(format_fit_text(r).find("STREAMED"), std::string::npos);
  // Working memory alone over the device: it cannot run at all.
  s.activation_bytes = 2e9;
  EXPECT_EQ(plan_fit(s, raw_count(1e9), false).rows[0].placement, Placement::cannot_run);
}

TEST(Fit, BadSettingsAreNamed) {
  FitSettings s;
  s.device_memory_bytes = 8e9;
  EXPECT_NE(validate(s).error().message.find("--params"), std::string::npos);
  s.params = 10;
  s.bits = {0};
  EXPECT_NE(validate(s).error().message.find("--bits"), std::string::npos);
}

// ---------------------------------------------------------------------------
// place

LinkProfile gbps_link() {  // 1000 MB/s each way, no latency, half duplex
  LinkProfile l;
  l.name = "test";
  l.bw_in = l.bw_out = 1e9;
  return l;
}

PlaceCandidate candidate(std::string device, std::string sha, double compute_ms, double in,
                         double out) {
  PlaceCandidate c;
  c.source = device + "-" + sha + ".json";
  c.device = std::move(device);
  c.model_sha256 = std::move(sha);
  c.compute_ms = c.compute_ms_per_frame = compute_ms;
  c.rate_per_s = 1e3 / compute_ms;
  c.lone_ms = compute_ms;
  c.bytes_in = in;
  c.bytes_out = out;
  c.link = gbps_link();
  return c;
}

PlaceStage stage(std::string name, std::string sha, double in, double out) {
  PlaceStage s;
  s.name = std::move(name);
  s.model = s.name + ".onnx";
  s.sha256 = std::move(sha);
  s.input_bytes = in;
  s.output_bytes = out;
  return s;
}

// detect: 6 MB in, 1 MB out; pose: 1 MB in, 0.1 MB out. Device A runs both
// (5 ms, 10 ms); B runs pose faster (2 ms). Both links 1000 MB/s.
//   A,A: A computes 15 ms/frame, its link carries 6 + 0.1 MB = 6.1 ms:
//        66.67/s; lone 6 + 5 + 10 + 0.1 = 21.1 ms; moves 6.1 MB.
//   A,B: A: 5 ms compute, link 6 + 1 MB = 7 ms; B: 2 ms, link 1.1 ms:
//        142.86/s; lone 6 + 5 + 1 + 1 + 2 + 0.1 = 15.1 ms; moves 8.1 MB.
// Both meet 30 fps within 50 ms: A,A wins by moving less, though B is faster.
TEST(Place, TwoStagesTheLeastDataMovementWins) {
  std::vector<PlaceCandidate> c = {candidate("A", "det", 5, 6e6, 1e6),
                                   candidate("A", "pose", 10, 1e6, 0.1e6),
                                   candidate("B", "pose", 2, 1e6, 0.1e6)};
  auto w = parse_workload("fps=30,latency=50ms");
  ASSERT_TRUE(w.has_value());
  auto r = place(*w, {stage("detect", "det", 6e6, 1e6), stage("pose", "pose", 1e6, 0.1e6)}, c);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  ASSERT_EQ(r->assignments.size(), 2u);
  EXPECT_TRUE(r->met);
  const Assignment& best = r->assignments[0];
  EXPECT_EQ(r->candidates[best.stages[1].candidate].device, "A");
  EXPECT_NEAR(best.rate_per_s, 1e3 / 15, 1e-9);
  EXPECT_NEAR(best.lone_ms, 21.1, 1e-9);
  EXPECT_NEAR(best.bytes_moved_per_frame, 6.1e6, 1e-3);
  EXPECT_NEAR(best.bus_utilization, 30 * 6.1e-3, 1e-12);
  EXPECT_EQ(best.stages[1].bytes_in, 0);  // the intermediate stays on A
  const Assignment& split = r->assignments[1];
  EXPECT_TRUE(split.meets);
  EXPECT_NEAR(split.rate_per_s, 1e3 / 7, 1e-9);
  EXPECT_NEAR(split.lone_ms, 15.1, 1e-9);
  EXPECT_NEAR(split.bytes_moved_per_frame, 8.1e6, 1e-3);
  EXPECT_NEAR(split.stages[0].bytes_out, 1e6, 1e-9);  // A -> host -> B
  EXPECT_NEAR(split.stages[1].bytes_in, 1e6, 1e-9);
  EXPECT_NE(r->reason.find("the least"), std::string::npos) << r->reason;
  EXPECT_NE(r->reason.find("the fastest"), std::string::npos) << r->reason;
  const json doc = json::parse(place_to_json(*r));
  EXPECT_EQ(doc["kind"], "place");
  EXPECT_EQ(doc["results"]["assignments"].size(), 2u);
  EXPECT_EQ(doc["results"]["assignments"][0]["stages"][1]["device"], "A");
}

// The frame= size sets the first stage's bytes, in the model's own input
// format (here u8 x 3); a workload no device meets is said so, with the
// nearest first.
TEST(Place, NoDeviceMeetsTheWorkloadTheNearestIsShown) {
  std::vector<PlaceCandidate> c = {candidate("slow", "m", 20, 1e6, 1e3),
                                   candidate("fast", "m", 4, 1e6, 1e3)};
  for (auto& x : c) x.inputs = {TensorInfo{"x", ElementType::u8, {1, 3, 1080, 1920}, 6220800}};
  auto w = parse_workload("fps=500,latency=10ms,frame=1080p");
  ASSERT_TRUE(w.has_value());
  EXPECT_FALSE(w->frame_bytes);  // mapped onto the model's input by place
  PlaceStage only;
  only.name = "model";
  auto r = place(*w, {only}, c);
  ASSERT_TRUE(r.has_value());
  EXPECT_DOUBLE_EQ(*r->workload.frame_bytes, 1920.0 * 1080 * 3);
  EXPECT_FALSE(r->met);
  const Assignment& nearest = r->assignments[0];
  EXPECT_EQ(r->candidates[nearest.stages[0].candidate].device, "fast");
  // fast: link 6.2208 + 0.001 ms per frame > 4 ms compute: 160.7/s.
  EXPECT_NEAR(nearest.rate_per_s, 1e3 / 6.2218, 1e-6);
  EXPECT_FALSE(nearest.meets_rate);
  EXPECT_NE(r->reason.find("no assignment meets"), std::string::npos);
  EXPECT_NE(format_place_text(*r).find("NOT MET"), std::string::npos);
}

TEST(Place, BadWorkloadAndUnmatchedStageAreNamed) {
  EXPECT_NE(parse_workload("latency=5ms").error().message.find("fps"), std::string::npos);
  EXPECT_NE(parse_workload("fps=30,speed=2").error().message.find("speed"), std::string::npos);
  EXPECT_NE(parse_workload("fps=30,frame=huge").error().message.find("frame"), std::string::npos);
  auto w = parse_workload("fps=30");
  auto r = place(*w, {stage("pose", "abc", 1, 1)}, {candidate("A", "other", 1, 1, 1)});
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message.find("stage 'pose'"), std::string::npos);
}

// A measured result through the reader: the sim's link from its properties,
// the sha256 from schema 3, and an INVALID verdict carried as a caveat.
TEST(Place, InvalidResultIsCarriedAsACaveat) {
  auto device = open_device("sim:compute=2ms,bw=500MB/s,lat=0.1ms,depth=4");
  ASSERT_TRUE(device.has_value());
  TransportSpec t;
  t.frame = {64, 64};
  ModelSource m;
  auto bytes = build_transport_model(t);
  ASSERT_TRUE(bytes.has_value());
  m.bytes = *bytes;
  m.name = "t64";
  BenchSettings s;
  s.point.duration = 1s;
  s.point.repeats = 2;
  s.latency_samples = 20;
  auto bench = run_bench(**device, m, s);
  ASSERT_TRUE(bench.has_value()) << bench.error().message;
  EXPECT_EQ(bench->model.sha256.size(), 64u);
  bench->verdict.valid = false;
  bench->verdict.reasons = {"repeats disagree: spread 40% > 10%"};
  const std::string doc = bench_to_json(*bench);
  auto c = read_place_candidate(doc, "invalid.json");
  ASSERT_TRUE(c.has_value()) << c.error().message;
  EXPECT_EQ(c->model_sha256, bench->model.sha256);
  ASSERT_TRUE(c->link.has_value());
  EXPECT_DOUBLE_EQ(c->link->bw_in, 500e6);
  EXPECT_NEAR(c->compute_ms, 2.0, 1e-9);
  bool carried = false;
  for (const auto& cv : c->caveats)
    carried |= cv.find("invalid.json is INVALID: repeats disagree") != std::string::npos;
  EXPECT_TRUE(carried);
  auto w = parse_workload("fps=30");
  PlaceStage only;
  only.name = "model";
  auto r = place(*w, {only}, {*c});
  ASSERT_TRUE(r.has_value());
  EXPECT_NE(format_place_text(*r).find("caveat: invalid.json is INVALID"), std::string::npos);
  // A result of another tool is refused by name.
  auto wrong = read_place_candidate(R"({"schema_version": 3, "tool": "rig ladder"})", "l.json");
  ASSERT_FALSE(wrong.has_value());
  EXPECT_NE(wrong.error().message.find("a 'rig ladder' result"), std::string::npos);
}

// ---------------------------------------------------------------------------
// diff

json scripted(double median, double min, double max, const std::string& kernel) {
  return {
      {"schema_version", 3},
      {"tool", "rig bench"},
      {"model", {{"name", "m"}, {"sha256", "ab"}}},
      {"environment", {{"kernel", kernel}, {"load_average", "1 2 3"}, {"warnings", json::array()}}},
      {"steady",
       {{"rate_per_s", {{"count", 3}, {"min", min}, {"median", median}, {"max", max}}},
        {"time_per_frame_ms", 1000 / median}}},
      {"verdict", {{"status", "VALID"}}}};
}

TEST(Diff, OutsideTheNoiseOnlyWhenRangesDoNotOverlap) {
  // 100 (98..102) vs 110 (108..112): disjoint, outside. 100 vs 103 (101..105): overlap.
  auto apart = diff_documents({"a", scripted(100, 98, 102, "6.1").dump()},
                              {"b", scripted(110, 108, 112, "6.1").dump()});
  ASSERT_TRUE(apart.has_value()) << apart.error().message;
  EXPECT_EQ(apart->outside, 1);
  const FigureChange* rate = nullptr;
  for (const auto& f : apart->figures)
    if (f.path == "steady.rate_per_s") rate = &f;
  ASSERT_NE(rate, nullptr);
  EXPECT_EQ(rate->noise, Noise::outside);
  EXPECT_NEAR(*rate->change, 0.10, 1e-12);
  EXPECT_TRUE(apart->environment.empty());  // load average aside
  auto close = diff_documents({"a", scripted(100, 98, 102, "6.1").dump()},
                              {"b", scripted(103, 101, 105, "6.2").dump()});
  ASSERT_TRUE(close.has_value());
  EXPECT_EQ(close->outside, 0);
  for (const auto& f : close->figures)
    if (f.path == "steady.time_per_frame_ms") {
      EXPECT_EQ(f.noise, Noise::unknown);
    }
  ASSERT_EQ(close->environment.size(), 1u);
  EXPECT_EQ(close->environment[0].key, "kernel");
  EXPECT_NE(format_diff_text(*close).find("environments differ"), std::string::npos);
  const json doc = json::parse(diff_to_json(*apart));
  EXPECT_EQ(doc["kind"], "diff");
  EXPECT_EQ(doc["results"]["outside_noise"], 1);
}

// Issue 26, item 9: a non-number where a number belongs is refused, naming
// it, not read as "no figure" (which made "0 figures changed", exit 0).
TEST(Diff, ANonNumberWhereANumberBelongsIsRefused) {
  json nan = scripted(100, 98, 102, "k");
  nan["steady"]["rate_per_s"]["median"] = "NaN";
  auto d = diff_documents({"a", scripted(100, 98, 102, "k").dump()}, {"b.json", nan.dump()});
  ASSERT_FALSE(d.has_value());
  EXPECT_EQ(d.error().code, ErrorCode::invalid_argument);
  EXPECT_NE(d.error().message.find("b.json: steady.rate_per_s.median is \"NaN\""),
            std::string::npos)
      << d.error().message;
  json bare = scripted(100, 98, 102, "k");
  bare["steady"]["time_per_frame_ms"] = "-Infinity";
  auto e = diff_documents({"a.json", bare.dump()}, {"b", scripted(100, 98, 102, "k").dump()});
  ASSERT_FALSE(e.has_value());
  EXPECT_NE(e.error().message.find("steady.time_per_frame_ms"), std::string::npos)
      << e.error().message;
  // null is "not measured", as written for NaN.
  json null_median = scripted(100, 98, 102, "k");
  null_median["steady"]["rate_per_s"]["median"] = nullptr;
  EXPECT_TRUE(diff_documents({"a", null_median.dump()}, {"b", null_median.dump()}).has_value());
}

TEST(Diff, ConfidenceIntervalsWinOverMinMaxAndToolsMustMatch) {
  json a = scripted(100, 90, 110, "k"), b = scripted(105, 95, 115, "k");
  a["steady"]["rate_per_s"]["ci_low"] = 99;
  a["steady"]["rate_per_s"]["ci_high"] = 101;
  b["steady"]["rate_per_s"]["ci_low"] = 104;
  b["steady"]["rate_per_s"]["ci_high"] = 106;
  auto d = diff_documents({"a", a.dump()}, {"b", b.dump()});
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->outside, 1);
  json ladder = {{"schema_version", 3}, {"tool", "rig ladder"}};
  auto mixed = diff_documents({"a", a.dump()}, {"l", ladder.dump()});
  ASSERT_FALSE(mixed.has_value());
  EXPECT_NE(mixed.error().message.find("one tool"), std::string::npos);
  // rig sweep's two kinds (depths, and the rate search) share no figures.
  json depths = {{"schema_version", 3}, {"tool", "rig sweep"}};
  json rates = {{"schema_version", 3}, {"tool", "rig sweep"}, {"kind", "rate"}};
  auto kinds = diff_documents({"s", depths.dump()}, {"r", rates.dump()});
  ASSERT_FALSE(kinds.has_value());
  EXPECT_NE(kinds.error().message.find("of kind 'rate'"), std::string::npos)
      << kinds.error().message;
  EXPECT_TRUE(diff_documents({"r1", rates.dump()}, {"r2", rates.dump()}).has_value());
}

TEST(Diff, ASummarysMedianIntervalIsItsRange) {
  // Version 3 summaries carry the median's order-statistic interval: disjoint
  // intervals are a change although the min..max ranges overlap; an interval
  // without enough samples is not used.
  json a = scripted(100, 90, 110, "k"), b = scripted(105, 95, 115, "k");
  a["steady"]["rate_per_s"]["intervals"]["p50"] = {{"enough", true}, {"lower", 99}, {"upper", 101}};
  b["steady"]["rate_per_s"]["intervals"]["p50"] = {
      {"enough", true}, {"lower", 104}, {"upper", 106}};
  auto d = diff_documents({"a", a.dump()}, {"b", b.dump()});
  ASSERT_TRUE(d.has_value()) << d.error().to_string();
  EXPECT_EQ(d->outside, 1);
  b["steady"]["rate_per_s"]["intervals"]["p50"] = {
      {"enough", false}, {"lower", nullptr}, {"upper", nullptr}};
  auto overlapping = diff_documents({"a", a.dump()}, {"b", b.dump()});
  ASSERT_TRUE(overlapping.has_value());
  EXPECT_EQ(overlapping->outside, 0);
}

}  // namespace
}  // namespace rig

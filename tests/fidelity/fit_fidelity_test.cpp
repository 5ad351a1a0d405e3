// Property (fit): the best-case rate rig fit states never exceeds the link's
// frame-crossing limit (the model's input in and output out for every
// inference: in / bw_in + out / bw_out on a half-duplex link, the larger of
// the two on full), resident or streamed; and, against the sim, it is never
// below what a bench of the same model on that link measures (a best case
// is an upper bound).
//
// Also the example (item 7), which failed before the fix: rig fit
// of `rig model cnn` in 620 kB on usb3-gen2 said "at best 23,267
// inferences/s", counting the streamed weights alone, where the 602 kB
// frame crossing per inference caps it near 470/s.
#include <gtest/gtest.h>

#include "fidelity/sim_case.hpp"
#include "rig/link_profile.hpp"
#include "rig/model_graph.hpp"
#include "rig/scenario/bench.hpp"
#include "rig/scenario/fit.hpp"

namespace rig::fidelity {
namespace {

using namespace std::chrono_literals;

double frame_limit(double in, double out, const LinkProfile& l) {
  const double in_s = in / l.bw_in, out_s = out / l.bw_out;
  return 1 / (l.full_duplex ? std::max(in_s, out_s) : in_s + out_s);
}

LinkProfile case_link(const SimCase& c) {
  LinkProfile l;
  l.name = "case";
  l.bw_in = c.bw_in;
  l.bw_out = c.bw_out;
  l.latency = c.lat;
  l.full_duplex = c.full_duplex;
  return l;
}

// Tolerance: exact arithmetic on the same figures; 1e-12 relative.
constexpr double kRounding = 1e-12;

TEST(FitFidelity, TheBestRateNeverExceedsTheFrameCrossingLimit) {
  int streamed = 0, resident = 0;
  for (uint64_t seed : case_seeds(60, 4)) {
    CaseRandom r(seed);
    GraphWeights w;
    w.float_parameters = w.parameters = static_cast<uint64_t>(r.log_uniform(1e3, 1e9));
    const double in = std::floor(r.log_uniform(16, 50e6)), out = std::floor(r.log_uniform(4, 10e6));
    w.inputs = {GraphTensor{"x", static_cast<uint64_t>(in)}};
    w.outputs = {GraphTensor{"y", static_cast<uint64_t>(out)}};
    FitSettings s;
    s.model = "case.onnx";
    s.device_memory_bytes =
        (static_cast<double>(w.float_parameters) * 4 + in + out) * r.log_uniform(0.05, 4);
    LinkProfile l;
    l.name = "case";
    l.bw_in = r.log_uniform(20e6, 20e9);
    l.bw_out = r.coin() ? l.bw_in : l.bw_in * r.log_uniform(0.125, 8);
    l.latency = Nanos(static_cast<int64_t>(r.log_uniform(1e-6, 20e-3) * 1e9));
    l.full_duplex = r.coin();
    s.link = l;
    SCOPED_TRACE("seed " + std::to_string(seed) + ": " + std::to_string(w.float_parameters) +
                 " params, in " + std::to_string(in) + " B, out " + std::to_string(out) +
                 " B, memory " + std::to_string(s.device_memory_bytes));
    ASSERT_TRUE(validate(s)) << validate(s).error().to_string();
    const FitResult f = plan_fit(s, w, true);
    ASSERT_TRUE(f.frame_known);
    const double limit = frame_limit(in, out, l);
    for (const FitRow& row : f.rows) {
      if (row.placement == Placement::cannot_run) continue;
      ASSERT_TRUE(row.best_rate_per_s) << row.bits << " bits";
      EXPECT_LE(*row.best_rate_per_s, limit * (1 + kRounding)) << row.bits << " bits";
      if (row.placement == Placement::resident) {
        ++resident;
        EXPECT_NEAR(*row.best_rate_per_s, limit, limit * kRounding);
      } else {
        ++streamed;
        // Nor above what the streamed weights alone allow.
        EXPECT_LE(*row.best_rate_per_s, l.bw_in / row.streamed_bytes * (1 + kRounding));
        EXPECT_GE(*row.lone_floor_ms, *row.floor_ms);
      }
    }
  }
  EXPECT_GE(streamed, 20);
  EXPECT_GE(resident, 20);
}

// Tolerance 2%: until the engine's fix of item 5 lands, a steady rate on a
// half-duplex link whose completions clump may read up to 1.16% above the
// physical cap (the capacity property states its own rounding).
TEST(FitFidelity, TheBestRateIsAnUpperBoundOfWhatTheSimMeasures) {
  BenchSettings b;
  b.point.duration = 300ms;
  b.point.repeats = 2;
  b.latency_samples = 5;
  b.monitor.enabled = false;
  for (uint64_t seed : case_seeds(8, 5)) {
    Drawn d = draw_case(seed);
    SCOPED_TRACE(d.c.describe());
    auto weights = read_graph_weights(d.model.bytes);
    ASSERT_TRUE(weights) << weights.error().to_string();
    FitSettings s;
    s.model = "case.onnx";
    s.device_memory_bytes = 64e9;  // resident: the frame alone crosses
    s.bits = {32};
    s.link = case_link(d.c);
    const FitResult f = plan_fit(s, *weights, true);
    ASSERT_TRUE(f.rows[0].best_rate_per_s);
    EXPECT_DOUBLE_EQ(f.frame_in_bytes, static_cast<double>(d.c.in_bytes));
    EXPECT_DOUBLE_EQ(f.frame_out_bytes, static_cast<double>(d.c.out_bytes));
    auto dev = open_device(d.c.spec());
    ASSERT_TRUE(dev);
    auto bench = run_bench(**dev, d.model, b);
    ASSERT_TRUE(bench) << bench.error().to_string();
    ASSERT_TRUE(bench->steady.rate.median);
    EXPECT_GE(*f.rows[0].best_rate_per_s, *bench->steady.rate.median * 0.98);
  }
}

// Item 7: `rig model cnn` (the CLI's width 16: 30,312 B of f32 weights;
// 602,112 B in, 40 B out, its working memory 602,152 B) in 620 kB on
// usb3-gen2 (290 MB/s, half duplex) streams 12,464 B of weights per
// inference: the weights alone gave the issue's "at best 23,267
// inferences/s"; the frame crossing per inference caps it near 470/s. With
// room for the weights it is resident, and the frame alone caps it at
// 481.6/s (before, a resident row stated no rate at all).
TEST(FitFidelity, TheFrameCrossingCapsTheBestRate) {
  CnnSpec spec;
  spec.channels = 16;  // `rig model cnn`'s default --width
  auto cnn = build_cnn_model(spec);
  ASSERT_TRUE(cnn);
  auto weights = read_graph_weights(*cnn);
  ASSERT_TRUE(weights);
  FitSettings s;
  s.model = "cnn.onnx";
  s.device_memory_bytes = 620e3;
  s.link = *parse_link_profile("usb3-gen2");
  s.bits = {32};
  ASSERT_TRUE(validate(s));
  const FitResult f = plan_fit(s, *weights, true);
  const FitRow& row = f.rows[0];
  ASSERT_EQ(row.placement, Placement::streamed);
  ASSERT_TRUE(row.best_rate_per_s);
  EXPECT_NEAR(row.streamed_bytes, 12464, 1e-6);
  EXPECT_NEAR(s.link->bw_in / row.streamed_bytes, 23267, 1);
  const double frame_and_weights = (12464 + 602112) / 290e6 + 40 / 290e6;
  EXPECT_NEAR(*row.best_rate_per_s, 1 / frame_and_weights, 1e-6);  // 471.9/s
  EXPECT_LT(*row.best_rate_per_s, 475);
  EXPECT_GT(*row.best_rate_per_s, 465);
  // Resident in 640 kB: the frame alone.
  s.device_memory_bytes = 640e3;
  const FitResult resident = plan_fit(s, *weights, true);
  ASSERT_EQ(resident.rows[0].placement, Placement::resident);
  ASSERT_TRUE(resident.rows[0].best_rate_per_s);
  EXPECT_NEAR(*resident.rows[0].best_rate_per_s, 290e6 / 602152, 1e-6);  // 481.6/s
}

}  // namespace
}  // namespace rig::fidelity

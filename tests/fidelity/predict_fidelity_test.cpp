// Property (consistency): rig predict of a bench onto the link it was
// measured on returns the bench's rate; predicted from link A onto link B it
// agrees with a bench on B within the uncertainty it states, or it states
// that it cannot bound it.
//
// Tolerance: the prediction's own rate_uncertainty (kPredictRateRounding,
// 1%, plus the source's repeat spread, 0 on a deterministic sim). Why 1%: on
// the virtual clock the only differences between the model and a bench are
// the bench's counting over whole pipeline cycles (0.5%, the capacity
// property's rounding) and the event simulation's measurement over
// thousands of completions (under 0.1%). The lone-frame latency is exact up
// to nanosecond roundings: 0.1%.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "fidelity/sim_case.hpp"
#include "rig/report/predict_report.hpp"
#include "rig/scenario/bench.hpp"
#include "rig/scenario/predict.hpp"

namespace rig::fidelity {
namespace {

constexpr double kLoneTolerance = 0.001;

BenchSettings short_bench() {
  BenchSettings s;
  s.latency_samples = 20;
  s.point.duration = std::chrono::milliseconds(500);
  s.point.repeats = 2;
  s.monitor.enabled = false;
  return s;
}

LinkProfile link_of(const SimCase& c) {
  LinkProfile l;
  l.name = "case";
  l.bw_in = c.bw_in;
  l.bw_out = c.bw_out;
  l.latency = c.lat;
  l.queue_depth = c.depth;
  l.full_duplex = c.full_duplex;
  return l;
}

struct Measured {
  double rate = 0, lone_ms = 0;
  PredictSource source;
};

std::optional<Measured> bench_on(const SimCase& c, const ModelSource& model) {
  auto dev = open_device(c.spec());
  EXPECT_TRUE(dev) << dev.error().to_string();
  if (!dev) return std::nullopt;
  auto r = run_bench(**dev, model, short_bench());
  EXPECT_TRUE(r) << r.error().to_string();
  if (!r || !r->steady.rate.median || !r->latency.overall_ms.median) return std::nullopt;
  auto source = predict_source(*r, c.describe());
  EXPECT_TRUE(source) << source.error().to_string();
  if (!source) return std::nullopt;
  return Measured{*r->steady.rate.median, *r->latency.overall_ms.median, *source};
}

// Checks one prediction against a bench; counts the ones rig declined to bound.
void expect_within_stated(const Prediction& p, const Measured& truth, const PredictSource& from,
                          int& unbounded) {
  const std::string text = format_prediction_text(from, p);
  EXPECT_NEAR(p.lone_ms / truth.lone_ms, 1.0, kLoneTolerance) << text;
  if (!p.rate_uncertainty) {
    ++unbounded;
    std::printf("not bounded: %s\n", p.uncertainty_note.c_str());
    EXPECT_NE(p.uncertainty_note.find("not known"), std::string::npos) << text;
    return;
  }
  EXPECT_NEAR(p.rate / truth.rate, 1.0, *p.rate_uncertainty) << "measured " << truth.rate << "/s\n"
                                                             << text;
}

TEST(PredictFidelity, SameLinkUnchangedOtherLinkWithinTheStatedUncertainty) {
  CaseRanges ranges;
  ranges.compute_lo_s = 50e-6;  // thousands of completions per repeat
  int unbounded = 0, simulated = 0, interfering = 0, cases = 0;
  for (uint64_t seed : case_seeds(16, 3)) {
    Drawn a = draw_case(seed, ranges);
    // Link B: another draw's link and depth, the same model and compute.
    SimCase b = draw_case(seed + 500, ranges).c;
    b.compute = a.c.compute;
    b.model = a.c.model;
    b.in_bytes = a.c.in_bytes;
    b.out_bytes = a.c.out_bytes;
    if (static_cast<double>(b.in_bytes + b.out_bytes) * b.depth > 256e6 ||
        b.lone_s() > ranges.max_lone_s || b.bottleneck_s() > ranges.max_lone_s / 4)
      b.depth = a.c.depth, b.bw_in = a.c.bw_in, b.bw_out = a.c.bw_out;  // keep the run short
    // Every other B sits on the half-duplex transition, depth / lone = 1 /
    // slowest stage, where in and out transfers interfere (issue 24 item 9):
    // few random draws land there.
    if (seed % 2 == 1) {
      b.full_duplex = false;
      // The shared channel the slowest stage, at twice the compute.
      b.bw_in = b.bw_out = std::max(
          1.0, std::floor(static_cast<double>(b.in_bytes + b.out_bytes) / (2 * b.compute_s())));
      b.depth = static_cast<uint32_t>(
          std::clamp<double>(std::round(b.lone_s() / b.bottleneck_s()), 2.0,
                             std::max(2.0, 256e6 / static_cast<double>(b.in_bytes + b.out_bytes))));
    }
    SCOPED_TRACE("A " + a.c.describe() + "\nB " + b.spec());
    auto on_a = bench_on(a.c, a.model);
    auto on_b = bench_on(b, a.model);
    ASSERT_TRUE(on_a && on_b);
    ++cases;

    const Prediction same = predict(on_a->source, link_of(a.c), a.c.depth);
    expect_within_stated(same, *on_a, on_a->source, unbounded);
    const Prediction other = predict(on_a->source, link_of(b), b.depth);
    expect_within_stated(other, *on_b, on_a->source, unbounded);
    simulated += (same.rate_model == RateModel::event_simulation) +
                 (other.rate_model == RateModel::event_simulation);
    interfering += other.rate_model == RateModel::event_simulation &&
                   other.rate < 0.99 * other.closed_form_rate;
  }
  std::printf(
      "consistency: %d cases, %d predictions replayed below the closed form (%d by over "
      "1%%), %d not bounded\n",
      cases, simulated, interfering, unbounded);
  EXPECT_EQ(cases, 16);
  EXPECT_GE(interfering, 3) << "the transition cases should show in/out interference";
  EXPECT_LE(unbounded, 4) << "rig declined to bound too many predictions";
}

// Property: a --depth deeper than the target link's queue is predicted at
// the queue's depth, as a bench on that link clamps it (issue 36, item 9:
// `--link usb3-gen2 --depth 64` predicted depth 64 on a 32-deep queue and
// said "a deeper queue would help"). The prediction at twice the queue's
// depth agrees with a bench on the target within its stated uncertainty and
// names the clamp.
TEST(PredictFidelity, DepthBeyondTheLinksQueueIsClampedToIt) {
  CaseRanges ranges;
  ranges.compute_lo_s = 50e-6;
  int cases = 0;
  for (uint64_t seed : case_seeds(6, 41)) {
    Drawn a = draw_case(seed, ranges);
    SCOPED_TRACE(a.c.describe());
    auto on_a = bench_on(a.c, a.model);
    ASSERT_TRUE(on_a);
    const Prediction at_queue = predict(on_a->source, link_of(a.c), a.c.depth);
    const Prediction deeper = predict(on_a->source, link_of(a.c), 2 * a.c.depth);
    const std::string text = format_prediction_text(on_a->source, deeper);
    EXPECT_EQ(deeper.depth, a.c.depth) << text;
    EXPECT_EQ(deeper.requested_depth, 2 * a.c.depth);
    ASSERT_TRUE(deeper.depth_note) << text;
    EXPECT_NE(text.find("deeper than the link's queue"), std::string::npos) << text;
    EXPECT_DOUBLE_EQ(deeper.rate, at_queue.rate) << text;
    EXPECT_FALSE(at_queue.depth_note);
    int unbounded = 0;
    expect_within_stated(deeper, *on_a, on_a->source, unbounded);
    if (deeper.bound == Bottleneck::latency) {
      EXPECT_EQ(text.find("a deeper queue would help"), std::string::npos) << text;
    }
    ++cases;
  }
  EXPECT_EQ(cases, 6);

  // The example: a 16x16 transport model (1 kB in, 256 B out) at
  // 10 us of compute, predicted onto usb3-gen2 (queue depth 32) at --depth 64.
  SimCase c;
  c.compute = std::chrono::microseconds(10);
  c.bw_in = c.bw_out = 1e9;
  c.lat = Nanos(0);
  c.depth = 8;
  c.model.frame = {16, 16};
  auto model = build_case_model(c);
  ASSERT_TRUE(model);
  auto bench = bench_on(c, *model);
  ASSERT_TRUE(bench);
  auto usb = parse_link_profile("usb3-gen2");
  ASSERT_TRUE(usb) << usb.error().to_string();
  const Prediction p = predict(bench->source, *usb, 64);
  const Prediction at_32 = predict(bench->source, *usb, 32);
  EXPECT_EQ(p.depth, usb->queue_depth);
  EXPECT_DOUBLE_EQ(p.rate, at_32.rate);
  EXPECT_TRUE(p.depth_note);
}

}  // namespace
}  // namespace rig::fidelity

// Properties of the closed loop across scenarios: a deterministic sim is
// VALID at rig sweep's defaults whatever its depth and link (stability), and
// sweep's rate at depth d equals rig bench's at --depth d (consistency).
#include <gtest/gtest.h>

#include "fidelity/sim_case.hpp"
#include "rig/scenario/bench.hpp"
#include "rig/scenario/sweep.hpp"

namespace rig::fidelity {
namespace {

// Sweeps measure up to 7 depths x 3 repeats: fewer, slower cases than the
// bench properties (at most 2000 frames/s) keep the suite's budget.
CaseRanges sweep_ranges() {
  CaseRanges g;
  g.compute_lo_s = 500e-6;
  g.bw_hi = 4e9;
  return g;
}

SweepSettings sweep_defaults() {
  SweepSettings s;
  s.monitor.enabled = false;
  return s;
}

// Two runs of one deterministic device at one depth count their spans over
// different lengths (bench's point goes on to 20 s, sweep's to 4 s): their
// rates agree to the rounding of a span of whole cycles, 0.5% (the capacity
// property's), plus the same again for the other run.
constexpr double kAgreement = 0.01;

TEST(SteadyFidelity, ADeterministicSimIsValidAtSweepsDefaultsAndAgreesWithBench) {
  for (uint64_t seed : case_seeds(10, 2)) {
    Drawn d = draw_case(seed, sweep_ranges());
    SCOPED_TRACE(d.c.describe());
    auto dev = open_device(d.c.spec());
    ASSERT_TRUE(dev) << dev.error().to_string();
    auto sweep = run_sweep(**dev, d.model, sweep_defaults());
    ASSERT_TRUE(sweep) << sweep.error().to_string();
    EXPECT_TRUE(sweep->verdict.valid)
        << "a deterministic sim's sweep is INVALID: "
        << (sweep->verdict.reasons.empty() ? "" : sweep->verdict.reasons[0]);
    ASSERT_FALSE(sweep->points.empty());
    // Consistency at the deepest point swept and at one in the middle.
    for (const SweepPoint* p : {&sweep->points.back(), &sweep->points[sweep->points.size() / 2]}) {
      ASSERT_TRUE(p->result.rate.median);
      const uint32_t depth = p->result.depth;
      auto bdev = open_device(d.c.spec());
      ASSERT_TRUE(bdev);
      BenchSettings b;
      b.depth = depth;
      b.latency_samples = 20;
      b.monitor.enabled = false;
      auto bench = run_bench(**bdev, d.model, b);
      ASSERT_TRUE(bench) << bench.error().to_string();
      ASSERT_TRUE(bench->steady.rate.median);
      EXPECT_NEAR(*bench->steady.rate.median, *p->result.rate.median,
                  kAgreement * *bench->steady.rate.median)
          << "depth " << depth << ": bench " << *bench->steady.rate.median << "/s, sweep "
          << *p->result.rate.median << "/s";
    }
  }
}

}  // namespace
}  // namespace rig::fidelity

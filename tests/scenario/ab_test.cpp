// rig ab's test against scripted noise: the sim's jitter makes each run's
// rate differ, and seed sweeps count how often the verdict is right. Run
// noise: per-frame jitter J (uniform +/-J) over N frames gives a run-level
// coefficient of variation of J / sqrt(3 N); each sweep checks the noise it
// scripted before it counts verdicts.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "rig/device_spec.hpp"
#include "rig/model.hpp"
#include "rig/report/ab_report.hpp"
#include "rig/scenario/ab.hpp"

namespace rig {
namespace {

using namespace std::chrono_literals;

ModelSource small_model() {
  TransportSpec spec;
  spec.frame = {16, 16};
  auto bytes = build_transport_model(spec);
  EXPECT_TRUE(bytes.has_value());
  ModelSource m;
  m.bytes = *bytes;
  m.name = "transport-16";
  return m;
}

constexpr int kFrames = 100;  // frames per run (1 ms each)

// J for a run-level noise (coefficient of variation) over kFrames frames.
std::string jitter_for(double noise) {
  return std::to_string(noise * std::sqrt(3.0 * kFrames));
}

AbSettings sweep_settings(uint64_t seed) {
  AbSettings s;
  s.pairs = 9;
  s.order_seed = seed;
  s.point.duration = std::chrono::milliseconds(kFrames);
  s.point.windows = 3;
  s.point.stability_tolerance = 10;  // stop at the duration: a fixed count of frames
  s.point.min_inferences = 1;
  s.point.warmup_max = 0ms;
  return s;
}

struct Counts {
  int same = 0, a = 0, b = 0, ambiguous = 0;
  double noise = 0;  // mean coefficient of variation of A's rates
};

// 100 seeds: A at compute 1 ms, B at `b_compute`, both with `noise`.
Counts sweep(const std::string& b_compute, double noise) {
  Counts c;
  const ModelSource model = small_model();
  for (uint64_t seed = 1; seed <= 100; ++seed) {
    const std::string base =
        "sim:compute=1ms,bw=10GB/s,depth=1,load=1ms,jitter=" + jitter_for(noise) +
        ",seed=" + std::to_string(seed * 7919);
    AbConfig a;
    a.spec = *parse_device_spec(base);
    a.depth = 1;
    auto b = apply_knobs(a, std::vector<std::string>{"compute=" + b_compute});
    EXPECT_TRUE(b.has_value());
    if (b_compute == "1ms") b = a;  // identical: one shared device
    uint64_t opened = 0;
    // Each fresh device gets its own jitter seed, as each run on hardware sees its own noise.
    auto open = [&](const DeviceSpec& spec) {
      DeviceSpec s = spec;
      if (auto ok = s.set("seed", std::to_string(seed * 7919 + ++opened)); !ok)
        return Result<std::unique_ptr<Device>>(tl::unexpected(ok.error()));
      return open_device(s);
    };
    auto r = run_ab(open, model, a, *b, sweep_settings(seed));
    EXPECT_TRUE(r.has_value()) << r.error().to_string();
    if (!r) return c;
    c.noise += *r->rate_a.stddev / *r->rate_a.mean / 100;
    switch (r->verdict) {
      case AbVerdict::same:
        ++c.same;
        break;
      case AbVerdict::a_faster:
        ++c.a;
        break;
      case AbVerdict::b_faster:
        ++c.b;
        break;
      default:
        ++c.ambiguous;
    }
  }
  std::printf(
      "B compute %s, noise %.2f%% (scripted %.1f%%): %d same, %d A faster, %d B faster, "
      "%d ambiguous\n",
      b_compute.c_str(), c.noise * 100, noise * 100, c.same, c.a, c.b, c.ambiguous);
  return c;
}

TEST(AbSweep, IdenticalConfigurationsAreSameInAtLeast90Percent) {
  const Counts c = sweep("1ms", 0.01);
  EXPECT_NEAR(c.noise, 0.01, 0.004);  // the scripted noise
  EXPECT_GE(c.same, 90) << c.same << " same, " << c.a << " A, " << c.b << " B, " << c.ambiguous
                        << " ambiguous";
}

TEST(AbSweep, FivePercentUnderOnePercentNoiseIsFoundInAtLeast95Percent) {
  // B computes 5% longer: A is faster.
  const Counts c = sweep("1.05ms", 0.01);
  EXPECT_NEAR(c.noise, 0.01, 0.004);
  EXPECT_GE(c.a, 95) << c.same << " same, " << c.a << " A, " << c.b << " B, " << c.ambiguous
                     << " ambiguous";
  EXPECT_EQ(c.b, 0);
}

TEST(AbSweep, OnePercentUnderFivePercentNoiseNamesTheWrongWinnerInAtMost5Percent) {
  const Counts c = sweep("1.01ms", 0.05);
  EXPECT_NEAR(c.noise, 0.05, 0.02);
  EXPECT_LE(c.b, 5) << c.same << " same, " << c.a << " A, " << c.b << " B, " << c.ambiguous
                    << " ambiguous";
}

TEST(AbDecide, TestEffectAndRecommendationByHand) {
  AbResult r;
  r.settings.pairs = 4;
  // Complete separation with 4 pairs: U = 16 of 16, exact p = 2 / C(8, 4) = 0.0286.
  r.rates_a = {100, 101, 99, 100.5};
  r.rates_b = {110, 111, 109, 110.5};
  decide_ab(r);
  EXPECT_EQ(r.verdict, AbVerdict::b_faster) << r.verdict_text;
  EXPECT_DOUBLE_EQ(r.test.u, 16);
  EXPECT_TRUE(r.test.exact);
  EXPECT_NEAR(r.test.p_value, 2.0 / 70, 1e-12);
  EXPECT_NEAR(*r.test.ratio, 1.0995, 0.002);
  EXPECT_FALSE(r.pairs_recommended.has_value());
  // Three pairs can never reach 0.05 (2 / C(6, 3) = 0.1): ambiguous, with 9 recommended.
  r.rates_a.pop_back();
  r.rates_b.pop_back();
  decide_ab(r);
  EXPECT_EQ(r.verdict, AbVerdict::ambiguous) << r.verdict_text;
  EXPECT_NEAR(r.test.p_value, 0.1, 1e-12);
  ASSERT_TRUE(r.pairs_recommended.has_value());
  EXPECT_EQ(*r.pairs_recommended, 9u);
  EXPECT_NE(r.verdict_text.find("raise --pairs"), std::string::npos);
  // Identical rates: same.
  r.rates_a = r.rates_b = {100, 100, 100, 100, 100, 100, 100, 100, 100};
  decide_ab(r);
  EXPECT_EQ(r.verdict, AbVerdict::same) << r.verdict_text;
  EXPECT_DOUBLE_EQ(r.test.p_value, 1);
  EXPECT_EQ(ab_min_pairs(0.05), 4u);
}

}  // namespace
}  // namespace rig

// Property: rig soak's short-run rate, long-run rate and drift recover a
// step slowdown the sim is told to make. On a sim whose compute grows by a
// factor k from a virtual time between the two spans (slow_at, slow_factor:
// docs/methodology.md, "The sim device"), the short-run rate is the physical
// cap at compute c, the long-run rate the cap at c x k, and the drift
// cap(c x k) / cap(c) - 1; it exceeds the noise exactly when the sim slowed
// down (k >= 1.05 here), and a sim that does not slow down is VALID.
#include <gtest/gtest.h>

#include <cmath>

#include "fidelity/sim_case.hpp"
#include "rig/scenario/soak.hpp"
#include "rig/sha256.hpp"

namespace rig::fidelity {
namespace {

using namespace std::chrono_literals;

// The spans: warm-up capped at 0.5 s after a 0.1 s load, then 4 s measured
// in 0.2 s windows; the short span is the first 1 s (over by about 1.7 s of
// virtual time), the long span the last 1 s (from about 3.1 s). The step at
// 2.5 s falls between them, with at least 0.6 s for the pipeline to settle.
constexpr Nanos kSlowAt = 2500ms;

SoakSettings soak_settings() {
  SoakSettings s;
  s.duration = 4s;
  s.short_span = 1s;
  s.long_span = 1s;
  s.window = 200ms;
  s.warmup_max = 500ms;
  s.monitor.enabled = false;
  return s;
}

// Rounding: a span's rate is its completions over its whole windows, so on a
// deterministic sim it is off by about one frame per span against the cap;
// the draw keeps at least 200 frames/s (200 frames per 1 s span, 0.5 %), and
// 1 % covers it. The cap is exact on a full-duplex link
// (capacity_fidelity_test).
constexpr double kRounding = 0.01;

TEST(SoakFidelity, ShortLongAndDriftRecoverTheSimsStepSlowdown) {
  CaseRanges ranges;
  ranges.compute_lo_s = 300e-6;
  ranges.compute_hi_s = 1.5e-3;
  ranges.lat_hi_s = 0.5e-3;
  ranges.full_duplex_share = 1.0;
  ranges.side_hi = 128;
  ranges.bw_lo = 1e9;
  ranges.depth_hi = 16;
  int slowed = 0, steady = 0;
  for (uint64_t seed : case_seeds(12, 29)) {
    Drawn d = draw_case(seed, ranges);
    CaseRandom r(seed ^ 0x50a4);
    // A quarter of the cases do not slow down; the rest by 5 % to 60 %.
    const double k = r.below(4) == 0 ? 1.0 : 1.05 + 0.55 * r.unit();
    SimCase after = d.c;
    after.compute = Nanos(std::llround(static_cast<double>(d.c.compute.count()) * k));
    const std::string spec = d.c.spec() + ",slow_at=" + std::to_string(kSlowAt.count()) +
                             "ns,slow_factor=" + std::to_string(k);
    SCOPED_TRACE(d.c.describe() + ", slow_factor " + std::to_string(k));
    auto dev = open_device(spec);
    ASSERT_TRUE(dev) << dev.error().to_string();
    auto res = run_soak(**dev, d.model, soak_settings());
    ASSERT_TRUE(res) << res.error().to_string();
    const uint32_t depth = res->effective.depth;
    const double before_cap = d.c.cap_rate(depth), after_cap = after.cap_rate(depth);
    ASSERT_GE(after_cap, 200.0) << "a case outside the ranges the rounding is stated for";
    ASSERT_TRUE(res->short_run.rate && res->long_run.rate && res->drift);
    EXPECT_NEAR(*res->short_run.rate, before_cap, kRounding * before_cap)
        << "short-run rate against the cap at compute c";
    EXPECT_NEAR(*res->long_run.rate, after_cap, kRounding * after_cap)
        << "long-run rate against the cap at compute c x k";
    const double drift = after_cap / before_cap - 1;
    EXPECT_NEAR(*res->drift, drift, 2 * kRounding) << "drift against cap(c k) / cap(c) - 1";
    if (k == 1.0) {
      ++steady;
      EXPECT_FALSE(res->drift_exceeds_noise) << "drift " << *res->drift << " without a slowdown";
      EXPECT_TRUE(res->verdict.valid)
          << "a deterministic sim is INVALID: "
          << (res->verdict.reasons.empty() ? "" : res->verdict.reasons[0]);
    } else if (std::fabs(drift) >= 0.03) {
      ++slowed;
      EXPECT_TRUE(res->drift_exceeds_noise) << "drift " << *res->drift << " (expected " << drift
                                            << ") within the noise " << res->noise.value_or(-1);
    }
  }
  EXPECT_GE(slowed, 4) << "the draw should mostly slow down by a measurable step";
  EXPECT_GE(steady, 1) << "the draw should hold a sim that does not slow down";
}

// The document names the model it measured by its sha256, as rig bench's
// does (issue 36, item 12: soak wrote "").
TEST(SoakFidelity, RecordsTheModelsSha256) {
  Drawn d = draw_case(case_seeds(1, 31).front(), CaseRanges{});
  auto dev = open_device(d.c.spec());
  ASSERT_TRUE(dev) << dev.error().to_string();
  SoakSettings s = soak_settings();
  s.duration = 1s;
  s.short_span = 200ms;
  s.long_span = 200ms;
  s.window = 100ms;
  auto res = run_soak(**dev, d.model, s);
  ASSERT_TRUE(res) << res.error().to_string();
  EXPECT_EQ(res->model.sha256, sha256_hex(d.model.bytes));
  EXPECT_EQ(res->model.sha256.size(), 64u);
}

}  // namespace
}  // namespace rig::fidelity

// Property: stability is judged on enough data (issue 36, item 6). A
// stationary sim -- constant compute with uniform jitter, so its frame times
// are independent with a known spread -- is never INVALID for instability,
// however few frames its windows hold; where the windows are too short to
// tell a change of the tolerance from the frame-time noise the verdict warns
// "too few frames per window (N): raise --duration". A sim whose compute
// grows during the run (drift) is still caught as not stable, and a sim
// whose frames are deterministic is never INVALID for instability either
// (the issue's ladder rung of fewer than three windows).
//
// Why these thresholds: the rule calls a spread unstable only beyond the
// 99.9% point of the range of three windows' noise (kStabilityRangeQuantile),
// so over the 60 stationary repeats here a correct rule is INVALID with
// probability about 6% if its noise estimate were exact; the estimate comes
// from hundreds of latencies (within a few % of the sim's jitter / sqrt(3)),
// and the seeds are fixed, so the property is deterministic. The drifting
// cases change their rate by at least 15% over the last three windows,
// several times the noise those windows carry.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "fidelity/sim_case.hpp"
#include "rig/scenario/bench.hpp"
#include "rig/scenario/ladder.hpp"
#include "rig/scenario/stability.hpp"

namespace rig::fidelity {
namespace {

using namespace std::chrono_literals;

BenchSettings short_bench() {
  BenchSettings s;
  s.latency_samples = 20;
  s.point.duration = 1s;  // the issue's --duration 1s: windows of 100 ms
  s.monitor.enabled = false;
  return s;
}

// The findings of the rule `rule` that invalidated, and those that warned.
struct Findings {
  int invalidating = 0, warning = 0;
  std::string first;
};

Findings findings_of(const Verdict& v, const std::string& rule) {
  Findings f;
  for (const auto& o : v.rules) {
    if (o.rule != rule || o.met) continue;
    (o.severity == Severity::invalidates ? f.invalidating : f.warning) +=
        static_cast<int>(o.findings.size());
    if (f.first.empty() && !o.findings.empty()) f.first = o.findings.front();
  }
  return f;
}

ModelSource t16() {
  SimCase c;
  c.model.frame = {16, 16};
  auto m = build_case_model(c);
  EXPECT_TRUE(m);
  return m ? *m : ModelSource{};
}

TEST(StabilityFidelity, StationarySimIsNeverInvalidForInstability) {
  const ModelSource model = t16();
  int unresolved = 0, cases = 0;
  for (uint64_t seed : case_seeds(20, 47)) {
    CaseRandom r(seed);
    // 5 to 40 ms per frame (25 to 200 frames/s: 2 to 20 frames per 100 ms
    // window before the stop rule lengthens them), jitter 0 to 0.6, depth 1-4.
    const double compute_ms = r.log_uniform(5, 40);
    const double jitter = 0.6 * r.unit();
    const uint32_t depth = 1 + static_cast<uint32_t>(r.below(4));
    const std::string spec = "sim:compute=" + std::to_string(compute_ms) +
                             "ms,jitter=" + std::to_string(jitter) +
                             ",depth=" + std::to_string(depth) + ",seed=" + std::to_string(seed);
    SCOPED_TRACE(spec);
    auto dev = open_device(spec);
    ASSERT_TRUE(dev) << dev.error().to_string();
    auto res = run_bench(**dev, model, short_bench());
    ASSERT_TRUE(res) << res.error().to_string();
    const Findings f = findings_of(res->verdict, "repeat_stable");
    EXPECT_EQ(f.invalidating, 0) << f.first;
    if (f.warning > 0) {
      ++unresolved;
      EXPECT_NE(f.first.find("too few frames per window ("), std::string::npos) << f.first;
      EXPECT_NE(f.first.find("raise --duration"), std::string::npos) << f.first;
      EXPECT_EQ(f.first.find("throttling"), std::string::npos) << f.first;
    }
    ++cases;
  }
  std::printf("stationary: %d cases, %d with a repeat too short to judge\n", cases, unresolved);
  EXPECT_EQ(cases, 20);
  EXPECT_GE(unresolved, 3) << "the draw should hold windows too short to judge";
}

// The issue's example: 20 ms frames, jitter 0.5 (frame times vary by
// 0.5 / sqrt(3) = 28.9%), depth 1, --duration 1 s: 8 of 10 seeds were
// INVALID "not stable ... check for throttling". Seeds 1..10 of the sim's
// generator, as the issue ran them.
TEST(StabilityFidelity, TheIssuesJitteredBenchIsNotInvalid) {
  const ModelSource model = t16();
  for (int seed = 1; seed <= 10; ++seed) {
    const std::string spec = "sim:compute=20ms,jitter=0.5,depth=1,seed=" + std::to_string(seed);
    SCOPED_TRACE(spec);
    auto dev = open_device(spec);
    ASSERT_TRUE(dev) << dev.error().to_string();
    auto res = run_bench(**dev, model, short_bench());
    ASSERT_TRUE(res) << res.error().to_string();
    EXPECT_EQ(findings_of(res->verdict, "repeat_stable").invalidating, 0);
    ASSERT_TRUE(res->steady.rate.median);
    EXPECT_NEAR(*res->steady.rate.median, 50.0, 2.5);
    // The judgement's frame-time noise is the sim's.
    for (const auto& rep : res->steady.repeats) {
      const StabilityJudgement j = judge_stability(rep, 0.05);
      ASSERT_TRUE(j.frame_cv);
      EXPECT_NEAR(*j.frame_cv, 0.5 / std::sqrt(3.0), 0.03);
    }
  }
}

TEST(StabilityFidelity, DriftingSimIsStillCaught) {
  const ModelSource model = t16();
  int cases = 0;
  for (uint64_t seed : case_seeds(8, 53)) {
    CaseRandom r(seed);
    // Compute grows by 30% to 100% per second of virtual time: over three
    // 100 ms windows late in a run of several seconds the rate falls by at
    // least 15%; jitter up to 0.3 adds noise.
    const double compute_ms = r.log_uniform(2, 10);
    const double jitter = 0.3 * r.unit();
    const double drift = 0.3 + 0.7 * r.unit();
    const std::string spec = "sim:compute=" + std::to_string(compute_ms) +
                             "ms,jitter=" + std::to_string(jitter) +
                             ",drift=" + std::to_string(drift) + ",seed=" + std::to_string(seed);
    SCOPED_TRACE(spec);
    auto dev = open_device(spec);
    ASSERT_TRUE(dev) << dev.error().to_string();
    BenchSettings s = short_bench();
    s.point.repeats = 1;
    auto res = run_bench(**dev, model, s);
    ASSERT_TRUE(res) << res.error().to_string();
    const Findings f = findings_of(res->verdict, "repeat_stable");
    EXPECT_GE(f.invalidating, 1) << "a drifting sim passed as stable";
    EXPECT_NE(f.first.find("not stable"), std::string::npos) << f.first;
    EXPECT_FALSE(res->verdict.valid);
    ++cases;
  }
  EXPECT_EQ(cases, 8);
}

// The issue's ladder rung: bw_out = 40 MB/s, the 4k out-heavy frame takes
// 0.84 s on a deterministic sim, so a 2 s repeat (capped at 4 s) holds fewer
// than three windows; its three repeats agree exactly. Not INVALID: the
// verdict warns that the windows are too few to judge.
TEST(StabilityFidelity, DeterministicLadderRungWithFewWindowsIsNotInvalid) {
  auto dev = open_device("sim:bw_out=40MB/s");
  ASSERT_TRUE(dev) << dev.error().to_string();
  LadderSettings s;
  s.sizes = {"1080p", "4k"};
  s.monitor.enabled = false;
  auto res = run_ladder(**dev, s);
  ASSERT_TRUE(res) << res.error().to_string();
  EXPECT_EQ(findings_of(res->verdict, "points_stable").invalidating, 0);
  const Findings f = findings_of(res->verdict, "points_stability_resolved");
  EXPECT_GE(f.warning, 1) << "the 4k out-heavy rung's windows are too few to judge";
  EXPECT_NE(f.first.find("too few frames per window ("), std::string::npos) << f.first;
  EXPECT_TRUE(res->verdict.valid) << (res->verdict.reasons.empty() ? "" : res->verdict.reasons[0]);
}

}  // namespace
}  // namespace rig::fidelity

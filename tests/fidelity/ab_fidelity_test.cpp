// Property (ab): over many seed pairs of identically distributed sides
// (sims that differ in their seed only, so each run reopens its side's
// device), the share called different (a_faster or b_faster) stays within
// alpha plus binomial slack; and a true 5% difference is found.
//
// Also the example (item 10), which failed before the fix: rig ab
// reopened the sim with the spec's seed for every run, so each side replayed
// one jitter sequence, its rates collapsed to a point, and jitter=0.5 with
// seed=1 against seed=2 was called different with p = 0.
//
// Short runs: 100 frames of 1 ms each (a fixed count: the stability rule is
// off), 9 pairs (google/benchmark's U-test minimum).
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>

#include "fidelity/sim_case.hpp"
#include "rig/device_spec.hpp"
#include "rig/scenario/ab.hpp"

namespace rig::fidelity {
namespace {

using namespace std::chrono_literals;

constexpr int kFrames = 100;

ModelSource tiny_model() {
  TransportSpec spec;
  spec.frame = {16, 16};
  auto bytes = build_transport_model(spec);
  EXPECT_TRUE(bytes.has_value());
  ModelSource m;
  if (bytes) m.bytes = *bytes;
  m.name = "transport-16";
  return m;
}

AbSettings short_runs(uint64_t order_seed) {
  AbSettings s;
  s.pairs = 9;
  s.order_seed = order_seed;
  s.point.duration = std::chrono::milliseconds(kFrames);
  s.point.windows = 3;
  s.point.stability_tolerance = 10;  // stop at the duration: a fixed count of frames
  s.point.min_inferences = 1;
  s.point.warmup_max = 0ms;
  s.monitor.enabled = false;
  return s;
}

// Per-frame jitter J (uniform +/-J) over kFrames frames: a run-level
// coefficient of variation of J / sqrt(3 kFrames).
std::string jitter_for(double run_noise) {
  return std::to_string(run_noise * std::sqrt(3.0 * kFrames));
}

AbConfig side(const std::string& spec) {
  AbConfig c;
  c.spec = *parse_device_spec(spec);
  c.depth = 1;
  return c;
}

const DeviceOpener kOpen = [](const DeviceSpec& spec) { return open_device(spec); };

bool called_different(const AbResult& r) {
  return r.verdict == AbVerdict::a_faster || r.verdict == AbVerdict::b_faster;
}

// Tolerance: the U test at alpha 0.05 is exact and conservative (its p is
// discrete), so the false-positive rate is at most alpha; over n = 40
// independent seed pairs the count called different is binomial(n, <= alpha):
// alpha n + 3 standard deviations, 2 + 3 x 1.38, is 6.
TEST(AbFidelity, IdenticallyDistributedSidesAreCalledDifferentAtMostAlphaOfTheTime) {
  const ModelSource model = tiny_model();
  const int n = 40;
  int different = 0;
  for (uint64_t k = 0; k < n; ++k) {
    CaseRandom r(k + 17);
    const std::string base = "sim:compute=1ms,bw=10GB/s,depth=1,load=1ms,jitter=" +
                             jitter_for(r.log_uniform(0.002, 0.02)) + ",seed=";
    const AbConfig a = side(base + std::to_string(2 * k + 1));
    const AbConfig b = side(base + std::to_string(2 * k + 2));
    auto res = run_ab(kOpen, model, a, b, short_runs(k + 1));
    ASSERT_TRUE(res) << res.error().to_string();
    ASSERT_FALSE(res->shared_device);
    different += called_different(*res);
  }
  const double slack = 3 * std::sqrt(n * 0.05 * 0.95);
  EXPECT_LE(different, static_cast<int>(0.05 * n + slack))
      << different << " of " << n << " identically distributed pairs called different";
}

// Tolerance: a 5% shift against a run-level noise of 1% is five noise
// widths; with 9 pairs the U test's power is then above 0.99, so at least
// 18 of 20 seeds must find it (the chance of 3 or more misses is < 0.001).
TEST(AbFidelity, ATrueFivePercentDifferenceIsFound) {
  const ModelSource model = tiny_model();
  const int n = 20;
  int found = 0;
  for (uint64_t k = 0; k < n; ++k) {
    const std::string tail =
        ",bw=10GB/s,depth=1,load=1ms,jitter=" + jitter_for(0.01) + ",seed=" + std::to_string(k + 1);
    // B's frames take 1 / 1.05 of A's: its rate is 5% higher.
    const AbConfig a = side("sim:compute=1ms" + tail);
    const AbConfig b = side("sim:compute=952381ns" + tail);
    auto res = run_ab(kOpen, model, a, b, short_runs(k + 101));
    ASSERT_TRUE(res) << res.error().to_string();
    found += res->verdict == AbVerdict::b_faster;
  }
  EXPECT_GE(found, 18) << "a 5% difference found in " << found << " of " << n;
}

// Item 10: `--a seed=1 --b seed=2` on sim jitter=0.5: every run of a side
// was the same draw, so each side's 9 rates were one value repeated and
// the U test's p was its least, 0.0000.
TEST(AbFidelity, EachRunOfASideIsAnIndependentDraw) {
  const std::string base = "sim:compute=1ms,bw=10GB/s,depth=1,jitter=0.5,seed=";
  auto r = run_ab(kOpen, tiny_model(), side(base + "1"), side(base + "2"), short_runs(1));
  ASSERT_TRUE(r) << r.error().to_string();
  const std::set<double> a(r->rates_a.begin(), r->rates_a.end());
  const std::set<double> b(r->rates_b.begin(), r->rates_b.end());
  EXPECT_EQ(a.size(), r->rates_a.size()) << "A's runs replay one jitter sequence";
  EXPECT_EQ(b.size(), r->rates_b.size()) << "B's runs replay one jitter sequence";
  // Nine distinct draws a side give the U test its full range: p is not
  // its least value (2 / C(18, 9), about 0.00004, the one replayed draws
  // gave). Whether this one pair of seeds is called different is itself a
  // 5% draw; the false-positive rate is
  // IdenticallyDistributedSidesAreCalledDifferentAtMostAlphaOfTheTime.
  EXPECT_GT(r->test.p_value, 0.001) << r->verdict_text;
  // The derivation: pair 1 opens the spec as given, later pairs a seed of their own.
  const DeviceSpec spec = *parse_device_spec(base + "1");
  EXPECT_EQ(ab_run_spec(spec, 0), spec);
  EXPECT_NE(ab_run_spec(spec, 1).params.at("seed"), "1");
  EXPECT_NE(ab_run_spec(spec, 1).params.at("seed"), ab_run_spec(spec, 2).params.at("seed"));
  EXPECT_NE(ab_run_spec(spec, 1).params.at("seed"),
            ab_run_spec(*parse_device_spec(base + "2"), 1).params.at("seed"));
  const DeviceSpec cpu = *parse_device_spec("cpu:threads=2");
  EXPECT_EQ(ab_run_spec(cpu, 3), cpu);
}

}  // namespace
}  // namespace rig::fidelity

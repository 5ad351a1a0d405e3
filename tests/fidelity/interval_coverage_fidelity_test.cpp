// Coverage properties (issue 36): every interval rig states holds the sim's
// true value in at least its stated share of independent seeded runs, less
// binomial slack. At 95% over 40 seeds the threshold is 34: a correct
// method at exactly 95% falls below it with probability 0.34%, a method
// that treats correlated samples as independent (what rig did before:
// 10-15 of 40 for the open loop's percentiles) far above.
//
// The truths come from first principles, never from rig's figures:
//  - open loop on a compute-only sim (Poisson arrivals at rate λ, constant
//    compute D, FIFO: M/D/1): the sojourn time's distribution is Erlang's
//    (P(W <= t) = (1 - ρ) Σ_{k <= t/D} (λ(kD - t))^k / k! e^{-λ(kD - t)},
//    sojourn = W + D);
//  - the closed loop at depth d on a compute-only sim with jitter J (compute
//    D (1 + U(-J, J)), the server never idle): a request submitted at a
//    completion waits for the d - 1 ahead of it and its own compute, so its
//    latency is a sum of d independent computes: d D (1 - J) + 2 J D x
//    Irwin-Hall(d);
//  - the loop and the steady rate: 1 / E[compute] = 1 / D.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "fidelity/sim_case.hpp"
#include "rig/engine.hpp"
#include "rig/scenario/bench.hpp"

namespace rig::fidelity {
namespace {

// At least 34 of 40 at 95% (binomial(40, 0.95) is below 34 with p = 0.34%).
constexpr int kSeeds = 40, kMinCovered = 34;

// The seeds of the runs: spread apart (a run's seed is also the sim's), so
// that no two share a stream even under the old generators.
std::vector<uint64_t> run_seeds() {
  std::vector<uint64_t> s;
  for (int i = 0; i < kSeeds; ++i) s.push_back(1000 * static_cast<uint64_t>(i + 1) + 7);
  return s;
}

// A compute-only sim: the link's transfers take a nanosecond and no latency.
std::string compute_only(const std::string& compute, uint32_t depth, const std::string& extra) {
  return "sim:compute=" + compute + ",bw=1000GB/s,lat=0ns,depth=" + std::to_string(depth) + extra;
}

ModelSource tiny_model() {
  TransportSpec t;
  t.frame = FrameSize{16, 16};
  t.channels = 1;
  auto bytes = build_transport_model(t);
  EXPECT_TRUE(bytes);
  ModelSource m;
  m.bytes = bytes ? std::move(*bytes) : std::vector<std::byte>{};
  m.name = "T16";
  return m;
}

// The inverse of a CDF by bisection on [lo, hi].
double invert(const std::function<double(double)>& cdf, double p, double lo, double hi) {
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    (cdf(mid) < p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

// M/D/1's waiting time: P(W <= t), t and d in ms, lambda per ms (Erlang 1909).
double md1_wait_cdf(double t, double lambda, double d) {
  if (t < 0) return 0;
  const double rho = lambda * d;
  long double sum = 0;
  for (int k = 0; k <= static_cast<int>(std::floor(t / d)); ++k) {
    const long double x = lambda * (k * d - t);  // <= 0
    const long double magnitude =
        k == 0 ? std::exp(-x) : std::exp(k * std::log(-x) - std::lgamma(k + 1.0L) - x);
    sum += (k % 2 ? -1 : 1) * magnitude;
  }
  return static_cast<double>((1 - rho) * sum);
}

// Irwin-Hall(n): the CDF of a sum of n U(0, 1).
double irwin_hall_cdf(double x, int n) {
  if (x <= 0) return 0;
  if (x >= n) return 1;
  double sum = 0, binom = 1;
  for (int k = 0; k <= static_cast<int>(std::floor(x)); ++k) {
    sum += (k % 2 ? -1 : 1) * binom * std::pow(x - k, n);
    binom = binom * (n - k) / (k + 1);
  }
  return sum / std::tgamma(n + 1.0);
}

struct Percentiles {
  double p50, p90, p95, p99;
};

struct Tally {
  int covered[4] = {0, 0, 0, 0}, stated[4] = {0, 0, 0, 0};
  void add(const Summary& s, const Percentiles& truth, const std::string& what) {
    const PercentileInterval* cis[] = {&s.median_ci, &s.p90_ci, &s.p95_ci, &s.p99_ci};
    const double t[] = {truth.p50, truth.p90, truth.p95, truth.p99};
    for (int i = 0; i < 4; ++i) {
      if (!cis[i]->enough()) continue;
      ++stated[i];
      if (*cis[i]->lower <= t[i] && t[i] <= *cis[i]->upper)
        ++covered[i];
      else
        std::cout << "  miss " << what << " p" << cis[i]->p << ": truth " << t[i] << " not in ["
                  << *cis[i]->lower << ", " << *cis[i]->upper << "] ("
                  << to_string(cis[i]->method) << ", " << cis[i]->batches << " x "
                  << cis[i]->batch_size << ")\n";
    }
  }
  void expect(const char* what) const {
    static const char* names[] = {"p50", "p90", "p95", "p99"};
    for (int i = 0; i < 4; ++i) {
      std::cout << what << " " << names[i] << ": " << covered[i] << " of " << stated[i]
                << " stated intervals hold the truth\n";
      EXPECT_EQ(stated[i], kSeeds) << what << " " << names[i] << ": every run states it";
      EXPECT_GE(covered[i], kMinCovered) << what << " " << names[i];
    }
  }
};

// Issue 36 item 1: Poisson arrivals at 400/s on 2 ms of compute (ρ = 0.8),
// the example on a compute-only link, for 60 s: the p99 of a queue
// this loaded needs 8 batches of 1000 frames (20 s), and 60 s states every
// percentile. (10 s states p50-p95 and says p99 needs more:
// OfferedLoad.ACorrelatedP99IsNotStatedFromTooFewBatches.)
TEST(IntervalCoverage, OpenLoopPercentilesOfMD1) {
  const double lambda = 0.4, d = 2.0;  // per ms, ms
  auto sojourn = [&](double p) {
    // (The alternating series loses digits past t ~ 40 ms; the p99 is ~21 ms.)
    return d + invert([&](double t) { return md1_wait_cdf(t, lambda, d); }, p, 0, 40);
  };
  const Percentiles truth{sojourn(0.5), sojourn(0.9), sojourn(0.95), sojourn(0.99)};
  // The closed form against the figures (Erlang: 4.552, 12.02, 15.24, 22.71 ms).
  EXPECT_NEAR(truth.p50, 4.552, 0.001);
  EXPECT_NEAR(truth.p99, 22.71, 0.01);
  const ModelSource model = tiny_model();
  Tally tally;
  for (uint64_t seed : run_seeds()) {
    auto dev = open_device(compute_only("2ms", 8, ""));
    ASSERT_TRUE(dev) << dev.error().to_string();
    auto cold = cold_start(**dev, model, 8, seed);
    ASSERT_TRUE(cold) << cold.error().to_string();
    OfferedSettings s;
    s.rate = 400;
    s.arrival = Arrival::poisson;
    s.duration = std::chrono::seconds(60);
    s.depth = 8;
    s.seed = seed;
    const OfferedRun r = measure_offered(**dev, cold->workspace, s);
    ASSERT_FALSE(r.aborted);
    tally.add(r.latency_ms, truth, "seed " + std::to_string(seed));
  }
  tally.expect("open loop M/D/1");
}

// Issue 36 item 3: the pipelined closed loop's latency, sim:compute=1ms,
// jitter=0.5, depth=4, repeats of 10 s (10,000 frames: p99's 8 batches of
// 1000 fit; bench's 2 s repeats state p50-p95 and leave p99 unstated).
TEST(IntervalCoverage, ClosedLoopPipelinedPercentiles) {
  constexpr int depth = 4;
  const double d = 1.0, jitter = 0.5;
  auto latency = [&](double p) {
    return depth * d * (1 - jitter) +
           2 * jitter * d * invert([&](double x) { return irwin_hall_cdf(x, depth); }, p, 0, depth);
  };
  const Percentiles truth{latency(0.5), latency(0.9), latency(0.95), latency(0.99)};
  const ModelSource model = tiny_model();
  Tally tally;
  for (uint64_t seed : run_seeds()) {
    auto dev = open_device(
        compute_only("1ms", depth, ",jitter=0.5,seed=" + std::to_string(seed)));
    ASSERT_TRUE(dev) << dev.error().to_string();
    auto cold = cold_start(**dev, model, depth, seed);
    ASSERT_TRUE(cold) << cold.error().to_string();
    SteadySettings s;
    s.depth = depth;
    s.min_duration = std::chrono::seconds(10);
    s.seed = seed;
    const SteadyRepeat r = measure_steady(**dev, cold->workspace, s);
    ASSERT_FALSE(r.aborted);
    tally.add(r.latency_ms, truth, "seed " + std::to_string(seed));
  }
  tally.expect("closed loop depth 4");
}

}  // namespace
}  // namespace rig::fidelity

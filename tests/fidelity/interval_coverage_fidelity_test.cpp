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
#include "rig/scenario/loop.hpp"
#include "rig/scenario/rate_search.hpp"

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
                  << *cis[i]->lower << ", " << *cis[i]->upper << "] (" << to_string(cis[i]->method)
                  << ", " << cis[i]->batches << " x " << cis[i]->batch_size << ")\n";
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
    auto dev = open_device(compute_only("1ms", depth, ",jitter=0.5,seed=" + std::to_string(seed)));
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

// Issue 36 item 4: rig loop on sim:compute=1ms,jitter=0.5 for 1 s: the
// count of a 1 s loop has sd ~9 frames, so the device rate's interval must
// be about +/-1.8%, not the cut-off frame's +/-0.05%. Truth: 1 / E[compute]
// = 1000/s.
TEST(IntervalCoverage, LoopRateWithFrameTimeNoise) {
  const ModelSource model = tiny_model();
  int covered = 0, stated = 0;
  for (uint64_t seed : run_seeds()) {
    auto dev = open_device(compute_only("1ms", 1, ",jitter=0.5,seed=" + std::to_string(seed)));
    ASSERT_TRUE(dev) << dev.error().to_string();
    LoopSettings s;
    s.device = "sim";
    s.point.duration = std::chrono::seconds(1);
    s.point.seed = seed;
    s.monitor.enabled = false;
    auto r = run_loop(**dev, model, s);
    ASSERT_TRUE(r) << r.error().to_string();
    if (!r->device_rate_lower || !r->device_rate_upper) continue;
    ++stated;
    const bool holds = *r->device_rate_lower <= 1000 && 1000 <= *r->device_rate_upper;
    covered += holds ? 1 : 0;
    if (!holds)
      std::cout << "  miss seed " << seed << ": [" << *r->device_rate_lower << ", "
                << *r->device_rate_upper << "]\n";
  }
  std::cout << "loop rate: " << covered << " of " << stated << " intervals hold 1000/s\n";
  EXPECT_EQ(stated, kSeeds);
  EXPECT_GE(covered, kMinCovered);
}

// The open loop at `rate` on a compute-only sim of compute `d_ms` and
// queue depth `depth`, replayed from first principles over `n` Poisson
// arrivals (a generator of its own): frame k is submitted when it arrives
// and a slot is free (the frame `depth` ahead completed), starts when the
// compute is free, completes d later. Its sojourn's p99 and the share of
// frames submitted more than `late_ms` after their arrival.
struct Replay {
  double p99_ms = 0, late_share = 0;
};
Replay replay_open_loop(double rate, double d_ms, uint32_t depth, double late_ms, size_t n,
                        uint64_t seed) {
  CaseRandom r(seed);
  std::vector<double> done(n), sojourn(n);
  double arrival = 0;
  size_t late = 0;
  for (size_t k = 0; k < n; ++k) {
    arrival += -std::log(1 - r.unit()) * 1000 / rate;
    const double submit = k >= depth ? std::max(arrival, done[k - depth]) : arrival;
    const double start = k >= 1 ? std::max(submit, done[k - 1]) : submit;
    done[k] = start + d_ms;
    sojourn[k] = done[k] - arrival;
    late += submit - arrival > late_ms ? 1 : 0;
  }
  const auto at = sojourn.begin() + static_cast<std::ptrdiff_t>(0.99 * static_cast<double>(n));
  std::nth_element(sojourn.begin(), at, sojourn.end());
  return {*at, static_cast<double>(late) / static_cast<double>(n)};
}

// Issue 36 item 2: rig sweep --rate 100/s..490/s --latency-bound 20ms
// --arrival poisson on sim:compute=2ms,depth=8, with 30 s probes (a
// probe's p99 interval needs 8000 correlated frames: 2 s probes state
// none, and the search says to raise --duration). The claimed
// best rate must meet the bound (p99 <= 20 ms and at most 1% late, by the
// replay) in all but at most 3 of 20 seeds: a method that holds alpha =
// 0.05 misses more than 3 with probability 1.6%. Before: 8 of 20 claimed
// rates above 385/s, where 1.29% of frames are late.
TEST(IntervalCoverage, RateSearchClaimsRatesThatMeetTheBound) {
  const ModelSource model = tiny_model();
  int misses = 0, claims = 0;
  uint64_t replay_seed = 77;
  for (int i = 0; i < 20; ++i) {
    const uint64_t seed = 1000 * static_cast<uint64_t>(i + 1) + 11;
    auto dev = open_device(compute_only("2ms", 8, ""));
    ASSERT_TRUE(dev) << dev.error().to_string();
    RateSweepSettings s;
    s.min_rate = 100;
    s.max_rate = 490;
    s.latency_bound = std::chrono::milliseconds(20);
    s.arrival = Arrival::poisson;
    s.point.duration = std::chrono::seconds(30);
    s.point.seed = seed;
    s.latency_samples = 20;
    s.monitor.enabled = false;
    auto r = run_rate_sweep(**dev, model, s);
    ASSERT_TRUE(r) << r.error().to_string();
    if (!r->search.best_rate) continue;
    ++claims;
    const Replay truth =
        replay_open_loop(*r->search.best_rate, 2.0, 8, 1.0, 1000000, ++replay_seed);
    const bool miss = truth.p99_ms > 20 || truth.late_share > kLateShareLimit;
    misses += miss ? 1 : 0;
    std::cout << "seed " << seed << ": claims " << *r->search.best_rate << "/s; replay p99 "
              << truth.p99_ms << " ms, late " << truth.late_share * 100 << "%"
              << (miss ? "  MISSES the bound" : "") << "\n";
  }
  EXPECT_GE(claims, 10) << "most searches claim a rate";
  EXPECT_LE(misses, 3) << misses << " of " << claims << " claimed rates miss the bound";
}

}  // namespace
}  // namespace rig::fidelity

#include "rig/stats.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <span>
#include <vector>

namespace rig {
namespace {

TEST(Stats, EmptyInputHasNoFigures) {
  const Summary s = summarize({});
  EXPECT_EQ(s.count, 0u);
  EXPECT_FALSE(s.median.has_value());
  EXPECT_FALSE(s.min.has_value());
  EXPECT_FALSE(s.spread.has_value());
  EXPECT_FALSE(s.stddev.has_value());
  EXPECT_FALSE(percentile_sorted({}, 50).has_value());
}

TEST(Stats, SingleValue) {
  const double v[] = {4.5};
  const Summary s = summarize(v);
  EXPECT_EQ(s.count, 1u);
  EXPECT_DOUBLE_EQ(*s.median, 4.5);
  EXPECT_DOUBLE_EQ(*s.p99, 4.5);
  EXPECT_DOUBLE_EQ(*s.min, 4.5);
  EXPECT_DOUBLE_EQ(*s.spread, 0.0);
  EXPECT_FALSE(s.stddev.has_value());  // needs two samples
}

TEST(Stats, ZeroMedianHasNoSpread) {
  const double v[] = {-1, 0, 1};
  const Summary s = summarize(v);
  EXPECT_DOUBLE_EQ(*s.median, 0.0);
  EXPECT_FALSE(s.spread.has_value());
  EXPECT_FALSE(s.mdape.has_value());
}

TEST(Stats, PercentilesMatchHandComputedValues) {
  // 1..10: rank = p/100 * 9. p50 -> 5.5, p90 -> 9.1, p99 -> 9.91, p25 -> 3.25.
  std::vector<double> v;
  for (int i = 10; i >= 1; --i) v.push_back(i);  // unsorted on purpose
  const Summary s = summarize(v);
  EXPECT_DOUBLE_EQ(*s.median, 5.5);
  EXPECT_NEAR(*s.p90, 9.1, 1e-12);
  EXPECT_NEAR(*s.p99, 9.91, 1e-12);
  std::vector<double> sorted{1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  EXPECT_NEAR(*percentile_sorted(sorted, 25), 3.25, 1e-12);
  EXPECT_DOUBLE_EQ(*percentile_sorted(sorted, 0), 1);
  EXPECT_DOUBLE_EQ(*percentile_sorted(sorted, 100), 10);
  EXPECT_DOUBLE_EQ(*s.spread, 9.0 / 5.5);
  EXPECT_NEAR(*s.mean, 5.5, 1e-12);
  EXPECT_NEAR(*s.stddev, 3.0276503540974917, 1e-12);
}

TEST(Stats, MdapeIsMedianRelativeDeviation) {
  const double v[] = {90, 100, 110, 100, 200};
  // deviations from 100: 0.1, 0, 0.1, 0, 1.0 -> sorted 0,0,0.1,0.1,1 -> median 0.1
  EXPECT_NEAR(*summarize(v).mdape, 0.1, 1e-12);
}

TEST(Stats, RunningStatsMatchesBatch) {
  RunningStats rs;
  EXPECT_FALSE(rs.mean().has_value());
  for (double x : {2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0}) rs.add(x);
  EXPECT_EQ(rs.count(), 8u);
  EXPECT_DOUBLE_EQ(*rs.mean(), 5.0);
  EXPECT_DOUBLE_EQ(*rs.min(), 2.0);
  EXPECT_DOUBLE_EQ(*rs.max(), 9.0);
  EXPECT_NEAR(*rs.stddev(), 2.138089935299395, 1e-12);
}

TEST(Stats, ReservoirIsBoundedAndDeterministic) {
  Reservoir a(100, 7), b(100, 7);
  for (int i = 0; i < 100000; ++i) {
    a.add(i);
    b.add(i);
  }
  EXPECT_EQ(a.samples().size(), 100u);
  EXPECT_EQ(a.seen(), 100000u);
  EXPECT_EQ(a.samples(), b.samples());
  // A uniform sample of 0..99999 has a median near 50000.
  const Summary s = summarize(a.samples());
  EXPECT_GT(*s.median, 30000);
  EXPECT_LT(*s.median, 70000);
}

TEST(Stats, ReservoirKeepsEverythingBelowCapacity) {
  Reservoir r(10);
  for (int i = 0; i < 5; ++i) r.add(i);
  EXPECT_EQ(r.samples(), (std::vector<double>{0, 1, 2, 3, 4}));
}

// Order-statistic intervals, by hand: K ~ Binomial(n, q) samples lie below
// the q-quantile; [x_(l), x_(u)] has P(K <= l-1) <= 2.5% and P(K <= u-1) >= 97.5%.
TEST(PercentileInterval, MedianOfTenIsSecondToNinth) {
  // Binomial(10, 0.5): P(K<=1) = 11/1024 = 1.07%, P(K<=2) = 56/1024 = 5.5%;
  // P(K<=7) = 968/1024 = 94.5%, P(K<=8) = 1013/1024 = 98.9%.
  std::vector<double> v{1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  const auto ci = percentile_interval(v, 50);
  ASSERT_TRUE(ci.enough());
  EXPECT_EQ(*ci.lower_rank, 2u);
  EXPECT_EQ(*ci.upper_rank, 9u);
  EXPECT_DOUBLE_EQ(*ci.lower, 2);
  EXPECT_DOUBLE_EQ(*ci.upper, 9);
  EXPECT_EQ(ci.count, 10u);
  EXPECT_EQ(ci.needs, 6u);
}

TEST(PercentileInterval, MedianOfSixIsTheExtremes) {
  // Binomial(6, 0.5): P(K<=0) = 1/64 = 1.6% <= 2.5%, P(K<=1) = 7/64 = 10.9%;
  // P(K<=4) = 57/64 = 89%, P(K<=5) = 63/64 = 98.4%: ranks 1 and 6.
  std::vector<double> v{10, 20, 30, 40, 50, 60};
  const auto ci = percentile_interval(v, 50);
  ASSERT_TRUE(ci.enough());
  EXPECT_EQ(*ci.lower_rank, 1u);
  EXPECT_EQ(*ci.upper_rank, 6u);
  // Five samples: 1/32 = 3.1% > 2.5% in each tail: no interval.
  const auto five = percentile_interval(std::span(v).first(5), 50);
  EXPECT_FALSE(five.enough());
  EXPECT_EQ(five.more_needed(), 1u);
}

TEST(PercentileInterval, P90OfFortyByHand) {
  // Binomial(40, 0.9) for the count below the p90. P(K<=31) = 1.55%,
  // P(K<=32) = 4.19%: lower rank 32. P(K<=38) = 92.0%, P(K<=39) = 98.5%:
  // upper rank 40.
  std::vector<double> v;
  for (int i = 1; i <= 40; ++i) v.push_back(i);
  const auto ci = percentile_interval(v, 90);
  ASSERT_TRUE(ci.enough());
  EXPECT_EQ(*ci.lower_rank, 32u);
  EXPECT_EQ(*ci.upper_rank, 40u);
}

TEST(PercentileInterval, NotEnoughSamplesAtItsBoundary) {
  // p99 at 95%: 0.99^n <= 2.5% from n = 368 (0.99^367 = 2.502%, 0.99^368 = 2.477%).
  EXPECT_EQ(samples_needed(99, 0.95), 368u);
  EXPECT_EQ(samples_needed(90, 0.95), 36u);  // 0.9^35 = 2.503%, 0.9^36 = 2.253%
  EXPECT_EQ(samples_needed(50, 0.95), 6u);
  EXPECT_EQ(samples_needed(99.9, 0.95), 3688u);  // ln(2.5%) / ln(0.999) = 3687.03
  EXPECT_EQ(samples_needed(99, 0.99), 528u);     // 0.99^527 = 0.5009%, 0.99^528 = 0.4959%
  std::vector<double> v;
  for (int i = 0; i < 368; ++i) v.push_back(i);
  EXPECT_TRUE(percentile_interval(v, 99).enough());
  EXPECT_EQ(*percentile_interval(v, 99).upper_rank, 368u);
  v.pop_back();
  const auto short_one = percentile_interval(v, 99);
  EXPECT_FALSE(short_one.enough());
  EXPECT_FALSE(short_one.upper.has_value());
  EXPECT_EQ(short_one.needs, 368u);
  EXPECT_EQ(short_one.more_needed(), 1u);
  // 200 lone frames (today's default) state no p99.
  const Summary s = summarize(std::span(v).first(200));
  EXPECT_FALSE(s.p99_ci.enough());
  EXPECT_EQ(s.p99_ci.more_needed(), 168u);
  EXPECT_TRUE(s.p90_ci.enough());
  EXPECT_TRUE(s.median_ci.enough());
}

// Issue 27: p95 beside p50, p90 and p99, with its interval (72 samples at 95%:
// 0.95^71 = 2.62%, 0.95^72 = 2.49%).
TEST(PercentileInterval, P95HasItsIntervalBesideTheOthers) {
  EXPECT_EQ(samples_needed(95, 0.95), 72u);
  std::vector<double> v;
  for (int i = 0; i < 100; ++i) v.push_back(i);
  const Summary s = summarize(v);
  ASSERT_TRUE(s.p95.has_value());
  EXPECT_NEAR(*s.p95, 94.05, 1e-9);  // type 7: 0.95 x 99
  EXPECT_EQ(s.p95_ci.p, 95);
  EXPECT_TRUE(s.p95_ci.enough());
  EXPECT_LE(*s.p95_ci.lower, *s.p95);
  EXPECT_GE(*s.p95_ci.upper, *s.p95);
  const Summary few = summarize(std::span(v).first(71));
  EXPECT_FALSE(few.p95_ci.enough());
  EXPECT_EQ(few.p95_ci.more_needed(), 1u);
  EXPECT_FALSE(summarize({}).p95.has_value());
}

TEST(PercentileInterval, CoversTheQuantileAtLeastAsOftenAsPromised) {
  // Uniform(0, 1) samples: the true p90 is 0.9. Over 400 seeded draws of 100
  // samples, the interval misses it in at most 5% (plus sampling slack).
  uint64_t state = 12345;
  auto next = [&] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return static_cast<double>(state >> 11) / 9007199254740992.0;
  };
  int misses = 0;
  for (int trial = 0; trial < 400; ++trial) {
    std::vector<double> v(100);
    for (auto& x : v) x = next();
    std::sort(v.begin(), v.end());
    const auto ci = percentile_interval(v, 90);
    ASSERT_TRUE(ci.enough());
    if (!(*ci.lower <= 0.9 && 0.9 <= *ci.upper)) ++misses;
  }
  EXPECT_LE(misses, 32);  // 5% of 400 = 20, expected fewer (discrete, conservative)
}

// ---------------------------------------------------------------------------
// Intervals of series in time order (issue 36).

// A seeded AR(1) series x_k = phi x_{k-1} + e_k, e_k ~ U(-0.5, 0.5): lag-1
// autocorrelation phi.
std::vector<double> ar1(size_t n, double phi, uint64_t seed) {
  std::vector<double> v;
  uint64_t state = seed;
  double x = 0;
  for (size_t i = 0; i < n; ++i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    const double e = static_cast<double>(state >> 11) / 9007199254740992.0 - 0.5;
    x = phi * x + e;
    v.push_back(x);
  }
  return v;
}

TEST(SeriesIntervals, StudentTQuantilesMatchTheTables) {
  EXPECT_NEAR(student_t_quantile(0.975, 1), 12.7062, 1e-4);
  EXPECT_NEAR(student_t_quantile(0.975, 7), 2.3646, 1e-4);
  EXPECT_NEAR(student_t_quantile(0.95, 30), 1.6973, 1e-4);
  EXPECT_NEAR(student_t_quantile(0.025, 7), -2.3646, 1e-4);
  EXPECT_EQ(student_t_quantile(0.5, 3), 0);
}

TEST(SeriesIntervals, BinomialUpperIsClopperPearson) {
  // 5 of 100: the exact 95% interval is [0.0164, 0.1128].
  EXPECT_NEAR(binomial_upper(5, 100), 0.11284, 1e-4);
  // None of n: 1 - 0.025^(1/n).
  EXPECT_NEAR(binomial_upper(0, 368), 1 - std::pow(0.025, 1.0 / 368), 1e-9);
  EXPECT_EQ(binomial_upper(3, 3), 1);
  EXPECT_EQ(binomial_upper(0, 0), 1);
}

TEST(SeriesIntervals, Lag1AutocorrelationOfKnownSeries) {
  const std::vector<double> alternating = {1, -1, 1, -1, 1, -1, 1, -1, 1, -1};
  EXPECT_LT(*lag1_autocorrelation(alternating), -0.8);
  EXPECT_NEAR(*lag1_autocorrelation(ar1(20000, 0.9, 7)), 0.9, 0.02);
  EXPECT_NEAR(*lag1_autocorrelation(ar1(20000, 0.0, 7)), 0.0, 0.03);
  const std::vector<double> constant(10, 2.0);
  EXPECT_FALSE(lag1_autocorrelation(constant).has_value());
  EXPECT_FALSE(lag1_autocorrelation(std::vector<double>{1, 2}).has_value());
}

TEST(SeriesIntervals, OrderedSampleThinsByHalvesInTimeOrder) {
  OrderedSample s(8);
  for (int i = 0; i < 20; ++i) s.add(i);
  EXPECT_EQ(s.seen(), 20u);
  EXPECT_EQ(s.stride(), 4u);  // 8 kept of 0..15, then every 4th
  EXPECT_EQ(s.values(), (std::vector<double>{0, 4, 8, 12, 16}));
  OrderedSample all(100);
  for (int i = 0; i < 20; ++i) all.add(i);
  EXPECT_EQ(all.values().size(), 20u);
  EXPECT_EQ(all.stride(), 1u);
}

TEST(SeriesIntervals, BatchMinSamplesGrowsWithTheCorrelation) {
  EXPECT_EQ(batch_min_samples(99, 0.0), 200u);   // 2 beyond the p99 per batch
  EXPECT_EQ(batch_min_samples(99, 0.9), 1000u);  // 10 beyond it, the cap
  EXPECT_EQ(batch_min_samples(50, 0.0), 20u);    // the floor
}

TEST(SeriesIntervals, IndependentSeriesUseOrderStatistics) {
  const auto v = ar1(2000, 0.0, 11);
  const PercentileInterval ci = series_percentile_interval(v, 90);
  EXPECT_EQ(ci.method, IntervalMethod::order_statistics);
  std::vector<double> sorted = v;
  std::sort(sorted.begin(), sorted.end());
  const PercentileInterval plain = percentile_interval(sorted, 90);
  EXPECT_EQ(ci.lower, plain.lower);
  EXPECT_EQ(ci.upper, plain.upper);
  // A constant series (a deterministic device) has no lag-1 figure and is
  // judged by order statistics: every interval of it is that value.
  const std::vector<double> constant(400, 3.0);
  const PercentileInterval c = series_percentile_interval(constant, 99);
  EXPECT_EQ(c.method, IntervalMethod::order_statistics);
  EXPECT_EQ(c.lower, 3.0);
  EXPECT_EQ(c.upper, 3.0);
}

TEST(SeriesIntervals, CorrelatedSeriesUseEightBatchesOrSayTheyCannot) {
  const auto v = ar1(40000, 0.9, 13);
  const PercentileInterval ci = series_percentile_interval(v, 50);
  EXPECT_EQ(ci.method, IntervalMethod::batch_quantiles);
  EXPECT_EQ(ci.batches, 8u);
  EXPECT_EQ(ci.batch_size, 5000u);
  ASSERT_TRUE(ci.enough());
  // Wider than order statistics would claim for 40000 independent values.
  std::vector<double> sorted = v;
  std::sort(sorted.begin(), sorted.end());
  const PercentileInterval naive = percentile_interval(sorted, 50);
  EXPECT_GT(*ci.upper - *ci.lower, 2 * (*naive.upper - *naive.lower));
  // Too short for p99's 8 batches of 1000: not stated, with what it needs.
  const auto shortv = ar1(4000, 0.9, 13);
  const PercentileInterval p99 = series_percentile_interval(shortv, 99);
  EXPECT_FALSE(p99.enough());
  EXPECT_EQ(p99.method, IntervalMethod::none);
  EXPECT_EQ(p99.needs, 8000u);
  EXPECT_GT(p99.needs, p99.count);
}

TEST(SeriesIntervals, TheMeanOfACorrelatedSeriesIsWiderThanIndependence) {
  const auto v = ar1(40000, 0.9, 17);
  const MeanInterval m = series_mean_interval(v);
  ASSERT_TRUE(m.stated());
  EXPECT_EQ(m.batches, 8u);
  // The AR(1) mean's sd is sigma_e / (1 - phi) / sqrt(n); independence
  // would claim sigma_x / sqrt(n), sigma_x = sigma_e / sqrt(1 - phi^2):
  // about 4.4 times narrower.
  RunningStats rs;
  for (double x : v) rs.add(x);
  const double naive = 1.96 * *rs.stddev() / std::sqrt(40000.0);
  EXPECT_GT(*m.upper - *m.mean, 2 * naive);
}

}  // namespace
}  // namespace rig

#include "rig/stats.hpp"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace rig

// Statistics used by the engine and the scenarios. Everything here is
// deterministic: the reservoir uses a seeded generator. Figures that do not
// exist (the median of nothing, a spread around a zero median) are
// std::nullopt, never NaN.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace rig {

// Streaming count/mean/variance/min/max (Welford). O(1) memory.
class RunningStats {
 public:
  void add(double x) {
    ++count_;
    const double d = x - mean_;
    mean_ += d / static_cast<double>(count_);
    m2_ += d * (x - mean_);
    if (count_ == 1 || x < min_) min_ = x;
    if (count_ == 1 || x > max_) max_ = x;
  }
  uint64_t count() const { return count_; }
  std::optional<double> mean() const { return count_ ? std::optional(mean_) : std::nullopt; }
  std::optional<double> min() const { return count_ ? std::optional(min_) : std::nullopt; }
  std::optional<double> max() const { return count_ ? std::optional(max_) : std::nullopt; }
  // Sample standard deviation; nullopt below two samples.
  std::optional<double> stddev() const;

 private:
  uint64_t count_ = 0;
  double mean_ = 0, m2_ = 0, min_ = 0, max_ = 0;
};

// Keeps a uniform random sample of at most `capacity` values from a stream of
// any length (Vitter's algorithm R), so memory stays bounded on long runs.
class Reservoir {
 public:
  explicit Reservoir(size_t capacity, uint64_t seed = 0x9E3779B97F4A7C15ull);
  void add(double x);
  const std::vector<double>& samples() const { return samples_; }
  uint64_t seen() const { return seen_; }
  size_t capacity() const { return capacity_; }

 private:
  uint64_t next_random();
  size_t capacity_;
  uint64_t seen_ = 0;
  uint64_t state_;
  std::vector<double> samples_;
};

// Percentile p in [0, 100] of sorted values by linear interpolation between
// closest ranks (the "type 7" definition used by numpy and R).
std::optional<double> percentile_sorted(std::span<const double> sorted, double p);

// A percentile's distribution-free two-sided confidence interval from order
// statistics: the number of samples below the true p-quantile is
// Binomial(n, p/100), so [x_(l), x_(u)] (1-based ranks) covers it with at
// least `confidence`, each tail holding at most (1 - confidence) / 2. When no
// such rank exists inside the sample the interval is absent and the
// percentile is "not enough samples": `needs` is the fewest samples for which
// both ranks exist (the same rule solved for n).
// How an interval was obtained (docs/methodology.md, "Intervals"):
// order_statistics: the samples passed the independence check and the
// distribution-free binomial rule applies; batch_quantiles: they are
// correlated (a queue, a pipeline), so the interval comes from contiguous
// batches long enough to be independent (sectioning); none: no interval
// (too few samples, or correlated beyond the longest batches the run holds).
enum class IntervalMethod { none, order_statistics, batch_quantiles };
const char* to_string(IntervalMethod method);

struct PercentileInterval {
  double p = 0;                                  // in (0, 100)
  double confidence = 0.95;                      // two-sided
  size_t count = 0;                              // samples
  size_t needs = 0;                              // samples the rule needs for this p and confidence
  std::optional<size_t> lower_rank, upper_rank;  // 1-based order statistics
  std::optional<double> lower, upper;            // their values
  IntervalMethod method = IntervalMethod::none;
  // batch_quantiles: the batches and their length in samples (the length
  // is also stated when the series was too correlated for any: the longest
  // tried); the lag-1 autocorrelation of the series (the independence check).
  size_t batches = 0, batch_size = 0;
  std::optional<double> lag1;
  bool enough() const { return lower.has_value() && upper.has_value(); }
  // needs - count, or 0.
  size_t more_needed() const { return count >= needs ? 0 : needs - count; }
};

inline constexpr double kDefaultConfidence = 0.95;

// The fewest samples for which a two-sided interval of the p-th percentile
// exists at `confidence`: both (p/100)^n and (1 - p/100)^n at most
// (1 - confidence) / 2. p = 99 at 95%: 368; p = 90: 36; the median: 6.
size_t samples_needed(double p, double confidence = kDefaultConfidence);

// The interval of percentile p of sorted values (see PercentileInterval).
PercentileInterval percentile_interval(std::span<const double> sorted, double p,
                                       double confidence = kDefaultConfidence);

// Keeps a stream's values in their order, at most `capacity` of them
// (systematic thinning): once full, every second value kept is dropped and
// from then on only every stride-th value of the stream is kept, so what is
// kept is an evenly spaced subsequence, still in time order, which the
// batch intervals need (a reservoir's random sample has lost the order).
class OrderedSample {
 public:
  explicit OrderedSample(size_t capacity = 1u << 20);
  void add(double x);
  const std::vector<double>& values() const { return values_; }
  uint64_t seen() const { return seen_; }
  uint64_t stride() const { return stride_; }

 private:
  size_t capacity_;
  uint64_t seen_ = 0, stride_ = 1;
  std::vector<double> values_;
};

// The lag-1 autocorrelation of a series; nullopt below 3 values or when
// every value is the same.
std::optional<double> lag1_autocorrelation(std::span<const double> series);

// The series passes the independence check when its lag-1 autocorrelation
// is at most kIndependenceZ / sqrt(n) (a one-sided test at 1% under
// independence, where r1 is about N(-1/n, 1/n)).
inline constexpr double kIndependenceZ = 2.326;

// The quantile of Student's t distribution with `df` degrees of freedom at
// probability `prob` in (0, 1) (bisection on the regularised incomplete beta
// function; accurate to 1e-9).
double student_t_quantile(double prob, double df);

// The interval of percentile p of a series in time order. Independent (the
// lag-1 check): the order-statistic interval (percentile_interval).
// Correlated: sectioning over 8 contiguous batches when their means pass
// the check (at 5%) and each holds at least batch_min_samples(p) samples:
// estimate +- t(7) x sd(batch percentiles) / sqrt(8), the estimate being
// the whole series' percentile. Else no interval (method none; batch_size
// the batch length tried, 0 when the batches would be too short).
PercentileInterval series_percentile_interval(std::span<const double> series, double p,
                                              double confidence = kDefaultConfidence);

// The fewest samples a batch of a series with lag-1 autocorrelation `lag1`
// needs for percentile p: k beyond it, k / (1 - p/100) for an upper
// percentile, k = 2 (1 + r) / (1 - r) (the samples' AR(1) inflation, twice)
// within [2, 10], at least 20 samples: p99 takes 200 to 1000 a batch (1000
// from r = 0.67 on: a queue at high load).
size_t batch_min_samples(double p, double lag1);

// The mean of a series in time order with its interval, by the same rule
// (independent: Student t over the values; correlated: batch means).
// The units are `batches` batches of `batch_size` values (batch_size 1: the
// values were independent); no interval (batches 0) when even 8 batches are
// correlated.
struct MeanInterval {
  std::optional<double> mean, lower, upper;
  double confidence = kDefaultConfidence;
  size_t batches = 0, batch_size = 0;
  bool stated() const { return lower.has_value(); }
};
MeanInterval series_mean_interval(std::span<const double> series,
                                  double confidence = kDefaultConfidence);

// The Clopper-Pearson upper end of a proportion's interval at `confidence`
// (two-sided, so the one-sided tail is (1 - confidence) / 2): k of n
// independent trials succeeded. 1 when n is 0 or k is n; with k = 0 it is
// 1 - tail^(1/n) (about 3.7 / n at 95%).
double binomial_upper(size_t k, size_t n, double confidence = kDefaultConfidence);

struct Summary {
  size_t count = 0;
  std::optional<double> min, max, mean, median, p90, p95, p99, stddev;
  // The confidence intervals of the median, p90, p95 and p99 (order
  // statistics). (summarize fills them; p is 50, 90, 95, 99)
  PercentileInterval median_ci, p90_ci, p95_ci, p99_ci;
  // (max - min) / median; nullopt when empty or the median is 0.
  std::optional<double> spread;
  // Median absolute percentage error from the median (robust noise figure).
  std::optional<double> mdape;
};

Summary summarize(std::span<const double> values, double confidence = kDefaultConfidence);

// summarize() of a series in time order, its intervals from
// series_percentile_interval (what the engine's phases record).
Summary summarize_series(std::span<const double> series, double confidence = kDefaultConfidence);

// The Mann-Whitney U test (Wilcoxon rank-sum) of two independent samples:
// u counts the pairs (x_i, y_j) with y_j > x_i (ties count one half). The
// two-sided p-value is exact (the permutation distribution of the rank sum,
// conditional on ties) up to 100 values in all, else the normal
// approximation with the tie correction.
struct UTest {
  size_t n_x = 0, n_y = 0;
  double u = 0;        // pairs with y > x, ties one half
  double p_value = 1;  // two-sided
  bool exact = false;
};
UTest mann_whitney_u(std::span<const double> x, std::span<const double> y);

// The smallest equal sample size whose most extreme outcome reaches a
// two-sided p-value <= alpha (2 / C(2n, n)): 4 at alpha 0.05.
size_t mann_whitney_min_n(double alpha);

// The Hodges-Lehmann estimate of the shift y - x (the median of all
// differences y_j - x_i) with its distribution-free interval: the order
// statistics of the differences that the U distribution (no ties) puts at
// (1 - confidence) / 2 in each tail. The interval is absent when the samples
// are too small for the confidence.
struct ShiftEstimate {
  std::optional<double> estimate, lower, upper;
  double confidence = 0.95;
};
ShiftEstimate hodges_lehmann(std::span<const double> x, std::span<const double> y,
                             double confidence = kDefaultConfidence);

// The half-width of the 95% Student-t interval of the mean of `values`;
// nullopt below two values.
std::optional<double> mean_half_width_95(std::span<const double> values);

// (max - min) / median of a small set; nullopt when empty or the median is 0.
std::optional<double> relative_spread(std::span<const double> values);

}  // namespace rig

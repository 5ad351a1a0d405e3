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

struct Summary {
  size_t count = 0;
  std::optional<double> min, max, mean, median, p90, p99, stddev;
  // (max - min) / median; nullopt when empty or the median is 0.
  std::optional<double> spread;
  // Median absolute percentage error from the median (robust noise figure).
  std::optional<double> mdape;
};

Summary summarize(std::span<const double> values);

// (max - min) / median of a small set; nullopt when empty or the median is 0.
std::optional<double> relative_spread(std::span<const double> values);

}  // namespace rig

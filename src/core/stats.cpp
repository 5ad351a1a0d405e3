#include "rig/stats.hpp"

#include <algorithm>
#include <cmath>

namespace rig {

std::optional<double> RunningStats::stddev() const {
  if (count_ < 2) return std::nullopt;
  return std::sqrt(m2_ / static_cast<double>(count_ - 1));
}

Reservoir::Reservoir(size_t capacity, uint64_t seed) : capacity_(capacity), state_(seed | 1) {
  samples_.reserve(capacity_);
}

uint64_t Reservoir::next_random() {
  // xorshift64*: fast, deterministic, good enough for sampling.
  state_ ^= state_ >> 12;
  state_ ^= state_ << 25;
  state_ ^= state_ >> 27;
  return state_ * 0x2545F4914F6CDD1Dull;
}

void Reservoir::add(double x) {
  ++seen_;
  if (samples_.size() < capacity_) {
    samples_.push_back(x);
    return;
  }
  if (capacity_ == 0) return;
  const uint64_t j = next_random() % seen_;
  if (j < capacity_) samples_[j] = x;
}

std::optional<double> percentile_sorted(std::span<const double> sorted, double p) {
  if (sorted.empty()) return std::nullopt;
  p = std::clamp(p, 0.0, 100.0);
  const double rank = p / 100.0 * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(rank));
  const auto hi = static_cast<size_t>(std::ceil(rank));
  const double frac = rank - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

Summary summarize(std::span<const double> values) {
  Summary s;
  s.count = values.size();
  if (values.empty()) return s;
  std::vector<double> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end());
  RunningStats rs;
  for (double v : sorted) rs.add(v);
  s.min = sorted.front();
  s.max = sorted.back();
  s.mean = rs.mean();
  s.stddev = rs.stddev();
  s.median = percentile_sorted(sorted, 50);
  s.p90 = percentile_sorted(sorted, 90);
  s.p99 = percentile_sorted(sorted, 99);
  if (*s.median != 0) {
    s.spread = (*s.max - *s.min) / std::fabs(*s.median);
    std::vector<double> ape;
    ape.reserve(sorted.size());
    for (double v : sorted) ape.push_back(std::fabs(v - *s.median) / std::fabs(*s.median));
    std::sort(ape.begin(), ape.end());
    s.mdape = percentile_sorted(ape, 50);
  }
  return s;
}

std::optional<double> relative_spread(std::span<const double> values) {
  return summarize(values).spread;
}

}  // namespace rig

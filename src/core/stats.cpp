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

namespace {

// log P(K <= k) terms: the binomial pmf in log space, stable for large n.
double log_pmf(size_t n, size_t k, double q) {
  const auto nd = static_cast<double>(n), kd = static_cast<double>(k);
  double lp = std::lgamma(nd + 1) - std::lgamma(kd + 1) - std::lgamma(nd - kd + 1);
  lp += kd > 0 ? kd * std::log(q) : 0.0;
  lp += nd - kd > 0 ? (nd - kd) * std::log1p(-q) : 0.0;
  return lp;
}

}  // namespace

size_t samples_needed(double p, double confidence) {
  const double q = std::clamp(p / 100.0, 1e-12, 1 - 1e-12);
  const double tail = std::log((1 - std::clamp(confidence, 1e-9, 1 - 1e-12)) / 2);
  // Smallest n with q^n <= tail and (1-q)^n <= tail.
  const double n_upper = tail / std::log(q), n_lower = tail / std::log1p(-q);
  auto n = static_cast<size_t>(std::ceil(std::max(n_upper, n_lower) - 1e-9));
  // Guard the rounding: step to the exact boundary.
  auto ok = [&](size_t m) {
    const auto md = static_cast<double>(m);
    return md * std::log(q) <= tail + 1e-12 && md * std::log1p(-q) <= tail + 1e-12;
  };
  while (n > 1 && ok(n - 1)) --n;
  while (!ok(n)) ++n;
  return std::max<size_t>(n, 1);
}

PercentileInterval percentile_interval(std::span<const double> sorted, double p,
                                       double confidence) {
  PercentileInterval ci;
  ci.p = p;
  ci.confidence = confidence;
  ci.count = sorted.size();
  ci.needs = samples_needed(p, confidence);
  const size_t n = sorted.size();
  if (n == 0) return ci;
  const double q = std::clamp(p / 100.0, 1e-12, 1 - 1e-12);
  const double tail = (1 - confidence) / 2;
  // K = samples below the quantile ~ Binomial(n, q). P(x_(l) > xi) = P(K < l)
  // and P(x_(u) < xi) = P(K >= u): the largest l with P(K <= l-1) <= tail and
  // the smallest u with P(K <= u-1) >= 1 - tail.
  double cdf = 0;
  std::optional<size_t> lower, upper;
  for (size_t k = 0; k < n; ++k) {
    cdf += std::exp(log_pmf(n, k, q));
    if (cdf <= tail) lower = k + 1;  // P(K <= k) <= tail: x_(k+1) is low enough
    if (cdf >= 1 - tail) {
      upper = k + 1;  // P(K <= k) >= 1 - tail: x_(k+1) is high enough
      break;
    }
  }
  if (lower && upper) {
    ci.lower_rank = lower;
    ci.upper_rank = upper;
    ci.lower = sorted[*lower - 1];
    ci.upper = sorted[*upper - 1];
  }
  return ci;
}

Summary summarize(std::span<const double> values, double confidence) {
  Summary s;
  s.count = values.size();
  s.median_ci = percentile_interval({}, 50, confidence);
  s.p90_ci = percentile_interval({}, 90, confidence);
  s.p99_ci = percentile_interval({}, 99, confidence);
  if (values.empty()) return s;
  std::vector<double> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end());
  s.median_ci = percentile_interval(sorted, 50, confidence);
  s.p90_ci = percentile_interval(sorted, 90, confidence);
  s.p99_ci = percentile_interval(sorted, 99, confidence);
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

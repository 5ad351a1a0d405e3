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
    ci.method = IntervalMethod::order_statistics;
    ci.lower_rank = lower;
    ci.upper_rank = upper;
    ci.lower = sorted[*lower - 1];
    ci.upper = sorted[*upper - 1];
  }
  return ci;
}

const char* to_string(IntervalMethod method) {
  switch (method) {
    case IntervalMethod::order_statistics:
      return "order_statistics";
    case IntervalMethod::batch_quantiles:
      return "batch_quantiles";
    case IntervalMethod::none:
      break;
  }
  return "none";
}

OrderedSample::OrderedSample(size_t capacity) : capacity_(std::max<size_t>(2, capacity)) {}

void OrderedSample::add(double x) {
  const uint64_t index = seen_++;
  if (index % stride_ != 0) return;
  if (values_.size() == capacity_) {
    // Keep every second value (indices 0, 2 stride, 4 stride, ...).
    size_t kept = 0;
    for (size_t i = 0; i < values_.size(); i += 2) values_[kept++] = values_[i];
    values_.resize(kept);
    stride_ *= 2;
    if (index % stride_ != 0) return;
  }
  values_.push_back(x);
}

std::optional<double> lag1_autocorrelation(std::span<const double> series) {
  const size_t n = series.size();
  if (n < 3) return std::nullopt;
  double mean = 0;
  for (double v : series) mean += v;
  mean /= static_cast<double>(n);
  double num = 0, den = 0;
  for (size_t i = 0; i < n; ++i) {
    const double d = series[i] - mean;
    den += d * d;
    if (i + 1 < n) num += d * (series[i + 1] - mean);
  }
  if (!(den > 0)) return std::nullopt;
  return num / den;
}

namespace {

// A batch holds at most this many samples beyond the percentile (ten for
// p99's 1% tail: 1000 samples a batch), for a strongly correlated series.
constexpr double kBatchTailSamples = 10;

// The relative range below which a series counts as constant.
constexpr double kConstantRange = 1e-4;

// The regularised incomplete beta function I_x(a, b) by its continued
// fraction (modified Lentz), on the side where it converges fast.
double incomplete_beta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double front = std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) +
                                a * std::log(x) + b * std::log1p(-x));
  const bool flip = x > (a + 1) / (a + b + 2);
  if (flip) std::swap(a, b), x = 1 - x;
  constexpr double tiny = 1e-300;
  double c = 1, d = 1 - (a + b) * x / (a + 1);
  d = 1 / (std::fabs(d) < tiny ? tiny : d);
  double f = d;
  for (int m = 1; m < 300; ++m) {
    const double md = m;
    double num = md * (b - md) * x / ((a + 2 * md - 1) * (a + 2 * md));
    for (int half = 0; half < 2; ++half) {
      d = 1 + num * d;
      d = 1 / (std::fabs(d) < tiny ? tiny : d);
      c = 1 + num / c;
      if (std::fabs(c) < tiny) c = tiny;
      f *= c * d;
      num = -(a + md) * (a + b + md) * x / ((a + 2 * md) * (a + 2 * md + 1));
    }
    if (std::fabs(c * d - 1) < 1e-15) break;
  }
  const double value = front * f / a;
  return flip ? 1 - value : value;
}

double student_t_cdf(double t, double df) {
  const double tail = 0.5 * incomplete_beta(df / 2, 0.5, df / (df + t * t));
  return t >= 0 ? 1 - tail : tail;
}

// The percentiles (or means) of b contiguous batches of a series:
// batch i holds [i n / b, (i + 1) n / b).
std::vector<std::span<const double>> batches_of(std::span<const double> series, size_t b) {
  std::vector<std::span<const double>> out;
  const size_t n = series.size();
  for (size_t i = 0; i < b; ++i) {
    const size_t from = i * n / b, to = (i + 1) * n / b;
    out.push_back(series.subspan(from, to - from));
  }
  return out;
}

double mean_of(std::span<const double> v) {
  double sum = 0;
  for (double x : v) sum += x;
  return v.empty() ? 0 : sum / static_cast<double>(v.size());
}

// Batch means pass the independence check at a one-sided 5% (with 8
// batches the 1% level would accept almost anything). Eight batches: more
// batches of the same run are shorter, and a tail percentile of a short
// batch of a queue is skewed (one long busy period moves it), which a t
// interval does not cover (the M/D/1 coverage property over 60 s at rho
// 0.8: 16 batches held p99 in 30 of 40 runs, 8 in 37; over 10 s, 16 to 32
// batches held it in 18-25).
constexpr double kBatchIndependenceZ = 1.645;
constexpr size_t kBatchCounts[] = {8};

bool independent(std::optional<double> r1, size_t n, double z) {
  return !r1 || *r1 <= z / std::sqrt(static_cast<double>(n));
}

// The largest batch count of kBatchCounts whose batches hold at least
// `min_size` samples and whose means pass the check; 0 when none.
// `longest` is the batch length of the last count tried.
size_t choose_batches(std::span<const double> series, size_t min_size, size_t& longest) {
  longest = 0;
  for (size_t b : kBatchCounts) {
    if (series.size() / b < min_size) continue;
    longest = series.size() / b;
    std::vector<double> means;
    for (auto batch : batches_of(series, b)) means.push_back(mean_of(batch));
    if (independent(lag1_autocorrelation(means), b, kBatchIndependenceZ)) return b;
  }
  return 0;
}

}  // namespace

double student_t_quantile(double prob, double df) {
  prob = std::clamp(prob, 1e-12, 1 - 1e-12);
  if (prob == 0.5) return 0;
  double lo = -1e6, hi = 1e6;
  for (int i = 0; i < 200 && hi - lo > 1e-10 * std::max(1.0, std::fabs(hi)); ++i) {
    const double mid = 0.5 * (lo + hi);
    (student_t_cdf(mid, df) < prob ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

double binomial_upper(size_t k, size_t n, double confidence) {
  if (n == 0 || k >= n) return 1;
  // P(X <= k; n, q) = I_{1-q}(n - k, k + 1) falls as q grows: bisect for
  // the q where it reaches the one-sided tail.
  const double tail = (1 - confidence) / 2;
  double lo = static_cast<double>(k) / static_cast<double>(n), hi = 1;
  for (int i = 0; i < 200 && hi - lo > 1e-12; ++i) {
    const double mid = 0.5 * (lo + hi);
    const double cdf =
        incomplete_beta(static_cast<double>(n - k), static_cast<double>(k) + 1, 1 - mid);
    (cdf > tail ? lo : hi) = mid;
  }
  return hi;
}

size_t batch_min_samples(double p, double lag1) {
  const double q = std::clamp(p / 100.0, 1e-6, 1 - 1e-6);
  const double r = std::clamp(lag1, 0.0, 0.999);
  const double beyond = std::clamp(2 * (1 + r) / (1 - r), 2.0, kBatchTailSamples);
  return std::max<size_t>(20, static_cast<size_t>(std::ceil(beyond / std::min(q, 1 - q) - 1e-9)));
}

PercentileInterval series_percentile_interval(std::span<const double> series, double p,
                                              double confidence) {
  std::vector<double> sorted(series.begin(), series.end());
  std::sort(sorted.begin(), sorted.end());
  PercentileInterval ci = percentile_interval(sorted, p, confidence);
  ci.lag1 = lag1_autocorrelation(series);
  // A series within 0.01% of its median (a deterministic device, rounding
  // left) is constant for the check: any interval of it lies in that range.
  const bool constant =
      !sorted.empty() &&
      sorted.back() - sorted.front() <= kConstantRange * std::fabs(sorted[sorted.size() / 2]);
  if (constant || independent(ci.lag1, series.size(), kIndependenceZ)) return ci;
  // Correlated: the order-statistic rule does not hold.
  ci.lower_rank = ci.upper_rank = std::nullopt;
  ci.lower = ci.upper = std::nullopt;
  ci.method = IntervalMethod::none;
  const size_t min_size = batch_min_samples(p, ci.lag1.value_or(0));
  ci.needs = std::max(ci.needs, min_size * kBatchCounts[std::size(kBatchCounts) - 1]);
  size_t longest = 0;
  const size_t b = choose_batches(series, min_size, longest);
  ci.batch_size = longest;
  if (b == 0) return ci;
  RunningStats spread;
  std::vector<double> batch;
  for (auto part : batches_of(series, b)) {
    batch.assign(part.begin(), part.end());
    std::sort(batch.begin(), batch.end());
    spread.add(*percentile_sorted(batch, p));
  }
  const double estimate = *percentile_sorted(sorted, p);
  const double half = student_t_quantile((1 + confidence) / 2, static_cast<double>(b - 1)) *
                      spread.stddev().value_or(0) / std::sqrt(static_cast<double>(b));
  ci.method = IntervalMethod::batch_quantiles;
  ci.batches = b;
  ci.batch_size = series.size() / b;
  ci.lower = std::max(sorted.front(), estimate - half);
  ci.upper = estimate + half;
  return ci;
}

MeanInterval series_mean_interval(std::span<const double> series, double confidence) {
  MeanInterval r;
  r.confidence = confidence;
  if (series.empty()) return r;
  r.mean = mean_of(series);
  auto t_interval = [&](std::span<const double> units) {
    RunningStats rs;
    for (double v : units) rs.add(v);
    const double half =
        student_t_quantile((1 + confidence) / 2, static_cast<double>(units.size() - 1)) *
        rs.stddev().value_or(0) / std::sqrt(static_cast<double>(units.size()));
    r.lower = *r.mean - half;
    r.upper = *r.mean + half;
  };
  if (series.size() >= 2 &&
      independent(lag1_autocorrelation(series), series.size(), kIndependenceZ)) {
    r.batches = series.size();
    r.batch_size = 1;
    t_interval(series);
    return r;
  }
  size_t longest = 0;
  const size_t b = choose_batches(series, 1, longest);
  r.batch_size = longest;
  if (b < 2) return r;
  std::vector<double> means;
  for (auto part : batches_of(series, b)) means.push_back(mean_of(part));
  r.batches = b;
  r.batch_size = series.size() / b;
  t_interval(means);
  return r;
}

Summary summarize_series(std::span<const double> series, double confidence) {
  Summary s = summarize(series, confidence);
  if (series.empty()) return s;
  s.median_ci = series_percentile_interval(series, 50, confidence);
  s.p90_ci = series_percentile_interval(series, 90, confidence);
  s.p95_ci = series_percentile_interval(series, 95, confidence);
  s.p99_ci = series_percentile_interval(series, 99, confidence);
  return s;
}

Summary summarize(std::span<const double> values, double confidence) {
  Summary s;
  s.count = values.size();
  s.median_ci = percentile_interval({}, 50, confidence);
  s.p90_ci = percentile_interval({}, 90, confidence);
  s.p95_ci = percentile_interval({}, 95, confidence);
  s.p99_ci = percentile_interval({}, 99, confidence);
  if (values.empty()) return s;
  std::vector<double> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end());
  s.median_ci = percentile_interval(sorted, 50, confidence);
  s.p90_ci = percentile_interval(sorted, 90, confidence);
  s.p95_ci = percentile_interval(sorted, 95, confidence);
  s.p99_ci = percentile_interval(sorted, 99, confidence);
  RunningStats rs;
  for (double v : sorted) rs.add(v);
  s.min = sorted.front();
  s.max = sorted.back();
  s.mean = rs.mean();
  s.stddev = rs.stddev();
  s.median = percentile_sorted(sorted, 50);
  s.p90 = percentile_sorted(sorted, 90);
  s.p95 = percentile_sorted(sorted, 95);
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

namespace {

// The number of ways (as a double) to pick k of the items with doubled-rank
// sum s, for every s: dp[k][s]. Doubled midranks are integers.
std::vector<double> rank_sum_counts(const std::vector<int>& doubled_ranks, size_t k) {
  int total = 0;
  for (int r : doubled_ranks) total += r;
  std::vector<std::vector<double>> dp(k + 1, std::vector<double>(static_cast<size_t>(total) + 1));
  dp[0][0] = 1;
  for (int r : doubled_ranks)
    for (size_t j = k; j >= 1; --j)
      for (int sum = total; sum >= r; --sum)
        dp[j][static_cast<size_t>(sum)] += dp[j - 1][static_cast<size_t>(sum - r)];
  return dp[k];
}

// Midranks of the pooled sample, doubled (1-based ranks x 2).
std::vector<int> doubled_midranks(std::span<const double> pooled, std::vector<int>& out_index) {
  const size_t n = pooled.size();
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return pooled[a] < pooled[b]; });
  std::vector<int> ranks(n);
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j + 1 < n && pooled[order[j + 1]] == pooled[order[i]]) ++j;
    const int doubled = static_cast<int>(i + 1 + j + 1);  // (first + last) ranks
    for (size_t t = i; t <= j; ++t) ranks[order[t]] = doubled;
    i = j + 1;
  }
  out_index.assign(order.begin(), order.end());
  return ranks;
}

double normal_sf(double z) {
  return 0.5 * std::erfc(z / std::sqrt(2.0));
}

}  // namespace

UTest mann_whitney_u(std::span<const double> x, std::span<const double> y) {
  UTest t;
  t.n_x = x.size();
  t.n_y = y.size();
  if (x.empty() || y.empty()) return t;
  for (double a : x)
    for (double b : y) t.u += b > a ? 1.0 : (b == a ? 0.5 : 0.0);
  std::vector<double> pooled(x.begin(), x.end());
  pooled.insert(pooled.end(), y.begin(), y.end());
  std::vector<int> order;
  const std::vector<int> ranks = doubled_midranks(pooled, order);
  const size_t n = pooled.size(), ny = y.size();
  // U_y = R_y - ny (ny + 1) / 2; in doubled ranks: 2 R_y = 2 U_y + ny (ny + 1).
  const double mean_u = static_cast<double>(x.size() * ny) / 2;
  if (n <= 100) {
    const std::vector<double> counts = rank_sum_counts(ranks, ny);
    double all = 0, low = 0, high = 0;
    const double observed = 2 * t.u + static_cast<double>(ny * (ny + 1));
    for (size_t s2 = 0; s2 < counts.size(); ++s2) {
      if (counts[s2] == 0) continue;
      all += counts[s2];
      const auto sd = static_cast<double>(s2);
      if (sd <= observed + 1e-9) low += counts[s2];
      if (sd >= observed - 1e-9) high += counts[s2];
    }
    t.exact = true;
    t.p_value = std::min(1.0, 2 * std::min(low, high) / all);
    return t;
  }
  // Normal approximation with the tie correction and a continuity correction.
  double ties = 0;
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j + 1 < n &&
           ranks[static_cast<size_t>(order[j + 1])] == ranks[static_cast<size_t>(order[i])])
      ++j;
    const auto tk = static_cast<double>(j - i + 1);
    ties += tk * tk * tk - tk;
    i = j + 1;
  }
  const auto nd = static_cast<double>(n), nx = static_cast<double>(x.size()),
             nyd = static_cast<double>(ny);
  const double var = nx * nyd / 12 * ((nd + 1) - ties / (nd * (nd - 1)));
  if (!(var > 0)) return t;  // every value tied: no evidence either way
  const double z = std::max(0.0, std::fabs(t.u - mean_u) - 0.5) / std::sqrt(var);
  t.p_value = std::min(1.0, 2 * normal_sf(z));
  return t;
}

size_t mann_whitney_min_n(double alpha) {
  for (size_t n = 1; n < 64; ++n) {
    double c = 1;  // C(2n, n)
    for (size_t i = 1; i <= n; ++i) c = c * static_cast<double>(n + i) / static_cast<double>(i);
    if (2 / c <= alpha) return n;
  }
  return 64;
}

ShiftEstimate hodges_lehmann(std::span<const double> x, std::span<const double> y,
                             double confidence) {
  ShiftEstimate e;
  e.confidence = confidence;
  if (x.empty() || y.empty()) return e;
  std::vector<double> d;
  d.reserve(x.size() * y.size());
  for (double a : x)
    for (double b : y) d.push_back(b - a);
  std::sort(d.begin(), d.end());
  e.estimate = percentile_sorted(d, 50);
  // C: the largest c with P(U <= c) <= tail under no ties; the interval is
  // [d_(C+1), d_(N-C)] (1-based).
  const size_t nx = x.size(), ny = y.size(), n_all = nx * ny;
  const double tail = (1 - confidence) / 2;
  std::vector<double> cdf;  // P(U <= c), c = 0..n_all
  if (nx + ny <= 100) {
    std::vector<int> ranks(nx + ny);
    for (size_t i = 0; i < ranks.size(); ++i) ranks[i] = static_cast<int>(2 * (i + 1));
    const std::vector<double> counts = rank_sum_counts(ranks, ny);
    double all = 0;
    for (double c : counts) all += c;
    // doubled rank sum 2R = 2U + ny (ny + 1): U = (s2 - ny (ny + 1)) / 2.
    cdf.assign(n_all + 1, 0);
    const size_t base = ny * (ny + 1);
    // counts is indexed up to the sum of every rank; ny ranks sum to at most
    // base + 2 n_all, past which it is zero.
    const size_t last = std::min(counts.size() - 1, base + 2 * n_all);
    for (size_t s2 = base; s2 <= last; s2 += 2) cdf[(s2 - base) / 2] += counts[s2] / all;
    for (size_t c = 1; c < cdf.size(); ++c) cdf[c] += cdf[c - 1];
  } else {
    const double mean = static_cast<double>(n_all) / 2;
    const double sd =
        std::sqrt(static_cast<double>(nx * ny) * static_cast<double>(nx + ny + 1) / 12);
    cdf.resize(n_all + 1);
    for (size_t c = 0; c <= n_all; ++c)
      cdf[c] = 1 - normal_sf((static_cast<double>(c) + 0.5 - mean) / sd);
  }
  std::optional<size_t> big_c;
  for (size_t c = 0; c < cdf.size() && cdf[c] <= tail; ++c) big_c = c;
  if (!big_c || *big_c + 1 > n_all - *big_c) return e;
  e.lower = d[*big_c];              // d_(C+1)
  e.upper = d[n_all - *big_c - 1];  // d_(N-C)
  return e;
}

std::optional<double> mean_half_width_95(std::span<const double> values) {
  if (values.size() < 2) return std::nullopt;
  // t(0.975, df) for df = 1..30; beyond, 1.96 + 2.4 / df is within 0.2%.
  static constexpr double kT[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306,
                                  2.262,  2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120,
                                  2.110,  2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
                                  2.060,  2.056, 2.052, 2.048, 2.045, 2.042};
  const size_t df = values.size() - 1;
  const double t = df <= 30 ? kT[df - 1] : 1.96 + 2.4 / static_cast<double>(df);
  RunningStats rs;
  for (double v : values) rs.add(v);
  return t * *rs.stddev() / std::sqrt(static_cast<double>(values.size()));
}

std::optional<double> relative_spread(std::span<const double> values) {
  return summarize(values).spread;
}

}  // namespace rig

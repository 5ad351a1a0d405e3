// Building blocks of the characterization scenarios: a pipelined measurement point, the link
// fit and the plateau.
#include <algorithm>
#include <cmath>
#include <limits>

#include "rig/scenario/point.hpp"

namespace rig {

PointResult measure_point(Device& device, const Workspace& workspace, uint32_t depth,
                          const PointSettings& s) {
  PointResult r;
  r.depth = depth;
  r.stable = true;
  std::vector<double> little_rates;
  for (uint32_t i = 0; i < s.repeats; ++i) {
    const SteadyRepeat rep = measure_steady(device, workspace, steady_settings(s, depth, i));
    r.depth = rep.depth;
    r.declared_cap = rep.declared_cap;
    // A repeat counts when its span held completions (an abort in the warm-up
    // leaves none).
    if (rep.inferences > 0 && rep.rate > 0) {
      r.repeat_rates.push_back(rep.rate);
      r.stability.push_back(judge_stability(rep, s.stability_tolerance));
      if (rep.latency_ms.mean && *rep.latency_ms.mean > 0)
        little_rates.push_back(static_cast<double>(rep.depth) * 1e3 / *rep.latency_ms.mean);
    }
    r.stable = r.stable && rep.stable;
    r.errors += rep.errors;
    if (!r.first_error && rep.first_error) r.first_error = rep.first_error;
    if (rep.aborted) {
      r.aborted = true;
      break;
    }
  }
  r.rate = summarize(r.repeat_rates);
  r.little_rate = summarize(little_rates);
  if (r.repeat_rates.empty()) r.stable = false;
  if (r.rate.median && *r.rate.median > 0) r.ms_per_frame = 1000.0 / *r.rate.median;
  return r;
}

LinkFit fit_link(std::span<const double> bytes, std::span<const double> ms) {
  LinkFit f;
  const size_t n = std::min(bytes.size(), ms.size());
  f.points = n;
  if (n < 2) return f;
  double mx = 0, my = 0;
  for (size_t i = 0; i < n; ++i) {
    mx += bytes[i];
    my += ms[i];
  }
  mx /= static_cast<double>(n);
  my /= static_cast<double>(n);
  double sxx = 0, sxy = 0, syy = 0;
  for (size_t i = 0; i < n; ++i) {
    sxx += (bytes[i] - mx) * (bytes[i] - mx);
    sxy += (bytes[i] - mx) * (ms[i] - my);
    syy += (ms[i] - my) * (ms[i] - my);
  }
  if (!(sxx > 0)) return f;        // every rung the same size: no slope to fit
  const double slope = sxy / sxx;  // ms per byte
  const double intercept = my - slope * mx;
  f.fixed_ms = intercept;
  if (slope > 0) f.bandwidth_bytes_per_s = 1e3 / slope;
  double ss_res = 0, sum_rel2 = 0, max_rel = 0;
  bool relative_ok = true;
  for (size_t i = 0; i < n; ++i) {
    const double res = ms[i] - (intercept + slope * bytes[i]);
    f.residuals_ms.push_back(res);
    ss_res += res * res;
    if (ms[i] > 0) {
      const double rel = res / ms[i];
      f.relative_residuals.push_back(rel);
      sum_rel2 += rel * rel;
      max_rel = std::max(max_rel, std::fabs(rel));
    } else {
      relative_ok = false;
      f.relative_residuals.push_back(0);
    }
  }
  if (relative_ok) {
    f.rms_relative_residual = std::sqrt(sum_rel2 / static_cast<double>(n));
    f.max_relative_residual = max_rel;
  }
  if (syy > 0) f.r_squared = 1 - ss_res / syy;
  return f;
}

Plateau find_plateau(std::span<const std::optional<double>> mb_per_s, double tolerance) {
  Plateau p;
  p.tolerance = tolerance;
  size_t best_len = 0;
  for (size_t i = 0; i < mb_per_s.size(); ++i) {
    std::vector<double> run;
    for (size_t j = i; j < mb_per_s.size() && mb_per_s[j]; ++j) {
      run.push_back(*mb_per_s[j]);
      const auto spread = relative_spread(run);
      if (!spread || *spread > tolerance) break;
      // >= : of equally long runs, the one over larger frames wins.
      if (run.size() >= 2 && run.size() >= best_len) {
        best_len = run.size();
        p.found = true;
        p.first = i;
        p.last = j;
      }
    }
  }
  if (p.found) {
    std::vector<double> values;
    for (size_t k = p.first; k <= p.last; ++k) values.push_back(*mb_per_s[k]);
    const Summary s = summarize(values);
    p.median_mb_per_s = s.median;
    p.min_mb_per_s = s.min;
    p.max_mb_per_s = s.max;
  }
  return p;
}

}  // namespace rig

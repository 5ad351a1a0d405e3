// The bounded search for the highest rate that meets a latency bound.
#include "rig/scenario/rate_search.hpp"

#include <algorithm>
#include <cmath>

namespace rig {

RateSearch find_max_rate(Device& device, const Workspace& workspace, const RateSearchSettings& s) {
  RateSearch out;
  const double bound_ms = to_ms(s.latency_bound);
  auto probe = [&](double rate) {
    OfferedSettings os = s.offered;
    os.rate = rate;
    const OfferedRun run = measure_offered(device, workspace, os);
    RateProbe p;
    p.rate = rate;
    p.p99_ms = run.latency_ms.p99;
    p.p99_enough = run.latency_ms.p99_ci.enough();
    p.keeps_up = run.keeps_up;
    p.meets = run.keeps_up && p.p99_ms && *p.p99_ms <= bound_ms;
    out.probes.push_back(p);
    if (p.meets)
      out.best_rate = std::max(out.best_rate.value_or(0), rate);
    else
      out.first_failing_rate = std::min(out.first_failing_rate.value_or(rate), rate);
    return p.meets;
  };
  if (!(s.min_rate > 0) || s.max_rate < s.min_rate || s.max_probes == 0) return out;
  if (probe(s.max_rate)) return out;
  if (out.probes.size() >= s.max_probes || !probe(s.min_rate)) return out;
  double lo = s.min_rate, hi = s.max_rate;
  while (out.probes.size() < s.max_probes && hi / lo - 1 > s.resolution) {
    const double mid = std::sqrt(lo * hi);
    (probe(mid) ? lo : hi) = mid;
  }
  return out;
}

}  // namespace rig

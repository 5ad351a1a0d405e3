// judge_stability (rig/scenario/stability.hpp): a repeat's last three
// windows against the tolerance and against the frame-time noise.
#include "rig/scenario/stability.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "rig/stats.hpp"
#include "rig/units.hpp"

namespace rig {

namespace {

// The frame-time noise c, squared: the pipelined latencies' squared
// coefficient of variation holds the noise (c^2 / d: at depth d a request
// waits for about d frame times) and any drift or step (T); the windows'
// rates hold c^2 / n and the same T. Their difference leaves the noise:
// c^2 = (V_latency - V_windows) / (1 / d - 1 / n). Where a window holds no
// more frames than the depth, the difference cannot separate them and the
// latencies alone give c^2 = d x V_latency (an upper bound).
std::optional<double> frame_cv(const SteadyRepeat& rep) {
  const Summary& lat = rep.latency_ms;
  if (lat.count < 2 || !lat.mean || !lat.stddev || *lat.mean <= 0) return std::nullopt;
  const double v_latency = std::pow(*lat.stddev / *lat.mean, 2);
  const double depth = std::max<uint32_t>(1, rep.depth);
  std::vector<double> rates;
  double frames = 0;
  for (const auto& w : rep.windows) {
    rates.push_back(w.rate);
    frames += static_cast<double>(w.inferences);
  }
  const double per_window = rates.empty() ? 0 : frames / static_cast<double>(rates.size());
  const double weight = 1 / depth - (per_window > 0 ? 1 / per_window : 1);
  if (rates.size() < 2 || weight <= 1e-9) return std::sqrt(v_latency * depth);
  const Summary r = summarize(rates);
  if (!r.mean || !r.stddev || *r.mean <= 0) return std::sqrt(v_latency * depth);
  const double v_windows = std::pow(*r.stddev / *r.mean, 2);
  return std::sqrt(std::max(0.0, v_latency - v_windows) / weight);
}

}  // namespace

StabilityJudgement judge_stability(const SteadyRepeat& rep, double tolerance) {
  StabilityJudgement j;
  const auto& w = rep.windows;
  j.windows = w.size();
  j.frame_cv = frame_cv(rep);
  if (j.frame_cv && tolerance > 0)
    j.frames_needed = static_cast<uint64_t>(
        std::ceil(std::pow(kStabilityRangeQuantile * *j.frame_cv / tolerance, 2)));
  const size_t from = w.size() >= 3 ? w.size() - 3 : 0;
  j.frames_per_window = w.empty() ? rep.inferences : w[from].inferences;
  for (size_t i = from; i < w.size(); ++i)
    j.frames_per_window = std::min(j.frames_per_window, w[i].inferences);
  if (j.frame_cv && j.frames_per_window > 0)
    j.noise_spread =
        kStabilityRangeQuantile * *j.frame_cv / std::sqrt(static_cast<double>(j.frames_per_window));
  if (w.size() < 3) {
    j.state = Stability::unresolved;
    return j;
  }
  const double last3[3] = {w[from].rate, w[from + 1].rate, w[from + 2].rate};
  j.spread = relative_spread(last3);
  if (j.spread && *j.spread <= tolerance)
    j.state = Stability::stable;
  else if (j.spread && j.noise_spread && *j.spread <= *j.noise_spread)
    j.state = Stability::unresolved;
  else
    j.state = Stability::unstable;
  return j;
}

std::string unresolved_stability_text(const StabilityJudgement& j, double tolerance,
                                      const std::string& who) {
  const std::string per_window = std::to_string(j.frames_per_window);
  if (j.windows < 3)
    return who + "too few frames per window (" + per_window + " in " + std::to_string(j.windows) +
           " window" + (j.windows == 1 ? "" : "s") +
           ", fewer than the 3 the stability check compares) to judge whether the rate "
           "settled: raise --duration";
  std::string noise;
  if (j.frame_cv && j.noise_spread)
    noise = " (frame times vary by " + format_fixed(*j.frame_cv * 100, 1) +
            "% sd/mean, so 3 windows of " + per_window + " frames differ by up to " +
            format_fixed(*j.noise_spread * 100, 1) + "% by chance; the last 3 differ by " +
            format_fixed(j.spread.value_or(0) * 100, 1) + "%; about " +
            std::to_string(j.frames_needed) + " frames per window tell " +
            format_fixed(tolerance * 100, 1) + "% from noise)";
  return who + "too few frames per window (" + per_window + ") to tell a " +
         format_fixed(tolerance * 100, 1) + "% change from the frame-time noise" + noise +
         ": raise --duration";
}

}  // namespace rig

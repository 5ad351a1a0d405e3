// The verdict rules: one small named function per constraint, each returning
// whether it was met, the evidence, and (when not met) what to change. The
// judge() functions compose the rules that apply to each scenario, in the
// order their findings are reported.
//
// One file on purpose: the judges share most rules (errors, stability, the
// clock, the confounds), and keeping the rules beside every judge that uses
// them is what shows which scenario checks what; each section is one tool.
#include "rig/scenario/verdict.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "rig/scenario/ab.hpp"
#include "rig/scenario/bench.hpp"
#include "rig/scenario/confounds.hpp"
#include "rig/scenario/ladder.hpp"
#include "rig/scenario/loop.hpp"
#include "rig/scenario/rate_search.hpp"
#include "rig/scenario/soak.hpp"
#include "rig/scenario/sweep.hpp"
#include "rig/units.hpp"
#include "scenario/analysis_notes.hpp"
#include "scenario/monitored_run.hpp"

namespace rig {
namespace {

RuleOutcome outcome(std::string rule, Severity severity, std::string evidence) {
  RuleOutcome o;
  o.rule = std::move(rule);
  o.severity = severity;
  o.evidence = std::move(evidence);
  return o;
}

// Adds a finding and marks the rule not met.
void finding(RuleOutcome& o, std::string message) {
  o.met = false;
  o.findings.push_back(std::move(message));
}

std::string repeat_name(size_t i) {
  return "repeat " + std::to_string(i + 1);
}

// ---------------------------------------------------------------------------
// Rules shared by every scenario

RuleOutcome depth_within_queue(const std::vector<std::string>& clamped_notes) {
  RuleOutcome o = outcome("depth_within_queue", Severity::warns,
                          clamped_notes.empty() ? "the depth asked for was run" : "clamped");
  for (const auto& n : clamped_notes) finding(o, n);
  return o;
}

RuleOutcome depth_within_queue(const std::optional<std::string>& clamped_note) {
  return depth_within_queue(clamped_note ? std::vector<std::string>{*clamped_note}
                                         : std::vector<std::string>{});
}

RuleOutcome no_errors(uint64_t errors, const std::optional<Error>& first, std::string_view where) {
  RuleOutcome o = outcome("no_errors", Severity::invalidates,
                          std::to_string(errors) + " failed inference(s) " + std::string(where));
  if (errors > 0)
    finding(o, std::to_string(errors) + " inference(s) failed; first: " +
                   (first ? first->to_string() : std::string("unknown")));
  return o;
}

// On a virtual clock the host's load before the run cannot move a figure
// (the simulation's times are not the host's): that warning is left out.
RuleOutcome quiet_host(const Environment& env, bool virtual_clock) {
  std::vector<std::string> found;
  for (const auto& w : env.warnings)
    if (!(virtual_clock && w.rfind("host busy before the run", 0) == 0)) found.push_back(w);
  RuleOutcome o = outcome(
      "quiet_host", Severity::warns,
      std::to_string(found.size()) + " environment warning(s)" +
          (found.size() != env.warnings.size() ? " (the host's load is left out on a virtual clock)"
                                               : ""));
  for (auto& w : found) finding(o, std::move(w));
  return o;
}

// `rule` and `prefix` name the device when a result has two (A/B).
RuleOutcome device_without_warnings(const DeviceInfo& device,
                                    std::string rule = "device_without_warnings",
                                    const std::string& prefix = "device: ") {
  RuleOutcome o = outcome(std::move(rule), Severity::warns,
                          std::to_string(device.warnings.size()) + " device warning(s)");
  for (const auto& w : device.warnings) finding(o, prefix + w);
  return o;
}

RuleOutcome real_clock(bool virtual_clock, std::string message) {
  RuleOutcome o =
      outcome("real_clock", Severity::warns, virtual_clock ? "virtual clock" : "real clock");
  if (virtual_clock) finding(o, std::move(message));
  return o;
}

// ---------------------------------------------------------------------------
// Confounds (rig/scenario/confounds.hpp): what may have spoiled a run. Each
// states its threshold; a rule without data is met and says why it was
// skipped ("skipped: ..."), never guessed.

Severity confound_severity(bool strict) {
  return strict ? Severity::invalidates : Severity::warns;
}

RuleOutcome confound(std::string rule, bool strict, std::string threshold) {
  RuleOutcome o = outcome(std::move(rule), confound_severity(strict), {});
  o.threshold = std::move(threshold);
  return o;
}

RuleOutcome skipped(RuleOutcome o, const std::string& why) {
  o.evidence = "skipped: " + why;
  return o;
}

const char* kHostSkipped =
    "virtual clock: the figures are simulated, so the host does not affect them";

std::string share(double v) {
  return format_fixed(v * 100, 1) + "%";
}

bool measured_sample(const MonitorSample& s) {
  return (s.phase == "measure" || s.phase == "device_loop") && s.repeat > 0;
}

// A series' values in the measured parts, in order.
std::vector<double> measured_values(const MonitorRecord& m, const std::string& key) {
  std::vector<double> out;
  for (const auto& s : m.samples)
    if (measured_sample(s))
      if (auto it = s.values.find(key); it != s.values.end()) out.push_back(it->second);
  return out;
}

// Every series whose name starts with `prefix` (or equals one of `exact`).
std::vector<std::string> series_names(const MonitorRecord& m, std::string_view prefix,
                                      std::initializer_list<std::string_view> exact = {}) {
  std::vector<std::string> out;
  for (const auto& s : m.samples)
    for (const auto& [k, v] : s.values) {
      const bool match = (!prefix.empty() && k.rfind(prefix, 0) == 0) ||
                         std::find(exact.begin(), exact.end(), k) != exact.end();
      if (match && std::find(out.begin(), out.end(), k) == out.end()) out.push_back(k);
    }
  return out;
}

double mean_of(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return v.empty() ? 0 : sum / static_cast<double>(v.size());
}

// Why a monitored rule has nothing to read: the monitor off, or the source's reason.
std::optional<std::string> monitor_off(const MonitorRecord& m) {
  if (!m.enabled) return std::string("the monitor was off (--no-monitor)");
  return std::nullopt;
}

RuleOutcome host_contention(const ConfoundInputs& in) {
  const ConfoundSettings& s = *in.settings;
  const MonitorRecord& m = *in.monitor;
  RuleOutcome o =
      confound("host_contention", s.strict,
               "others_cpu_max " + share(s.others_cpu_max) + " of the host's CPU time; " +
                   "psi_some_max " + format_fixed(s.psi_some_max_pct, 1) + "% of the time");
  if (auto off = monitor_off(m)) return skipped(o, *off);
  const auto others = measured_values(m, "others_cpu");
  const auto psi_cpu = measured_values(m, "psi_cpu_some");
  const auto psi_io = measured_values(m, "psi_io_some");
  if (others.empty() && psi_cpu.empty() && psi_io.empty())
    return skipped(o, m.host_sampled ? m.why_absent("host_cpu") + "; " + m.why_absent("psi_cpu")
                                     : std::string(kHostSkipped));
  std::string ev;
  if (!others.empty()) {
    const double mean = mean_of(others);
    ev = "others' CPU " + share(mean) + " of the host (mean of " + std::to_string(others.size()) +
         " samples)";
    if (mean > s.others_cpu_max)
      finding(o, "host contention: other processes used " + share(mean) +
                     " of the host's CPU time during the measured part (> " +
                     share(s.others_cpu_max) + "); run on a quiet host or move the other load");
  }
  for (const auto& [name, values] : {std::pair{"cpu", &psi_cpu}, std::pair{"io", &psi_io}}) {
    if (values->empty()) continue;
    const double mean = mean_of(*values);
    ev += std::string(ev.empty() ? "" : "; ") + "PSI " + name + " some " + format_fixed(mean, 1) +
          "%";
    if (mean > s.psi_some_max_pct)
      finding(o, std::string("host contention: tasks stalled on ") + name + " " +
                     format_fixed(mean, 1) + "% of the measured time (PSI some > " +
                     format_fixed(s.psi_some_max_pct, 1) + "%); run on a quiet host");
  }
  o.evidence = ev;
  return o;
}

RuleOutcome steal_time(const ConfoundInputs& in) {
  const ConfoundSettings& s = *in.settings;
  const MonitorRecord& m = *in.monitor;
  RuleOutcome o = confound("steal_time", s.strict, "steal_max " + share(s.steal_max));
  if (auto off = monitor_off(m)) return skipped(o, *off);
  const auto steal = measured_values(m, "steal");
  if (steal.empty())
    return skipped(o, m.host_sampled ? m.why_absent("host_cpu") : std::string(kHostSkipped));
  const double mean = mean_of(steal);
  o.evidence = "steal " + share(mean) + " of CPU time (mean of " + std::to_string(steal.size()) +
               " samples)";
  if (mean > s.steal_max)
    finding(o, "steal time: the hypervisor took " + share(mean) +
                   " of the CPU time during the measured part (> " + share(s.steal_max) +
                   "); use a dedicated or less loaded virtual machine");
  return o;
}

// A run's windows as one step rather than a trend: the split into a first
// and a last part whose two mean rates fit the windows best (least squares).
// It is a step when it leaves less than half the squared residual of the
// linear trend (a steady trend leaves a step fit much worse than the line),
// each part holds at least two windows (one odd first or last window is not
// a step), and the two means differ by more than twice the windows' scatter
// about them (as the trend must exceed twice its scatter).
struct RateStep {
  size_t at = 0;  // the first window of the last part, 0-based among all the run's windows
  double before = 0, after = 0;
};

std::optional<RateStep> rate_step(const std::vector<WindowFigure>& windows) {
  std::vector<std::pair<double, double>> pts;
  std::vector<size_t> index;  // pts[i] is windows[index[i]]
  for (size_t i = 0; i < windows.size(); ++i)
    if (windows[i].duration_s > 0) {
      pts.emplace_back(windows[i].start_s + windows[i].duration_s / 2, windows[i].rate);
      index.push_back(i);
    }
  if (pts.size() < 4) return std::nullopt;
  const auto n = static_cast<double>(pts.size());
  double mx = 0, my = 0;
  for (const auto& [x, y] : pts) {
    mx += x / n;
    my += y / n;
  }
  double sxx = 0, sxy = 0, syy = 0;
  for (const auto& [x, y] : pts) {
    sxx += (x - mx) * (x - mx);
    sxy += (x - mx) * (y - my);
    syy += (y - my) * (y - my);
  }
  if (!(sxx > 0)) return std::nullopt;
  const double linear_residual = std::max(0.0, syy - sxy * sxy / sxx);
  std::optional<RateStep> best;
  double best_residual = 0;
  for (size_t k = 2; k + 2 <= pts.size(); ++k) {
    double a = 0, b = 0;
    for (size_t i = 0; i < pts.size(); ++i) (i < k ? a : b) += pts[i].second;
    a /= static_cast<double>(k);
    b /= static_cast<double>(pts.size() - k);
    double residual = 0;
    for (size_t i = 0; i < pts.size(); ++i) {
      const double d = pts[i].second - (i < k ? a : b);
      residual += d * d;
    }
    if (!best || residual < best_residual) {
      best = RateStep{index[k], a, b};
      best_residual = residual;
    }
  }
  if (!best || !(best->before > 0) || !(best_residual < 0.5 * linear_residual)) return std::nullopt;
  const double scatter = std::sqrt(best_residual / (n - 2));
  if (!(std::fabs(best->after - best->before) > 2 * scatter)) return std::nullopt;
  return best;
}

// What the monitor read beside a rate that moved, each in words, or
// nullopt: a temperature rising or a clock falling (heating, throttling),
// host contention over its threshold, other clients of a shared device.
std::optional<std::string> heating_reading(const MonitorRecord& m) {
  if (!m.enabled) return std::nullopt;
  for (const auto& key : series_names(m, "temp_c:", {"device:temperature_c"})) {
    const auto t = measured_values(m, key);
    if (t.size() >= 2 && t.back() - t.front() >= 1.0)
      return key + " rose " + format_fixed(t.front(), 1) + " -> " + format_fixed(t.back(), 1) +
             " C";
  }
  for (const char* key : {"cpu_freq_min_mhz", "device:clock_mhz"}) {
    const auto f = measured_values(m, key);
    if (f.size() >= 2 && f.front() > 0 && f.back() < 0.95 * f.front())
      return std::string(key) + " fell " + format_fixed(f.front(), 0) + " -> " +
             format_fixed(f.back(), 0) + " MHz";
  }
  const auto throttle = measured_values(m, "throttle_events");
  if (throttle.size() >= 2 && throttle.back() > throttle.front())
    return "the thermal throttle counters rose by " +
           format_fixed(throttle.back() - throttle.front(), 0);
  return std::nullopt;
}

std::optional<std::string> contention_reading(const MonitorRecord& m, const ConfoundSettings& s) {
  if (!m.enabled) return std::nullopt;
  std::string out;
  const auto others = measured_values(m, "others_cpu");
  if (!others.empty() && mean_of(others) > s.others_cpu_max)
    out = "other processes' CPU " + share(mean_of(others)) + " of the host";
  for (const auto& [name, key] :
       {std::pair{"cpu", "psi_cpu_some"}, std::pair{"io", "psi_io_some"}}) {
    const auto v = measured_values(m, key);
    if (!v.empty() && mean_of(v) > s.psi_some_max_pct)
      out += std::string(out.empty() ? "" : ", ") + "PSI " + name + " some " +
             format_fixed(mean_of(v), 1) + "%";
  }
  const auto steal = measured_values(m, "steal");
  if (!steal.empty() && mean_of(steal) > s.steal_max)
    out += std::string(out.empty() ? "" : ", ") + "steal " + share(mean_of(steal));
  if (out.empty()) return std::nullopt;
  return "host contention (" + out + ")";
}

std::optional<std::string> sharing_reading(const MonitorRecord& m) {
  if (!m.enabled) return std::nullopt;
  const auto reloads = measured_values(m, "device:server.model_reloads");
  const auto own = measured_values(m, "device:server.own_model_loads");
  const auto others = measured_values(m, "device:server.other_requests");
  // The loads this connection asked for (a ladder's model per size) are the
  // scenario's own, not other clients': taken off as device_shared does.
  const double all_reloads =
      reloads.size() >= 2 ? std::max(0.0, reloads.back() - reloads.front()) : 0;
  const double own_reloads =
      own.size() >= 2 ? std::min(all_reloads, std::max(0.0, own.back() - own.front())) : 0;
  const double n_reloads = all_reloads - own_reloads;
  const double n_requests = others.size() >= 2 ? std::max(0.0, others.back() - others.front()) : 0;
  if (n_reloads <= 0 && n_requests <= 0) return std::nullopt;
  return "other clients used the device (" + format_fixed(n_requests, 0) + " of their requests, " +
         format_fixed(n_reloads, 0) + " model reloads)";
}

// The rate's movement across each run's windows, named by its direction and
// shape (a trend, or a step at one window), with the reading it coincided
// with. Heating is named only where a temperature or clock reading supports
// it; a device other clients shared is the sharing rule's to explain
// (device_shared), so drift is not blamed for it.
RuleOutcome thermal_drift(const ConfoundInputs& in) {
  const ConfoundSettings& s = *in.settings;
  const MonitorRecord& m = *in.monitor;
  RuleOutcome o = confound("thermal_drift", s.strict,
                           "drift_max " + share(s.drift_max) +
                               " rate trend (or step) across a run's windows (and beyond twice "
                               "their scatter); temp_rise_max " +
                               format_fixed(s.temp_rise_max_c, 1) + " C");
  const auto heating = heating_reading(m);
  const auto contention = contention_reading(m, s);
  const auto sharing = sharing_reading(m);
  auto signed_share = [](double v) { return (v >= 0 ? "+" : "") + format_fixed(v * 100, 1) + "%"; };
  std::string ev;
  std::optional<RateTrend> worst;
  size_t worst_run = 0;
  std::string explained;
  for (size_t i = 0; i < in.runs.size(); ++i) {
    auto t = rate_trend(*in.runs[i]);
    if (t && (!worst || std::fabs(t->change) > std::fabs(worst->change))) {
      worst = t;
      worst_run = i;
    }
    const std::string run = "run " + std::to_string(i + 1);
    const auto step = rate_step(*in.runs[i]);
    const double step_change = step ? step->after / step->before - 1 : 0;
    std::string what;
    double change = 0;
    if (step && std::fabs(step_change) > s.drift_max) {
      change = step_change;
      what = "rate stepped " + signed_share(change) + " at window " + std::to_string(step->at + 1) +
             " of " + std::to_string(in.runs[i]->size()) + " in " + run + " (" +
             format_fixed(step->before, 1) + " to " + format_fixed(step->after, 1) + " /s, > " +
             share(s.drift_max) + ")";
    } else if (t && std::fabs(t->change) > s.drift_max && std::fabs(t->change) > 2 * t->scatter) {
      change = t->change;
      what = "rate drifted " + signed_share(change) + " during " + run +
             " (its trend from the first window to the last, > " + share(s.drift_max) +
             ", scatter " + share(t->scatter) + ")";
    } else {
      continue;
    }
    if (sharing) {
      explained += "; " + what + " while " + *sharing +
                   ": the sharing rule (device_shared) explains it, drift is not blamed";
      continue;
    }
    if (heating && change < 0)
      finding(o, what + "; it coincided with " + *heating +
                     ": the device is heating or throttling; let it cool, or use rig soak to "
                     "measure the long-run rate");
    else if (contention)
      finding(o, what + "; it coincided with " + *contention +
                     ": other work on the host moved the rate; run on a quiet host");
    else
      finding(o, what +
                     "; no temperature, clock, contention or sharing reading explains it: "
                     "repeat the run, or use rig soak to see whether it persists");
  }
  if (worst)
    ev = "largest rate trend " + signed_share(worst->change) + " (run " +
         std::to_string(worst_run + 1) + ", " + std::to_string(worst->windows) +
         " windows, scatter " + share(worst->scatter) + ")";
  else
    ev = "rate trend n/a: fewer than 3 windows";
  ev += explained;
  if (m.enabled) {
    for (const auto& key : series_names(m, "temp_c:", {"device:temperature_c"})) {
      const auto t = measured_values(m, key);
      if (t.size() < 2) continue;
      const double rise = t.back() - t.front();
      ev +=
          "; " + key + " " + format_fixed(t.front(), 1) + " -> " + format_fixed(t.back(), 1) + " C";
      if (rise > s.temp_rise_max_c)
        finding(o, "thermal drift: " + key + " rose " + format_fixed(rise, 1) +
                       " C during the measured part (> " + format_fixed(s.temp_rise_max_c, 1) +
                       " C); let the device reach its steady temperature first (--cooldown, a "
                       "longer warm-up, or rig soak)");
    }
  }
  o.evidence = ev;
  return o;
}

RuleOutcome clock_drop(const ConfoundInputs& in) {
  const ConfoundSettings& s = *in.settings;
  const MonitorRecord& m = *in.monitor;
  RuleOutcome o = confound("clock_drop", s.strict,
                           "clock_drop_ratio " + format_fixed(s.clock_drop_ratio, 2) +
                               " of the first frequency of the run; any throttle event");
  if (auto off = monitor_off(m)) return skipped(o, *off);
  std::string ev;
  for (const char* key : {"cpu_freq_min_mhz", "device:clock_mhz"}) {
    const auto f = measured_values(m, key);
    if (f.empty()) continue;
    const double low = *std::min_element(f.begin(), f.end());
    ev += std::string(ev.empty() ? "" : "; ") + key + " first " + format_fixed(f.front(), 0) +
          ", lowest " + format_fixed(low, 0) + " MHz";
    if (f.front() > 0 && low < s.clock_drop_ratio * f.front())
      finding(o, std::string("clock drop: ") + key + " fell to " + format_fixed(low, 0) +
                     " MHz from " + format_fixed(f.front(), 0) + " MHz (< " +
                     format_fixed(s.clock_drop_ratio * 100, 0) +
                     "% of it) during the measured part; the clock is throttled: cool the "
                     "device, fix its power supply, or set the governor to performance");
  }
  const auto throttle = measured_values(m, "throttle_events");
  if (!throttle.empty()) {
    const double more = throttle.back() - throttle.front();
    ev += std::string(ev.empty() ? "" : "; ") + "throttle events +" + format_fixed(more, 0);
    if (more > 0)
      finding(o, "clock drop: the CPUs' thermal throttle counters rose by " +
                     format_fixed(more, 0) + " during the measured part; cool the host");
  }
  if (ev.empty())
    return skipped(o, m.host_sampled
                          ? m.why_absent("cpufreq") + "; " + m.why_absent("thermal_throttle") +
                                "; the device reports no clock_mhz"
                          : std::string(kHostSkipped) + "; the device reports no clock_mhz");
  o.evidence = ev;
  return o;
}

bool power_warning(const std::string& text) {
  std::string t = text;
  std::transform(t.begin(), t.end(), t.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const char* word : {"power", "current advertised", "reduced-performance",
                           "reduced performance", "voltage", "undervolt"})
    if (t.find(word) != std::string::npos) return true;
  return false;
}

// Every warning the device raised: at open (DeviceInfo) and through the
// dynamic channel, with when.
std::vector<std::pair<std::string, std::string>> all_device_warnings(const ConfoundInputs& in) {
  std::vector<std::pair<std::string, std::string>> out;
  if (in.device)
    for (const auto& w : in.device->warnings) out.emplace_back("at open", w);
  if (in.monitor)
    for (const auto& w : in.monitor->device_warnings) out.emplace_back(w.when, w.text);
  return out;
}

RuleOutcome power_limited(const ConfoundInputs& in) {
  RuleOutcome o = confound("power_limited", in.settings->strict,
                           "any device warning about its power supply or a reduced-performance "
                           "mode");
  size_t n = 0;
  for (const auto& [when, text] : all_device_warnings(in)) {
    if (!power_warning(text)) continue;
    ++n;
    finding(o, "power limited: the device warned (" + when + "): \"" + text +
                   "\"; the evidence is the runtime's own warning, not a power reading; give the "
                   "device its rated supply");
  }
  o.evidence = std::to_string(n) + " power warning(s) from the device";
  if (!in.monitor->enabled && n == 0)
    o.evidence += "; only the warnings at open were read (--no-monitor)";
  return o;
}

RuleOutcome device_warnings(const ConfoundInputs& in) {
  RuleOutcome o = confound("device_warnings", in.settings->strict,
                           "any warning the device raised during the run");
  if (auto off = monitor_off(*in.monitor))
    return skipped(o, *off + ": the device's warnings during the run were not taken");
  size_t n = 0;
  for (const auto& w : in.monitor->device_warnings) {
    if (power_warning(w.text)) continue;  // power_limited reports those
    ++n;
    finding(o, "the device warned (" + w.when + "): \"" + w.text + "\"");
  }
  o.evidence = std::to_string(n) + " other warning(s) raised during the run";
  return o;
}

RuleOutcome cold_caches(const ConfoundInputs& in) {
  const ConfoundSettings& s = *in.settings;
  RuleOutcome o = confound("cold_caches", s.strict,
                           "cold_first_ratio " + format_fixed(s.cold_first_ratio, 1) +
                               " steady frames for the first inference, and the first measured "
                               "window slower than the run's median by over drift_max " +
                               share(s.drift_max));
  if (!in.first_inference || !in.time_per_frame_ms || !(*in.time_per_frame_ms > 0) ||
      in.runs.empty() || in.runs.front()->size() < 3)
    return skipped(o, "no first inference, steady rate or measured windows to compare");
  const double ratio = to_ms(*in.first_inference) / *in.time_per_frame_ms;
  std::vector<double> rates;
  for (const auto& w : *in.runs.front()) rates.push_back(w.rate);
  const double first = rates.front();
  std::sort(rates.begin(), rates.end());
  const double median = rates[rates.size() / 2];
  const double slower = median > 0 ? 1 - first / median : 0;
  o.evidence =
      "first inference " + format_duration(*in.first_inference) + " = " + format_fixed(ratio, 1) +
      " steady frames; first window " + format_fixed(slower * 100, 1) + "% below the median" +
      (in.warmup_inferences ? "; warm-up " + std::to_string(*in.warmup_inferences) + " frames"
                            : std::string());
  if (ratio > s.cold_first_ratio && slower > s.drift_max)
    finding(o, "cold caches: the first inference cost " + format_fixed(ratio, 1) +
                   " steady frames and the first measured window was still " +
                   format_fixed(slower * 100, 1) +
                   "% slower than the median: the warm-up ended before the device was warm; "
                   "raise --warmup-max");
  return o;
}

RuleOutcome shared_link(const ConfoundInputs& in) {
  const ConfoundSettings& s = *in.settings;
  const MonitorRecord& m = *in.monitor;
  RuleOutcome o = confound("shared_link", s.strict,
                           "shared_link_max " + share(s.shared_link_max) +
                               " of rig's own link bytes as other traffic on the interface");
  if (auto off = monitor_off(m)) return skipped(o, *off);
  // A unix socket crosses no interface: what shares it is the server's
  // other connections, which the server counts.
  auto other = measured_values(m, "link_other_bytes");
  const bool on_interface = !other.empty();
  if (!on_interface) other = measured_values(m, "device:server.other_link_bytes");
  const auto mine = measured_values(m, "link_rig_bytes");
  if (other.size() < 2 || mine.size() < 2)
    return skipped(o, m.host_sampled ? m.why_absent("link_traffic") : std::string(kHostSkipped));
  const double o_bytes = other.back() - other.front();
  const double r_bytes = mine.back() - mine.front();
  o.evidence =
      format_bytes(o_bytes) + " of other traffic beside " + format_bytes(r_bytes) + " of rig's";
  if (r_bytes > 0 && o_bytes > s.shared_link_max * r_bytes)
    finding(o, "shared link: " + format_bytes(o_bytes) +
                   (on_interface ? " of other traffic crossed the link's interface beside rig's "
                                 : " moved on the server's other connections beside rig's ") +
                   format_bytes(r_bytes) + " (> " + share(s.shared_link_max) +
                   "); measure on a link of its own");
  return o;
}

// A device behind rig serve that other connections used during the run
// (issue 9): its server's counters, sampled at every window as the remote
// device's readings. The loads this connection asked for (a ladder's model
// per size) are the scenario's own, not sharing: they are taken off the
// server's count. Other clients' reloads put other models' loads inside the
// measured time: they invalidate even without --strict-confounds (the
// figures then hold another model's load, not noise); others' requests
// alone warn (they share the device).
RuleOutcome device_shared(const ConfoundInputs& in) {
  const MonitorRecord& m = *in.monitor;
  RuleOutcome o =
      confound("device_shared", in.settings->strict,
               "no requests from other clients; other clients' model reloads during the run "
               "invalidate");
  if (auto off = monitor_off(m)) return skipped(o, *off);
  const auto reloads = measured_values(m, "device:server.model_reloads");
  const auto own = measured_values(m, "device:server.own_model_loads");
  const auto others = measured_values(m, "device:server.other_requests");
  const auto open = measured_values(m, "device:server.other_connections");
  if (reloads.size() < 2 || others.size() < 2)
    return skipped(o, "no server counters to read (not a device behind rig serve)");
  const double all_loads = std::max(0.0, reloads.back() - reloads.front());
  // An older server does not count a connection's own loads: all are others'.
  const double own_loads =
      own.size() < 2 ? 0.0 : std::min(all_loads, std::max(0.0, own.back() - own.front()));
  const double m_reloads = all_loads - own_loads;
  const double n_requests = std::max(0.0, others.back() - others.front());
  const double n_clients = open.empty() ? 0 : *std::max_element(open.begin(), open.end());
  const auto count = [](double v) { return std::to_string(static_cast<uint64_t>(v)); };
  o.evidence = count(n_requests) + " requests from other clients, " + count(m_reloads) +
               " model reloads by others (" + count(all_loads) + " loads on the device, " +
               count(own_loads) + " of them this run's own), at most " + count(n_clients) +
               " other connections open, during the measured part";
  if (m_reloads > 0 || n_requests > 0) {
    const bool reloaded = m_reloads > 0;
    finding(o, "device shared with " + count(n_clients) + " other client" +
                   (n_clients == 1 ? "" : "s") + "; " + count(m_reloads) + " model reload" +
                   (m_reloads == 1 ? "" : "s") + " by others during the run (" + count(all_loads) +
                   " loads on the device less " + count(own_loads) + " of this run's own; " +
                   count(n_requests) +
                   " of their requests ran on it): the figures include their work" +
                   (reloaded ? " and the reloads; give each model a server of its own, or "
                               "load the same model bytes on every connection (they share "
                               "one load)"
                             : "; measure with the device to yourself"));
    if (reloaded && !in.settings->strict) {
      o.severity = Severity::invalidates;
      o.findings.back() +=
          " (invalid without --strict-confounds: another model's load inside the measured "
          "time is part of the figures themselves, not noise around them)";
    }
  }
  return o;
}

// Environment facts: every scenario's result has them.
RuleOutcome debug_build(const Environment& env, bool virtual_clock, bool strict) {
  RuleOutcome o = confound("debug_build", strict, "build_type release");
  auto it = env.facts.find("build_type");
  if (it == env.facts.end()) return skipped(o, "the build type is not recorded");
  if (virtual_clock) return skipped(o, kHostSkipped);
  o.evidence = "build_type " + it->second;
  if (it->second == "debug")
    finding(o,
            "debug build (assertions on): rig's own costs are higher than in a release "
            "build; build with -DCMAKE_BUILD_TYPE=Release");
  return o;
}

RuleOutcome cpu_governor(const Environment& env, bool virtual_clock, bool strict) {
  RuleOutcome o = confound("cpu_governor", strict, "governor performance");
  auto it = env.facts.find("cpu_governor");
  if (it == env.facts.end())
    return skipped(o, "no cpufreq governor on this host (frequency not scaled by the kernel)");
  if (virtual_clock) return skipped(o, kHostSkipped);
  o.evidence = "governor " + it->second;
  if (it->second != "performance")
    finding(o, "CPU frequency scaling is on (governor '" + it->second +
                   "'): real-time figures may be noisy; set the governor to performance");
  return o;
}

void add_environment_confounds(Verdict& v, const Environment& env, bool virtual_clock,
                               bool strict) {
  v.add(debug_build(env, virtual_clock, strict));
  v.add(cpu_governor(env, virtual_clock, strict));
}

const char* kVirtualClock = kVirtualClockNote;

// ---------------------------------------------------------------------------
// Consistency: a figure that contradicts the device's own report is
// impossible, not fast or slow. Each check names both numbers.

// A lone frame (run() call to return) holds its device compute, so no
// order statistic of the lone frames is below the same one of the
// device-reported compute times; and with declared costs, no lone frame is
// shorter than the declared in + latency + compute + out + latency.
void lone_frames_consistent(RuleOutcome& o, const LatencyResult& lone, const DeviceInfo& device,
                            const ModelInfo& model) {
  const Summary& all = lone.overall_ms;
  const Summary& hw = lone.hardware_ms;
  if (all.median && hw.median && *all.median < *hw.median * (1 - kDeclaredCapRounding))
    finding(o, "lone frame p50 " + format_ms(*all.median) +
                   " is shorter than its device compute p50 " + format_ms(*hw.median) +
                   " (lone frame >= device compute): the two are not timed on one clock; "
                   "figures from a virtual clock timed across a link mean nothing");
  if (device.declared_costs && all.min && model.input_bytes() + model.output_bytes() > 0) {
    const double floor_ms = declared_lone_s(*device.declared_costs, model) * 1e3;
    if (*all.min < floor_ms * (1 - kDeclaredCapRounding))
      finding(o, "fastest lone frame " + format_ms(*all.min) + " is shorter than the " +
                     format_ms(floor_ms) +
                     " the device's declared costs allow (lone frame >= in + latency + compute "
                     "+ out + latency): the device broke its own bounds");
  }
}

// The cold start: the device's load parts within the load timed around
// them, and the first inference at least its device compute.
void cold_start_consistent(RuleOutcome& o, const TtfoResult& t) {
  if (t.total <= Nanos(0)) return;
  const LoadTimings& b = t.load_breakdown;
  const Nanos parts = b.read + b.parse + b.compile;
  if (to_seconds(parts) > to_seconds(t.load) * (1 + kDeclaredCapRounding))
    finding(o, "load " + format_duration(t.load) + " is shorter than its parts " +
                   format_duration(parts) + " (read " + format_duration(b.read) + " + parse " +
                   format_duration(b.parse) + " + compile " + format_duration(b.compile) +
                   "; parts <= whole): the parts are not timed on the load's clock");
  if (const auto& c = t.first_timings.compute;
      c && to_seconds(t.first_inference) < to_seconds(*c) * (1 - kDeclaredCapRounding))
    finding(o, "first inference " + format_duration(t.first_inference) +
                   " is shorter than its device compute " + format_duration(*c) +
                   " (first inference >= device compute)");
}

// A ladder's rungs, each a model of its own size: every rung's lone frames
// hold its device compute and, with declared costs, the declared lone frame
// for the rung's bytes.
RuleOutcome rungs_consistent(const DeviceInfo& device, const std::vector<LadderRung>& rungs) {
  RuleOutcome o =
      outcome("figures_consistent", Severity::invalidates,
              "each rung: lone frame >= device compute" +
                  std::string(device.declared_costs ? " and >= the declared lone frame" : ""));
  for (const auto& rung : rungs) {
    const Summary& all = rung.lone_ms;
    if (all.median && rung.compute_ms &&
        *all.median < *rung.compute_ms * (1 - kDeclaredCapRounding))
      finding(o, rung.label() + ": lone frame p50 " + format_ms(*all.median) +
                     " is shorter than its device compute p50 " + format_ms(*rung.compute_ms) +
                     " (lone frame >= device compute)");
    if (const auto& c = device.declared_costs; c && all.min && c->bw_in > 0 && c->bw_out > 0) {
      const double floor_ms =
          (rung.bytes_in / c->bw_in + to_seconds(c->latency) + to_seconds(c->compute) +
           rung.bytes_out / c->bw_out + to_seconds(c->latency)) *
          1e3;
      if (*all.min < floor_ms * (1 - kDeclaredCapRounding))
        finding(o, rung.label() + ": fastest lone frame " + format_ms(*all.min) +
                       " is shorter than the " + format_ms(floor_ms) +
                       " the device's declared costs allow (lone frame >= in + latency + compute "
                       "+ out + latency)");
    }
  }
  return o;
}

RuleOutcome figures_consistent(const DeviceInfo& device, const ModelInfo& model,
                               const TtfoResult* ttfo, const LatencyResult* lone) {
  RuleOutcome o =
      outcome("figures_consistent", Severity::invalidates,
              "lone frame >= device compute" +
                  std::string(device.declared_costs ? " and >= the declared lone frame" : "") +
                  "; load parts <= load; first inference >= its compute");
  if (lone) lone_frames_consistent(o, *lone, device, model);
  if (ttfo) cold_start_consistent(o, *ttfo);
  return o;
}

// A device on a virtual clock served by rig serve and timed here by the
// wall clock: the link's times are real and the device's are simulated, so
// no figure is either. Served as ever (protocol tests rely on it), never
// VALID. A clock paced to the wall clock (the sim's realtime=1) is timed
// like a real device.
RuleOutcome clock_across_link(const DeviceInfo& device, const LatencyResult* lone,
                              const std::string& rule = "clock_across_link",
                              const std::string& who = "") {
  const bool unpaced =
      device.kind == "remote" && device.clock == ClockKind::virtual_time && !device.paced_clock;
  RuleOutcome o = outcome(rule, Severity::invalidates,
                          device.kind != "remote" ? "no link timed by the wall clock"
                          : unpaced               ? "virtual device clock, wall-clock link"
                                    : "the device's clock can be timed by the wall clock");
  if (!unpaced) return o;
  std::string figures;
  if (lone && lone->overall_ms.median && lone->hardware_ms.median)
    figures = " (a lone frame of " + format_ms(*lone->overall_ms.median) +
              " timed here beside a device compute of " + format_ms(*lone->hardware_ms.median) +
              " on its virtual clock)";
  finding(o, who +
                 "the server's device runs on a virtual clock that is not paced to the wall clock, "
                 "timed here across the link by the wall clock" +
                 figures +
                 ": simulated device times and real link times do not add up to any real "
                 "figure; serve the sim with realtime=1 (rig serve -d 'sim:...,realtime=1')");
  return o;
}

// The confounds every result is checked for: the host, the device, the clock.
void add_confounds(Verdict& v, const Environment& env, const DeviceInfo& device, bool virtual_clock,
                   std::string clock_message, bool strict = false,
                   const LatencyResult* lone = nullptr) {
  v.add(quiet_host(env, virtual_clock));
  v.add(device_without_warnings(device));
  v.add(real_clock(virtual_clock, std::move(clock_message)));
  v.add(clock_across_link(device, lone));
  add_environment_confounds(v, env, virtual_clock, strict);
}

// ---------------------------------------------------------------------------
// rig bench

RuleOutcome all_repeats_ran(size_t ran, uint32_t wanted) {
  RuleOutcome o = outcome("all_repeats_ran", Severity::invalidates,
                          std::to_string(ran) + " of " + std::to_string(wanted) + " repeats ran");
  if (ran < wanted)
    finding(o, "only " + std::to_string(ran) + " of " + std::to_string(wanted) + " repeats ran");
  return o;
}

// Per repeat, so that each repeat's findings come together, in the order
// the repeats ran.
RuleOutcome enough_samples(const SteadyRepeat& rep, size_t i, uint64_t min) {
  RuleOutcome o = outcome("enough_samples", Severity::invalidates,
                          repeat_name(i) + ": " + std::to_string(rep.inferences) +
                              " inferences, at least " + std::to_string(min) + " wanted");
  if (rep.inferences < min)
    finding(o, repeat_name(i) + ": too few samples (" + std::to_string(rep.inferences) + " < " +
                   std::to_string(min) + "); raise --duration or check the device");
  return o;
}

RuleOutcome device_returned_requests(const SteadyRepeat& rep, size_t i) {
  RuleOutcome o = outcome("device_returned_requests", Severity::invalidates,
                          repeat_name(i) + (rep.device_stuck ? ": requests stuck on the device"
                                                             : ": every request came back"));
  if (rep.device_stuck)
    finding(o, repeat_name(i) +
                   ": the device did not return every request after an error "
                   "(its buffers are kept alive); restart the device");
  return o;
}

RuleOutcome repeat_stable(const SteadyRepeat& rep, size_t i, double tolerance) {
  const std::string spread = rep.last_windows_spread
                                 ? format_fixed(*rep.last_windows_spread * 100, 1) + "%"
                                 : std::string("n/a: fewer than 3 windows");
  RuleOutcome o = outcome("repeat_stable", Severity::invalidates,
                          repeat_name(i) + ": last 3 windows differ by " + spread + ", at most " +
                              format_fixed(tolerance * 100, 1) + "% wanted");
  if (!rep.stable && (rep.aborted || rep.cut_short))
    finding(o, repeat_name(i) + ": cut short " +
                   (rep.cut_short ? std::string("by a signal")
                                  : "by " + (rep.first_error ? rep.first_error->to_string()
                                                             : std::string("an error"))) +
                   " after " + std::to_string(rep.inferences) +
                   " measured inferences, before its windows could show it stable");
  else if (!rep.stable)
    finding(o, repeat_name(i) + ": not stable (last 3 windows differ by " + spread + " > " +
                   format_fixed(tolerance * 100, 1) +
                   "%); check for throttling or contention, or raise --duration");
  return o;
}

RuleOutcome rate_precise(const SteadyRepeat& rep, size_t i, double tolerance) {
  const std::string half = rep.rate_half_width
                               ? "+/-" + format_fixed(*rep.rate_half_width * 100, 2) + "%"
                               : std::string("n/a: fewer than 2 windows");
  RuleOutcome o = outcome("rate_precise", Severity::warns,
                          repeat_name(i) + ": rate 95% interval " + half + ", at most +/-" +
                              format_fixed(tolerance * 100, 1) + "% wanted");
  if (rep.capped && !rep.precise && !rep.aborted && !rep.cut_short)
    finding(o, repeat_name(i) + ": the rate's interval (" + half + ") stayed wider than +/-" +
                   format_fixed(tolerance * 100, 1) +
                   "% up to the cap; raise --max-duration-factor or --rate-tolerance");
  return o;
}

// A rate above what the device's declared costs allow is impossible: the
// span ended inside a pipeline's filling or draining, not at its rate.
// Timed by the wall clock across a link (a remote device hosting a sim),
// the span's first and last completions arrive with the link's and the
// scheduler's jitter, so the rounding is wider than on the sim's own clock.
constexpr double kWallClockCapRounding = 0.01;

double cap_rounding(bool virtual_clock) {
  return virtual_clock ? kDeclaredCapRounding : kWallClockCapRounding;
}

RuleOutcome within_declared_cap(const std::string& name, double rate,
                                const std::optional<double>& cap, double rounding) {
  RuleOutcome o = outcome("rate_within_declared_cap", Severity::invalidates,
                          cap ? name + ": " + format_fixed(rate, 1) +
                                    "/s, the declared costs allow " + format_fixed(*cap, 1) +
                                    "/s (+" + format_fixed(rounding * 100, 1) + "% rounding)"
                              : name + ": the device declares no costs");
  if (cap && rate > *cap * (1 + rounding))
    finding(o, name + ": rate " + format_fixed(rate, 1) + "/s is above the " +
                   format_fixed(*cap, 1) +
                   "/s the device's declared costs allow at this depth; the span did not reach "
                   "the steady state: raise --duration");
  return o;
}

RuleOutcome warmup_settled(const SteadyRepeat& rep, size_t i, Nanos cap) {
  RuleOutcome o = outcome("warmup_settled", Severity::warns,
                          repeat_name(i) + ": warm-up " + format_duration(rep.warmup) +
                              ", capped at " + format_duration(cap));
  if (!rep.warmup_settled && !rep.aborted && !rep.cut_short)
    finding(o, repeat_name(i) + ": warm-up hit its cap of " + format_duration(cap) +
                   " before the rate settled");
  return o;
}

RuleOutcome repeats_agree(const Summary& rate, double tolerance) {
  RuleOutcome o = outcome("repeats_agree", Severity::invalidates,
                          rate.spread ? "spread " + format_fixed(*rate.spread * 100, 1) + "%"
                                      : std::string("spread n/a"));
  if (rate.spread && *rate.spread > tolerance)
    finding(o, "repeats disagree: spread " + format_fixed(*rate.spread * 100, 1) + "% > " +
                   format_fixed(tolerance * 100, 1) +
                   "%; the host or device is not steady (see warnings)");
  return o;
}

RuleOutcome enough_lone_frames(uint64_t samples) {
  constexpr uint64_t kMin = 10;
  RuleOutcome o = outcome("enough_lone_frames", Severity::invalidates,
                          std::to_string(samples) + " lone frames");
  if (samples < kMin)
    finding(o, "lone-frame latency: too few samples (" + std::to_string(samples) + " < " +
                   std::to_string(kMin) + ")");
  return o;
}

// Percentiles whose interval needs more samples than were taken: reported as
// "not enough samples", with how many more the rule needs.
RuleOutcome percentiles_resolved(const Summary& s, const std::string& what,
                                 const std::string& raise) {
  const PercentileInterval* cis[] = {&s.p90_ci, &s.p99_ci};
  std::string evidence = what + ": " + std::to_string(s.count) + " samples";
  for (const auto* ci : cis)
    evidence += ", p" + format_fixed(ci->p, 0) + " needs " + std::to_string(ci->needs);
  RuleOutcome o = outcome("percentiles_resolved", Severity::warns, evidence);
  for (const auto* ci : cis)
    if (s.count > 0 && !ci->enough())
      finding(o, what + " p" + format_fixed(ci->p, 0) +
                     ": not enough samples (n = " + std::to_string(ci->count) + ", p" +
                     format_fixed(ci->p, 0) + " needs >= " + std::to_string(ci->needs) + " for a " +
                     format_fixed(ci->confidence * 100, 0) + "% interval); " +
                     std::to_string(ci->more_needed()) + " more samples needed (" + raise + ")");
  return o;
}

// ---------------------------------------------------------------------------
// rig bench --rate: offered load

RuleOutcome offered_run_completed(const OfferedRun& o) {
  RuleOutcome out = outcome("offered_run_completed", Severity::invalidates,
                            std::to_string(o.completed) + " of " + std::to_string(o.arrivals) +
                                " measured frames completed");
  if (o.device_stuck)
    finding(out,
            "the device did not return every request (its buffers are kept alive); "
            "restart the device");
  else if (o.aborted)
    finding(out, "the offered-load run aborted: " +
                     (o.first_error ? o.first_error->to_string() : std::string("aborted")));
  if (o.arrivals == 0) finding(out, "no frame arrived in the measured time; raise --duration");
  return out;
}

RuleOutcome frames_on_time(const OfferedRun& o, Nanos threshold) {
  RuleOutcome out =
      outcome("frames_on_time", Severity::warns,
              std::to_string(o.late) + " of " + std::to_string(o.submitted) + " frames (" +
                  format_fixed(o.late_share * 100, 2) + "%) submitted more than " +
                  format_duration(threshold) + " after their arrival, at most " +
                  format_fixed(kLateShareLimit * 100, 0) + "% wanted");
  if (o.late_share > kLateShareLimit)
    finding(out, format_fixed(o.late_share * 100, 1) + "% of frames were submitted late (median " +
                     (o.lateness_ms.median ? format_ms(*o.lateness_ms.median) : "n/a") + ", max " +
                     (o.lateness_ms.max ? format_ms(*o.lateness_ms.max) : "n/a") +
                     " behind schedule): every request slot was busy, or the host could not "
                     "keep the schedule; the latency from arrival includes the wait");
  return out;
}

RuleOutcome no_dropped_frames(const OfferedRun& o) {
  RuleOutcome out =
      outcome("no_dropped_frames", Severity::warns, std::to_string(o.dropped) + " frames dropped");
  if (o.dropped > 0)
    finding(out, std::to_string(o.dropped) + " of " + std::to_string(o.arrivals) +
                     " frames were dropped with every request slot in flight (--on-full drop)");
  return out;
}

RuleOutcome keeps_up(const OfferedRun& o) {
  RuleOutcome out = outcome("keeps_up", Severity::warns,
                            "achieved " + format_fixed(o.achieved_rate, 2) + " frames/s of " +
                                format_fixed(o.scheduled_rate, 2) + " arrived (" +
                                format_fixed(o.offered_rate, 2) + " offered)");
  if (!o.keeps_up && !o.aborted)
    finding(out, "the device does not keep up with " + format_fixed(o.offered_rate, 2) +
                     " frames/s: it completed " + format_fixed(o.achieved_rate, 2) +
                     " frames/s; lower --rate or find the highest rate with rig sweep --rate");
  return out;
}

RuleOutcome rig_not_limiting(const OverheadResult& overhead) {
  RuleOutcome o = outcome("rig_not_limiting", Severity::warns,
                          overhead.measured ? overhead.note : "not measured");
  if (overhead.limiting) finding(o, overhead.note);
  return o;
}

// ---------------------------------------------------------------------------
// rig loop

RuleOutcome pipelined_run_completed(const SteadyRepeat& steady) {
  RuleOutcome o = outcome("pipelined_run_completed", Severity::invalidates,
                          std::to_string(steady.inferences) + " pipelined frames");
  if (steady.aborted)
    finding(o, "the pipelined run aborted: " +
                   (steady.first_error ? steady.first_error->to_string() : std::string("aborted")));
  return o;
}

RuleOutcome pipelined_run_stable(const SteadyRepeat& steady, double tolerance) {
  RuleOutcome o = outcome("pipelined_run_stable", Severity::warns,
                          "last 3 windows within " + format_fixed(tolerance * 100, 1) + "%");
  if (!steady.aborted && !steady.stable)
    finding(o, "the pipelined run was not stable (last 3 windows differ by " +
                   (steady.last_windows_spread
                        ? format_fixed(*steady.last_windows_spread * 100, 1) + "%"
                        : std::string("n/a")) +
                   "); its rate and the transfer cost are rough; raise --duration");
  return o;
}

RuleOutcome loop_completed_frames(const DurationRun& loop) {
  if (!loop.frames_completed) {
    // The device gives a rate only (HailoRT): a rate of 0 is the only sign.
    RuleOutcome o = outcome("loop_completed_frames", Severity::warns,
                            "frame count unknown; rate " + format_fixed(loop.frames_per_second, 0) +
                                (loop.rate_step > 0 ? " (truncated)" : "") + " frames/s");
    if (loop.frames_per_second == 0)
      finding(o,
              "the device reported 0 frames/s: fewer than one frame per second completed (its "
              "rate is truncated to an integer); lengthen --duration or shorten --sleep");
    return o;
  }
  RuleOutcome o = outcome("loop_completed_frames", Severity::warns,
                          std::to_string(*loop.frames_completed) + " frames looped");
  if (*loop.frames_completed == 0)
    finding(o, "the device loop completed no frame; raise --duration");
  return o;
}

// The loop figure is the device's own loop, not a host-driven fallback.
RuleOutcome loop_on_device(const DurationRun& loop) {
  RuleOutcome o = outcome(
      "loop_on_device", Severity::warns,
      loop.includes_transfers ? "host-driven pipelined loop (fallback)" : "the device's own loop");
  if (loop.includes_transfers)
    finding(o,
            "the device's own loop was not available, so the loop rate is a host-driven "
            "pipelined loop on the same input and includes the per-frame transfers (see the "
            "loop's notes)");
  return o;
}

RuleOutcome comparable_clocks(bool mixed) {
  RuleOutcome o = outcome("comparable_clocks", Severity::warns,
                          mixed ? "device virtual, host real" : "one kind of clock");
  if (mixed)
    finding(o,
            "the server's device runs on a virtual clock while the host's is real: the two "
            "rates are not comparable, so no transfer cost is given");
  return o;
}

// The device rate's interval (N / (T + sleep) .. (N + 1) / T) is narrow
// enough to state the rate: at most kLoopRateResolution either side.
RuleOutcome device_rate_resolved(const LoopResult& r) {
  RuleOutcome o =
      outcome("device_rate_resolved", Severity::warns,
              r.device_rate_uncertainty
                  ? "+/-" + format_fixed(*r.device_rate_uncertainty * 100, 2) + "% device rate"
                  : std::string("no device rate"));
  o.threshold = "+/-" + format_fixed(kLoopRateResolution * 100, 0) + "%";
  if (!r.device_rate_uncertainty || *r.device_rate_uncertainty <= kLoopRateResolution) return o;
  // Half-width 1 / (2N + 1) of the midpoint: N frames resolve it.
  const double frames = std::ceil((1 / kLoopRateResolution - 1) / 2);
  finding(o, "the device loop completed too few frames to state its rate: it lies in [" +
                 format_fixed(*r.device_rate_lower, 3) + ", " +
                 format_fixed(*r.device_rate_upper, 3) + "] frames/s (+/-" +
                 format_fixed(*r.device_rate_uncertainty * 100, 1) +
                 "%), because the frame cut off at the end ran but is not counted; a loop of " +
                 format_duration(std::chrono::duration_cast<Nanos>(
                     std::chrono::duration<double>(frames / *r.device_rate_lower))) +
                 " or more (--duration) states it within +/-" +
                 format_fixed(kLoopRateResolution * 100, 0) + "%");
  return o;
}

RuleOutcome cost_is_transfers(const LoopResult& r) {
  RuleOutcome o = outcome("cost_is_transfers", Severity::warns,
                          r.transfer_cost_ms ? "cost " + format_ms(*r.transfer_cost_ms)
                                             : std::string("no transfer cost"));
  if (!r.transfer_cost_ms) return o;
  const double lower = r.transfer_cost_lower_ms.value_or(*r.transfer_cost_ms);
  const double upper = r.transfer_cost_upper_ms.value_or(*r.transfer_cost_ms);
  if (r.effective.sleep_between_frames > Nanos(0))
    finding(o,
            "the device rate includes the sleeps between frames, so the difference is not the "
            "transfer cost alone");
  else if (upper < 0)
    finding(o,
            "the host pipeline was faster than the device loop; the difference is noise or the "
            "loop runs one frame at a time where the pipeline overlaps");
  else if (lower < 0)
    finding(o, "the transfer cost lies in [" + format_ms(lower) + ", " + format_ms(upper) +
                   "]: it holds 0, so the device rate's uncertainty (too few frames in the loop) "
                   "hides it; a negative figure in it is not a saving; raise --duration");
  return o;
}

// ---------------------------------------------------------------------------
// rig ladder, rig sweep: their points

RuleOutcome points_stable(const std::vector<std::pair<std::string, const PointResult*>>& points) {
  RuleOutcome o =
      outcome("points_stable", Severity::invalidates, std::to_string(points.size()) + " points");
  for (const auto& [name, p] : points)
    if (p->errors == 0 && !p->stable)
      finding(o, name + ": a repeat was not stable; raise --duration");
  return o;
}

// Each point's fastest repeat against the cap its device declares
// (within_declared_cap).
RuleOutcome points_within_declared_cap(
    const std::vector<std::pair<std::string, const PointResult*>>& points, double rounding) {
  RuleOutcome o =
      outcome("rate_within_declared_cap", Severity::invalidates, "the device declares no costs");
  for (const auto& [name, p] : points) {
    if (!p->declared_cap || p->repeat_rates.empty()) continue;
    const double fastest = *std::max_element(p->repeat_rates.begin(), p->repeat_rates.end());
    RuleOutcome one = within_declared_cap(name, fastest, p->declared_cap, rounding);
    o.evidence = "every point's fastest repeat within its declared cap (+" +
                 format_fixed(rounding * 100, 1) + "% rounding)";
    for (auto& f : one.findings) finding(o, std::move(f));
  }
  return o;
}

RuleOutcome points_without_errors(
    const std::vector<std::pair<std::string, const PointResult*>>& points) {
  uint64_t errors = 0;
  for (const auto& point : points) errors += point.second->errors;
  RuleOutcome o =
      outcome("no_errors", Severity::invalidates, std::to_string(errors) + " failed inference(s)");
  for (const auto& [name, p] : points)
    if (p->errors > 0)
      finding(o, name + ": " + std::to_string(p->errors) + " inference(s) failed; first: " +
                     (p->first_error ? p->first_error->to_string() : std::string("unknown")));
  return o;
}

// ---------------------------------------------------------------------------
// rig ab

RuleOutcome enough_pairs(size_t pairs, double alpha) {
  const uint32_t least = ab_min_pairs(alpha);
  RuleOutcome o = outcome("enough_pairs", Severity::invalidates,
                          std::to_string(pairs) + " pairs; the U test reaches alpha " +
                              format_fixed(alpha, 2) + " from " + std::to_string(least));
  if (pairs < least)
    finding(o, "insufficient data: " + std::to_string(pairs) +
                   " pair(s); the Mann-Whitney U test cannot reach alpha " +
                   format_fixed(alpha, 2) + " with fewer than " + std::to_string(least) +
                   " (google/benchmark recommends at least " + std::to_string(kAbRecommendedPairs) +
                   "); raise --pairs");
  return o;
}

RuleOutcome ab_resolved(const AbResult& r) {
  RuleOutcome o =
      outcome("ab_resolved", Severity::warns, "verdict " + std::string(to_string(r.verdict)));
  if (r.verdict == AbVerdict::ambiguous)
    finding(o, "the A/B result is ambiguous" +
                   (r.pairs_recommended ? ": about " + std::to_string(*r.pairs_recommended) +
                                              " pairs would likely resolve it (raise --pairs)"
                                        : std::string()));
  return o;
}

}  // namespace

std::string_view to_string(Severity severity) {
  return severity == Severity::invalidates ? "invalidates" : "warns";
}

void Verdict::add(RuleOutcome o) {
  if (!o.met)
    for (const auto& f : o.findings)
      (o.severity == Severity::invalidates ? reasons : warnings).push_back(f);
  rules.push_back(std::move(o));
  valid = reasons.empty();
}

// A run a stop request (the first SIGINT or SIGTERM) ended early: its
// figures are what was measured up to the cut, not what was asked for.
RuleOutcome not_cut_short(bool cut_short, const std::string& what) {
  RuleOutcome o = outcome("not_cut_short", Severity::invalidates,
                          cut_short ? what : std::string("ran to its stop rules"));
  if (cut_short)
    finding(o, "cut short by a signal (SIGINT or SIGTERM): " + what +
                   "; the figures are what was measured up to the cut");
  return o;
}

std::string cut_where(const BenchResult& r) {
  if (r.latency.cut_short)
    return "during the lone frames, after " + std::to_string(r.latency.samples);
  if (r.offered)
    return "during the offered-load run, after " + std::to_string(r.offered->arrivals) +
           " measured arrivals";
  const auto& reps = r.steady.repeats;
  return reps.empty() ? std::string("before the steady state")
                      : "in repeat " + std::to_string(reps.size()) + " of " +
                            std::to_string(r.effective.point.repeats) + ", after " +
                            std::to_string(reps.back().inferences) + " measured inferences";
}

Verdict judge(const BenchResult& r) {
  Verdict v;
  const std::string lone_raise = "raise --latency-samples or --latency-duration";
  v.add(not_cut_short(r.cut_short, cut_where(r)));
  if (r.offered) {
    const OfferedRun& o = *r.offered;
    v.add(depth_within_queue(r.depth_note));
    v.add(no_errors(r.latency.errors + o.errors,
                    r.latency.first_error ? r.latency.first_error : o.first_error,
                    "in lone frames and the offered-load run"));
    v.add(offered_run_completed(o));
    v.add(frames_on_time(o, r.effective.offered.late_threshold));
    v.add(no_dropped_frames(o));
    v.add(keeps_up(o));
    v.add(percentiles_resolved(o.latency_ms, "latency at the offered rate", "raise --duration"));
    v.add(enough_lone_frames(r.latency.samples));
    v.add(percentiles_resolved(r.latency.overall_ms, "lone-frame latency", lone_raise));
    v.rules.back().rule = "lone_percentiles_resolved";
    v.add(figures_consistent(r.device, r.model, &r.ttfo, &r.latency));
    add_confounds(v, r.environment, r.device, r.virtual_clock, kVirtualClock,
                  r.effective.confounds.strict, &r.latency);
    return v;
  }
  const auto& repeats = r.steady.repeats;
  uint64_t errors = r.latency.errors;
  std::optional<Error> first = r.latency.first_error;
  for (const auto& rep : repeats) {
    errors += rep.errors;
    if (!first && rep.first_error) first = rep.first_error;
  }
  v.saw(r.latency.first_error);
  for (const auto& rep : repeats) v.saw(rep.first_error);
  v.add(depth_within_queue(r.depth_note));
  v.add(no_errors(errors, first, "in lone frames and repeats"));
  v.add(all_repeats_ran(repeats.size(), r.effective.point.repeats));
  v.add(rig_not_limiting(r.overhead));
  for (size_t i = 0; i < repeats.size(); ++i) {
    v.add(enough_samples(repeats[i], i, r.effective.point.min_inferences));
    v.add(device_returned_requests(repeats[i], i));
    v.add(repeat_stable(repeats[i], i, r.effective.point.stability_tolerance));
    v.add(rate_precise(repeats[i], i, r.effective.point.rate_tolerance));
    v.add(warmup_settled(repeats[i], i, r.effective.point.warmup_max));
    v.add(within_declared_cap(repeat_name(i), repeats[i].rate, repeats[i].declared_cap,
                              cap_rounding(r.virtual_clock)));
  }
  v.add(repeats_agree(r.steady.rate, r.effective.repeat_tolerance));
  v.add(enough_lone_frames(r.latency.samples));
  v.add(percentiles_resolved(r.latency.overall_ms, "lone-frame latency", lone_raise));
  v.rules.back().rule = "lone_percentiles_resolved";
  v.add(figures_consistent(r.device, r.model, &r.ttfo, &r.latency));
  add_confounds(v, r.environment, r.device, r.virtual_clock, kVirtualClock,
                r.effective.confounds.strict, &r.latency);
  ConfoundInputs in;
  in.monitor = &r.monitor;
  in.settings = &r.effective.confounds;
  in.environment = &r.environment;
  in.device = &r.device;
  in.virtual_clock = r.virtual_clock;
  for (const auto& rep : repeats) in.runs.push_back(&rep.windows);
  if (r.ttfo.total > Nanos(0)) in.first_inference = r.ttfo.first_inference;
  in.time_per_frame_ms = r.steady.time_per_frame_ms;
  if (!repeats.empty()) in.warmup_inferences = repeats.front().warmup_inferences;
  add_confound_rules(v, in);
  return v;
}

Verdict judge(const LoopResult& r) {
  Verdict v;
  v.saw(r.loop_error);
  {
    RuleOutcome o = outcome(
        "loop_ran", Severity::invalidates,
        r.loop_error ? r.loop_error->to_string() : std::string("the device's loop returned"));
    if (r.loop_error)
      finding(o, "the device's loop failed: " + r.loop_error->message +
                     "; nothing after it was measured");
    v.add(std::move(o));
  }
  v.saw(r.steady.first_error);
  v.add(depth_within_queue(r.depth_note));
  v.add(pipelined_run_completed(r.steady));
  v.add(pipelined_run_stable(r.steady, r.effective.point.stability_tolerance));
  v.add(loop_completed_frames(r.loop));
  v.add(loop_on_device(r.loop));
  v.add(comparable_clocks(r.mixed_clocks));
  v.add(device_rate_resolved(r));
  v.add(cost_is_transfers(r));
  v.add(figures_consistent(r.device, r.model, &r.ttfo, nullptr));
  add_confounds(v, r.environment, r.device, r.virtual_clock,
                r.device.kind + " runs on a virtual clock; both rates are simulated",
                r.effective.confounds.strict);
  ConfoundInputs in = confound_inputs(r);
  in.runs.push_back(&r.steady.windows);
  if (r.ttfo.total > Nanos(0)) in.first_inference = r.ttfo.first_inference;
  if (r.host_rate && *r.host_rate > 0) in.time_per_frame_ms = 1e3 / *r.host_rate;
  in.warmup_inferences = r.steady.warmup_inferences;
  add_confound_rules(v, in);
  return v;
}

Verdict judge(const LadderResult& r) {
  std::vector<std::pair<std::string, const PointResult*>> points;
  uint64_t lone_errors = 0;
  std::optional<Error> lone_first;
  for (const auto& rung : r.rungs) {
    points.emplace_back(rung.label(), &rung.pipelined);
    lone_errors += rung.lone_errors;
    if (!lone_first && rung.lone_first_error) lone_first = rung.lone_first_error;
  }
  Verdict v;
  for (const auto& rung : r.rungs) v.saw(rung.lone_first_error);
  for (const auto& [name, p] : points) v.saw(p->first_error);
  v.add(depth_within_queue(r.depth_note));
  v.add(points_without_errors(points));
  v.add(no_errors(lone_errors, lone_first, "in lone frames"));
  v.rules.back().rule = "no_lone_frame_errors";
  v.add(points_stable(points));
  v.add(points_within_declared_cap(points, cap_rounding(r.virtual_clock)));
  v.add(rungs_consistent(r.device, r.rungs));
  add_confounds(v, r.environment, r.device, r.virtual_clock, kVirtualClock,
                r.effective.confounds.strict);
  add_confound_rules(v, confound_inputs(r));
  return v;
}

Verdict judge(const SweepResult& r) {
  std::vector<std::pair<std::string, const PointResult*>> points;
  for (const auto& p : r.points)
    points.emplace_back("depth " + std::to_string(p.result.depth), &p.result);
  Verdict v;
  v.saw(r.lone.first_error);
  for (const auto& [name, p] : points) v.saw(p->first_error);
  v.add(points_without_errors(points));
  v.add(no_errors(r.lone.errors, r.lone.first_error, "in lone frames"));
  v.rules.back().rule = "no_lone_frame_errors";
  v.add(points_stable(points));
  v.add(points_within_declared_cap(points, cap_rounding(r.virtual_clock)));
  v.add(figures_consistent(r.device, r.model, &r.ttfo, &r.lone));
  add_confounds(v, r.environment, r.device, r.virtual_clock, kVirtualClock,
                r.effective.confounds.strict);
  add_confound_rules(v, confound_inputs(r));
  return v;
}

// rig sweep --rate: every probe ran, the search bracketed and resolved the
// best rate, each probe's p99 had the samples its interval needs.
namespace {

std::string probe_name(const RateProbe& p) {
  return "probe at " + format_fixed(p.rate, 2) + "/s";
}

RuleOutcome probes_completed(const RateSearch& s) {
  size_t failed = 0;
  for (const auto& p : s.probes) failed += p.run.aborted || p.run.errors > 0 ? 1 : 0;
  RuleOutcome o = outcome("probes_completed", Severity::invalidates,
                          std::to_string(s.probes.size() - failed) + " of " +
                              std::to_string(s.probes.size()) + " probes ran without errors");
  if (s.probes.empty()) finding(o, "no probe ran");
  for (const auto& p : s.probes) {
    if (p.run.device_stuck)
      finding(o, probe_name(p) +
                     ": the device did not return every request (its buffers are kept alive); "
                     "restart the device");
    else if (p.run.aborted || p.run.errors > 0)
      finding(o, probe_name(p) + ": " + std::to_string(p.run.errors) +
                     " inference(s) failed; first: " +
                     (p.run.first_error ? p.run.first_error->to_string() : std::string("aborted")));
  }
  return o;
}

RuleOutcome rate_bracketed(const RateSweepResult& r) {
  const auto& s = r.search;
  RuleOutcome o =
      outcome("rate_bracketed", Severity::warns,
              "best " + (s.best_rate ? format_fixed(*s.best_rate, 2) + "/s" : std::string("none")) +
                  ", first failing " +
                  (s.first_failing_rate ? format_fixed(*s.first_failing_rate, 2) + "/s"
                                        : std::string("none")) +
                  " in " + format_fixed(r.effective.min_rate, 2) + ".." +
                  format_fixed(r.effective.max_rate, 2) + "/s");
  o.threshold = "latency_bound " + format_duration(r.effective.latency_bound);
  if (s.end == RateSearchEnd::max_rate_met)
    finding(o, "the highest rate of the range met the bound, so the best rate is at least " +
                   format_fixed(r.effective.max_rate, 2) + "/s; raise --rate's upper end");
  else if (s.end == RateSearchEnd::min_rate_failed)
    finding(o, "no rate in the range met p99 <= " + format_duration(r.effective.latency_bound) +
                   "; lower --rate's lower end or raise --latency-bound");
  return o;
}

RuleOutcome search_resolved(const RateSweepResult& r) {
  const auto& s = r.search;
  RuleOutcome o = outcome("search_resolved", Severity::warns,
                          std::to_string(s.probes.size()) + " probes of at most " +
                              std::to_string(r.effective.max_probes) +
                              ", stopped: " + std::string(to_string(s.end)));
  o.threshold = "resolution " + format_fixed(r.effective.resolution, 3);
  if (s.end == RateSearchEnd::probes_exhausted)
    finding(o, "the probes ran out with the best rate " +
                   (s.best_rate ? format_fixed(*s.best_rate, 2) : std::string("n/a")) +
                   "/s and the first failing " +
                   (s.first_failing_rate ? format_fixed(*s.first_failing_rate, 2)
                                         : std::string("n/a")) +
                   "/s further apart than " + format_fixed(r.effective.resolution * 100, 1) +
                   "%; raise --max-probes");
  return o;
}

// A probe's p99 without an interval: its meets / fails rests on a point
// estimate from too few frames. The frames a probe measures are about its
// achieved rate x duration.
RuleOutcome probe_percentiles_resolved(const RateSweepResult& r) {
  const auto& s = r.search;
  size_t resolved = 0;
  for (const auto& p : s.probes) resolved += p.p99_enough ? 1 : 0;
  RuleOutcome o = outcome("probe_percentiles_resolved", Severity::warns,
                          std::to_string(resolved) + " of " + std::to_string(s.probes.size()) +
                              " probes have a p99 interval");
  for (const auto& p : s.probes) {
    const PercentileInterval& ci = p.run.latency_ms.p99_ci;
    if (p.p99_enough || p.run.aborted) continue;
    // Frames come back at the achieved rate (below the offered one when the
    // device falls behind).
    const double per_s = p.run.achieved_rate > 0 ? p.run.achieved_rate : p.rate;
    const double seconds = per_s > 0 ? static_cast<double>(ci.needs) / per_s : 0;
    finding(o, probe_name(p) + ": p99 from arrival: not enough samples (n = " +
                   std::to_string(ci.count) + ", p99 needs >= " + std::to_string(ci.needs) +
                   " for a " + format_fixed(ci.confidence * 100, 0) + "% interval); " +
                   std::to_string(ci.more_needed()) +
                   " more samples needed (raise --duration to at least " +
                   format_fixed(std::ceil(seconds), 0) + "s)");
  }
  return o;
}

// The two probes that decide the answer (the best rate and the first failing
// one): a bound inside a p99's interval means that probe's side of the
// bound rests on the point estimate, within the noise of its sample.
RuleOutcome bound_outside_intervals(const RateSweepResult& r) {
  const auto& s = r.search;
  const double bound_ms = to_ms(r.effective.latency_bound);
  RuleOutcome o = outcome("bound_outside_intervals", Severity::warns,
                          "the best and the first failing probe's p99 interval against the bound");
  o.threshold = "latency_bound " + format_duration(r.effective.latency_bound);
  for (const auto& p : s.probes) {
    const bool deciding = (s.best_rate && p.rate == *s.best_rate) ||
                          (s.first_failing_rate && p.rate == *s.first_failing_rate);
    const PercentileInterval& ci = p.run.latency_ms.p99_ci;
    if (!deciding || !ci.enough() || !p.keeps_up) continue;
    if (*ci.lower <= bound_ms && bound_ms <= *ci.upper)
      finding(o, probe_name(p) + ": the bound " + format_ms(bound_ms) + " lies inside its p99's " +
                     format_fixed(ci.confidence * 100, 0) + "% interval (" + format_ms(*ci.lower) +
                     " - " + format_ms(*ci.upper) + "): whether it " +
                     (p.meets ? "meets" : "misses") +
                     " the bound is within the noise of its frames; raise --duration");
  }
  return o;
}

}  // namespace

Verdict judge(const RateSweepResult& r) {
  Verdict v;
  v.saw(r.lone.first_error);
  for (const auto& p : r.search.probes) v.saw(p.run.first_error);
  v.add(depth_within_queue(r.depth_note));
  v.add(no_errors(r.lone.errors, r.lone.first_error, "in lone frames"));
  v.rules.back().rule = "no_lone_frame_errors";
  v.add(probes_completed(r.search));
  v.add(rate_bracketed(r));
  v.add(search_resolved(r));
  v.add(probe_percentiles_resolved(r));
  v.add(bound_outside_intervals(r));
  add_confounds(v, r.environment, r.device, r.virtual_clock, kVirtualClock,
                r.effective.confounds.strict);
  add_confound_rules(v, confound_inputs(r));
  return v;
}

Verdict judge(const AbResult& r) {
  Verdict v;
  v.add(depth_within_queue(r.depth_notes));
  v.add(enough_pairs(r.ratios.size(), r.settings.alpha));
  v.add(ab_resolved(r));
  v.add(quiet_host(r.environment, r.virtual_clock));
  if (r.shared_device) {
    v.add(device_without_warnings(r.device_a));
  } else {
    v.add(device_without_warnings(r.device_a, "device_a_without_warnings", "device A: "));
    v.add(device_without_warnings(r.device_b, "device_b_without_warnings", "device B: "));
  }
  v.add(real_clock(r.virtual_clock, kVirtualClock));
  if (r.shared_device) {
    v.add(clock_across_link(r.device_a, nullptr));
  } else {
    v.add(clock_across_link(r.device_a, nullptr, "clock_across_link_a", "device A: "));
    v.add(clock_across_link(r.device_b, nullptr, "clock_across_link_b", "device B: "));
  }
  add_environment_confounds(v, r.environment, r.virtual_clock, r.settings.confounds.strict);
  ConfoundInputs in;
  in.monitor = &r.monitor;
  in.settings = &r.settings.confounds;
  in.environment = &r.environment;
  in.device = &r.device_a;
  in.virtual_clock = r.virtual_clock;
  add_confound_rules(v, in);
  return v;
}

// rig soak: the run itself, the drift between its spans, then the confounds.
Verdict judge(const SoakResult& r) {
  Verdict v;
  v.add(not_cut_short(r.run.cut_short, "after " + format_duration(r.run.elapsed) +
                                           " of the soak, " + std::to_string(r.run.inferences) +
                                           " inferences"));
  v.add(depth_within_queue(r.depth_note));
  v.add(no_errors(r.run.errors, r.run.first_error, "in the soak run"));
  v.saw(r.run.first_error);
  v.add(pipelined_run_completed(r.run));
  v.rules.back().rule = "soak_run_completed";
  {
    RuleOutcome o = outcome("spans_measured", Severity::invalidates,
                            std::to_string(r.short_run.windows) + " short-run and " +
                                std::to_string(r.long_run.windows) + " long-run windows");
    if (!r.short_run.rate || !r.long_run.rate)
      finding(o,
              "the run has no complete short-run or long-run span; lengthen --duration or "
              "shorten --window");
    v.add(std::move(o));
  }
  {
    RuleOutcome o = outcome("drift_within_noise", Severity::warns,
                            r.drift ? "drift " + format_fixed(*r.drift * 100, 2) + "%, noise " +
                                          format_fixed(r.noise.value_or(0) * 100, 2) + "%"
                                    : std::string("drift n/a"));
    o.threshold = "the larger of the two spans' window spread, at least " +
                  format_fixed(r.effective.drift_floor * 100, 1) + "%";
    if (r.drift_exceeds_noise)
      finding(o, "long-run rate " + format_fixed(*r.long_run.rate, 2) + " /s differs from the " +
                     "short-run rate " + format_fixed(*r.short_run.rate, 2) + " /s by " +
                     format_fixed(*r.drift * 100, 1) +
                     "%, beyond the noise: a short benchmark does not give the sustained rate; "
                     "quote the long-run rate");
    v.add(std::move(o));
  }
  v.add(figures_consistent(r.device, r.model, &r.ttfo, nullptr));
  add_confounds(v, r.environment, r.device, r.virtual_clock, kVirtualClock,
                r.effective.confounds.strict);
  ConfoundInputs in;
  in.monitor = &r.monitor;
  in.settings = &r.effective.confounds;
  in.environment = &r.environment;
  in.device = &r.device;
  in.virtual_clock = r.virtual_clock;
  in.runs.push_back(&r.run.windows);
  if (r.ttfo.total > Nanos(0)) in.first_inference = r.ttfo.first_inference;
  if (r.run.rate > 0) in.time_per_frame_ms = 1e3 / r.run.rate;
  in.warmup_inferences = r.run.warmup_inferences;
  add_confound_rules(v, in);
  return v;
}

void add_confound_rules(Verdict& v, const ConfoundInputs& in) {
  const MonitorRecord none;
  const ConfoundSettings defaults;
  ConfoundInputs i = in;
  if (!i.monitor) i.monitor = &none;
  if (!i.settings) i.settings = &defaults;
  v.add(host_contention(i));
  v.add(steal_time(i));
  v.add(thermal_drift(i));
  v.add(clock_drop(i));
  v.add(power_limited(i));
  v.add(device_warnings(i));
  v.add(cold_caches(i));
  v.add(shared_link(i));
  v.add(device_shared(i));
}

std::optional<RateTrend> rate_trend(const std::vector<WindowFigure>& windows) {
  std::vector<std::pair<double, double>> pts;
  std::vector<size_t> index;  // pts[i] is windows[index[i]]
  for (size_t i = 0; i < windows.size(); ++i)
    if (windows[i].duration_s > 0) {
      pts.emplace_back(windows[i].start_s + windows[i].duration_s / 2, windows[i].rate);
      index.push_back(i);
    }
  if (pts.size() < 4) return std::nullopt;
  const auto n = static_cast<double>(pts.size());
  double mx = 0, my = 0;
  for (const auto& [x, y] : pts) {
    mx += x;
    my += y;
  }
  mx /= n;
  my /= n;
  double sxx = 0, sxy = 0;
  for (const auto& [x, y] : pts) {
    sxx += (x - mx) * (x - mx);
    sxy += (x - mx) * (y - my);
  }
  if (!(sxx > 0) || !(my > 0)) return std::nullopt;
  const double slope = sxy / sxx;
  double ss = 0;
  for (const auto& [x, y] : pts) {
    const double r = y - (my + slope * (x - mx));
    ss += r * r;
  }
  RateTrend t;
  t.windows = pts.size();
  t.change = slope * (pts.back().first - pts.front().first) / my;
  t.scatter = std::sqrt(ss / n) / my;
  return t;
}

Result<void> validate(const ConfoundSettings& s) {
  auto bad = [](const std::string& m) { return fail(ErrorCode::invalid_argument, m); };
  for (auto [name, v] :
       {std::pair{"others_cpu_max", s.others_cpu_max},
        std::pair{"psi_some_max_pct", s.psi_some_max_pct}, std::pair{"steal_max", s.steal_max},
        std::pair{"drift_max", s.drift_max}, std::pair{"temp_rise_max_c", s.temp_rise_max_c},
        std::pair{"cold_first_ratio", s.cold_first_ratio},
        std::pair{"shared_link_max", s.shared_link_max}})
    if (!(v > 0)) return bad(std::string("confound threshold ") + name + " must be positive");
  if (!(s.clock_drop_ratio > 0 && s.clock_drop_ratio < 1))
    return bad("confound threshold clock_drop_ratio must be in (0, 1)");
  return {};
}

void Verdict::saw(const std::optional<Error>& error) {
  if (!failure && error && exit_code_for(error->code) == 3) failure = error;
}

int strict_exit_status(const Verdict& verdict, bool strict) {
  if (verdict.failure) return 3;
  return strict && !verdict.valid ? 1 : 0;
}

}  // namespace rig

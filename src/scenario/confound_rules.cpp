// The confound rules (rig/scenario/confounds.hpp): what may have spoiled a
// run, each a named rule over the monitor's series, the device's warnings,
// the cold start and the environment; add_confound_rules composes them for
// every judge, add_environment_confounds the environment's two.
//
// One file on purpose, over 600 lines: the rules share the readers of the
// monitor's measured series (measured_values, series_names, the readings a
// moved rate coincided with) and the rate's trend and step fits, and
// thermal_drift names the other rules' causes (heating, contention,
// sharing) so that a cause is blamed once.
#include <algorithm>
#include <cctype>
#include <cmath>

#include "rig/scenario/confounds.hpp"
#include "rig/units.hpp"
#include "scenario/rules.hpp"

namespace rig {
namespace {

// Each confound states its threshold; a rule without data is met and says
// why it was skipped ("skipped: ..."), never guessed.

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

// Why the host was not sampled: the virtual clock the figures are on, or
// (timed here by the wall clock, real_clock met) a served device on a
// virtual clock not paced to it.
std::string host_skipped(const ConfoundInputs& in) {
  if (in.virtual_clock) return kHostSkipped;
  return "host sources not sampled: the server's device runs on a virtual clock not paced to the "
         "wall clock (serve the sim with realtime=1 to time it here)";
}

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
                                     : host_skipped(in));
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
    return skipped(o, m.host_sampled ? m.why_absent("host_cpu") : host_skipped(in));
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

// A run's windows that have a duration as (middle, rate) points, with the
// centred sums of the least-squares fits over them (rate_trend's line,
// rate_step's two means); nullopt under 4 points.
struct WindowPoints {
  std::vector<std::pair<double, double>> pts;
  std::vector<size_t> index;  // pts[i] is windows[index[i]]
  double mx = 0, my = 0;      // the means of x and y
  double sxx = 0, sxy = 0, syy = 0;
};

std::optional<WindowPoints> window_points(const std::vector<WindowFigure>& windows) {
  WindowPoints w;
  for (size_t i = 0; i < windows.size(); ++i)
    if (windows[i].duration_s > 0) {
      w.pts.emplace_back(windows[i].start_s + windows[i].duration_s / 2, windows[i].rate);
      w.index.push_back(i);
    }
  if (w.pts.size() < 4) return std::nullopt;
  const auto n = static_cast<double>(w.pts.size());
  for (const auto& [x, y] : w.pts) {
    w.mx += x;
    w.my += y;
  }
  w.mx /= n;
  w.my /= n;
  for (const auto& [x, y] : w.pts) {
    w.sxx += (x - w.mx) * (x - w.mx);
    w.sxy += (x - w.mx) * (y - w.my);
    w.syy += (y - w.my) * (y - w.my);
  }
  return w;
}

std::optional<RateStep> rate_step(const std::vector<WindowFigure>& windows) {
  const auto fit = window_points(windows);
  if (!fit) return std::nullopt;
  const auto& pts = fit->pts;
  const auto& index = fit->index;
  const auto n = static_cast<double>(pts.size());
  const double sxx = fit->sxx, sxy = fit->sxy, syy = fit->syy;
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
// (device_shared), and host contention the host rules' (host_contention,
// steal_time), so drift is not blamed for either.
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
      // The host rules raise the contention: it is filed there, not as drift.
      explained += "; " + what + " while " + *contention +
                   ": the host rules (host_contention, steal_time) explain it, drift is not "
                   "blamed";
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
                          : host_skipped(in) + "; the device reports no clock_mhz");
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

// HailoRT's default throttling callback (device_common/device.cpp,
// default_throttling_state_change_notification_callback, 5.2.0): "Device ID
// throttling state is now: THROTTLING_<STATE>", for the device's
// ThrottlingStateChangeNotification (rpc.proto; 5.1.1 has none). The state
// named, or nullopt for any other text.
std::optional<std::string> throttling_state(const std::string& text) {
  static const std::string kMarker = "throttling state is now: ";
  const size_t at = text.find(kMarker);
  if (at == std::string::npos) return std::nullopt;
  size_t end = at + kMarker.size();
  while (end < text.size() &&
         (std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '_'))
    ++end;
  return text.substr(at + kMarker.size(), end - at - kMarker.size());
}

// The device said it throttled during the run: its rate is then a throttled
// device's, not the one a cool device with its rated supply gives. A return
// to THROTTLING_NONE is evidence, not a finding.
RuleOutcome device_throttled(const ConfoundInputs& in) {
  RuleOutcome o = confound("device_throttled", in.settings->strict,
                           "any throttling state other than THROTTLING_NONE the device reported");
  size_t n = 0, back = 0;
  for (const auto& [when, text] : all_device_warnings(in)) {
    const auto state = throttling_state(text);
    if (!state) continue;
    if (*state == "THROTTLING_NONE") {
      ++back;
      continue;
    }
    ++n;
    finding(o, "the device throttled (" + when + "): " + *state + " (\"" + text +
                   "\"); the figures are a throttled device's: cool it, give it its rated "
                   "supply, and measure again");
  }
  o.evidence = std::to_string(n) + " throttling notification(s), " + std::to_string(back) +
               " back to THROTTLING_NONE";
  if (!in.monitor->enabled) o.evidence += "; only the warnings at open were read (--no-monitor)";
  return o;
}

RuleOutcome device_warnings(const ConfoundInputs& in) {
  RuleOutcome o = confound("device_warnings", in.settings->strict,
                           "any warning the device raised during the run");
  if (auto off = monitor_off(*in.monitor))
    return skipped(o, *off + ": the device's warnings during the run were not taken");
  size_t n = 0;
  for (const auto& w : in.monitor->device_warnings) {
    if (power_warning(w.text)) continue;     // power_limited reports those
    if (throttling_state(w.text)) continue;  // device_throttled reports those
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
    return skipped(o, m.host_sampled ? m.why_absent("link_traffic") : host_skipped(in));
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

}  // namespace

void add_environment_confounds(Verdict& v, const Environment& env, bool virtual_clock,
                               bool strict) {
  v.add(debug_build(env, virtual_clock, strict));
  v.add(cpu_governor(env, virtual_clock, strict));
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
  v.add(device_throttled(i));
}

std::optional<RateTrend> rate_trend(const std::vector<WindowFigure>& windows) {
  const auto fit = window_points(windows);
  if (!fit) return std::nullopt;
  const auto& pts = fit->pts;
  const auto n = static_cast<double>(pts.size());
  const double mx = fit->mx, my = fit->my, sxx = fit->sxx, sxy = fit->sxy;
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

}  // namespace rig

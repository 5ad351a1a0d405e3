// The confounds block and the monitor block of the text reports.
#include "report/monitor_text.hpp"

#include <cmath>
#include <sstream>

#include "report/text_common.hpp"
#include "rig/units.hpp"

namespace rig::report {

std::string format_joules(double j) {
  const double a = std::fabs(j);
  if (a >= 1) return format_fixed(j, 3) + " J";
  if (a >= 1e-3) return format_fixed(j * 1e3, 3) + " mJ";
  return format_fixed(j * 1e6, 3) + " uJ";
}

std::string confounds_text(const Verdict& v, bool strict) {
  size_t checked = 0, skipped = 0, invalidating = 0;
  std::vector<const RuleOutcome*> raised;
  for (const auto& r : v.rules) {
    if (r.threshold.empty()) continue;  // the confound rules state a threshold
    ++checked;
    if (r.evidence.rfind("skipped:", 0) == 0) ++skipped;
    if (!r.met) raised.push_back(&r);
    if (!r.met && r.severity == Severity::invalidates) ++invalidating;
  }
  if (checked == 0) return {};
  std::string out;
  if (raised.empty())
    return "confounds: none raised (" + std::to_string(checked) + " checked, " +
           std::to_string(skipped) + " skipped for want of data)\n\n";
  std::string how;
  if (strict)
    how = "--strict-confounds given: each invalidates";
  else if (invalidating == 0)
    how = "--strict-confounds not given: warnings; the figures stand";
  else
    how = "--strict-confounds not given: " + std::to_string(invalidating) +
          " invalidate(s) all the same, each line says why";
  out = "confounds: " + std::to_string(raised.size()) + " raised (" + how + ")\n";
  for (const auto* r : raised)
    for (const auto& f : r->findings) out += "  " + r->rule + ": " + f + "\n";
  return out + "\n";
}

std::string closing_text(const std::vector<std::string>& notes, const MonitorRecord& monitor,
                         const Verdict& verdict) {
  std::string out;
  append_notes(out, notes);
  return out + monitor_text(monitor) + verdict_text(verdict);
}

std::string monitor_text(const MonitorRecord& m) {
  std::ostringstream out;
  out << "monitor\n";
  if (!m.enabled) {
    row(out, "sources", "off", "--no-monitor: nothing sampled, no energy figure");
    return out.str() + "\n";
  }
  size_t available = 0;
  for (const auto& s : m.sources) available += s.state == SourceState::available ? 1 : 0;
  row(out, "sources", std::to_string(available) + " of " + std::to_string(m.sources.size()),
      std::to_string(m.samples.size()) + " samples, one per window boundary" +
          (m.host_sampled ? std::string() : "; " + m.host_note));
  for (const auto& s : m.sources)
    if (s.state == SourceState::available) row(out, "  " + s.name, "read", s.detail);
  for (const auto& w : m.device_warnings) row(out, "device warning", w.when, w.text);
  for (const auto& n : m.notes) row(out, "note", "", n);
  const EnergyFigure& e = m.energy;
  if (e.available && e.joules_per_inference) {
    std::string how = e.sensor + ", " + e.method;
    if (e.sampling_period_s)
      how += ", sampled every " + format_fixed(*e.sampling_period_s, 2) + " s";
    row(out, "energy per inference", format_joules(*e.joules_per_inference), how);
    row(out, "mean power during the run", format_fixed(*e.mean_power_w, 3) + " W",
        e.idle_subtracted
            ? "idle " + format_fixed(*e.idle_power_w, 3) + " W over " + format_fixed(e.idle_s, 1) +
                  " s subtracted: net " + format_fixed(*e.net_power_w, 3) + " W"
            : "idle not measured: gross figure" +
                  (e.reason.empty() ? std::string() : " (" + e.reason + ")"));
  } else {
    row(out, "energy per inference",
        e.reason.rfind("unavailable", 0) == 0 ? e.reason : "unavailable: " + e.reason);
  }
  return out.str() + "\n";
}

}  // namespace rig::report

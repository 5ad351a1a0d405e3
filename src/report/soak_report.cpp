// rig soak's reporters: text with units, and the JSON document.
#include "rig/report/soak_report.hpp"

#include <sstream>

#include "report/json_common.hpp"
#include "report/monitor_text.hpp"
#include "report/soak_fields.hpp"
#include "report/text_common.hpp"
#include "rig/units.hpp"

namespace rig {
namespace {

using namespace report;

std::string temp_text(const std::optional<double>& t) {
  return t ? format_fixed(*t, 1) : std::string("-");
}

}  // namespace

std::string format_soak_text(const SoakResult& r) {
  std::ostringstream out;
  out << "rig soak: " << r.model.name << " on " << r.device.spec << "\n";
  out << "  " << r.device.description << ", depth " << r.run.depth << "\n\n";
  out << confounds_text(r.verdict, r.effective.confounds.strict);
  out << "soak (" << format_duration(r.run.elapsed) << " measured in " << r.windows.size()
      << " windows of " << format_duration(r.effective.window) << ", after a warm-up of "
      << format_duration(r.run.warmup) << ")\n";
  if (r.effective.cooldown > Nanos(0))
    row(out, "cooldown", format_duration(r.effective.cooldown), "waited before the model loaded");
  row(out, "time to first output", format_duration(r.ttfo.total));
  row(out, "short-run rate", per_s(r.short_run.rate),
      "first " + format_duration(r.effective.short_span) + ": " +
          std::to_string(r.short_run.windows) + " windows, spread " + pct(r.short_run.spread));
  row(out, "long-run rate", per_s(r.long_run.rate),
      "last " + format_duration(r.effective.long_span) + ": " + std::to_string(r.long_run.windows) +
          " windows, spread " + pct(r.long_run.spread));
  row(out, "drift (long / short - 1)", r.drift ? format_fixed(*r.drift * 100, 2) + " %" : "n/a",
      r.drift ? (r.drift_exceeds_noise ? "beyond the noise (" : "within the noise (") +
                    format_fixed(r.noise.value_or(0) * 100, 2) + " %, floor " +
                    format_fixed(r.effective.drift_floor * 100, 1) + " %)"
              : std::string());
  row(out, "whole-run rate", format_fixed(r.run.rate, 2) + " /s",
      std::to_string(r.run.inferences) + " inferences");
  out << '\n';

  out << "per window"
      << (r.temperature_sensor.empty() ? " (no temperature sensor)"
                                       : " (temperature: " + r.temperature_sensor + ")")
      << "\n";
  // Every window up to 60; beyond that every k-th (the JSON has them all).
  const size_t step = r.windows.size() > 60 ? (r.windows.size() + 59) / 60 : 1;
  out << line("  %10s  %12s  %8s\n", "start (s)", "rate (/s)", "temp (C)");
  for (size_t i = 0; i < r.windows.size(); i += step) {
    const auto& w = r.windows[i];
    out << line("  %10.2f  %12.2f  %8s\n", w.start_s, w.rate, temp_text(w.temperature_c).c_str());
  }
  if (step > 1) out << "  (every " << step << "th window shown; the JSON has each)\n";
  out << '\n';
  out << monitor_text(r.monitor);
  out << verdict_text(r.verdict);
  return out.str();
}

std::string soak_to_json(const SoakResult& r) {
  return write_document("rig soak", r, soak_fields<JsonWriter>);
}

}  // namespace rig

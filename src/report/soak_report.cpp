// rig soak's reporters: text with units, and the JSON document.
#include "rig/report/soak_report.hpp"

#include <sstream>

#include "report/json_common.hpp"
#include "report/monitor_fields.hpp"
#include "report/monitor_text.hpp"
#include "report/text_common.hpp"
#include "rig/units.hpp"

namespace rig {
namespace {

using report::json;
using namespace report;

json soak_settings_json(const SoakSettings& s) {
  json j;
  j["model"] = s.model;
  j["device"] = s.device;
  j["depth"] = s.depth;
  j["duration_s"] = to_seconds(s.duration);
  j["short_s"] = to_seconds(s.short_span);
  j["long_s"] = to_seconds(s.long_span);
  j["window_s"] = to_seconds(s.window);
  j["cooldown_s"] = to_seconds(s.cooldown);
  j["warmup_max_s"] = to_seconds(s.warmup_max);
  j["request_timeout_s"] = to_seconds(s.request_timeout);
  j["seed"] = s.seed;
  j["drift_floor"] = json_number(s.drift_floor);
  add_monitor_settings_json(j, s.monitor, s.confounds);
  return j;
}

json span_json(const SoakSpan& s) {
  return {{"start_s", json_number(s.start_s)}, {"duration_s", json_number(s.duration_s)},
          {"inferences", s.inferences},        {"windows", s.windows},
          {"rate_per_s", json_number(s.rate)}, {"spread", json_number(s.spread)}};
}

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
  json doc = document("rig soak");
  doc["settings"] = {{"requested", soak_settings_json(r.requested)},
                     {"effective", soak_settings_json(r.effective)}};
  doc["environment"] = environment_json(r.environment, r.virtual_clock, {{"device", &r.device}});
  doc["model"] = model_json(r.model);
  doc["ttfo"] = ttfo_json(r.ttfo);
  json windows = json::array();
  for (const auto& w : r.windows)
    windows.push_back({{"start_s", json_number(w.start_s)},
                       {"duration_s", json_number(w.duration_s)},
                       {"inferences", w.inferences},
                       {"rate_per_s", json_number(w.rate)},
                       {"temperature_c", json_number(w.temperature_c)}});
  doc["soak"] = {{"depth", r.run.depth},
                 {"elapsed_s", to_seconds(r.run.elapsed)},
                 {"inferences", r.run.inferences},
                 {"rate_per_s", json_number(r.run.rate)},
                 {"warmup_s", to_seconds(r.run.warmup)},
                 {"errors", r.run.errors},
                 {"first_error", error_json(r.run.first_error)},
                 {"aborted", r.run.aborted},
                 {"temperature_sensor", r.temperature_sensor},
                 {"windows", windows},
                 {"short", span_json(r.short_run)},
                 {"long", span_json(r.long_run)},
                 {"drift", json_number(r.drift)},
                 {"noise", json_number(r.noise)},
                 {"drift_exceeds_noise", r.drift_exceeds_noise}};
  doc["monitor"] = monitor_json(r.monitor);
  doc["verdict"] = verdict_json(r.verdict);
  doc["input_data"] = input_data_json(r.effective.inputs.get(), r.effective.seed);
  return dump(doc);
}

}  // namespace rig

// The monitor's block of a result document (schema version 3), as a table
// of keys both walkers use (json_walkers.hpp), and the settings that go
// with it. Private to the reporters.
#pragma once

#include "report/json_walkers.hpp"
#include "rig/monitor/monitor.hpp"
#include "rig/scenario/confounds.hpp"

namespace rig::report {

template <class Io>
void monitor_settings_fields(Io& io, MonitorSettings& s) {
  io.value("enabled", s.enabled);
  io.value("proc_root", s.proc_root);
  io.value("sys_root", s.sys_root);
  io.value("nvml_library", s.nvml_library);
  io.seconds("idle_s", s.idle);
  io.value("idle_samples", s.idle_samples);
}

template <class Io>
void confound_settings_fields(Io& io, ConfoundSettings& s) {
  io.value("strict", s.strict);
  io.number("others_cpu_max", s.others_cpu_max);
  io.number("psi_some_max_pct", s.psi_some_max_pct);
  io.number("steal_max", s.steal_max);
  io.number("drift_max", s.drift_max);
  io.number("temp_rise_max_c", s.temp_rise_max_c);
  io.number("clock_drop_ratio", s.clock_drop_ratio);
  io.number("cold_first_ratio", s.cold_first_ratio);
  io.number("shared_link_max", s.shared_link_max);
}

template <class Io>
void energy_fields(Io& io, EnergyFigure& e) {
  io.value("available", e.available);
  io.value("reason", e.reason);
  io.value("sensor", e.sensor);
  io.value("method", e.method);
  io.number("sampling_period_s", e.sampling_period_s);
  io.number("idle_s", e.idle_s);
  io.number("idle_power_w", e.idle_power_w);
  io.value("idle_subtracted", e.idle_subtracted);
  io.number("mean_power_w", e.mean_power_w);
  io.number("net_power_w", e.net_power_w);
  io.number("joules_per_inference", e.joules_per_inference);
}

template <class Io>
void monitor_fields(Io& io, MonitorRecord& m) {
  io.value("enabled", m.enabled);
  io.value("host_sampled", m.host_sampled);
  io.value("host_note", m.host_note);
  io.array("sources", m.sources, [](Io& s, SourceStatus& st) {
    s.value("name", st.name);
    s.enumeration("kind", st.kind, kSourceKinds);
    s.enumeration("state", st.state, kSourceStates);
    s.value("detail", st.detail);
  });
  io.array("samples", m.samples, [](Io& s, MonitorSample& x) {
    s.number("t_s", x.t_s);
    s.value("phase", x.phase);
    s.value("event", x.event);
    s.value("repeat", x.repeat);
    s.value("window", x.window);
    s.value("values", x.values);
  });
  io.array("device_warnings", m.device_warnings, [](Io& w, DeviceWarning& d) {
    w.value("when", d.when);
    w.value("text", d.text);
  });
  io.value("notes", m.notes);
  io.object("energy", [&](Io& e) { energy_fields(e, m.energy); });
}

// A settings block's "monitor" and "confounds" objects (added in `since`).
template <class Io>
void monitor_confound_settings_fields(Io& io, MonitorSettings& monitor, ConfoundSettings& confounds,
                                      int since = 3) {
  io.object(
      "monitor", [&](Io& m) { monitor_settings_fields(m, monitor); }, since);
  io.object(
      "confounds", [&](Io& c) { confound_settings_fields(c, confounds); }, since);
}

// The settings' "monitor" and "confounds" objects, added to `settings`.
inline void add_monitor_settings_json(json& settings, MonitorSettings monitor,
                                      ConfoundSettings confounds) {
  JsonWriter mw(settings["monitor"] = json::object());
  monitor_settings_fields(mw, monitor);
  JsonWriter cw(settings["confounds"] = json::object());
  confound_settings_fields(cw, confounds);
}

// A result's "monitor" object.
inline json monitor_json(MonitorRecord record) {
  json j = json::object();
  JsonWriter w(j);
  monitor_fields(w, record);
  return j;
}

}  // namespace rig::report

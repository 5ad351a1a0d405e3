// Options of every command that runs the monitor: --no-monitor, --idle,
// --strict-confounds, and the /proc and /sys roots (for tests: documented in
// docs/methodology.md, hidden from --help). Header-only.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "cli/options.hpp"
#include "rig/monitor/monitor.hpp"
#include "rig/scenario/confounds.hpp"
#include "rig/units.hpp"

namespace rig::cli {

struct MonitorOptions {
  bool no_monitor = false;
  std::string idle = "2s";
  std::string proc_root = "/proc";
  std::string sys_root = "/sys";
  bool strict_confounds = false;
};

inline void add_monitor_options(CLI::App* sub, MonitorOptions& o) {
  sub->add_flag("--no-monitor", o.no_monitor,
                "do not sample host, clocks, temperatures, power or the device's sensors");
  sub->add_option("--idle", o.idle,
                  "idle power measured before the run where power is readable (0: not measured)")
      ->capture_default_str();
  sub->add_flag("--strict-confounds", o.strict_confounds,
                "each raised confound (contention, drift, throttling, ...) invalidates the run");
  // For tests: fake trees. Documented, not advertised.
  sub->add_option("--proc-root", o.proc_root, "root of /proc for the monitor")->group("");
  sub->add_option("--sys-root", o.sys_root, "root of /sys for the monitor")->group("");
}

inline Result<void> apply_monitor_options(const MonitorOptions& o, MonitorSettings& monitor,
                                          ConfoundSettings& confounds) {
  monitor.enabled = !o.no_monitor;
  // "0" is "not measured", as the help says; other durations need a unit.
  auto idle = o.idle == "0" ? Result<Nanos>(Nanos(0)) : parse_duration(o.idle);
  if (!idle) return fail(ErrorCode::invalid_argument, "--idle: " + idle.error().message);
  if (*idle < Nanos(0)) return fail(ErrorCode::invalid_argument, "--idle must not be negative");
  monitor.idle = *idle;
  if (o.proc_root.empty() || o.sys_root.empty())
    return fail(ErrorCode::invalid_argument, "--proc-root and --sys-root must not be empty");
  monitor.proc_root = o.proc_root;
  monitor.sys_root = o.sys_root;
  confounds.strict = o.strict_confounds;
  return {};
}

}  // namespace rig::cli

// Options of every command that runs the monitor, bound to its settings:
// --no-monitor, --idle, --strict-confounds, and the /proc and /sys roots (for
// tests: documented in docs/methodology.md, hidden from --help). Header-only.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "cli/bind.hpp"
#include "rig/monitor/monitor.hpp"
#include "rig/scenario/confounds.hpp"

namespace rig::cli {

inline void add_monitor_options(CLI::App* sub, MonitorSettings& monitor,
                                ConfoundSettings& confounds) {
  add_off_flag(sub, "--no-monitor", monitor.enabled,
               "do not sample host, clocks, temperatures, power or the device's sensors");
  // "0" is "not measured", as the help says; other durations need a unit.
  add_duration_option(sub, "--idle", monitor.idle,
                      "idle power measured before the run where power is readable (0: not "
                      "measured)",
                      DurationRule::zero_or_unit);
  sub->add_flag("--strict-confounds", confounds.strict,
                "each raised confound (contention, drift, throttling, ...) invalidates the run");
  // For tests: fake trees. Documented, not advertised.
  auto root = [](const std::string& text) -> Result<std::string> {
    if (text.empty())
      return fail(ErrorCode::invalid_argument, "--proc-root and --sys-root must not be empty");
    return text;
  };
  add_parsed_option(sub, "--proc-root", monitor.proc_root, "root of /proc for the monitor", root)
      ->group("");
  add_parsed_option(sub, "--sys-root", monitor.sys_root, "root of /sys for the monitor", root)
      ->group("");
}

}  // namespace rig::cli

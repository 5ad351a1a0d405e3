// Text blocks every report with a monitor shares: the confounds at the top,
// and the monitor's sources and energy. No figure is printed that was not
// taken: energy without a power reading prints its reason, never W or J.
#pragma once

#include <string>
#include <vector>

#include "rig/monitor/monitor.hpp"
#include "rig/scenario/verdict.hpp"

namespace rig::report {

// "confounds: none raised (10 checked, 4 skipped)\n" or the raised ones,
// one line each with what to change. `strict`: whether --strict-confounds
// was given (the header says what was asked; a rule that invalidates
// without it says why in its own line).
std::string confounds_text(const Verdict& verdict, bool strict);

// "monitor\n  sources ...\n  energy per inference ...\n"
std::string monitor_text(const MonitorRecord& monitor);

// A report's closing lines: its notes, the monitor, and the verdict with
// every rule that made it.
std::string closing_text(const std::vector<std::string>& notes, const MonitorRecord& monitor,
                         const Verdict& verdict);

// "1.23 mJ" / "45.6 uJ" / "2.00 J"
std::string format_joules(double joules);

}  // namespace rig::report

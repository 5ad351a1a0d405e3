// Helpers every text reporter shares: figures with their units, "n/a" for a
// figure that does not exist, aligned rows, notes and the verdict block.
#pragma once

#include <cstdio>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "rig/device.hpp"
#include "rig/scenario/input_verdict.hpp"
#include "rig/scenario/verdict.hpp"
#include "rig/stats.hpp"

namespace rig::report {

std::string ms_or_na(const std::optional<double>& v);  // "2.27 ms" or "n/a"
std::string per_s(const std::optional<double>& v);     // "440.5 /s"
std::string pct(const std::optional<double>& v);       // "1.2 %"
std::string opt_fixed(const std::optional<double>& v, int decimals);
// Rounding noise of a fit (|v| < 1 ns) prints as 0, not "-0.000 us".
std::string opt_ms(const std::optional<double>& v);
std::string opt_pct(const std::optional<double>& v, int decimals = 2);  // "1.23%"
std::string opt_rate(const std::optional<double>& bytes_per_s);         // "290.0 MB/s"
std::string with_commas(double value);                                  // 150528 -> "150,528"
// A percentile in ms with its interval, "2.31 ms (95% CI 2.28-2.40 ms)", or
// "not enough samples (n = 200, p99 needs >= 368)".
std::string percentile_ms(const std::optional<double>& value, const PercentileInterval& ci);

// printf into a string (one table row; at most 511 characters).
template <class... Args>
std::string line(const char* format, Args... args) {
  char buf[512];
  std::snprintf(buf, sizeof buf, format, args...);
  return buf;
}

// "  label                         value   note"
void row(std::ostringstream& out, const std::string& label, const std::string& value,
         const std::string& note = {});

// "notes:\n  - ...\n" (nothing when empty).
void append_notes(std::string& out, const std::vector<std::string>& notes);

// "verdict: VALID" or "verdict: INVALID" alone, for reports whose notes
// already give the reasons (ladder, sweep).
std::string verdict_line(const Verdict& v);

// "verdict: VALID|INVALID", then "  - rule: reason" and "  warning: rule:
// ..." lines, each finding with the rule that made it.
std::string verdict_text(const Verdict& v);

// "input cpu1.json (rig bench): INVALID (reasons)" per input read.
std::string inputs_text(const JudgedInputs& judged);

// "queue depth 32", or for a remote device "queue depth 32 (64 in flight per
// connection)".
std::string queue_text(const DeviceInfo& d);

}  // namespace rig::report

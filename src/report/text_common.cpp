#include "report/text_common.hpp"

#include <cmath>

#include "rig/units.hpp"

namespace rig::report {

std::string percentile_ms(const std::optional<double>& value, const PercentileInterval& ci) {
  if (!value) return "n/a";
  const std::string p = "p" + format_fixed(ci.p, 0);
  if (!ci.enough())
    return "not enough samples (n = " + std::to_string(ci.count) + ", " + p +
           " needs >= " + std::to_string(ci.needs) + ")";
  return format_ms(*value) + " (" + format_fixed(ci.confidence * 100, 0) + "% CI " +
         format_ms(*ci.lower) + " - " + format_ms(*ci.upper) + ")";
}

std::string ms_or_na(const std::optional<double>& v) {
  return v ? format_ms(*v) : "n/a";
}

std::string per_s(const std::optional<double>& v) {
  return v ? format_fixed(*v, *v >= 100 ? 1 : 2) + " /s" : "n/a";
}

std::string pct(const std::optional<double>& v) {
  return v ? format_fixed(*v * 100, 1) + " %" : "n/a";
}

std::string opt_fixed(const std::optional<double>& v, int decimals) {
  return v ? format_fixed(*v, decimals) : std::string("n/a");
}

std::string opt_ms(const std::optional<double>& v) {
  if (!v) return "n/a";
  return format_ms(std::fabs(*v) < 1e-6 ? 0.0 : *v);
}

std::string opt_pct(const std::optional<double>& v, int decimals) {
  return v ? format_fixed(*v * 100, decimals) + "%" : std::string("n/a");
}

std::string opt_rate(const std::optional<double>& bytes_per_s) {
  return bytes_per_s ? format_rate(*bytes_per_s) : "n/a";
}

std::string with_commas(double value) {
  if (!std::isfinite(value)) return "n/a";
  // Beyond 10^18 llround has no long long to return (and no reader counts
  // the digits).
  if (std::fabs(value) >= 1e18) return line("%.3g", value);
  const auto v = static_cast<uint64_t>(std::llround(std::fabs(value)));
  std::string digits = std::to_string(v), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return (value < 0 ? "-" : "") + out;
}

void row(std::ostringstream& out, const std::string& label, const std::string& value,
         const std::string& note) {
  out << "  " << label;
  for (size_t i = label.size(); i < 30; ++i) out << ' ';
  out << value;
  if (!note.empty()) out << "   " << note;
  out << '\n';
}

void append_notes(std::string& out, const std::vector<std::string>& notes) {
  if (notes.empty()) return;
  out += "notes:\n";
  for (const auto& n : notes) out += "  - " + n + "\n";
}

std::string verdict_line(const Verdict& v) {
  return std::string("verdict: ") + (v.valid ? "VALID" : "INVALID") + "\n";
}

std::string verdict_text(const Verdict& v) {
  std::string out = verdict_line(v);
  for (const auto& reason : v.reasons) out += "  - " + reason + "\n";
  for (const auto& w : v.warnings) out += "  warning: " + w + "\n";
  return out;
}

std::string inputs_text(const JudgedInputs& j) {
  std::string out;
  for (const auto& in : j.inputs) {
    out += "input " + in.source + " (" + in.tool + "): " + input_status(in);
    if (in.valid && !*in.valid) {
      std::string reasons;
      for (const auto& r : in.reasons) reasons += (reasons.empty() ? "" : "; ") + r;
      out += " (" + reasons + ")";
    }
    out += "\n";
  }
  return out;
}

std::string queue_text(const DeviceInfo& d) {
  const uint32_t own = d.device_queue_depth();
  std::string out = "queue depth " + std::to_string(own);
  if (own != d.queue_depth)
    out += " (" + std::to_string(d.queue_depth) + " in flight per connection)";
  return out;
}

}  // namespace rig::report

#include "report/text_common.hpp"

#include <cmath>

#include "rig/report/document.hpp"
#include "rig/units.hpp"

namespace rig::report {

std::string percentile_ms(const std::optional<double>& value, const PercentileInterval& ci) {
  if (!value) return "n/a";
  const std::string p = "p" + format_fixed(ci.p, 0);
  if (!ci.enough() && ci.needs > 0 && ci.count >= ci.needs)
    return "not stated (n = " + std::to_string(ci.count) + ", correlated even in 8 batches of " +
           std::to_string(ci.batch_size) + ")";
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
  // Each finding with the rule that made it: the reasons, then the warnings.
  // A verdict whose findings came without rules (none in rig's own) lists
  // them bare.
  size_t from_rules = 0;
  for (const auto& r : v.rules)
    if (!r.met) from_rules += r.findings.size();
  if (from_rules != v.reasons.size() + v.warnings.size()) {
    for (const auto& reason : v.reasons) out += "  - " + reason + "\n";
    for (const auto& w : v.warnings) out += "  warning: " + w + "\n";
    return out;
  }
  for (const Severity severity : {Severity::invalidates, Severity::warns})
    for (const auto& r : v.rules) {
      if (r.met || r.severity != severity) continue;
      for (const auto& f : r.findings)
        out +=
            (severity == Severity::invalidates ? "  - " : "  warning: ") + r.rule + ": " + f + "\n";
    }
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

namespace rig {

std::string terminal_safe(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    } else if (c == 0xc2 && i + 1 < text.size() &&
               static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(text[i + 1]) <= 0x9f) {
      const auto c1 = static_cast<unsigned char>(text[++i]);
      out += "\\u00";
      out += kHex[c1 >> 4];
      out += kHex[c1 & 0xf];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

}  // namespace rig

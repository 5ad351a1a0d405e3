#include "rig/units.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

namespace rig {
namespace {

// 'text' (built by appending: GCC 12 warns falsely on "'" + std::string).
std::string quoted(std::string_view text) {
  std::string q;
  q.reserve(text.size() + 2);
  q += '\'';
  q.append(text);
  q += '\'';
  return q;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Splits "2.27ms" into 2.27 and "ms".
Result<std::pair<double, std::string_view>> split_number(std::string_view text,
                                                         std::string_view what) {
  text = trim(text);
  size_t i = 0;
  while (i < text.size() &&
         (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.' || text[i] == 'e' ||
          text[i] == 'E' || text[i] == '+' || text[i] == '-')) {
    // an 'e' followed by a letter is a unit, not an exponent
    if ((text[i] == 'e' || text[i] == 'E') &&
        (i + 1 >= text.size() || !(std::isdigit(static_cast<unsigned char>(text[i + 1])) ||
                                   text[i + 1] == '-' || text[i + 1] == '+')))
      break;
    ++i;
  }
  double value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + i, value);
  if (i == 0 || ec != std::errc() || ptr != text.data() + i || !std::isfinite(value))
    return fail(ErrorCode::invalid_argument,
                std::string(what) + ": '" + std::string(text) + "' is not a number with a unit");
  return std::pair{value, trim(text.substr(i))};
}

Result<double> size_multiplier(std::string_view unit) {
  static const std::pair<std::string_view, double> table[] = {
      {"B", 1},    {"", 1},      {"kB", 1e3},     {"KB", 1e3},        {"MB", 1e6},
      {"GB", 1e9}, {"TB", 1e12}, {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0},
      {"k", 1e3},  {"K", 1e3},   {"M", 1e6},      {"G", 1e9},
  };
  for (const auto& [name, mult] : table)
    if (unit == name) return mult;
  // "Gb" (bits, as link speeds are sold) for "GB": say what rig reads.
  std::string hint;
  if (unit.size() >= 2 && unit.back() == 'b') {
    std::string bytes(unit);
    bytes.back() = 'B';
    for (const auto& [name, mult] : table)
      if (bytes == name)
        hint = "; sizes are bytes: '" + bytes + "' (a link of N " + std::string(unit) +
               "/s moves N/8 " + bytes + "/s)";
  }
  return fail(ErrorCode::invalid_argument, "unknown size unit '" + std::string(unit) +
                                               "' (use B, kB, MB, GB, KiB, MiB, GiB)" + hint);
}

}  // namespace

Result<Nanos> parse_duration(std::string_view text) {
  auto parts = split_number(text, "duration");
  if (!parts) return tl::unexpected(parts.error());
  auto [value, unit] = *parts;
  double ns_per = 0;
  if (unit == "ns")
    ns_per = 1;
  else if (unit == "us")
    ns_per = 1e3;
  else if (unit == "ms")
    ns_per = 1e6;
  else if (unit == "s")
    ns_per = 1e9;
  else if (unit == "m" || unit == "min")
    ns_per = 60e9;
  else if (unit == "h")
    ns_per = 3600e9;
  else if (unit.empty())
    return fail(ErrorCode::invalid_argument,
                "duration '" + std::string(trim(text)) + "' needs a unit (ns, us, ms, s, m, h)");
  else
    return fail(ErrorCode::invalid_argument, "unknown duration unit '" + std::string(unit) +
                                                 "' in '" + std::string(trim(text)) + "'");
  const double ns = value * ns_per;
  if (!(std::fabs(ns) <= static_cast<double>(kMaxDuration.count())))
    return fail(ErrorCode::invalid_argument, "duration '" + std::string(trim(text)) +
                                                 "' is out of range (at most 1e6 s, 277.8 h)");
  return Nanos(static_cast<int64_t>(std::llround(ns)));
}

Result<double> parse_bytes(std::string_view text) {
  auto parts = split_number(text, "size");
  if (!parts) return tl::unexpected(parts.error());
  auto mult = size_multiplier(parts->second);
  if (!mult) return tl::unexpected(mult.error());
  const double bytes = parts->first * *mult;
  if (!(std::fabs(bytes) <= kMaxBytes))
    return fail(ErrorCode::invalid_argument,
                "size '" + std::string(trim(text)) + "' is out of range (at most 1e18 bytes)");
  return bytes;
}

Result<double> parse_bandwidth(std::string_view text) {
  std::string_view t = trim(text);
  if (t.size() >= 2 && t.substr(t.size() - 2) == "/s")
    t.remove_suffix(2);
  else if (t.size() >= 2 && t.substr(t.size() - 2) == "ps")
    t.remove_suffix(2);
  else
    return fail(ErrorCode::invalid_argument, "bandwidth '" + std::string(trim(text)) +
                                                 "' needs a unit per second, e.g. 290MB/s");
  return parse_bytes(t);
}

Result<double> parse_number(std::string_view text) {
  auto parts = split_number(text, "number");
  if (!parts) return tl::unexpected(parts.error());
  if (!parts->second.empty())
    return fail(ErrorCode::invalid_argument, quoted(trim(text)) + " is not a number");
  return parts->first;
}

Result<double> parse_frame_rate(std::string_view text) {
  auto parts = split_number(text, "frame rate");
  if (!parts) return tl::unexpected(parts.error());
  const std::string unit(trim(parts->second));
  if (unit.empty())  // as a duration needs its unit
    return fail(ErrorCode::invalid_argument, "frame rate " + quoted(trim(text)) +
                                                 " needs a unit: e.g. " + std::string(trim(text)) +
                                                 "/s (or fps, Hz)");
  if (unit != "/s" && unit != "fps" && unit != "Hz" && unit != "hz")
    return fail(ErrorCode::invalid_argument,
                quoted(trim(text)) + " is not a frame rate (e.g. 30/s, 30fps, 30Hz)");
  if (!(parts->first > 0))
    return fail(ErrorCode::invalid_argument,
                "frame rate " + quoted(trim(text)) + " must be positive");
  // Its period must be a duration (at most kMaxDuration) and at least 1 ns.
  if (parts->first < 1e-6 || parts->first > 1e9)
    return fail(ErrorCode::invalid_argument,
                "frame rate " + quoted(trim(text)) + " is out of range (1e-6/s to 1e9/s)");
  return parts->first;
}

Result<uint64_t> parse_count(std::string_view text) {
  text = trim(text);
  uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size())
    return fail(ErrorCode::invalid_argument, quoted(text) + " is not a non-negative integer");
  return v;
}

Result<Spec> parse_spec(std::string_view text) {
  Spec spec;
  text = trim(text);
  const auto colon = text.find(':');
  spec.kind = std::string(trim(text.substr(0, colon)));
  if (spec.kind.empty()) return fail(ErrorCode::invalid_argument, "empty device spec");
  if (colon == std::string_view::npos) return spec;
  std::string_view rest = text.substr(colon + 1);
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    std::string_view item = trim(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    if (item.empty()) continue;
    const auto eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0 || eq + 1 == item.size())
      return fail(ErrorCode::invalid_argument, "device spec '" + std::string(text) +
                                                   "': expected key=value, got '" +
                                                   std::string(item) + "'");
    std::string key(trim(item.substr(0, eq)));
    if (!spec.params.emplace(key, std::string(trim(item.substr(eq + 1)))).second)
      return fail(ErrorCode::invalid_argument,
                  "device spec '" + std::string(text) + "': parameter '" + key + "' given twice");
  }
  return spec;
}

std::string format_fixed(double value, int decimals) {
  if (!std::isfinite(value)) return "n/a";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
  return buf;
}

namespace {
int decimals_for(double v) {
  const double a = std::fabs(v);
  return a >= 100 ? 1 : a >= 10 ? 2 : 3;
}
}  // namespace

std::string format_ms(double ms) {
  if (!std::isfinite(ms)) return "n/a";
  if (std::fabs(ms) >= 1000) return format_fixed(ms / 1000, decimals_for(ms / 1000)) + " s";
  if (std::fabs(ms) < 1 && ms != 0) return format_fixed(ms * 1000, decimals_for(ms * 1000)) + " us";
  return format_fixed(ms, decimals_for(ms)) + " ms";
}

std::string format_duration(Nanos d) {
  return format_ms(to_ms(d));
}

std::string format_bytes(double bytes) {
  if (!std::isfinite(bytes)) return "n/a";
  if (bytes >= 1e9) return format_fixed(bytes / 1e9, decimals_for(bytes / 1e9)) + " GB";
  if (bytes >= 1e6) return format_fixed(bytes / 1e6, decimals_for(bytes / 1e6)) + " MB";
  if (bytes >= 1e4) return format_fixed(bytes / 1e3, decimals_for(bytes / 1e3)) + " kB";
  return format_fixed(bytes, 0) + " B";
}

std::string format_rate(double bytes_per_second) {
  if (!std::isfinite(bytes_per_second)) return "n/a";
  return format_fixed(bytes_per_second / 1e6, decimals_for(bytes_per_second / 1e6)) + " MB/s";
}

}  // namespace rig

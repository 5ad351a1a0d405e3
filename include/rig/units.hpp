// Parsing and formatting of the quantities users type and read.
// Sizes: MB = 10^6 bytes, MiB = 2^20 bytes (k/K = 10^3, KiB = 2^10, ...).
// Durations: ns, us, ms, s, m (minutes), h; a bare number is rejected.
// Bandwidth: a size per second, "290MB/s", "1.2GB/s", "100MiB/s".
// Ranges where the arithmetic on them holds: a duration's magnitude is at
// most kMaxDuration (1e6 s, about 11.6 days), so sums and products of
// thousands of them stay inside int64 nanoseconds; a size or bandwidth is at
// most kMaxBytes (1e18 bytes), so it converts to uint64 and its double stays
// exact to the byte where it matters. Beyond them parsing refuses, naming the
// bound.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "rig/clock.hpp"
#include "rig/error.hpp"

namespace rig {

inline constexpr Nanos kMaxDuration{1'000'000'000'000'000};  // 1e6 s
inline constexpr double kMaxBytes = 1e18;

Result<Nanos> parse_duration(std::string_view text);
Result<double> parse_bytes(std::string_view text);      // returns bytes
Result<double> parse_bandwidth(std::string_view text);  // returns bytes per second
Result<double> parse_number(std::string_view text);     // plain finite number
Result<uint64_t> parse_count(std::string_view text);    // non-negative integer
// A frame rate: "30/s", "30fps", "30Hz" or a bare number, per second; > 0.
Result<double> parse_frame_rate(std::string_view text);

// A device spec "kind:key=value,key=value" split into kind and parameters.
// Keys are unique; an empty value or a duplicate key is an error.
struct Spec {
  std::string kind;
  std::map<std::string, std::string> params;
};
Result<Spec> parse_spec(std::string_view text);

// Human-readable formatting with units, e.g. "2.27 ms", "290.0 MB/s", "1.05 MB".
std::string format_duration(Nanos d);
std::string format_ms(double ms);
std::string format_bytes(double bytes);
std::string format_rate(double bytes_per_second);
std::string format_fixed(double value, int decimals);

}  // namespace rig

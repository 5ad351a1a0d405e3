// The monitor's own helpers: checked reads of /proc and /sys files, and the
// constructors of its standard sources. Private to src/monitor.
#pragma once

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rig/monitor/monitor.hpp"

namespace rig::monitor {

struct Read {
  bool ok = false;
  std::string text;
  std::string error;  // "no PATH", "permission denied reading PATH", ...
};
Read read_text(const std::string& path);

struct Value {
  std::optional<double> value;
  std::string error;  // when no value: why
};
// One number (surrounding blanks allowed); garbage is an error naming the file.
Value read_number(const std::string& path);
std::optional<double> parse_number_text(std::string_view text);

// Entries of a folder whose names start with `prefix`, in natural order
// (cpu2 before cpu10); empty when the folder is missing.
std::vector<std::string> list_dir(const std::string& path, std::string_view prefix);
bool dir_exists(const std::string& path);

// Every /proc and /sys source, then NVML, the device's sensors and the link.
std::vector<std::unique_ptr<MonitorSource>> host_sources(const MonitorSettings& settings,
                                                         Device* device);
// NVML through dlopen(library); unavailable with dlopen's reason when absent.
std::unique_ptr<MonitorSource> nvml_source(const std::string& library);

}  // namespace rig::monitor

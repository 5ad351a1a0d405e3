#include "devices/hailo/hailo_log.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>

namespace rig::hailo {
namespace {

// "[...] " groups at the start of `line`; false when a group is not closed.
bool take_group(std::string_view& line, std::string_view& group) {
  if (line.empty() || line.front() != '[') return false;
  const auto close = line.find(']');
  if (close == std::string_view::npos) return false;
  group = line.substr(1, close - 1);
  line.remove_prefix(close + 1);
  if (!line.empty() && line.front() == ' ') line.remove_prefix(1);
  return true;
}

bool is_level(std::string_view s) {
  return s == "trace" || s == "debug" || s == "info" || s == "warning" || s == "error" ||
         s == "critical";
}

// A record header: groups up to "[HailoRT] [level]"; the message follows,
// after the [file:line] [function] groups of the file pattern when present.
bool parse_header(std::string_view line, LogRecord& out) {
  if (line.empty() || line.front() != '[') return false;
  std::string_view group;
  bool named = false;
  for (int i = 0; i < 4 && take_group(line, group); ++i) {
    if (named) {
      if (!is_level(group)) return false;
      out.level = std::string(group);
      // [file:line] and [function] in the file pattern; not in the console's.
      std::string_view rest = line, g2;
      if (take_group(rest, g2) && g2.find(':') != std::string_view::npos) {
        line = rest;
        std::string_view function_rest = line, g3;
        if (take_group(function_rest, g3)) line = function_rest;
      }
      out.message = std::string(line);
      return true;
    }
    named = group == "HailoRT";
  }
  return false;
}

}  // namespace

std::vector<LogRecord> parse_log(std::string_view text) {
  std::vector<LogRecord> records;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    LogRecord r;
    if (parse_header(line, r)) {
      records.push_back(std::move(r));
    } else if (!records.empty() && !line.empty()) {
      records.back().message += " ";
      records.back().message += line;
    }
  }
  return records;
}

std::string ensure_log_folder() {
  static std::once_flag once;
  static std::string folder;
  std::call_once(once, [] {
    const char* env = std::getenv("HAILORT_LOGGER_PATH");
    if (env != nullptr && *env != '\0') {
      folder = std::string(env) == "NONE" ? "" : env;
      return;
    }
    if (env != nullptr) {  // set but empty: HailoRT logs to the working directory
      folder = ".";
      return;
    }
    std::error_code ec;
    const auto dir = std::filesystem::temp_directory_path(ec) /
                     ("rig-hailort-" + std::to_string(static_cast<long>(::getpid())));
    std::filesystem::create_directories(dir, ec);
    folder = dir.string();
    ::setenv("HAILORT_LOGGER_PATH", folder.c_str(), 0);
  });
  return folder;
}

LogTail::LogTail(std::string path) : path_(std::move(path)) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path_, ec);
  offset_ = ec ? 0 : size;
}

std::vector<LogRecord> LogTail::read_new() {
  if (path_.empty()) return {};
  std::error_code ec;
  const auto size = std::filesystem::file_size(path_, ec);
  if (ec) return {};
  if (size < offset_) offset_ = 0;  // rotated
  if (size == offset_) return {};
  std::ifstream in(path_, std::ios::binary);
  if (!in) return {};
  in.seekg(static_cast<std::streamoff>(offset_));
  std::string text(size - offset_, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  const auto last_nl = text.rfind('\n');
  if (last_nl == std::string::npos) return {};
  text.resize(last_nl + 1);
  offset_ += text.size();
  return parse_log(text);
}

std::vector<std::string> warning_lines(const std::vector<LogRecord>& records) {
  std::vector<std::string> out;
  for (const auto& r : records)
    if (r.level == "warning" || r.level == "error" || r.level == "critical")
      out.push_back("HailoRT " + r.level + ": " + r.message);
  return out;
}

}  // namespace rig::hailo

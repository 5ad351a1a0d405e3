#include "devices/hailo/hailo_log.hpp"

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

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

int64_t parse_pid(std::string_view s) {
  if (s.empty() || s.size() > 10) return -1;
  int64_t n = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return -1;
    n = n * 10 + (c - '0');
  }
  return n;
}

// A record header: up to three groups, "[HailoRT] [level]", then the
// message, after the [file:line] [function] groups when present. Three
// groups before the name are the main file's [time] [pid] [tid]; two the
// local file's [time] [tid]; none the release console's.
bool parse_header(std::string_view line, LogRecord& out) {
  if (line.empty() || line.front() != '[') return false;
  std::string_view group;
  std::string_view before[3];
  size_t n = 0;
  bool named = false;
  while (take_group(line, group)) {
    if (group == "HailoRT") {
      named = true;
      break;
    }
    if (n == 3) return false;
    before[n++] = group;
  }
  if (!named || !take_group(line, group) || !is_level(group)) return false;
  out.level = std::string(group);
  out.pid = n == 3 ? parse_pid(before[1]) : -1;
  std::string_view rest = line, g2;
  if (take_group(rest, g2) && g2.find(':') != std::string_view::npos) {
    line = rest;
    std::string_view function_rest = line, g3;
    if (take_group(function_rest, g3)) line = function_rest;
  }
  out.message = std::string(line);
  return true;
}

bool writable_folder(const std::filesystem::path& dir) {
  std::error_code ec;
  return std::filesystem::is_directory(dir, ec) && ::access(dir.c_str(), W_OK) == 0;
}

// HailoRT's own "the wait expired" lines (AsyncInferJob::wait on H10 and
// elsewhere, 5.1.1 and 5.2.0).
bool is_wait_expiry(const LogRecord& r) {
  return r.message == "CHECK_SUCCESS failed with status=HAILO_TIMEOUT(4)" ||
         r.message.rfind("Waiting for async job to finish has failed with timeout", 0) == 0;
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

LogSink locate_log() {
  LogSink sink;
  const char* env = std::getenv("HAILORT_LOGGER_PATH");
  const std::string local = (env == nullptr || *env == '\0') ? "." : env;
  if (local == "NONE") {
    sink.unavailable = "HAILORT_LOGGER_PATH=NONE turns HailoRT's log off";
    return sink;
  }
  std::string home;
  if (const char* h = std::getenv("HOME")) {
    home = h;
  } else if (const passwd* pw = ::getpwuid(::getuid()); pw != nullptr && pw->pw_dir != nullptr) {
    home = pw->pw_dir;
  }
  const auto main_dir = std::filesystem::path(home) / ".hailo" / "hailort";
  if (!home.empty() && writable_folder(main_dir)) {
    sink.path = (main_dir / "hailort.log").string();
    sink.shared = true;
    return sink;
  }
  std::error_code ec;
  const auto local_dir = std::filesystem::absolute(local, ec);
  if (!ec && writable_folder(local_dir)) {
    sink.path = (local_dir / "hailort.log").string();
    return sink;
  }
  sink.unavailable = "HailoRT can write neither " + main_dir.string() + " nor " + local;
  return sink;
}

LogTail::LogTail(std::string path, int64_t pid) : path_(std::move(path)), pid_(pid) {
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
  auto records = parse_log(text);
  if (pid_ >= 0)
    records.erase(std::remove_if(records.begin(), records.end(),
                                 [this](const LogRecord& r) { return r.pid != pid_; }),
                  records.end());
  return records;
}

std::vector<std::string> warning_lines(const std::vector<LogRecord>& records) {
  std::vector<std::string> out;
  for (const auto& r : records)
    if ((r.level == "warning" || r.level == "error" || r.level == "critical") && !is_wait_expiry(r))
      out.push_back("HailoRT " + r.level + ": " + r.message);
  return out;
}

}  // namespace rig::hailo

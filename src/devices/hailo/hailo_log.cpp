#include "devices/hailo/hailo_log.hpp"

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>

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
    out.location = std::string(g2);
    std::string_view function_rest = line, g3;
    if (take_group(function_rest, g3)) {
      line = function_rest;
      out.function = std::string(g3);
    }
  }
  out.message = std::string(line);
  return true;
}

// HailoRT's own "the wait expired" lines (AsyncInferJob::wait on H10 and
// elsewhere, 5.1.1 and 5.2.0); see warning_lines in the header.
bool is_wait_expiry(const LogRecord& r) {
  if (r.message == "CHECK_SUCCESS failed with status=HAILO_TIMEOUT(4)")
    return r.location.empty() ||
           (r.location.rfind("configured_infer_model_hrpc_client.cpp:", 0) == 0 &&
            r.function == "wait");
  return r.message.rfind("CHECK failed - Waiting for async job to finish has failed with timeout",
                         0) == 0;
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

namespace {

// Why HailoRT's rotating sink for `dir`/hailort.log is a null sink, as
// create_file_sink decides it (utils/hailort_logger.cpp, 5.1.1 and 5.2.0):
// a folder that is not there or not writable, or an existing file this user
// cannot write (access(W_OK): root passes it). "" when HailoRT would write it.
std::string null_sink_reason(const std::filesystem::path& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return dir.string() + " is not a folder";
  if (::access(dir.c_str(), W_OK) != 0) return "this user cannot write the folder " + dir.string();
  const auto file = dir / "hailort.log";
  if (std::filesystem::exists(file, ec) && ::access(file.c_str(), W_OK) != 0)
    return file.string() + " exists and this user cannot write it";
  return "";
}

// The paths of the regular files this process holds open (/proc/self/fd);
// nullopt where /proc cannot be read.
std::optional<std::vector<std::filesystem::path>> open_files() {
  std::error_code ec;
  std::filesystem::directory_iterator it("/proc/self/fd", ec);
  if (ec) return std::nullopt;
  std::vector<std::filesystem::path> out;
  for (const auto& entry : it) {
    std::error_code link_ec;
    const auto target = std::filesystem::read_symlink(entry.path(), link_ec);
    if (!link_ec && target.is_absolute()) out.push_back(target);
  }
  return out;
}

bool holds(const std::vector<std::filesystem::path>& open, const std::filesystem::path& file) {
  std::error_code ec;
  const auto wanted = std::filesystem::weakly_canonical(file, ec);
  if (ec) return false;
  return std::find(open.begin(), open.end(), wanted) != open.end();
}

}  // namespace

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
  std::error_code ec;
  const auto local_dir = std::filesystem::absolute(local, ec).lexically_normal();
  // HailoRT opened its sinks before main and holds them open: the file it
  // really writes is among this process's open files. Where /proc cannot be
  // read, HailoRT's own rules say which sink it made.
  const auto open = open_files();
  const std::string main_why = home.empty() ? "HOME is not set" : null_sink_reason(main_dir);
  const std::string local_why =
      ec ? "the folder " + local + " cannot be resolved" : null_sink_reason(local_dir);
  const bool main_open = open ? holds(*open, main_dir / "hailort.log") : main_why.empty();
  const bool local_open = open ? !ec && holds(*open, local_dir / "hailort.log") : local_why.empty();
  if (main_open) {
    sink.path = (main_dir / "hailort.log").string();
    sink.shared = true;
    return sink;
  }
  if (local_open) {
    sink.path = (local_dir / "hailort.log").string();
    sink.note = main_why.empty()
                    ? (main_dir / "hailort.log").string() + " is not a file this process writes"
                    : "HailoRT writes no main log file: " + main_why;
    return sink;
  }
  sink.unavailable =
      "HailoRT writes neither log file (" +
      (main_why.empty() ? (main_dir / "hailort.log").string() + " is not open" : main_why) + "; " +
      (local_why.empty() ? (local_dir / "hailort.log").string() + " is not open" : local_why) + ")";
  return sink;
}

LogTail::LogTail(std::string path, int64_t pid) : path_(std::move(path)), pid_(pid) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path_, ec);
  offset_ = ec ? 0 : size;
}

namespace {

// The bytes of `path` from `from` up to its last complete line; `from`
// moves past them. "" when there is nothing new or the file cannot be read.
std::string complete_lines(const std::filesystem::path& path, uint64_t& from) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec || size <= from) return "";
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  in.seekg(static_cast<std::streamoff>(from));
  std::string text(size - from, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  const auto last_nl = text.rfind('\n');
  if (last_nl == std::string::npos) return "";
  text.resize(last_nl + 1);
  from += text.size();
  return text;
}

}  // namespace

std::vector<LogRecord> LogTail::read_new() {
  if (path_.empty()) return {};
  std::error_code ec;
  const auto size = std::filesystem::file_size(path_, ec);
  if (ec) return {};
  std::string text;
  if (size < offset_) {
    // Rotated at 1 MB: spdlog's rotating sink (HailoRT keeps one spare,
    // utils/hailort_logger.cpp) renamed the file to hailort.1.log, where the
    // records after the last read now end.
    auto spare = std::filesystem::path(path_);
    spare.replace_extension(".1" + spare.extension().string());
    uint64_t at = offset_;
    text = complete_lines(spare, at);
    offset_ = 0;
  }
  text += complete_lines(path_, offset_);
  if (text.empty()) return {};
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

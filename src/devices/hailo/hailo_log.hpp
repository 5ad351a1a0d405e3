// HailoRT's log, read for its warnings. HailoRT reads HAILORT_LOGGER_PATH once,
// when its logger is created by the process's first HailoRT call, and appends
// records to $HAILORT_LOGGER_PATH/hailort.log in the pattern
//   [date time] [tid] [HailoRT] [level] [file:line] [function] message
// (a message may continue on following lines). rig reads the records appended
// since it last looked, by file offset. No HailoRT dependency: this part is
// tested and fuzzed on any machine.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace rig::hailo {

struct LogRecord {
  std::string level;    // "warning", "error", "critical", "info", ...
  std::string message;  // continuation lines joined with a space
};

// Parses whole records from `text` (untrusted bytes: any input is safe).
// Lines before the first record header are ignored.
std::vector<LogRecord> parse_log(std::string_view text);

// The folder HailoRT will log to. When HAILORT_LOGGER_PATH is unset (and
// HailoRT has not started yet) it sets it to a per-process folder under the
// temporary directory, so the log is rig's to read; a value the user set is
// kept. "" when the user turned the log off (NONE). Call before the first
// HailoRT call of the process; later calls return the same folder.
std::string ensure_log_folder();

// Reads the records appended to one log file since the last read.
class LogTail {
 public:
  LogTail() = default;
  // Starts at the file's current end (or 0 when it does not exist yet).
  explicit LogTail(std::string path);
  const std::string& path() const { return path_; }
  // Complete records appended since the last call (a partly written last
  // line waits for the next call). A file that shrank (HailoRT rotates it at
  // 1 MB) is read from its start.
  std::vector<LogRecord> read_new();

 private:
  std::string path_;
  uint64_t offset_ = 0;
};

// "HailoRT warning: <message>" for warning, error and critical records;
// nothing for the others.
std::vector<std::string> warning_lines(const std::vector<LogRecord>& records);

}  // namespace rig::hailo

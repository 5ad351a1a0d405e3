// HailoRT's log, read for its warnings. HailoRT creates its logger before
// main, in a static initializer of libhailort (hailort.cpp's
// COMPAT__INITIALIZER; utils/hailort_logger.cpp, 5.1.1 and 5.2.0), reading
// the environment then, once. It writes two files, both rotated at 1 MB:
//  * the main file $HOME/.hailo/hailort/hailort.log, shared by every process
//    of the user:  [date time] [pid] [tid] [HailoRT] [level] [file:line] [function] message
//  * the local file $HAILORT_LOGGER_PATH/hailort.log (unset or empty: the
//    working directory):  [date time] [tid] [HailoRT] [level] [file:line] [function] message
// A rotated file (at 1 MB) becomes hailort.1.log: LogTail reads the end of
// that spare before the new file.
// HAILORT_LOGGER_PATH=NONE turns both off. Warnings and above are flushed at
// once. A message may continue on following lines. rig reads the records
// appended since it last looked, by file offset. No HailoRT dependency: this
// part is tested and fuzzed on any machine.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace rig::hailo {

struct LogRecord {
  std::string level;     // "warning", "error", "critical", "info", ...
  std::string message;   // continuation lines joined with a space
  int64_t pid = -1;      // the main file's [pid] group; -1: the record has none
  std::string location;  // the [file:line] group ("infer_model.cpp:1147"); "": none
  std::string function;  // the [function] group after it ("wait"); "": none
};

// Parses whole records from `text` (untrusted bytes: any input is safe).
// Lines before the first record header are ignored.
std::vector<LogRecord> parse_log(std::string_view text);

// The file rig reads HailoRT's records from: one HailoRT really writes. Its
// sinks were made before main from the environment (which rig leaves alone),
// and a sink HailoRT could not open is a null sink that drops every record
// silently (create_file_sink: a folder it cannot write, or an existing
// hailort.log this user cannot write — root passes that check). So rig looks
// among this process's open files (/proc/self/fd) for the main file (records
// filtered by this process's PID), else the local one; where /proc cannot be
// read it applies HailoRT's rules. None when HAILORT_LOGGER_PATH=NONE or
// HailoRT writes neither, with why.
struct LogSink {
  std::string path;         // "" when there is none
  bool shared = false;      // the main file: keep only records with pid
  std::string unavailable;  // why there is none
  std::string note;         // why the main file is not the one (the local is read)
};
LogSink locate_log();

// Reads the records appended to one log file since the last read.
class LogTail {
 public:
  LogTail() = default;
  // Starts at the file's current end (or 0 when it does not exist yet).
  // pid >= 0: only records carrying that pid are returned.
  explicit LogTail(std::string path, int64_t pid = -1);
  const std::string& path() const { return path_; }
  // Complete records appended since the last call (a partly written last
  // line waits for the next call). A file that shrank (HailoRT rotates it at
  // 1 MB) is read from its start.
  std::vector<LogRecord> read_new();

 private:
  std::string path_;
  uint64_t offset_ = 0;
  int64_t pid_ = -1;
};

// "HailoRT warning: <message>" for warning, error and critical records;
// nothing for the others, nor for the error HailoRT logs whenever an
// AsyncInferJob::wait times out (a wait's expiry, not the device's state):
// on H10 "CHECK_SUCCESS failed with status=HAILO_TIMEOUT(4)" from
// AsyncInferJobHrpcClient::wait (configured_infer_model_hrpc_client.cpp),
// elsewhere "CHECK failed - Waiting for async job to finish has failed with
// timeout (Nms)" (infer_model.cpp, AsyncInferJobImpl::wait; 5.1.1, 5.2.0).
// The H10 text is word for word the one an hRPC call whose reply was lost
// logs (its caller's TRY on hrpc/client.cpp's HAILO_TIMEOUT), so the record's
// [file:line] [function] tells them apart; a record without them (the
// console's format) is taken for a wait's expiry.
std::vector<std::string> warning_lines(const std::vector<LogRecord>& records);

}  // namespace rig::hailo

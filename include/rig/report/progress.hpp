// The live progress line of a long measurement, on a terminal:
//   "rig bench  run 2/3  measure  4.0 s / 10 s  441.2 /s"
// redrawn a few times a second in place ("\r", erase to the end of the line)
// and erased when the work ends.
//
// The engine publishes through the EngineObserver calls, which only store
// atomics (phase, run, the device-clock times of the phase start and the last
// window, the last window's rate) at phase and window boundaries; completions
// and submissions cost a virtual call that does nothing. A drawing thread
// owned by ProgressLine reads them and writes the line, so no formatting or
// I/O happens on the engine's thread. Data-race free: the engine's thread
// only writes atomics, the drawing thread only reads them.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include "rig/engine.hpp"

namespace rig {

struct ProgressPlan {
  std::string scenario;   // "rig bench"
  uint32_t runs = 0;      // pipelined runs planned (0: unknown, shown as "run N")
  Nanos run_duration{0};  // measured time per run (0: unknown)
};

class ProgressLine final : public EngineObserver {
 public:
  // Draws on `fd` every `interval` from its own thread until stop().
  ProgressLine(ProgressPlan plan, int fd,
               std::chrono::milliseconds interval = std::chrono::milliseconds(250));
  ~ProgressLine() override;  // stop()
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // Whether a progress line belongs on `fd`: a terminal, not --quiet, and
  // the result is not going to stdout (`--json -`).
  static bool wanted(int fd, bool quiet, bool json_to_stdout);

  // Stops the drawing thread and erases the line (idempotent).
  void stop();

  // The line as it would be drawn now (no escape codes).
  std::string text() const;

  void phase_begin(EnginePhase phase, Nanos at) override;
  void window_closed(const WindowFigure& window, Nanos at) override;

 private:
  void draw_loop();

  ProgressPlan plan_;
  int fd_;
  std::chrono::milliseconds interval_;
  std::atomic<int> phase_{-1};
  std::atomic<uint32_t> run_{0};
  std::atomic<int64_t> phase_start_ns_{0};
  std::atomic<int64_t> last_ns_{0};
  std::atomic<double> rate_{-1};
  std::atomic<uint64_t> changes_{0};
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;  // guarded by mutex_
  bool drawn_ = false;     // the drawing thread's only
  std::thread thread_;
};

}  // namespace rig

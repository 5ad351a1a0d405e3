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
  // The whole command's planned wall time after its cold start, at most
  // (WallPlan::upper; 0: unknown): the line then shows the time since the
  // first phase began against it.
  Nanos planned_upper{0};
};

// The wall time a measuring command plans, from its settings alone, before
// it starts. Every part is bounded by a setting except the cold start (load,
// compile, first inference), which rig cannot know in advance; the measured
// part of a repeat is at least its duration and, while the adaptive stop is
// unmet, extends to duration x max_duration_factor.
struct WallPlan {
  Nanos lone_max{0};  // lone frames, at most (--latency-duration); 0: none
  uint32_t repeats = 0;
  Nanos warmup_max{0};                   // per repeat, at most (--warmup-max)
  Nanos measure_min{0}, measure_max{0};  // per repeat: --duration, and its cap
  Nanos upper() const;                   // lone_max + repeats x (warm-up + measure_max)
  Nanos lower() const;                   // repeats x measure_min
};

// The start line's account of a plan: "at most 45 s after the cold start
// (lone frames <= 15.00 s; 2 repeats x (warm-up <= 5.000 s + 1.000 s
// measured, extended to <= 10.00 s until stable)); at least 2.0 s".
std::string wall_plan_text(const WallPlan& plan);

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
  std::atomic<int64_t> first_ns_{-1};  // the first phase's start: the command's
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

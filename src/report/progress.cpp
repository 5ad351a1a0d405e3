#include "rig/report/progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>

#include "rig/units.hpp"

namespace rig {
namespace {

void write_all(int fd, const std::string& s) {
  size_t done = 0;
  while (done < s.size()) {
    const ssize_t n = ::write(fd, s.data() + done, s.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // a progress line is not worth failing over
    done += static_cast<size_t>(n);
  }
}

std::string seconds_text(int64_t ns) {
  char buf[32];
  const double s = static_cast<double>(ns) / 1e9;
  std::snprintf(buf, sizeof buf, s < 10 ? "%.1f s" : "%.0f s", s);
  return buf;
}

}  // namespace

ProgressLine::ProgressLine(ProgressPlan plan, int fd, std::chrono::milliseconds interval)
    : plan_(std::move(plan)), fd_(fd), interval_(interval) {
  thread_ = std::thread([this] { draw_loop(); });
}

ProgressLine::~ProgressLine() {
  stop();
}

bool ProgressLine::wanted(int fd, bool quiet, bool json_to_stdout) {
  return !quiet && !json_to_stdout && ::isatty(fd) == 1;
}

void ProgressLine::stop() {
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

Nanos WallPlan::upper() const {
  return lone_max + static_cast<int64_t>(repeats) * (warmup_max + measure_max);
}

Nanos WallPlan::lower() const {
  return static_cast<int64_t>(repeats) * measure_min;
}

std::string wall_plan_text(const WallPlan& p) {
  std::string out = "at most " + seconds_text(p.upper().count()) + " after the cold start (";
  if (p.lone_max > Nanos(0)) out += "lone frames <= " + format_duration(p.lone_max) + "; ";
  out += std::to_string(p.repeats) + (p.repeats == 1 ? " repeat" : " repeats") +
         " x (warm-up <= " + format_duration(p.warmup_max) + " + " +
         format_duration(p.measure_min) + " measured";
  if (p.measure_max > p.measure_min)
    out += ", extended to <= " + format_duration(p.measure_max) + " until stable";
  out += ")); at least " + seconds_text(p.lower().count());
  return out;
}

void ProgressLine::phase_begin(EnginePhase phase, Nanos at) {
  // The plan bounds what follows the cold start (its load, allocation and
  // first inference cannot be known beforehand), so the count starts with
  // the first phase after it, as the plan does.
  if (phase != EnginePhase::load && phase != EnginePhase::allocate &&
      phase != EnginePhase::first_inference) {
    int64_t unset = -1;
    first_ns_.compare_exchange_strong(unset, at.count(), std::memory_order_relaxed);
  }
  if (phase == EnginePhase::warmup) {
    run_.fetch_add(1, std::memory_order_relaxed);
    rate_.store(-1, std::memory_order_relaxed);
  }
  phase_start_ns_.store(at.count(), std::memory_order_relaxed);
  last_ns_.store(at.count(), std::memory_order_relaxed);
  phase_.store(static_cast<int>(phase), std::memory_order_relaxed);
  changes_.fetch_add(1, std::memory_order_release);
  wake_.notify_one();  // a new phase is drawn at once
}

void ProgressLine::window_closed(const WindowFigure& window, Nanos at) {
  rate_.store(window.rate, std::memory_order_relaxed);
  last_ns_.store(at.count(), std::memory_order_relaxed);
  changes_.fetch_add(1, std::memory_order_release);
}

std::string ProgressLine::text() const {
  (void)changes_.load(std::memory_order_acquire);
  const int phase = phase_.load(std::memory_order_relaxed);
  std::string s = plan_.scenario;
  const uint32_t run = run_.load(std::memory_order_relaxed);
  if (run > 0) {
    s += "  run " + std::to_string(run);
    if (plan_.runs > 0) s += "/" + std::to_string(plan_.runs);
  }
  if (phase < 0) return s + "  starting";
  const auto p = static_cast<EnginePhase>(phase);
  s += "  ";
  s += to_string(p);
  if (p == EnginePhase::measure) {
    const int64_t elapsed =
        last_ns_.load(std::memory_order_relaxed) - phase_start_ns_.load(std::memory_order_relaxed);
    s += "  " + seconds_text(elapsed);
    if (plan_.run_duration > Nanos(0)) s += " / " + seconds_text(plan_.run_duration.count());
  }
  const double rate = rate_.load(std::memory_order_relaxed);
  if (rate >= 0 && (p == EnginePhase::measure || p == EnginePhase::drain))
    s += "  " + format_fixed(rate, rate >= 100 ? 1 : 2) + " /s";
  if (const int64_t first = first_ns_.load(std::memory_order_relaxed);
      plan_.planned_upper > Nanos(0) && first >= 0) {
    const int64_t last = std::max(last_ns_.load(std::memory_order_relaxed), first);
    s += "  [" + seconds_text(last - first) +
         " of <= " + seconds_text(plan_.planned_upper.count()) + " planned]";
  }
  return s;
}

void ProgressLine::draw_loop() {
  uint64_t seen = 0;
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    const uint64_t now = changes_.load(std::memory_order_acquire);
    if (now != seen) {
      seen = now;
      lock.unlock();
      write_all(fd_, "\r" + text() + "\x1b[K");
      drawn_ = true;
      lock.lock();
    }
    wake_.wait_for(lock, interval_);
  }
  lock.unlock();
  if (drawn_) write_all(fd_, "\r\x1b[K");
}

}  // namespace rig

// Time source of the measurement engine. The engine reads time only through a
// Clock so that the sim device can run a 10-minute measurement instantly on a
// virtual timeline. Thread safety: now() is safe to call from any thread.
#pragma once

#include <chrono>
#include <functional>
#include <thread>

namespace rig {

using Nanos = std::chrono::nanoseconds;

// A duration as a real number of milliseconds or seconds, for figures.
inline double to_ms(Nanos d) {
  return static_cast<double>(d.count()) / 1e6;
}
inline double to_seconds(Nanos d) {
  return static_cast<double>(d.count()) / 1e9;
}

class Clock {
 public:
  virtual ~Clock() = default;
  // Monotonic time since an arbitrary epoch.
  virtual Nanos now() const = 0;
  // True when time advances only through the device (the sim's event queue).
  virtual bool is_virtual() const = 0;
  // Waits until now() >= t (returns at once when t is not in the future).
  // A real clock sleeps; a virtual clock advances to t, letting its device
  // process the events before t first, so waiting costs no wall time. Called
  // by the thread that drives the device.
  virtual void sleep_until(Nanos t) = 0;
};

// std::chrono::steady_clock.
class SteadyClock final : public Clock {
 public:
  Nanos now() const override {
    return std::chrono::duration_cast<Nanos>(std::chrono::steady_clock::now().time_since_epoch());
  }
  bool is_virtual() const override { return false; }
  void sleep_until(Nanos t) override {
    std::this_thread::sleep_until(std::chrono::steady_clock::time_point(
        std::chrono::duration_cast<std::chrono::steady_clock::duration>(t)));
  }
};

// A clock the owner advances explicitly. Not thread-safe for concurrent
// advance(); the sim device is driven from one thread.
class VirtualClock final : public Clock {
 public:
  Nanos now() const override { return now_; }
  bool is_virtual() const override { return true; }
  // Moves time forward to `t`; earlier times are ignored (time never goes back).
  void advance_to(Nanos t) {
    if (t > now_) now_ = t;
  }
  // Runs the sleeper when one is set (the owning device processes its events
  // up to t and advances the clock), else advances to t.
  void sleep_until(Nanos t) override {
    if (sleeper_)
      sleeper_(t);
    else
      advance_to(t);
  }
  void set_sleeper(std::function<void(Nanos)> sleeper) { sleeper_ = std::move(sleeper); }

 private:
  Nanos now_{0};
  std::function<void(Nanos)> sleeper_;
};

SteadyClock& steady_clock();

}  // namespace rig

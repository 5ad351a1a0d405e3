// Time source of the measurement engine. The engine reads time only through a
// Clock so that the sim device can run a 10-minute measurement instantly on a
// virtual timeline. Thread safety: now() is safe to call from any thread.
#pragma once

#include <chrono>

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
};

// std::chrono::steady_clock.
class SteadyClock final : public Clock {
 public:
  Nanos now() const override {
    return std::chrono::duration_cast<Nanos>(std::chrono::steady_clock::now().time_since_epoch());
  }
  bool is_virtual() const override { return false; }
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

 private:
  Nanos now_{0};
};

SteadyClock& steady_clock();

}  // namespace rig

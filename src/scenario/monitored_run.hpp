// The monitor beside a scenario's run (issue 10): it watches every phase,
// window and inference next to the observer the caller attached, and its
// record joins the result. Private to the scenarios.
#pragma once

#include "rig/fanout_observer.hpp"
#include "rig/monitor/monitor.hpp"
#include "rig/scenario/settings.hpp"

namespace rig {

class MonitoredRun {
 public:
  // Starts the monitor on the device's clock. `caller` may be nullptr.
  MonitoredRun(const MonitorSettings& settings, Device& device, EngineObserver* caller)
      : monitor_(settings, device),
        fan_({&monitor_, caller}),
        observer_(settings.enabled ? fan_.get() : caller) {
    monitor_.start();
  }
  MonitoredRun(const MonitoredRun&) = delete;
  MonitoredRun& operator=(const MonitoredRun&) = delete;

  Monitor& monitor() { return monitor_; }
  // What to hand the engine: the monitor and the caller's observer.
  EngineObserver* observer() const { return observer_; }
  // `point` with observer() in place of the caller's.
  PointSettings watched(PointSettings point) const {
    point.observer = observer_;
    return point;
  }

 private:
  Monitor monitor_;
  FanOutObserver fan_;
  EngineObserver* observer_;
};

}  // namespace rig

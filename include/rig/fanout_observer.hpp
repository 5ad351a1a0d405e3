// Several EngineObservers at once (the monitor, a trace, the progress line):
// the engine takes one observer (PointSettings::observer), and this one hands
// every call on to each of its observers in the order they were added.
// Header-only. Not thread-safe (the engine calls it from its thread only);
// the observers are not owned and must outlive it. With no observers it
// costs a virtual call; use `get()`, which gives nullptr when there is none
// and the lone observer itself when there is one, to pay nothing extra.
#pragma once

#include <initializer_list>
#include <vector>

#include "rig/engine.hpp"

namespace rig {

class FanOutObserver final : public EngineObserver {
 public:
  FanOutObserver() = default;
  // The observers in order; nullptr entries are skipped.
  explicit FanOutObserver(std::initializer_list<EngineObserver*> observers) {
    for (auto* o : observers) add(o);
  }
  // nullptr is ignored, so callers can add optional observers unconditionally.
  void add(EngineObserver* observer) {
    if (observer) observers_.push_back(observer);
  }
  // What to give the engine: nullptr, the lone observer, or this fan-out.
  EngineObserver* get() {
    if (observers_.empty()) return nullptr;
    if (observers_.size() == 1) return observers_.front();
    return this;
  }
  size_t size() const { return observers_.size(); }

  void phase_begin(EnginePhase phase, Nanos at) override {
    for (auto* o : observers_) o->phase_begin(phase, at);
  }
  void phase_end(EnginePhase phase, Nanos at) override {
    for (auto* o : observers_) o->phase_end(phase, at);
  }
  void window_closed(const WindowFigure& window, Nanos at) override {
    for (auto* o : observers_) o->window_closed(window, at);
  }
  void submitted(uint32_t slot, Nanos at) override {
    for (auto* o : observers_) o->submitted(slot, at);
  }
  void completed(uint32_t slot, const Completion& completion, Nanos at) override {
    for (auto* o : observers_) o->completed(slot, completion, at);
  }

 private:
  std::vector<EngineObserver*> observers_;
};

}  // namespace rig

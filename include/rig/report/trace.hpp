// --trace FILE: the per-inference timeline of a measuring command as Chrome
// trace-event JSON (loads in Perfetto and chrome://tracing).
//
// Layout of the document written by TraceRecorder::to_json():
//   {"traceEvents": [...], "displayTimeUnit": "ms", "otherData": {...}}
//   pid 1 "rig host" (exact, host-side):
//     tid 1 "phases"    B/E spans: load, allocate, first inference, latency,
//                       warmup, measure, drain (args.run: the pipelined run)
//     tid 2 "windows"   one X span per measured window (args: inferences,
//                       rate_per_s) and a C counter "rate_per_s"
//     tid 10+k "slot k" one B at submit and one E at completion per inference
//                       on in-flight slot k (args.phase: the phase it
//                       completed in; args.error when it failed)
//   pid 2 "device (derived)": X spans transfer_in, queue_wait, compute,
//     transfer_out on tid 10+k, for the durations the device reported, laid
//     back end to end from the completion time (args.derived: true).
//   otherData: max_events, recorded_events, stopped, dropped_inferences,
//     clock ("device clock, microseconds").
// Timestamps (ts, dur) are microseconds on the device clock (the sim's is
// virtual). Inferences of different runs on one device share its clock; two
// devices (rig ab with two specs) each bring their own.
//
// Bounded: at most `max_events` events are recorded (an inference is its B,
// E and derived spans, counted together); past the cap nothing more is
// recorded, an instant event says where it stopped, otherData.stopped is
// true, and dropped_inferences counts what was left out. The E events that
// close phases still open at the stop are added beyond the cap.
//
// Cost: a callback stores one fixed-size record (no formatting until
// to_json) in chunks of 4096 records, allocated as needed and never moved.
// Thread safety: the engine's thread only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "rig/engine.hpp"

namespace rig {

struct TraceSettings {
  size_t max_events = 100000;  // events recorded at most (>= 1)
};

class TraceRecorder final : public EngineObserver {
 public:
  explicit TraceRecorder(TraceSettings settings = {});

  void phase_begin(EnginePhase phase, Nanos at) override;
  void phase_end(EnginePhase phase, Nanos at) override;
  void window_closed(const WindowFigure& window, Nanos at) override;
  void submitted(uint32_t slot, Nanos at) override;
  void completed(uint32_t slot, const Completion& completion, Nanos at) override;

  bool stopped() const { return stopped_; }
  size_t recorded_events() const { return events_; }
  uint64_t dropped_inferences() const { return dropped_inferences_; }
  uint64_t recorded_inferences() const { return inferences_; }

  // The trace-event document, serialized.
  std::string to_json() const;

 private:
  enum class Kind : uint8_t { phase_begin, phase_end, window, inference, stop };
  struct Record {
    Kind kind = Kind::inference;
    uint8_t phase = 0;          // EnginePhase
    uint8_t derived = 0;        // bit per reported device duration (in, wait, compute, out)
    uint8_t failed = 0;         // inference: an error came back
    uint32_t slot = 0;          // inference: slot; window: inferences (low 32 bits)
    int64_t begin_ns = 0;       // inference: submit; window: start; phase: at
    int64_t end_ns = 0;         // inference: completion (host); window: close
    int64_t device_end_ns = 0;  // inference: the device's completion stamp
    int64_t durations_ns[4] = {0, 0, 0, 0};  // transfer in, queue wait, compute, transfer out
    double rate = 0;                         // window: rate per second
  };
  static constexpr size_t kChunk = 4096;
  bool take(size_t events);
  void push(const Record& r);
  template <class F>
  void for_each_record(F&& f) const;

  TraceSettings settings_;
  std::vector<std::unique_ptr<Record[]>> chunks_;
  size_t records_ = 0;
  std::vector<int64_t> submitted_at_;  // per slot
  uint8_t phase_ = 0;
  uint32_t run_ = 0;
  size_t events_ = 0;
  uint64_t inferences_ = 0;
  uint64_t dropped_inferences_ = 0;
  bool stopped_ = false;
  int64_t last_ns_ = 0;
};

}  // namespace rig

// DeviceHost: the one local Device a server hosts, and the only code that
// calls it.
//
// The Device interface is single-threaded, so every call happens in the one
// thread that holds the driver role. Jobs (load, run, loop, sensors) come
// from the connections' reader threads:
//  * The device thread drives whenever there is work: it submits runs up to
//    the device's queue depth, runs loads, loops and sensor reads, and
//    collects completions.
//  * Fast path: a run on the model the device holds, or a sensor read,
//    posted while the device is idle and nobody drives, is executed by the
//    posting thread itself, which then waits one wait slice (kWaitSlice) for
//    the completion. A lone request on a fast
//    device therefore costs no thread hand-off (the 64-byte round trip stays
//    close to a raw socket ping-pong). If the completion takes longer, or
//    other jobs are waiting, the poster hands the role to the device thread
//    and goes back to reading its socket.
//  * While requests are in flight the driver waits for completions in slices
//    (kWaitSlice while the device has room for more, kFullSlice while it is
//    full or the next job must wait for the device to drain) and submits jobs
//    that arrived in between, so a new job never waits for an unrelated
//    completion. A request fails with a timeout only when nothing has
//    completed for request_timeout.
//  * A load, a loop, or a run on a model other than the one on the device
//    waits until nothing is in flight (the device holds one model; switching
//    reloads it from the bytes the server kept). Loads and loops always run
//    on the device thread, never on a reader.
//  * On a real-time clock a loop longer than loop_slice runs as consecutive
//    shorter device loops whose figures are summed (see run_loop in the .cpp
//    and docs/protocol.md), with a check between them for stop() and for a
//    requester that went away.
//
// stop() returns within one wait slice (plus the job the device is
// executing, e.g. a load); a loop, sliced or not, is cut short with
// Device::cancel() and fails with disconnected; queued jobs fail with disconnected,
// requests still on the device are abandoned and the device is destroyed
// before their buffers.
//
// Exceptions (std::bad_alloc, or a device that breaks the no-exceptions
// contract) never leave a driver: the job they came from fails with an
// internal error and the event is logged.
//
// Ownership: the host owns the Device and keeps the model entry whose buffers
// the device has bound alive until the device loads another model (the
// Device contract: bound buffers stay valid until the bindings are released).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "rig/device.hpp"
#include "server/budget.hpp"

namespace rig::server {

// One tensor buffer set for one request in flight on one model.
// Its buffers honour the device's DeviceInfo::buffer_alignment and
// buffer_padding (the model entry's copy): each allocation in `storage` is
// padded, and `inputs` / `outputs` are aligned views of the tensors' exact
// sizes (what is bound on the device and sent in replies).
struct Slot {
  std::vector<std::vector<std::byte>> storage;
  std::vector<std::span<std::byte>> inputs, outputs;
  std::vector<std::span<std::byte>> input_spans;  // of inputs: where a run's buffers are read to
  ByteHold hold;                                  // its bytes, against max_pending_bytes
  // Driver-only: the binding of these buffers on the device, valid while
  // bound_generation equals the host's generation.
  BindingId binding = 0;
  uint64_t bound_generation = 0;
  // Taken by acquire_slot() (acquire), given back by its lease (release):
  // whatever the last holder did with the buffers happens before the next.
  std::atomic<bool> busy{false};
  // Where the slot's one lease (and its shared_ptr control block) lives, so
  // that leasing a slot allocates nothing (LeaseStorage in the .cpp).
  alignas(std::max_align_t) std::byte lease_storage[96];
};

// A model a client loaded: its source (kept to reload it), what it looks
// like, and its slots. Shared by the connection's handle table, the jobs that
// use it and, while it is on the device, the host.
struct ModelEntry {
  uint32_t handle = 0;
  ModelSource source;
  ModelInfo info;
  uint32_t max_slots = 1;
  uint64_t loaded_generation = 0;  // driver-only
  // Equal ids: identical model bytes (another connection's upload of the
  // same model). The device switches between them without a reload.
  uint64_t model_id = 0;               // driver-only, set when it loads
  ByteHold source_hold;                // the kept model bytes, against max_pending_bytes
  std::shared_ptr<ByteBudget> budget;  // slots are reserved against it; may be null
  // The device's DeviceInfo::buffer_alignment and buffer_padding: every slot's
  // buffers follow them (0: none).
  size_t buffer_alignment = 0, buffer_padding = 0;

  // Grown by acquire_slot() only, which the connection's reader alone calls;
  // mu guards the growth.
  std::mutex mu;
  std::vector<std::unique_ptr<Slot>> slots;
};

// Holds a slot busy; the slot is free again once the last reference to
// the lease is gone (after the reply that carries its outputs has been
// written, and the device holds none of its buffers).
class SlotLease {
 public:
  SlotLease(std::shared_ptr<ModelEntry> entry, Slot* slot)
      : entry_(std::move(entry)), slot_(slot) {}
  SlotLease(const SlotLease&) = delete;
  SlotLease& operator=(const SlotLease&) = delete;
  Slot& slot() const { return *slot_; }
  const std::shared_ptr<ModelEntry>& entry() const { return entry_; }

 private:
  std::shared_ptr<ModelEntry> entry_;
  Slot* slot_;
};

// A free slot of `entry`, allocating one while fewer than max_slots exist
// (the connection's reader thread only: a free slot is taken without a lock);
// fails with queue_full naming the limit otherwise, and with limit_exceeded
// when a new slot would break the entry's byte budget (max_pending_bytes).
Result<std::shared_ptr<SlotLease>> acquire_slot(const std::shared_ptr<ModelEntry>& entry);

struct JobOutcome {
  std::optional<Error> error;
  LoadTimings load;          // load
  InferenceTimings timings;  // run: as the device reported them
  Nanos compute{0};          // run: device compute, else submit -> completion on the device clock
  DurationRun loop;          // loop
  std::map<std::string, double> sensors;
  std::vector<std::string> warnings;  // sensors with take_warnings
  Nanos started_at{0};                // steady clock: submitted / started on the device
  Nanos completed_at{0};              // steady clock
};

struct Job {
  enum class Kind { load, run, loop, sensors };
  Kind kind = Kind::run;
  std::shared_ptr<ModelEntry> entry;           // load: the entry to fill; run, loop: the model
  std::shared_ptr<SlotLease> lease;            // run, loop
  Nanos duration{0}, sleep_between_frames{0};  // loop
  bool take_warnings = false;                  // sensors: also Device::take_warnings
  // Called once, by the driver, when the job is done or failed; never for a
  // request still on the device when the host stops.
  std::function<void(Job&, JobOutcome&)> done;
  // True once the requester went away: a queued job is dropped before it
  // starts, a split loop stops at its next slice.
  std::function<bool()> cancelled;
  // The connection that posted it (cancel_loops); may be null.
  const void* owner = nullptr;
  // Counts the runs and loops the device executed for that connection; may
  // be null.
  std::shared_ptr<std::atomic<uint64_t>> owner_requests;
  // load: counts the loads the device made for that connection; may be null.
  std::shared_ptr<std::atomic<uint64_t>> owner_loads;
  // A loop its requester cut short (action cancel): guarded by the host's mutex.
  bool cut = false;

  // Driver-only bookkeeping.
  Nanos device_submitted_at{0};
  Nanos submitted_at{0};
  bool answered = false;
};

struct HostSettings {
  // How long the driver waits without any completion before the requests in
  // flight fail with timeout (on the device's clock).
  Nanos request_timeout{std::chrono::seconds(30)};
  // Longest uninterrupted device loop on a real-time clock; longer loops are
  // split. 0: never split.
  Nanos loop_slice{std::chrono::seconds(1)};
  // One line per event worth telling an operator; may be empty.
  std::function<void(const std::string&)> log;
};

class DeviceHost {
 public:
  // Wait slices: while the device has room for more requests, and while it
  // has none (then only stop() needs the driver to look up).
  static constexpr Nanos kWaitSlice = std::chrono::microseconds(200);
  static constexpr Nanos kFullSlice = std::chrono::milliseconds(20);
  // A split loop's slices last at least this many frames once the frame time
  // is known, so cutting a frame off at each slice's end costs at most 1%.
  static constexpr uint64_t kMinFramesPerSlice = 100;

  // How often stop() repeats Device::cancel() until the device thread ends.
  static constexpr Nanos kCancelRetry = std::chrono::milliseconds(5);

  // Starts the device thread; throws std::system_error when it cannot.
  DeviceHost(std::unique_ptr<Device> device, HostSettings settings);
  ~DeviceHost();
  DeviceHost(const DeviceHost&) = delete;
  DeviceHost& operator=(const DeviceHost&) = delete;

  // Read before any job runs; stable afterwards.
  const DeviceInfo& info() const { return info_; }
  const std::vector<std::string>& sensor_names() const { return sensor_names_; }
  bool virtual_clock() const { return virtual_clock_; }

  // Queues a job, or runs it on the calling thread (the fast path above).
  // Never blocks for longer than one wait slice plus the job's own call.
  void post(std::shared_ptr<Job> job);

  // Cuts short `owner`'s loops (action cancel): one running returns with the
  // frames completed so far (Device::cancel, repeated by the client while it
  // waits, since a device ignores it before its loop starts), one queued
  // returns with none. True when there was one. Any thread.
  bool cancel_loops(const void* owner);
  // Whether `job` was cut short (any thread).
  bool was_cut(const Job& job) const;

  // How the device was shared (any thread): reloads a request needed because
  // another model was on the device; every load of a model on the device
  // (explicit loads and those reloads); switches between identical models,
  // which need none; runs and loops executed, for every connection.
  uint64_t switch_reloads() const { return switch_reloads_.load(); }
  uint64_t device_loads() const { return device_loads_.load(); }
  uint64_t shared_switches() const { return shared_switches_.load(); }
  uint64_t requests_executed() const { return requests_executed_.load(); }

  // Loops the device has started (for tests and stats). Any thread.
  uint64_t loops_started() const { return loops_started_.load(); }

  // Stops the device thread (bounded, see above). Jobs posted afterwards fail
  // with disconnected. Idempotent.
  void stop();
  // The first step of stop(), taken while the connections are still open:
  // no job starts any more, and the loop on the device (if any) is cut short
  // and answered ("the server stopped during the loop (N frames
  // completed)") before this returns, so that its client gets that answer
  // rather than the end of the stream. stop() does the rest.
  void cut_loop_for_stop();

 private:
  void device_thread();
  void drive();
  void drive_inline(const std::shared_ptr<Job>& job);
  // Waits up to `slice` for a completion and handles it; false when the slice
  // passed without one (and request_timeout has not run out).
  bool collect(Nanos slice);
  void fail_queued();
  void cancel_until_stopped();
  void start_ready_jobs();
  void execute(const std::shared_ptr<Job>& job);
  void execute_unguarded(const std::shared_ptr<Job>& job);
  // A run onto the device (into in_flight_), or its failure answered.
  void submit_run(const std::shared_ptr<Job>& job);
  Result<DurationRun> run_loop(const Job& job, BindingId binding);
  Result<void> ensure_current(const std::shared_ptr<ModelEntry>& entry);
  Result<BindingId> ensure_bound(Slot& slot);
  // Answers `job` once (an answered job is not answered again). Any thread.
  void answer(const std::shared_ptr<Job>& job, JobOutcome&& outcome);
  // The driver's answer: answer(), then, for a run the device no longer
  // holds, lets go of its slot lease.
  void finish(const std::shared_ptr<Job>& job, JobOutcome&& outcome);
  // answer() and the lease of a job that never reached the device (queued
  // when the host stops). Any thread: it reads no driver state.
  void fail_unsubmitted(const std::shared_ptr<Job>& job, JobOutcome&& outcome);
  // Whether the device may still hold `job`'s buffers (it is in in_flight_).
  // Driver-only.
  bool on_device(const Job& job) const;
  void on_completion(Result<Completion> completion);
  bool stopping() const;
  void log(const std::string& line) const;

  std::unique_ptr<Device> device_;
  HostSettings settings_;
  DeviceInfo info_;
  // Requests the device takes in flight: info_.queue_depth until a load, then
  // what the device states with its model loaded (note_loaded_depth).
  std::atomic<uint32_t> admit_depth_{1};
  std::vector<std::string> sensor_names_;
  bool virtual_clock_ = false;
  bool steady_device_clock_ = false;  // the device's clock is steady_clock(): one read serves both

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<Job>> queue_;
  bool driving_ = false;  // some thread holds the driver role
  bool handoff_ = false;  // the role waits for the device thread to take it
  bool stopping_ = false;
  bool thread_done_ = false;  // the device thread has returned
  std::thread thread_;
  std::atomic<uint64_t> loops_started_{0};
  std::shared_ptr<Job> loop_job_;  // the loop on the device, guarded by mu_
  std::atomic<uint64_t> switch_reloads_{0}, device_loads_{0}, shared_switches_{0},
      requests_executed_{0};

  // Driver-only state. The runs on the device by tag, in submission order:
  // at most the device's queue depth (plus answered ones a failed device
  // still holds), so a linear search is cheap, and the vector keeps its
  // capacity (no allocation per run).
  std::vector<std::pair<uint64_t, std::shared_ptr<Job>>> in_flight_;
  uint64_t next_tag_ = 1;
  uint64_t generation_ = 0;
  std::shared_ptr<ModelEntry> current_;
  // Entries with identical bytes that took over the device's model without
  // a reload: their slots are bound too, so they live until the next load.
  std::vector<std::shared_ptr<ModelEntry>> sharing_;
  // Every entry loaded, by a hash of its bytes (identical ones share a
  // model_id); expired ones are pruned as they are met.
  std::multimap<size_t, std::weak_ptr<ModelEntry>> loaded_by_hash_;
  uint64_t next_model_id_ = 1;
  size_t live_after_sweep_ = 0;
  // Sets a freshly loaded entry's model_id (that of a live entry with the
  // same bytes, else a new one) and files it.
  void identify(const std::shared_ptr<ModelEntry>& entry);
  void note_loaded_depth();
  // Whether the device holds `entry`'s model: it, or identical bytes.
  bool holds(const ModelEntry& entry) const;
  Nanos waited_{0};  // waiting for a completion since the last one (device clock)
};

}  // namespace rig::server

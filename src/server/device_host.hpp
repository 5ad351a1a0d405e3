// DeviceHost: the one local Device a server hosts, and the only code that
// calls it.
//
// The Device interface is single-threaded, so every call happens in the one
// thread that holds the driver role. Jobs (load, run, loop, sensors) come
// from the connections' reader threads:
//  * If nobody drives the device, the posting thread takes the role and runs
//    the device itself until it is idle: a lone request costs no thread
//    hand-off (the 64-byte round trip is within a few microseconds of a raw
//    socket ping-pong).
//  * As soon as that thread has more of its own input to read, it hands the
//    role to the device thread and goes back to reading, so that a pipelining
//    client's requests keep arriving while the device works.
//  * Runs are submitted up to the device's queue depth; completions are
//    matched by tag. A load, a loop, or a run on a model other than the one
//    on the device waits until nothing is in flight (the device holds one
//    model; switching reloads it from the bytes the server kept).
//
// Ownership: the host owns the Device and keeps the model entry whose buffers
// the device has bound alive until the device loads another model (the
// Device contract: bound buffers stay valid until the bindings are released).
#pragma once

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

namespace rig::server {

// One tensor buffer set for one request in flight on one model.
struct Slot {
  std::vector<std::vector<std::byte>> inputs, outputs;
  // Driver-only: the binding of these buffers on the device, valid while
  // bound_generation equals the host's generation.
  BindingId binding = 0;
  uint64_t bound_generation = 0;
  bool busy = false;  // guarded by ModelEntry::mu
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

  std::mutex mu;
  std::vector<std::unique_ptr<Slot>> slots;
};

// Holds a slot busy; frees it when destroyed (after the reply that carries
// its outputs has been written).
class SlotLease {
 public:
  SlotLease(std::shared_ptr<ModelEntry> entry, Slot* slot)
      : entry_(std::move(entry)), slot_(slot) {}
  ~SlotLease();
  SlotLease(const SlotLease&) = delete;
  SlotLease& operator=(const SlotLease&) = delete;
  Slot& slot() const { return *slot_; }
  const std::shared_ptr<ModelEntry>& entry() const { return entry_; }

 private:
  std::shared_ptr<ModelEntry> entry_;
  Slot* slot_;
};

// A free slot of `entry`, allocating one while fewer than max_slots exist;
// fails with queue_full naming the limit otherwise.
Result<std::shared_ptr<SlotLease>> acquire_slot(const std::shared_ptr<ModelEntry>& entry);

struct JobOutcome {
  std::optional<Error> error;
  LoadTimings load;          // load
  InferenceTimings timings;  // run: as the device reported them
  Nanos compute{0};          // run: device compute, else submit -> completion on the device clock
  DurationRun loop;          // loop
  std::map<std::string, double> sensors;
  Nanos started_at{0};    // steady clock: submitted / started on the device
  Nanos completed_at{0};  // steady clock
};

struct Job {
  enum class Kind { load, run, loop, sensors };
  Kind kind = Kind::run;
  std::shared_ptr<ModelEntry> entry;           // load: the entry to fill; run, loop: the model
  std::shared_ptr<SlotLease> lease;            // run, loop
  Nanos duration{0}, sleep_between_frames{0};  // loop
  // Called once, by the driver, when the job is done or failed.
  std::function<void(Job&, JobOutcome)> done;
  // Queued jobs whose requester went away are dropped before they start.
  std::function<bool()> cancelled;

  // Driver-only bookkeeping.
  Nanos device_submitted_at{0};
  Nanos submitted_at{0};
  bool answered = false;
};

class DeviceHost {
 public:
  DeviceHost(std::unique_ptr<Device> device, Nanos request_timeout);
  ~DeviceHost();
  DeviceHost(const DeviceHost&) = delete;
  DeviceHost& operator=(const DeviceHost&) = delete;

  // Read before any job runs; stable afterwards.
  const DeviceInfo& info() const { return info_; }
  const std::vector<std::string>& sensor_names() const { return sensor_names_; }
  bool virtual_clock() const { return virtual_clock_; }

  // Queues a job. If no thread drives the device, the caller does, until the
  // device is idle or `caller_has_input` (may be empty) returns true.
  void post(std::shared_ptr<Job> job, const std::function<bool()>& caller_has_input);

  // Lets the current driver finish, then stops the device thread. Jobs posted
  // afterwards fail with disconnected.
  void stop();

 private:
  void device_thread();
  void drive(const std::function<bool()>* caller_has_input);
  void start_ready_jobs();
  void execute(const std::shared_ptr<Job>& job);
  Result<void> ensure_current(const std::shared_ptr<ModelEntry>& entry);
  Result<BindingId> ensure_bound(Slot& slot);
  void finish(const std::shared_ptr<Job>& job, JobOutcome outcome);
  void on_completion(Result<Completion> completion);

  std::unique_ptr<Device> device_;
  DeviceInfo info_;
  std::vector<std::string> sensor_names_;
  bool virtual_clock_ = false;
  Nanos request_timeout_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<Job>> queue_;
  bool driving_ = false;
  bool handoff_ = false;
  bool stopping_ = false;
  std::thread thread_;

  // Driver-only state.
  std::map<uint64_t, std::shared_ptr<Job>> in_flight_;
  uint64_t next_tag_ = 1;
  uint64_t generation_ = 0;
  std::shared_ptr<ModelEntry> current_;
};

}  // namespace rig::server

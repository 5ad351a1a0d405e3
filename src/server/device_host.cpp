// The device host (device_host.hpp): the driver role, its hand-over between
// the posting thread and the device thread, and the jobs' execution. One
// file on purpose: driving, executing and answering share the driver-only
// state (in_flight_, the current model, the generation) under one
// single-driver contract, which a split would spread over files.
#include "server/device_host.hpp"

#include <algorithm>
#include <exception>
#include <functional>
#include <limits>
#include <new>
#include <string_view>

#include "rig/units.hpp"

namespace rig::server {
namespace {

Nanos steady_now() {
  return steady_clock().now();
}

const char* kind_name(Job::Kind kind) {
  switch (kind) {
    case Job::Kind::load:
      return "load";
    case Job::Kind::run:
      return "run";
    case Job::Kind::loop:
      return "loop";
    case Job::Kind::sensors:
      return "sensor read";
  }
  return "job";
}

Nanos saturating_times(Nanos d, uint64_t n) {
  if (d <= Nanos(0)) return Nanos(0);
  if (static_cast<uint64_t>(d.count()) > static_cast<uint64_t>(Nanos::max().count()) / n)
    return Nanos::max();
  return d * static_cast<int64_t>(n);
}

// Identical models: the same bytes with the same inputs' shapes fixed (a
// model loaded by name is normalised on the server with its --shape).
bool same_shapes(const std::vector<InputShape>& a, const std::vector<InputShape>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].name != b[i].name || a[i].dims != b[i].dims) return false;
  return true;
}

}  // namespace

namespace {

// The allocator of a slot's lease: the lease and its control block live in
// the slot's lease_storage (a slot has at most one lease at a time), and
// handing that storage back is what frees the slot. The allocator holds the
// entry, so the slot outlives the control block's last touch of its
// storage (libstdc++ destroys the block through a copy of the allocator).
template <class T>
struct LeaseStorage {
  using value_type = T;
  std::shared_ptr<ModelEntry> entry;
  Slot* slot;

  LeaseStorage(std::shared_ptr<ModelEntry> e, Slot* s) : entry(std::move(e)), slot(s) {}
  template <class U>
  LeaseStorage(const LeaseStorage<U>& other) : entry(other.entry), slot(other.slot) {}

  T* allocate(size_t n) {
    static_assert(alignof(T) <= alignof(std::max_align_t));
    // A block larger than the storage (another standard library's layout)
    // falls back to the heap.
    if (n * sizeof(T) > sizeof slot->lease_storage)
      return static_cast<T*>(::operator new(n * sizeof(T)));
    return reinterpret_cast<T*>(slot->lease_storage);
  }
  void deallocate(T* p, size_t) noexcept {
    if (reinterpret_cast<std::byte*>(p) != slot->lease_storage) ::operator delete(p);
    slot->busy.store(false, std::memory_order_release);
  }
  template <class U>
  bool operator==(const LeaseStorage<U>& other) const {
    return slot == other.slot;
  }
};

std::shared_ptr<SlotLease> lease(const std::shared_ptr<ModelEntry>& entry, Slot* slot) {
  return std::allocate_shared<SlotLease>(LeaseStorage<SlotLease>(entry, slot), entry, slot);
}

}  // namespace

Result<std::shared_ptr<SlotLease>> acquire_slot(const std::shared_ptr<ModelEntry>& entry) {
  // Only this thread grows `slots`: scanning them needs no lock.
  for (auto& slot : entry->slots)
    if (!slot->busy.load(std::memory_order_relaxed) &&
        !slot->busy.exchange(true, std::memory_order_acquire))
      return lease(entry, slot.get());
  std::lock_guard lock(entry->mu);
  if (entry->slots.size() >= entry->max_slots)
    return fail(ErrorCode::queue_full,
                "model handle " + std::to_string(entry->handle) + " already has " +
                    std::to_string(entry->max_slots) +
                    " requests in flight (twice the queue depth the server advertised in hello)");
  const uint64_t bytes = entry->info.input_bytes() + entry->info.output_bytes();
  ByteHold hold;
  if (entry->budget) {
    auto reserved = entry->budget->reserve(bytes, "a new run slot of " + std::to_string(bytes) +
                                                      " bytes for model handle " +
                                                      std::to_string(entry->handle));
    if (!reserved) return tl::unexpected(reserved.error());
    hold = std::move(*reserved);
  }
  auto slot = std::make_unique<Slot>();
  // An allocation padded to the device's padding from an aligned start; the
  // view keeps the exact size (a moved vector keeps its storage).
  const size_t align = std::max<size_t>(1, entry->buffer_alignment);
  const size_t pad = std::max<size_t>(1, entry->buffer_padding);
  auto buffer = [&](size_t n) {
    auto& a =
        slot->storage.emplace_back((std::max<size_t>(n, 1) + pad - 1) / pad * pad + align - 1);
    const auto address = reinterpret_cast<uintptr_t>(a.data());
    return std::span<std::byte>(a.data() + (align - address % align) % align, n);
  };
  try {
    slot->storage.reserve(entry->info.inputs.size() + entry->info.outputs.size());
    for (const auto& t : entry->info.inputs) slot->inputs.push_back(buffer(t.bytes));
    for (const auto& t : entry->info.outputs) slot->outputs.push_back(buffer(t.bytes));
    for (auto& in : slot->inputs) slot->input_spans.emplace_back(in);
  } catch (const std::bad_alloc&) {
    return fail(ErrorCode::internal, "cannot allocate " + std::to_string(bytes) +
                                         " bytes for a run slot of model handle " +
                                         std::to_string(entry->handle) + ": out of memory");
  }
  slot->hold = std::move(hold);
  slot->busy.store(true, std::memory_order_relaxed);  // published by the lock and the lease
  entry->slots.push_back(std::move(slot));
  return lease(entry, entry->slots.back().get());
}

DeviceHost::DeviceHost(std::unique_ptr<Device> device, HostSettings settings)
    : device_(std::move(device)), settings_(std::move(settings)) {
  info_ = device_->info();
  info_.queue_depth = std::max<uint32_t>(1, info_.queue_depth);
  admit_depth_.store(info_.queue_depth);
  virtual_clock_ = device_->clock().is_virtual();
  steady_device_clock_ = &device_->clock() == &static_cast<Clock&>(steady_clock());
  for (const auto& [name, value] : device_->read_sensors()) sensor_names_.push_back(name);
  thread_ = std::thread([this] { device_thread(); });
}

// A device may state its queue depth only once a model is loaded (the hailo
// device: HailoRT's async queue size is the configured model's): requests
// are admitted up to what the device states now, never past it.
void DeviceHost::note_loaded_depth() {
  admit_depth_.store(std::max<uint32_t>(1, device_->info().queue_depth));
}

DeviceHost::~DeviceHost() {
  stop();
  // The device goes first: requests it may still hold write into slots that
  // in_flight_ keeps alive until then.
  device_.reset();
}

void DeviceHost::log(const std::string& line) const {
  if (settings_.log) settings_.log(line);
}

bool DeviceHost::stopping() const {
  std::lock_guard lock(mu_);
  return stopping_;
}

void DeviceHost::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  cancel_until_stopped();
  if (thread_.joinable()) thread_.join();
  fail_queued();
}

void DeviceHost::cut_loop_for_stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (!thread_.joinable()) return;
  // loop_job_ is reset after the loop's answer was sent (the device thread
  // answers while the loop is still marked as on the device).
  std::unique_lock lock(mu_);
  while (loop_job_ && !thread_done_) {
    lock.unlock();
    device_->cancel();
    lock.lock();
    cv_.wait_for(lock, kCancelRetry, [&] { return !loop_job_ || thread_done_; });
  }
}

// A loop the device is running (sliced or not) returns early once
// cancelled; Device::cancel() has no effect between loops, so it is repeated
// until the device thread has seen stopping_ and left.
void DeviceHost::cancel_until_stopped() {
  if (!thread_.joinable()) return;
  std::unique_lock lock(mu_);
  while (!thread_done_) {
    lock.unlock();
    device_->cancel();
    lock.lock();
    cv_.wait_for(lock, kCancelRetry, [&] { return thread_done_; });
  }
}

bool DeviceHost::cancel_loops(const void* owner) {
  bool found = false;
  std::lock_guard lock(mu_);
  for (auto& job : queue_)
    if (job->kind == Job::Kind::loop && job->owner == owner) found = job->cut = true;
  // Under mu_: while loop_job_ is this owner's, no other loop can be on the
  // device (Device::cancel only sets a flag; the device thread takes mu_
  // only between loops), so the cancel cannot land on another's.
  if (loop_job_ && loop_job_->owner == owner) {
    found = loop_job_->cut = true;
    device_->cancel();
  }
  return found;
}

bool DeviceHost::was_cut(const Job& job) const {
  std::lock_guard lock(mu_);
  return job.cut;
}

void DeviceHost::fail_queued() {
  std::deque<std::shared_ptr<Job>> queued;
  {
    std::lock_guard lock(mu_);
    queued.swap(queue_);
  }
  for (auto& job : queued) {
    JobOutcome outcome;
    outcome.error = Error{ErrorCode::disconnected, "the server is stopping"};
    fail_unsubmitted(job, std::move(outcome));
  }
}

void DeviceHost::post(std::shared_ptr<Job> job) {
  std::unique_lock lock(mu_);
  if (stopping_) {
    lock.unlock();
    JobOutcome outcome;
    outcome.error = Error{ErrorCode::disconnected, "the server is stopping"};
    fail_unsubmitted(job, std::move(outcome));
    return;
  }
  // current_ and generation_ are driver-only, but with nobody driving and mu_
  // held nobody can change them: holds() is asked only then. A run on another
  // model would reload it: that is a load, and loads run on the device thread.
  const bool fast = !driving_ && queue_.empty() &&
                    (job->kind == Job::Kind::sensors ||
                     (job->kind == Job::Kind::run && job->entry && holds(*job->entry)));
  if (!fast) {
    queue_.push_back(std::move(job));
    const bool wake = !driving_;
    lock.unlock();
    if (wake) cv_.notify_all();
    return;
  }
  driving_ = true;  // nobody drives, so nothing is in flight
  lock.unlock();
  drive_inline(job);
}

void DeviceHost::device_thread() {
  std::unique_lock lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stopping_ || handoff_ || (!driving_ && !queue_.empty()); });
    // Stopping: requests still on the device are abandoned; stop() fails
    // what is queued.
    if (stopping_) {
      thread_done_ = true;
      cv_.notify_all();
      return;
    }
    handoff_ = false;
    driving_ = true;
    lock.unlock();
    drive();
    lock.lock();
  }
}

void DeviceHost::drive() {
  for (;;) {
    try {
      start_ready_jobs();
      if (in_flight_.empty()) {
        std::unique_lock lock(mu_);
        if (stopping_ || queue_.empty()) {
          driving_ = false;
          return;
        }
        continue;  // a job arrived after start_ready_jobs looked
      }
      bool room = false;
      {
        std::lock_guard lock(mu_);
        if (stopping_) {
          driving_ = false;
          return;
        }
        // Nothing queued could start now (start_ready_jobs took what it
        // could), so short slices only pay off while new jobs could come
        // and the device could take them.
        room = queue_.empty() && in_flight_.size() < admit_depth_.load();
      }
      collect(room ? kWaitSlice : kFullSlice);
    } catch (const std::exception& e) {
      log(std::string("device host: ") + e.what());
    }
  }
}

void DeviceHost::drive_inline(const std::shared_ptr<Job>& job) {
  try {
    execute(job);
    if (!in_flight_.empty()) collect(kWaitSlice);
  } catch (const std::exception& e) {
    log(std::string("device host: ") + e.what());
  }
  bool fail_rest = false, hand_off = false;
  {
    std::lock_guard lock(mu_);
    if (stopping_) {
      driving_ = false;  // nobody takes the role any more
      fail_rest = true;
    } else if (in_flight_.empty() && queue_.empty()) {
      driving_ = false;  // the common case: no wake-up, no hand-off
    } else {
      handoff_ = hand_off =
          true;  // the device thread takes over; this thread goes back to its socket
    }
  }
  if (hand_off) cv_.notify_all();
  if (fail_rest) fail_queued();
}

bool DeviceHost::collect(Nanos slice) {
  const Nanos left = std::max(Nanos(1), settings_.request_timeout - waited_);
  slice = std::min(slice, left);
  auto completion = device_->wait_next(slice);
  if (!completion && completion.error().code == ErrorCode::timeout && slice < left) {
    waited_ += slice;
    return false;
  }
  waited_ = Nanos(0);
  on_completion(std::move(completion));
  return true;
}

void DeviceHost::start_ready_jobs() {
  for (;;) {
    std::shared_ptr<Job> job;
    {
      std::lock_guard lock(mu_);
      if (queue_.empty() || stopping_) return;
      job = queue_.front();
      if (!(job->cancelled && job->cancelled())) {
        const bool on_device = job->entry && holds(*job->entry);
        const bool exclusive = job->kind == Job::Kind::load || job->kind == Job::Kind::loop ||
                               (job->kind == Job::Kind::run && !on_device);
        if (exclusive && !in_flight_.empty()) return;
        if (job->kind == Job::Kind::run && in_flight_.size() >= admit_depth_.load()) return;
      } else {
        job.reset();
      }
      queue_.pop_front();
    }
    if (job) execute(job);
  }
}

void DeviceHost::identify(const std::shared_ptr<ModelEntry>& entry) {
  const auto& bytes = entry->source.bytes;
  if (bytes.empty()) {  // a path: never shared
    entry->model_id = next_model_id_++;
    return;
  }
  const size_t h = std::hash<std::string_view>{}(
      std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
  auto [lo, hi] = loaded_by_hash_.equal_range(h);
  uint64_t id = 0;
  for (auto it = lo; it != hi;) {
    auto other = it->second.lock();
    if (!other) {
      it = loaded_by_hash_.erase(it);
      continue;
    }
    if (!id && other != entry && other->source.bytes == bytes &&
        same_shapes(other->source.shapes, entry->source.shapes))
      id = other->model_id;
    ++it;
  }
  entry->model_id = id ? id : next_model_id_++;
  // Expired entries keep their allocation (make_shared): sweep them all
  // whenever the table has doubled since the last sweep.
  if (loaded_by_hash_.size() >= 2 * live_after_sweep_ + 16) {
    std::erase_if(loaded_by_hash_, [](const auto& e) { return e.second.expired(); });
    live_after_sweep_ = loaded_by_hash_.size();
  }
  loaded_by_hash_.emplace(h, entry);
}

bool DeviceHost::holds(const ModelEntry& entry) const {
  if (!current_ || current_->loaded_generation != generation_) return false;
  return current_.get() == &entry || (entry.model_id != 0 && entry.model_id == current_->model_id);
}

Result<void> DeviceHost::ensure_current(const std::shared_ptr<ModelEntry>& entry) {
  if (current_ == entry && entry->loaded_generation == generation_) return {};
  // The same bytes are on the device (another connection loaded them): it
  // takes them over, binding its own slots, with no reload.
  if (holds(*entry)) {
    for (const std::shared_ptr<ModelEntry>& e : {current_, entry})
      if (std::find(sharing_.begin(), sharing_.end(), e) == sharing_.end()) sharing_.push_back(e);
    entry->loaded_generation = generation_;
    current_ = entry;
    shared_switches_.fetch_add(1);
    return {};
  }
  // Another model is on the device: load this one again from its source.
  switch_reloads_.fetch_add(1);
  device_loads_.fetch_add(1);
  ++generation_;
  current_.reset();
  sharing_.clear();
  auto loaded = device_->load(entry->source);
  if (!loaded) return tl::unexpected(loaded.error());
  note_loaded_depth();
  const ModelInfo& now = device_->model_info();
  if (now.input_bytes() != entry->info.input_bytes() ||
      now.output_bytes() != entry->info.output_bytes() ||
      now.inputs.size() != entry->info.inputs.size() ||
      now.outputs.size() != entry->info.outputs.size())
    return fail(ErrorCode::device, "model handle " + std::to_string(entry->handle) +
                                       " changed shape when it was reloaded");
  current_ = entry;
  entry->loaded_generation = generation_;
  return {};
}

Result<BindingId> DeviceHost::ensure_bound(Slot& slot) {
  if (slot.bound_generation == generation_) return slot.binding;
  Bindings b;
  for (const auto& in : slot.inputs) b.inputs.emplace_back(in);
  for (auto& out : slot.outputs) b.outputs.emplace_back(out);
  auto id = device_->bind(b);
  if (!id) return tl::unexpected(id.error());
  slot.binding = *id;
  slot.bound_generation = generation_;
  return *id;
}

void DeviceHost::answer(const std::shared_ptr<Job>& job, JobOutcome&& outcome) {
  if (job->answered) return;
  job->answered = true;
  if (outcome.completed_at == Nanos(0)) outcome.completed_at = steady_now();
  try {
    job->done(*job, outcome);
  } catch (const std::exception& e) {
    log(std::string("device host: answering a ") + kind_name(job->kind) + " failed: " + e.what());
  }
}

void DeviceHost::fail_unsubmitted(const std::shared_ptr<Job>& job, JobOutcome&& outcome) {
  answer(job, std::move(outcome));
  job->lease.reset();  // never on the device
}

void DeviceHost::finish(const std::shared_ptr<Job>& job, JobOutcome&& outcome) {
  answer(job, std::move(outcome));
  // A run's slot is leased again only once the device holds none of its
  // buffers: an answered run still in in_flight_ (a failed wait_next, a
  // submit that threw) keeps it until the device hands it back.
  if (job->kind == Job::Kind::run && !on_device(*job)) job->lease.reset();
}

bool DeviceHost::on_device(const Job& job) const {
  return std::any_of(in_flight_.begin(), in_flight_.end(),
                     [&](const auto& e) { return e.second.get() == &job; });
}

void DeviceHost::execute(const std::shared_ptr<Job>& job) {
  try {
    execute_unguarded(job);
  } catch (const std::exception& e) {
    // A run that reached in_flight_ stays there (answered) until the device
    // hands its buffers back or says it holds nothing.
    log(std::string("device host: a ") + kind_name(job->kind) + " failed: " + e.what());
    JobOutcome outcome;
    outcome.error = Error{ErrorCode::internal,
                          std::string("the server failed to execute the request: ") + e.what()};
    finish(job, std::move(outcome));
  }
}

void DeviceHost::execute_unguarded(const std::shared_ptr<Job>& job) {
  // A run's start is its submission (submitted_at, submit_run).
  if (job->kind == Job::Kind::run) return submit_run(job);
  JobOutcome outcome;
  outcome.started_at = steady_now();
  auto failed = [&](const Error& e) {
    outcome.error = e;
    finish(job, std::move(outcome));
  };
  switch (job->kind) {
    case Job::Kind::sensors:
      outcome.sensors = device_->read_sensors();
      if (job->take_warnings) outcome.warnings = device_->take_warnings();
      finish(job, std::move(outcome));
      return;
    case Job::Kind::load: {
      ++generation_;
      current_.reset();
      sharing_.clear();
      device_loads_.fetch_add(1);
      if (job->owner_loads) job->owner_loads->fetch_add(1);
      auto loaded = device_->load(job->entry->source);
      if (!loaded) return failed(loaded.error());
      note_loaded_depth();
      job->entry->info = device_->model_info();
      job->entry->loaded_generation = generation_;
      identify(job->entry);
      current_ = job->entry;
      outcome.load = *loaded;
      finish(job, std::move(outcome));
      return;
    }
    case Job::Kind::loop: {
      outcome.started_at = steady_now();
      if (was_cut(*job)) {  // cut short while queued: no frame, nothing loaded
        finish(job, std::move(outcome));
        return;
      }
      if (auto ok = ensure_current(job->entry); !ok) return failed(ok.error());
      auto binding = ensure_bound(job->lease->slot());
      if (!binding) return failed(binding.error());
      loops_started_.fetch_add(1);
      requests_executed_.fetch_add(1);
      if (job->owner_requests) job->owner_requests->fetch_add(1);
      // On the device from here until the guard goes, whatever happens.
      struct LoopOnDevice {
        DeviceHost& host;
        LoopOnDevice(DeviceHost& h, std::shared_ptr<Job> j) : host(h) {
          std::lock_guard lock(host.mu_);
          host.loop_job_ = std::move(j);
        }
        ~LoopOnDevice() {
          {
            std::lock_guard lock(host.mu_);
            host.loop_job_.reset();
          }
          host.cv_.notify_all();  // cut_loop_for_stop() waits for it
        }
      } on_device(*this, job);
      auto run = run_loop(*job, *binding);
      if (!run) return failed(run.error());
      // Cut short by stop(): the figures are of a shorter loop than asked.
      if (stopping())
        return failed({ErrorCode::disconnected,
                       "the server stopped during the loop (" +
                           (run->frames_completed ? std::to_string(*run->frames_completed)
                                                  : std::string("an unknown number of")) +
                           " frames completed)"});
      outcome.loop = *run;
      finish(job, std::move(outcome));
      return;
    }
    case Job::Kind::run:  // taken above
      return submit_run(job);
  }
}

void DeviceHost::submit_run(const std::shared_ptr<Job>& job) {
  // An outcome only for a failure: a run's answer comes from its completion.
  const auto failed = [&](const Error& e) {
    JobOutcome outcome;
    outcome.error = e;
    finish(job, std::move(outcome));
  };
  if (auto ok = ensure_current(job->entry); !ok) return failed(ok.error());
  auto binding = ensure_bound(job->lease->slot());
  if (!binding) return failed(binding.error());
  const uint64_t tag = next_tag_++;
  // In the table before the device has it: nothing can throw after
  // submit() succeeds.
  in_flight_.emplace_back(tag, job);
  job->submitted_at = steady_now();
  job->device_submitted_at = steady_device_clock_ ? job->submitted_at : device_->clock().now();
  if (auto ok = device_->submit(*binding, tag); !ok) {
    in_flight_.pop_back();
    return failed(ok.error());
  }
  requests_executed_.fetch_add(1);
  if (job->owner_requests) job->owner_requests->fetch_add(1);
}

// A loop on a real-time clock longer than loop_slice runs as consecutive
// device loops ("slices") so that stop() and a requester that went away are
// noticed between them. Slices are of equal length: at most loop_slice until
// the frame time is known (the first slice measures it), then long enough
// for kMinFramesPerSlice frames, and never shorter than kMinFramesPerSlice
// sleeps. Completed, aborted and
// elapsed are summed: each slice cuts off the frame in progress at its end,
// so frames_aborted counts up to one frame per slice, and the time of those
// frames is in elapsed; the rate is at most 1/kMinFramesPerSlice lower than
// one uninterrupted loop would give. A virtual-clock loop takes no real time
// and is never split, so its counts stay exact. A device that says its loop
// must run whole (DeviceInfo::loop_whole: a HailoRT loop re-configures and
// truncates its rate per call) is never split either; stop() cancels it.
Result<DurationRun> DeviceHost::run_loop(const Job& job, BindingId binding) {
  const Nanos limit = settings_.loop_slice;
  if (was_cut(job)) return DurationRun{};  // cut just before it started: no frame ran
  if (info_.loop_whole && !virtual_clock_ && limit > Nanos(0) && job.duration > limit)
    log("device host: the device's loop runs whole (" + format_duration(job.duration) +
        "); stop() cancels it or waits for it to end");
  if (virtual_clock_ || info_.loop_whole || limit <= Nanos(0) || job.duration <= limit)
    return device_->run_for_duration(binding, job.duration, job.sleep_between_frames);
  DurationRun total;
  Nanos remaining = job.duration;
  Nanos target = std::max(limit, saturating_times(job.sleep_between_frames, kMinFramesPerSlice));
  // Whether `target` is a lower bound (frames or sleeps per slice) rather
  // than loop_slice, the upper bound that applies while nothing is known.
  bool at_least = target > limit;
  while (remaining > Nanos(0)) {
    // Stopping: the slices so far, which the caller answers as cut short
    // ("the server stopped during the loop (N frames completed)").
    if (stopping()) break;
    if (job.cancelled && job.cancelled())
      return fail(ErrorCode::disconnected, "the client went away during the loop");
    if (was_cut(job)) break;  // its requester cut it short: the slices so far
    const Nanos length = std::clamp(target, Nanos(1), remaining);
    const int64_t slices_left =
        at_least ? std::max<int64_t>(1, remaining.count() / length.count())    // each >= target
                 : (remaining.count() + length.count() - 1) / length.count();  // each <= target
    const Nanos slice = slices_left <= 1 ? remaining : remaining / slices_left;
    auto r = device_->run_for_duration(binding, slice, job.sleep_between_frames);
    if (!r) return r;
    // Only devices that count frames are split (the others run whole).
    const uint64_t completed = r->frames_completed.value_or(0);
    total.frames_completed = *total.frames_completed + completed;
    total.frames_aborted = *total.frames_aborted + r->frames_aborted.value_or(0);
    total.elapsed += r->elapsed;
    remaining -= slice;
    if (completed == 0) {
      target = remaining;  // frames longer than a slice: the rest in one piece
    } else {
      target = std::max(target, saturating_times(r->elapsed / completed, kMinFramesPerSlice));
    }
    at_least = true;
  }
  const double seconds = std::chrono::duration<double>(total.elapsed).count();
  total.frames_per_second =
      seconds > 0 ? static_cast<double>(*total.frames_completed) / seconds : 0;
  return total;
}

void DeviceHost::on_completion(Result<Completion> completion) {
  if (!completion) {
    // Nothing tells which request failed: answer every one in flight, but
    // keep their buffers leased until the device hands them back.
    for (auto& [tag, job] : in_flight_) {
      JobOutcome outcome;
      outcome.started_at = job->submitted_at;
      outcome.error = completion.error();
      finish(job, std::move(outcome));
    }
    // Requests the device no longer holds will never complete: their
    // slots are free again.
    if (device_->in_flight() == 0) {
      for (auto& [tag, job] : in_flight_) job->lease.reset();
      in_flight_.clear();
    }
    return;
  }
  auto it = std::find_if(in_flight_.begin(), in_flight_.end(),
                         [&](const auto& e) { return e.first == completion->tag; });
  if (it == in_flight_.end()) return;
  std::shared_ptr<Job> job = std::move(it->second);
  in_flight_.erase(it);
  JobOutcome outcome;
  outcome.started_at = job->submitted_at;
  outcome.completed_at = steady_now();
  outcome.error = completion->error;
  outcome.timings = completion->timings;
  outcome.compute = completion->timings.compute
                        ? *completion->timings.compute
                        : std::max(Nanos(0), completion->completed_at - job->device_submitted_at);
  finish(job, std::move(outcome));
}

}  // namespace rig::server

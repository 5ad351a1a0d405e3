#include "server/device_host.hpp"

#include <algorithm>

namespace rig::server {
namespace {

Nanos steady_now() {
  return steady_clock().now();
}

}  // namespace

SlotLease::~SlotLease() {
  std::lock_guard lock(entry_->mu);
  slot_->busy = false;
}

Result<std::shared_ptr<SlotLease>> acquire_slot(const std::shared_ptr<ModelEntry>& entry) {
  std::lock_guard lock(entry->mu);
  for (auto& slot : entry->slots)
    if (!slot->busy) {
      slot->busy = true;
      return std::make_shared<SlotLease>(entry, slot.get());
    }
  if (entry->slots.size() >= entry->max_slots)
    return fail(ErrorCode::queue_full,
                "model handle " + std::to_string(entry->handle) + " already has " +
                    std::to_string(entry->max_slots) +
                    " requests in flight (twice the queue depth the server advertised in hello)");
  auto slot = std::make_unique<Slot>();
  for (const auto& t : entry->info.inputs) slot->inputs.emplace_back(t.bytes);
  for (const auto& t : entry->info.outputs) slot->outputs.emplace_back(t.bytes);
  slot->busy = true;
  entry->slots.push_back(std::move(slot));
  return std::make_shared<SlotLease>(entry, entry->slots.back().get());
}

DeviceHost::DeviceHost(std::unique_ptr<Device> device, Nanos request_timeout)
    : device_(std::move(device)), request_timeout_(request_timeout) {
  info_ = device_->info();
  info_.queue_depth = std::max<uint32_t>(1, info_.queue_depth);
  virtual_clock_ = device_->clock().is_virtual();
  for (const auto& [name, value] : device_->read_sensors()) sensor_names_.push_back(name);
  thread_ = std::thread([this] { device_thread(); });
}

DeviceHost::~DeviceHost() {
  stop();
}

void DeviceHost::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  // A reader thread may still be driving; it finishes on its own, and the
  // server joins it before destroying the host.
}

void DeviceHost::post(std::shared_ptr<Job> job, const std::function<bool()>& caller_has_input) {
  {
    std::unique_lock lock(mu_);
    if (stopping_ && !driving_) {
      lock.unlock();
      JobOutcome outcome;
      outcome.error = Error{ErrorCode::disconnected, "the server is stopping"};
      job->done(*job, std::move(outcome));
      return;
    }
    queue_.push_back(std::move(job));
    if (driving_) return;  // the driver picks it up after its current wait
    driving_ = true;
  }
  drive(caller_has_input ? &caller_has_input : nullptr);
}

void DeviceHost::device_thread() {
  std::unique_lock lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return handoff_ || stopping_; });
    if (handoff_) {
      handoff_ = false;
      lock.unlock();
      drive(nullptr);
      lock.lock();
      continue;
    }
    if (stopping_) return;
  }
}

void DeviceHost::drive(const std::function<bool()>* caller_has_input) {
  for (;;) {
    start_ready_jobs();
    if (in_flight_.empty()) {
      std::lock_guard lock(mu_);
      if (queue_.empty()) {
        driving_ = false;
        return;
      }
      continue;  // a job arrived after start_ready_jobs looked
    }
    if (caller_has_input && (*caller_has_input)()) {
      std::lock_guard lock(mu_);
      if (!stopping_) {
        handoff_ = true;
        cv_.notify_all();
        return;
      }
      // Stopping: the device thread is gone; keep driving to drain.
    }
    on_completion(device_->wait_next(request_timeout_));
  }
}

void DeviceHost::start_ready_jobs() {
  for (;;) {
    std::shared_ptr<Job> job;
    {
      std::lock_guard lock(mu_);
      if (queue_.empty()) return;
      job = queue_.front();
      if (!(job->cancelled && job->cancelled())) {
        const bool on_device =
            job->entry && current_ == job->entry && job->entry->loaded_generation == generation_;
        const bool exclusive = job->kind == Job::Kind::load || job->kind == Job::Kind::loop ||
                               (job->kind == Job::Kind::run && !on_device);
        if (exclusive && !in_flight_.empty()) return;
        if (job->kind == Job::Kind::run && in_flight_.size() >= info_.queue_depth) return;
      } else {
        job.reset();
      }
      queue_.pop_front();
    }
    if (job) execute(job);
  }
}

Result<void> DeviceHost::ensure_current(const std::shared_ptr<ModelEntry>& entry) {
  if (current_ == entry && entry->loaded_generation == generation_) return {};
  // Another model is on the device: load this one again from its source.
  ++generation_;
  current_.reset();
  auto loaded = device_->load(entry->source);
  if (!loaded) return tl::unexpected(loaded.error());
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

void DeviceHost::finish(const std::shared_ptr<Job>& job, JobOutcome outcome) {
  if (job->answered) return;
  job->answered = true;
  if (outcome.completed_at == Nanos(0)) outcome.completed_at = steady_now();
  job->done(*job, std::move(outcome));
}

void DeviceHost::execute(const std::shared_ptr<Job>& job) {
  JobOutcome outcome;
  outcome.started_at = steady_now();
  auto failed = [&](const Error& e) {
    outcome.error = e;
    finish(job, std::move(outcome));
  };
  switch (job->kind) {
    case Job::Kind::sensors:
      outcome.sensors = device_->read_sensors();
      finish(job, std::move(outcome));
      return;
    case Job::Kind::load: {
      ++generation_;
      current_.reset();
      auto loaded = device_->load(job->entry->source);
      if (!loaded) return failed(loaded.error());
      job->entry->info = device_->model_info();
      job->entry->loaded_generation = generation_;
      current_ = job->entry;
      outcome.load = *loaded;
      finish(job, std::move(outcome));
      return;
    }
    case Job::Kind::loop: {
      if (auto ok = ensure_current(job->entry); !ok) return failed(ok.error());
      auto binding = ensure_bound(job->lease->slot());
      if (!binding) return failed(binding.error());
      outcome.started_at = steady_now();
      auto run = device_->run_for_duration(*binding, job->duration, job->sleep_between_frames);
      if (!run) return failed(run.error());
      outcome.loop = *run;
      finish(job, std::move(outcome));
      return;
    }
    case Job::Kind::run: {
      if (auto ok = ensure_current(job->entry); !ok) return failed(ok.error());
      auto binding = ensure_bound(job->lease->slot());
      if (!binding) return failed(binding.error());
      const uint64_t tag = next_tag_++;
      job->submitted_at = steady_now();
      job->device_submitted_at = device_->clock().now();
      if (auto ok = device_->submit(*binding, tag); !ok) return failed(ok.error());
      in_flight_.emplace(tag, job);
      return;
    }
  }
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
    // Requests the device no longer holds will never complete.
    if (device_->in_flight() == 0) in_flight_.clear();
    return;
  }
  auto it = in_flight_.find(completion->tag);
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

// The cpu device: a pool of inference workers on the host, over one of two
// runtimes (cpu_runtime.hpp: OpenCV DNN or ONNX Runtime).
//
// Threads: the engine's thread calls every Device method. Each worker thread
// owns one runtime Session (all made from the same bytes) and takes requests
// from a queue bounded by `depth`; finished requests go to a completion queue
// that wait_next() drains. run(), run_for_duration() and profile_layers()
// borrow worker 0's Session under its mutex; run() is safe even while
// requests are in flight (the other two are refused then: DeviceBase).
// The bindings, the in-flight count and the checks are DeviceBase's.
//
// Timing of one inference (InferenceTimings): the runtime's (Session::infer),
// plus queue_wait (submit only): from submit() until a worker starts it.
#include "devices/cpu/cpu_device.hpp"

#include "core/device_base.hpp"
#include "devices/cpu/cpu_runtime.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>

#include "rig/model.hpp"
#include "rig/units.hpp"

namespace rig {
namespace {

struct Request {
  BindingId binding = 0;
  uint64_t tag = 0;
  cpu::BoundBuffers* buffers = nullptr;  // owned by CpuDevice::bound_, stable while in flight
  Nanos submitted_at{0};
};

struct Worker {
  std::unique_ptr<cpu::Session> session;
  std::mutex net_mutex;  // held by the worker thread, run(), run_for_duration(), profile_layers()
  std::thread thread;
};

class CpuDevice final : public DeviceBase {
 public:
  CpuDevice(cpu::CpuConfig config, std::unique_ptr<cpu::Runtime> runtime)
      : config_(std::move(config)), runtime_(std::move(runtime)) {}
  ~CpuDevice() override { stop_workers(); }

  CpuDevice(const CpuDevice&) = delete;
  CpuDevice& operator=(const CpuDevice&) = delete;

  DeviceInfo info() const override {
    DeviceInfo info;
    info.spec = "cpu:runtime=" + std::string(cpu::to_string(config_.runtime)) +
                ",threads=" + std::to_string(config_.threads);
    if (config_.runtime == cpu::RuntimeKind::ort)
      info.spec += ",inter_threads=" + std::to_string(config_.inter_threads) +
                   ",optimization=" + config_.optimization + ",execution=" + config_.execution;
    info.spec +=
        ",workers=" + std::to_string(config_.workers) + ",depth=" + std::to_string(config_.depth);
    info.kind = "cpu";
    info.queue_depth = config_.depth;
    info.in_process = true;
    info.clock = ClockKind::real;
    info.properties = {
        {"runtime", std::string(cpu::to_string(config_.runtime))},
        {"threads", std::to_string(config_.threads)},
        {"workers", std::to_string(config_.workers)},
        {"depth", std::to_string(config_.depth)},
        {"target", "cpu"},
    };
    runtime_->describe(info);
    const unsigned cores = std::thread::hardware_concurrency();
    if (cores != 0 && config_.threads > cores)
      info.warnings.push_back("threads=" + std::to_string(config_.threads) + " exceeds the " +
                              std::to_string(cores) + " hardware threads");
    return info;
  }

  Clock& clock() override { return steady_clock(); }

  void cancel() override {
    {
      std::lock_guard lock(cancel_mu_);
      if (!looping_) return;
      cancelled_ = true;
    }
    cancel_cv_.notify_all();
  }

  ByteCounters bytes() const override {
    return ByteCounters{payload_in_.load(), payload_out_.load(), 0, 0};
  }

 protected:
  Result<LoadTimings> do_load(const ModelSource& source, ModelInfo& model) override;
  Result<void> do_bind(BindingId id, const Bindings& buffers) override;
  Result<InferenceTimings> do_run(BindingId binding) override;
  Result<void> do_submit(BindingId binding, uint64_t tag) override;
  Result<Completion> do_wait_next(Nanos timeout) override;
  Result<DurationRun> do_run_for_duration(BindingId binding, Nanos duration,
                                          Nanos sleep_between_frames) override;
  bool has_layer_profiler() const override { return true; }
  Result<LayerProfile> do_profile_layers(BindingId binding, uint32_t runs) override;
  uint32_t queue_depth() const override { return config_.depth; }

 private:
  // cancel(): a running run_for_duration stops after the frame in progress
  // (counted as aborted) or during its sleep between frames.
  std::mutex cancel_mu_;
  std::condition_variable cancel_cv_;
  bool looping_ = false, cancelled_ = false;
  bool cancel_requested() {
    std::lock_guard lock(cancel_mu_);
    return cancelled_;
  }
  // Sleeps `d` unless cancelled first; false when cancelled.
  bool sleep_unless_cancelled(Nanos d) {
    std::unique_lock lock(cancel_mu_);
    return !cancel_cv_.wait_for(lock, d, [&] { return cancelled_; });
  }

  Result<InferenceTimings> infer(Worker& worker, cpu::BoundBuffers& buffers);
  void release_model();
  void start_workers(
      std::vector<std::unique_ptr<cpu::Session>> sessions);  // after the model is set
  void worker_loop(Worker& worker);
  void stop_workers();

  const cpu::CpuConfig config_;
  const std::unique_ptr<cpu::Runtime> runtime_;
  std::vector<std::unique_ptr<Worker>> workers_;
  // The runtime's side of each binding, by id; stable while requests are in flight.
  std::vector<std::unique_ptr<cpu::BoundBuffers>> bound_;

  mutable std::mutex mutex_;  // guards everything below
  std::condition_variable work_cv_;
  std::condition_variable done_cv_;
  std::deque<Request> queue_;
  std::deque<Completion> done_;
  bool stopping_ = false;

  std::atomic<uint64_t> payload_in_{0};
  std::atomic<uint64_t> payload_out_{0};
};

void CpuDevice::stop_workers() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  work_cv_.notify_all();
  for (auto& worker : workers_)
    if (worker->thread.joinable()) worker->thread.join();
  workers_.clear();
  std::lock_guard lock(mutex_);
  stopping_ = false;
  queue_.clear();
  done_.clear();
}

Result<LoadTimings> CpuDevice::do_load(const ModelSource& source, ModelInfo& info) {
  // A failed load leaves no model loaded: the old one is released up front.
  release_model();

  Clock& clk = clock();
  LoadTimings timings;
  const Nanos t0 = clk.now();
  // The normalisation pass (with its inspection) counts as parsing.
  auto model = read_model_source(source);
  if (!model) return tl::unexpected(model.error());
  const Nanos t1 = clk.now();
  timings.read = t1 - t0;
  auto loaded =
      runtime_->load(std::move(*model), model_display_name(source), source.shapes, timings);
  if (!loaded) return tl::unexpected(loaded.error());
  info = std::move(loaded->info);
  start_workers(std::move(loaded->sessions));
  return timings;
}

void CpuDevice::release_model() {
  stop_workers();
  bound_.clear();
}

void CpuDevice::start_workers(std::vector<std::unique_ptr<cpu::Session>> sessions) {
  for (auto& session : sessions) {
    auto worker = std::make_unique<Worker>();
    worker->session = std::move(session);
    workers_.push_back(std::move(worker));
  }
  for (auto& worker : workers_)
    worker->thread = std::thread([this, w = worker.get()] { worker_loop(*w); });
}

Result<void> CpuDevice::do_bind(BindingId id, const Bindings& buffers) {
  auto bound = runtime_->bind(model_info(), buffers);
  if (!bound) return tl::unexpected(bound.error());
  bound_.resize(std::max<size_t>(bound_.size(), id + size_t{1}));
  bound_[id] = std::move(*bound);
  return {};
}

// Caller holds worker.net_mutex.
Result<InferenceTimings> CpuDevice::infer(Worker& worker, cpu::BoundBuffers& buffers) {
  auto timings = worker.session->infer(buffers);
  if (timings) {
    payload_in_ += model_info().input_bytes();
    payload_out_ += model_info().output_bytes();
  }
  return timings;
}

Result<InferenceTimings> CpuDevice::do_run(BindingId id) {
  Worker& worker = *workers_.front();
  std::lock_guard lock(worker.net_mutex);
  return infer(worker, *bound_[id]);
}

Result<void> CpuDevice::do_submit(BindingId id, uint64_t tag) {
  {
    std::lock_guard lock(mutex_);
    queue_.push_back(Request{id, tag, bound_[id].get(), clock().now()});
  }
  work_cv_.notify_one();
  return {};
}

Result<Completion> CpuDevice::do_wait_next(Nanos timeout) {
  // Bounded so that now() + timeout cannot overflow.
  const Nanos bounded = std::clamp(timeout, Nanos{0}, Nanos{std::chrono::hours(24 * 365)});
  Completion completion;
  {
    std::unique_lock lock(mutex_);
    const auto deadline = std::chrono::steady_clock::now() + bounded;
    if (!done_cv_.wait_until(lock, deadline, [&] { return !done_.empty(); }))
      return fail(ErrorCode::timeout, "no completion within " + format_duration(timeout) + " (" +
                                          std::to_string(outstanding()) + " in flight)");
    completion = std::move(done_.front());
    done_.pop_front();
  }
  return completion;
}

void CpuDevice::worker_loop(Worker& worker) {
  while (true) {
    Request request;
    {
      std::unique_lock lock(mutex_);
      work_cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      request = queue_.front();
      queue_.pop_front();
    }
    Completion completion;
    completion.tag = request.tag;
    completion.binding = request.binding;
    {
      std::lock_guard net_lock(worker.net_mutex);
      const Nanos started = clock().now();
      auto timings = infer(worker, *request.buffers);
      if (timings)
        completion.timings = *timings;
      else
        completion.error = timings.error();
      completion.timings.queue_wait = started - request.submitted_at;
    }
    completion.completed_at = clock().now();
    {
      std::lock_guard lock(mutex_);
      done_.push_back(std::move(completion));
    }
    done_cv_.notify_one();
  }
}

Result<DurationRun> CpuDevice::do_run_for_duration(BindingId id, Nanos duration,
                                                   Nanos sleep_between_frames) {
  cpu::BoundBuffers& buffers = *bound_[id];

  Worker& worker = *workers_.front();
  std::lock_guard lock(worker.net_mutex);
  Clock& clk = clock();
  DurationRun run;
  {
    std::lock_guard cancel_lock(cancel_mu_);
    looping_ = true;
    cancelled_ = false;
  }
  struct LoopEnd {
    CpuDevice& d;
    ~LoopEnd() {
      std::lock_guard cancel_lock(d.cancel_mu_);
      d.looping_ = false;
    }
  } loop_end{*this};
  uint64_t completed = 0, aborted = 0;
  if (auto ok = worker.session->loop_begin(buffers); !ok) return tl::unexpected(ok.error());
  payload_in_ += model_info().input_bytes();
  const Nanos start = clk.now();
  Nanos deadline = start + duration;
  // A frame that ends after the deadline, or after cancel(), is aborted,
  // never completed.
  while (clk.now() < deadline) {
    if (auto ok = worker.session->loop_forward(); !ok) return tl::unexpected(ok.error());
    if (clk.now() > deadline || cancel_requested()) {
      ++aborted;
      break;
    }
    ++completed;
    if (sleep_between_frames > Nanos{0} && !sleep_unless_cancelled(sleep_between_frames)) break;
  }
  if (cancel_requested()) deadline = std::min(deadline, clk.now());
  run.elapsed = std::min(clk.now(), deadline) - start;
  // Same inputs give the same outputs, so the runtime's latest outputs are
  // the last completed frame's, even when a later frame was aborted.
  if (completed > 0) {
    if (auto ok = worker.session->loop_end(buffers); !ok) return tl::unexpected(ok.error());
    payload_out_ += model_info().output_bytes();
  }
  run.frames_completed = completed;
  run.frames_aborted = aborted;
  const double seconds = std::chrono::duration<double>(run.elapsed).count();
  run.frames_per_second = seconds > 0 ? static_cast<double>(completed) / seconds : 0.0;
  return run;
}

Result<LayerProfile> CpuDevice::do_profile_layers(BindingId id, uint32_t runs) {
  Worker& worker = *workers_.front();
  std::lock_guard lock(worker.net_mutex);
  auto profile = worker.session->profile(*bound_[id], runs);
  if (!profile) return tl::unexpected(profile.error());
  profile->runs = runs;
  return profile;
}

}  // namespace

Result<std::unique_ptr<Device>> open_cpu_device(const std::map<std::string, std::string>& params) {
  auto config = cpu::parse_cpu_config(params);
  if (!config) return tl::unexpected(config.error());
  std::unique_ptr<cpu::Runtime> runtime;
  if (config->runtime == cpu::RuntimeKind::ort) {
    auto ort = cpu::make_ort_runtime(*config);
    if (!ort) return tl::unexpected(ort.error());
    runtime = std::move(*ort);
  } else {
    runtime = cpu::make_opencv_runtime(*config);
  }
  return std::unique_ptr<Device>(std::make_unique<CpuDevice>(*config, std::move(runtime)));
}

}  // namespace rig

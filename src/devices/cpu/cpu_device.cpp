// The cpu device: OpenCV DNN on the host, with a pool of inference workers.
//
// Threads: the engine's thread calls every Device method. Each worker thread
// owns one cv::dnn::Net (all parsed from the same bytes) and takes requests
// from a queue bounded by `depth`; finished requests go to a completion queue
// that wait_next() drains. run() and run_for_duration() borrow worker 0's Net
// under its mutex, so they are safe even while requests are in flight.
//
// Timing of one inference (InferenceTimings):
//   transfer_in   Net::setInput from the caller's buffer (OpenCV copies it)
//   compute       Net::forward
//   transfer_out  copying the outputs into the caller's buffers
//   queue_wait    (submit only) from submit() until a worker starts it
//
// OpenCV throws cv::Exception (and protobuf may throw from the importer);
// every OpenCV call is wrapped so that failures leave as Error values. The
// import (ONNX bytes to configured nets) is opencv_import.cpp's.
#include "devices/cpu/cpu_device.hpp"

#include "devices/cpu/opencv_import.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>

#include <opencv2/core.hpp>
#include <opencv2/dnn.hpp>

#include "rig/model.hpp"
#include "rig/units.hpp"

namespace rig {
namespace {

constexpr uint64_t kMaxThreads = 1024;
constexpr uint64_t kMaxWorkers = 64;
constexpr uint64_t kMaxDepth = 4096;

struct CpuConfig {
  uint32_t threads = 1;
  uint32_t workers = 1;
  uint32_t depth = 2;
};

Result<CpuConfig> parse_config(const std::map<std::string, std::string>& params) {
  static const char* const known[] = {"threads", "workers", "depth"};
  for (const auto& param : params) {
    const std::string& key = param.first;
    if (std::find(std::begin(known), std::end(known), key) == std::end(known))
      return fail(ErrorCode::invalid_argument,
                  "unknown cpu parameter '" + key + "' (known: threads, workers, depth)");
  }
  auto count = [&](const std::string& key, uint64_t fallback, uint64_t max) -> Result<uint32_t> {
    auto it = params.find(key);
    if (it == params.end()) return static_cast<uint32_t>(fallback);
    auto value = parse_count(it->second);
    if (!value || *value < 1 || *value > max)
      return fail(ErrorCode::invalid_argument, "cpu parameter " + key + "='" + it->second +
                                                   "' must be an integer from 1 to " +
                                                   std::to_string(max));
    return static_cast<uint32_t>(*value);
  };
  CpuConfig config;
  auto threads = count("threads", std::max(1u, std::thread::hardware_concurrency()), kMaxThreads);
  if (!threads) return tl::unexpected(threads.error());
  auto workers = count("workers", 1, kMaxWorkers);
  if (!workers) return tl::unexpected(workers.error());
  auto depth = count("depth", 2 * uint64_t{*workers}, kMaxDepth);
  if (!depth) return tl::unexpected(depth.error());
  config.threads = *threads;
  config.workers = *workers;
  config.depth = *depth;
  return config;
}

// cv::Mat depth holding `t` unchanged; -1 when OpenCV has none (i64).
int cv_depth(ElementType t) {
  switch (t) {
    case ElementType::f32:
      return CV_32F;
    case ElementType::f16:
      return CV_16F;
    case ElementType::f64:
      return CV_64F;
    case ElementType::u8:
      return CV_8U;
    case ElementType::boolean:
      return CV_8U;
    case ElementType::i8:
      return CV_8S;
    case ElementType::u16:
      return CV_16U;
    case ElementType::i16:
      return CV_16S;
    case ElementType::i32:
      return CV_32S;
    case ElementType::i64:
      return -1;
  }
  return -1;
}

std::string opencv_version() {
  return CV_VERSION;
}

struct Request {
  BindingId binding = 0;
  uint64_t tag = 0;
  const Bindings* buffers = nullptr;  // owned by CpuDevice::bindings_, stable while in flight
  Nanos submitted_at{0};
};

struct Worker {
  cv::dnn::Net net;
  std::mutex net_mutex;          // held by the worker thread, run() and run_for_duration()
  std::vector<cv::Mat> inputs;   // scratch for inputs OpenCV cannot take as they are
  std::vector<cv::Mat> outputs;  // what forward() returned last
  std::thread thread;
};

class CpuDevice final : public Device {
 public:
  explicit CpuDevice(CpuConfig config) : config_(config) {}
  ~CpuDevice() override { stop_workers(); }

  CpuDevice(const CpuDevice&) = delete;
  CpuDevice& operator=(const CpuDevice&) = delete;

  DeviceInfo info() const override {
    DeviceInfo info;
    info.spec = "cpu:threads=" + std::to_string(config_.threads) +
                ",workers=" + std::to_string(config_.workers) +
                ",depth=" + std::to_string(config_.depth);
    info.kind = "cpu";
    info.description = "OpenCV " + opencv_version() + " DNN on the host CPU (" +
                       std::to_string(config_.threads) + " threads, " +
                       std::to_string(config_.workers) + " workers)";
    info.queue_depth = config_.depth;
    info.in_process = true;
    info.clock = ClockKind::real;
    info.properties = {
        {"opencv_version", opencv_version()},
        {"threads", std::to_string(config_.threads)},
        {"workers", std::to_string(config_.workers)},
        {"depth", std::to_string(config_.depth)},
        {"backend", "opencv"},
        {"target", "cpu"},
    };
    const unsigned cores = std::thread::hardware_concurrency();
    if (cores != 0 && config_.threads > cores)
      info.warnings.push_back("threads=" + std::to_string(config_.threads) + " exceeds the " +
                              std::to_string(cores) + " hardware threads");
    return info;
  }

  Clock& clock() override { return steady_clock(); }

  Result<LoadTimings> load(const ModelSource& source) override;

  const ModelInfo& model_info() const override { return model_; }

  Result<BindingId> bind(const Bindings& buffers) override;
  Result<InferenceTimings> run(BindingId binding) override;
  Result<void> submit(BindingId binding, uint64_t tag) override;
  Result<Completion> wait_next(Nanos timeout) override;

  uint32_t in_flight() const override {
    std::lock_guard lock(mutex_);
    return in_flight_;
  }

  void cancel() override {
    {
      std::lock_guard lock(cancel_mu_);
      if (!looping_) return;
      cancelled_ = true;
    }
    cancel_cv_.notify_all();
  }
  Result<DurationRun> run_for_duration(BindingId binding, Nanos duration,
                                       Nanos sleep_between_frames) override;

  ByteCounters bytes() const override {
    return ByteCounters{payload_in_.load(), payload_out_.load(), 0, 0};
  }

 private:
  struct Binding {
    Bindings buffers;
    bool busy = false;  // a request is in flight; touched by the engine thread only
  };

  Result<Binding*> usable_binding(BindingId id);
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

  Result<void> set_inputs(Worker& worker, const Bindings& buffers);
  Result<void> copy_outputs(Worker& worker, const Bindings& buffers);
  Result<InferenceTimings> infer(Worker& worker, const Bindings& buffers);
  void release_model();
  void start_workers(std::vector<cv::dnn::Net> nets);  // after model_ is set
  void worker_loop(Worker& worker);
  void stop_workers();

  const CpuConfig config_;
  ModelInfo model_;
  bool loaded_ = false;
  std::vector<std::string> output_names_;  // OpenCV names of model_.outputs, same order
  std::vector<std::unique_ptr<Worker>> workers_;
  std::map<BindingId, std::unique_ptr<Binding>> bindings_;
  BindingId next_binding_ = 1;

  mutable std::mutex mutex_;  // guards everything below
  std::condition_variable work_cv_;
  std::condition_variable done_cv_;
  std::deque<Request> queue_;
  std::deque<Completion> done_;
  uint32_t in_flight_ = 0;  // submitted and not yet returned by wait_next
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
  in_flight_ = 0;
}

Result<LoadTimings> CpuDevice::load(const ModelSource& source) {
  if (in_flight() > 0)
    return fail(ErrorCode::invalid_argument,
                "load() with " + std::to_string(in_flight()) +
                    " requests in flight; collect them with wait_next() first");
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
  auto normalized =
      prepare_onnx_model(std::move(*model), model_display_name(source), source.shapes);
  if (!normalized) return tl::unexpected(normalized.error());
  std::optional<ModelInfo> info = std::move(normalized->info);
  const std::span<const std::byte> bytes = normalized->model.bytes;
  const cpu::OpenCvModel prepared = cpu::prepare_for_opencv(bytes, *info);
  auto nets = cpu::import_nets(bytes, prepared, config_.workers);
  if (!nets) return tl::unexpected(nets.error());
  const Nanos t2 = clk.now();
  timings.parse = t2 - t1;

  auto names = cpu::configure_nets(*nets, *info, prepared.op_types);
  if (!names) return tl::unexpected(names.error());
  model_ = std::move(*info);
  output_names_ = std::move(*names);
  start_workers(std::move(*nets));
  loaded_ = true;
  timings.compile = clk.now() - t2;
  return timings;
}

void CpuDevice::release_model() {
  stop_workers();
  bindings_.clear();
  loaded_ = false;
  model_ = ModelInfo{};
  output_names_.clear();
}

void CpuDevice::start_workers(std::vector<cv::dnn::Net> nets) {
  for (auto& net : nets) {
    auto worker = std::make_unique<Worker>();
    worker->net = std::move(net);
    worker->inputs.resize(model_.inputs.size());
    workers_.push_back(std::move(worker));
  }
  for (auto& worker : workers_)
    worker->thread = std::thread([this, w = worker.get()] { worker_loop(*w); });
}

Result<BindingId> CpuDevice::bind(const Bindings& buffers) {
  if (!loaded_) return fail(ErrorCode::invalid_argument, "bind() before a model is loaded");
  if (auto ok = check_bindings(model_, buffers); !ok) return tl::unexpected(ok.error());
  const BindingId id = next_binding_++;
  bindings_.emplace(id, std::make_unique<Binding>(Binding{buffers, false}));
  return id;
}

Result<CpuDevice::Binding*> CpuDevice::usable_binding(BindingId id) {
  if (!loaded_) return fail(ErrorCode::invalid_argument, "no model is loaded");
  auto it = bindings_.find(id);
  if (it == bindings_.end())
    return fail(ErrorCode::not_found, "binding " + std::to_string(id) + " does not exist");
  if (it->second->busy)
    return fail(ErrorCode::invalid_argument,
                "binding " + std::to_string(id) + " already has a request in flight");
  return it->second.get();
}

// Hands the caller's inputs to the Net. u8, bool and f32 go in as they are
// (OpenCV copies them); other types are converted to f32 first.
Result<void> CpuDevice::set_inputs(Worker& worker, const Bindings& buffers) {
  for (size_t i = 0; i < model_.inputs.size(); ++i) {
    const TensorInfo& tensor = model_.inputs[i];
    std::vector<int> dims(tensor.shape.begin(), tensor.shape.end());
    if (dims.empty()) dims.push_back(1);
    void* data = const_cast<std::byte*>(buffers.inputs[i].data());  // OpenCV only reads it
    const int depth = cv_depth(tensor.type);
    if (tensor.type == ElementType::f32 || tensor.type == ElementType::u8 ||
        tensor.type == ElementType::boolean) {
      worker.net.setInput(cv::Mat(static_cast<int>(dims.size()), dims.data(), depth, data),
                          tensor.name);
      continue;
    }
    cv::Mat& converted = worker.inputs[i];
    converted.create(static_cast<int>(dims.size()), dims.data(), CV_32F);
    if (depth >= 0) {
      cv::Mat(static_cast<int>(dims.size()), dims.data(), depth, data).convertTo(converted, CV_32F);
    } else {  // i64
      const auto* src = static_cast<const int64_t*>(data);
      auto* dst = converted.ptr<float>();
      for (size_t k = 0; k < converted.total(); ++k) dst[k] = static_cast<float>(src[k]);
    }
    worker.net.setInput(converted, tensor.name);
  }
  payload_in_ += model_.input_bytes();
  return {};
}

Result<void> CpuDevice::copy_outputs(Worker& worker, const Bindings& buffers) {
  for (size_t i = 0; i < model_.outputs.size(); ++i) {
    const TensorInfo& tensor = model_.outputs[i];
    cv::Mat out = worker.outputs[i].isContinuous() ? worker.outputs[i] : worker.outputs[i].clone();
    const size_t elements = tensor.bytes / element_size(tensor.type);
    if (out.total() != elements)
      return fail(ErrorCode::device,
                  "output '" + tensor.name + "': OpenCV produced " + std::to_string(out.total()) +
                      " elements, the model declares " + std::to_string(elements));
    std::byte* dst = buffers.outputs[i].data();
    const int depth = cv_depth(tensor.type);
    if (out.depth() == depth) {
      std::memcpy(dst, out.data, tensor.bytes);
    } else if (depth >= 0) {
      cv::Mat target(out.dims, out.size.p, CV_MAKETYPE(depth, out.channels()), dst);
      out.convertTo(target, depth);
    } else {  // i64 from OpenCV's float
      cv::Mat values;
      out.convertTo(values, CV_64F);
      const auto* src = values.ptr<double>();
      for (size_t k = 0; k < elements; ++k) {
        const int64_t v = static_cast<int64_t>(src[k]);
        std::memcpy(dst + k * sizeof v, &v, sizeof v);
      }
    }
  }
  payload_out_ += model_.output_bytes();
  return {};
}

// Caller holds worker.net_mutex.
Result<InferenceTimings> CpuDevice::infer(Worker& worker, const Bindings& buffers) {
  Clock& clk = clock();
  InferenceTimings timings;
  try {
    const Nanos t0 = clk.now();
    if (auto ok = set_inputs(worker, buffers); !ok) return tl::unexpected(ok.error());
    const Nanos t1 = clk.now();
    worker.net.forward(worker.outputs, output_names_);
    const Nanos t2 = clk.now();
    if (auto ok = copy_outputs(worker, buffers); !ok) return tl::unexpected(ok.error());
    const Nanos t3 = clk.now();
    timings.transfer_in = t1 - t0;
    timings.compute = t2 - t1;
    timings.transfer_out = t3 - t2;
  } catch (const std::exception& e) {
    return fail(ErrorCode::device, "OpenCV inference failed: " + cpu::short_reason(e.what()));
  }
  return timings;
}

Result<InferenceTimings> CpuDevice::run(BindingId id) {
  auto binding = usable_binding(id);
  if (!binding) return tl::unexpected(binding.error());
  Worker& worker = *workers_.front();
  std::lock_guard lock(worker.net_mutex);
  return infer(worker, (*binding)->buffers);
}

Result<void> CpuDevice::submit(BindingId id, uint64_t tag) {
  auto binding = usable_binding(id);
  if (!binding) return tl::unexpected(binding.error());
  {
    std::lock_guard lock(mutex_);
    if (in_flight_ >= config_.depth)
      return fail(ErrorCode::queue_full, "queue full: " + std::to_string(in_flight_) +
                                             " requests in flight (depth " +
                                             std::to_string(config_.depth) + ")");
    queue_.push_back(Request{id, tag, &(*binding)->buffers, clock().now()});
    ++in_flight_;
  }
  (*binding)->busy = true;
  work_cv_.notify_one();
  return {};
}

Result<Completion> CpuDevice::wait_next(Nanos timeout) {
  // Bounded so that now() + timeout cannot overflow.
  const Nanos bounded = std::clamp(timeout, Nanos{0}, Nanos{std::chrono::hours(24 * 365)});
  Completion completion;
  {
    std::unique_lock lock(mutex_);
    if (in_flight_ == 0)
      return fail(ErrorCode::invalid_argument, "wait_next() with nothing in flight");
    const auto deadline = std::chrono::steady_clock::now() + bounded;
    if (!done_cv_.wait_until(lock, deadline, [&] { return !done_.empty(); }))
      return fail(ErrorCode::timeout, "no completion within " + format_duration(timeout) + " (" +
                                          std::to_string(in_flight_) + " in flight)");
    completion = std::move(done_.front());
    done_.pop_front();
    --in_flight_;
  }
  if (auto it = bindings_.find(completion.binding); it != bindings_.end()) it->second->busy = false;
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

Result<DurationRun> CpuDevice::run_for_duration(BindingId id, Nanos duration,
                                                Nanos sleep_between_frames) {
  if (duration <= Nanos{0})
    return fail(ErrorCode::invalid_argument, "run_for_duration: duration must be > 0");
  if (sleep_between_frames < Nanos{0})
    return fail(ErrorCode::invalid_argument, "run_for_duration: sleep must be >= 0");
  auto binding = usable_binding(id);
  if (!binding) return tl::unexpected(binding.error());
  const Bindings& buffers = (*binding)->buffers;

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
  try {
    if (auto ok = set_inputs(worker, buffers); !ok) return tl::unexpected(ok.error());
    const Nanos start = clk.now();
    Nanos deadline = start + duration;
    // A frame that ends after the deadline, or after cancel(), is aborted,
    // never completed.
    while (clk.now() < deadline) {
      worker.net.forward(worker.outputs, output_names_);
      if (clk.now() > deadline || cancel_requested()) {
        ++aborted;
        break;
      }
      ++completed;
      if (sleep_between_frames > Nanos{0} && !sleep_unless_cancelled(sleep_between_frames)) break;
    }
    if (cancel_requested()) deadline = std::min(deadline, clk.now());
    run.elapsed = std::min(clk.now(), deadline) - start;
    // Same inputs give the same outputs, so the Net's latest outputs are the
    // last completed frame's, even when a later frame was aborted.
    if (completed > 0)
      if (auto ok = copy_outputs(worker, buffers); !ok) return tl::unexpected(ok.error());
  } catch (const std::exception& e) {
    return fail(ErrorCode::device, "OpenCV inference failed: " + cpu::short_reason(e.what()));
  }
  run.frames_completed = completed;
  run.frames_aborted = aborted;
  const double seconds = std::chrono::duration<double>(run.elapsed).count();
  run.frames_per_second = seconds > 0 ? static_cast<double>(completed) / seconds : 0.0;
  return run;
}

}  // namespace

Result<std::unique_ptr<Device>> open_cpu_device(const std::map<std::string, std::string>& params) {
  auto config = parse_config(params);
  if (!config) return tl::unexpected(config.error());
  // OpenCV's thread count is process-wide: the last cpu device opened sets it.
  cv::setNumThreads(static_cast<int>(config->threads));
  return std::unique_ptr<Device>(std::make_unique<CpuDevice>(*config));
}

}  // namespace rig

// The null device: submit puts a completion on a queue, wait_next takes it
// off; no thread, no copy, no sleep. Its clock is the host's steady clock.
#include "devices/null/null_device.hpp"

#include <atomic>
#include <deque>

#include "rig/model.hpp"
#include "rig/units.hpp"

namespace rig {
namespace {

class NullDevice final : public Device {
 public:
  explicit NullDevice(uint32_t depth) : depth_(depth) {}

  DeviceInfo info() const override {
    DeviceInfo i;
    i.spec = "null:depth=" + std::to_string(depth_);
    i.kind = "null";
    i.description = "null device: completes every request at once, copies nothing";
    i.queue_depth = depth_;
    i.in_process = true;
    i.clock = ClockKind::real;
    return i;
  }

  Clock& clock() override { return steady_clock(); }

  Result<LoadTimings> load(const ModelSource& source) override {
    bindings_.clear();
    ready_.clear();
    loaded_ = false;
    auto model = read_model_source(source);
    if (!model) return tl::unexpected(model.error());
    auto info = inspect_onnx(model->bytes, model_display_name(source));
    if (!info) return tl::unexpected(info.error());
    model_ = std::move(*info);
    loaded_ = true;
    return LoadTimings{};
  }

  const ModelInfo& model_info() const override { return model_; }

  Result<BindingId> bind(const Bindings& b) override {
    if (!loaded_) return fail(ErrorCode::invalid_argument, "bind: no model loaded");
    if (auto ok = check_bindings(model_, b); !ok) return tl::unexpected(ok.error());
    bindings_.push_back(true);
    return static_cast<BindingId>(bindings_.size() - 1);
  }

  Result<InferenceTimings> run(BindingId binding) override {
    if (auto ok = usable(binding); !ok) return tl::unexpected(ok.error());
    return InferenceTimings{};
  }

  Result<void> submit(BindingId binding, uint64_t tag) override {
    if (auto ok = usable(binding); !ok) return ok;
    if (ready_.size() >= depth_)
      return fail(ErrorCode::queue_full,
                  "null queue depth " + std::to_string(depth_) + " already in flight");
    Completion c;
    c.tag = tag;
    c.binding = binding;
    c.completed_at = steady_clock().now();
    ready_.push_back(c);
    return {};
  }

  Result<Completion> wait_next(Nanos /*timeout*/) override {
    if (ready_.empty()) return fail(ErrorCode::invalid_argument, "wait_next: nothing in flight");
    Completion c = ready_.front();
    ready_.pop_front();
    return c;
  }

  uint32_t in_flight() const override { return static_cast<uint32_t>(ready_.size()); }

  Result<DurationRun> run_for_duration(BindingId binding, Nanos duration,
                                       Nanos sleep_between) override {
    if (auto ok = usable(binding); !ok) return tl::unexpected(ok.error());
    if (!ready_.empty())
      return fail(ErrorCode::invalid_argument, "run_for_duration: requests still in flight");
    if (duration <= Nanos(0))
      return fail(ErrorCode::invalid_argument, "run_for_duration: duration must be > 0");
    if (sleep_between < Nanos(0))
      return fail(ErrorCode::invalid_argument,
                  "run_for_duration: sleep between frames must not be negative");
    cancelled_.store(false);
    Clock& clock = steady_clock();
    const Nanos start = clock.now(), end = start + duration;
    DurationRun r;
    uint64_t completed = 0;
    for (Nanos now = start; now < end && !cancelled_.load(std::memory_order_relaxed);) {
      ++completed;
      if (sleep_between > Nanos(0)) clock.sleep_until(now + sleep_between);
      now = clock.now();
    }
    r.elapsed = clock.now() - start;
    r.frames_completed = completed;
    r.frames_aborted = 0;  // a null frame takes no time: none is cut off
    if (r.elapsed > Nanos(0))
      r.frames_per_second = static_cast<double>(completed) / to_seconds(r.elapsed);
    return r;
  }

  // Nothing is read or written: no bytes move.
  ByteCounters bytes() const override { return {}; }

  void cancel() override { cancelled_.store(true); }

 private:
  Result<void> usable(BindingId binding) const {
    if (!loaded_) return fail(ErrorCode::invalid_argument, "no model loaded");
    if (binding >= bindings_.size())
      return fail(ErrorCode::invalid_argument, "unknown binding " + std::to_string(binding));
    return {};
  }

  uint32_t depth_;
  ModelInfo model_;
  bool loaded_ = false;
  std::vector<bool> bindings_;
  std::deque<Completion> ready_;
  std::atomic<bool> cancelled_{false};
};

}  // namespace

Result<std::unique_ptr<Device>> open_null_device(const std::map<std::string, std::string>& params) {
  uint32_t depth = 1024;
  for (const auto& [key, value] : params) {
    if (key != "depth")
      return fail(ErrorCode::invalid_argument,
                  "unknown null parameter '" + key + "' (known: depth)");
    auto n = parse_count(value);
    if (!n || *n == 0 || *n > 65536)
      return fail(ErrorCode::invalid_argument,
                  "null parameter depth=" + value + ": an integer in 1..65536");
    depth = static_cast<uint32_t>(*n);
  }
  return std::unique_ptr<Device>(std::make_unique<NullDevice>(depth));
}

}  // namespace rig

// The null device: submit puts a completion on a queue, wait_next takes it
// off; no thread, no copy, no sleep. Its clock is the host's steady clock.
#include "devices/null/null_device.hpp"

#include "core/device_base.hpp"

#include <atomic>
#include <deque>

#include "rig/model.hpp"
#include "rig/units.hpp"

namespace rig {
namespace {

class NullDevice final : public DeviceBase {
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

  // Nothing is read or written: no bytes move.
  ByteCounters bytes() const override { return {}; }

  void cancel() override { cancelled_.store(true); }

 protected:
  Result<LoadTimings> do_load(const ModelSource& source, ModelInfo& model) override {
    ready_.clear();
    auto bytes = read_model_source(source);
    if (!bytes) return tl::unexpected(bytes.error());
    auto info = inspect_onnx(bytes->bytes, model_display_name(source));
    if (!info) return tl::unexpected(info.error());
    model = std::move(*info);
    return LoadTimings{};
  }

  Result<InferenceTimings> do_run(BindingId) override { return InferenceTimings{}; }

  // The request stays in flight (it holds its queue slot) until wait_next
  // returns it.
  Result<void> do_submit(BindingId binding, uint64_t tag) override {
    Completion c;
    c.tag = tag;
    c.binding = binding;
    c.completed_at = steady_clock().now();
    ready_.push_back(c);
    return {};
  }

  Result<Completion> do_wait_next(Nanos /*timeout*/) override {
    Completion c = ready_.front();
    ready_.pop_front();
    return c;
  }

  Result<DurationRun> do_run_for_duration(BindingId, Nanos duration, Nanos sleep_between) override {
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

  uint32_t queue_depth() const override { return depth_; }

 private:
  uint32_t depth_;
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

#include "core/device_base.hpp"

#include <string>
#include <utility>

namespace rig {

Result<LoadTimings> DeviceBase::load(const ModelSource& source) {
  if (const uint32_t n = in_flight(); n > 0)
    return fail(
        ErrorCode::invalid_argument,
        "load: " + std::to_string(n) + " requests in flight; collect them with wait_next first");
  // Finished requests nobody collected belong to the model being replaced.
  delivered_.clear();
  outstanding_ = 0;
  bindings_.clear();
  loaded_ = false;
  model_ = ModelInfo{};
  auto timings = do_load(source, model_);
  if (!timings) {
    model_ = ModelInfo{};
    return timings;
  }
  loaded_ = true;
  return timings;
}

Result<BindingId> DeviceBase::bind(const Bindings& buffers) {
  if (!loaded_) return fail(ErrorCode::invalid_argument, "bind: no model loaded");
  if (auto ok = check_bindings(model_, buffers); !ok) return tl::unexpected(ok.error());
  const auto id = static_cast<BindingId>(bindings_.size());
  if (auto ok = do_bind(id, buffers); !ok) return tl::unexpected(ok.error());
  bindings_.push_back(Binding{buffers, false});
  return id;
}

Result<void> DeviceBase::usable(const char* call, BindingId binding, bool busy_ok) const {
  if (!loaded_) return fail(ErrorCode::invalid_argument, std::string(call) + ": no model loaded");
  if (binding >= bindings_.size())
    return fail(ErrorCode::invalid_argument,
                std::string(call) + ": unknown binding " + std::to_string(binding));
  if (!busy_ok && bindings_[binding].busy)
    return fail(ErrorCode::invalid_argument, std::string(call) + ": binding " +
                                                 std::to_string(binding) +
                                                 " already has a request in flight");
  return {};
}

Result<InferenceTimings> DeviceBase::run(BindingId binding) {
  if (auto ok = usable("run", binding, false); !ok) return tl::unexpected(ok.error());
  return do_run(binding);
}

Result<void> DeviceBase::submit(BindingId binding, uint64_t tag) {
  if (auto ok = usable("submit", binding, false); !ok) return ok;
  const uint32_t depth = queue_depth();
  if (const uint32_t n = in_flight(); n >= depth)
    return fail(ErrorCode::queue_full, "submit: queue full: " + std::to_string(n) +
                                           " requests in flight (queue depth " +
                                           std::to_string(depth) + ")");
  if (auto ok = do_submit(binding, tag); !ok) return ok;
  ++outstanding_;
  bindings_[binding].busy = true;
  return {};
}

void DeviceBase::deliver(Completion completion) {
  if (completion.binding < bindings_.size()) bindings_[completion.binding].busy = false;
  delivered_.push_back(std::move(completion));
}

std::optional<Completion> DeviceBase::take_delivered() {
  if (delivered_.empty()) return std::nullopt;
  Completion c = std::move(delivered_.front());
  delivered_.pop_front();
  return c;
}

void DeviceBase::collected(const Completion& c) {
  if (outstanding_ > 0) --outstanding_;
  if (c.binding < bindings_.size()) bindings_[c.binding].busy = false;
}

Result<Completion> DeviceBase::wait_next(Nanos timeout) {
  if (auto c = take_delivered()) {
    collected(*c);
    return std::move(*c);
  }
  if (outstanding_ == 0) return fail(ErrorCode::invalid_argument, "wait_next: nothing in flight");
  auto c = do_wait_next(timeout);
  if (c) collected(*c);
  return c;
}

Result<DurationRun> DeviceBase::run_for_duration(BindingId binding, Nanos duration,
                                                 Nanos sleep_between_frames) {
  if (auto ok = usable("run_for_duration", binding, true); !ok) return tl::unexpected(ok.error());
  if (const uint32_t n = in_flight(); n > 0)
    return fail(ErrorCode::invalid_argument,
                "run_for_duration: " + std::to_string(n) +
                    " requests in flight; collect them with wait_next first");
  if (duration <= Nanos(0))
    return fail(ErrorCode::invalid_argument, "run_for_duration: duration must be > 0");
  if (sleep_between_frames < Nanos(0))
    return fail(ErrorCode::invalid_argument,
                "run_for_duration: the sleep between frames must be >= 0");
  return do_run_for_duration(binding, duration, sleep_between_frames);
}

Result<LayerProfile> DeviceBase::profile_layers(BindingId binding, uint32_t runs) {
  if (!has_layer_profiler()) return Device::profile_layers(binding, runs);
  if (runs < 1) return fail(ErrorCode::invalid_argument, "profile_layers: runs must be >= 1");
  if (outstanding_ > 0)
    return fail(ErrorCode::invalid_argument,
                "profile_layers: " + std::to_string(outstanding_) +
                    " requests in flight; collect them with wait_next first");
  if (auto ok = usable("profile_layers", binding, true); !ok) return tl::unexpected(ok.error());
  return do_profile_layers(binding, runs);
}

Result<void> DeviceBase::do_bind(BindingId, const Bindings&) {
  return {};
}

Result<LayerProfile> DeviceBase::do_profile_layers(BindingId binding, uint32_t runs) {
  return Device::profile_layers(binding, runs);
}

}  // namespace rig

// DeviceBase: the Device calls every device shares, written once. A device
// derives from it and implements protected do_* hooks for what is its own;
// the public Device calls are final here and do the bookkeeping and the
// argument and state checks before a hook runs. (rig::Device itself stays the
// abstract interface: a test fixture may implement it directly.)
//
// What the base owns:
//  * the model's ModelInfo (do_load fills it) and whether one is loaded;
//  * the bindings table: ids 0, 1, ... in bind() order, the caller's spans
//    (bound()), and whether each binding has a request in flight (from
//    submit until wait_next returns its completion or the device delivers it);
//  * the in-flight count: requests submit() took whose completion wait_next()
//    has not returned yet ("outstanding"), and of those the ones the device
//    has already finished and handed over with deliver() (they no longer
//    occupy its queue). in_flight() is outstanding minus delivered: the
//    requests on the device, which queue_depth bounds.
//
// The checks, in this order; the first that fails is returned, no hook runs,
// nothing changes (every error is invalid_argument unless named):
//  load(src)             1. no request on the device (in_flight() == 0)
//                        then: delivered completions are dropped, the bindings
//                        released and the model cleared before do_load; the
//                        model is loaded only when do_load succeeds.
//  bind(b)               1. a model is loaded  2. check_bindings(model, b)
//  run(id)               1. loaded  2. id known  3. id has no request in flight
//  submit(id, tag)       1-3 as run  4. in_flight() < queue_depth(): else
//                        queue_full
//  wait_next(timeout)    1. a delivered completion is returned at once
//                        2. something outstanding: else "nothing in flight"
//  run_for_duration(id, duration, sleep)
//                        1-2 as run  3. in_flight() == 0  4. duration > 0
//                        5. sleep >= 0
//  profile_layers(id, runs)
//                        0. has_layer_profiler(): else Device's unsupported
//                        answer, naming the kind  1. runs >= 1  2. outstanding
//                        == 0  3-4. loaded, id known
// Messages name the call: "submit: queue full: 8 requests in flight (queue
// depth 8)", "run: unknown binding 7", "wait_next: nothing in flight".
//
// What a hook may assume: the checks above passed; calls come from the one
// thread that drives the device (rig/device.hpp). After a hook succeeds the
// base records it: a submitted request is outstanding and its binding busy;
// a completion do_wait_next returns is no longer outstanding and frees its
// binding (so do_wait_next must return only completions of submitted
// requests). A failed do_submit leaves nothing outstanding: a device that
// has already taken the request must succeed and report the failure in its
// Completion.
//
// deliver(c): for a device whose queue slot frees when a request finishes
// (sim, remote: the completion then waits in host memory). The completion
// waits in the base for wait_next; its slot counts no more against
// queue_depth() and its binding takes a new request. Called on the driving
// thread only (inside a hook, or a clock's sleep_until). Devices that
// complete on their own threads (cpu, hailo) keep their own queue and return
// completions from do_wait_next; for them a request stays in flight until
// wait_next returns it.
//
// Not handled here: info(), clock(), bytes(), read_sensors(),
// take_warnings(), cancel() stay each device's own (Device's virtuals).
//
// In rig_core beside check_bindings, so that rig_devices and the hailo
// device built on its test double (tests/devices) share one copy.
#pragma once

#include <deque>
#include <optional>
#include <vector>

#include "rig/device.hpp"

namespace rig {

class DeviceBase : public Device {
 public:
  Result<LoadTimings> load(const ModelSource& source) final;
  const ModelInfo& model_info() const final { return model_; }
  Result<BindingId> bind(const Bindings& buffers) final;
  Result<InferenceTimings> run(BindingId binding) final;
  Result<void> submit(BindingId binding, uint64_t tag) final;
  Result<Completion> wait_next(Nanos timeout) final;
  uint32_t in_flight() const final {
    return outstanding_ > delivered_count() ? outstanding_ - delivered_count() : 0;
  }
  Result<DurationRun> run_for_duration(BindingId binding, Nanos duration,
                                       Nanos sleep_between_frames) final;
  Result<LayerProfile> profile_layers(BindingId binding, uint32_t runs) final;

 protected:
  // Reads, parses and compiles `source`, filling `model` (empty on entry).
  virtual Result<LoadTimings> do_load(const ModelSource& source, ModelInfo& model) = 0;
  // Device-side binding of buffers that check_bindings accepted; `id` is
  // the id bind() returns when this succeeds. Default: nothing to do.
  virtual Result<void> do_bind(BindingId id, const Bindings& buffers);
  virtual Result<InferenceTimings> do_run(BindingId binding) = 0;
  virtual Result<void> do_submit(BindingId binding, uint64_t tag) = 0;
  // The next completion within `timeout` on the device's clock (timeout
  // error otherwise). Called only with requests outstanding and none
  // delivered; may deliver() and then return take_delivered()'s.
  virtual Result<Completion> do_wait_next(Nanos timeout) = 0;
  virtual Result<DurationRun> do_run_for_duration(BindingId binding, Nanos duration,
                                                  Nanos sleep_between_frames) = 0;
  // Whether do_profile_layers is implemented (default: no, and
  // profile_layers answers unsupported without looking at its arguments).
  virtual bool has_layer_profiler() const { return false; }
  virtual Result<LayerProfile> do_profile_layers(BindingId binding, uint32_t runs);
  // The most requests the device takes in flight now (DeviceInfo::queue_depth;
  // read on every submit, so cheap).
  virtual uint32_t queue_depth() const = 0;

  bool loaded() const { return loaded_; }
  // The caller's buffers of a known binding.
  const Bindings& bound(BindingId binding) const { return bindings_[binding].buffers; }
  // Requests submitted whose completion wait_next has not returned.
  uint32_t outstanding() const { return outstanding_; }
  // A finished request's completion, for wait_next (see the header comment):
  // its queue slot and its binding are free from now on.
  void deliver(Completion completion);
  bool has_delivered() const { return !delivered_.empty(); }
  // The oldest delivered completion, taken off the base's queue.
  std::optional<Completion> take_delivered();

 private:
  struct Binding {
    Bindings buffers;
    bool busy = false;  // a request submitted, not yet delivered nor returned by wait_next
  };
  uint32_t delivered_count() const { return static_cast<uint32_t>(delivered_.size()); }
  // Checks 1-3 of run and submit (`busy_ok`: skip 3), naming `call`.
  Result<void> usable(const char* call, BindingId binding, bool busy_ok) const;
  // wait_next returned `c`: no longer outstanding, its binding free.
  void collected(const Completion& c);

  ModelInfo model_;
  bool loaded_ = false;
  std::vector<Binding> bindings_;
  uint32_t outstanding_ = 0;
  std::deque<Completion> delivered_;
};

}  // namespace rig

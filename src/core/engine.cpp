// The engine's phases (cold start, lone frames, the closed-loop steady state,
// the offered-load run), and the rules of the steady state (WarmupRule,
// SteadyStopRule). One file on purpose: the phases share the workspace
// helpers, the in-flight bookkeeping (InFlight: submit, wait, drain,
// quarantine, bytes) and the input data (rig/input_data.hpp), and
// measure_steady / measure_offered are each one timed loop whose state must
// not cross calls (see engine.hpp).
#include "rig/engine.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <mutex>

#include "rig/input_data.hpp"
#include "rig/random.hpp"
#include "rig/units.hpp"

namespace rig {
namespace {

// Lock-free, so setting it from a signal handler is safe.
std::atomic<bool> g_stop_requested{false};
static_assert(std::atomic<bool>::is_always_lock_free);

Summary summarize_ms(const std::vector<double>& v) {
  return summarize(v);
}

// Allocates one slot's buffers and binds them; inputs are left zeroed.
// One buffer of `bytes` for a device that wants `alignment` and `padding`
// (0: none): the allocation is padded to a multiple of `padding` from an
// aligned start, the view keeps the exact size. (A moved vector keeps its
// storage, so the view stays valid in the workspace's list.)
std::span<std::byte> add_buffer(Workspace& workspace, size_t bytes, size_t alignment,
                                size_t padding) {
  const size_t align = std::max<size_t>(1, alignment);
  const size_t pad = std::max<size_t>(1, padding);
  const size_t padded = (std::max<size_t>(bytes, 1) + pad - 1) / pad * pad;
  auto& store = *workspace.buffers;
  store.emplace_back(padded + align - 1);
  auto& a = store.back();
  const auto address = reinterpret_cast<uintptr_t>(a.data());
  const size_t offset = (align - address % align) % align;
  workspace.views.emplace_back(a.data() + offset, bytes);
  return workspace.views.back();
}

Result<void> add_slot(Device& device, Workspace& workspace) {
  const ModelInfo& model = device.model_info();
  const DeviceInfo info = device.info();
  Bindings bindings;
  for (const auto& in : model.inputs)
    bindings.inputs.push_back(
        add_buffer(workspace, in.bytes, info.buffer_alignment, info.buffer_padding));
  for (const auto& out : model.outputs)
    bindings.outputs.push_back(
        add_buffer(workspace, out.bytes, info.buffer_alignment, info.buffer_padding));
  auto id = device.bind(bindings);
  if (!id) return tl::unexpected(id.error());
  workspace.bindings.push_back(*id);
  return {};
}

void fill_slot(const ModelInfo& model, Workspace& workspace, size_t slot, uint64_t seed) {
  const size_t per_slot = model.inputs.size() + model.outputs.size();
  if (workspace.frames && !workspace.frames->empty()) {
    const InputFrame& frame = (*workspace.frames)[slot % workspace.frames->size()];
    for (size_t i = 0; i < model.inputs.size() && i < frame.size(); ++i) {
      const std::span<std::byte> view = workspace.views[slot * per_slot + i];
      std::memcpy(view.data(), frame[i].data(), std::min(view.size(), frame[i].size()));
    }
    return;
  }
  for (size_t i = 0; i < model.inputs.size(); ++i)
    fill_generated(workspace.views[slot * per_slot + i], model.inputs[i].type,
                   slot_input_seed(seed, slot, i));
}

// Buffers of requests a stuck device never returned: kept alive for the life
// of the process so that a late write lands in memory that is still ours.
void quarantine(const Workspace& workspace) {
  static std::mutex mutex;
  static std::vector<std::shared_ptr<std::vector<std::vector<std::byte>>>> kept;
  std::lock_guard lock(mutex);
  kept.push_back(workspace.buffers);
}

}  // namespace

void request_stop() noexcept {
  g_stop_requested.store(true, std::memory_order_relaxed);
}

bool stop_requested() noexcept {
  return g_stop_requested.load(std::memory_order_relaxed);
}

void clear_stop_request() noexcept {
  g_stop_requested.store(false, std::memory_order_relaxed);
}

std::string_view to_string(EnginePhase phase) {
  switch (phase) {
    case EnginePhase::load:
      return "load";
    case EnginePhase::allocate:
      return "allocate";
    case EnginePhase::first_inference:
      return "first inference";
    case EnginePhase::latency:
      return "latency";
    case EnginePhase::warmup:
      return "warm-up";
    case EnginePhase::measure:
      return "measure";
    case EnginePhase::drain:
      return "drain";
  }
  return "?";
}

Nanos default_warmup_window(Nanos duration, uint32_t windows) {
  return std::max<Nanos>(Nanos(1), std::min<Nanos>(std::chrono::milliseconds(500),
                                                   duration / std::max<uint32_t>(1, windows)));
}

uint64_t memory_budget_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page_size = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_size <= 0) return uint64_t{1} << 32;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size) / 2;
}

Result<void> grow_workspace(Device& device, Workspace& workspace, uint32_t slots, uint64_t seed) {
  const ModelInfo& model = device.model_info();
  // Slots are counted, not only their bytes: a model of 0-byte tensors
  // still costs each slot its bookkeeping (bindings, buffer vectors).
  constexpr uint64_t kSlotOverheadBytes = 256;
  const uint64_t per_slot = model.input_bytes() + model.output_bytes() + kSlotOverheadBytes;
  const uint64_t budget = memory_budget_bytes();
  if (slots > 0 && per_slot > budget / slots)
    return fail(ErrorCode::limit_exceeded,
                std::to_string(slots) + " request slots x " + std::to_string(per_slot) +
                    " bytes of buffers each exceed the memory budget of " + std::to_string(budget) +
                    " bytes (half the RAM); lower --depth");
  while (workspace.bindings.size() < slots) {
    const size_t slot = workspace.bindings.size();
    if (auto ok = add_slot(device, workspace); !ok) return ok;
    fill_slot(model, workspace, slot, seed);
  }
  return {};
}

namespace {

// Turns a completion whose device timings are implausible into a failed one.
void refuse_implausible(Completion& c, Nanos elapsed, bool comparable) {
  if (c.error) return;
  if (auto bad = implausible_timings(c.timings, comparable ? elapsed : kMaxDuration)) {
    c.error = std::move(*bad);
    c.timings = {};
  }
}

Result<ColdStart> cold_start_unnamed(Device& device, const ModelSource& model, uint32_t slots,
                                     uint64_t seed, EngineObserver* observer,
                                     const InputFiles* inputs) {
  Clock& clock = device.clock();
  ColdStart cs;
  auto begin = [&](EnginePhase p, Nanos at) {
    if (observer) observer->phase_begin(p, at);
  };
  auto end = [&](EnginePhase p, Nanos at) {
    if (observer) observer->phase_end(p, at);
  };
  const Nanos t0 = clock.now();
  begin(EnginePhase::load, t0);
  auto load = device.load(model);
  const Nanos t1 = clock.now();
  end(EnginePhase::load, t1);
  if (!load) return tl::unexpected(load.error());
  cs.ttfo.load = t1 - t0;
  cs.ttfo.load_breakdown = *load;
  // TTFO allocates what one frame needs; the other slots come after it.
  const ModelInfo& info = device.model_info();
  if (inputs && inputs->map) {
    // Given data is checked against the loaded model's inputs before any
    // buffer is bound: a file that does not fit fails the run here.
    auto frames = inputs->map(info);
    if (!frames) return tl::unexpected(frames.error());
    cs.workspace.frames = std::make_shared<const std::vector<InputFrame>>(std::move(*frames));
    slots = std::max<uint32_t>(slots, static_cast<uint32_t>(cs.workspace.frames->size()));
  }
  if (info.input_bytes() + info.output_bytes() > memory_budget_bytes())
    return fail(ErrorCode::limit_exceeded, "one frame's buffers exceed the memory budget");
  begin(EnginePhase::allocate, t1);
  auto added = add_slot(device, cs.workspace);
  const Nanos t2 = clock.now();
  end(EnginePhase::allocate, t2);
  if (!added) return tl::unexpected(added.error());
  cs.ttfo.allocate = t2 - t1;
  fill_slot(info, cs.workspace, 0, seed);  // preparing test data is not the device's cost
  const Nanos t3 = clock.now();
  begin(EnginePhase::first_inference, t3);
  auto first = device.run(cs.workspace.bindings[0]);
  const Nanos t4 = clock.now();
  if (first)
    if (auto bad = implausible_timings(
            *first, timings_on_clock(device.info(), clock) ? t4 - t3 : kMaxDuration))
      first = tl::unexpected(std::move(*bad));
  if (observer) {
    observer->submitted(0, t3);
    Completion c;
    c.binding = cs.workspace.bindings[0];
    c.completed_at = t4;
    if (first)
      c.timings = *first;
    else
      c.error = first.error();
    observer->completed(0, c, t4);
  }
  end(EnginePhase::first_inference, t4);
  if (!first) return tl::unexpected(first.error());
  cs.ttfo.first_inference = t4 - t3;
  cs.ttfo.first_timings = *first;
  cs.ttfo.total = cs.ttfo.load + cs.ttfo.allocate + cs.ttfo.first_inference;
  if (auto grown = grow_workspace(device, cs.workspace, std::max<uint32_t>(slots, 1), seed); !grown)
    return tl::unexpected(grown.error());
  return cs;
}

}  // namespace

Result<ColdStart> cold_start(Device& device, const ModelSource& model, uint32_t slots,
                             uint64_t seed, EngineObserver* observer, const InputFiles* inputs) {
  auto cs = cold_start_unnamed(device, model, slots, seed, observer, inputs);
  if (!cs) {
    Error e = cs.error();
    e.message = "model '" + (model.path.empty() ? model.name : model.path) + "': " + e.message;
    return tl::unexpected(e);
  }
  return cs;
}

LatencyResult measure_latency(Device& device, const Workspace& workspace,
                              const LatencySettings& settings) {
  Clock& clock = device.clock();
  LatencyResult r;
  std::vector<double> overall, hw, tin, tout, qwait;
  overall.reserve(std::min<uint64_t>(settings.samples, 1u << 20));
  // Generated data: set 0 every time; given frames: each set in turn.
  const size_t sets = workspace.frames ? workspace.bindings.size() : 1;
  (void)workspace.bindings.at(0);
  EngineObserver* observer = settings.observer;
  const bool comparable = timings_on_clock(device.info(), clock);
  const Nanos start = clock.now();
  if (observer) observer->phase_begin(EnginePhase::latency, start);
  for (uint64_t i = 0; i < settings.samples; ++i) {
    if (stop_requested()) {
      r.cut_short = true;
      break;
    }
    const BindingId binding = workspace.bindings[sets == 1 ? 0 : i % sets];
    const Nanos t0 = clock.now();
    auto t = device.run(binding);
    const Nanos t1 = clock.now();
    if (t)
      if (auto bad = implausible_timings(*t, comparable ? t1 - t0 : kMaxDuration))
        t = tl::unexpected(std::move(*bad));
    if (observer) {
      observer->submitted(0, t0);
      Completion c;
      c.binding = binding;
      c.completed_at = t1;
      if (t)
        c.timings = *t;
      else
        c.error = t.error();
      observer->completed(0, c, t1);
    }
    if (!t) {
      ++r.errors;
      if (!r.first_error) r.first_error = t.error();
      if (r.errors >= 3) break;
      continue;
    }
    overall.push_back(to_ms(t1 - t0));
    if (t->compute) hw.push_back(to_ms(*t->compute));
    if (t->transfer_in) tin.push_back(to_ms(*t->transfer_in));
    if (t->transfer_out) tout.push_back(to_ms(*t->transfer_out));
    if (t->queue_wait) qwait.push_back(to_ms(*t->queue_wait));
    if (t1 - start >= settings.max_duration) break;
  }
  if (observer) observer->phase_end(EnginePhase::latency, clock.now());
  r.samples = overall.size();
  r.overall_ms = summarize_series(overall, settings.confidence);
  r.hardware_ms = summarize_ms(hw);
  r.transfer_in_ms = summarize_ms(tin);
  r.transfer_out_ms = summarize_ms(tout);
  r.queue_wait_ms = summarize_ms(qwait);
  r.rig_round_trip_ms = link_floor_ms(device.info());
  if (r.overall_ms.median && r.hardware_ms.median && *r.overall_ms.median > 0)
    r.bus_share =
        std::max(0.0, (*r.overall_ms.median - *r.hardware_ms.median) / *r.overall_ms.median);
  return r;
}

std::optional<double> link_floor_ms(const DeviceInfo& info) {
  if (!info.link_floor) return std::nullopt;
  return to_ms(info.link_floor->median);
}

// ---------------------------------------------------------------------------
// The rules.

void CycleRange::add(Nanos cycle) {
  shortest = count == 0 ? cycle : std::min(shortest, cycle);
  longest = count == 0 ? cycle : std::max(longest, cycle);
  total += cycle;
  ++count;
}

double CycleRange::relative_range() const {
  if (count < 2 || total <= Nanos(0)) return 0;
  const double mean = static_cast<double>(total.count()) / static_cast<double>(count);
  return static_cast<double>((longest - shortest).count()) / mean;
}

WarmupRule::WarmupRule(const Settings& settings, Nanos begin)
    : s_(settings), begin_(begin), window_start_(begin) {}

WarmupRule::State WarmupRule::complete(uint32_t slot, Nanos at) {
  if (!reference_) reference_ = slot;
  ++window_count_;
  if (slot == *reference_) {
    ++window_cycles_;
    if (last_reference_) cycles_.add(at - *last_reference_);
    last_reference_ = at;
  }
  const bool closes = slot == *reference_ && window_cycles_ >= 1 && at - window_start_ >= s_.window;
  if (!closes) return at - begin_ >= s_.max ? State::capped : State::warming;
  const double rate = static_cast<double>(window_count_) / to_seconds(at - window_start_);
  const bool agree =
      last_rate_ && std::abs(rate - *last_rate_) <= s_.tolerance * std::max(rate, *last_rate_);
  const bool possible = !s_.rate_cap || rate <= *s_.rate_cap * (1 + kDeclaredCapRounding);
  counted_ += window_count_;
  window_start_ = at;
  window_count_ = 0;
  window_cycles_ = 0;
  last_rate_ = rate;
  if (agree && possible) return State::settled;
  return at - begin_ >= s_.max ? State::capped : State::warming;
}

SteadyStopRule::SteadyStopRule(const Settings& settings, uint32_t reference_slot, Nanos start)
    : s_(settings),
      reference_(reference_slot),
      start_(start),
      last_(start),
      last_reference_(start),
      window_start_(start),
      window_len_(std::max<Nanos>(Nanos(1), s_.min_duration / std::max<uint32_t>(1, s_.windows))),
      longest_window_(std::max(window_len_, s_.max_duration / 3)),
      cycles_(s_.warm_cycles) {}

uint64_t SteadyStopRule::window_cycles_wanted() const {
  const double most = std::ceil(2.0 / std::max(1e-6, s_.stability_tolerance));
  const double wanted = std::ceil(most * cycles_.relative_range());
  return static_cast<uint64_t>(std::clamp(wanted, 1.0, most));
}

SteadyStopRule::Step SteadyStopRule::complete(uint32_t slot, Nanos at) {
  Step step;
  ++inferences_;
  ++window_count_;
  last_ = at;
  if (slot != reference_) return step;
  cycles_.add(at - last_reference_);
  last_reference_ = at;
  ++window_cycles_;
  const Nanos lasted = at - window_start_;
  const bool long_enough = lasted >= window_len_ && window_cycles_ >= window_cycles_wanted();
  if (!long_enough && lasted < longest_window_) return step;
  WindowFigure w;
  w.start_s = to_seconds(window_start_ - start_);
  w.duration_s = to_seconds(lasted);
  w.inferences = window_count_;
  w.rate = static_cast<double>(window_count_) / w.duration_s;
  windows_.push_back(w);
  window_rates_.push_back(w.rate);
  window_start_ = at;
  window_count_ = 0;
  window_cycles_ = 0;
  step.closed = w;

  const Nanos elapsed = at - start_;
  const double rate = static_cast<double>(inferences_) / to_seconds(elapsed);
  spread_.reset();
  if (windows_.size() >= 3) {
    const double last3[3] = {window_rates_[window_rates_.size() - 3],
                             window_rates_[window_rates_.size() - 2], window_rates_.back()};
    spread_ = relative_spread(last3);
  }
  stable_ = spread_ && *spread_ <= s_.stability_tolerance;
  half_width_.reset();
  if (const auto half = mean_half_width_95(window_rates_); half && rate > 0)
    half_width_ = *half / rate;
  precise_ = half_width_ && *half_width_ <= s_.rate_tolerance;
  above_cap_ = s_.rate_cap && rate > *s_.rate_cap * (1 + kDeclaredCapRounding);
  met_ = elapsed >= s_.min_duration && inferences_ >= s_.min_inferences && stable_ && precise_ &&
         !above_cap_;
  step.stop = met_ || elapsed >= s_.max_duration;
  return step;
}

namespace {

// The in-flight bookkeeping of the closed and the open loop: which slot went
// in when, the wait for the next completion (with the plausibility check of
// its timings), the observer's calls, errors, the drain that collects what is
// still in flight (and quarantines the buffers of a device that never
// returns them), and the bytes moved per completed inference.
class InFlight {
 public:
  InFlight(Device& device, const Workspace& workspace, uint32_t depth, EngineObserver* observer)
      : device_(device),
        workspace_(workspace),
        observer_(observer),
        submitted_at_(depth),
        next_set_(depth),
        // Generated data: slot s submits set s alone (the sets beyond the
        // depth belong to deeper points); given frames: every set in turn.
        sets_(workspace.frames ? std::max<size_t>(depth, workspace.bindings.size()) : depth),
        comparable_(timings_on_clock(device.info(), device.clock())),
        bytes0_(device.bytes()) {
    for (uint32_t slot = 0; slot < depth; ++slot) next_set_[slot] = slot;
  }

  uint32_t depth() const { return static_cast<uint32_t>(submitted_at_.size()); }
  uint32_t count() const { return in_flight_; }
  uint64_t completed() const { return completed_; }
  Nanos submitted_at(uint32_t slot) const { return submitted_at_[slot]; }

  // Submits `slot` at `at` (a clock read just before); the device's error
  // when it refuses.
  Result<void> submit(uint32_t slot, Nanos at) {
    submitted_at_[slot] = at;
    if (observer_) observer_->submitted(slot, at);
    // Slot s cycles through sets s, s + depth, ...: an add and a compare.
    const size_t set = next_set_[slot];
    const size_t next = set + submitted_at_.size();
    next_set_[slot] = next < sets_ ? next : slot;
    if (auto ok = device_.submit(workspace_.bindings[set], slot); !ok) return ok;
    ++in_flight_;
    return {};
  }

  struct Done {
    Completion completion;
    uint32_t slot = 0;
    bool known = true;  // the tag names one of our slots
    Nanos at{0};        // when the wait returned
    Nanos waited{0};    // how long it waited
  };
  // The next completion within `timeout` (its timings checked against the
  // time since its submit); the device's error (a timeout included) if none.
  Result<Done> wait(Nanos timeout) {
    const Nanos before = device_.clock().now();
    auto c = device_.wait_next(timeout);
    Done d;
    d.at = device_.clock().now();
    d.waited = d.at - before;
    if (!c) return tl::unexpected(c.error());
    if (in_flight_ > 0) --in_flight_;
    ++completed_;
    d.completion = std::move(*c);
    d.slot = static_cast<uint32_t>(d.completion.tag);
    d.known = d.slot < depth();
    if (d.known) refuse_implausible(d.completion, d.at - submitted_at_[d.slot], comparable_);
    if (observer_) observer_->completed(d.slot, d.completion, d.at);
    return d;
  }

  // Collects what is still in flight before the caller frees the buffers,
  // handing each completion to `on_done`; gives up after three timeouts in a
  // row without progress, or on another error (passed to `on_error`). A
  // device that keeps requests is stuck: their buffers are kept alive
  // (quarantine), so a late write cannot land in freed memory. True when stuck.
  template <class OnDone, class OnError>
  bool drain(Nanos timeout, OnDone on_done, OnError on_error) {
    // The device's count decides: a request it took is collected even
    // where this count missed it (a submit that failed after sending).
    for (int timeouts = 0; device_.in_flight() > 0 && timeouts < 3;) {
      auto d = wait(timeout);
      if (d) {
        on_done(*d);
        timeouts = 0;
      } else if (d.error().code == ErrorCode::timeout) {
        ++timeouts;
      } else {
        on_error(d.error());
        break;
      }
    }
    if (device_.in_flight() == 0) return false;
    quarantine(workspace_);
    return true;
  }

  // Bytes moved since construction per completed inference (every
  // completion counts: warm-up and drain included).
  template <class R>
  void bytes_per_inference(R& r) const {
    if (completed_ == 0) return;
    const ByteCounters b = device_.bytes();
    const auto per = [&](uint64_t a, uint64_t z) {
      return static_cast<double>(z - a) / static_cast<double>(completed_);
    };
    r.payload_in_per_inference = per(bytes0_.payload_in, b.payload_in);
    r.payload_out_per_inference = per(bytes0_.payload_out, b.payload_out);
    r.link_in_per_inference = per(bytes0_.link_in, b.link_in);
    r.link_out_per_inference = per(bytes0_.link_out, b.link_out);
  }

 private:
  Device& device_;
  const Workspace& workspace_;
  EngineObserver* observer_;
  std::vector<Nanos> submitted_at_;
  std::vector<size_t> next_set_;  // per slot: the buffer set it submits next
  size_t sets_;                   // the sets the slots cycle through
  bool comparable_;
  ByteCounters bytes0_;
  uint32_t in_flight_ = 0;
  uint64_t completed_ = 0;
};

// The depth a phase runs at: the setting, at most the workspace's slots, at least 1.
uint32_t clamp_depth(uint32_t depth, const Workspace& workspace) {
  return std::max<uint32_t>(
      1, std::min<uint32_t>(depth, static_cast<uint32_t>(workspace.bindings.size())));
}

std::optional<double> declared_cap_of(Device& device, uint32_t depth) {
  const DeviceInfo info = device.info();
  if (!info.declared_costs) return std::nullopt;
  return declared_rate_cap(*info.declared_costs, device.model_info(), depth);
}

}  // namespace

SteadyRepeat measure_steady(Device& device, const Workspace& workspace, const SteadySettings& s) {
  Clock& clock = device.clock();
  const bool real_time = !clock.is_virtual();
  SteadyRepeat r;
  const uint32_t depth = clamp_depth(s.depth, workspace);
  r.depth = depth;
  r.declared_cap = declared_cap_of(device, depth);
  EngineObserver* observer = s.observer;
  OrderedSample latencies(s.reservoir_capacity);
  InFlight flight(device, workspace, depth, observer);
  auto record_error = [&](const Error& e) {
    ++r.errors;
    if (!r.first_error) r.first_error = e;
  };

  enum class Phase { warmup, measure, drain } phase = Phase::warmup;
  auto phase_of = [](Phase p) {
    return p == Phase::warmup    ? EnginePhase::warmup
           : p == Phase::measure ? EnginePhase::measure
                                 : EnginePhase::drain;
  };
  auto enter = [&](Phase next, Nanos at) {
    if (observer) {
      observer->phase_end(phase_of(phase), at);
      observer->phase_begin(phase_of(next), at);
    }
    phase = next;
  };
  const Nanos t_begin = clock.now();
  if (observer) observer->phase_begin(EnginePhase::warmup, t_begin);

  // Fill the pipeline.
  for (uint32_t slot = 0; slot < depth; ++slot) {
    if (auto ok = flight.submit(slot, clock.now()); !ok) {
      record_error(ok.error());
      r.aborted = true;
      break;
    }
  }

  WarmupRule warmup({.window = s.warmup_window,
                     .max = s.warmup_max,
                     .tolerance = s.stability_tolerance,
                     .rate_cap = r.declared_cap},
                    t_begin);
  const Nanos max_duration = Nanos(static_cast<int64_t>(
      static_cast<double>(s.min_duration.count()) * std::max(1.0, s.max_duration_factor)));
  std::optional<SteadyStopRule> stop;
  Nanos waited{0}, bookkeeping{0};

  while (flight.count() > 0 && !r.aborted) {
    auto done = flight.wait(s.request_timeout);
    if (!done) {
      record_error(done.error());
      r.aborted = true;
      break;
    }
    const Nanos t_done = done->at;
    const uint32_t slot = done->slot;
    if (phase == Phase::measure) waited += done->waited;
    if (!done->known) {
      record_error(Error{ErrorCode::internal, "completion with an unknown tag"});
      r.aborted = true;
      break;
    }
    if (phase != Phase::drain && stop_requested()) {
      r.cut_short = true;
      enter(Phase::drain, t_done);
      continue;
    }
    if (done->completion.error) {
      record_error(*done->completion.error);
      if (r.errors >= 3) {
        r.aborted = true;
        break;
      }
    } else if (phase == Phase::warmup) {
      const WarmupRule::State state = warmup.complete(slot, t_done);
      if (state != WarmupRule::State::warming) {
        r.warmup_settled = state == WarmupRule::State::settled;
        r.warmup = t_done - t_begin;
        r.warmup_inferences = warmup.inferences();
        enter(Phase::measure, t_done);
        stop.emplace(SteadyStopRule::Settings{.min_duration = s.min_duration,
                                              .max_duration = max_duration,
                                              .min_inferences = s.min_inferences,
                                              .windows = s.windows,
                                              .stability_tolerance = s.stability_tolerance,
                                              .rate_tolerance = s.rate_tolerance,
                                              .warm_cycles = warmup.cycles(),
                                              .rate_cap = r.declared_cap},
                     slot, t_done);
      }
    } else if (phase == Phase::measure) {
      latencies.add(to_ms(t_done - flight.submitted_at(slot)));
      const SteadyStopRule::Step step = stop->complete(slot, t_done);
      if (step.closed && observer) observer->window_closed(*step.closed, t_done);
      if (step.stop) {
        enter(Phase::drain, t_done);
        continue;
      }
    }
    if (phase == Phase::drain) continue;
    const Nanos t_sub = clock.now();
    bookkeeping += t_sub - t_done;
    if (auto ok = flight.submit(slot, t_sub); !ok) {
      record_error(ok.error());
      r.aborted = true;
    }
  }
  if (r.aborted && phase != Phase::drain) enter(Phase::drain, clock.now());
  if (!stop && !r.aborted && stop_requested()) r.cut_short = true;
  // What is still in flight completes outside the measured part.
  r.device_stuck = flight.drain(
      s.request_timeout, [](const InFlight::Done&) {}, [&](const Error& e) { record_error(e); });
  if (observer) observer->phase_end(EnginePhase::drain, clock.now());

  if (stop) {
    r.inferences = stop->inferences();
    r.elapsed = stop->last() - stop->start();
    r.windows = stop->windows();
    r.stable = stop->stable();
    r.precise = stop->precise();
    r.capped = !stop->met() && !r.cut_short && !r.aborted;
    r.last_windows_spread = stop->last_windows_spread();
    r.rate_half_width = stop->rate_half_width();
  } else {
    r.warmup = clock.now() - t_begin;
    r.warmup_inferences = warmup.inferences();
  }
  if (r.elapsed > Nanos(0)) r.rate = static_cast<double>(r.inferences) / to_seconds(r.elapsed);
  r.completed_total = flight.completed();
  r.latency_ms = summarize_series(latencies.values());
  flight.bytes_per_inference(r);
  if (real_time && r.inferences > 0) {
    r.bookkeeping_ns_per_inference =
        static_cast<double>(bookkeeping.count()) / static_cast<double>(flight.completed());
    if (r.elapsed > Nanos(0))
      r.wait_fraction = std::min(1.0, to_seconds(waited) / to_seconds(r.elapsed));
  }
  return r;
}

std::string_view to_string(Arrival arrival) {
  return arrival == Arrival::poisson ? "poisson" : "constant";
}

std::string_view to_string(QueueFull policy) {
  return policy == QueueFull::drop ? "drop" : "wait";
}

OfferedRun measure_offered(Device& device, const Workspace& workspace, const OfferedSettings& s) {
  Clock& clock = device.clock();
  OfferedRun r;
  r.offered_rate = s.rate;
  const uint32_t depth = clamp_depth(s.depth, workspace);
  r.depth = depth;
  if (!(s.rate > 0) || !(s.rate <= 1e9) || s.duration <= Nanos(0)) {
    r.aborted = true;
    r.first_error = Error{ErrorCode::invalid_argument,
                          "offered rate must be in (0, 1e9] frames/s and duration > 0"};
    r.errors = 1;
    return r;
  }
  OrderedSample latency(s.reservoir_capacity), service(s.reservoir_capacity),
      lateness(s.reservoir_capacity), late_flags(s.reservoir_capacity);
  struct Slot {
    Nanos scheduled{0};
    bool measured = false;
  };
  std::vector<Slot> slots(depth);
  std::vector<uint32_t> free_slots;
  for (uint32_t i = depth; i > 0; --i) free_slots.push_back(i - 1);
  EngineObserver* observer = s.observer;
  InFlight flight(device, workspace, depth, observer);

  auto record_error = [&](const Error& e) {
    ++r.errors;
    if (!r.first_error) r.first_error = e;
  };

  // The schedule: arrival k at t0 + offset_k (ns). Constant arrivals are
  // k * period (no drift from rounding); Poisson gaps are exponential.
  const double period_ns = 1e9 / s.rate;
  uint64_t rng = stream_seed(s.seed, Stream::arrivals);
  uint64_t k = 0;
  double offset = 0;
  auto advance_schedule = [&] {
    ++k;
    if (s.arrival == Arrival::constant) {
      offset = static_cast<double>(k) * period_ns;
    } else {
      offset += -std::log(unit_open_closed(rng)) * period_ns;
    }
  };
  if (s.arrival == Arrival::poisson) {
    k = static_cast<uint64_t>(-1);  // the first arrival is a draw too
    advance_schedule();
  }

  const Nanos t0 = clock.now();
  const Nanos warmup = std::max<Nanos>(Nanos(0), s.warmup);
  const Nanos t_measure = t0 + warmup, t_end = t_measure + s.duration;
  const Nanos window_len = std::max<Nanos>(Nanos(1), s.duration / std::max<uint32_t>(1, s.windows));
  Nanos window_start = t_measure;
  std::optional<Nanos> first_completion, last_completion;  // of measured frames
  uint64_t window_count = 0;
  bool measuring = false;
  Nanos cut_at = t_end;  // where a stop request ended the arrivals
  std::optional<Nanos> first_arrival;
  Nanos last_arrival{0};
  EnginePhase phase = warmup > Nanos(0) ? EnginePhase::warmup : EnginePhase::measure;
  if (observer) observer->phase_begin(phase, t0);

  // Windows count every completion that lands in them (a warm-up frame
  // included): the device's completion rate over the window, so the first
  // one does not read low by the frames still in flight at its start.
  auto close_windows = [&](Nanos now) {
    while (now >= window_start + window_len && window_start + window_len <= t_end) {
      WindowFigure w;
      w.start_s = to_seconds(window_start - t_measure);
      w.duration_s = to_seconds(window_len);
      w.inferences = window_count;
      w.rate = static_cast<double>(window_count) / w.duration_s;
      r.windows.push_back(w);
      window_start += window_len;
      window_count = 0;
      if (observer) observer->window_closed(w, window_start);
    }
  };
  auto complete = [&](const InFlight::Done& d) {
    if (!d.known) {
      record_error(Error{ErrorCode::internal, "completion with an unknown tag"});
      r.aborted = true;
      return;
    }
    free_slots.push_back(d.slot);
    if (d.completion.error) {
      record_error(*d.completion.error);
      if (r.errors >= 3) r.aborted = true;
      return;
    }
    if (d.at >= t_measure) {
      close_windows(d.at);
      if (d.at < t_end) ++window_count;
    }
    if (!slots[d.slot].measured) return;
    ++r.completed;
    latency.add(to_ms(d.at - slots[d.slot].scheduled));
    service.add(to_ms(d.at - flight.submitted_at(d.slot)));
    if (!first_completion) first_completion = d.at;
    last_completion = d.at;
  };
  // Waits for one completion within `timeout`; false on a timeout, which
  // leaves the clock at the deadline.
  auto wait_one = [&](Nanos timeout) -> bool {
    auto d = flight.wait(timeout);
    if (!d) {
      if (d.error().code != ErrorCode::timeout) {
        record_error(d.error());
        r.aborted = true;
      }
      return false;
    }
    complete(*d);
    return true;
  };

  while (!r.aborted) {
    const Nanos t_arr = t0 + Nanos(static_cast<int64_t>(std::llround(offset)));
    if (t_arr >= t_end) break;
    if (stop_requested()) {
      r.cut_short = true;
      cut_at = std::max(t_measure, clock.now());
      break;
    }
    // Until the arrival: collect completions, else let the clock pass.
    for (Nanos now = clock.now(); now < t_arr && !r.aborted; now = clock.now()) {
      if (flight.count() == 0)
        clock.sleep_until(t_arr);
      else
        wait_one(t_arr - now);
    }
    if (r.aborted) break;
    const bool measured = t_arr >= t_measure;
    if (measured && !measuring) {
      measuring = true;
      if (phase == EnginePhase::warmup && observer) {
        observer->phase_end(EnginePhase::warmup, t_measure);
        observer->phase_begin(EnginePhase::measure, t_measure);
      }
      phase = EnginePhase::measure;
    }
    if (clock.now() >= t_measure) close_windows(clock.now());
    if (measured) {
      ++r.arrivals;
      if (!first_arrival) first_arrival = t_arr;
      last_arrival = t_arr;
    }
    if (free_slots.empty()) {
      if (s.on_full == QueueFull::drop) {
        if (measured) ++r.dropped;
        advance_schedule();
        continue;
      }
      while (free_slots.empty() && !r.aborted)
        if (!wait_one(s.request_timeout) && !r.aborted) {
          record_error(Error{ErrorCode::timeout, "no completion within the request timeout"});
          r.aborted = true;
        }
      if (r.aborted) break;
    }
    const uint32_t slot = free_slots.back();
    free_slots.pop_back();
    const Nanos t_sub = clock.now();
    slots[slot] = Slot{t_arr, measured};
    if (auto ok = flight.submit(slot, t_sub); !ok) {
      free_slots.push_back(slot);
      record_error(ok.error());
      r.aborted = true;
      break;
    }
    if (measured) {
      ++r.submitted;
      const bool late = t_sub - t_arr > s.late_threshold;
      late_flags.add(late ? 1.0 : 0.0);
      if (late) {
        ++r.late;
        lateness.add(to_ms(t_sub - t_arr));
      }
    }
    advance_schedule();
  }
  // Drain: the frames still in flight are measured frames too.
  const Nanos t_drain = clock.now();
  if (observer) {
    observer->phase_end(phase, t_drain);
    observer->phase_begin(EnginePhase::drain, t_drain);
  }
  r.device_stuck =
      flight.drain(s.request_timeout, complete, [&](const Error& e) { record_error(e); });
  if (r.device_stuck) r.aborted = true;
  close_windows(std::min(cut_at, t_end));
  if (observer) observer->phase_end(EnginePhase::drain, clock.now());
  r.completed_total = flight.completed();
  flight.bytes_per_inference(r);

  // The rate measured frames completed at: between the first and the last
  // of their completions (n - 1 intervals), so neither the latency before
  // the first nor the drain after the last arrival dilutes it, and under
  // overload it is the device's own completion rate.
  if (first_completion && last_completion && *last_completion > *first_completion &&
      r.completed >= 2) {
    r.span = *last_completion - *first_completion;
    r.achieved_rate = static_cast<double>(r.completed - 1) / to_seconds(r.span);
  }
  // The arrivals' own rate, counted as the achieved rate is ((n - 1) over
  // the first to the last), so that a whole number of frames in the window
  // does not make a device that completes every frame look short of it; one
  // arrival: per the span it was scheduled in (up to a cut).
  if (r.arrivals >= 2 && last_arrival > *first_arrival)
    r.scheduled_rate =
        static_cast<double>(r.arrivals - 1) / to_seconds(last_arrival - *first_arrival);
  else if (const Nanos span = std::clamp(cut_at, t_measure, t_end) - t_measure; span > Nanos(0))
    r.scheduled_rate = static_cast<double>(r.arrivals) / to_seconds(span);
  if (r.submitted > 0)
    r.late_share = static_cast<double>(r.late) / static_cast<double>(r.submitted);
  // The late share's upper bound: late frames come in runs (a queue that
  // filled), so from the flags in order (series_mean_interval's batches),
  // and never below the binomial bound of independent frames (a series
  // with no late frame has a mean interval of width 0; k of n late say the
  // share is at most binomial_upper(k, n)).
  if (const MeanInterval late = series_mean_interval(late_flags.values(), s.confidence);
      late.stated()) {
    const size_t flags = late_flags.values().size();
    const auto late_kept = static_cast<size_t>(
        std::count(late_flags.values().begin(), late_flags.values().end(), 1.0));
    r.late_share_upper = std::clamp(
        std::max(*late.upper, binomial_upper(late_kept, flags, s.confidence)), r.late_share, 1.0);
  }
  r.latency_ms = summarize_series(latency.values(), s.confidence);
  r.service_ms = summarize_series(service.values(), s.confidence);
  r.lateness_ms = summarize_series(lateness.values(), s.confidence);
  // A single frame keeps up when it completed; more keep up at >= 99% of
  // the schedule.
  const bool rate_ok = r.completed == r.arrivals && r.arrivals == 1
                           ? true
                           : r.achieved_rate >= 0.99 * r.scheduled_rate;
  r.keeps_up = !r.aborted && r.errors == 0 && r.dropped == 0 && r.arrivals > 0 &&
               r.late_share <= kLateShareLimit && rate_ok;
  return r;
}

}  // namespace rig

// The engine's phases (cold start, lone frames, the closed-loop steady state,
// the offered-load run). One file on purpose: the phases share the workspace
// helpers, the input generator and the quarantine of a stuck device's
// buffers, and measure_steady / measure_offered are each one timed state
// machine whose state must not cross calls (see engine.hpp).
#include "rig/engine.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <mutex>

#include "rig/units.hpp"

namespace rig {
namespace {

uint64_t splitmix(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Deterministic input data in a range real inputs have: [0, 1) for floating
// types, [0, 255] for wider integers, 0/1 for bool, any byte for 8-bit types.
void fill_input(std::span<std::byte> buffer, ElementType type, uint64_t seed) {
  uint64_t state = seed;
  auto unit = [&] { return static_cast<double>(splitmix(state) >> 11) / 9007199254740992.0; };
  auto put = [&](size_t i, const auto& v) {
    std::memcpy(buffer.data() + i * sizeof v, &v, sizeof v);
  };
  const size_t n = buffer.size() / element_size(type);
  switch (type) {
    case ElementType::f32:
      for (size_t i = 0; i < n; ++i) put(i, static_cast<float>(unit()));
      return;
    case ElementType::f64:
      for (size_t i = 0; i < n; ++i) put(i, unit());
      return;
    case ElementType::f16:
      // Exponent 14 with a random mantissa: values in [0.5, 1), always normal.
      for (size_t i = 0; i < n; ++i)
        put(i, static_cast<uint16_t>((14u << 10) | (splitmix(state) & 0x3ffu)));
      return;
    case ElementType::u16:
    case ElementType::i16:
      for (size_t i = 0; i < n; ++i) put(i, static_cast<uint16_t>(splitmix(state) & 0xff));
      return;
    case ElementType::i32:
      for (size_t i = 0; i < n; ++i) put(i, static_cast<int32_t>(splitmix(state) & 0xff));
      return;
    case ElementType::i64:
      for (size_t i = 0; i < n; ++i) put(i, static_cast<int64_t>(splitmix(state) & 0xff));
      return;
    case ElementType::boolean:
      for (size_t i = 0; i < n; ++i) put(i, static_cast<uint8_t>(splitmix(state) & 1));
      return;
    case ElementType::u8:
    case ElementType::i8:
      for (size_t i = 0; i < buffer.size(); i += 8) {
        const uint64_t r = splitmix(state);
        std::memcpy(buffer.data() + i, &r, std::min<size_t>(8, buffer.size() - i));
      }
      return;
  }
}

Summary summarize_ms(const std::vector<double>& v) {
  return summarize(v);
}

// Allocates one slot's buffers and binds them; inputs are left zeroed.
Result<void> add_slot(Device& device, Workspace& workspace) {
  const ModelInfo& model = device.model_info();
  auto& store = *workspace.buffers;
  Bindings bindings;
  const size_t first = store.size();
  for (const auto& in : model.inputs) store.emplace_back(in.bytes);
  for (const auto& out : model.outputs) store.emplace_back(out.bytes);
  for (size_t i = 0; i < model.inputs.size(); ++i)
    bindings.inputs.emplace_back(store[first + i].data(), store[first + i].size());
  for (size_t i = 0; i < model.outputs.size(); ++i) {
    auto& b = store[first + model.inputs.size() + i];
    bindings.outputs.emplace_back(b.data(), b.size());
  }
  auto id = device.bind(bindings);
  if (!id) return tl::unexpected(id.error());
  workspace.bindings.push_back(*id);
  return {};
}

void fill_slot(const ModelInfo& model, Workspace& workspace, size_t slot, uint64_t seed) {
  const size_t per_slot = model.inputs.size() + model.outputs.size();
  for (size_t i = 0; i < model.inputs.size(); ++i)
    fill_input((*workspace.buffers)[slot * per_slot + i], model.inputs[i].type,
               seed * 1000003 + slot * 131 + i);
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
  const uint64_t per_slot = model.input_bytes() + model.output_bytes();
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
                                     uint64_t seed, EngineObserver* observer) {
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
                             uint64_t seed, EngineObserver* observer) {
  auto cs = cold_start_unnamed(device, model, slots, seed, observer);
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
  const BindingId binding = workspace.bindings.at(0);
  EngineObserver* observer = settings.observer;
  const bool comparable = timings_on_clock(device.info(), clock);
  const Nanos start = clock.now();
  if (observer) observer->phase_begin(EnginePhase::latency, start);
  for (uint64_t i = 0; i < settings.samples; ++i) {
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
  r.overall_ms = summarize(overall, settings.confidence);
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

SteadyRepeat measure_steady(Device& device, const Workspace& workspace, const SteadySettings& s) {
  Clock& clock = device.clock();
  const bool real_time = !clock.is_virtual();
  SteadyRepeat r;
  const uint32_t depth = std::max<uint32_t>(
      1, std::min<uint32_t>({s.depth, static_cast<uint32_t>(workspace.bindings.size())}));
  r.depth = depth;
  Reservoir latencies(s.reservoir_capacity, s.seed);
  std::vector<Nanos> submitted_at(depth);
  const ByteCounters bytes0 = device.bytes();
  uint64_t all_completed = 0;

  auto record_error = [&](const Error& e) {
    ++r.errors;
    if (!r.first_error) r.first_error = e;
  };

  EngineObserver* observer = s.observer;
  if (observer) observer->phase_begin(EnginePhase::warmup, clock.now());

  // Fill the pipeline.
  uint32_t in_flight = 0;
  for (uint32_t slot = 0; slot < depth; ++slot) {
    submitted_at[slot] = clock.now();
    if (observer) observer->submitted(slot, submitted_at[slot]);
    if (auto ok = device.submit(workspace.bindings[slot], slot); !ok) {
      record_error(ok.error());
      r.aborted = true;
      break;
    }
    ++in_flight;
  }

  // The measured span opens on a completion of start_slot, and windows (and
  // so the span) close only on later completions of that slot: each holds
  // whole pipeline cycles, so bursty completions do not bias the rate.
  enum class Phase { warmup, measure, drain } phase = Phase::warmup;
  auto phase_of = [](Phase p) {
    return p == Phase::warmup    ? EnginePhase::warmup
           : p == Phase::measure ? EnginePhase::measure
                                 : EnginePhase::drain;
  };
  uint32_t start_slot = 0;
  const Nanos t_begin = clock.now();
  Nanos warm_window_start = t_begin;
  uint64_t warm_window_count = 0;
  std::optional<double> last_warm_rate;
  const uint64_t warm_min = depth;  // at least one full pipeline turnover

  Nanos window_len = std::max<Nanos>(Nanos(1), s.min_duration / std::max<uint32_t>(1, s.windows));
  const Nanos max_duration = Nanos(static_cast<int64_t>(
      static_cast<double>(s.min_duration.count()) * std::max(1.0, s.max_duration_factor)));
  Nanos t_start{0}, window_start{0}, t_last{0};
  uint64_t window_count = 0;
  Nanos waited{0}, bookkeeping{0};

  std::vector<double> window_rates;
  auto last3_spread = [&]() -> std::optional<double> {
    if (r.windows.size() < 3) return std::nullopt;
    double rates[3];
    for (int i = 0; i < 3; ++i) rates[i] = r.windows[r.windows.size() - 3 + i].rate;
    return relative_spread(rates);
  };

  const bool comparable = timings_on_clock(device.info(), clock);
  while (in_flight > 0) {
    const Nanos tw = clock.now();
    auto c = device.wait_next(s.request_timeout);
    const Nanos t_done = clock.now();
    if (!c) {
      record_error(c.error());
      r.aborted = true;
      break;
    }
    --in_flight;
    ++all_completed;
    const auto slot = static_cast<uint32_t>(c->tag);
    if (slot < depth) refuse_implausible(*c, t_done - submitted_at[slot], comparable);
    if (phase == Phase::measure) waited += t_done - tw;
    if (observer) observer->completed(slot, *c, t_done);
    if (c->error) {
      record_error(*c->error);
      if (r.errors >= 3) {
        r.aborted = true;
        if (observer) observer->phase_end(phase_of(phase), t_done);
        phase = Phase::drain;
        if (observer) observer->phase_begin(EnginePhase::drain, t_done);
      }
    } else if (phase == Phase::warmup) {
      ++warm_window_count;
      if (t_done - warm_window_start >= s.warmup_window && warm_window_count >= warm_min) {
        const double rate =
            static_cast<double>(warm_window_count) / to_seconds(t_done - warm_window_start);
        const bool settled =
            last_warm_rate && std::abs(rate - *last_warm_rate) <=
                                  s.stability_tolerance * std::max(rate, *last_warm_rate);
        r.warmup_inferences += warm_window_count;
        warm_window_start = t_done;
        warm_window_count = 0;
        last_warm_rate = rate;
        if (settled || t_done - t_begin >= s.warmup_max) {
          r.warmup_settled = settled;
          r.warmup = t_done - t_begin;
          if (observer) {
            observer->phase_end(EnginePhase::warmup, t_done);
            observer->phase_begin(EnginePhase::measure, t_done);
          }
          phase = Phase::measure;
          t_start = window_start = t_last = t_done;
          // A window holds at least ~2 / tolerance completions (at the
          // warm-up's rate) so that counting whole frames cannot fake
          // instability, as long as `windows` of them fit under the cap.
          if (last_warm_rate && *last_warm_rate > 0) {
            const double want_s = 2.0 / s.stability_tolerance / *last_warm_rate;
            const Nanos fit = max_duration / std::max<uint32_t>(1, s.windows);
            window_len =
                std::max(window_len,
                         std::min(fit, Nanos(static_cast<int64_t>(std::min(want_s, 1e6) * 1e9))));
          }
          start_slot = slot;
        }
      }
    } else if (phase == Phase::measure) {
      ++r.inferences;
      ++window_count;
      t_last = t_done;
      latencies.add(to_ms(t_done - submitted_at[slot]));
      // Windows, too, close on the start slot: each holds whole pipeline cycles.
      if (t_done - window_start >= window_len && slot == start_slot) {
        WindowFigure w;
        w.start_s = to_seconds(window_start - t_start);
        w.duration_s = to_seconds(t_done - window_start);
        w.inferences = window_count;
        w.rate = static_cast<double>(window_count) / w.duration_s;
        r.windows.push_back(w);
        if (observer) observer->window_closed(w, t_done);
        window_start = t_done;
        window_count = 0;
        const Nanos elapsed = t_done - t_start;
        r.last_windows_spread = last3_spread();
        const bool stable =
            r.last_windows_spread && *r.last_windows_spread <= s.stability_tolerance;
        window_rates.push_back(w.rate);
        const auto half = mean_half_width_95(window_rates);
        r.rate_half_width.reset();
        if (half && r.inferences > 0)
          r.rate_half_width = *half / (static_cast<double>(r.inferences) / to_seconds(elapsed));
        const bool precise = r.rate_half_width && *r.rate_half_width <= s.rate_tolerance;
        // Done when long enough, with enough samples, stable and precise; or
        // at the hard cap, whatever was reached (the verdict names what is
        // missing).
        const bool met =
            elapsed >= s.min_duration && r.inferences >= s.min_inferences && stable && precise;
        if (met || elapsed >= max_duration) {
          r.stable = stable;
          r.precise = precise;
          r.capped = !met;
          phase = Phase::drain;
          if (observer) {
            observer->phase_end(EnginePhase::measure, t_done);
            observer->phase_begin(EnginePhase::drain, t_done);
          }
        }
      }
    }
    if (phase == Phase::drain) continue;
    const Nanos t_sub = clock.now();
    bookkeeping += t_sub - t_done;
    submitted_at[slot] = t_sub;
    if (observer) observer->submitted(slot, t_sub);
    if (auto ok = device.submit(workspace.bindings[slot], slot); !ok) {
      record_error(ok.error());
      r.aborted = true;
      if (observer) {
        observer->phase_end(phase_of(phase), t_sub);
        observer->phase_begin(EnginePhase::drain, t_sub);
      }
      phase = Phase::drain;
      continue;
    }
    ++in_flight;
  }
  // After an abort, requests may still be in flight: collect them before the
  // caller frees their buffers. A device that never returns them keeps the
  // buffers (quarantine) so a late write cannot land in freed memory.
  for (int timeouts = 0; device.in_flight() > 0 && timeouts < 3;) {
    auto c = device.wait_next(s.request_timeout);
    if (c) {
      if (observer) observer->completed(static_cast<uint32_t>(c->tag), *c, clock.now());
      ++all_completed;
      timeouts = 0;  // progress: keep collecting
    } else if (c.error().code == ErrorCode::timeout) {
      ++timeouts;
    } else {
      break;
    }
  }
  if (device.in_flight() > 0) {
    r.device_stuck = true;
    quarantine(workspace);
  }
  if (observer) observer->phase_end(phase_of(phase), clock.now());
  r.completed_total = all_completed;
  r.elapsed = t_last - t_start;
  if (r.elapsed > Nanos(0)) r.rate = static_cast<double>(r.inferences) / to_seconds(r.elapsed);
  if (phase == Phase::warmup) r.warmup = clock.now() - t_begin;
  std::vector<double> lat = latencies.samples();
  r.latency_ms = summarize(lat);
  const ByteCounters bytes1 = device.bytes();
  if (all_completed > 0) {
    const auto per = [&](uint64_t a, uint64_t b) {
      return static_cast<double>(b - a) / static_cast<double>(all_completed);
    };
    r.payload_in_per_inference = per(bytes0.payload_in, bytes1.payload_in);
    r.payload_out_per_inference = per(bytes0.payload_out, bytes1.payload_out);
    r.link_in_per_inference = per(bytes0.link_in, bytes1.link_in);
    r.link_out_per_inference = per(bytes0.link_out, bytes1.link_out);
  }
  if (real_time && r.inferences > 0) {
    r.bookkeeping_ns_per_inference =
        static_cast<double>(bookkeeping.count()) / static_cast<double>(all_completed);
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
  const uint32_t depth = std::max<uint32_t>(
      1, std::min<uint32_t>(s.depth, static_cast<uint32_t>(workspace.bindings.size())));
  r.depth = depth;
  if (!(s.rate > 0) || s.duration <= Nanos(0)) {
    r.aborted = true;
    r.first_error = Error{ErrorCode::invalid_argument, "offered rate and duration must be > 0"};
    r.errors = 1;
    return r;
  }
  Reservoir latency(s.reservoir_capacity, s.seed), service(s.reservoir_capacity, s.seed + 1),
      lateness(s.reservoir_capacity, s.seed + 2);
  struct Slot {
    Nanos scheduled{0}, submitted{0};
    bool measured = false;
  };
  std::vector<Slot> slots(depth);
  std::vector<uint32_t> free_slots;
  for (uint32_t i = depth; i > 0; --i) free_slots.push_back(i - 1);
  uint32_t in_flight = 0;
  EngineObserver* observer = s.observer;

  auto record_error = [&](const Error& e) {
    ++r.errors;
    if (!r.first_error) r.first_error = e;
  };

  // The schedule: arrival k at t0 + offset_k (ns). Constant arrivals are
  // k * period (no drift from rounding); Poisson gaps are exponential.
  const double period_ns = 1e9 / s.rate;
  uint64_t rng = s.seed * 0x9E3779B97F4A7C15ull + 1;
  uint64_t k = 0;
  double offset = 0;
  auto advance_schedule = [&] {
    ++k;
    if (s.arrival == Arrival::constant) {
      offset = static_cast<double>(k) * period_ns;
    } else {
      const double u =
          (static_cast<double>(splitmix(rng) >> 11) + 1) / 9007199254740993.0;  // (0, 1]
      offset += -std::log(u) * period_ns;
    }
  };
  if (s.arrival == Arrival::poisson) {
    k = static_cast<uint64_t>(-1);  // the first arrival is a draw too
    advance_schedule();
  }

  const ByteCounters bytes0 = device.bytes();
  const Nanos t0 = clock.now();
  const Nanos warmup = std::max<Nanos>(Nanos(0), s.warmup);
  const Nanos t_measure = t0 + warmup, t_end = t_measure + s.duration;
  const Nanos window_len = std::max<Nanos>(Nanos(1), s.duration / std::max<uint32_t>(1, s.windows));
  Nanos window_start = t_measure, last_completion{0};
  uint64_t window_count = 0;
  bool measuring = false;
  EnginePhase phase = warmup > Nanos(0) ? EnginePhase::warmup : EnginePhase::measure;
  if (observer) observer->phase_begin(phase, t0);

  auto close_windows = [&](Nanos now, Nanos limit) {
    while (measuring && now >= window_start + window_len && window_start + window_len <= limit) {
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
  const bool comparable = timings_on_clock(device.info(), clock);
  auto complete = [&](Completion c, Nanos t_done) {
    --in_flight;
    ++r.completed_total;
    const auto slot = static_cast<uint32_t>(c.tag);
    if (slot < depth) refuse_implausible(c, t_done - slots[slot].submitted, comparable);
    if (observer) observer->completed(slot, c, t_done);
    if (slot >= depth) {
      record_error(Error{ErrorCode::internal, "completion with an unknown tag"});
      r.aborted = true;
      return;
    }
    free_slots.push_back(slot);
    if (c.error) {
      record_error(*c.error);
      if (r.errors >= 3) r.aborted = true;
      return;
    }
    if (!slots[slot].measured) return;
    ++r.completed;
    latency.add(to_ms(t_done - slots[slot].scheduled));
    service.add(to_ms(t_done - slots[slot].submitted));
    last_completion = std::max(last_completion, t_done);
    close_windows(t_done, t_end);
    if (t_done < t_end) ++window_count;
  };
  // Waits for one completion within `timeout`; false on a timeout, which
  // leaves the clock at the deadline.
  auto wait_one = [&](Nanos timeout) -> bool {
    auto c = device.wait_next(timeout);
    if (!c) {
      if (c.error().code != ErrorCode::timeout) {
        record_error(c.error());
        r.aborted = true;
      }
      return false;
    }
    complete(*c, clock.now());
    return true;
  };

  while (!r.aborted) {
    const Nanos t_arr = t0 + Nanos(static_cast<int64_t>(std::llround(offset)));
    if (t_arr >= t_end) break;
    // Until the arrival: collect completions, else let the clock pass.
    for (Nanos now = clock.now(); now < t_arr && !r.aborted; now = clock.now()) {
      if (in_flight == 0)
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
    close_windows(clock.now(), t_end);
    if (measured) ++r.arrivals;
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
    slots[slot] = Slot{t_arr, t_sub, measured};
    if (observer) observer->submitted(slot, t_sub);
    if (auto ok = device.submit(workspace.bindings[slot], slot); !ok) {
      free_slots.push_back(slot);
      record_error(ok.error());
      r.aborted = true;
      break;
    }
    ++in_flight;
    if (measured) {
      ++r.submitted;
      if (t_sub - t_arr > s.late_threshold) {
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
  for (int timeouts = 0; device.in_flight() > 0 && in_flight > 0 && timeouts < 3;) {
    auto c = device.wait_next(s.request_timeout);
    if (c) {
      complete(*c, clock.now());
      timeouts = 0;
    } else if (c.error().code == ErrorCode::timeout) {
      ++timeouts;
    } else {
      record_error(c.error());
      break;
    }
  }
  close_windows(t_end, t_end);
  if (device.in_flight() > 0) {
    r.device_stuck = true;
    r.aborted = true;
    quarantine(workspace);
  }
  if (observer) observer->phase_end(EnginePhase::drain, clock.now());
  const ByteCounters bytes1 = device.bytes();
  if (r.completed_total > 0) {
    const auto per = [&](uint64_t a, uint64_t b) {
      return static_cast<double>(b - a) / static_cast<double>(r.completed_total);
    };
    r.payload_in_per_inference = per(bytes0.payload_in, bytes1.payload_in);
    r.payload_out_per_inference = per(bytes0.payload_out, bytes1.payload_out);
    r.link_in_per_inference = per(bytes0.link_in, bytes1.link_in);
    r.link_out_per_inference = per(bytes0.link_out, bytes1.link_out);
  }

  const Nanos span_end = std::max(t_end, last_completion);
  r.span = span_end - t_measure;
  r.scheduled_rate = static_cast<double>(r.arrivals) / to_seconds(s.duration);
  if (r.span > Nanos(0)) r.achieved_rate = static_cast<double>(r.completed) / to_seconds(r.span);
  if (r.submitted > 0)
    r.late_share = static_cast<double>(r.late) / static_cast<double>(r.submitted);
  r.latency_ms = summarize(latency.samples(), s.confidence);
  r.service_ms = summarize(service.samples(), s.confidence);
  r.lateness_ms = summarize(lateness.samples(), s.confidence);
  r.keeps_up = !r.aborted && r.errors == 0 && r.dropped == 0 && r.arrivals > 0 &&
               r.late_share <= kLateShareLimit && r.achieved_rate >= 0.99 * r.scheduled_rate;
  return r;
}

}  // namespace rig

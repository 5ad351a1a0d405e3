// Discrete-event simulation of an accelerator behind a link.
//
// A request moves through four stages, each a FIFO resource served in the
// order requests became ready for it:
//   in channel   occupied for bytes_in / bw_in       (then lat until it lands)
//   compute      occupied for the compute time
//   out channel  occupied for bytes_out / bw_out     (then lat until it lands)
// With duplex=half one channel serves both directions. The fixed latency is a
// delay, not occupancy, so transfers in flight overlap it: pipelining hides it.
// Events live on a heap ordered by (time, sequence); virtual time advances
// only while the caller waits (run, wait_next, run_for_duration, load).
// One file on purpose (over 600 lines): the event queue, the resources and
// the realtime pacing share one clock and one lock, and read best together.
#include "devices/sim/sim_device.hpp"

#include "core/device_base.hpp"
#include "rig/random.hpp"

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <mutex>
#include <optional>
#include <queue>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "rig/model.hpp"
#include "rig/units.hpp"

namespace rig {
namespace {

// The ranges where the simulation's arithmetic holds. Every duration is
// parse_duration's (at most kMaxDuration, 1e6 s); a single step of the
// simulation (a transfer, a compute) saturates there too, so a run of
// thousands of them stays inside the virtual clock's int64 nanoseconds.
constexpr double kSimMinBandwidth = 1;  // bytes per second
constexpr double kSimMaxFactor = 1e6;   // drift, slow_factor

struct SimParams {
  Nanos compute{std::chrono::milliseconds(1)};
  double bw_in = 1e9, bw_out = 1e9;  // bytes per second
  Nanos latency{0};
  uint32_t depth = 8;
  Nanos load{std::chrono::milliseconds(100)};
  Nanos first{0};
  bool full_duplex = false;
  double drift = 0;
  Nanos slow_at{-1};
  double slow_factor = 1;
  double jitter = 0;
  uint64_t seed = 1;
  bool realtime = false;
  // Scripted sensors: value k from virtual time k x sensor_step (the last holds).
  std::map<std::string, std::vector<double>> sensors;  // temperature_c, power_w, clock_mhz
  Nanos sensor_step{std::chrono::seconds(1)};
  std::string warn;                  // raised through take_warnings() at every load
  std::optional<double> idle_power;  // power_w while nothing is in flight
};

// "40:45:50" -> {40, 45, 50}; every value a finite number.
Result<std::vector<double>> parse_series(const std::string& key, const std::string& value) {
  std::vector<double> out;
  size_t start = 0;
  while (start <= value.size()) {
    const size_t end = std::min(value.find(':', start), value.size());
    auto n = parse_number(value.substr(start, end - start));
    if (!n)
      return fail(ErrorCode::invalid_argument,
                  "sim parameter " + key + ": '" + value +
                      "' is not a series of numbers separated by ':' (" + n.error().message + ")");
    out.push_back(*n);
    start = end + 1;
  }
  return out;
}

Result<SimParams> parse_params(const std::map<std::string, std::string>& params) {
  SimParams p;
  for (const auto& param : params) {
    const std::string& key = param.first;
    const std::string& value = param.second;
    auto bad = [&](const Error& e) {
      return fail(ErrorCode::invalid_argument, "sim parameter " + key + ": " + e.message);
    };
    auto dur = [&](Nanos& out, bool positive) -> Result<void> {
      auto d = parse_duration(value);
      if (!d) return bad(d.error());
      if (*d < Nanos(0) || (positive && *d == Nanos(0)))
        return fail(ErrorCode::invalid_argument,
                    "sim parameter " + key + " must be " + (positive ? "> 0" : ">= 0"));
      out = *d;
      return {};
    };
    auto bw = [&](double& out) -> Result<void> {
      auto b = parse_bandwidth(value);
      if (!b) return bad(b.error());
      // Below 1 B/s a frame's transfer time leaves the virtual clock's range.
      if (!(*b >= kSimMinBandwidth))
        return fail(ErrorCode::invalid_argument,
                    "sim parameter " + key + " must be at least 1 B/s, got '" + value + "'");
      out = *b;
      return {};
    };
    auto num = [&](double& out, double lo) -> Result<void> {
      auto n = parse_number(value);
      if (!n) return bad(n.error());
      if (*n < lo)
        return fail(ErrorCode::invalid_argument,
                    "sim parameter " + key + " must be >= " + format_fixed(lo, 0));
      // Factors beyond this only saturate the compute time (compute_time).
      if (*n > kSimMaxFactor)
        return fail(ErrorCode::invalid_argument,
                    "sim parameter " + key + " must be <= 1e6, got '" + value + "'");
      out = *n;
      return {};
    };
    Result<void> r;
    if (key == "compute")
      r = dur(p.compute, true);
    else if (key == "bw") {
      r = bw(p.bw_in);
      p.bw_out = p.bw_in;
    } else if (key == "bw_in")
      r = bw(p.bw_in);
    else if (key == "bw_out")
      r = bw(p.bw_out);
    else if (key == "lat")
      r = dur(p.latency, false);
    else if (key == "load")
      r = dur(p.load, false);
    else if (key == "first")
      r = dur(p.first, false);
    else if (key == "slow_at")
      r = dur(p.slow_at, false);
    else if (key == "slow_factor")
      r = num(p.slow_factor, 0);
    else if (key == "drift")
      r = num(p.drift, 0);
    else if (key == "jitter") {
      r = num(p.jitter, 0);
      if (r && p.jitter >= 1)
        return fail(ErrorCode::invalid_argument, "sim parameter jitter must be < 1");
    } else if (key == "depth") {
      auto n = parse_count(value);
      if (!n) return bad(n.error());
      if (*n == 0 || *n > 1u << 16)
        return fail(ErrorCode::invalid_argument, "sim parameter depth must be in 1..65536");
      p.depth = static_cast<uint32_t>(*n);
    } else if (key == "seed") {
      auto n = parse_count(value);
      if (!n) return bad(n.error());
      p.seed = *n;
    } else if (key == "duplex") {
      if (value == "half")
        p.full_duplex = false;
      else if (value == "full")
        p.full_duplex = true;
      else
        return fail(ErrorCode::invalid_argument, "sim parameter duplex must be half or full");
    } else if (key == "temp" || key == "power" || key == "clock_mhz") {
      auto series = parse_series(key, value);
      if (!series) return tl::unexpected(series.error());
      const std::string name = key == "temp" ? "temperature_c" : key == "power" ? "power_w" : key;
      p.sensors[name] = std::move(*series);
    } else if (key == "idle_power") {
      double w = 0;
      auto n = parse_number(value);
      if (!n) return bad(n.error());
      if (*n < 0) return fail(ErrorCode::invalid_argument, "sim parameter idle_power must be >= 0");
      w = *n;
      p.idle_power = w;
    } else if (key == "sensor_step") {
      r = dur(p.sensor_step, true);
    } else if (key == "warn") {
      p.warn = value;
    } else if (key == "realtime") {
      if (value != "0" && value != "1")
        return fail(ErrorCode::invalid_argument, "sim parameter realtime must be 0 or 1");
      p.realtime = value == "1";
    } else {
      return fail(
          ErrorCode::invalid_argument,
          "unknown sim parameter '" + key +
              "' (known: compute, bw, bw_in, bw_out, lat, depth, load, first, duplex, "
              "drift, slow_at, slow_factor, jitter, seed, realtime, temp, power, clock_mhz, "
              "sensor_step, idle_power, warn)");
    }
    if (!r) return tl::unexpected(r.error());
  }
  return p;
}

std::string effective_spec(const SimParams& p) {
  auto compact = [](double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.9g", v);
    return std::string(buf);
  };
  auto ms = [&](Nanos d) { return compact(to_ms(d)) + "ms"; };
  auto mbs = [&](double b) { return compact(b / 1e6) + "MB/s"; };
  std::string s = "sim:compute=" + ms(p.compute) + ",bw_in=" + mbs(p.bw_in) +
                  ",bw_out=" + mbs(p.bw_out) + ",lat=" + ms(p.latency) +
                  ",depth=" + std::to_string(p.depth) + ",load=" + ms(p.load) +
                  ",first=" + ms(p.first) + ",duplex=" + (p.full_duplex ? "full" : "half");
  if (p.drift != 0) s += ",drift=" + compact(p.drift);
  if (p.slow_at >= Nanos(0))
    s += ",slow_at=" + ms(p.slow_at) + ",slow_factor=" + compact(p.slow_factor);
  if (p.jitter != 0) s += ",jitter=" + compact(p.jitter) + ",seed=" + std::to_string(p.seed);
  if (p.realtime) s += ",realtime=1";
  for (const auto& [name, series] : p.sensors) {
    s += "," +
         std::string(name == "temperature_c" ? "temp"
                     : name == "power_w"     ? "power"
                                             : name) +
         "=";
    for (size_t i = 0; i < series.size(); ++i) s += (i ? ":" : "") + compact(series[i]);
  }
  if (!p.sensors.empty()) s += ",sensor_step=" + ms(p.sensor_step);
  if (p.idle_power) s += ",idle_power=" + compact(*p.idle_power);
  if (!p.warn.empty()) s += ",warn=" + p.warn;
  return s;
}

// A double count of nanoseconds as Nanos, saturated at kMaxDuration: llround
// of a value outside int64 is unspecified, and the clock must never wrap.
Nanos saturated_nanos(double ns) {
  if (!(ns > 0)) return Nanos(0);
  if (ns >= static_cast<double>(kMaxDuration.count())) return kMaxDuration;
  return Nanos(static_cast<int64_t>(std::llround(ns)));
}

Nanos transfer_time(size_t bytes, double bw) {
  return saturated_nanos(static_cast<double>(bytes) / bw * 1e9);
}

class SimDevice final : public DeviceBase {
 public:
  explicit SimDevice(SimParams p) : p_(p), rng_(stream_seed(p.seed, Stream::sim_jitter)) {
    clock_.set_sleeper([this](Nanos t) { run_events_until(t); });
  }
  SimDevice(const SimDevice&) = delete;
  SimDevice& operator=(const SimDevice&) = delete;

  DeviceInfo info() const override {
    DeviceInfo i;
    i.spec = effective_spec(p_);
    i.kind = "sim";
    i.description = "simulated accelerator behind a " +
                    std::string(p_.full_duplex ? "full" : "half") + "-duplex link (virtual clock)";
    i.queue_depth = p_.depth;
    i.in_process = false;
    i.duplex = p_.full_duplex ? Duplex::full : Duplex::half;
    i.clock = ClockKind::virtual_time;
    i.paced_clock = p_.realtime;
    i.properties["compute_ms"] = format_fixed(to_ms(p_.compute), 6);
    i.properties["bw_in_bytes_per_s"] = format_fixed(p_.bw_in, 0);
    i.properties["bw_out_bytes_per_s"] = format_fixed(p_.bw_out, 0);
    i.properties["latency_ms"] = format_fixed(to_ms(p_.latency), 6);
    i.properties["duplex"] = p_.full_duplex ? "full" : "half";
    i.properties["clock"] = p_.realtime ? "virtual, paced to real time" : "virtual";
    // Its costs are the model's own: declared where the least compute time is
    // known (jitter lowers it by its share; drift and a slowdown change it
    // over time, and a factor below 1 would speed it up).
    const bool slows_only = p_.slow_at < Nanos(0) || p_.slow_factor >= 1;
    if (p_.drift == 0 && slows_only) {
      DeclaredCosts c;
      c.compute = Nanos(static_cast<int64_t>(static_cast<double>(p_.compute.count()) *
                                             (1 - std::min(1.0, std::abs(p_.jitter)))));
      c.bw_in = p_.bw_in;
      c.bw_out = p_.bw_out;
      c.latency = p_.latency;
      c.duplex = p_.full_duplex ? Duplex::full : Duplex::half;
      i.declared_costs = c;
    }
    return i;
  }

  Clock& clock() override { return clock_; }

 protected:
  Result<LoadTimings> do_load(const ModelSource& source, ModelInfo& model) override {
    catch_up();
    reset_model();
    auto prepared = prepare_onnx_model(source);  // the same normalisation as the cpu device's
    if (!prepared) return tl::unexpected(prepared.error());
    // A frame whose transfer would take longer than one step may last is
    // refused here, not simulated as a saturated (wrong) time.
    for (const auto& [bytes, bw, dir] :
         {std::tuple{prepared->info.input_bytes(), p_.bw_in, "input"},
          std::tuple{prepared->info.output_bytes(), p_.bw_out, "output"}})
      if (static_cast<double>(bytes) / bw >= to_seconds(kMaxDuration))
        return fail(ErrorCode::invalid_argument,
                    std::string("sim: moving the model's ") + dir + " (" +
                        format_bytes(static_cast<double>(bytes)) + ") at " + format_rate(bw) +
                        " would take longer than the simulation's limit of 1e6 s per step; "
                        "raise the bandwidth");
    model = std::move(prepared->info);
    first_pending_ = true;
    if (!p_.warn.empty()) warnings_.push_back(p_.warn);
    advance_to(clock_.now() + p_.load);
    LoadTimings t;
    t.compile = p_.load;
    return t;
  }

  Result<InferenceTimings> do_run(BindingId binding) override {
    const uint64_t tag = kSyncTag;
    if (auto ok = start(binding, tag); !ok) return tl::unexpected(ok.error());
    for (;;) {
      auto c = next_completion(Nanos::max());
      if (!c) return tl::unexpected(c.error());
      if (c->tag == kSyncTag && c->binding == binding) return c->timings;
      deliver(*c);  // someone else's; keep it for wait_next
    }
  }

  // Its slot frees when it lands: a completion waits in the base (deliver).
  Result<void> do_submit(BindingId binding, uint64_t tag) override { return start(binding, tag); }

  Result<Completion> do_wait_next(Nanos timeout) override { return next_completion(timeout); }

  uint32_t queue_depth() const override { return p_.depth; }

  Result<DurationRun> do_run_for_duration(BindingId binding, Nanos duration,
                                          Nanos sleep_between) override {
    // A server passes a client's figures through: keep the clock's sums in range.
    if (duration > kMaxDuration || sleep_between > kMaxDuration)
      return fail(ErrorCode::invalid_argument,
                  "run_for_duration: the duration and the sleep between frames must be at most "
                  "1e6 s each");
    catch_up();
    // The input crosses once, the device loops on it, the output crosses once.
    const size_t in = model_info().input_bytes(), out = model_info().output_bytes();
    advance_to(clock_.now() + transfer_time(in, p_.bw_in) + p_.latency);
    payload_in_ += in;
    const Nanos start = clock_.now();
    Nanos end = start + duration;
    // Paced to real time, the loop's span is waited out, and cancel() cuts
    // it short: the frames are then counted up to where it was cancelled.
    // On the virtual clock alone the loop takes no time: nothing to cut.
    if (p_.realtime) {
      if (const auto cut = wait_for_loop_end(end)) end = std::max(start + Nanos(1), *cut);
      duration = end - start;
    }
    DurationRun r;
    if (!varies() && !first_pending_) {
      // Constant period: exact arithmetic, so huge counts stay instant.
      // Frame k runs over [k * period, k * period + compute).
      const Nanos period = p_.compute + sleep_between;
      const uint64_t completed =
          duration < p_.compute
              ? 0
              : static_cast<uint64_t>((duration - p_.compute).count() / period.count()) + 1;
      r.frames_completed = completed;
      // The next frame, if it started before the deadline, is cut off: aborted.
      const Nanos next_start = period * static_cast<int64_t>(completed);
      r.frames_aborted = next_start < duration ? 1 : 0;
    } else {
      Nanos t = start;
      uint64_t completed = 0;
      while (true) {
        const Nanos c = compute_time(t);
        if (t + c > end) {
          if (t < end) r.frames_aborted = 1;
          break;
        }
        t += c;
        r.frames_completed = ++completed;
        t += sleep_between;
        if (t >= end) break;
      }
    }
    advance_to(end);
    r.elapsed = duration;
    r.frames_per_second = static_cast<double>(*r.frames_completed) / to_seconds(duration);
    advance_to(clock_.now() + transfer_time(out, p_.bw_out) + p_.latency);
    payload_out_ += out;
    fill_outputs(binding);
    return r;
  }

 public:
  ByteCounters bytes() const override {
    ByteCounters b;
    b.payload_in = payload_in_;
    b.payload_out = payload_out_;
    b.link_in = payload_in_;  // the simulated link carries the payload only
    b.link_out = payload_out_;
    return b;
  }

  // The scripted series at the current virtual time.
  std::map<std::string, double> read_sensors() override {
    std::map<std::string, double> out;
    const auto k = static_cast<size_t>(std::max<int64_t>(0, clock_.now() / p_.sensor_step));
    for (const auto& [name, series] : p_.sensors)
      out[name] = series[std::min(k, series.size() - 1)];
    if (p_.idle_power && in_flight_ == 0) out["power_w"] = *p_.idle_power;
    return out;
  }

  std::vector<std::string> take_warnings() override { return std::exchange(warnings_, {}); }

 private:
  static constexpr uint64_t kSyncTag = ~uint64_t{0};

  enum class Stage { want_in, in_done, arrived, compute_done, want_out, out_done, landed };
  struct Request {
    uint64_t tag;
    BindingId binding;
    Nanos submitted, in_start, arrived, compute_start, compute_end, out_start, out_end;
    Nanos compute_cost;
  };
  struct Event {
    Nanos time;
    uint64_t seq;
    Stage stage;
    uint64_t request;
    bool operator>(const Event& o) const { return time != o.time ? time > o.time : seq > o.seq; }
  };
  // A FIFO resource: busy until free_at, with requests waiting in order.
  struct Resource {
    bool busy = false;
    std::deque<std::pair<uint64_t, bool>> waiting;  // (request, is_output_transfer)
  };

  bool varies() const { return p_.drift != 0 || p_.slow_at >= Nanos(0) || p_.jitter != 0; }

  Nanos compute_time(Nanos at) {
    double c = static_cast<double>(p_.compute.count());
    const double t_s = to_seconds(at);
    if (p_.drift != 0) c *= 1 + p_.drift * t_s;
    if (p_.slow_at >= Nanos(0) && at >= p_.slow_at) c *= p_.slow_factor;
    if (p_.jitter != 0) {
      c *= 1 + p_.jitter * (2 * unit_closed_open(rng_) - 1);
    }
    Nanos cost = saturated_nanos(c);
    if (first_pending_) {
      cost += p_.first;
      first_pending_ = false;
    }
    return cost;
  }

  void reset_model() {
    requests_.clear();
    events_ = {};
    in_ch_ = out_ch_ = compute_ = Resource{};
    in_flight_ = 0;
  }

  // Realtime: sleeps until the virtual time `end`, or until cancel(); then
  // the virtual time it was cancelled at, nullopt when it was not.
  std::optional<Nanos> wait_for_loop_end(Nanos end) {
    if (!origin_) origin_ = std::chrono::steady_clock::now() - clock_.now();
    std::unique_lock lock(cancel_mu_);
    looping_ = true;
    cancelled_ = false;
    const bool cut = cancel_cv_.wait_until(lock, *origin_ + end, [&] { return cancelled_; });
    looping_ = false;
    if (!cut) return std::nullopt;
    const Nanos at = std::chrono::duration_cast<Nanos>(std::chrono::steady_clock::now() - *origin_);
    return std::min(at, end);
  }

 public:
  void cancel() override {
    {
      std::lock_guard lock(cancel_mu_);
      if (!looping_) return;
      cancelled_ = true;
    }
    cancel_cv_.notify_all();
  }

 private:
  // Paced to real time, the virtual clock stands still while the device is
  // idle (between runs, between a server's connections and models, while a
  // client is busy elsewhere), so it falls behind the wall clock. Work
  // started then would sleep until origin_ + t, an instant already past: it
  // would finish at once, faster than the device's own costs allow. So
  // every entry that starts work on an idle device first moves the pacing's
  // origin up to now. The virtual time itself does not move: an engine that
  // reads the sim's clock sees the same timeline as without realtime=1.
  void catch_up() {
    if (!p_.realtime || !origin_ || in_flight_ > 0 || !events_.empty()) return;
    const auto now = std::chrono::steady_clock::now() - clock_.now();
    if (now > *origin_) origin_ = now;
  }

  void advance_to(Nanos t) {
    if (p_.realtime) {
      if (!origin_) origin_ = std::chrono::steady_clock::now() - clock_.now();
      std::this_thread::sleep_until(*origin_ + t);
    }
    clock_.advance_to(t);
  }

  void push(Nanos t, Stage s, uint64_t id) { events_.push(Event{t, seq_++, s, id}); }

  // A request enters the pipeline (submit, or run's own). The base checked
  // the binding and, for submit, the queue depth; run checks it here.
  Result<void> start(BindingId binding, uint64_t tag) {
    catch_up();
    if (in_flight_ >= p_.depth)
      return fail(ErrorCode::queue_full,
                  "sim queue depth " + std::to_string(p_.depth) + " already in flight");
    const uint64_t id = next_id_++;
    Request r{};
    r.tag = tag;
    r.binding = binding;
    r.submitted = clock_.now();
    requests_.emplace(id, r);
    ++in_flight_;
    payload_in_ += model_info().input_bytes();
    push(clock_.now(), Stage::want_in, id);
    return {};
  }

  Resource& in_channel() { return in_ch_; }
  Resource& out_channel() { return p_.full_duplex ? out_ch_ : in_ch_; }

  // Starts a transfer on `ch` now if it is idle, else queues it.
  void request_channel(Resource& ch, uint64_t id, bool output) {
    if (!ch.busy)
      begin_transfer(ch, id, output);
    else
      ch.waiting.emplace_back(id, output);
  }
  void begin_transfer(Resource& ch, uint64_t id, bool output) {
    ch.busy = true;
    Request& r = requests_.at(id);
    const Nanos now = clock_.now();
    if (output) {
      r.out_start = now;
      push(now + transfer_time(model_info().output_bytes(), p_.bw_out), Stage::out_done, id);
    } else {
      r.in_start = now;
      push(now + transfer_time(model_info().input_bytes(), p_.bw_in), Stage::in_done, id);
    }
  }
  void release_channel(Resource& ch) {
    ch.busy = false;
    if (!ch.waiting.empty()) {
      auto [id, output] = ch.waiting.front();
      ch.waiting.pop_front();
      begin_transfer(ch, id, output);
    }
  }
  void begin_compute(uint64_t id) {
    compute_.busy = true;
    Request& r = requests_.at(id);
    r.compute_start = clock_.now();
    r.compute_cost = compute_time(clock_.now());
    push(clock_.now() + r.compute_cost, Stage::compute_done, id);
  }

  void fill_outputs(BindingId binding) {
    // Deterministic outputs derived from the inputs (a checksum), so
    // determinism checks have something to compare.
    uint64_t h = 1469598103934665603ull;
    for (const auto& in : bound(binding).inputs)
      for (size_t i = 0; i < in.size(); i += 64)
        h = (h ^ static_cast<uint64_t>(in[i])) * 1099511628211ull;
    for (const auto& out : bound(binding).outputs)
      for (size_t i = 0; i < out.size(); i += 64)
        out[i] = static_cast<std::byte>((h >> (i % 56)) & 0xff);
  }

  // Processes events until a request lands; the clock follows the events.
  Result<Completion> next_completion(Nanos timeout) {
    const Nanos deadline = timeout == Nanos::max() ? Nanos::max() : clock_.now() + timeout;
    while (!events_.empty()) {
      const Event e = events_.top();
      if (e.time > deadline) {
        advance_to(deadline);
        return fail(ErrorCode::timeout, "sim: no completion within " + format_duration(timeout));
      }
      events_.pop();
      if (auto c = process(e)) return *c;
    }
    return fail(ErrorCode::invalid_argument, "wait_next: nothing in flight");
  }

  // Clock::sleep_until: the events before t happen (completions wait in
  // the base for wait_next: deliver), then the clock stands at t.
  void run_events_until(Nanos t) {
    while (!events_.empty() && events_.top().time <= t) {
      const Event e = events_.top();
      events_.pop();
      if (auto c = process(e)) deliver(*c);
    }
    advance_to(t);
  }

  // Advances the clock to the event and applies it; a landed request
  // returns its completion.
  std::optional<Completion> process(const Event& e) {
    advance_to(e.time);
    Request& r = requests_.at(e.request);
    switch (e.stage) {
      case Stage::want_in:
        request_channel(in_channel(), e.request, false);
        break;
      case Stage::in_done:
        release_channel(in_channel());
        push(clock_.now() + p_.latency, Stage::arrived, e.request);
        break;
      case Stage::arrived:
        r.arrived = clock_.now();
        if (!compute_.busy)
          begin_compute(e.request);
        else
          compute_.waiting.emplace_back(e.request, false);
        break;
      case Stage::compute_done:
        r.compute_end = clock_.now();
        compute_.busy = false;
        if (!compute_.waiting.empty()) {
          const uint64_t next = compute_.waiting.front().first;
          compute_.waiting.pop_front();
          begin_compute(next);
        }
        request_channel(out_channel(), e.request, true);
        break;
      case Stage::out_done:
        release_channel(out_channel());
        push(clock_.now() + p_.latency, Stage::landed, e.request);
        break;
      case Stage::landed: {
        r.out_end = clock_.now();
        Completion c;
        c.tag = r.tag;
        c.binding = r.binding;
        c.completed_at = clock_.now();
        c.timings.transfer_in = r.arrived - r.in_start;
        c.timings.queue_wait = r.compute_start - r.arrived;
        c.timings.compute = r.compute_end - r.compute_start;
        c.timings.transfer_out = r.out_end - r.out_start;
        payload_out_ += model_info().output_bytes();
        fill_outputs(r.binding);
        requests_.erase(e.request);
        --in_flight_;
        return c;
      }
      case Stage::want_out:  // output transfers are requested at compute_done
        break;
    }
    return std::nullopt;
  }

  SimParams p_;
  VirtualClock clock_;
  std::optional<std::chrono::steady_clock::time_point> origin_;
  // cancel(), from any thread: wakes a realtime loop's wait.
  std::mutex cancel_mu_;
  std::condition_variable cancel_cv_;
  bool looping_ = false, cancelled_ = false;
  uint64_t rng_;
  bool first_pending_ = false;
  std::unordered_map<uint64_t, Request> requests_;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
  std::vector<std::string> warnings_;  // raised since the last take_warnings()
  Resource in_ch_, out_ch_, compute_;
  uint64_t next_id_ = 0, seq_ = 0;
  uint32_t in_flight_ = 0;
  uint64_t payload_in_ = 0, payload_out_ = 0;
};

}  // namespace

Result<std::unique_ptr<Device>> open_sim_device(const std::map<std::string, std::string>& params) {
  auto p = parse_params(params);
  if (!p) return tl::unexpected(p.error());
  return std::unique_ptr<Device>(std::make_unique<SimDevice>(*p));
}

}  // namespace rig

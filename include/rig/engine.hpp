// The measurement engine: how to measure. It drives a Device through the
// phases of a benchmark and returns figures; it never formats text.
//
// Phases (each a function, so other scenarios such as a depth sweep or a frame
// ladder compose them):
//   cold_start      load -> allocate/bind -> first inference (TTFO)
//   measure_latency lone frames at depth 1 (overall and device-side latency)
//   measure_steady  pipelined at depth N: warm-up until the rate settles, then
//                   windows until duration, count and stability are met
//   measure_offered open loop: frames arrive on a schedule (constant or
//                   Poisson) and are submitted at their arrival
//
// Time: only through Device::clock(), so the sim device's virtual clock makes
// every phase deterministic. The timed region of each inference holds the
// device call and clock reads only.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rig/clock.hpp"
#include "rig/device.hpp"
#include "rig/input_data.hpp"
#include "rig/stats.hpp"

namespace rig {

// What the engine tells a watcher while it measures: the monitor samples at
// window boundaries, a trace records each inference, a progress line shows the
// phase. Called on the engine's thread, outside the clock reads that bound a
// timed call; times are on the device clock. No observer (nullptr) costs
// nothing. Implementations keep each call short: a call per inference sits
// in the engine's bookkeeping between a completion and the next submit.
enum class EnginePhase { load, allocate, first_inference, latency, warmup, measure, drain };
std::string_view to_string(EnginePhase phase);

// A request to stop measuring early, as the first SIGINT or SIGTERM makes
// one (src/cli): the engine reads it between lone frames, at each completion
// of the closed loop and before each arrival of the open loop, and ends the
// phase there as its stop rule would, marking the result cut_short; later
// phases do not run. Process-wide; request_stop() is async-signal-safe.
void request_stop() noexcept;
bool stop_requested() noexcept;
void clear_stop_request() noexcept;  // for tests, and before a new measurement

struct WindowFigure;
class EngineObserver {
 public:
  virtual ~EngineObserver() = default;
  virtual void phase_begin(EnginePhase /*phase*/, Nanos /*at*/) {}
  virtual void phase_end(EnginePhase /*phase*/, Nanos /*at*/) {}
  // A measured window closed at `at` (its figure has the window's counts).
  virtual void window_closed(const WindowFigure& /*window*/, Nanos /*at*/) {}
  // One inference on request slot `slot` (< the depth; the buffer set it
  // submitted is Completion::binding, Workspace::bindings) went in at
  // `at`; its completion came back at `at` (Completion::completed_at is the
  // device's own stamp). Lone frames (run) report both too.
  virtual void submitted(uint32_t /*slot*/, Nanos /*at*/) {}
  virtual void completed(uint32_t /*slot*/, const Completion& /*completion*/, Nanos /*at*/) {}
};

// Caller-side buffers for `slots` bindings (one binding per request in flight).
// Inputs hold the data of rig/input_data.hpp (the generator `rig run --seed`
// uses): slot 0 exactly what `rig run --seed SEED` feeds, the other slots
// other draws (slot_input_seed). The buffers are shared so that measure_steady can
// keep them alive when a stuck device never returns its requests.
// Each buffer honours the device's DeviceInfo::buffer_alignment and
// buffer_padding: its allocation (in `buffers`) is padded and holds an
// aligned view of the tensor's exact size (in `views`, what was bound).
struct Workspace {
  // allocations: inputs then outputs, per slot
  std::shared_ptr<std::vector<std::vector<std::byte>>> buffers =
      std::make_shared<std::vector<std::vector<std::byte>>>();
  std::vector<std::span<std::byte>> views;  // the bound tensors, one per allocation
  // One per buffer set. The pipelined phases at depth D submit slot s with
  // bindings s, s + D, s + 2D, ... in turn (one request per slot is in
  // flight, so a set is never in two requests at once); the lone frames use
  // set 0, or every set in turn when input frames were given.
  std::vector<BindingId> bindings;
  // Given input frames (--input): set k holds frame k mod frames; each is
  // copied into its set once, when the set is bound, never while measuring.
  // Null: generated data (fill_generated).
  std::shared_ptr<const std::vector<InputFrame>> frames;
};

// Half the physical memory: caller buffers beyond it are refused (a named
// limit_exceeded error) instead of failing in the allocator.
uint64_t memory_budget_bytes();

struct TtfoResult {
  Nanos load{0};  // Device::load: read + parse + compile
  LoadTimings load_breakdown;
  Nanos allocate{0};         // allocate caller buffers + bind
  Nanos first_inference{0};  // the first run: first transfer in + compute + out
  InferenceTimings first_timings;
  Nanos total{0};  // load + allocate + first_inference
};

struct ColdStart {
  TtfoResult ttfo;
  Workspace workspace;
};

// Loads the model, allocates and binds one buffer set and runs the first
// inference on it (TTFO: load + allocate + first inference; preparing the
// input data is not timed), then binds the other `slots` - 1 sets. Fails if
// the device cannot load or bind, or the buffers exceed memory_budget_bytes().
// With `inputs` (--input), their frames (InputFiles::map, after the load)
// fill the sets instead of generated data, and there are at least as many
// sets as frames, so that every frame is measured without a copy.
Result<ColdStart> cold_start(Device& device, const ModelSource& model, uint32_t slots,
                             uint64_t seed, EngineObserver* observer = nullptr,
                             const InputFiles* inputs = nullptr);

// Allocates and binds `slots` more buffer sets (for a deeper queue than the
// cold start prepared).
Result<void> grow_workspace(Device& device, Workspace& workspace, uint32_t slots, uint64_t seed);

struct LatencySettings {
  uint64_t samples = 200;                       // lone frames to time
  Nanos max_duration{std::chrono::seconds(5)};  // stop earlier when this passes
  Nanos request_timeout{std::chrono::seconds(30)};
  double confidence = kDefaultConfidence;  // of the percentiles' intervals
  EngineObserver* observer = nullptr;      // not owned
};

struct LatencyResult {
  uint64_t samples = 0;
  bool cut_short = false;  // a stop request ended the lone frames early
  uint64_t errors = 0;
  std::optional<Error> first_error;
  Summary overall_ms;   // client-observed, run() call to return
  Summary hardware_ms;  // device-reported compute time (empty when unknown)
  Summary transfer_in_ms, transfer_out_ms, queue_wait_ms;
  // (overall - hardware) / overall at the medians; nullopt when the device
  // reports no compute time.
  std::optional<double> bus_share;
  // The rig round trip on this link with no device (DeviceInfo::link_floor's
  // median), set beside the lone frames by the scenario; remote devices only.
  std::optional<double> rig_round_trip_ms;
};

LatencyResult measure_latency(Device& device, const Workspace& workspace,
                              const LatencySettings& settings);

// DeviceInfo::link_floor's median in milliseconds; nullopt without one.
std::optional<double> link_floor_ms(const DeviceInfo& info);

// The stop rule of a repeat (adaptive, SteadyStopRule): it stops at the
// first window close where (a) min_duration and min_inferences are met, (b)
// the last 3 windows agree within stability_tolerance, (c) the rate's 95%
// interval (Student t over the window rates) has a half-width within
// rate_tolerance of the rate and (d) where the device declares its costs, the
// rate is not above the cap they imply; while any fails it goes on, up to
// min_duration x max_duration_factor.
struct SteadySettings {
  uint32_t depth = 1;                            // requests kept in flight
  Nanos min_duration{std::chrono::seconds(10)};  // measured time per repeat, at least
  uint64_t min_inferences = 100;                 // completions per repeat, at least
  uint32_t windows = 10;                         // window length = min_duration / windows
  double stability_tolerance = 0.05;             // last 3 windows: (max-min)/median
  double rate_tolerance = 0.02;                  // the rate's interval half-width / rate
  double max_duration_factor = 2.0;              // keep going while unmet, up to this x
  Nanos warmup_window{std::chrono::milliseconds(500)};
  Nanos warmup_max{std::chrono::seconds(5)};
  Nanos request_timeout{std::chrono::seconds(30)};
  size_t reservoir_capacity = 65536;  // latency samples kept, in time order (OrderedSample)
  uint64_t seed = 1;
  EngineObserver* observer = nullptr;  // not owned
};

struct WindowFigure {
  double start_s = 0;  // since the start of the measured part
  double duration_s = 0;
  uint64_t inferences = 0;
  double rate = 0;  // inferences per second
};

struct SteadyRepeat {
  uint32_t depth = 0;
  uint64_t inferences = 0;  // counted in the measured part
  Nanos elapsed{0};         // measured part
  double rate = 0;          // inferences / elapsed, per second
  std::vector<WindowFigure> windows;
  bool stable = false;
  std::optional<double> last_windows_spread;  // of the last 3 windows
  // The rate's 95% interval from its windows (Student t over the window
  // rates), as a share of the rate; nullopt below 2 windows.
  std::optional<double> rate_half_width;
  bool precise = false;  // rate_half_width <= rate_tolerance when it stopped
  bool capped = false;   // stopped by the cap, with a condition unmet
  // The cap the device's declared costs imply at this depth (frames/s);
  // nullopt when it declares none. A rate above it (beyond
  // kDeclaredCapRounding) is impossible: a pipeline still filling or
  // draining, and the verdict says so.
  std::optional<double> declared_cap;
  Nanos warmup{0};
  uint64_t warmup_inferences = 0;
  bool warmup_settled = false;
  Summary latency_ms;  // per-request latency while pipelined (includes queueing)
  uint64_t errors = 0;
  std::optional<Error> first_error;
  bool aborted = false;          // stopped early by errors or a timeout
  bool cut_short = false;        // stopped early by a stop request (request_stop)
  bool device_stuck = false;     // requests never came back; their buffers are kept alive
  uint64_t completed_total = 0;  // every completion, warm-up and drain included
  // bytes moved during the whole repeat divided by every completed inference
  double payload_in_per_inference = 0, payload_out_per_inference = 0;
  double link_in_per_inference = 0, link_out_per_inference = 0;
  // host-side cost of rig itself (real clocks only)
  double bookkeeping_ns_per_inference = 0;  // between a completion and the next submit
  double wait_fraction = 0;  // share of the measured time the engine spent waiting on the device
};

// Warm-up windows of min(500 ms, one measurement window): every scenario
// warms up alike (steady_settings in rig/scenario/settings.hpp).
Nanos default_warmup_window(Nanos duration, uint32_t windows);

// How far above a declared cap a measured rate may lie before it is
// impossible: a repeat's rate is counted between completions of one slot, so
// on a deterministic device only the pattern of completions within the span
// is left to round (docs/methodology.md, "Steady state").
inline constexpr double kDeclaredCapRounding = 0.005;

// The durations of pipeline cycles (from one completion of the reference
// slot to its next) seen so far. Their relative range says how much whole
// cycles can move a window's rate: none when every cycle lasts the same.
struct CycleRange {
  uint64_t count = 0;
  Nanos shortest{0}, longest{0}, total{0};
  void add(Nanos cycle);
  // (longest - shortest) / mean; 0 below two cycles.
  double relative_range() const;
};

// The warm-up of a closed loop, a rule fed one successful completion at a
// time. Completions are counted in windows of whole pipeline cycles: a
// window closes on a completion of the reference slot (the first slot to
// complete) once it has lasted `window` and holds at least one cycle, so
// clumped completions cannot make consecutive windows alternate. The warm-up
// settles when two consecutive windows agree within `tolerance` and, where
// the device declares a cap (`rate_cap`), the last window is not above it
// (a pipeline that is still filling runs above what it sustains); it gives
// up (capped) once `max` has passed since `begin`.
class WarmupRule {
 public:
  struct Settings {
    Nanos window{std::chrono::milliseconds(500)};
    Nanos max{std::chrono::seconds(5)};
    double tolerance = 0.05;
    std::optional<double> rate_cap;  // frames/s
  };
  enum class State { warming, settled, capped };

  WarmupRule(const Settings& settings, Nanos begin);
  // One successful completion of `slot` at `at`; the state after it.
  State complete(uint32_t slot, Nanos at);
  // Completions in the closed windows (the warm-up's count once it ended).
  uint64_t inferences() const { return counted_; }
  // The rate of the last closed window, frames/s.
  std::optional<double> last_rate() const { return last_rate_; }
  // The slot whose completions close windows (set by the first completion).
  std::optional<uint32_t> reference_slot() const { return reference_; }
  // The pipeline cycles seen (reference slot to reference slot, the filling
  // one left out): shortest, longest and their count.
  const CycleRange& cycles() const { return cycles_; }

 private:
  Settings s_;
  Nanos begin_, window_start_;
  uint64_t window_count_ = 0, window_cycles_ = 0, counted_ = 0;
  std::optional<uint32_t> reference_;
  std::optional<Nanos> last_reference_;
  std::optional<double> last_rate_;
  CycleRange cycles_;
};

// The stop rule of a repeat's measured part, fed one successful completion
// at a time from the completion that ended the warm-up (`start`, a
// completion of `reference_slot`). Windows close on completions of the
// reference slot, so each holds whole pipeline cycles. A window lasts at
// least min_duration / windows and holds enough cycles that one cycle's
// difference from the others moves its rate by at most half the stability
// tolerance: (2 / tolerance) x the relative range of the cycles seen (from
// the warm-up's on), at most 2 / tolerance cycles; none more than a third of
// the cap, so that three windows (the stability check's) fit under it. A
// device whose cycles all last the same keeps the short windows; one whose
// cycles follow a pattern (a half-duplex link: mostly short cycles, then a
// long one) gets windows long enough to hold it. It stops at the first
// window close where the conditions of SteadySettings hold, or at the cap
// (max_duration).
class SteadyStopRule {
 public:
  struct Settings {
    Nanos min_duration{std::chrono::seconds(10)};
    Nanos max_duration{std::chrono::seconds(20)};
    uint64_t min_inferences = 100;
    uint32_t windows = 10;
    double stability_tolerance = 0.05;
    double rate_tolerance = 0.02;
    CycleRange warm_cycles;          // the warm-up's, sizes the first windows
    std::optional<double> rate_cap;  // frames/s, the declared cap
  };
  struct Step {
    std::optional<WindowFigure> closed;  // the window this completion closed
    bool stop = false;
  };

  SteadyStopRule(const Settings& settings, uint32_t reference_slot, Nanos start);
  Step complete(uint32_t slot, Nanos at);

  uint64_t inferences() const { return inferences_; }
  Nanos start() const { return start_; }
  Nanos last() const { return last_; }  // the last completion counted
  // The cycles a window holds at least, as of now.
  uint64_t window_cycles_wanted() const;
  const std::vector<WindowFigure>& windows() const { return windows_; }
  // As of the last window close (SteadyRepeat's fields of the same names).
  bool stable() const { return stable_; }
  bool precise() const { return precise_; }
  bool met() const { return met_; }
  bool above_cap() const { return above_cap_; }
  std::optional<double> last_windows_spread() const { return spread_; }
  std::optional<double> rate_half_width() const { return half_width_; }

 private:
  Settings s_;
  uint32_t reference_;
  Nanos start_, last_, last_reference_, window_start_, window_len_, longest_window_;
  uint64_t inferences_ = 0, window_count_ = 0, window_cycles_ = 0;
  CycleRange cycles_;
  std::vector<WindowFigure> windows_;
  std::vector<double> window_rates_;
  bool stable_ = false, precise_ = false, met_ = false, above_cap_ = false;
  std::optional<double> spread_, half_width_;
};

// Runs one pipelined repeat. The workspace needs at least settings.depth slots.
// Its loop is the engine's timed region (a wait, two clock reads, a submit);
// the decisions between a completion and the next submit are the rules'
// (WarmupRule, then SteadyStopRule), fed one completion at a time.
SteadyRepeat measure_steady(Device& device, const Workspace& workspace,
                            const SteadySettings& settings);

// ---------------------------------------------------------------------------
// Offered load (open loop): frames arrive on a schedule whatever the device
// does, as a camera delivers them. Latency is measured from each frame's
// scheduled arrival (so time a frame waited because earlier frames were late
// counts: no coordinated omission) and from its actual submission.

enum class Arrival { constant, poisson };
std::string_view to_string(Arrival arrival);
// What happens to an arriving frame when every request slot is in flight:
// wait for one (the frame is submitted late) or drop it (counted).
enum class QueueFull { wait, drop };
std::string_view to_string(QueueFull policy);

struct OfferedSettings {
  double rate = 30;  // frames offered per second (> 0)
  Arrival arrival = Arrival::constant;
  Nanos duration{std::chrono::seconds(10)};  // arrivals measured over this long
  // Arrivals before the measured part (submitted, not counted); 0: none.
  Nanos warmup{std::chrono::milliseconds(500)};
  uint32_t depth = 1;  // request slots: most frames in flight at once
  QueueFull on_full = QueueFull::wait;
  // A frame submitted more than this after its scheduled arrival is late.
  Nanos late_threshold{std::chrono::milliseconds(1)};
  uint32_t windows = 10;  // the measured part in windows (window_closed)
  Nanos request_timeout{std::chrono::seconds(30)};
  size_t reservoir_capacity = 65536;  // latency samples kept, in time order (OrderedSample)
  double confidence = kDefaultConfidence;
  uint64_t seed = 1;                   // the Poisson schedule's generator
  EngineObserver* observer = nullptr;  // not owned
};

struct OfferedRun {
  double offered_rate = 0;    // the setting, frames/s
  double scheduled_rate = 0;  // measured arrivals' rate: (n - 1) / (last - first arrival)
  double achieved_rate = 0;   // completions / span (first measured arrival .. last completion)
  uint64_t arrivals = 0;      // measured arrivals scheduled
  uint64_t submitted = 0;     // of them, submitted
  uint64_t completed = 0;     // of them, completed without error
  uint64_t dropped = 0;       // of them, dropped with every slot in flight (QueueFull::drop)
  uint64_t late = 0;          // of them, submitted more than late_threshold after arrival
  double late_share = 0;      // late / submitted
  // The upper end of late_share's interval at `confidence` (the flags in
  // order: series_mean_interval); nullopt when the late frames cluster
  // beyond what 8 batches of the run hold apart.
  std::optional<double> late_share_upper;
  Summary lateness_ms;  // how late the late ones were
  Summary latency_ms;   // completion - scheduled arrival
  Summary service_ms;   // completion - actual submission
  Nanos span{0};        // first measured arrival to the later of its end and the last completion
  std::vector<WindowFigure> windows;
  uint32_t depth = 0;
  uint64_t errors = 0;
  std::optional<Error> first_error;
  bool aborted = false;
  bool cut_short = false;  // stopped early by a stop request (request_stop)
  bool device_stuck = false;
  // Every completion, warm-up and drain included (the bytes' denominator).
  uint64_t completed_total = 0;
  // Bytes moved during the whole run divided by completed_total, as
  // SteadyRepeat counts them.
  double payload_in_per_inference = 0, payload_out_per_inference = 0;
  double link_in_per_inference = 0, link_out_per_inference = 0;
  // Dropped nothing, late_share <= 1%, and completed at the scheduled rate
  // (achieved >= 99% of scheduled_rate, no errors).
  bool keeps_up = false;
};

// The share of late frames above which a run does not keep up (perf_analyzer
// flags more than 1% of delayed requests).
inline constexpr double kLateShareLimit = 0.01;

// Runs one offered-load measurement. The workspace needs settings.depth slots.
// Waits go through the device clock (Clock::sleep_until when nothing is in
// flight, wait_next with a timeout up to the next arrival otherwise), so the
// sim runs it instantly. Calls the observer like measure_steady.
OfferedRun measure_offered(Device& device, const Workspace& workspace,
                           const OfferedSettings& settings);

}  // namespace rig

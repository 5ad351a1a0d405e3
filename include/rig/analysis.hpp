// Characterization scenarios composed from the engine's phases (cold_start,
// measure_latency, measure_steady): the frame ladder (the link), the depth
// sweep (the pipelining knee), A/B with a noise verdict, and bus prediction.
// They drive any Device through its interface and never format text; the
// reporters are in rig/analysis_report.hpp. docs/methodology.md explains
// each figure.
//
// Thread safety: each function drives its device(s) from the calling thread
// only, like the engine.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "rig/device.hpp"
#include "rig/engine.hpp"
#include "rig/environment.hpp"
#include "rig/link_profile.hpp"
#include "rig/model.hpp"
#include "rig/stats.hpp"

namespace rig {

// ---------------------------------------------------------------------------
// Building blocks

// One pipelined measurement point: `repeats` x measure_steady at one depth.
struct PointSettings {
  Nanos duration{std::chrono::seconds(2)};  // measured time per repeat, at least
  uint64_t min_inferences = 20;             // completions per repeat, at least
  uint32_t windows = 10;                    // per repeat (stability compares the last 3)
  double stability_tolerance = 0.05;
  Nanos warmup_max{std::chrono::seconds(5)};
  Nanos request_timeout{std::chrono::seconds(30)};
  uint32_t repeats = 3;
  uint64_t seed = 1;
};

// Names the bad setting; independent of NDEBUG.
Result<void> validate(const PointSettings& settings);

struct PointResult {
  uint32_t depth = 0;
  // The rate of each repeat: the engine's SteadyRepeat::rate, completions
  // counted over a span of whole pipeline cycles (docs/methodology.md, section
  // 3) -- the figure rig bench reports and rig predict reads. A repeat that
  // counted no span (aborted in the warm-up) has none.
  std::vector<double> repeat_rates;  // frames/s, per repeat that has one
  Summary rate;                      // across repeats, frames/s
  // Diagnostic only: Little's law, depth / mean pipelined latency, per repeat.
  // It equals the rate while `depth` requests are always in flight, and reads
  // above it by the share of each cycle a slot spends between its completion
  // and its next submit (the rig's own bookkeeping, or a submit that waited).
  Summary little_rate;
  std::optional<double> ms_per_frame;  // 1000 / median rate
  bool stable = false;                 // every repeat stable
  uint64_t errors = 0;
  std::optional<Error> first_error;
  bool aborted = false;
};

// The device's own queue depth: the "device_queue_depth" property where the
// device reports one (a remote device: the hosted device's queue, while its
// queue_depth is what one connection may keep in flight, by default twice
// that), else DeviceInfo::queue_depth. A property that is not a whole number
// >= 1 is ignored. queue_depth stays the limit on requests in flight.
uint32_t device_queue_depth(const DeviceInfo& info);

// The workspace needs at least `depth` slots.
PointResult measure_point(Device& device, const Workspace& workspace, uint32_t depth,
                          const PointSettings& settings);

// Least squares y = fixed + x / bandwidth over (bytes, milliseconds).
struct LinkFit {
  size_t points = 0;
  std::optional<double> fixed_ms;               // intercept
  std::optional<double> bandwidth_bytes_per_s;  // 1 / slope; nullopt unless slope > 0
  std::vector<double> residuals_ms;             // observed - fitted, per point
  std::vector<double> relative_residuals;       // residual / observed, per point
  std::optional<double> rms_relative_residual;
  std::optional<double> max_relative_residual;  // largest |relative residual|
  std::optional<double> r_squared;              // nullopt when the times do not vary
};

// Needs two distinct x values; fewer leave every figure nullopt.
LinkFit fit_link(std::span<const double> bytes, std::span<const double> ms);

// The longest run of consecutive rungs (by size) whose MB/s agree within
// `tolerance` ((max - min) / median); ties go to the larger frames. Found
// only with at least two rungs.
struct Plateau {
  bool found = false;
  size_t first = 0, last = 0;  // rung indices, inclusive
  std::optional<double> median_mb_per_s, min_mb_per_s, max_mb_per_s;
  double tolerance = 0;
};

Plateau find_plateau(std::span<const std::optional<double>> mb_per_s, double tolerance);

// ---------------------------------------------------------------------------
// rig ladder: transport models (negligible compute) at each frame size.

struct LadderSettings {
  std::vector<std::string> sizes = {"512p", "720p", "1080p", "4k"};
  uint32_t depth = 4;  // pipelined depth; clamped to the device's queue depth
  PointSettings point;
  uint64_t latency_samples = 20;    // lone frames per size
  double plateau_tolerance = 0.10;  // MB/s agreement within the plateau
  // A rung enters the bandwidth fit only when the pipeline hides the fixed
  // latency: its pipelined time per frame is within this share above the
  // time its bytes take to cross in a lone frame (bytes / the lone-frame
  // fit's bandwidth). Above it the rung is latency-bound: the depth is too
  // shallow, or the requests travel in clumps that leave the link idle while
  // they all wait out the latency together ...
  double latency_bound_margin = 0.03;
  // ... and it stays out when the device-reported compute time is at least
  // this share of the pipelined time per frame (it measures compute).
  double compute_bound_share = 0.8;
};

Result<void> validate(const LadderSettings& settings);

enum class RungBound { link, latency, compute, failed };
std::string_view to_string(RungBound bound);

enum class Duplex { half, full, unknown };
std::string_view to_string(Duplex duplex);

struct LadderRung {
  std::string size;  // as given ("512p", "640x480")
  FrameSize frame;
  double bytes_in = 0, bytes_out = 0;  // per frame, the model's declared sizes
  PointResult pipelined;
  std::optional<double> mb_per_s;    // (in + out) / pipelined time per frame, 10^6 B/s
  Summary lone_ms;                   // lone frames (depth 1), client-observed
  std::optional<double> compute_ms;  // device-reported compute, median; nullopt when unknown
  std::optional<double> link_ms;     // lone median - compute (or the lone median)
  uint64_t lone_errors = 0;
  RungBound bound = RungBound::failed;
  bool in_bandwidth_fit = false;
};

struct LadderResult {
  LadderSettings requested;
  LadderSettings effective;  // depth clamped to the device
  Environment environment;
  DeviceInfo device;
  bool virtual_clock = false;
  std::vector<LadderRung> rungs;  // sorted by bytes per frame
  Plateau plateau;
  // Lone-frame link time (client-observed minus device-reported compute) vs
  // (in + out) bytes over every rung: its intercept is the round trip.
  LinkFit lone_fit;
  // Pipelined time per frame vs (in + out) bytes over the link-bound rungs:
  // its slope is the bandwidth; its intercept the per-frame cost pipelining
  // does not hide.
  LinkFit pipelined_fit;
  // Of in + out bytes: the pipelined fit's, else the lone fit's.
  std::optional<double> bandwidth_bytes_per_s;
  bool bandwidth_from_lone_frames = false;
  // Half duplex: in and out share one channel, and bandwidth_bytes_per_s is
  // its rate. Full duplex: pipelined, in and out overlap, so in + out bytes
  // move faster than either direction (1.25x for transport frames on a
  // symmetric link). From the device's "duplex" property ("half", "full")
  // where it has one, else inferred: full when the pipelined fit's bandwidth
  // is above 1.1x the lone-frame fit's (a device that overlaps its transfers
  // looks the same); unknown without both fits.
  Duplex duplex = Duplex::unknown;
  bool duplex_from_device = false;
  // One direction's bandwidth. Half duplex: the shared channel's,
  // bandwidth_bytes_per_s. Full duplex: the input direction's, which bounds a
  // pipelined transport frame (it carries 4x the output's bytes): the
  // pipelined time per frame fitted against bytes in, or the lone-frame fit's
  // bandwidth when the bandwidth comes from lone frames (a lone frame's two
  // crossings do not overlap). nullopt while the duplex is unknown.
  std::optional<double> direction_bandwidth_bytes_per_s;
  std::optional<double>
      round_trip_ms;  // lone fit intercept: fixed latency of a frame's two crossings
  std::optional<double> per_transfer_ms;  // round trip / 2: one crossing
  std::optional<double> worst_spread;     // largest repeat spread of any rung
  std::optional<size_t> worst_spread_rung;
  std::vector<std::string> notes;  // what to change, and what the figures do not show
};

// Builds each transport model (u8, 4 channels, output 1/4 of the input),
// cold-starts it, times lone frames, then measures pipelined repeats. Fails
// when a size is malformed or a model does not load; a rung whose
// inferences fail is kept and marked failed.
Result<LadderResult> run_ladder(Device& device, const LadderSettings& settings);

// ---------------------------------------------------------------------------
// rig sweep: pipelined rate against depth.

struct SweepSettings {
  uint32_t min_depth = 1, max_depth = 64;  // powers of two in between, clamped to the queue depth
  PointSettings point;
  double knee_fraction = 0.95;  // knee: the smallest depth reaching this share of the best rate
  bool refine = true;           // bisect between the knee and the depth measured before it
  uint64_t latency_samples = 50;
};

Result<void> validate(const SweepSettings& settings);

// Parses "1..64" or "64" (= 1..64).
Result<std::pair<uint32_t, uint32_t>> parse_depth_range(std::string_view text);

// The knee against the device's own queue depth Q (device_queue_depth). "One
// step" is one step of the unrefined sweep (powers of two); "rising at the top"
// means the deepest depth swept still gained more than half of what linear
// scaling from the depth measured before it would give.
enum class KneeVsQueue {
  below,              // the knee is more than one step below Q: the rate flattens before the
                      // queue fills
  at_queue_depth,     // the knee is within one step below Q (or at it) and the rate is flat
                      // there: the depths beyond Q that a connection takes, or the last step
                      // into Q, add no rate
  queue_limited,      // the knee is within one step of Q, the sweep ends at Q (the deepest the
                      // device takes) and the rate is still rising there: a deeper queue would
                      // raise it
  above_queue_depth,  // the knee is above Q (a remote device's connection takes more than Q):
                      // the requests the server holds cover the link's round trip
  still_rising,       // --depth stopped the sweep below Q while the rate was still rising
  unknown,            // no knee, or fewer than two depths measured
};
std::string_view to_string(KneeVsQueue k);

struct SweepPoint {
  PointResult result;
  bool refined = false;                    // added by the bisection
  std::optional<double> fraction_of_best;  // median rate / best median rate
};

struct SweepResult {
  SweepSettings requested;
  SweepSettings effective;  // depths clamped to the device
  Environment environment;
  DeviceInfo device;
  ModelInfo model;
  bool virtual_clock = false;
  TtfoResult ttfo;
  LatencyResult lone;              // lone frames (depth 1)
  std::vector<SweepPoint> points;  // sorted by depth
  std::vector<uint32_t> skipped;   // requested depths above DeviceInfo::queue_depth
  uint32_t queue_depth = 0;        // the device's own (device_queue_depth): the knee's reference
  std::optional<uint32_t> knee;
  std::optional<uint32_t> best_depth;
  std::optional<double> best_rate;  // frames/s
  KneeVsQueue knee_vs_queue = KneeVsQueue::unknown;
  // Single-shot time: depth-1 time per frame (the lone-frame median when depth
  // 1 was not swept); pipelined: 1000 / best rate. Their difference is the part
  // of a lone frame that pipelining hides: the round trip, plus every stage but
  // the slowest.
  std::optional<double> single_shot_ms, pipelined_ms, round_trip_ms, round_trip_share;
  std::vector<std::string> notes;
};

Result<SweepResult> run_sweep(Device& device, const ModelSource& model,
                              const SweepSettings& settings);

// ---------------------------------------------------------------------------
// rig ab: interleaved A B A B pairs with a noise verdict.

// One side: a device spec (knobs applied) and a pipeline depth (0: as rig
// bench, DeviceInfo::queue_depth, the most requests the device takes in
// flight; for a remote device that is the connection's, which keeps the
// hosted device's queue full across the link's round trip).
struct AbConfig {
  std::string spec;
  uint32_t depth = 0;
  std::vector<std::string> knobs;  // as given, KNOB=VALUE
};

// Applies KNOB=VALUE settings to a base configuration: `depth` sets the
// pipeline depth; any other knob sets that device spec parameter (threads for
// cpu, link for sim through expand_link_profiles, compute, bw, ...). Device
// spec knobs need a kind:key=value spec (not tcp:// or unix:). Errors name the
// knob.
Result<AbConfig> apply_knobs(const AbConfig& base, std::span<const std::string> knobs);

using DeviceOpener = std::function<Result<std::unique_ptr<Device>>(std::string_view spec)>;

// A verdict needs the runs' own spread as its noise estimate, and the spread
// of fewer than 3 pairs is not one (of 1 pair it is 0).
inline constexpr uint32_t kAbMinPairsForVerdict = 3;

struct AbSettings {
  uint32_t pairs = 5;   // >= 1; fewer than kAbMinPairsForVerdict give insufficient_data
  PointSettings point;  // one repeat per run; `repeats` is ignored
};

Result<void> validate(const AbSettings& settings);

// insufficient_data: fewer than kAbMinPairsForVerdict pairs ran; the rates
// and ratios are reported, but no side is named.
enum class AbVerdict { no_difference, a_faster, b_faster, insufficient_data, failed };
std::string_view to_string(AbVerdict v);

struct AbResult {
  AbConfig a, b;
  AbSettings settings;
  Environment environment;
  DeviceInfo device_a, device_b;
  ModelInfo model;
  bool virtual_clock = false;
  // Both sides on one device (same spec): loaded once, runs continue on it.
  // Otherwise each run opens its side's device afresh, because device settings
  // can be process-wide (OpenCV's thread count) and hardware may take one
  // handle at a time.
  bool shared_device = false;
  uint32_t depth_a = 0, depth_b = 0;     // effective
  std::vector<double> rates_a, rates_b;  // frames/s, per pair
  std::vector<double> ratios;            // B / A, per pair
  Summary rate_a, rate_b, ratio;
  std::optional<double> difference;  // median ratio - 1: B relative to A
  // The runs' own spread: the largest of A's, B's and the ratios' (max - min)
  // / median. With at least kAbMinPairsForVerdict pairs the verdict is "no
  // difference" when |difference| <= noise, else the faster side.
  std::optional<double> noise;
  AbVerdict verdict = AbVerdict::failed;
  std::string verdict_text;
  std::vector<std::string> notes;
};

Result<AbResult> run_ab(const DeviceOpener& open, const ModelSource& model, const AbConfig& a,
                        const AbConfig& b, const AbSettings& settings);

// ---------------------------------------------------------------------------
// rig predict: a bench result on another link.

// What prediction needs from a `rig bench --json` result.
struct PredictSource {
  std::string device_spec, model_name;
  double compute_ms = 0;                   // latency.hardware_ms.median
  std::string compute_from;                // which field compute_ms came from
  double bytes_in = 0, bytes_out = 0;      // per inference
  uint32_t depth = 0;                      // the measured pipeline depth
  std::optional<double> measured_rate;     // steady.rate_per_s.median
  std::optional<double> measured_lone_ms;  // latency.overall_ms.median
  double load_ms = 0, allocate_ms = 0, first_inference_ms = 0;
  std::optional<double> first_compute_ms;  // ttfo.first_inference_device.compute_ms
};

enum class Bottleneck { bus, compute, latency };
std::string_view to_string(Bottleneck b);

struct Prediction {
  LinkProfile link;
  uint32_t depth = 0;                              // requests in flight on the target
  double transfer_in_ms = 0, transfer_out_ms = 0;  // channel occupancy per frame
  double lone_ms = 0;                              // in + lat + compute + out + lat
  double bus_ms_per_frame = 0;                     // busiest channel's occupancy per frame
  // The compute stage's time per frame when pipelined: the device's compute
  // latency, or the source's measured time per frame when that is shorter (a
  // dataflow accelerator overlaps frames inside the chip: seeds/002 measured
  // 2.27 ms of compute latency at 0.86 ms per frame).
  double compute_ms_per_frame = 0;
  bool compute_overlaps = false;  // the measured time per frame was the shorter
  double rate = 0;                // frames/s: min(depth / lone, 1 / slowest stage)
  double ms_per_frame = 0;
  Bottleneck bound = Bottleneck::bus;
  double traffic_in_bytes_per_s = 0, traffic_out_bytes_per_s = 0;  // at the predicted rate
  double bus_utilization = 0;                                      // busiest channel, 0..1
  double bus_idle = 0;                                             // 1 - utilization
  double ttfo_ms = 0;  // load + allocate + first compute + crossing
  double first_compute_ms = 0;
};

// The model: the sim device's (docs/methodology.md), with the compute stage's
// time per frame as above. `depth` 0 takes the profile's queue depth.
Prediction predict(const PredictSource& source, const LinkProfile& link, uint32_t depth = 0);

}  // namespace rig

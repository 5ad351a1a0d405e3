// The device interface: where a model runs. Modelled on how accelerator
// runtimes are driven (HailoRT InferModel, TensorRT, OpenCV DNN).
//
// Lifecycle: open_device(spec) -> load(model) -> describe (model_info) ->
// bind caller-owned buffers -> run / submit+wait_next / run_for_duration.
//
// Contracts shared by every implementation:
//  * Expected failures are values (Result); no exception leaves a method.
//  * A Device is driven by one thread at a time (the engine's). Implementations
//    may use worker threads internally.
//  * Buffers passed to bind() are owned by the caller and must stay valid and
//    unmodified (inputs) / untouched (outputs) until the binding is released
//    or the device is destroyed; a binding may have at most one request in
//    flight at a time.
//  * Times reported by the device (Completion::completed_at, timings) are on
//    the device's clock(); the engine reads time only through that clock.
//
// rig's devices derive from DeviceBase (src/core/device_base.hpp), which
// implements the calls below once: the bindings, the in-flight count and
// every argument and state check, in a documented order; each device
// implements only its do_* hooks. tests/devices/device_conformance_test.cpp
// runs this contract against every device.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "rig/clock.hpp"
#include "rig/error.hpp"

namespace rig {

enum class ElementType { f32, f16, f64, u8, i8, u16, i16, i32, i64, boolean };

std::string_view to_string(ElementType t);
size_t element_size(ElementType t);

struct TensorInfo {
  std::string name;
  ElementType type = ElementType::f32;
  std::vector<int64_t> shape;  // fully static; dynamic dimensions are fixed to 1
  size_t bytes = 0;            // exact frame size in bytes: product(shape) * element_size
};

// What the load-time normalisation pass (normalize_onnx, rig/model.hpp) did
// to an ONNX model before the device saw it.
struct ModelRewrites {
  bool ran = false;  // false: the model was not normalised (not ONNX, or an older peer)
  uint64_t nodes_before = 0;
  uint64_t nodes_after = 0;
  std::map<std::string, uint64_t> rewrites;  // kind -> count; kinds with a count only
  std::vector<std::string> notes;            // e.g. a free batch dimension fixed to 1

  uint64_t total() const;  // rewrites of every kind
};

struct ModelInfo {
  std::string name;  // file stem or the name given when loading from bytes
  std::vector<TensorInfo> inputs;
  std::vector<TensorInfo> outputs;
  ModelRewrites normalization = {};  // what the load-time pass did (ONNX models)
  // Lower-case hex SHA-256 of the model's bytes as given (before any rewrite),
  // set by the scenario from its ModelSource (model_sha256); "" when unknown
  // (a model the server loads by name). Devices leave it empty. Last, with a
  // default, so positional initializers of the fields above stay valid.
  std::string sha256 = {};

  size_t input_bytes() const;
  size_t output_bytes() const;
};

// Where a model comes from: bytes already in memory, a file on this host, or
// a model the server of a remote device holds under its --model-dir. Exactly
// one of the three is used, in that order of precedence. Devices read it
// through read_model_source() and name it with model_display_name()
// (rig/model.hpp): one rule for every device.
// An input's shape fixed by the user (--shape NAME=1x3x224x224).
struct InputShape {
  std::string name;
  std::vector<int64_t> dims;
};

struct ModelSource {
  std::vector<std::byte> bytes;  // the serialized model (ONNX, or a device's own format)
  std::string path;              // a file on this host; used when bytes is empty
  std::string server_name;       // a path under the server's --model-dir (remote devices only)
  std::string name;              // display name; empty: the stem of path or server_name
  // Shapes of dynamic inputs, applied by the normalisation pass where the
  // model is loaded (sent in the load request for a server_name).
  std::vector<InputShape> shapes;
};

// Breakdown of load(). Phases a device cannot separate are reported as 0 with
// the whole cost in `compile`.
struct LoadTimings {
  Nanos read{0};     // reading the model bytes (disk or upload)
  Nanos parse{0};    // parsing the serialized graph
  Nanos compile{0};  // compile/configure/allocate on the device
};

// Per-inference device-side timings; absent when the device cannot tell.
struct InferenceTimings {
  std::optional<Nanos> transfer_in;   // host -> device (or copy into the runtime)
  std::optional<Nanos> queue_wait;    // waiting on the device before compute
  std::optional<Nanos> compute;       // the model itself
  std::optional<Nanos> transfer_out;  // device -> host
};

// The engine's check of a device's timings: each one given must lie in
// [0, limit], where limit is the inference's elapsed time on the engine's
// clock when the device's timings are on that clock too, else kMaxDuration
// (a remote device hosting a simulation reports virtual times over a real
// link). Outside it the inference failed: an Error (code device) whose
// message begins "implausible device timing". nullopt: plausible.
std::optional<Error> implausible_timings(const InferenceTimings& t, Nanos limit);

using BindingId = uint32_t;

struct Bindings {
  std::vector<std::span<const std::byte>> inputs;  // one per ModelInfo::inputs, exact sizes
  std::vector<std::span<std::byte>> outputs;       // one per ModelInfo::outputs, exact sizes
};

struct Completion {
  uint64_t tag = 0;  // the tag given to submit()
  BindingId binding = 0;
  std::optional<Error> error;  // set when this inference failed
  InferenceTimings timings;
  Nanos completed_at{0};  // device clock
};

// Result of the on-device loop (run_for_duration).
struct DurationRun {
  // Frames that finished successfully / were cut off at the end (never
  // counted as completed). nullopt: the device does not tell (HailoRT's
  // on-device loop returns a rate only); every other device counts exactly.
  std::optional<uint64_t> frames_completed = 0;
  std::optional<uint64_t> frames_aborted = 0;
  Nanos elapsed{0};              // measured by the device
  double frames_per_second = 0;  // frames_completed / elapsed, a real number
  // 0: frames_per_second is exact. > 0: the true rate lies in [frames_per_second,
  // frames_per_second + rate_step) (HailoRT: an integer rate, widened for the
  // frames its shutdown aborts; docs/devices/hailo.md).
  double rate_step = 0;
  // True when the figure is not the device's own loop but a host-driven
  // pipelined loop on the same input (a fallback): every frame crossed the
  // link, so it includes the per-frame transfers.
  bool includes_transfers = false;
  // What the device did and why, one sentence each (a fallback, a
  // re-configure, a rate of 0 below one frame per second).
  std::vector<std::string> notes{};
};

// Cumulative bytes since open. payload_* count tensor bytes; link_* count
// everything that crossed the link (headers, bodies, buffers) and stay 0 for
// in-process devices.
struct ByteCounters {
  uint64_t payload_in = 0;
  uint64_t payload_out = 0;
  uint64_t link_in = 0;   // host -> device
  uint64_t link_out = 0;  // device -> host
};

// A per-layer profile (Device::profile_layers): what the runtime's own
// profiler measured, layer by layer, summed over `runs` inferences.
struct LayerTime {
  std::string name;     // the runtime's name of the layer (ONNX node name where it keeps it)
  std::string op_type;  // "Conv", "Relu", ...; "" when the runtime does not say
  Nanos total{0};       // summed over the runs
  uint64_t calls = 0;   // how many times it ran (runs, unless fused away or skipped)
};

struct LayerProfile {
  std::string profiler;           // what measured it: "onnxruntime", "opencv getPerfProfile"
  uint32_t runs = 0;              // inferences profiled
  Nanos wall{0};                  // their elapsed time on the device's clock, profiler included
  std::vector<LayerTime> layers;  // in the runtime's order of execution
};

// Whether a link's two directions share one channel (half) or overlap (full).
enum class Duplex { half, full, unknown };
std::string_view to_string(Duplex duplex);

// The clock a device's own figures (compute times, its on-device loop) are on.
enum class ClockKind { real, virtual_time };
std::string_view to_string(ClockKind clock);

// The floor every request pays through rig on a remote device's link: round
// trips of the protocol's ping, which the server answers without touching the
// device (the link's own round trip plus rig's encode, parse and dispatch).
struct LinkFloor {
  uint32_t round_trips = 0;  // pings timed
  Nanos median{0};
  Nanos min{0};
  Nanos max{0};
  Nanos spent{0};  // wall time the calibration took: its budget plus at most one round trip
};

// The costs per frame a device declares because it models them (the sim):
// its compute, each link direction's bandwidth, the fixed latency after each
// transfer, and whether the directions share one channel. A device that only
// measures declares none. Measured figures are checked against what these
// allow (declared_rate_cap): a rate above it is impossible, not fast.
struct DeclaredCosts {
  Nanos compute{0};              // the least compute time of one frame
  double bw_in = 0, bw_out = 0;  // bytes per second, > 0
  Nanos latency{0};              // after each transfer, overlapping other transfers
  Duplex duplex = Duplex::half;
};

// The most frames per second a closed loop of `depth` requests can complete
// on a device with these costs and `model`'s frames: no faster than its
// busiest resource (compute, the shared channel on half duplex, each
// direction on full), and no more than `depth` frames per lone frame
// (in + latency + compute + out + latency; Little's law). nullopt when the
// costs are unusable (a bandwidth <= 0).
std::optional<double> declared_rate_cap(const DeclaredCosts& costs, const ModelInfo& model,
                                        uint32_t depth);
// The time of one frame alone on such a device, in seconds (the lone frame
// of declared_rate_cap).
double declared_lone_s(const DeclaredCosts& costs, const ModelInfo& model);

struct DeviceInfo;
// Whether a device's own timings are on `clock`, so that they can be bounded
// by an elapsed time read from it (implausible_timings).
bool timings_on_clock(const DeviceInfo& info, const Clock& clock);

struct DeviceInfo {
  std::string spec;          // the effective spec, all parameters spelled out
  std::string kind;          // "cpu", "sim", "null", "remote", "hailo"
  std::string description;   // human readable
  uint32_t queue_depth = 1;  // max requests in flight
  bool in_process = true;    // false when a link is crossed

  // Typed facts: what code outside the devices reads. For a remote device
  // they describe the device that rig serve hosts, from its hello reply.
  // The device's own queue depth; 0: queue_depth. A remote device takes more
  // in flight per connection (queue_depth) than the hosted device queues.
  uint32_t own_queue_depth = 0;
  // The duplex of the link the device models or knows (the sim's duplex=);
  // unknown when the device does not say. A remote device says its hosted
  // device's (the server.duplex property), else unknown: the
  // network between client and server has no declared duplex.
  Duplex duplex = Duplex::unknown;
  // virtual_time when the device's own timings are simulated (the sim, or a
  // remote device hosting one), whatever clock() the client reads.
  ClockKind clock = ClockKind::real;
  // A virtual clock paced to the wall clock (the sim's realtime=1, or a
  // remote device hosting one): a wall clock can time its figures.
  bool paced_clock = false;
  std::optional<uint64_t> memory_bytes;  // memory for models and buffers; nullopt: unknown
  // Remote devices only, measured at open unless calibrate=0: absent for
  // in-process devices, when turned off, or when the server has no ping.
  std::optional<LinkFloor> link_floor;
  // The device's run_for_duration must run whole, never as consecutive
  // shorter loops (HailoRT shuts the model down after each loop and reports
  // an integer rate per loop); a server stops it with cancel() instead.
  bool loop_whole = false;
  // Costs the device declares because it models them (the sim without
  // drift or a slowdown); nullopt for devices that measure.
  std::optional<DeclaredCosts> declared_costs;
  // What the device asks of the buffers a caller allocates for bind(): the
  // start aligned to buffer_alignment bytes, the allocation padded to a
  // multiple of buffer_padding bytes; the bound span keeps the tensor's
  // exact size. 0: no requirement. Advisory: other buffers are accepted, at
  // a cost the device documents (hailo: the page size; HailoRT copies
  // unaligned buffers through a bounce buffer).
  size_t buffer_alignment = 0;
  size_t buffer_padding = 0;

  // The device's own queue depth: own_queue_depth, else queue_depth (>= 1).
  uint32_t device_queue_depth() const;

  std::map<std::string, std::string> properties;  // device-specific facts, for display only
  std::vector<std::string> warnings;              // e.g. reduced-performance power mode
};

class Device {
 public:
  virtual ~Device() = default;

  virtual DeviceInfo info() const = 0;
  virtual Clock& clock() = 0;

  // Loads (reads, parses, compiles) a model, replacing any loaded one and
  // releasing its bindings; refused (invalid_argument) with requests in
  // flight. The caller times the call; timings break it down.
  virtual Result<LoadTimings> load(const ModelSource& source) = 0;
  // Valid after a successful load().
  virtual const ModelInfo& model_info() const = 0;

  // Registers caller-owned buffers; sizes must equal model_info() exactly
  // (check_bindings), else invalid_argument.
  virtual Result<BindingId> bind(const Bindings& buffers) = 0;

  // Runs one inference synchronously on a binding.
  virtual Result<InferenceTimings> run(BindingId binding) = 0;

  // Queues one inference; fails with queue_full when queue_depth requests are
  // already in flight, with invalid_argument when the binding is unknown or
  // has a request in flight. `tag` is returned in the Completion.
  virtual Result<void> submit(BindingId binding, uint64_t tag) = 0;
  // Blocks until the next completion (any order) or `timeout` passes on the
  // device clock (timeout error; the request stays in flight). Fails with
  // invalid_argument when nothing is in flight.
  virtual Result<Completion> wait_next(Nanos timeout) = 0;
  // Requests on the device: submitted and not yet returned by wait_next,
  // less those a device already finished and holds for wait_next (sim,
  // remote), which no longer count against queue_depth.
  virtual uint32_t in_flight() const = 0;

  // Loops the model on the device on one binding's inputs for `duration`
  // (> 0), sleeping `sleep_between_frames` (>= 0) between frames, with no
  // per-frame transfers; refused (invalid_argument) with requests in flight.
  // The outputs of the last completed frame land in the binding.
  virtual Result<DurationRun> run_for_duration(BindingId binding, Nanos duration,
                                               Nanos sleep_between_frames) = 0;

  virtual ByteCounters bytes() const = 0;

  // Named sensor readings (temperature_c, power_w, ...); empty when none.
  virtual std::map<std::string, double> read_sensors() { return {}; }

  // Warnings the device (or its runtime) raised since the last call, oldest
  // first; each is returned once. The engine reads them after open, load and
  // each phase (DeviceInfo::warnings holds those known at open).
  virtual std::vector<std::string> take_warnings() { return {}; }

  // Thread-safe, callable from any thread while another drives the device:
  // makes a running run_for_duration return early with the frames completed
  // so far (frames in flight count as aborted, never as completed). Has no
  // effect when no loop is running; a later loop runs normally.
  virtual void cancel() {}

  // Runs `runs` (>= 1) inferences on a binding under the runtime's own
  // per-layer profiler and returns what it measured. Not to be called with
  // requests in flight. Devices whose runtime offers none (the default) fail
  // with unsupported, naming the device kind.
  virtual Result<LayerProfile> profile_layers(BindingId binding, uint32_t runs);
};

// The check every Device::bind does: one buffer per tensor, each exactly the
// tensor's byte size and not null. Errors name the tensor, expected and actual.
Result<void> check_bindings(const ModelInfo& model, const Bindings& buffers);

// Opens a device from its parsed spec (rig/device_spec.hpp), or from spec
// text, parsed by parse_device_spec. The kinds (cpu, sim, null, hailo, and a
// remote one at tcp://HOST:PORT or unix:PATH), their parameters and whether
// this binary has each are the registry's table (rig/device_registry.hpp;
// `rig devices` prints it). Implemented by src/devices/registry.cpp.
struct DeviceSpec;
Result<std::unique_ptr<Device>> open_device(const DeviceSpec& spec);
Result<std::unique_ptr<Device>> open_device(std::string_view spec);

}  // namespace rig

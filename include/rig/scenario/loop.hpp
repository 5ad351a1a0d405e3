// rig loop: the device's own rate (run_for_duration: one frame looped on the
// device, no per-frame transfers) beside the host-observed pipelined rate of
// the same model (measure_steady: every frame crosses the link). Their
// difference is what the per-frame transfers cost. Drives the device from
// the calling thread only.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "rig/device.hpp"
#include "rig/engine.hpp"
#include "rig/environment.hpp"
#include "rig/monitor/monitor.hpp"
#include "rig/scenario/confounds.hpp"
#include "rig/scenario/settings.hpp"
#include "rig/scenario/verdict.hpp"

namespace rig {

struct LoopSettings {
  std::string model;  // where the model came from, for the record (model_origin)
  std::string device = kDefaultDeviceSpec;  // device spec, as given
  uint32_t depth = 0;  // the pipelined run's depth; 0 = the device's queue depth
  Nanos sleep_between_frames{0};
  // The loop's length and the pipelined run's (one repeat, 100 inferences at
  // least; warm-up as rig bench's).
  PointSettings point = {.duration = std::chrono::seconds(3), .min_inferences = 100, .repeats = 1};
  MonitorSettings monitor;     // sampled beside both runs (--no-monitor)
  ConfoundSettings confounds;  // the confound rules' thresholds, --strict-confounds
};

// Names the bad setting; independent of NDEBUG.
Result<void> validate(const LoopSettings& settings);

// The device rate's interval is stated when its half-width is within this
// share of its midpoint (50 frames in the loop).
inline constexpr double kLoopRateResolution = 0.01;

struct LoopResult {
  LoopSettings requested;
  LoopSettings effective;  // depth resolved, clamped to the device
  Environment environment;
  DeviceInfo device;
  ModelInfo model;
  bool virtual_clock = false;  // the clock the host reads (Device::clock) is virtual
  // The device's own timings are simulated while the host's clock is real (a
  // remote device hosting a sim): the two rates are not comparable.
  bool mixed_clocks = false;
  std::optional<std::string> depth_note;  // the depth clamp, when it happened
  TtfoResult ttfo;
  DurationRun loop;  // the device's own loop
  // The device's loop failed with a device or link failure (exit status 3;
  // e.g. "the server stopped during the loop (N frames completed)"): the
  // result keeps what came before it (the cold start) and is written, and
  // nothing after the loop runs.
  std::optional<Error> loop_error;
  SteadyRepeat steady;  // the host-observed pipelined run
  // The device loop's rate (1 / (frame + sleep)): an interval that holds
  // the true rate, and its midpoint. The device counts N frames completed
  // in its elapsed T: none cut off, N / (T + sleep) <= rate <= N / T (exact
  // with no sleep); one cut off (it ran, uncounted), N / T < rate < (N + 1)
  // / (T + sleep); unknown, the union; a truncated rate
  // (DurationRun::rate_step) lies in [frames_per_second, + rate_step). Then
  // widened by the frame-time noise (device_rate_noise). nullopt when none
  // completed.
  std::optional<double> device_rate, device_rate_lower, device_rate_upper;
  // The frame-time noise's share of the rate over the loop's length, from
  // the pipelined run's window rates: t(k-1) x cv x sqrt(window / loop);
  // nullopt below 3 windows (docs/methodology.md, "Device loop").
  std::optional<double> device_rate_noise;
  // The interval's half-width over its midpoint: above kLoopRateResolution
  // the loop held too few frames to state the rate (the verdict says so).
  std::optional<double> device_rate_uncertainty;
  std::optional<double> host_rate;  // frames/s pipelined; nullopt when the run aborted
  // 1000/host - 1000/device (the device rate's midpoint), its interval from
  // the device rate's (lower: at device_rate_lower), and its share of the
  // host-observed frame time; nullopt unless both rates exist on comparable
  // clocks and the loop is the device's own (not a fallback that includes
  // the transfers). A negative figure is explained by the verdict.
  std::optional<double> transfer_cost_ms, transfer_cost_share;
  std::optional<double> transfer_cost_lower_ms, transfer_cost_upper_ms;
  // The monitor's series over both runs: the device loop is its first
  // measured part (phase "device_loop"), the pipelined run its second.
  MonitorRecord monitor;
  Verdict verdict;  // judge(LoopResult)
};

// The verdict's rules: the loop ran, the depth, the pipelined run, the
// loop's frames and where it ran, the clocks, the device rate's resolution,
// the transfer cost, consistency, the confounds. Pure.
Verdict judge(const LoopResult& result);

// Cold-starts the model, loops it on the device, then pipelines it. Fails
// when the model does not load or bind, or the loop itself fails; a pipelined
// run that aborts makes the result INVALID and keeps what was seen.
Result<LoopResult> run_loop(Device& device, const ModelSource& model, const LoopSettings& settings);

}  // namespace rig

// rig soak: one long pipelined run, its rate and temperature per window, and
// the short-run rate (the first --short after warm-up) against the long-run
// rate (the last --long), with the drift between them and whether it exceeds
// the run's noise. A 10-second rate and a 10-minute rate are different
// numbers on a small device; this measures both in one run.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "rig/device.hpp"
#include "rig/engine.hpp"
#include "rig/environment.hpp"
#include "rig/monitor/monitor.hpp"
#include "rig/scenario/confounds.hpp"
#include "rig/scenario/verdict.hpp"

namespace rig {

struct SoakSettings {
  std::string model;                         // where the model came from, for the record
  std::string device = "cpu";                // device spec, as given
  uint32_t depth = 0;                        // 0: the device's queue depth
  Nanos duration{std::chrono::minutes(10)};  // the measured run, after warm-up
  Nanos short_span{std::chrono::seconds(10)};
  Nanos long_span{std::chrono::minutes(1)};
  Nanos window{0};    // window length; 0: min(short, long) / 5
  Nanos cooldown{0};  // waited on the device's clock before the model loads
  Nanos warmup_max{std::chrono::seconds(5)};
  Nanos request_timeout{std::chrono::seconds(30)};
  uint64_t seed = 1;
  // --input (rig/scenario/run.hpp, read_input_files); null: generated data.
  std::shared_ptr<const InputFiles> inputs = nullptr;
  // The drift counts only beyond the noise and beyond this floor.
  double drift_floor = 0.01;
  MonitorSettings monitor;
  ConfoundSettings confounds;
  EngineObserver* observer = nullptr;  // not owned, not reported
};

// The window length soak runs at: `window`, or min(short, long) / 5.
Nanos soak_window(const SoakSettings& settings);

// Names the bad setting: "--duration 15s is shorter than --short 10s + --long 1m".
Result<void> validate(const SoakSettings& settings);

struct SoakWindow {
  double start_s = 0, duration_s = 0;
  uint64_t inferences = 0;
  double rate = 0;
  std::optional<double> temperature_c;  // the temperature sensor at the window's end
};

// A span of whole windows: its rate is completions over its time.
struct SoakSpan {
  double start_s = 0, duration_s = 0;
  uint64_t inferences = 0;
  size_t windows = 0;
  std::optional<double> rate;
  std::optional<double> spread;  // (max - min) / median of its windows' rates
};

struct SoakResult {
  SoakSettings requested;
  SoakSettings effective;  // depth and window resolved
  Environment environment;
  DeviceInfo device;
  ModelInfo model;
  bool virtual_clock = false;
  std::optional<std::string> depth_note;
  TtfoResult ttfo;
  SteadyRepeat run;  // the whole measured run
  std::vector<SoakWindow> windows;
  std::string temperature_sensor;  // the series in SoakWindow::temperature_c; empty: none
  SoakSpan short_run, long_run;
  std::optional<double> drift;  // long / short - 1
  std::optional<double> noise;  // the larger of the two spans' spreads
  bool drift_exceeds_noise = false;
  MonitorRecord monitor;
  Verdict verdict;  // judge(SoakResult)
};

// The verdict's rules: not_cut_short, the depth, errors, the run completed,
// both spans measured, the drift within the noise, consistency, the
// confounds. Pure.
Verdict judge(const SoakResult& result);

// Short and long spans of a run's windows, the drift and the noise: pure
// arithmetic, tested on its own.
void summarize_soak(SoakResult& result);

// Cools down, cold-starts the model, runs it for the duration and splits the
// windows. Fails only when the model does not load or bind.
Result<SoakResult> run_soak(Device& device, const ModelSource& model, const SoakSettings& settings);

}  // namespace rig

// The skeleton every measuring command repeats, written once: the settings'
// display device and validation, --input's files, the --json file's check,
// the model and the device, the stop signals, the start line, the observers
// (--trace, the progress line), the run, the library versions, and finish().
// A command binds its options to its Settings (bind.hpp) and to a
// MeasureOptions, and hands run_command the steps that are its own.
// Header-only, like point_options.hpp.
#pragma once

#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/command.hpp"
#include "cli/environment_info.hpp"
#include "cli/monitor_options.hpp"
#include "cli/observe.hpp"
#include "cli/options.hpp"
#include "cli/stop_signals.hpp"
#include "rig/report/progress.hpp"
#include "rig/scenario/settings.hpp"

namespace rig::cli {

// What a measuring command takes besides its settings.
struct MeasureOptions {
  // The model argument and -d where the settings have no such field
  // (model_and_device); otherwise unused.
  std::string model;
  std::string device{kDefaultDeviceSpec};
  std::vector<std::string> shapes;  // --shape NAME=DIMS
  std::vector<std::string> inputs;  // --input FILE|NAME=FILE
  // Where --input's files go once read (the settings' inputs); null: the
  // command has no --input of this kind.
  std::shared_ptr<const InputFiles>* input_files = nullptr;
  std::string json;     // --json FILE
  bool quiet = false;   // -q
  bool strict = false;  // --strict: exit 1 when the verdict is INVALID
  ObserveOptions observe;
};

// The ONNX model positional argument, bound to the settings' model field.
inline CLI::Option* add_model_argument(
    CLI::App* sub, std::string& model,
    const std::string& help = "ONNX model (default: the built-in demo CNN)") {
  return sub->add_option("model", model, help);
}

// --input of the measuring commands (bench, loop, sweep, ab, soak): the
// files are read into `files` before the device is opened.
inline void add_measure_input_option(CLI::App* sub, MeasureOptions& o,
                                     std::shared_ptr<const InputFiles>& files) {
  add_input_option(sub, o.inputs);
  o.input_files = &files;
}

inline void add_json_option(
    CLI::App* sub, std::string& json,
    const std::string& help = "also write the result as JSON to this file") {
  sub->add_option("--json", json, help);
}

inline void add_strict_option(CLI::App* sub, bool& strict) {
  sub->add_flag("--strict", strict, "exit 1 when the verdict is INVALID");
}

// What every command that measures under the monitor ends its options with:
// --json, --strict, -q, the monitor's options and the observers'.
inline void add_measured_run_options(CLI::App* sub, MeasureOptions& o, MonitorSettings& monitor,
                                     ConfoundSettings& confounds) {
  sub->add_option("--json", o.json, "also write the result as JSON to this file");
  add_strict_option(sub, o.strict);
  sub->add_flag("-q,--quiet", o.quiet, "no progress messages on stderr");
  add_monitor_options(sub, monitor, confounds);
  add_observe_options(sub, o.observe);
}

inline void add_quiet_option(CLI::App* sub, bool& quiet,
                             const std::string& help = "no progress messages on stderr") {
  sub->add_flag("-q,--quiet", quiet, help);
}

// The verdict finish() reads: the result's, or none (rig run, rig check).
template <class R>
const Verdict& result_verdict(const R& r) {
  if constexpr (requires { r.judgement; }) {  // rig ab: `verdict` is its answer
    return r.judgement;
  } else if constexpr (requires { r.verdict; }) {
    return r.verdict;
  } else {
    static const Verdict none;
    return none;
  }
}

// Gives the engine's observer to a scenario's settings, where they take one.
template <class Settings>
void set_observer(Settings& s, EngineObserver* observer) {
  if constexpr (requires { s.point.observer; })
    s.point.observer = observer;
  else if constexpr (requires { s.observer; })
    s.observer = observer;
}

// The measured time per run the progress line shows.
template <class Settings>
Nanos run_duration(const Settings& s) {
  if constexpr (requires { s.point.duration; })
    return s.point.duration;
  else if constexpr (requires { s.duration; })
    return s.duration;
  else
    return Nanos(0);
}

// The model and -d texts: the settings' own fields where they have them
// (they are bound there), else the MeasureOptions' (rig sweep's settings
// record neither).
template <class Settings>
std::pair<std::string*, std::string*> model_and_device(Settings& s, MeasureOptions& o) {
  std::string* model = &o.model;
  std::string* device = &o.device;
  if constexpr (requires { s.model; }) model = &s.model;
  if constexpr (requires { s.device; }) device = &s.device;
  return {model, device};
}

// The options of a command that runs one model on one device, in this
// order: the model argument, --shape, --input where the settings take input
// files (point.inputs, or inputs as InputFiles), and -d (`role` in its help).
template <class Settings>
void add_model_on_device_options(CLI::App* sub, Settings& s, MeasureOptions& o,
                                 std::string_view role = "device spec") {
  auto [model, device] = model_and_device(s, o);
  add_model_argument(sub, *model);
  add_shape_option(sub, o.shapes);
  if constexpr (requires { s.point.inputs; })
    add_measure_input_option(sub, o, s.point.inputs);
  else if constexpr (requires { s.inputs.get(); })
    add_measure_input_option(sub, o, s.inputs);
  add_device_option(sub, *device, role);
}

// What is a command's own in the skeleton.
template <class Settings, class R>
struct MeasureSteps {
  // The progress line's label ("rig bench"); empty: no observers (no --trace,
  // no progress line).
  std::string label = {};
  // Ctrl-C keeps what was measured (stop_signals.hpp): installed before the
  // start line, and the exit status is 130 when it came.
  bool stoppable = false;
  // The start line on stderr (not with -q), given the model and the device
  // spec as shown; may be empty.
  std::function<void(const Settings&, const ModelSource&, const std::string&)> announce = nullptr;
  // The progress line's plan (with `label`); empty: `runs` runs of the
  // settings' point duration (or duration).
  std::function<ProgressPlan(const Settings&)> plan = nullptr;
  uint32_t runs = 0;  // 0: not known ahead ("run N")
  std::function<Result<R>(Device&, const ModelSource&, const Settings&)> run = nullptr;
  std::function<std::string(const R&)> text = nullptr;
  std::function<std::string(const R&)> json = nullptr;
  // After the run, before finish (rig run writes its outputs here).
  std::function<Result<void>(const R&)> after = nullptr;
  // Whether the result passed (rig run's references, rig check's lines):
  // exit 1 when not and finish() returned 0; empty: no such test.
  std::function<bool(const R&)> passed = nullptr;
  // The exit status from finish()'s; empty: finish()'s.
  std::function<int(const R&, int)> status = nullptr;
  // The library versions go into the result's environment.
  bool library_versions = true;
};

// The observers, the run, the library versions and finish(): what every
// measuring command does once its settings are valid and its device open.
// `run(settings)` runs the scenario with the observer set.
template <class Settings, class R, class Run>
int observe_run_finish(Settings& s, const MeasureOptions& o, const MeasureSteps<Settings, R>& steps,
                       Run run) {
  std::unique_ptr<RunObservers> observers;
  if (!steps.label.empty()) {
    ProgressPlan plan = steps.plan ? steps.plan(s) : ProgressPlan{{}, steps.runs, run_duration(s)};
    plan.scenario = steps.label;
    auto made = RunObservers::make(o.observe, std::move(plan), o.quiet, o.json);
    if (!made) return report_error(made.error());
    observers = std::move(*made);
    set_observer(s, observers->get());
  }
  auto end = [&](int status) { return observers ? observers->finish(status) : status; };
  Result<R> result = run(s);
  if (observers) observers->stop_progress();
  if (!result) return end(report_error(result.error()));
  if (steps.library_versions) add_library_versions(result->environment);
  if (steps.after)
    if (auto ok = steps.after(*result); !ok) return end(report_error(ok.error()));
  int status = end(finish(steps.text(*result), steps.json(*result), o.json, o.quiet,
                          result_verdict(*result), o.strict));
  if (steps.passed && status == 0 && !steps.passed(*result)) status = 1;
  if (steps.status) status = steps.status(*result, status);
  return steps.stoppable ? stopped_status(status) : status;
}

// Reads --input's files into the settings (MeasureOptions::input_files):
// before the device is opened, so that a missing file fails first.
inline Result<void> load_input_files(const MeasureOptions& o) {
  if (!o.input_files) return {};
  auto files = input_files_option(o.inputs);
  if (!files) return tl::unexpected(files.error());
  *o.input_files = *files;
  return {};
}

// The whole skeleton for a command that runs one model on one device.
// The -d text (device_text) is parsed once and becomes its display form; the
// model argument (model_text) becomes model_origin once the model is found.
template <class Settings, class R>
int run_command(Settings& s, MeasureOptions& o, const MeasureSteps<Settings, R>& steps) {
  auto [model, device] = model_and_device(s, o);
  const DeviceOption device_option = parse_device_option(*device);
  *device = device_option.display;
  if (auto ok = validate(s); !ok) return report_error(ok.error());
  if (auto ok = load_input_files(o); !ok) return report_error(ok.error());
  auto opened = open_model_on_device(o.json, *model, o.shapes, device_option);
  if (!opened) return report_error(opened.error());
  *model = model_origin(opened->model);
  // Before the start line: a signal from then on stops the measurement, keeping it.
  if (steps.stoppable) install_stop_signals();
  if (!o.quiet && steps.announce) steps.announce(s, opened->model, device_option.display);
  return observe_run_finish(s, o, steps, [&](const Settings& settings) {
    return steps.run(*opened->device, opened->model, settings);
  });
}

}  // namespace rig::cli

// rig loop [MODEL] -d DEVICE --duration 3s [--sleep-between-frames MS] [--depth N] [--json FILE]
// The device's own rate (run_for_duration: one frame, looped on the device,
// no per-frame transfers) beside the host-observed pipelined rate of the same
// model (measure_steady: every frame crosses the link); the difference is
// what the per-frame transfers cost.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/command.hpp"
#include "cli/environment_info.hpp"
#include "cli/monitor_options.hpp"
#include "cli/observe.hpp"
#include "cli/options.hpp"
#include "rig/report/loop_report.hpp"
#include "rig/scenario/loop.hpp"
#include "rig/units.hpp"

namespace rig::cli {
namespace {

struct LoopOptions {
  MonitorOptions monitor;
  std::string model;
  std::vector<std::string> shapes;
  std::vector<std::string> inputs;
  std::string device = "cpu";
  std::string duration = "3s";
  std::string sleep = "0";
  std::optional<uint32_t> depth;
  std::string timeout = "30s";
  uint64_t seed = 1;
  std::string json_path;
  bool strict = false;
  bool quiet = false;
  ObserveOptions observe;
};

// A duration with a unit, or a bare number of milliseconds.
Result<Nanos> sleep_option(const std::string& text) {
  if (auto d = parse_duration(text); d) {
    if (*d < Nanos(0))
      return fail(ErrorCode::invalid_argument, "--sleep-between-frames must be >= 0");
    return *d;
  }
  auto ms = parse_number(text);
  if (!ms || *ms < 0)
    return fail(ErrorCode::invalid_argument,
                "--sleep-between-frames: expected milliseconds or a duration such as 5ms, got '" +
                    text + "'");
  // Checked before the conversion: out of range it would be undefined. The
  // bound is parse_duration's (kMaxDuration, 1e6 s).
  const double ns = *ms * 1e6;
  if (!(ns <= static_cast<double>(kMaxDuration.count())))
    return fail(ErrorCode::invalid_argument,
                "--sleep-between-frames: '" + text + "' ms is out of range (at most 1e9 ms)");
  return Nanos(static_cast<int64_t>(ns));
}

int run_loop_command(const LoopOptions& o) {
  LoopSettings s;
  s.model = o.model;
  const DeviceOption device_option = parse_device_option(o.device);
  s.device = device_option.display;
  auto duration = positive_duration("--duration", o.duration);
  if (!duration) return report_error(duration.error());
  s.point.duration = *duration;
  auto sleep = sleep_option(o.sleep);
  if (!sleep) return report_error(sleep.error());
  s.sleep_between_frames = *sleep;
  auto timeout = positive_duration("--timeout", o.timeout);
  if (!timeout) return report_error(timeout.error());
  s.point.request_timeout = *timeout;
  s.point.seed = o.seed;
  auto inputs = input_files_option(o.inputs);
  if (!inputs) return report_error(inputs.error());
  s.point.inputs = *inputs;
  auto depth_given = depth_option(o.depth);
  if (!depth_given) return report_error(depth_given.error());
  s.depth = *depth_given;
  if (auto ok = apply_monitor_options(o.monitor, s.monitor, s.confounds); !ok)
    return report_error(ok.error());
  if (auto ok = validate(s); !ok) return report_error(ok.error());
  auto opened = open_model_on_device(o.json_path, o.model, o.shapes, device_option);
  if (!opened) return report_error(opened.error());
  auto& model = opened->model;
  auto& device = opened->device;
  s.model = model_origin(model);
  if (!o.quiet)
    std::fprintf(stderr, "rig: looping %s on %s for %s, then pipelining it...\n",
                 model_display_name(model).c_str(), device_option.display.c_str(),
                 format_duration(*duration).c_str());
  auto observers =
      RunObservers::make(o.observe, {"rig loop", 1, s.point.duration}, o.quiet, o.json_path);
  if (!observers) return report_error(observers.error());
  s.point.observer = (*observers)->get();
  auto result = run_loop(*device, model, s);
  (*observers)->stop_progress();
  if (!result) return (*observers)->finish(report_error(result.error()));
  if (result->depth_note) std::fprintf(stderr, "rig: warning: %s\n", result->depth_note->c_str());
  add_library_versions(result->environment);
  const int status = (*observers)
                         ->finish(finish(format_loop_text(*result), loop_to_json(*result),
                                         o.json_path, o.quiet, result->verdict, o.strict));
  // An aborted pipelined run is a device failure, whatever --strict says.
  if (result->steady.aborted)
    return result->steady.first_error ? exit_code_for(result->steady.first_error->code) : 3;
  if (status != 0) return status;
  return 0;
}

}  // namespace

Command add_loop_command(CLI::App& app) {
  auto o = std::make_shared<LoopOptions>();
  CLI::App* sub = app.add_subcommand(
      "loop", "The device's own rate (on-device loop) beside the host-observed pipelined rate");
  sub->add_option("model", o->model, "ONNX model (default: the built-in demo CNN)");
  add_shape_option(sub, o->shapes);
  add_input_option(sub, o->inputs);
  add_device_option(sub, o->device);
  sub->add_option("--duration", o->duration, "length of the loop and of the pipelined run")
      ->capture_default_str();
  sub->add_option("--sleep-between-frames", o->sleep,
                  "sleep between looped frames: milliseconds, or a duration such as 5ms")
      ->capture_default_str();
  sub->add_option("--depth", o->depth,
                  "requests in flight for the pipelined rate (default and most: the device's "
                  "queue depth)");
  sub->add_option("--timeout", o->timeout, "per-request timeout")->capture_default_str();
  sub->add_option("--seed", o->seed, "seed of the input data")->capture_default_str();
  sub->add_option("--json", o->json_path, "also write the result as JSON to this file");
  sub->add_flag("--strict", o->strict, "exit 1 when the verdict is INVALID");
  sub->add_flag("-q,--quiet", o->quiet, "no progress messages on stderr");
  add_monitor_options(sub, o->monitor);
  add_observe_options(sub, o->observe);
  return {sub, [o] { return run_loop_command(*o); }};
}

}  // namespace rig::cli

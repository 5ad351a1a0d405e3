// rig soak [MODEL] -d DEVICE --duration 10m [--short 10s] [--long 1m] [--window T]
//          [--cooldown T] [--json FILE]
// One long run: rate and temperature per window, the short-run rate against
// the long-run rate and the drift between them.
#include <cstdio>
#include <memory>
#include <string>

#include "cli/command.hpp"
#include "cli/environment_info.hpp"
#include "cli/monitor_options.hpp"
#include "cli/observe.hpp"
#include "cli/options.hpp"
#include "cli/stop_signals.hpp"
#include "rig/report/soak_report.hpp"
#include "rig/scenario/soak.hpp"
#include "rig/units.hpp"

namespace rig::cli {
namespace {

struct SoakOptions {
  std::string model;
  std::vector<std::string> shapes;
  std::vector<std::string> inputs;
  std::string device = "cpu";
  std::optional<uint32_t> depth;
  std::string duration = "10m";
  std::string short_span = "10s";
  std::string long_span = "1m";
  std::string window = "0s";
  std::string cooldown = "0s";
  std::string warmup_max = "5s";
  std::string timeout = "30s";
  uint64_t seed = 1;
  std::string json;
  bool strict = false;
  bool quiet = false;
  ObserveOptions observe;
  MonitorOptions monitor;
};

Result<Nanos> nonnegative(const std::string& option, const std::string& text) {
  auto d = parse_duration(text);
  if (!d) return fail(ErrorCode::invalid_argument, option + ": " + d.error().message);
  if (*d < Nanos(0)) return fail(ErrorCode::invalid_argument, option + " must not be negative");
  return *d;
}

int run_soak_command(const SoakOptions& o) {
  SoakSettings s;
  s.model = o.model;
  const DeviceOption device_option = parse_device_option(o.device);
  s.device = device_option.display;
  auto depth = depth_option(o.depth);
  if (!depth) return report_error(depth.error());
  s.depth = *depth;
  for (auto [option, text, out] : {std::tuple{"--duration", &o.duration, &s.duration},
                                   std::tuple{"--short", &o.short_span, &s.short_span},
                                   std::tuple{"--long", &o.long_span, &s.long_span},
                                   std::tuple{"--timeout", &o.timeout, &s.request_timeout}}) {
    auto d = positive_duration(option, *text);
    if (!d) return report_error(d.error());
    *out = *d;
  }
  for (auto [option, text, out] : {std::tuple{"--window", &o.window, &s.window},
                                   std::tuple{"--cooldown", &o.cooldown, &s.cooldown},
                                   std::tuple{"--warmup-max", &o.warmup_max, &s.warmup_max}}) {
    auto d = nonnegative(option, *text);
    if (!d) return report_error(d.error());
    *out = *d;
  }
  s.seed = o.seed;
  auto inputs = input_files_option(o.inputs);
  if (!inputs) return report_error(inputs.error());
  s.inputs = *inputs;
  if (auto ok = apply_monitor_options(o.monitor, s.monitor, s.confounds); !ok)
    return report_error(ok.error());
  if (auto ok = validate(s); !ok) return report_error(ok.error());
  auto opened = open_model_on_device(o.json, o.model, o.shapes, device_option);
  if (!opened) return report_error(opened.error());
  auto& model = opened->model;
  auto& device = opened->device;
  s.model = model_origin(model);
  // Before the start line: a signal from then on stops the measurement, keeping it.
  install_stop_signals();
  if (!o.quiet)
    std::fprintf(stderr, "rig: soaking %s on %s for %s...\n", s.model.c_str(), s.device.c_str(),
                 format_duration(s.duration).c_str());
  auto observers = RunObservers::make(o.observe, {"rig soak", 1, s.duration}, o.quiet, o.json);
  if (!observers) return report_error(observers.error());
  s.observer = (*observers)->get();
  auto result = run_soak(*device, model, s);
  (*observers)->stop_progress();
  if (!result) return (*observers)->finish(report_error(result.error()));
  add_library_versions(result->environment);
  return stopped_status((*observers)
                            ->finish(finish(format_soak_text(*result), soak_to_json(*result),
                                            o.json, o.quiet, result->verdict, o.strict)));
}

}  // namespace

Command add_soak_command(CLI::App& app) {
  auto o = std::make_shared<SoakOptions>();
  CLI::App* sub = app.add_subcommand(
      "soak", "One long run: rate and temperature per window, short-run vs long-run rate");
  sub->add_option("model", o->model, "ONNX model (default: the built-in demo CNN)");
  add_shape_option(sub, o->shapes);
  add_input_option(sub, o->inputs);
  add_device_option(sub, o->device);
  sub->add_option("--depth", o->depth, "requests in flight (default: the device's queue depth)");
  sub->add_option("--duration", o->duration, "measured time after warm-up, e.g. 10m")
      ->capture_default_str();
  sub->add_option("--short", o->short_span, "the short-run span: the first T after warm-up")
      ->capture_default_str();
  sub->add_option("--long", o->long_span, "the long-run span: the last T of the run")
      ->capture_default_str();
  sub->add_option("--window", o->window, "window length (0: min(short, long) / 5)")
      ->capture_default_str();
  sub->add_option("--cooldown", o->cooldown, "wait this long before loading the model")
      ->capture_default_str();
  sub->add_option("--warmup-max", o->warmup_max, "cap on the warm-up")->capture_default_str();
  sub->add_option("--timeout", o->timeout, "per-request timeout")->capture_default_str();
  sub->add_option("--seed", o->seed, "seed of the input data")->capture_default_str();
  sub->add_option("--json", o->json, "also write the result as JSON to this file");
  sub->add_flag("--strict", o->strict, "exit 1 when the verdict is INVALID");
  add_monitor_options(sub, o->monitor);
  sub->add_flag("-q,--quiet", o->quiet, "no progress messages on stderr");
  add_observe_options(sub, o->observe);
  return {sub, [o] { return run_soak_command(*o); }};
}

}  // namespace rig::cli

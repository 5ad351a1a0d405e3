// rig bench [MODEL] [-d DEVICE] [--depth N] [--duration T] [--repeats R] [--json FILE]
//           [--rate R/s [--arrival constant|poisson] [--on-full wait|drop]]
#include <cstdio>
#include <memory>

#include "cli/command.hpp"
#include "cli/environment_info.hpp"
#include "cli/monitor_options.hpp"
#include "cli/observe.hpp"
#include "cli/options.hpp"
#include "cli/point_options.hpp"
#include "cli/stop_signals.hpp"
#include "rig/report/bench_report.hpp"
#include "rig/scenario/bench.hpp"
#include "rig/units.hpp"

namespace rig::cli {
namespace {

struct BenchOptions {
  std::string model;
  std::string device = "cpu";
  std::optional<uint32_t> depth;
  // bench's defaults: at least 2 s and 100 inferences per repeat, up to 20 s.
  PointOptions point = {.duration = "2s", .min_inferences = 100, .max_factor = 10};
  double repeat_tolerance = 0.10;
  uint64_t latency_samples = 400;
  std::string latency_max = "15s";
  double confidence = 0.95;
  std::string rate;  // empty: closed loop
  std::string arrival = "constant";
  std::string on_full = "wait";
  std::string late_threshold = "1ms";
  std::string json;
  bool strict = false;
  bool quiet = false;
  ObserveOptions observe;
  MonitorOptions monitor;
};

int run_bench_command(const BenchOptions& o) {
  BenchSettings s;
  s.model = o.model;
  const DeviceOption device_option = parse_device_option(o.device);
  s.device = device_option.display;
  auto depth_given = depth_option(o.depth);
  if (!depth_given) return report_error(depth_given.error());
  s.depth = *depth_given;
  auto point = to_point_settings(o.point);
  if (!point) return report_error(point.error());
  s.point = *point;
  auto lat = positive_duration("--latency-duration", o.latency_max);
  if (!lat) return report_error(lat.error());
  s.latency_max = *lat;
  s.repeat_tolerance = o.repeat_tolerance;
  s.latency_samples = o.latency_samples;
  if (auto ok = apply_monitor_options(o.monitor, s.monitor, s.confounds); !ok)
    return report_error(ok.error());
  s.confidence = o.confidence;
  if (!o.rate.empty()) {
    auto rate = parse_frame_rate(o.rate);
    if (!rate) return report_error(Error{rate.error().code, "--rate: " + rate.error().message});
    s.offered.rate = *rate;
    s.offered.arrival = o.arrival == "poisson" ? Arrival::poisson : Arrival::constant;
    s.offered.on_full = o.on_full == "drop" ? QueueFull::drop : QueueFull::wait;
    auto late = parse_duration(o.late_threshold);
    if (!late || *late < Nanos(0))
      return report_error(
          Error{ErrorCode::invalid_argument, "--late-threshold: '" + o.late_threshold +
                                                 "' is not a non-negative duration (e.g. 1ms)"});
    s.offered.late_threshold = *late;
  }
  if (auto ok = validate(s); !ok) return report_error(ok.error());
  auto opened = open_model_on_device(o.json, o.model, o.point.shapes, device_option);
  if (!opened) return report_error(opened.error());
  auto& model = opened->model;
  auto& device = opened->device;
  s.model = model_origin(model);
  // Before the start line: a signal from then on stops the measurement, keeping it.
  install_stop_signals();
  // The whole command's plan, not the measured time alone: --duration is a
  // floor of each repeat's measured part (docs/methodology.md, section 3).
  const WallPlan plan = bench_wall_plan(s);
  if (!o.quiet && s.offered.enabled())
    std::fprintf(stderr, "rig: offering %s frames/s (%s) of %s to %s for %s: %s...\n",
                 format_fixed(s.offered.rate, 2).c_str(),
                 std::string(to_string(s.offered.arrival)).c_str(), s.model.c_str(),
                 s.device.c_str(), format_duration(s.point.duration).c_str(),
                 wall_plan_text(plan).c_str());
  else if (!o.quiet)
    std::fprintf(stderr, "rig: measuring %s on %s: %s...\n", s.model.c_str(), s.device.c_str(),
                 wall_plan_text(plan).c_str());
  auto observers = RunObservers::make(
      o.observe,
      {"rig bench", s.offered.enabled() ? 1 : s.point.repeats, s.point.duration, plan.upper()},
      o.quiet, o.json);
  if (!observers) return report_error(observers.error());
  s.point.observer = (*observers)->get();
  auto result = run_bench(*device, model, s);
  (*observers)->stop_progress();
  if (!result) return (*observers)->finish(report_error(result.error()));
  add_library_versions(result->environment);
  return stopped_status((*observers)
                            ->finish(finish(format_bench_text(*result), bench_to_json(*result),
                                            o.json, o.quiet, result->verdict, o.strict)));
}

}  // namespace

Command add_bench_command(CLI::App& app) {
  auto o = std::make_shared<BenchOptions>();
  CLI::App* sub = app.add_subcommand(
      "bench", "Measure time to first output, steady-state rate and bytes per inference");
  sub->add_option("model", o->model, "ONNX model (default: the built-in demo CNN)");
  add_shape_option(sub, o->point.shapes);
  add_input_option(sub, o->point.inputs);
  add_device_option(sub, o->device);
  sub->add_option("--depth", o->depth, "requests in flight (default: the device's queue depth)");
  sub->add_option("--duration", o->point.duration,
                  "measured time per repeat, at least (then the adaptive stop), e.g. 10s")
      ->capture_default_str();
  sub->add_option("--repeats", o->point.repeats, "repeats of the steady-state measurement")
      ->capture_default_str()
      ->check(positive());
  sub->add_option("--windows", o->point.windows,
                  "windows per repeat (stability compares the last 3)")
      ->capture_default_str()
      ->check(in_range(3u, 100000u));
  sub->add_option("--min-inferences", o->point.min_inferences, "inferences per repeat, at least")
      ->capture_default_str()
      ->check(positive());
  sub->add_option("--tolerance", o->point.tolerance, "stability tolerance of the last 3 windows")
      ->capture_default_str()
      ->check(in_range(1e-6, 10.0));
  sub->add_option("--repeat-tolerance", o->repeat_tolerance, "allowed spread across repeats")
      ->capture_default_str()
      ->check(in_range(1e-6, 10.0));
  sub->add_option("--warmup-max", o->point.warmup_max, "cap on the warm-up")->capture_default_str();
  add_stop_options(sub, o->point);
  sub->add_option("--latency-samples", o->latency_samples, "lone frames to time")
      ->capture_default_str()
      ->check(in_range(uint64_t{1}, uint64_t{10000000}));
  sub->add_option("--latency-duration", o->latency_max, "cap on the lone-frame phase")
      ->capture_default_str();
  sub->add_option("--confidence", o->confidence,
                  "confidence of every percentile's interval (order statistics)")
      ->capture_default_str()
      ->check(in_range(0.5, 0.9999));
  sub->add_option("--rate", o->rate,
                  "offered load: frames arrive at this rate (e.g. 30/s) and are submitted on "
                  "arrival, instead of keeping --depth full; runs for --duration");
  sub->add_option("--arrival", o->arrival, "offered load: arrivals constant or poisson")
      ->capture_default_str()
      ->check(CLI::IsMember({"constant", "poisson"}));
  sub->add_option("--on-full", o->on_full,
                  "offered load: a frame arriving with every slot busy waits or is dropped")
      ->capture_default_str()
      ->check(CLI::IsMember({"wait", "drop"}));
  sub->add_option("--late-threshold", o->late_threshold,
                  "offered load: a frame submitted later than this after its arrival is late")
      ->capture_default_str();
  sub->add_option("--timeout", o->point.timeout, "per-request timeout")->capture_default_str();
  sub->add_option("--seed", o->point.seed, "seed of the input data")->capture_default_str();
  sub->add_option("--json", o->json, "also write the result as JSON to this file");
  sub->add_flag("--strict", o->strict, "exit 1 when the verdict is INVALID");
  add_monitor_options(sub, o->monitor);
  sub->add_flag("-q,--quiet", o->quiet, "no progress messages on stderr");
  add_observe_options(sub, o->observe);
  return {sub, [o] { return run_bench_command(*o); }};
}

}  // namespace rig::cli

// rig sweep [MODEL] [-d DEVICE] [--depth 1..64] [--repeats R] [--json FILE]
// rig sweep [MODEL] [-d DEVICE] --rate 10/s..1000/s --latency-bound 10ms
//           [--arrival constant|poisson] [--max-probes N] [--json FILE]
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cli/command.hpp"
#include "cli/environment_info.hpp"
#include "cli/monitor_options.hpp"
#include "cli/observe.hpp"
#include "cli/point_options.hpp"
#include "rig/report/sweep_report.hpp"
#include "rig/scenario/rate_search.hpp"
#include "rig/units.hpp"

namespace rig::cli {
namespace {

struct SweepOptions {
  MonitorOptions monitor;
  std::string model;
  std::string device = "cpu";
  std::string depth = "1..64";
  double knee = 0.95;
  bool no_refine = false;
  uint64_t latency_samples = 50;
  // Up to 5 x --duration per repeat: windows long enough to hold a
  // half-duplex link's pattern of cycles (docs/methodology.md, section 3).
  PointOptions point = {.max_factor = 5};
  std::string json;
  bool quiet = false;
  ObserveOptions observe;
  // --rate: the rate search instead of the depth sweep
  std::string rate;
  std::string latency_bound = "10ms";
  std::string arrival = "constant";
  std::string on_full = "wait";
  std::string late_threshold = "1ms";
  uint32_t max_probes = 10;
  double resolution = 0.02;
  double confidence = kDefaultConfidence;
  // The options one mode takes and the other refuses by name.
  std::vector<std::pair<std::string, CLI::Option*>> depth_only, rate_only;
};

// The options given that the other mode has no use for ("--depth").
std::string given(const std::vector<std::pair<std::string, CLI::Option*>>& options) {
  std::string names;
  for (const auto& [name, opt] : options)
    if (opt->count() > 0) names += (names.empty() ? "" : ", ") + name;
  return names;
}

// What both sweeps do once their settings are valid: the output file's
// check, the model, the device (-d, parsed once), the observers, the run and
// its report. `announce(model)` prints the line that says what is about to run.
template <class Settings, class Announce, class Run, class Text, class Json>
int measure_and_report(const SweepOptions& o, const DeviceOption& device_option, Settings s,
                       Announce announce, Run run, Text text, Json to_json) {
  auto opened = open_model_on_device(o.json, o.model, o.point.shapes, device_option);
  if (!opened) return report_error(opened.error());
  auto& model = opened->model;
  auto& device = opened->device;
  if (!o.quiet) announce(model);
  auto observers =
      RunObservers::make(o.observe, {"rig sweep", 0, s.point.duration}, o.quiet, o.json);
  if (!observers) return report_error(observers.error());
  s.point.observer = (*observers)->get();
  auto result = run(*device, model, s);
  (*observers)->stop_progress();
  if (!result) return (*observers)->finish(report_error(result.error()));
  add_library_versions(result->environment);
  return (*observers)
      ->finish(finish(text(*result), to_json(*result), o.json, o.quiet, result->verdict,
                      o.point.strict));
}

int run_rate_sweep_command(const SweepOptions& o) {
  if (const std::string bad = given(o.depth_only); !bad.empty())
    return report_error({ErrorCode::invalid_argument,
                         "--rate searches the offered rate at the device's queue depth; " + bad +
                             " belong(s) to the depth sweep: drop " + bad + " or --rate"});
  RateSweepSettings s;
  auto range = parse_rate_range(o.rate);
  if (!range)
    return report_error({ErrorCode::invalid_argument, "--rate: " + range.error().message});
  s.min_rate = range->first;
  s.max_rate = range->second;
  auto bound = positive_duration("--latency-bound", o.latency_bound);
  if (!bound) return report_error(bound.error());
  s.latency_bound = *bound;
  s.arrival = o.arrival == "poisson" ? Arrival::poisson : Arrival::constant;
  s.on_full = o.on_full == "drop" ? QueueFull::drop : QueueFull::wait;
  auto late = parse_duration(o.late_threshold);
  if (!late || *late < Nanos(0))
    return report_error(
        {ErrorCode::invalid_argument,
         "--late-threshold: '" + o.late_threshold + "' is not a non-negative duration (e.g. 1ms)"});
  s.late_threshold = *late;
  s.max_probes = o.max_probes;
  s.resolution = o.resolution;
  s.confidence = o.confidence;
  auto point = to_point_settings(o.point);
  if (!point) return report_error(point.error());
  s.point = *point;
  s.latency_samples = o.latency_samples;
  if (auto ok = apply_monitor_options(o.monitor, s.monitor, s.confounds); !ok)
    return report_error(ok.error());
  if (auto ok = validate(s); !ok) return report_error(ok.error());
  const DeviceOption device_option = parse_device_option(o.device);
  auto announce = [&](const ModelSource& model) {
    std::fprintf(stderr,
                 "rig: searching %s..%s frames/s for p99 <= %s on %s of %s (up to %u probes of "
                 "%s each)...\n",
                 format_fixed(s.min_rate, 2).c_str(), format_fixed(s.max_rate, 2).c_str(),
                 format_duration(s.latency_bound).c_str(), device_option.display.c_str(),
                 model_display_name(model).c_str(), s.max_probes,
                 format_duration(s.point.duration).c_str());
  };
  return measure_and_report(o, device_option, s, announce, run_rate_sweep, format_rate_sweep_text,
                            rate_sweep_to_json);
}

int run_sweep_command(const SweepOptions& o) {
  if (!o.rate.empty()) return run_rate_sweep_command(o);
  if (const std::string bad = given(o.rate_only); !bad.empty())
    return report_error({ErrorCode::invalid_argument,
                         bad + " belong(s) to the rate search: add --rate LO..HI (e.g. "
                               "--rate 10/s..1000/s)"});
  SweepSettings s;
  auto range = parse_depth_range(o.depth);
  if (!range)
    return report_error({ErrorCode::invalid_argument, "--depth: " + range.error().message});
  s.min_depth = range->first;
  s.max_depth = range->second;
  auto point = to_point_settings(o.point);
  if (!point) return report_error(point.error());
  s.point = *point;
  s.knee_fraction = o.knee;
  s.refine = !o.no_refine;
  s.latency_samples = o.latency_samples;
  if (auto ok = apply_monitor_options(o.monitor, s.monitor, s.confounds); !ok)
    return report_error(ok.error());
  if (auto ok = validate(s); !ok) return report_error(ok.error());
  const DeviceOption device_option = parse_device_option(o.device);
  auto announce = [&](const ModelSource& model) {
    std::fprintf(stderr, "rig: sweeping depth %u..%u of %s on %s (%u repeats of %s each)...\n",
                 s.min_depth, s.max_depth, model_display_name(model).c_str(),
                 device_option.display.c_str(), s.point.repeats,
                 format_duration(s.point.duration).c_str());
  };
  return measure_and_report(o, device_option, s, announce, run_sweep, format_sweep_text,
                            sweep_to_json);
}

}  // namespace

Command add_sweep_command(CLI::App& app) {
  auto o = std::make_shared<SweepOptions>();
  CLI::App* sub = app.add_subcommand(
      "sweep", "Pipelined rate against queue depth: the knee, and the round trip pipelining hides");
  sub->add_option("model", o->model, "ONNX model (default: the built-in demo CNN)");
  add_shape_option(sub, o->point.shapes);
  add_input_option(sub, o->point.inputs);
  add_device_option(sub, o->device);
  auto* depth =
      sub->add_option("--depth", o->depth, "depths to sweep: LO..HI or HI (powers of two between)")
          ->capture_default_str();
  auto* knee = sub->add_option("--knee", o->knee, "the knee reaches this share of the best rate")
                   ->capture_default_str()
                   ->check(in_range(0.01, 1.0));
  auto* no_refine =
      sub->add_flag("--no-refine", o->no_refine, "do not bisect between powers of two at the knee");
  o->depth_only = {{"--depth", depth}, {"--knee", knee}, {"--no-refine", no_refine}};
  sub->add_option("--rate", o->rate,
                  "instead of depths, search offered rates LO..HI (e.g. 10/s..1000/s) for the "
                  "highest whose p99 latency from arrival meets --latency-bound");
  o->rate_only = {
      {"--latency-bound", sub->add_option("--latency-bound", o->latency_bound,
                                          "rate search: p99 latency from arrival at most this")
                              ->capture_default_str()},
      {"--arrival", sub->add_option("--arrival", o->arrival, "rate search: arrivals")
                        ->capture_default_str()
                        ->check(CLI::IsMember({"constant", "poisson"}))},
      {"--on-full",
       sub->add_option("--on-full", o->on_full,
                       "rate search: a frame arriving with every slot busy waits or is dropped")
           ->capture_default_str()
           ->check(CLI::IsMember({"wait", "drop"}))},
      {"--late-threshold",
       sub->add_option("--late-threshold", o->late_threshold,
                       "rate search: a frame submitted later than this after its arrival is late")
           ->capture_default_str()},
      {"--max-probes",
       sub->add_option("--max-probes", o->max_probes, "rate search: offered-load runs, at most")
           ->capture_default_str()
           ->check(in_range(2u, 1000u))},
      {"--resolution",
       sub->add_option("--resolution", o->resolution,
                       "rate search: stop when the first failing rate is within this share above "
                       "the best")
           ->capture_default_str()
           ->check(in_range(1e-6, 10.0))},
      {"--confidence", sub->add_option("--confidence", o->confidence,
                                       "rate search: confidence of each p99's interval")
                           ->capture_default_str()
                           ->check(in_range(0.5, 0.9999))},
  };
  sub->add_option("--latency-samples", o->latency_samples, "lone frames to time")
      ->capture_default_str()
      ->check(in_range(uint64_t{1}, uint64_t{1000000}));
  add_point_options(sub, o->point, true);
  // The closed-loop repeats' settings: an offered-load probe runs for its
  // schedule (--duration), not until it is stable.
  for (const char* name : {"--repeats", "--min-inferences", "--tolerance", "--rate-tolerance",
                           "--max-duration-factor", "--warmup-max"})
    o->depth_only.emplace_back(name, sub->get_option(name));
  sub->add_option("--json", o->json, "also write the result as JSON to this file");
  sub->add_flag("-q,--quiet", o->quiet, "no progress messages on stderr");
  add_monitor_options(sub, o->monitor);
  add_observe_options(sub, o->observe);
  return {sub, [o] { return run_sweep_command(*o); }};
}

}  // namespace rig::cli

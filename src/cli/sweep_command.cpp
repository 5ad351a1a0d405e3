// rig sweep [MODEL] [-d DEVICE] [--depth 1..64] [--repeats R] [--json FILE]
#include <cstdio>
#include <memory>

#include "cli/command.hpp"
#include "cli/environment_info.hpp"
#include "cli/observe.hpp"
#include "cli/point_options.hpp"
#include "rig/report/sweep_report.hpp"

namespace rig::cli {
namespace {

struct SweepOptions {
  std::string model;
  std::string device = "cpu";
  std::string depth = "1..64";
  double knee = 0.95;
  bool no_refine = false;
  uint64_t latency_samples = 50;
  PointOptions point;
  std::string json;
  bool quiet = false;
  ObserveOptions observe;
};

int run_sweep_command(const SweepOptions& o) {
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
  if (auto ok = validate(s); !ok) return report_error(ok.error());
  if (!o.json.empty())
    if (auto ok = check_writable("--json", o.json); !ok) return report_error(ok.error());

  auto model = resolve_model(o.model, o.point.shapes);
  if (!model) return report_error(model.error());
  auto device = open_spec(o.device);
  if (!device) return report_error(device.error());
  if (!o.quiet)
    std::fprintf(stderr, "rig: sweeping depth %u..%u of %s on %s (%u repeats of %s each)...\n",
                 s.min_depth, s.max_depth, model_display_name(*model).c_str(),
                 display_spec(o.device).c_str(), s.point.repeats,
                 format_duration(s.point.duration).c_str());
  auto observers =
      RunObservers::make(o.observe, {"rig sweep", 0, s.point.duration}, o.quiet, o.json);
  if (!observers) return report_error(observers.error());
  s.point.observer = (*observers)->get();
  auto result = run_sweep(**device, *model, s);
  (*observers)->stop_progress();
  if (!result) return (*observers)->finish(report_error(result.error()));
  add_library_versions(result->environment);
  return (*observers)
      ->finish(finish(format_sweep_text(*result), sweep_to_json(*result), o.json, o.quiet,
                      result->verdict, o.point.strict));
}

}  // namespace

Command add_sweep_command(CLI::App& app) {
  auto o = std::make_shared<SweepOptions>();
  CLI::App* sub = app.add_subcommand(
      "sweep", "Pipelined rate against queue depth: the knee, and the round trip pipelining hides");
  sub->add_option("model", o->model, "ONNX model (default: the built-in demo CNN)");
  add_shape_option(sub, o->point.shapes);
  sub->add_option("-d,--device", o->device,
                  "device spec: cpu, sim:... (sim:link=usb3-gen2,...), tcp://HOST:PORT")
      ->capture_default_str();
  sub->add_option("--depth", o->depth, "depths to sweep: LO..HI or HI (powers of two between)")
      ->capture_default_str();
  sub->add_option("--knee", o->knee, "the knee reaches this share of the best rate")
      ->capture_default_str()
      ->check(in_range(0.01, 1.0));
  sub->add_flag("--no-refine", o->no_refine, "do not bisect between powers of two at the knee");
  sub->add_option("--latency-samples", o->latency_samples, "lone frames to time")
      ->capture_default_str()
      ->check(in_range(uint64_t{1}, uint64_t{1000000}));
  add_point_options(sub, o->point, true);
  sub->add_option("--json", o->json, "also write the result as JSON to this file");
  sub->add_flag("-q,--quiet", o->quiet, "no progress messages on stderr");
  add_observe_options(sub, o->observe);
  return {sub, [o] { return run_sweep_command(*o); }};
}

}  // namespace rig::cli

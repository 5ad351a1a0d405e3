// rig ladder [-d DEVICE] [--sizes 512p,720p,1080p,4k] [--depth 4] [--repeats R] [--json FILE]
#include <cstdio>
#include <memory>

#include "cli/command.hpp"
#include "cli/environment_info.hpp"
#include "cli/monitor_options.hpp"
#include "cli/observe.hpp"
#include "cli/point_options.hpp"
#include "rig/report/ladder_report.hpp"

namespace rig::cli {
namespace {

struct LadderOptions {
  MonitorOptions monitor;
  std::string device = "cpu";
  std::vector<std::string> sizes = {"512p", "720p", "1080p", "4k"};
  std::optional<uint32_t> depth;
  uint64_t latency_samples = 20;
  double plateau_tolerance = 0.10;
  PointOptions point;
  std::string json;
  bool quiet = false;
  ObserveOptions observe;
};

int run_ladder_command(const LadderOptions& o) {
  LadderSettings s;
  s.sizes = o.sizes;
  auto depth_given = depth_option(o.depth);
  if (!depth_given) return report_error(depth_given.error());
  if (o.depth) s.depth = *depth_given;  // else the ladder's default
  auto point = to_point_settings(o.point);
  if (!point) return report_error(point.error());
  s.point = *point;
  s.latency_samples = o.latency_samples;
  s.plateau_tolerance = o.plateau_tolerance;
  if (auto ok = apply_monitor_options(o.monitor, s.monitor, s.confounds); !ok)
    return report_error(ok.error());
  if (auto ok = validate(s); !ok) {
    Error e = ok.error();
    if (e.message.rfind("frame size", 0) == 0 || e.message.rfind("the ladder", 0) == 0)
      e.message = "--sizes: " + e.message;
    return report_error(e);
  }
  if (!o.json.empty())
    if (auto ok = check_writable("--json", o.json); !ok) return report_error(ok.error());

  const DeviceOption device_option = parse_device_option(o.device);
  auto device = open_spec(device_option);
  if (!device) return report_error(device.error());
  if (!o.quiet)
    std::fprintf(stderr,
                 "rig: ladder on %s: %zu sizes in-heavy and out-heavy, %u repeats of %s each...\n",
                 device_option.display.c_str(), s.sizes.size(), s.point.repeats,
                 format_duration(s.point.duration).c_str());
  auto observers = RunObservers::make(
      o.observe,
      {"rig ladder",
       static_cast<uint32_t>(s.sizes.size()) * (s.out_heavy ? 2u : 1u) * s.point.repeats,
       s.point.duration},
      o.quiet, o.json);
  if (!observers) return report_error(observers.error());
  s.point.observer = (*observers)->get();
  auto result = run_ladder(**device, s);
  (*observers)->stop_progress();
  if (!result) return (*observers)->finish(report_error(result.error()));
  add_library_versions(result->environment);
  return (*observers)
      ->finish(finish(format_ladder_text(*result), ladder_to_json(*result), o.json, o.quiet,
                      result->verdict, o.point.strict));
}

}  // namespace

Command add_ladder_command(CLI::App& app) {
  auto o = std::make_shared<LadderOptions>();
  CLI::App* sub = app.add_subcommand(
      "ladder",
      "Characterize the link: transport models at each frame size, fitted bandwidth "
      "and fixed latency");
  add_device_option(sub, o->device);
  sub->add_option("--sizes", o->sizes, "frame sizes: 512p, 720p, 1080p, 4k or WxH")
      ->delimiter(',')
      ->capture_default_str();
  sub->add_option("--depth", o->depth, "requests in flight when pipelined (default 4)");
  sub->add_option("--latency-samples", o->latency_samples, "lone frames per size")
      ->capture_default_str()
      ->check(in_range(uint64_t{1}, uint64_t{1000000}));
  sub->add_option("--plateau-tolerance", o->plateau_tolerance,
                  "MB/s of plateau sizes agree within this share")
      ->capture_default_str()
      ->check(in_range(1e-6, 10.0));
  add_point_options(sub, o->point, true);
  sub->add_option("--json", o->json, "also write the result as JSON to this file");
  sub->add_flag("-q,--quiet", o->quiet, "no progress messages on stderr");
  add_monitor_options(sub, o->monitor);
  add_observe_options(sub, o->observe);
  return {sub, [o] { return run_ladder_command(*o); }};
}

}  // namespace rig::cli

// rig ladder [-d DEVICE] [--sizes 512p,720p,1080p,4k] [--depth 4] [--repeats R] [--json FILE]
#include <cstdio>
#include <memory>

#include "cli/bind.hpp"
#include "cli/command.hpp"
#include "cli/measure.hpp"
#include "cli/monitor_options.hpp"
#include "cli/point_options.hpp"
#include "rig/report/ladder_report.hpp"

namespace rig::cli {
namespace {

struct LadderCommand {
  LadderSettings s;  // the options' defaults are its own
  MeasureOptions o;  // o.device: the settings record no device spec
};

int run_ladder_command(LadderCommand& c) {
  LadderSettings& s = c.s;
  const MeasureOptions& o = c.o;
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
  MeasureSteps<LadderSettings, LadderResult> steps{
      .label = "rig ladder",
      .plan =
          [](const LadderSettings& x) {
            return ProgressPlan{
                {},
                static_cast<uint32_t>(x.sizes.size()) * (x.out_heavy ? 2u : 1u) * x.point.repeats,
                x.point.duration};
          },
      .text = format_ladder_text,
      .json = ladder_to_json,
  };
  return observe_run_finish(
      s, o, steps, [&](const LadderSettings& settings) { return run_ladder(**device, settings); });
}

}  // namespace

Command add_ladder_command(CLI::App& app) {
  auto c = std::make_shared<LadderCommand>();
  LadderSettings& s = c->s;
  MeasureOptions& o = c->o;
  CLI::App* sub = app.add_subcommand(
      "ladder",
      "Characterize the link: transport models at each frame size, fitted bandwidth "
      "and fixed latency");
  add_device_option(sub, o.device);
  sub->add_option("--sizes", s.sizes, "frame sizes: 512p, 720p, 1080p, 4k or WxH")
      ->delimiter(',')
      ->capture_default_str();
  add_depth_option(sub, s.depth,
                   "requests in flight when pipelined (default " + std::to_string(s.depth) + ")");
  sub->add_option("--latency-samples", s.latency_samples, "lone frames per size")
      ->capture_default_str()
      ->check(in_range(uint64_t{1}, uint64_t{1000000}));
  sub->add_option("--plateau-tolerance", s.plateau_tolerance,
                  "MB/s of plateau sizes agree within this share")
      ->capture_default_str()
      ->check(in_range(1e-6, 10.0));
  add_point_options(sub, s.point, true);
  add_measured_run_options(sub, o, s.monitor, s.confounds);
  return {sub, [c] { return run_ladder_command(*c); }};
}

}  // namespace rig::cli

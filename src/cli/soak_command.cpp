// rig soak [MODEL] -d DEVICE --duration 10m [--short 10s] [--long 1m] [--window T]
//          [--cooldown T] [--json FILE]
// One long run: rate and temperature per window, the short-run rate against
// the long-run rate and the drift between them.
#include <cstdio>
#include <memory>
#include <string>

#include "cli/bind.hpp"
#include "cli/command.hpp"
#include "cli/measure.hpp"
#include "cli/monitor_options.hpp"
#include "cli/point_options.hpp"
#include "rig/report/soak_report.hpp"
#include "rig/scenario/soak.hpp"
#include "rig/units.hpp"

namespace rig::cli {
namespace {

struct SoakCommand {
  SoakSettings s;  // the options' defaults are its own
  MeasureOptions o;
};

int run_soak_command(SoakCommand& c) {
  MeasureSteps<SoakSettings, SoakResult> steps{
      .label = "rig soak",
      .stoppable = true,
      .announce =
          [](const SoakSettings& s, const ModelSource&, const std::string&) {
            std::fprintf(stderr, "rig: soaking %s on %s for %s...\n", s.model.c_str(),
                         s.device.c_str(), format_duration(s.duration).c_str());
          },
      .runs = 1,
      .run = run_soak,
      .text = format_soak_text,
      .json = soak_to_json,
  };
  return run_command(c.s, c.o, steps);
}

}  // namespace

Command add_soak_command(CLI::App& app) {
  auto c = std::make_shared<SoakCommand>();
  SoakSettings& s = c->s;
  MeasureOptions& o = c->o;
  CLI::App* sub = app.add_subcommand(
      "soak", "One long run: rate and temperature per window, short-run vs long-run rate");
  add_model_on_device_options(sub, s, o);
  add_depth_option(sub, s.depth, "requests in flight (default: the device's queue depth)");
  add_duration_option(sub, "--duration", s.duration, "measured time after warm-up, e.g. 10m");
  add_duration_option(sub, "--short", s.short_span,
                      "the short-run span: the first T after warm-up");
  add_duration_option(sub, "--long", s.long_span, "the long-run span: the last T of the run");
  add_duration_option(sub, "--window", s.window, "window length (0: min(short, long) / 5)",
                      DurationRule::nonnegative);
  add_duration_option(sub, "--cooldown", s.cooldown, "wait this long before loading the model",
                      DurationRule::nonnegative);
  add_duration_option(sub, "--warmup-max", s.warmup_max, "cap on the warm-up",
                      DurationRule::nonnegative);
  add_timeout_option(sub, s.request_timeout);
  add_seed_option(sub, s.seed);
  add_measured_run_options(sub, o, s.monitor, s.confounds);
  return {sub, [c] { return run_soak_command(*c); }};
}

}  // namespace rig::cli

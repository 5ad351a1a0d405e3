// rig bench [MODEL] [-d DEVICE] [--depth N] [--duration T] [--repeats R] [--json FILE]
//           [--rate R/s [--arrival constant|poisson] [--on-full wait|drop]]
#include <cstdio>
#include <memory>

#include "cli/bind.hpp"
#include "cli/command.hpp"
#include "cli/measure.hpp"
#include "cli/monitor_options.hpp"
#include "cli/point_options.hpp"
#include "rig/report/bench_report.hpp"
#include "rig/scenario/bench.hpp"
#include "rig/units.hpp"

namespace rig::cli {
namespace {

struct BenchCommand {
  BenchSettings s;  // the options' defaults are its own
  MeasureOptions o;
};

int run_bench_command(BenchCommand& c) {
  // Without --rate the offered load's knobs are not settings of the run.
  if (!c.s.offered.enabled()) c.s.offered = OfferedLoad{};
  MeasureSteps<BenchSettings, BenchResult> steps{
      .label = "rig bench",
      .stoppable = true,
      .announce =
          [](const BenchSettings& s, const ModelSource&, const std::string&) {
            // The whole command's plan, not the measured time alone: --duration is a
            // floor of each repeat's measured part (docs/methodology.md, section 3).
            const WallPlan plan = bench_wall_plan(s);
            if (s.offered.enabled())
              std::fprintf(stderr, "rig: offering %s frames/s (%s) of %s to %s for %s: %s...\n",
                           format_fixed(s.offered.rate, 2).c_str(),
                           std::string(to_string(s.offered.arrival)).c_str(), s.model.c_str(),
                           s.device.c_str(), format_duration(s.point.duration).c_str(),
                           wall_plan_text(plan).c_str());
            else
              std::fprintf(stderr, "rig: measuring %s on %s: %s...\n", s.model.c_str(),
                           s.device.c_str(), wall_plan_text(plan).c_str());
          },
      .plan =
          [](const BenchSettings& s) {
            return ProgressPlan{{},
                                s.offered.enabled() ? 1 : s.point.repeats,
                                s.point.duration,
                                bench_wall_plan(s).upper()};
          },
      .run = run_bench,
      .text = format_bench_text,
      .json = bench_to_json,
  };
  return run_command(c.s, c.o, steps);
}

}  // namespace

Command add_bench_command(CLI::App& app) {
  auto c = std::make_shared<BenchCommand>();
  BenchSettings& s = c->s;
  MeasureOptions& o = c->o;
  CLI::App* sub = app.add_subcommand(
      "bench", "Measure time to first output, steady-state rate and bytes per inference");
  add_model_on_device_options(sub, s, o);
  add_depth_option(sub, s.depth, "requests in flight (default: the device's queue depth)");
  add_duration_option(sub, "--duration", s.point.duration,
                      "measured time per repeat, at least (then the adaptive stop), e.g. 10s");
  sub->add_option("--repeats", s.point.repeats, "repeats of the steady-state measurement")
      ->capture_default_str()
      ->check(positive());
  sub->add_option("--windows", s.point.windows,
                  "windows per repeat (stability compares the last 3)")
      ->capture_default_str()
      ->check(in_range(3u, 100000u));
  sub->add_option("--min-inferences", s.point.min_inferences, "inferences per repeat, at least")
      ->capture_default_str()
      ->check(positive());
  sub->add_option("--tolerance", s.point.stability_tolerance,
                  "stability tolerance of the last 3 windows")
      ->capture_default_str()
      ->check(in_range(1e-6, 10.0));
  sub->add_option("--repeat-tolerance", s.repeat_tolerance, "allowed spread across repeats")
      ->capture_default_str()
      ->check(in_range(1e-6, 10.0));
  add_duration_option(sub, "--warmup-max", s.point.warmup_max, "cap on the warm-up",
                      DurationRule::nonnegative);
  add_stop_options(sub, s.point);
  sub->add_option("--latency-samples", s.latency_samples, "lone frames to time")
      ->capture_default_str()
      ->check(in_range(uint64_t{1}, uint64_t{10000000}));
  add_duration_option(sub, "--latency-duration", s.latency_max, "cap on the lone-frame phase");
  sub->add_option("--confidence", s.confidence,
                  "confidence of every percentile's interval (order statistics)")
      ->capture_default_str()
      ->check(in_range(0.5, 0.9999));
  add_parsed_option(sub, "--rate", s.offered.rate,
                    "offered load: frames arrive at this rate (e.g. 30/s) and are submitted on "
                    "arrival, instead of keeping --depth full; runs for --duration",
                    [](const std::string& text) -> Result<double> {
                      auto rate = parse_frame_rate(text);
                      if (!rate) return fail(rate.error().code, "--rate: " + rate.error().message);
                      return *rate;
                    });
  add_offered_options(sub, s.offered.arrival, s.offered.on_full, s.offered.late_threshold,
                      "offered load");
  add_timeout_option(sub, s.point.request_timeout);
  add_seed_option(sub, s.point.seed);
  add_measured_run_options(sub, o, s.monitor, s.confounds);
  return {sub, [c] { return run_bench_command(*c); }};
}

}  // namespace rig::cli

// rig sweep [MODEL] [-d DEVICE] [--depth 1..64] [--repeats R] [--json FILE]
// rig sweep [MODEL] [-d DEVICE] --rate 10/s..1000/s --latency-bound 10ms
//           [--arrival constant|poisson] [--max-probes N] [--json FILE]
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cli/bind.hpp"
#include "cli/command.hpp"
#include "cli/measure.hpp"
#include "cli/monitor_options.hpp"
#include "cli/point_options.hpp"
#include "rig/report/sweep_report.hpp"
#include "rig/scenario/rate_search.hpp"
#include "rig/units.hpp"

namespace rig::cli {
namespace {

// The depth sweep's settings hold the options both modes share (the point,
// the lone frames, the monitor); the rate search's own options go to `rate`.
struct SweepCommand {
  SweepSettings s;
  RateSweepSettings rate;
  MeasureOptions o;
  CLI::Option* rate_option = nullptr;  // --rate: the rate search instead of the depth sweep
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

int run_rate_sweep_command(SweepCommand& c) {
  if (const std::string bad = given(c.depth_only); !bad.empty())
    return report_error({ErrorCode::invalid_argument,
                         "--rate searches the offered rate at the device's queue depth; " + bad +
                             " belong(s) to the depth sweep: drop " + bad + " or --rate"});
  // The options both modes share were bound to the depth sweep's settings.
  c.rate.point = c.s.point;
  c.rate.latency_samples = c.s.latency_samples;
  c.rate.monitor = c.s.monitor;
  c.rate.confounds = c.s.confounds;
  c.o.input_files = &c.rate.point.inputs;
  MeasureSteps<RateSweepSettings, RateSweepResult> steps{
      .label = "rig sweep",
      .announce =
          [](const RateSweepSettings& s, const ModelSource& model, const std::string& device) {
            std::fprintf(
                stderr,
                "rig: searching %s..%s frames/s for p99 <= %s on %s of %s (up to %u probes of "
                "%s each)...\n",
                format_fixed(s.min_rate, 2).c_str(), format_fixed(s.max_rate, 2).c_str(),
                format_duration(s.latency_bound).c_str(), device.c_str(),
                model_display_name(model).c_str(), s.max_probes,
                format_duration(s.point.duration).c_str());
          },
      .run = run_rate_sweep,
      .text = format_rate_sweep_text,
      .json = rate_sweep_to_json,
  };
  return run_command(c.rate, c.o, steps);
}

int run_sweep_command(SweepCommand& c) {
  if (c.rate_option->count() > 0) return run_rate_sweep_command(c);
  if (const std::string bad = given(c.rate_only); !bad.empty())
    return report_error({ErrorCode::invalid_argument,
                         bad + " belong(s) to the rate search: add --rate LO..HI (e.g. "
                               "--rate 10/s..1000/s)"});
  MeasureSteps<SweepSettings, SweepResult> steps{
      .label = "rig sweep",
      .announce =
          [](const SweepSettings& s, const ModelSource& model, const std::string& device) {
            std::fprintf(
                stderr, "rig: sweeping depth %u..%u of %s on %s (%u repeats of %s each)...\n",
                s.min_depth, s.max_depth, model_display_name(model).c_str(), device.c_str(),
                s.point.repeats, format_duration(s.point.duration).c_str());
          },
      .run = run_sweep,
      .text = format_sweep_text,
      .json = sweep_to_json,
  };
  return run_command(c.s, c.o, steps);
}

// A range option ("--depth 1..64", "--rate 10/s..1000/s") into two fields.
template <class T, class Parse>
CLI::Option* add_range_option(CLI::App* sub, const std::string& name, T& lo, T& hi,
                              const std::string& help, Parse parse) {
  return sub->add_option_function<std::string>(
      name,
      [name, &lo, &hi, parse](const std::string& text) {
        auto range = parse(text);
        if (!range)
          throw CLI::ValidationError(
              Error{ErrorCode::invalid_argument, name + ": " + range.error().message}.to_string());
        lo = range->first;
        hi = range->second;
      },
      help);
}

}  // namespace

Command add_sweep_command(CLI::App& app) {
  auto c = std::make_shared<SweepCommand>();
  SweepSettings& s = c->s;
  RateSweepSettings& r = c->rate;
  MeasureOptions& o = c->o;
  CLI::App* sub = app.add_subcommand(
      "sweep", "Pipelined rate against queue depth: the knee, and the round trip pipelining hides");
  add_model_on_device_options(sub, s, o);
  auto* depth =
      add_range_option(sub, "--depth", s.min_depth, s.max_depth,
                       "depths to sweep: LO..HI or HI (powers of two between)", parse_depth_range)
          ->default_str(std::to_string(s.min_depth) + ".." + std::to_string(s.max_depth));
  auto* knee =
      sub->add_option("--knee", s.knee_fraction, "the knee reaches this share of the best rate")
          ->capture_default_str()
          ->check(in_range(0.01, 1.0));
  auto* no_refine =
      add_off_flag(sub, "--no-refine", s.refine, "do not bisect between powers of two at the knee");
  c->depth_only = {{"--depth", depth}, {"--knee", knee}, {"--no-refine", no_refine}};
  c->rate_option =
      add_range_option(sub, "--rate", r.min_rate, r.max_rate,
                       "instead of depths, search offered rates LO..HI (e.g. 10/s..1000/s) for the "
                       "highest whose p99 latency from arrival meets --latency-bound",
                       parse_rate_range);
  c->rate_only = {{"--latency-bound",
                   add_duration_option(sub, "--latency-bound", r.latency_bound,
                                       "rate search: p99 latency from arrival at most this")}};
  for (auto& named :
       add_offered_options(sub, r.arrival, r.on_full, r.late_threshold, "rate search"))
    c->rate_only.push_back(named);
  c->rate_only.insert(
      c->rate_only.end(),
      {{"--max-probes",
        sub->add_option("--max-probes", r.max_probes, "rate search: offered-load runs, at most")
            ->capture_default_str()
            ->check(in_range(2u, 1000u))},
       {"--resolution",
        sub->add_option("--resolution", r.resolution,
                        "rate search: stop when the first failing rate is within this share "
                        "above the best")
            ->capture_default_str()
            ->check(in_range(1e-6, 10.0))},
       {"--confidence", sub->add_option("--confidence", r.confidence,
                                        "rate search: confidence of each p99's interval")
                            ->capture_default_str()
                            ->check(in_range(0.5, 0.9999))}});
  sub->add_option("--latency-samples", s.latency_samples, "lone frames to time")
      ->capture_default_str()
      ->check(in_range(uint64_t{1}, uint64_t{1000000}));
  add_point_options(sub, s.point, true);
  add_measured_run_options(sub, o, s.monitor, s.confounds);
  // The closed-loop repeats' settings: an offered-load probe runs for its
  // schedule (--duration), not until it is stable.
  for (const char* name : {"--repeats", "--min-inferences", "--tolerance", "--rate-tolerance",
                           "--max-duration-factor", "--warmup-max"})
    c->depth_only.emplace_back(name, sub->get_option(name));
  return {sub, [c] { return run_sweep_command(*c); }};
}

}  // namespace rig::cli

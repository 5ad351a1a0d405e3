// rig ab [MODEL] [-d DEVICE] --a KNOB=VALUE [--a ...] --b KNOB=VALUE [--b ...] [--pairs N]
#include <cstdio>
#include <memory>
#include <set>
#include <string>

#include "cli/bind.hpp"
#include "cli/command.hpp"
#include "cli/measure.hpp"
#include "cli/monitor_options.hpp"
#include "cli/point_options.hpp"
#include "rig/device_spec.hpp"
#include "rig/report/ab_report.hpp"

namespace rig::cli {
namespace {

struct AbCommand {
  AbSettings s;   // the options' defaults are its own
  AbConfig base;  // --depth; the spec is o.device's
  std::vector<std::string> a, b;
  MeasureOptions o;
};

int run_ab_command(AbCommand& c) {
  AbSettings& s = c.s;
  const MeasureOptions& o = c.o;
  if (s.pairs < ab_min_pairs(s.alpha))
    return report_error({ErrorCode::invalid_argument,
                         "--pairs must be >= " + std::to_string(ab_min_pairs(s.alpha)) +
                             " for a verdict (the U test cannot reach alpha " +
                             format_fixed(s.alpha, 2) + " with fewer; 9 are recommended), got " +
                             std::to_string(s.pairs)});
  if (auto ok = load_input_files(o); !ok) return report_error(ok.error());
  if (auto ok = validate(s); !ok) return report_error(ok.error());
  AbConfig& base = c.base;
  auto spec = parse_device_spec(o.device);
  if (!spec) return report_error(spec.error());
  base.spec = *spec;
  for (const auto* side : {&c.a, &c.b}) {
    std::set<std::string> seen;
    for (const std::string& knob : *side) {
      const std::string name = knob.substr(0, knob.find('='));
      if (!seen.insert(name).second)
        return report_error({ErrorCode::invalid_argument,
                             std::string(side == &c.a ? "--a" : "--b") + " sets " + name +
                                 " twice ('" + knob + "'): give each knob once per side"});
    }
  }
  auto a = apply_knobs(base, c.a);
  if (!a) return report_error({a.error().code, "--a: " + a.error().message});
  auto b = apply_knobs(base, c.b);
  if (!b) return report_error({b.error().code, "--b: " + b.error().message});
  if (!o.json.empty())
    if (auto ok = check_writable("--json", o.json); !ok) return report_error(ok.error());

  auto model = resolve_model(o.model, o.shapes);
  if (!model) return report_error(model.error());
  if (!o.quiet)
    std::fprintf(stderr, "rig: A/B of %s on %s: %u pairs of %s runs...\n",
                 model_display_name(*model).c_str(), base.spec.given_text().c_str(), s.pairs,
                 format_duration(s.point.duration).c_str());
  MeasureSteps<AbSettings, AbResult> steps{
      .label = "rig ab",
      .plan =
          [](const AbSettings& x) {
            return ProgressPlan{{}, 2 * x.pairs, x.point.duration};
          },
      .text = format_ab_text,
      .json = ab_to_json,
  };
  auto open = [](const DeviceSpec& side) { return open_device(side); };
  return observe_run_finish(s, o, steps, [&](const AbSettings& settings) {
    return run_ab(open, *model, *a, *b, settings);
  });
}

}  // namespace

Command add_ab_command(CLI::App& app) {
  auto c = std::make_shared<AbCommand>();
  AbSettings& s = c->s;
  MeasureOptions& o = c->o;
  CLI::App* sub = app.add_subcommand(
      "ab",
      "Compare two configurations in interleaved pairs: same, A faster, B faster or ambiguous");
  add_model_on_device_options(sub, s, o, "base device spec");
  sub->add_option("--a", c->a,
                  "knob of side A, KNOB=VALUE (repeatable): depth=N, or a device spec parameter "
                  "such as threads=N (cpu), link=PROFILE or compute=2ms (sim)")
      ->required()
      ->allow_extra_args(false);
  sub->add_option("--b", c->b, "knob of side B, KNOB=VALUE (repeatable)")
      ->required()
      ->allow_extra_args(false);
  add_depth_option(sub, c->base.depth, "base depth of both sides (default: the queue depth)");
  // The lower bound is checked in run_ab_command, which says why.
  sub->add_option("--pairs", s.pairs, "A B pairs to run (at least 4; 9 recommended)")
      ->capture_default_str()
      ->check(in_range(0u, 10000u));
  sub->add_option("--alpha", s.alpha, "significance level of the Mann-Whitney U test")
      ->capture_default_str()
      ->check(in_range(0.001, 0.25));
  sub->add_option("--same-within", s.same_within,
                  "'same' when the B/A interval lies within this of 1 (0.03 = +/-3%)")
      ->capture_default_str()
      ->check(in_range(1e-4, 0.5));
  sub->add_option("--order-seed", s.order_seed,
                  "seed of the order within each pair (A B or B A), recorded in the result")
      ->capture_default_str();
  add_point_options(sub, s.point, false);
  add_measured_run_options(sub, o, s.monitor, s.confounds);
  return {sub, [c] { return run_ab_command(*c); }};
}

}  // namespace rig::cli

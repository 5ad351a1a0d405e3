// rig ab [MODEL] [-d DEVICE] --a KNOB=VALUE [--a ...] --b KNOB=VALUE [--b ...] [--pairs N]
#include <cstdio>
#include <memory>
#include <set>
#include <string>

#include "cli/command.hpp"
#include "cli/environment_info.hpp"
#include "cli/monitor_options.hpp"
#include "cli/observe.hpp"
#include "cli/point_options.hpp"
#include "rig/device_spec.hpp"
#include "rig/report/ab_report.hpp"

namespace rig::cli {
namespace {

struct AbOptions {
  MonitorOptions monitor;
  std::string model;
  std::string device = "cpu";
  std::vector<std::string> a, b;
  std::optional<uint32_t> depth;
  uint32_t pairs = kAbRecommendedPairs;
  double alpha = 0.05;
  double same_within = 0.03;
  uint64_t order_seed = 1;
  PointOptions point;
  std::string json;
  bool quiet = false;
  ObserveOptions observe;
};

int run_ab_command(const AbOptions& o) {
  if (o.pairs < ab_min_pairs(o.alpha))
    return report_error({ErrorCode::invalid_argument,
                         "--pairs must be >= " + std::to_string(ab_min_pairs(o.alpha)) +
                             " for a verdict (the U test cannot reach alpha " +
                             format_fixed(o.alpha, 2) + " with fewer; 9 are recommended), got " +
                             std::to_string(o.pairs)});
  AbSettings s;
  s.pairs = o.pairs;
  s.alpha = o.alpha;
  s.same_within = o.same_within;
  s.order_seed = o.order_seed;
  auto point = to_point_settings(o.point);
  if (!point) return report_error(point.error());
  s.point = *point;
  if (auto ok = apply_monitor_options(o.monitor, s.monitor, s.confounds); !ok)
    return report_error(ok.error());
  if (auto ok = validate(s); !ok) return report_error(ok.error());
  AbConfig base;
  auto spec = parse_device_spec(o.device);
  if (!spec) return report_error(spec.error());
  base.spec = *spec;
  auto depth_given = depth_option(o.depth);
  if (!depth_given) return report_error(depth_given.error());
  base.depth = *depth_given;
  for (const auto* side : {&o.a, &o.b}) {
    std::set<std::string> seen;
    for (const std::string& knob : *side) {
      const std::string name = knob.substr(0, knob.find('='));
      if (!seen.insert(name).second)
        return report_error({ErrorCode::invalid_argument,
                             std::string(side == &o.a ? "--a" : "--b") + " sets " + name +
                                 " twice ('" + knob + "'): give each knob once per side"});
    }
  }
  auto a = apply_knobs(base, o.a);
  if (!a) return report_error({a.error().code, "--a: " + a.error().message});
  auto b = apply_knobs(base, o.b);
  if (!b) return report_error({b.error().code, "--b: " + b.error().message});
  if (!o.json.empty())
    if (auto ok = check_writable("--json", o.json); !ok) return report_error(ok.error());

  auto model = resolve_model(o.model, o.point.shapes);
  if (!model) return report_error(model.error());
  if (!o.quiet)
    std::fprintf(stderr, "rig: A/B of %s on %s: %u pairs of %s runs...\n",
                 model_display_name(*model).c_str(), base.spec.given_text().c_str(), s.pairs,
                 format_duration(s.point.duration).c_str());
  auto open = [](const DeviceSpec& side) { return open_device(side); };
  auto observers =
      RunObservers::make(o.observe, {"rig ab", 2 * s.pairs, s.point.duration}, o.quiet, o.json);
  if (!observers) return report_error(observers.error());
  s.point.observer = (*observers)->get();
  auto result = run_ab(open, *model, *a, *b, s);
  (*observers)->stop_progress();
  if (!result) return (*observers)->finish(report_error(result.error()));
  add_library_versions(result->environment);
  return (*observers)
      ->finish(finish(format_ab_text(*result), ab_to_json(*result), o.json, o.quiet,
                      result->judgement, o.point.strict));
}

}  // namespace

Command add_ab_command(CLI::App& app) {
  auto o = std::make_shared<AbOptions>();
  CLI::App* sub = app.add_subcommand(
      "ab",
      "Compare two configurations in interleaved pairs: same, A faster, B faster or ambiguous");
  sub->add_option("model", o->model, "ONNX model (default: the built-in demo CNN)");
  add_shape_option(sub, o->point.shapes);
  add_input_option(sub, o->point.inputs);
  add_device_option(sub, o->device, "base device spec");
  sub->add_option("--a", o->a,
                  "knob of side A, KNOB=VALUE (repeatable): depth=N, or a device spec parameter "
                  "such as threads=N (cpu), link=PROFILE or compute=2ms (sim)")
      ->required()
      ->allow_extra_args(false);
  sub->add_option("--b", o->b, "knob of side B, KNOB=VALUE (repeatable)")
      ->required()
      ->allow_extra_args(false);
  sub->add_option("--depth", o->depth, "base depth of both sides (default: the queue depth)");
  // The lower bound is checked in run_ab_command, which says why.
  sub->add_option("--pairs", o->pairs, "A B pairs to run (at least 4; 9 recommended)")
      ->capture_default_str()
      ->check(in_range(0u, 10000u));
  sub->add_option("--alpha", o->alpha, "significance level of the Mann-Whitney U test")
      ->capture_default_str()
      ->check(in_range(0.001, 0.25));
  sub->add_option("--same-within", o->same_within,
                  "'same' when the B/A interval lies within this of 1 (0.03 = +/-3%)")
      ->capture_default_str()
      ->check(in_range(1e-4, 0.5));
  sub->add_option("--order-seed", o->order_seed,
                  "seed of the order within each pair (A B or B A), recorded in the result")
      ->capture_default_str();
  add_point_options(sub, o->point, false);
  sub->add_option("--json", o->json, "also write the result as JSON to this file");
  sub->add_flag("-q,--quiet", o->quiet, "no progress messages on stderr");
  add_monitor_options(sub, o->monitor);
  add_observe_options(sub, o->observe);
  return {sub, [o] { return run_ab_command(*o); }};
}

}  // namespace rig::cli

// rig compare MODEL_A MODEL_B ... -d DEVICE [--input FILE[,FILE...]] [--json FILE]
#include <cstdio>
#include <memory>

#include "cli/command.hpp"
#include "cli/measure.hpp"
#include "cli/point_options.hpp"
#include "rig/model.hpp"
#include "rig/report/run_report.hpp"
#include "rig/scenario/compare.hpp"

namespace rig::cli {
namespace {

struct CompareCommand {
  CompareSettings s;                // the options' defaults are its own
  std::vector<std::string> models;  // as given; s.models: where each came from
  MeasureOptions o;                 // o.shapes: for every variant
};

int run_compare_command(CompareCommand& c) {
  CompareSettings& s = c.s;
  const MeasureOptions& o = c.o;
  const DeviceOption device_option = parse_device_option(s.device);
  s.device = device_option.display;
  if (!o.json.empty())
    if (auto ok = check_writable("--json", o.json); !ok) return report_error(ok.error());
  std::vector<ModelSource> models;
  for (const auto& path : c.models) {
    auto model = resolve_model(path, o.shapes);
    if (!model) return report_error(model.error());
    s.models.push_back(model_origin(*model));
    models.push_back(std::move(*model));
  }
  auto device = open_spec(device_option);
  if (!device) return report_error(device.error());
  MeasureSteps<CompareSettings, CompareResult> steps{
      .text = format_compare_text,
      .json = compare_to_json,
      .library_versions = false,
  };
  return observe_run_finish(s, o, steps, [&](const CompareSettings& settings) {
    return run_compare(**device, models, settings);
  });
}

}  // namespace

Command add_compare_command(CLI::App& app) {
  auto c = std::make_shared<CompareCommand>();
  CompareSettings& s = c->s;
  MeasureOptions& o = c->o;
  CLI::App* sub = app.add_subcommand(
      "compare",
      "Model variants side by side: artifact and weights sha256, per-tensor facts, output "
      "statistics, output bytes differing from the first, determinism of a rerun");
  sub->add_option("models", c->models, "two or more ONNX models (or server:NAME)")
      ->required()
      ->expected(2, 1000);
  add_shape_option(sub, o.shapes);
  add_device_option(sub, s.device);
  sub->add_option("--input", s.inputs,
                  "input files for every variant, as rig run's --input (default: generated)")
      ->delimiter(',');
  add_seed_option(sub, s.seed, "seed of generated inputs");
  add_json_option(sub, o.json);
  add_quiet_option(sub, o.quiet, "no messages on stderr");
  return {sub, [c] { return run_compare_command(*c); }};
}

}  // namespace rig::cli

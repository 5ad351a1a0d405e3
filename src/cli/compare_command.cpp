// rig compare MODEL_A MODEL_B ... -d DEVICE [--input FILE[,FILE...]] [--json FILE]
#include <cstdio>
#include <memory>

#include "cli/command.hpp"
#include "cli/options.hpp"
#include "rig/model.hpp"
#include "rig/report/run_report.hpp"
#include "rig/scenario/compare.hpp"

namespace rig::cli {
namespace {

struct CompareOptions {
  std::vector<std::string> models;
  std::vector<std::string> shapes;  // for every variant
  std::string device = "cpu";
  std::vector<std::string> inputs;
  uint64_t seed = 1;
  std::string json;
  bool quiet = false;
};

int run_compare_command(const CompareOptions& o) {
  CompareSettings s;
  const DeviceOption device_option = parse_device_option(o.device);
  s.device = device_option.display;
  s.inputs = o.inputs;
  s.seed = o.seed;
  if (!o.json.empty())
    if (auto ok = check_writable("--json", o.json); !ok) return report_error(ok.error());
  std::vector<ModelSource> models;
  for (const auto& path : o.models) {
    auto model = resolve_model(path, o.shapes);
    if (!model) return report_error(model.error());
    s.models.push_back(model_origin(*model));
    models.push_back(std::move(*model));
  }
  auto device = open_spec(device_option);
  if (!device) return report_error(device.error());
  auto result = run_compare(**device, models, s);
  if (!result) return report_error(result.error());
  return finish(format_compare_text(*result), compare_to_json(*result), o.json, o.quiet, Verdict{},
                false);
}

}  // namespace

Command add_compare_command(CLI::App& app) {
  auto o = std::make_shared<CompareOptions>();
  CLI::App* sub = app.add_subcommand(
      "compare",
      "Model variants side by side: artifact and weights sha256, per-tensor facts, output "
      "statistics, output bytes differing from the first, determinism of a rerun");
  sub->add_option("models", o->models, "two or more ONNX models (or server:NAME)")
      ->required()
      ->expected(2, 1000);
  add_shape_option(sub, o->shapes);
  add_device_option(sub, o->device);
  sub->add_option("--input", o->inputs,
                  "input files for every variant, as rig run's --input (default: generated)")
      ->delimiter(',');
  sub->add_option("--seed", o->seed, "seed of generated inputs")->capture_default_str();
  sub->add_option("--json", o->json, "also write the result as JSON to this file");
  sub->add_flag("-q,--quiet", o->quiet, "no messages on stderr");
  return {sub, [o] { return run_compare_command(*o); }};
}

}  // namespace rig::cli

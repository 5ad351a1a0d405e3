// rig check MODEL -d DEVICE [--allow-nondeterministic] [--json FILE]
#include <cstdio>
#include <memory>

#include "cli/command.hpp"
#include "cli/options.hpp"
#include "rig/model.hpp"
#include "rig/report/run_report.hpp"
#include "rig/scenario/check.hpp"

namespace rig::cli {
namespace {

struct CheckOptions {
  std::string model;
  std::vector<std::string> shapes;
  std::string device = "cpu";
  bool allow_nondeterministic = false;
  uint64_t seed = 1;
  size_t guard_bytes = 64;
  std::string json;
  bool quiet = false;
};

int run_check_command(const CheckOptions& o) {
  CheckSettings s;
  const DeviceOption device_option = parse_device_option(o.device);
  s.device = device_option.display;
  s.allow_nondeterministic = o.allow_nondeterministic;
  s.seed = o.seed;
  s.guard_bytes = o.guard_bytes;
  if (auto ok = validate(s); !ok) return report_error(ok.error());
  auto opened = open_model_on_device(o.json, o.model, o.shapes, device_option);
  if (!opened) return report_error(opened.error());
  auto& model = opened->model;
  auto& device = opened->device;
  s.model = model_origin(model);
  auto result = run_check(*device, model, s);
  if (!result) return report_error(result.error());
  const int status =
      finish(format_check_text(*result), check_to_json(*result), o.json, o.quiet, Verdict{}, false);
  if (status != 0) return status;
  return result->passed ? 0 : 1;
}

}  // namespace

Command add_check_command(CLI::App& app) {
  auto o = std::make_shared<CheckOptions>();
  CLI::App* sub = app.add_subcommand(
      "check",
      "The scoring-loop contract: different inputs differ, the same input is bit-identical, "
      "wrong-size buffers are refused, nothing is written outside a buffer (exit 1 on a failure)");
  sub->add_option("model", o->model, "ONNX model (default: the built-in demo CNN)");
  add_shape_option(sub, o->shapes);
  add_device_option(sub, o->device);
  sub->add_flag("--allow-nondeterministic", o->allow_nondeterministic,
                "report the largest difference of a rerun instead of failing");
  sub->add_option("--seed", o->seed, "seed of the generated inputs")->capture_default_str();
  sub->add_option("--guard-bytes", o->guard_bytes, "guard bytes on each side of every buffer")
      ->capture_default_str()
      ->check(in_range(size_t{1}, size_t{1} << 20));
  sub->add_option("--json", o->json, "also write the result as JSON to this file");
  sub->add_flag("-q,--quiet", o->quiet, "no messages on stderr");
  return {sub, [o] { return run_check_command(*o); }};
}

}  // namespace rig::cli

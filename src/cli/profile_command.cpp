// rig profile [MODEL] -d DEVICE [--runs N] [--top N] [--json FILE]
// Where one inference's time goes, layer by layer, as the device's runtime
// measures it (the cpu device: ONNX Runtime's profiler or OpenCV's per-layer
// timings). A device that offers none is refused by name, exit 2, with
// nothing written.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/command.hpp"
#include "cli/environment_info.hpp"
#include "cli/options.hpp"
#include "rig/report/profile_report.hpp"
#include "rig/scenario/profile.hpp"

namespace rig::cli {
namespace {

struct ProfileOptions {
  std::string model;
  std::vector<std::string> shapes;
  std::string device = "cpu";
  uint32_t runs = 20;
  uint32_t top = 10;
  uint64_t seed = 1;
  std::string json_path;
  bool quiet = false;
};

int run_profile_command(const ProfileOptions& o) {
  ProfileSettings s;
  const DeviceOption device_option = parse_device_option(o.device);
  s.device = device_option.display;
  s.runs = o.runs;
  s.top = o.top;
  s.seed = o.seed;
  if (auto ok = validate(s); !ok) return report_error(ok.error());
  auto opened = open_model_on_device(o.json_path, o.model, o.shapes, device_option);
  if (!opened) return report_error(opened.error());
  s.model = model_origin(opened->model);
  if (!o.quiet)
    std::fprintf(stderr, "rig: profiling %s on %s (%u runs)...\n",
                 model_display_name(opened->model).c_str(), device_option.display.c_str(), o.runs);
  auto result = run_profile(*opened->device, opened->model, s);
  if (!result) return report_error(result.error());
  add_library_versions(result->environment);
  return finish(format_profile_text(*result), profile_to_json(*result), o.json_path, o.quiet,
                result->verdict, false);
}

}  // namespace

Command add_profile_command(CLI::App& app) {
  auto o = std::make_shared<ProfileOptions>();
  CLI::App* sub = app.add_subcommand(
      "profile", "Per-layer profile: the layers that take the time, from the runtime's profiler");
  sub->add_option("model", o->model, "ONNX model (default: the built-in demo CNN)");
  add_shape_option(sub, o->shapes);
  add_device_option(sub, o->device, "device spec (cpu offers a per-layer profile)");
  sub->add_option("--runs", o->runs, "inferences profiled after the cold start")
      ->check(in_range<uint32_t>(1, 100000))
      ->capture_default_str();
  sub->add_option("--top", o->top, "layers listed in the text (the JSON keeps all)")
      ->check(in_range<uint32_t>(1, 100000))
      ->capture_default_str();
  sub->add_option("--seed", o->seed, "seed of the input data")->capture_default_str();
  sub->add_option("--json", o->json_path, "also write the result as JSON to this file");
  sub->add_flag("-q,--quiet", o->quiet, "no progress messages on stderr");
  return {sub, [o] { return run_profile_command(*o); }};
}

}  // namespace rig::cli

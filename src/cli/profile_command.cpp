// rig profile [MODEL] -d DEVICE [--runs N] [--top N] [--json FILE]
// Where one inference's time goes, layer by layer, as the device's runtime
// measures it (the cpu device: ONNX Runtime's profiler or OpenCV's per-layer
// timings). A device that offers none is refused by name, exit 2, with
// nothing written.
#include <cstdio>
#include <memory>
#include <string>

#include "cli/command.hpp"
#include "cli/measure.hpp"
#include "cli/point_options.hpp"
#include "rig/report/profile_report.hpp"
#include "rig/scenario/profile.hpp"

namespace rig::cli {
namespace {

struct ProfileCommand {
  ProfileSettings s;  // the options' defaults are its own
  MeasureOptions o;
};

int run_profile_command(ProfileCommand& c) {
  MeasureSteps<ProfileSettings, ProfileResult> steps{
      .announce =
          [](const ProfileSettings& s, const ModelSource& model, const std::string& device) {
            std::fprintf(stderr, "rig: profiling %s on %s (%u runs)...\n",
                         model_display_name(model).c_str(), device.c_str(), s.runs);
          },
      .run = run_profile,
      .text = format_profile_text,
      .json = profile_to_json,
  };
  return run_command(c.s, c.o, steps);
}

}  // namespace

Command add_profile_command(CLI::App& app) {
  auto c = std::make_shared<ProfileCommand>();
  ProfileSettings& s = c->s;
  MeasureOptions& o = c->o;
  CLI::App* sub = app.add_subcommand(
      "profile", "Per-layer profile: the layers that take the time, from the runtime's profiler");
  add_model_on_device_options(sub, s, o, "device spec (cpu offers a per-layer profile)");
  sub->add_option("--runs", s.runs, "inferences profiled after the cold start")
      ->check(in_range<uint32_t>(1, 100000))
      ->capture_default_str();
  sub->add_option("--top", s.top, "layers listed in the text (the JSON keeps all)")
      ->check(in_range<uint32_t>(1, 100000))
      ->capture_default_str();
  add_seed_option(sub, s.seed);
  add_json_option(sub, o.json);
  add_quiet_option(sub, o.quiet);
  return {sub, [c] { return run_profile_command(*c); }};
}

}  // namespace rig::cli

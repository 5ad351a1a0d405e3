// rig check MODEL -d DEVICE [--allow-nondeterministic] [--json FILE]
#include <cstdio>
#include <memory>

#include "cli/command.hpp"
#include "cli/measure.hpp"
#include "cli/point_options.hpp"
#include "rig/model.hpp"
#include "rig/report/run_report.hpp"
#include "rig/scenario/check.hpp"

namespace rig::cli {
namespace {

struct CheckCommand {
  CheckSettings s;  // the options' defaults are its own
  MeasureOptions o;
};

int run_check_command(CheckCommand& c) {
  MeasureSteps<CheckSettings, CheckResult> steps{
      .run = run_check,
      .text = format_check_text,
      .json = check_to_json,
      .passed = [](const CheckResult& r) { return r.passed; },
      .library_versions = false,
  };
  return run_command(c.s, c.o, steps);
}

}  // namespace

Command add_check_command(CLI::App& app) {
  auto c = std::make_shared<CheckCommand>();
  CheckSettings& s = c->s;
  MeasureOptions& o = c->o;
  CLI::App* sub = app.add_subcommand(
      "check",
      "The scoring-loop contract: different inputs differ, the same input is bit-identical, "
      "wrong-size buffers are refused, nothing is written outside a buffer (exit 1 on a failure)");
  add_model_on_device_options(sub, s, o);
  sub->add_flag("--allow-nondeterministic", s.allow_nondeterministic,
                "report the largest difference of a rerun instead of failing");
  add_seed_option(sub, s.seed, "seed of the generated inputs");
  sub->add_option("--guard-bytes", s.guard_bytes, "guard bytes on each side of every buffer")
      ->capture_default_str()
      ->check(in_range(size_t{1}, size_t{1} << 20));
  add_json_option(sub, o.json);
  add_quiet_option(sub, o.quiet, "no messages on stderr");
  return {sub, [c] { return run_check_command(*c); }};
}

}  // namespace rig::cli

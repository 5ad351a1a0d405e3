// The rig executable: parses the command line and dispatches to a subcommand.
#include <cstdio>
#include <exception>
#include <vector>

#include "cli/command.hpp"
#include "rig/version.hpp"

namespace rig::cli {

int report_error(const Error& error) {
  std::fprintf(stderr, "rig: error: %s\n", error.to_string().c_str());
  return exit_code_for(error.code);
}

}  // namespace rig::cli

int main(int argc, char** argv) {
  using namespace rig::cli;
  CLI::App app{"rig: a measurement rig for inference accelerators"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string(rig::kVersionString));
  add_history_options(app);
  std::vector<Command> commands = {
      add_bench_command(app),   add_model_command(app),   add_serve_command(app),
      add_loop_command(app),    add_ladder_command(app),  add_sweep_command(app),
      add_ab_command(app),      add_predict_command(app), add_run_command(app),
      add_check_command(app),   add_compare_command(app), add_report_command(app),
      add_export_command(app),  add_soak_command(app),    add_fit_command(app),
      add_history_command(app), add_diff_command(app),    add_place_command(app),
      add_profile_command(app), add_devices_command(app),
  };
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    return report_parse_error(app, e, argc, argv);
  }
  if (auto bad = argument_error(app)) return report_error(*bad);
  try {
    for (const auto& c : commands)
      if (c.app && c.app->parsed() && c.run) return c.run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rig: internal error: %s\n", e.what());
    return 4;
  }
  return 2;
}

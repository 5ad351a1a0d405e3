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
#define RIG_ADD_COMMAND(name) add_##name##_command(app),
  const std::vector<Command> commands = {RIG_COMMANDS(RIG_ADD_COMMAND)};
#undef RIG_ADD_COMMAND
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    return report_parse_error(app, e, argc, argv);
  } catch (const std::exception& e) {  // an option's callback (bind.hpp) that threw
    std::fprintf(stderr, "rig: internal error: %s\n", e.what());
    return 4;
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

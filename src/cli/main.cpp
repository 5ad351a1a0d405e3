// The rig executable: parses the command line and dispatches to a subcommand.
#include <csignal>
#include <cstdio>
#include <exception>
#include <new>
#include <system_error>
#include <vector>

#include "cli/command.hpp"
#include "rig/report/document.hpp"
#include "rig/version.hpp"

namespace rig::cli {

int report_error(const Error& error) {
  std::fprintf(stderr, "rig: error: %s\n", terminal_safe(error.to_string()).c_str());
  return exit_code_for(error.code);
}

namespace {

// An exception that reached main: running out of memory or threads (ulimit
// -v, ulimit -u) is named as such, not as rig's own fault, with exit 3 (a
// fault of the machine the run had, like a device's); anything else is a bug
// (exit 4).
int report_exception(const std::exception& e) {
  if (dynamic_cast<const std::bad_alloc*>(&e)) {
    std::fprintf(stderr,
                 "rig: error: out of memory (an allocation failed; a memory limit such as "
                 "ulimit -v may be too low for this run)\n");
    return 3;
  }
  if (const auto* sys = dynamic_cast<const std::system_error*>(&e);
      sys && (sys->code() == std::errc::resource_unavailable_try_again ||
              sys->code() == std::errc::not_enough_memory)) {
    std::fprintf(stderr,
                 "rig: error: out of memory or threads: a thread could not be started (%s; a "
                 "limit such as ulimit -v or ulimit -u may be too low for this run)\n",
                 sys->what());
    return 3;
  }
  std::fprintf(stderr, "rig: internal error: %s\n", terminal_safe(e.what()).c_str());
  return 4;
}

}  // namespace

}  // namespace rig::cli

int main(int argc, char** argv) {
  using namespace rig::cli;
  // A reader of stdout that goes away (`rig bench ... | head`) makes writes
  // fail with EPIPE instead of killing the process before the result and the
  // history are written (finish() writes those first).
  std::signal(SIGPIPE, SIG_IGN);
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
    return report_exception(e);
  }
  if (auto bad = argument_error(app)) return report_error(*bad);
  try {
    for (const auto& c : commands)
      if (c.app && c.app->parsed() && c.run) return c.run();
  } catch (const std::exception& e) {
    return report_exception(e);
  }
  return 2;
}

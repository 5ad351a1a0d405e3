// Placeholder: the wire-protocol work (issue 3) implements this subcommand.
#include "cli/command.hpp"

namespace rig::cli {

Command add_loop_command(CLI::App& /*app*/) {
  return {};
}

}  // namespace rig::cli

// Placeholder: the characterization work (issue 4) implements this subcommand.
#include "cli/command.hpp"

namespace rig::cli {

Command add_ladder_command(CLI::App& /*app*/) {
  return {};
}

}  // namespace rig::cli

// Placeholder: the characterization work (issue 4) implements this subcommand.
#include "cli/command.hpp"

namespace rig::cli {

Command add_ab_command(CLI::App& /*app*/) {
  return {};
}

}  // namespace rig::cli

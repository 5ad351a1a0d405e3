// Library versions for the environment record; lives in the CLI because it is
// the one place that links every component.
#pragma once

#include "rig/environment.hpp"

namespace rig::cli {

void add_library_versions(Environment& env);

}  // namespace rig::cli

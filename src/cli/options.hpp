// Helpers shared by subcommands: turning option text into checked values.
#pragma once

#include <optional>
#include <string>

#include "rig/clock.hpp"
#include "rig/error.hpp"
#include "rig/model.hpp"

namespace rig::cli {

// A duration option that must be > 0; the error names the option.
Result<Nanos> positive_duration(const std::string& option, const std::string& text);

// Fails with io when `path` cannot be created (missing or unwritable
// directory), before any measurement starts.
Result<void> check_writable(const std::string& option, const std::string& path);

// The model to use: `path` if given (must exist), else the built-in demo.
Result<ModelSource> resolve_model(const std::string& path);

}  // namespace rig::cli

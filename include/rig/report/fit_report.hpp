// rig fit's reporters: text with every figure's unit, and the JSON document
// (schema_version, tool "rig fit", kind "fit", settings, model, working,
// results.rows). docs/results-schema.md lists the keys.
#pragma once

#include <string>

#include "rig/scenario/fit.hpp"

namespace rig {

std::string format_fit_text(const FitResult& result);
std::string fit_to_json(const FitResult& result);

}  // namespace rig

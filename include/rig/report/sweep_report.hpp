// rig sweep's reporters: text with every figure's unit, and the JSON document
// (schema_version, tool, settings, environment with the device, results,
// notes, verdict; never NaN). docs/results-schema.md lists the keys.
#pragma once

#include <string>

#include "rig/scenario/sweep.hpp"

namespace rig {

std::string format_sweep_text(const SweepResult& result);
std::string sweep_to_json(const SweepResult& result);  // the document, serialized

}  // namespace rig

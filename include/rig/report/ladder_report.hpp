// rig ladder's reporters: text with every figure's unit, and the JSON document
// (schema_version, tool, settings, environment with the device, results,
// notes, verdict; never NaN). docs/results-schema.md lists the keys.
#pragma once

#include <string>

#include "rig/scenario/ladder.hpp"

namespace rig {

std::string format_ladder_text(const LadderResult& result);
std::string ladder_to_json(const LadderResult& result);  // the document, serialized

}  // namespace rig

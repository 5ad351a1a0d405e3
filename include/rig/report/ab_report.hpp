// rig ab's reporters: text with every figure's unit, and the JSON document
// (schema_version, tool, settings, environment with the device, results,
// notes, verdict; never NaN). docs/results-schema.md lists the keys.
#pragma once

#include <string>

#include "rig/scenario/ab.hpp"

namespace rig {

std::string format_ab_text(const AbResult& result);
std::string ab_to_json(const AbResult& result);  // the document, serialized

}  // namespace rig

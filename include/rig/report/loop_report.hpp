// rig loop's reporters: text with every figure's unit, and the JSON document
// in the common layout (schema_version, tool, settings requested/effective,
// environment with the device, model, ttfo, loop, steady, transfer_cost,
// verdict). docs/results-schema.md lists the keys.
#pragma once

#include <string>

#include "rig/scenario/loop.hpp"

namespace rig {

std::string format_loop_text(const LoopResult& result);
std::string loop_to_json(const LoopResult& result);  // the document, serialized

}  // namespace rig

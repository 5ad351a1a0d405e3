// rig soak's reporters: text (the confounds first, the two rates and their
// drift, rate and temperature per window, the monitor) and the JSON document
// in the common layout (schema_version, tool, settings requested/effective,
// environment with the device, model, ttfo, soak, monitor, verdict).
// docs/results-schema.md lists the keys.
#pragma once

#include <string>

#include "rig/scenario/soak.hpp"

namespace rig {

std::string format_soak_text(const SoakResult& result);
std::string soak_to_json(const SoakResult& result);  // the document, serialized

}  // namespace rig

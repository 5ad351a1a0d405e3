// rig profile's reporters: the top layers by time with their share, in text,
// and the JSON document in the common layout (schema_version, tool,
// settings requested/effective, environment with the device, model, ttfo,
// profile with every layer, verdict). docs/results-schema.md lists the keys.
#pragma once

#include <string>

#include "rig/scenario/profile.hpp"

namespace rig {

std::string format_profile_text(const ProfileResult& result);
std::string profile_to_json(const ProfileResult& result);  // the document, serialized

}  // namespace rig

// hailo_status -> rig's error kinds. Every status maps to an ErrorCode, and
// the message names the status and its number ("HAILO_RPC_FAILED(77)") beside
// what rig was doing. Compiled against HailoRT (or the test double).
#pragma once

#include <string>
#include <string_view>

#include <hailo/hailort.h>

#include "rig/error.hpp"

namespace rig::hailo {

// "HAILO_RPC_FAILED(77)"; "hailo_status(N)" for a number HailoRT does not name.
std::string status_name(hailo_status status);

// The rig error kind of a status.
ErrorCode error_code_for(hailo_status status);

// An Error: "<what>: <status_name>[: <hint>]", e.g. "VDevice::create:
// HAILO_OUT_OF_PHYSICAL_DEVICES(74): no Hailo device found".
Error status_error(hailo_status status, std::string_view what);

}  // namespace rig::hailo

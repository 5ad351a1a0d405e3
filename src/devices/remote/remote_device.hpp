// The remote device: a client of `rig serve` (tcp://host:port or unix:PATH).
#pragma once

#include <memory>
#include <string_view>

#include "rig/device.hpp"

namespace rig {

Result<std::unique_ptr<Device>> open_remote_device(std::string_view spec);

}  // namespace rig

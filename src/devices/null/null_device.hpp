// The null device: completes every request at once and copies nothing, so a
// measurement of it is the rig's own ceiling (the engine's bookkeeping, the
// clock reads, and for a remote null device the wire). MLPerf LoadGen
// publishes its null-SUT rate the same way.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "rig/device.hpp"

namespace rig {

// null[:depth=N]
//   depth=N  requests it takes in flight (default 1024)
// `params`: a DeviceSpec's params (rig/device_spec.hpp).
Result<std::unique_ptr<Device>> open_null_device(const std::map<std::string, std::string>& params);

}  // namespace rig

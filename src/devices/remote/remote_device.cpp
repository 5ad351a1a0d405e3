#include "devices/remote/remote_device.hpp"

namespace rig {

// Placeholder until the wire protocol lands (issue 3).
Result<std::unique_ptr<Device>> open_remote_device(std::string_view spec) {
  return fail(ErrorCode::unsupported,
              "remote devices are not available in this build: " + std::string(spec));
}

}  // namespace rig

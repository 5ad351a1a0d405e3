// open_device: the one place that maps a spec string to a device.
#include <string>

#include "devices/cpu/cpu_device.hpp"
#include "devices/remote/remote_device.hpp"
#include "devices/sim/sim_device.hpp"
#include "rig/device.hpp"
#include "rig/link_profile.hpp"
#include "rig/units.hpp"

namespace rig {

Result<std::unique_ptr<Device>> open_device(std::string_view spec_text) {
  if (spec_text.rfind("tcp://", 0) == 0 || spec_text.rfind("unix:", 0) == 0)
    return open_remote_device(spec_text);
  // sim:link=usb3-gen2,... -> the profile's bw_in, bw_out, lat, depth, duplex
  auto expanded = expand_link_profiles(spec_text);
  if (!expanded) return tl::unexpected(expanded.error());
  auto spec = parse_spec(*expanded);
  if (!spec) return tl::unexpected(spec.error());
  if (spec->kind == "cpu") return open_cpu_device(*spec);
  if (spec->kind == "sim") return open_sim_device(*spec);
  return fail(
      ErrorCode::invalid_argument,
      "unknown device '" + spec->kind + "' (known: cpu, sim:..., tcp://HOST:PORT, unix:PATH)");
}

}  // namespace rig

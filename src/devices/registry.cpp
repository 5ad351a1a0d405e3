// The device registry: the one place that parses spec text into a DeviceSpec
// and maps a DeviceSpec to a device.
#include <string>

#include "devices/cpu/cpu_device.hpp"
#ifdef RIG_WITH_HAILO_DEVICE
#include "devices/hailo/hailo_device.hpp"
#endif
#include "devices/null/null_device.hpp"
#include "devices/remote/remote_device.hpp"
#include "devices/sim/sim_device.hpp"
#include "rig/device.hpp"
#include "rig/device_spec.hpp"
#include "rig/units.hpp"

namespace rig {
namespace {

tl::unexpected<Error> unknown_kind(const std::string& kind) {
  return fail(ErrorCode::invalid_argument,
              "unknown device '" + kind +
                  "' (known: cpu, sim:..., null, hailo[:...], tcp://HOST:PORT, unix:PATH)");
}

}  // namespace

Result<DeviceSpec> parse_device_spec(std::string_view text) {
  DeviceSpec spec;
  if (text.rfind("tcp://", 0) == 0 || text.rfind("unix:", 0) == 0) {
    spec.kind = "remote";
    spec.endpoint = std::string(text);  // the remote device parses its own options
    return spec;
  }
  auto parsed = parse_spec(text);
  if (!parsed) return tl::unexpected(parsed.error());
  if (parsed->kind != "cpu" && parsed->kind != "sim" && parsed->kind != "null" &&
      parsed->kind != "hailo")
    return unknown_kind(parsed->kind);
  // sim:link=usb3-gen2,... -> the profile's bw_in, bw_out, lat, depth, duplex
  return DeviceSpec::from_params(parsed->kind, std::move(parsed->params));
}

Result<std::unique_ptr<Device>> open_device(const DeviceSpec& spec) {
  if (spec.remote()) return open_remote_device(spec.endpoint);
  if (spec.kind == "cpu") return open_cpu_device(spec.params);
  if (spec.kind == "sim") return open_sim_device(spec.params);
  if (spec.kind == "hailo") {
#ifdef RIG_WITH_HAILO_DEVICE
    return open_hailo_device(spec.params, steady_clock());
#else
    return fail(ErrorCode::unsupported,
                "this rig was built without HailoRT: install HailoRT >= 5.1.1 and rebuild with "
                "-DRIG_WITH_HAILO=ON (docs/devices/hailo.md)");
#endif
  }
  if (spec.kind == "null") return open_null_device(spec.params);
  return unknown_kind(spec.kind);
}

Result<std::unique_ptr<Device>> open_device(std::string_view text) {
  auto spec = parse_device_spec(text);
  if (!spec) return tl::unexpected(spec.error());
  return open_device(*spec);
}

}  // namespace rig

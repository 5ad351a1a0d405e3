// The hailo device: a Hailo accelerator through HailoRT's InferModel API
// (5.x: VDevice, InferModel, ConfiguredInferModel, Bindings, AsyncInferJob).
// Built only when HailoRT >= 5.1.1 is found (RIG_WITH_HAILO); its logic is
// tested against a test double of that API (tests/devices/hailo_double/).
// See docs/devices/hailo.md.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "rig/clock.hpp"
#include "rig/device.hpp"

namespace rig {

// hailo[:device_id=ID,network_group=NAME,power_mode=performance|ultra,
//       scheduler=none|round_robin,batch=N,depth=N,dma_map=0|1,fallback=host_loop|none]
//   device_id  a physical device (PCIe BDF, as `hailortcli scan` lists); default: any one
//   network_group  the HEF's network group to load (checked against the HEF);
//              default: its first, as HailoRT's "" (never the file's name)
//   power_mode HailoRT's power mode for the model (default performance)
//   scheduler  the VDevice's scheduling algorithm (default round_robin, HailoRT's);
//              none: rig activates the configured model itself
//   batch      the model's batch size (default: HailoRT's choice)
//   depth      requests rig keeps in flight (default: the model's async queue size)
//   dma_map    1: map rig's buffers with VDevice::dma_map (page-aligned ones)
//   fallback   what run_for_duration does when HailoRT's on-device loop hits the
//              hRPC reply bug (seeds/000): host_loop (default) measures a pipelined
//              loop that includes the transfers, none fails
// `clock`: steady_clock() on hardware; the test double's virtual clock in tests.
Result<std::unique_ptr<Device>> open_hailo_device(const std::map<std::string, std::string>& params,
                                                  Clock& clock);

}  // namespace rig

// The sim device: a discrete-event model of an accelerator behind a link, on a
// virtual clock. See open_sim_device for the parameters.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "rig/device.hpp"

namespace rig {

// sim:compute=2.27ms,bw=290MB/s,lat=0.45ms,depth=32,...
// Parameters (all optional):
//   compute=DUR        device compute time per frame (default 1ms)
//   bw=BW              link bandwidth, each direction (default 1GB/s)
//   bw_in=BW, bw_out=BW  per-direction override
//   lat=DUR            fixed latency per transfer; overlaps with other transfers (default 0)
//   depth=N            device queue depth (default 8)
//   load=DUR           model load time (default 100ms)
//   first=DUR          extra cost of the first inference after a load (default 0)
//   duplex=half|full   half: one channel carries both directions (default)
//   drift=F            compute time grows by a factor (1 + F * t_seconds)
//   slow_at=DUR, slow_factor=F  compute time x F from virtual time slow_at on
//   jitter=F           compute time x (1 + uniform(-F, F)), seeded by seed=N
//                      (rig/random.hpp's stream sim_jitter of N: no two
//                      seeds share a sequence)
//   realtime=0|1       pace the virtual clock against the wall clock (demos)
//   temp=C:C:..., power=W:W:..., clock_mhz=M:M:...  scripted sensors (read_sensors:
//                      temperature_c, power_w, clock_mhz): value k from virtual
//                      time k x sensor_step (default 1s), the last one holding
//   idle_power=W       power_w while no request is in flight (the scripted power otherwise)
//   warn=TEXT          a warning raised through take_warnings() at every load
// `params`: a DeviceSpec's params (rig/device_spec.hpp), link profiles expanded.
Result<std::unique_ptr<Device>> open_sim_device(const std::map<std::string, std::string>& params);

}  // namespace rig

// rig predict: a measured device behind another link. The model is the sim
// device's (docs/methodology.md, "The sim device"), so a prediction can be
// checked against a sim run configured with the same link and compute:
//   lone frame   in/bw_in + lat + compute + out/bw_out + lat
//   steady       min(depth / lone frame, 1 / slowest stage), where the stages
//                are the shared channel (in + out, half duplex) or each
//                direction (full duplex), and compute: its latency, or the
//                source's measured time per frame where that is shorter
//                (the device overlaps frames; the sim never does).
#include <algorithm>

#include "rig/analysis.hpp"

namespace rig {

std::string_view to_string(Bottleneck b) {
  switch (b) {
    case Bottleneck::bus:
      return "bus";
    case Bottleneck::compute:
      return "compute";
    case Bottleneck::latency:
      return "latency";
  }
  return "bus";
}

Prediction predict(const PredictSource& src, const LinkProfile& link, uint32_t depth) {
  Prediction p;
  p.link = link;
  p.depth = depth == 0 ? std::max<uint32_t>(1, link.queue_depth) : depth;
  p.transfer_in_ms = src.bytes_in / link.bw_in * 1e3;
  p.transfer_out_ms = src.bytes_out / link.bw_out * 1e3;
  const double lat_ms = static_cast<double>(link.latency.count()) / 1e6;
  p.lone_ms = p.transfer_in_ms + lat_ms + src.compute_ms + p.transfer_out_ms + lat_ms;
  p.bus_ms_per_frame = link.full_duplex ? std::max(p.transfer_in_ms, p.transfer_out_ms)
                                        : p.transfer_in_ms + p.transfer_out_ms;
  p.compute_ms_per_frame = src.compute_ms;
  if (src.measured_rate && *src.measured_rate > 0 && 1e3 / *src.measured_rate < src.compute_ms) {
    p.compute_ms_per_frame = 1e3 / *src.measured_rate;
    p.compute_overlaps = true;
  }
  const double stage_ms = std::max(p.bus_ms_per_frame, p.compute_ms_per_frame);
  const double stage_rate = stage_ms > 0 ? 1e3 / stage_ms : 0;
  const double depth_rate = p.lone_ms > 0 ? static_cast<double>(p.depth) * 1e3 / p.lone_ms : 0;
  if (depth_rate < stage_rate) {
    p.rate = depth_rate;
    p.bound = Bottleneck::latency;
  } else {
    p.rate = stage_rate;
    p.bound = p.bus_ms_per_frame >= p.compute_ms_per_frame ? Bottleneck::bus : Bottleneck::compute;
  }
  p.ms_per_frame = p.rate > 0 ? 1e3 / p.rate : 0;
  p.traffic_in_bytes_per_s = p.rate * src.bytes_in;
  p.traffic_out_bytes_per_s = p.rate * src.bytes_out;
  p.bus_utilization = std::min(1.0, p.rate * p.bus_ms_per_frame / 1e3);
  p.bus_idle = 1 - p.bus_utilization;
  p.first_compute_ms = src.first_compute_ms.value_or(src.compute_ms);
  p.ttfo_ms = src.load_ms + src.allocate_ms + p.transfer_in_ms + lat_ms + p.first_compute_ms +
              p.transfer_out_ms + lat_ms;
  return p;
}

}  // namespace rig

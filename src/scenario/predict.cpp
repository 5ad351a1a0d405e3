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

#include "rig/scenario/predict.hpp"

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

Result<PredictSource> predict_source(const BenchResult& b, std::string_view what) {
  auto bad = [&](const std::string& m) {
    return fail(ErrorCode::invalid_argument, std::string(what) + ": " + m);
  };
  PredictSource s;
  s.device_spec = b.device.spec;
  s.model_name = b.model.name;
  s.model_sha256 = b.model.sha256;
  // Compute: what the device reported; an in-process device crosses no link,
  // so its whole lone-frame latency is compute.
  if (b.latency.hardware_ms.median) {
    s.compute_ms = *b.latency.hardware_ms.median;
    s.compute_from = "latency.hardware_ms.median";
  } else if (b.device.in_process) {
    if (!b.latency.overall_ms.median) return bad("field 'latency.overall_ms.median' is null");
    s.compute_ms = *b.latency.overall_ms.median;
    s.compute_from = "latency.overall_ms.median (in-process device: no link)";
  } else {
    return bad(
        "field 'latency.hardware_ms.median' is null: the device did not report its compute "
        "time, so compute and link cannot be told apart");
  }
  if (!(s.compute_ms >= 0)) return bad("compute time is negative");
  // Bytes: measured per inference, else the model's declared frames.
  s.bytes_in = b.bytes.payload_in > 0 ? b.bytes.payload_in : static_cast<double>(b.bytes.model_in);
  s.bytes_out =
      b.bytes.payload_out > 0 ? b.bytes.payload_out : static_cast<double>(b.bytes.model_out);
  if (!(s.bytes_in >= 0 && s.bytes_out >= 0)) return bad("bytes per inference are negative");
  if (b.steady.depth == 0)
    return bad("field 'steady.depth' must be a whole number in 1..4294967295, got 0");
  s.depth = b.steady.depth;
  s.measured_rate = b.steady.rate.median;
  s.measured_lone_ms = b.latency.overall_ms.median;
  s.load_ms = to_ms(b.ttfo.load);
  s.allocate_ms = to_ms(b.ttfo.allocate);
  s.first_inference_ms = to_ms(b.ttfo.first_inference);
  if (b.ttfo.first_timings.compute) s.first_compute_ms = to_ms(*b.ttfo.first_timings.compute);
  return s;
}

Prediction predict(const PredictSource& src, const LinkProfile& link, uint32_t depth) {
  Prediction p;
  p.link = link;
  p.depth = depth == 0 ? std::max<uint32_t>(1, link.queue_depth) : depth;
  p.transfer_in_ms = src.bytes_in / link.bw_in * 1e3;
  p.transfer_out_ms = src.bytes_out / link.bw_out * 1e3;
  const double lat_ms = to_ms(link.latency);
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

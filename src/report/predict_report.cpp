// rig predict's reporters: text with units, and the JSON document.
#include "rig/report/predict_report.hpp"

#include "report/json_common.hpp"
#include "report/predict_fields.hpp"
#include "report/text_common.hpp"
#include "rig/units.hpp"

namespace rig {

using namespace report;

std::string format_link_profiles_text() {
  std::string out = line("%-14s %12s %12s %12s %7s %7s  %s\n", "profile", "bw in", "bw out",
                         "lat/transfer", "queue", "duplex", "source");
  for (const auto& p : link_profiles())
    out += line("%-14s %12s %12s %12s %7u %7s  ", p.name.c_str(), format_rate(p.bw_in).c_str(),
                format_rate(p.bw_out).c_str(), format_duration(p.latency).c_str(), p.queue_depth,
                p.full_duplex ? "full" : "half") +
           p.source + "\n";
  return out;
}

std::string format_prediction_text(const PredictSource& s, const Prediction& p) {
  const LinkProfile& l = p.link;
  const double lat_ms = to_ms(l.latency);
  std::string out = "rig predict: " + (s.model_name.empty() ? std::string("model") : s.model_name) +
                    " measured on " + s.device_spec;
  const std::string inputs = inputs_text(p.inputs);
  if (s.measured_rate)
    out += " (" + format_fixed(*s.measured_rate, 1) + " frames/s at depth " +
           std::to_string(s.depth) + ")";
  out += "\n  compute " + format_ms(s.compute_ms) + " per frame (" + s.compute_from + "); " +
         with_commas(s.bytes_in) + " B in, " + with_commas(s.bytes_out) + " B out per frame\n";
  out += "link " + l.name + ": " + format_rate(l.bw_in) + " in, " + format_rate(l.bw_out) +
         " out, " + format_ms(lat_ms) + " per transfer (" + format_ms(2 * lat_ms) +
         " round trip), queue depth " + std::to_string(l.queue_depth) + ", " +
         (l.full_duplex ? "full" : "half") + " duplex\n  (" + l.source + ")\n" + inputs + "\n";

  out += "steady: " + format_fixed(p.rate, 1) + " frames/s (" + format_ms(p.ms_per_frame) +
         " per frame) at depth " + std::to_string(p.depth) + ", bounded by ";
  switch (p.bound) {
    case Bottleneck::bus:
      out += "the bus: " + format_ms(p.bus_ms_per_frame) + " per frame on the link against " +
             format_ms(p.compute_ms_per_frame) + " of compute\n";
      break;
    case Bottleneck::compute:
      out += "compute: " + format_ms(p.compute_ms_per_frame) + " per frame against " +
             format_ms(p.bus_ms_per_frame) + " on the link\n";
      break;
    case Bottleneck::latency:
      out += "latency: depth " + std::to_string(p.depth) + " cannot cover a " +
             format_ms(p.lone_ms) + " lone frame; " +
             (p.depth < l.queue_depth
                  ? std::string("a deeper queue would help (the link takes up to ") +
                        std::to_string(l.queue_depth) + ")\n"
                  : "the link's queue takes no more (" + std::to_string(l.queue_depth) +
                        " in flight): only a shorter lone frame raises the rate\n");
      break;
  }
  if (p.depth_note) out += "  (" + *p.depth_note + ")\n";
  if (p.rate_model == RateModel::event_simulation && p.rate < p.closed_form_rate * 0.999)
    out +=
        "  (in and out transfers of different frames interleave on the shared channel: the "
        "sim's closed loop replayed event by event gives " +
        format_fixed(p.rate, 1) + " frames/s, " +
        format_fixed((1 - p.rate / p.closed_form_rate) * 100, 1) +
        "% below min(depth / lone frame, 1 / slowest stage) = " +
        format_fixed(p.closed_form_rate, 1) + ")\n";
  out += "  uncertainty: " + p.uncertainty_note + "\n";
  if (p.compute_overlaps)
    out += "  (the device overlaps frames: " + format_ms(s.compute_ms) +
           " of compute latency, but it measured " + format_ms(p.compute_ms_per_frame) +
           " per frame; that is the compute stage's time per frame)\n";
  out += "lone frame: " + format_ms(p.lone_ms) + " (in " + format_ms(p.transfer_in_ms) + " + " +
         format_ms(lat_ms) + " + compute " + format_ms(s.compute_ms) + " + out " +
         format_ms(p.transfer_out_ms) + " + " + format_ms(lat_ms) + ")\n";
  out += "time to first output: " + format_ms(p.ttfo_ms) + " (load " + format_ms(s.load_ms) +
         " + allocate " + format_ms(s.allocate_ms) + " + first inference " +
         format_ms(p.ttfo_ms - s.load_ms - s.allocate_ms) + "; the model upload is not included)\n";
  const std::string rate = with_commas(p.rate);
  if (!l.full_duplex && l.bw_in == l.bw_out) {
    out += "bus: " + rate + " x " + with_commas(s.bytes_in + s.bytes_out) +
           " B = " + format_rate(p.traffic_in_bytes_per_s + p.traffic_out_bytes_per_s) +
           " against " + format_rate(l.bw_in) + " leaves the bus " +
           format_fixed(p.bus_idle * 100, 0) + "% idle\n";
  } else {
    auto dir = [&](const char* name, double bytes, double traffic, double bw) {
      return std::string(name) + ": " + rate + " x " + with_commas(bytes) +
             " B = " + format_rate(traffic) + " against " + format_rate(bw) + " (" +
             format_fixed(traffic / bw * 100, 0) + "% busy)";
    };
    out += "bus: " + dir("in", s.bytes_in, p.traffic_in_bytes_per_s, l.bw_in) + "; " +
           dir("out", s.bytes_out, p.traffic_out_bytes_per_s, l.bw_out) + "; the " +
           (l.full_duplex ? "busier direction" : "shared channel") + " is " +
           format_fixed(p.bus_idle * 100, 0) + "% idle\n";
  }
  return out + verdict_text(p.inputs.verdict);
}

std::string prediction_to_json(const std::string& path, const PredictSource& s,
                               const Prediction& p) {
  return write_document("rig predict", PredictDoc{path, s, p, std::nullopt},
                        predict_fields<JsonWriter>);
}

}  // namespace rig

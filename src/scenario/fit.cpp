#include "rig/scenario/fit.hpp"

#include <algorithm>
#include <cmath>

namespace rig {

std::string_view to_string(Placement p) {
  switch (p) {
    case Placement::resident:
      return "resident";
    case Placement::streamed:
      return "streamed";
    case Placement::cannot_run:
      return "cannot_run";
  }
  return "?";
}

Result<void> validate(const FitSettings& s) {
  if (!(s.device_memory_bytes > 0) || !std::isfinite(s.device_memory_bytes))
    return fail(ErrorCode::invalid_argument, "--device-memory must be a positive size, e.g. 8GiB");
  if (s.model.empty() == !s.params.has_value())
    return fail(ErrorCode::invalid_argument,
                "give a model file or --params N (a raw parameter count), not both");
  if (s.params && (!(*s.params >= 1) || !std::isfinite(*s.params) || *s.params > 1e18))
    return fail(ErrorCode::invalid_argument, "--params must be a count of at least 1");
  if (s.activation_bytes && (!(*s.activation_bytes >= 0) || !std::isfinite(*s.activation_bytes)))
    return fail(ErrorCode::invalid_argument, "--activations must be a size of 0 or more");
  if (s.bits.empty()) return fail(ErrorCode::invalid_argument, "--bits: give at least one");
  for (unsigned b : s.bits)
    if (b < 1 || b > 64)
      return fail(ErrorCode::invalid_argument,
                  "--bits: " + std::to_string(b) + " is not a precision in 1..64");
  if (s.link && !(s.link->bw_in > 0))
    return fail(ErrorCode::invalid_argument, "the link has no host-to-device bandwidth");
  return {};
}

FitResult plan_fit(const FitSettings& settings, const GraphWeights& weights, bool from_graph) {
  FitResult r;
  r.settings = settings;
  r.weights = weights;
  r.from_graph = from_graph;
  if (settings.activation_bytes) {
    r.working_bytes = *settings.activation_bytes;
    r.working_known = true;
    r.working_from = "--activations";
  } else if (from_graph) {
    bool known = !weights.inputs.empty() || !weights.outputs.empty();
    double io = 0;
    for (const auto* list : {&weights.inputs, &weights.outputs})
      for (const auto& t : *list) {
        if (t.bytes)
          io += static_cast<double>(*t.bytes);
        else
          known = false;
      }
    r.working_bytes = io;
    r.working_known = known;
    r.working_from = known ? "the graph's input and output tensors only (intermediate "
                             "activations not counted: give --activations)"
                           : "unknown (a symbolic input or output dimension: give --activations)";
  } else {
    r.working_from = "unknown (give --activations)";
  }
  if (from_graph) {
    bool known = !weights.inputs.empty();
    for (const auto& t : weights.inputs) {
      if (t.bytes)
        r.frame_in_bytes += static_cast<double>(*t.bytes);
      else
        known = false;
    }
    for (const auto& t : weights.outputs) {
      if (t.bytes)
        r.frame_out_bytes += static_cast<double>(*t.bytes);
      else
        known = false;
    }
    r.frame_known = known;
  }
  const double memory = settings.device_memory_bytes;
  for (unsigned bits : settings.bits) {
    FitRow row;
    row.bits = bits;
    row.weight_bytes = static_cast<double>(weights.float_parameters) * bits / 8.0 +
                       static_cast<double>(weights.non_float_bytes);
    row.need_bytes = row.weight_bytes + r.working_bytes;
    row.spare_bytes = memory - row.need_bytes;
    if (row.need_bytes <= memory) {
      row.placement = Placement::resident;
    } else if (r.working_bytes >= memory) {
      row.placement = Placement::cannot_run;
    } else {
      row.placement = Placement::streamed;
      row.streamed_bytes = row.weight_bytes - (memory - r.working_bytes);
    }
    if (settings.link) {
      const LinkProfile& l = *settings.link;
      const double latency_ms = to_ms(l.latency);
      const double frame_in = r.frame_known ? r.frame_in_bytes : 0;
      const double frame_out = r.frame_known && l.bw_out > 0 ? r.frame_out_bytes : 0;
      // The link time per inference of `in` bytes host to device beside the
      // frame's output device to host.
      const auto link_ms = [&](double in) {
        const double in_ms = in / l.bw_in * 1e3;
        const double out_ms = frame_out > 0 ? frame_out / l.bw_out * 1e3 : 0;
        return l.full_duplex ? std::max(in_ms, out_ms) : in_ms + out_ms;
      };
      if (r.frame_known) row.frame_ms = link_ms(frame_in);
      if (row.placement == Placement::resident) {
        row.load_ms = row.weight_bytes / l.bw_in * 1e3 + latency_ms;
        if (row.frame_ms && *row.frame_ms > 0) row.best_rate_per_s = 1e3 / *row.frame_ms;
      } else if (row.placement == Placement::streamed) {
        row.floor_ms = link_ms(row.streamed_bytes + frame_in);
        // Alone, nothing overlaps: in, then out, each with its latency.
        row.lone_floor_ms = (row.streamed_bytes + frame_in) / l.bw_in * 1e3 + latency_ms +
                            (frame_out > 0 ? frame_out / l.bw_out * 1e3 + latency_ms : 0);
        row.best_rate_per_s = 1e3 / *row.floor_ms;
      }
    }
    r.rows.push_back(row);
  }
  return r;
}

}  // namespace rig

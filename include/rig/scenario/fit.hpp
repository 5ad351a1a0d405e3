// rig fit: will a model's weights stay on the device, or must they cross the
// link for every inference? From the weights' shapes alone
// (read_graph_weights, rig/model_weights.hpp) or a raw parameter count.
//
// The model, at each precision of `bits`:
//   weight bytes  = floating-point parameters x bits / 8 + the integer and
//                   bool tensors at their stored size (quantization shrinks
//                   the floating-point weights only);
//   need          = weight bytes + working bytes (activations and buffers);
//   frame         the model's input bytes cross in and its output bytes out
//                 for every inference (from the graph; unknown for a raw
//                 count or a symbolic dimension: then nothing is counted for
//                 it and the rate is said to be an upper bound);
//   resident      when need <= device memory: the weights cross the link once,
//                 a one-off load of weight bytes / bw_in + one latency; after
//                 it the frame alone crosses: the best possible rate is
//                 1 / its link time per inference (in / bw_in + out / bw_out
//                 on a half-duplex link, the larger of the two on full);
//   streamed      otherwise: what does not fit must cross per inference,
//                 streamed bytes = weight bytes - (memory - working bytes),
//                 beside the frame: a time floor per inference of
//                 (streamed + frame in) / bw_in + frame out / bw_out (half
//                 duplex; the larger of the two on full), bus time that
//                 pipelining cannot hide, so the best possible rate is
//                 1 / that floor; a lone inference pays one latency per
//                 direction more;
//   cannot_run    when the working bytes alone exceed the device memory.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "rig/error.hpp"
#include "rig/link_profile.hpp"
#include "rig/model_graph.hpp"
#include "rig/scenario/input_verdict.hpp"

namespace rig {

struct FitSettings {
  std::string model;               // the model file read, or "" for a raw count
  std::optional<double> params;    // --params: a raw count (all floating point)
  double device_memory_bytes = 0;  // > 0
  std::vector<unsigned> bits = {32, 16, 8, 4};
  std::optional<LinkProfile> link;         // --link or --ladder
  std::string link_from;                   // "profile usb3-gen2", "rig ladder result L.json"
  std::optional<double> activation_bytes;  // --activations
};

// bits each in 1..64, memory positive, a model or a count (not both), a count
// or activations >= 0: invalid_argument naming the option.
Result<void> validate(const FitSettings& settings);

enum class Placement { resident, streamed, cannot_run };
std::string_view to_string(Placement p);

struct FitRow {
  unsigned bits = 0;
  double weight_bytes = 0;
  double need_bytes = 0;  // weights + working
  Placement placement = Placement::resident;
  double spare_bytes = 0;     // memory - need (negative when over)
  double streamed_bytes = 0;  // per inference; 0 when resident
  // With a link: resident: the one-off load; streamed: the floor per
  // inference and a lone inference's floor; both: the best possible rate
  // (resident: nullopt when the frame is unknown or empty).
  std::optional<double> load_ms;
  std::optional<double> floor_ms, lone_floor_ms, best_rate_per_s;
  std::optional<double> frame_ms;  // the frame's own link time per inference (when known)
};

struct FitResult {
  FitSettings settings;
  bool from_graph = false;  // the counts come from the model's initializers
  GraphWeights weights;     // from the graph, or the raw count as float parameters
  double working_bytes = 0;
  bool working_known = false;  // --activations, or the graph's I/O sizes
  std::string working_from;    // where working_bytes comes from, in words
  // The bytes of one frame in (the graph's inputs) and out (its outputs);
  // frame_known false: not counted (a raw count, or a symbolic dimension),
  // and every best_rate_per_s is an upper bound above the truth.
  double frame_in_bytes = 0, frame_out_bytes = 0;
  bool frame_known = false;
  std::vector<FitRow> rows;  // one per bits, in the order given
  // The verdicts of the results read (a --ladder result), set by the
  // command: an INVALID ladder makes the answer INVALID.
  JudgedInputs inputs;
};

// The answer for counted weights. `weights` is read_graph_weights' result, or
// a raw count (from_graph false).
FitResult plan_fit(const FitSettings& settings, const GraphWeights& weights, bool from_graph);

}  // namespace rig

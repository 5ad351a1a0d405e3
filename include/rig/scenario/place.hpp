// rig place: where should each stage run? From measured results (rig bench)
// and predicted ones (rig predict, for links not measured), for a workload of
// a frame rate, a latency bound and a frame size.
//
// The model (docs/methodology.md "Placement"), per assignment of stages to
// candidate devices:
//   bytes crossing: the frame into the first stage (the workload's frame=:
//   a byte count as given, or a WxH frame in the first model's own input
//   format, its element type and channels (frame_as_input); else the first
//   model's input bytes); each intermediate tensor
//   (a stage's output bytes) when the next stage runs on another device,
//   out of one device and into the next (device A -> host -> device B:
//   both links); none when both stages share a device; the last output
//   back to the host. A device without a link (in process) moves nothing
//   over a bus.
//   per device per frame: compute = the sum of its stages' compute time per
//   frame (compute_ms_per_frame); link = its bytes in / bw_in + bytes out /
//   bw_out on a half-duplex link, the larger of the two on a full-duplex one.
//   per device, three limits: 1000 / the larger of its compute and link
//   time per frame (the busiest resource); its queue depth / the time a
//   frame holds a slot of it, the sum of its stages' lone times (Little's
//   law: no more than `depth` frames in flight); and the figure the result
//   itself states: each candidate's own rate_per_s against what this model
//   gives at the conditions it was measured (or predicted) at, a scale
//   min(1, measured / modelled) applied to the device's rate, so that a
//   stage placed as it was measured is never claimed faster than measured.
//   rate = the least device rate.
//   lone-frame latency = the sum over stages of compute_ms plus each crossing
//   (bytes / bandwidth + the link's latency).
//   bus utilisation at the workload's rate: fps x link time per frame, on the
//   busiest link; headroom = 1 - that.
//   meets: rate >= fps and latency <= the bound (when given).
// Ranking: assignments that meet the workload first, by the bytes they move
// per frame (least first: moving data costs power and bus headroom), then by
// lone latency, then by rate; then the others by how near they come
// (max(fps / rate, latency / bound), smallest first).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rig/device.hpp"
#include "rig/error.hpp"
#include "rig/link_profile.hpp"
#include "rig/model.hpp"
#include "rig/scenario/input_verdict.hpp"

namespace rig {

struct Workload {
  double fps = 0;                    // > 0
  std::optional<double> latency_ms;  // lone-frame bound
  // frame= a size (WxH or a name): mapped onto the first model's input by
  // place(), which then sets frame_bytes.
  std::optional<FrameSize> frame_size;
  std::optional<double> frame_bytes;  // bytes into the first stage: given, or frame_size mapped
  std::string frame_text;             // as given
};

// "fps=30,latency=50ms[,frame=1080p]": frame= a size name or WxH (crossing
// in the model's own input format: frame_as_input) or a byte count with a
// unit (6MB). invalid_argument naming the key.
Result<Workload> parse_workload(std::string_view text);

// A WxH frame in a model's own input format: the one input's bytes per pixel
// (batch x channels x element size, from its shape: N,C,H,W or N,H,W,C with
// at most 4 channels; C,H,W; H,W,C) times W x H. `text` says how, and
// whether the frame differs from the model's own size (its compute is the
// one measured at the model's size, not rescaled). invalid_argument, saying
// why and to give frame=BYTES, for a model with several inputs or an input
// with no image layout.
struct FrameAsInput {
  double bytes = 0;
  std::string text;
  bool model_size = true;  // W x H is the model's own input size
};
Result<FrameAsInput> frame_as_input(FrameSize frame, const std::vector<TensorInfo>& inputs);

// The link of a device measured through rig serve (a remote device), from
// what was measured across it: a lone frame of `lone_ms` of which the
// device computed `compute_ms`, moving `bytes_in` + `bytes_out` payload
// bytes (`link_bytes` on the wire). The rest of the lone frame is the link:
// half of the rig round trip `round_trip_ms` (the link floor; nullopt:
// unknown, none assumed) as each transfer's latency, and the remainder as
// the time the payload took, one channel for both directions. Costing the
// measured frame with it gives back the measured lone frame; other frame
// sizes scale with their bytes. nullopt when the lone frame is not longer
// than the compute (inconsistent figures: nothing to cost the link from).
std::optional<LinkProfile> measured_link(double lone_ms, double compute_ms, double bytes_in,
                                         double bytes_out, double link_bytes,
                                         std::optional<double> round_trip_ms, uint32_t queue_depth,
                                         const std::string& source);

// One device measured (or predicted) running one model.
struct PlaceCandidate {
  std::string source;  // the result file it came from
  std::string device;  // identity: the device spec; a prediction: "SPEC on LINK"
  std::string model_name, model_sha256;
  bool predicted = false;
  double rate_per_s = 0;               // measured steady median, or the predicted rate
  double compute_ms = 0;               // a lone frame's device compute
  double compute_ms_per_frame = 0;     // pipelined: min(compute, measured time per frame)
  double lone_ms = 0;                  // measured (or predicted) lone-frame latency
  double bytes_in = 0, bytes_out = 0;  // the model's frame sizes
  std::vector<TensorInfo> inputs;      // the model's inputs; empty: not recorded (predict)
  uint32_t depth = 0;                  // frames in flight measured (predicted) at; 0: unknown
  std::optional<LinkProfile> link;     // none: the device is in process
  std::optional<double> energy_j;      // per inference, where measured
  std::vector<std::string> caveats;    // INVALID reasons, confounds, "predicted"
};

struct PlaceStage {
  std::string name;    // "detect"; "model" without --pipeline
  std::string model;   // the model file; "" without --pipeline
  std::string sha256;  // "" without --pipeline: every candidate matches
  std::optional<double> input_bytes, output_bytes;  // from the model; else each candidate's
  std::vector<TensorInfo> inputs;                   // from the model; empty without --pipeline
  std::vector<size_t> candidates;                   // indexes into PlaceResult::candidates
};

struct StagePlacement {
  size_t stage = 0, candidate = 0;
  double bytes_in = 0, bytes_out = 0;              // crossing a link into / out of this stage
  double transfer_in_ms = 0, transfer_out_ms = 0;  // bytes / bandwidth + the link's latency
  double compute_ms = 0;
};

struct Assignment {
  std::vector<StagePlacement> stages;
  double rate_per_s = 0, lone_ms = 0, transfer_ms = 0, transfer_share = 0;
  double bytes_moved_per_frame = 0;
  double bus_utilization = 0, bus_headroom = 1;  // the busiest link at the workload's rate
  std::string busiest_link;                      // its device; "" without links
  std::string bound;  // "compute on D", "the link of D", "the queue depth of D", "… measured"
  // The limiting device's three terms (the model above): its busiest
  // resource, its depth / slot time (nullopt: depth unknown), and the scale
  // to what its result states (1: the model does not overstate it).
  double resource_rate_per_s = 0;
  std::optional<double> depth_rate_per_s;
  double measured_scale = 1;
  std::optional<double> energy_j;
  bool meets_rate = false, meets_latency = true, meets = false;
  double shortfall = 0;  // max(fps / rate, latency / bound): <= 1 when it meets
  std::vector<std::string> caveats;
};

struct PlaceResult {
  Workload workload;
  std::vector<PlaceStage> stages;
  std::vector<PlaceCandidate> candidates;
  std::vector<Assignment> assignments;  // ranked
  std::string frame_mapping;            // how frame=WxH became bytes; "" otherwise
  bool met = false;                     // the first assignment meets the workload
  std::string reason;                   // why the first one is chosen (or nearest)
  // The verdicts of the results read, set by the command: an INVALID one
  // makes the placement INVALID (its caveats say which figures it gave).
  JudgedInputs inputs;
};

// Matches candidates to stages (by model sha256; every candidate when the
// stage has none), enumerates every assignment (at most 100000: limit_exceeded
// beyond), and ranks them. invalid_argument naming the stage when no result
// measured its model.
Result<PlaceResult> place(const Workload& workload, std::vector<PlaceStage> stages,
                          std::vector<PlaceCandidate> candidates);

}  // namespace rig

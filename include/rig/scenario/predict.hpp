// rig predict: a bench result on another link. The model is the sim
// device's (docs/methodology.md), so a prediction can be checked against a
// sim run configured with the same link and compute. The source figures come
// from a bench result: read_bench_json (rig/report/bench_report.hpp), then
// predict_source.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "rig/link_profile.hpp"
#include "rig/scenario/bench.hpp"
#include "rig/scenario/input_verdict.hpp"

namespace rig {

// What prediction needs from a rig bench result.
struct PredictSource {
  std::string device_spec, model_name;
  std::string model_sha256;                // the result's model.sha256; "" before schema 3
  double compute_ms = 0;                   // latency.hardware_ms.median
  std::string compute_from;                // which field compute_ms came from
  double bytes_in = 0, bytes_out = 0;      // per inference
  uint32_t depth = 0;                      // the measured pipeline depth
  std::optional<double> measured_rate;     // steady.rate_per_s.median
  std::optional<double> measured_spread;   // steady.rate_per_s.spread: (max - min) / median
  std::optional<double> measured_lone_ms;  // latency.overall_ms.median
  double load_ms = 0, allocate_ms = 0, first_inference_ms = 0;
  std::optional<double> first_compute_ms;  // ttfo.first_inference_device.compute_ms
};

// What prediction needs from a bench result (read from its JSON document by
// read_bench_json). `what` names the result in errors, which are
// invalid_argument naming the field: a device that reported no compute time
// across a link ("latency.hardware_ms.median" is null), a depth of 0.
Result<PredictSource> predict_source(const BenchResult& bench, std::string_view what);

enum class Bottleneck { bus, compute, latency };
std::string_view to_string(Bottleneck b);

// How the steady rate was worked out: the closed form min(depth / lone,
// 1 / slowest stage), or the sim's closed loop replayed event by event (a
// half-duplex channel, where in and out transfers of different frames
// interleave and the closed form is not exact near the transition).
enum class RateModel { closed_form, event_simulation };
std::string_view to_string(RateModel m);

// The stated relative uncertainty of a predicted rate where the model is the
// target's (a device that behaves as the sim does): the bench it is compared
// with counts whole pipeline cycles (0.5%), the event simulation measures
// over thousands of completions (under 0.1%); 1% covers both. The source's
// own repeat spread is added to it.
inline constexpr double kPredictRateRounding = 0.01;

struct Prediction {
  LinkProfile link;
  uint32_t depth = 0;  // requests in flight on the target: at most link.queue_depth
  // The depth asked for (0: the profile's queue depth); when it is deeper
  // than the link's queue, `depth` is clamped to the queue and depth_note
  // says so (a bench on that link clamps the same way).
  uint32_t requested_depth = 0;
  std::optional<std::string> depth_note;
  double transfer_in_ms = 0, transfer_out_ms = 0;  // channel occupancy per frame
  double lone_ms = 0;                              // in + lat + compute + out + lat
  double bus_ms_per_frame = 0;                     // busiest channel's occupancy per frame
  // The compute stage's time per frame when pipelined: the device's compute
  // latency, or the source's measured time per frame when that is shorter (a
  // dataflow accelerator overlaps frames inside the chip: seeds/002 measured
  // 2.27 ms of compute latency at 0.86 ms per frame).
  double compute_ms_per_frame = 0;
  bool compute_overlaps = false;  // the measured time per frame was the shorter
  double rate = 0;                // frames/s, by rate_model
  RateModel rate_model = RateModel::closed_form;
  double closed_form_rate = 0;  // min(depth / lone, 1 / slowest stage), frames/s
  // Relative: the target's rate lies within rate x (1 +- this). nullopt where
  // rig cannot bound it (uncertainty_note says why).
  std::optional<double> rate_uncertainty;
  std::string uncertainty_note;  // how rate_uncertainty was set, in words
  double ms_per_frame = 0;
  Bottleneck bound = Bottleneck::bus;
  double traffic_in_bytes_per_s = 0, traffic_out_bytes_per_s = 0;  // at the predicted rate
  double bus_utilization = 0;                                      // busiest channel, 0..1
  double bus_idle = 0;                                             // 1 - utilization
  double ttfo_ms = 0;  // load + allocate + first compute + crossing
  double first_compute_ms = 0;
  // The verdicts of the results read (the bench result, a --ladder result),
  // set by the command: an INVALID input makes the prediction INVALID.
  JudgedInputs inputs;
};

// The model: the sim device's (docs/methodology.md), with the compute stage's
// time per frame as above. `depth` 0 takes the profile's queue depth, and a
// deeper one is clamped to it (depth_note). On a
// half-duplex link with depth <= kMaxSimulatedDepth the rate comes from the
// event simulation; elsewhere from the closed form, which is exact at depth
// 1, on a full-duplex link, and on a half-duplex one where one term is at
// least twice the other; between those (deeper queues only) the uncertainty
// is stated as unknown.
inline constexpr uint32_t kMaxSimulatedDepth = 4096;
Prediction predict(const PredictSource& source, const LinkProfile& link, uint32_t depth = 0);

// The sim's closed loop on a half-duplex channel, event by event: `depth`
// requests, each crossing in (in_ms on the shared FIFO channel, then lat_ms),
// computing (compute_ms on a FIFO server, then compute_delay_ms), crossing
// out (out_ms on the same channel, then lat_ms), and resubmitted the moment
// it lands. Returns frames/s over the second half of `completions`.
double simulate_half_duplex_rate(double in_ms, double out_ms, double lat_ms, double compute_ms,
                                 double compute_delay_ms, uint32_t depth, uint64_t completions);

}  // namespace rig

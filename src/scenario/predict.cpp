// rig predict: a measured device behind another link. The model is the sim
// device's (docs/methodology.md, "The sim device"), so a prediction can be
// checked against a sim run configured with the same link and compute:
//   lone frame   in/bw_in + lat + compute + out/bw_out + lat
//   steady       min(depth / lone frame, 1 / slowest stage), where the stages
//                are the shared channel (in + out, half duplex) or each
//                direction (full duplex), and compute: its latency, or the
//                source's measured time per frame where that is shorter
//                (the device overlaps frames; the sim never does).
// The closed form is the rate of a cyclic chain of FIFO servers and fixed
// delays: exact at depth 1 and on a full-duplex link. On a half-duplex link
// the in and out transfers of different frames queue for one channel, and
// near the transition between the two terms the rate is below both; there
// the sim's closed loop is replayed event by event instead.
#include <algorithm>
#include <deque>
#include <queue>
#include <utility>
#include <vector>

#include "rig/scenario/predict.hpp"
#include "rig/units.hpp"

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

std::string_view to_string(RateModel m) {
  return m == RateModel::event_simulation ? "event_simulation" : "closed_form";
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
  s.measured_spread = b.steady.rate.spread;
  s.measured_lone_ms = b.latency.overall_ms.median;
  s.load_ms = to_ms(b.ttfo.load);
  s.allocate_ms = to_ms(b.ttfo.allocate);
  s.first_inference_ms = to_ms(b.ttfo.first_inference);
  if (b.ttfo.first_timings.compute) s.first_compute_ms = to_ms(*b.ttfo.first_timings.compute);
  return s;
}

double simulate_half_duplex_rate(double in_ms, double out_ms, double lat_ms, double compute_ms,
                                 double compute_delay_ms, uint32_t depth, uint64_t cycles) {
  enum class Step { want_in, in_done, arrived, computed, want_out, out_done, landed };
  struct Event {
    double t;
    uint64_t seq;
    Step step;
    uint32_t request;
    bool operator>(const Event& o) const { return t != o.t ? t > o.t : seq > o.seq; }
  };
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events;
  uint64_t seq = 0;
  auto push = [&](double t, Step step, uint32_t r) { events.push(Event{t, seq++, step, r}); };
  bool channel_busy = false, compute_busy = false;
  std::deque<std::pair<uint32_t, bool>> channel_waiting;  // (request, output)
  std::deque<uint32_t> compute_waiting;
  auto start_transfer = [&](double now, uint32_t r, bool output) {
    channel_busy = true;
    push(now + (output ? out_ms : in_ms), output ? Step::out_done : Step::in_done, r);
  };
  auto want_channel = [&](double now, uint32_t r, bool output) {
    if (!channel_busy)
      start_transfer(now, r, output);
    else
      channel_waiting.emplace_back(r, output);
  };
  auto release_channel = [&](double now) {
    channel_busy = false;
    if (channel_waiting.empty()) return;
    const auto [r, output] = channel_waiting.front();
    channel_waiting.pop_front();
    start_transfer(now, r, output);
  };
  auto start_compute = [&](double now, uint32_t r) {
    compute_busy = true;
    push(now + compute_ms, Step::computed, r);
  };
  for (uint32_t r = 0; r < depth; ++r) push(0, Step::want_in, r);
  // Every stage is FIFO and every delay fixed, so frames never overtake:
  // request 0 lands once every `depth` completions, and the rate over whole
  // cycles of it is exact for a periodic pattern of any phase. The first
  // half of the cycles is the start-up transient.
  uint64_t landings = 0;
  double t_start = 0, t_end = 0;
  while (!events.empty() && landings <= 2 * cycles) {
    const Event e = events.top();
    events.pop();
    switch (e.step) {
      case Step::want_in:
        want_channel(e.t, e.request, false);
        break;
      case Step::in_done:
        release_channel(e.t);
        push(e.t + lat_ms, Step::arrived, e.request);
        break;
      case Step::arrived:
        if (!compute_busy)
          start_compute(e.t, e.request);
        else
          compute_waiting.push_back(e.request);
        break;
      case Step::computed:
        compute_busy = false;
        if (!compute_waiting.empty()) {
          const uint32_t next = compute_waiting.front();
          compute_waiting.pop_front();
          start_compute(e.t, next);
        }
        // As the sim: the output queues for the channel the moment compute ends.
        if (compute_delay_ms > 0)
          push(e.t + compute_delay_ms, Step::want_out, e.request);
        else
          want_channel(e.t, e.request, true);
        break;
      case Step::want_out:
        want_channel(e.t, e.request, true);
        break;
      case Step::out_done:
        release_channel(e.t);
        push(e.t + lat_ms, Step::landed, e.request);
        break;
      case Step::landed:
        if (e.request == 0) {
          ++landings;
          if (landings == cycles) t_start = e.t;
          if (landings == 2 * cycles) t_end = e.t;
        }
        push(e.t, Step::want_in, e.request);  // the closed loop resubmits at once
        break;
    }
  }
  if (!(t_end > t_start)) return 0;
  return static_cast<double>(depth) * static_cast<double>(cycles) * 1e3 / (t_end - t_start);
}

Prediction predict(const PredictSource& src, const LinkProfile& link, uint32_t depth) {
  Prediction p;
  p.link = link;
  // The target's queue holds at most its profile's depth: a deeper --depth
  // is predicted at the queue's depth, as a bench on that link clamps it.
  const uint32_t queue = std::max<uint32_t>(1, link.queue_depth);
  p.requested_depth = depth;
  p.depth = depth == 0 ? queue : std::min(depth, queue);
  if (depth > queue)
    p.depth_note = "--depth " + std::to_string(depth) + " is deeper than the link's queue (" +
                   std::to_string(queue) + " requests in flight): predicted at depth " +
                   std::to_string(queue) + ", as a bench on that link clamps it";
  p.transfer_in_ms = src.bytes_in / link.bw_in * 1e3;
  p.transfer_out_ms = src.bytes_out / link.bw_out * 1e3;
  const double lat_ms = to_ms(link.latency);
  p.lone_ms = p.transfer_in_ms + lat_ms + src.compute_ms + p.transfer_out_ms + lat_ms;
  p.bus_ms_per_frame = link.full_duplex ? std::max(p.transfer_in_ms, p.transfer_out_ms)
                                        : p.transfer_in_ms + p.transfer_out_ms;
  p.compute_ms_per_frame = src.compute_ms;
  // The measured rate carries its own rounding (kPredictRateRounding): a time
  // per frame within it of the compute latency is the compute latency.
  if (src.measured_rate && *src.measured_rate > 0 &&
      1e3 / *src.measured_rate < src.compute_ms * (1 - kPredictRateRounding)) {
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
  p.closed_form_rate = p.rate;

  const double spread = src.measured_spread.value_or(0.0);
  const std::string rounding =
      format_fixed((kPredictRateRounding + spread) * 100, 1) +
      "%: the target's counting rounding (" + format_fixed(kPredictRateRounding * 100, 0) +
      "%) and the source's repeat spread (" + format_fixed(spread * 100, 1) + "%)";
  p.rate_uncertainty = kPredictRateRounding + spread;
  const bool far_from_transition =
      depth_rate >= 2 * stage_rate || stage_rate >= 2 * depth_rate || p.depth == 1;
  bool replayed = false;
  if (!link.full_duplex && p.depth > 1 && p.depth <= kMaxSimulatedDepth && stage_ms > 0) {
    // The compute stage of a device that overlaps frames: a server of its
    // time per frame, then the rest of its latency as a delay (an assumption).
    const double simulated = simulate_half_duplex_rate(
        p.transfer_in_ms, p.transfer_out_ms, lat_ms, p.compute_ms_per_frame,
        src.compute_ms - p.compute_ms_per_frame, p.depth, std::max(64u, 4096u / p.depth));
    // Within the simulation's own resolution (0.1%) of the closed form, the
    // closed form is the rate: nothing interferes.
    replayed = simulated > 0;
    if (replayed && simulated < p.closed_form_rate * (1 - 1e-3)) {
      p.rate = simulated;
      p.rate_model = RateModel::event_simulation;
    }
  }
  if (p.compute_overlaps) {
    p.rate_uncertainty = std::nullopt;
    p.uncertainty_note =
        "not known: the device overlaps frames (its measured time per frame is shorter than its "
        "compute latency), which the sim's model does not; the compute stage is taken as a "
        "server of its time per frame followed by the rest of its latency";
  } else if (!replayed && !link.full_duplex && !far_from_transition) {
    p.rate_uncertainty = std::nullopt;
    p.uncertainty_note =
        "not known: on a half-duplex link near the transition between depth / lone frame and "
        "1 / slowest stage, in and out transfers of different frames interleave and the rate is "
        "below min(...); the event simulation runs only up to depth " +
        std::to_string(kMaxSimulatedDepth);
  } else {
    p.uncertainty_note =
        "+-" + rounding + "; the " +
        (p.rate_model == RateModel::event_simulation
             ? std::string("event simulation is the sim's closed loop")
         : replayed ? std::string("sim's closed loop, replayed event by event, agrees "
                                  "with the closed form within 0.1%")
                    : std::string("closed form is exact here (") +
                          (p.depth == 1       ? "depth 1"
                           : link.full_duplex ? "full duplex"
                                              : "one term at least twice the other") +
                          ")");
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

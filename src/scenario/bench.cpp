// rig bench: cold start, lone frames, then the steady-state repeats; the
// bytes and the rig's own overhead derived from them. The verdict is
// judge(BenchResult) (verdict.cpp).
#include "rig/scenario/bench.hpp"

#include <algorithm>
#include <cmath>

#include "rig/model_graph.hpp"
#include "rig/units.hpp"

namespace rig {
namespace {

// Bytes: averaged over every repeat, weighted by completions (a repeat that
// completed nothing adds nothing), next to what the model declares.
BytesResult bytes_of(const SteadyResult& steady, const ModelInfo& model) {
  BytesResult b;
  b.model_in = model.input_bytes();
  b.model_out = model.output_bytes();
  double n = 0;
  for (const auto& rep : steady.repeats) {
    const auto w = static_cast<double>(rep.completed_total);
    b.payload_in += rep.payload_in_per_inference * w;
    b.payload_out += rep.payload_out_per_inference * w;
    b.link_in += rep.link_in_per_inference * w;
    b.link_out += rep.link_out_per_inference * w;
    n += w;
  }
  if (n > 0) {
    b.payload_in /= n;
    b.payload_out /= n;
    b.link_in /= n;
    b.link_out /= n;
  }
  if (steady.rate.median) {
    b.payload_mb_per_s = (b.payload_in + b.payload_out) * *steady.rate.median / 1e6;
    if (b.link_in + b.link_out > 0)
      b.link_mb_per_s = (b.link_in + b.link_out) * *steady.rate.median / 1e6;
  }
  return b;
}

// Bytes of an offered-load run: its own per-inference counts (every
// completion, warm-up and drain included); the MB/s at the achieved rate.
BytesResult bytes_of(const OfferedRun& run, const ModelInfo& model) {
  BytesResult b;
  b.model_in = model.input_bytes();
  b.model_out = model.output_bytes();
  b.payload_in = run.payload_in_per_inference;
  b.payload_out = run.payload_out_per_inference;
  b.link_in = run.link_in_per_inference;
  b.link_out = run.link_out_per_inference;
  if (run.achieved_rate > 0) {
    b.payload_mb_per_s = (b.payload_in + b.payload_out) * run.achieved_rate / 1e6;
    if (b.link_in + b.link_out > 0)
      b.link_mb_per_s = (b.link_in + b.link_out) * run.achieved_rate / 1e6;
  }
  return b;
}

// The rig's own cost: bookkeeping between a completion and the next submit,
// against the time per frame; and whether the engine thread ever waited.
// Not measured on a virtual clock.
OverheadResult overhead_of(const BenchResult& r) {
  OverheadResult o;
  if (r.virtual_clock || r.steady.repeats.empty() || !r.steady.time_per_frame_ms) return o;
  o.measured = true;
  for (const auto& rep : r.steady.repeats) {
    o.bookkeeping_ns_per_inference += rep.bookkeeping_ns_per_inference;
    o.wait_fraction += rep.wait_fraction;
  }
  o.bookkeeping_ns_per_inference /= static_cast<double>(r.steady.repeats.size());
  o.wait_fraction /= static_cast<double>(r.steady.repeats.size());
  o.bookkeeping_share = o.bookkeeping_ns_per_inference / (*r.steady.time_per_frame_ms * 1e6);
  if (o.bookkeeping_share > r.effective.overhead_limit) {
    o.limiting = true;
    o.note = "rig's bookkeeping takes " + format_fixed(o.bookkeeping_share * 100, 1) +
             "% of the time per frame: the rig may be limiting the rate";
  } else if (o.wait_fraction < 0.05 && r.effective.depth > 1) {
    o.limiting = true;
    o.note = "the engine thread waited on the device only " +
             format_fixed(o.wait_fraction * 100, 1) +
             "% of the time: submission may be limiting the rate";
  } else {
    o.note = "rig's bookkeeping is " + format_fixed(o.bookkeeping_share * 100, 3) +
             "% of the time per frame";
  }
  return o;
}

}  // namespace

Result<void> validate(const BenchSettings& s) {
  auto bad = [](const std::string& m) { return fail(ErrorCode::invalid_argument, m); };
  if (s.device.empty()) return bad("device spec is empty");
  if (auto ok = validate(s.point); !ok) return ok;
  if (auto ok = validate(s.confounds); !ok) return ok;
  if (s.monitor.idle < Nanos(0)) return bad("idle power duration must not be negative");
  if (!(s.repeat_tolerance > 0)) return bad("tolerances must be positive");
  if (s.latency_max <= Nanos(0)) return bad("latency duration must be positive");
  if (s.reservoir_capacity == 0) return bad("reservoir capacity must be >= 1");
  if (!(s.confidence > 0 && s.confidence < 1))
    return bad("confidence must be between 0 and 1 (exclusive), e.g. 0.95");
  if (s.offered.rate < 0 || !std::isfinite(s.offered.rate))
    return bad("offered rate must be positive, e.g. --rate 30/s");
  if (s.offered.late_threshold < Nanos(0)) return bad("late threshold must not be negative");
  return {};
}

Result<BenchResult> run_bench(Device& device, const ModelSource& model,
                              const BenchSettings& settings) {
  if (auto ok = validate(settings); !ok) return tl::unexpected(ok.error());
  BenchResult r;
  start_result(r, device, settings);
  const uint32_t depth = settle_depth(r);

  // The monitor watches every phase beside any observer the caller attached.
  Monitor monitor(settings.monitor, device);
  FanOutObserver fan({&monitor, settings.point.observer});
  EngineObserver* observer = settings.monitor.enabled ? &fan : settings.point.observer;
  monitor.start();

  auto cold =
      cold_start(device, model, depth, settings.point.seed, observer, settings.point.inputs.get());
  if (!cold) return tl::unexpected(cold.error());
  r.ttfo = cold->ttfo;
  r.model = device.model_info();
  r.model.sha256 = model_sha256(model);  // after the cold start: never timed
  const Workspace& ws = cold->workspace;
  // Idle power, loaded but not running, where power is readable.
  if (monitor.power_readable()) monitor.measure_idle(settings.monitor.idle);
  LatencySettings lone = latency_settings(settings.latency_samples, settings.latency_max,
                                          settings.point.request_timeout, observer);
  lone.confidence = settings.confidence;
  r.latency = measure_latency(device, ws, lone);

  if (settings.offered.enabled() && !r.latency.cut_short) {
    OfferedSettings os;
    os.rate = settings.offered.rate;
    os.arrival = settings.offered.arrival;
    os.on_full = settings.offered.on_full;
    os.late_threshold = settings.offered.late_threshold;
    os.duration = settings.point.duration;
    os.warmup = default_warmup_window(settings.point.duration, settings.point.windows);
    os.windows = settings.point.windows;
    os.depth = depth;
    os.request_timeout = settings.point.request_timeout;
    os.reservoir_capacity = settings.reservoir_capacity;
    os.confidence = settings.confidence;
    os.seed = settings.point.seed;
    os.observer = observer;
    r.offered = measure_offered(device, ws, os);
    r.cut_short = r.offered->cut_short || stop_requested();
    r.steady.depth = depth;
    r.bytes = bytes_of(*r.offered, r.model);
    r.monitor = monitor.finish();
    r.monitor.energy.reason =
        "unavailable: an offered-load run has no steady rate to charge the power to "
        "(rig bench without --rate states one)";
    r.verdict = judge(r);
    return r;
  }

  r.steady.depth = depth;
  std::vector<double> rates;
  // A stop request ends the run where it is: no repeat starts after it.
  for (uint32_t i = 0; i < settings.point.repeats && !stop_requested(); ++i) {
    SteadySettings ss = steady_settings(settings.point, depth, i);
    ss.observer = observer;
    ss.reservoir_capacity = settings.reservoir_capacity;
    r.steady.repeats.push_back(measure_steady(device, ws, ss));
    const auto& rep = r.steady.repeats.back();
    if (rep.inferences > 0) rates.push_back(rep.rate);
    if (rep.aborted || rep.cut_short) break;
  }
  r.cut_short = r.latency.cut_short || stop_requested();
  r.steady.rate = summarize(rates);
  if (r.steady.rate.median && *r.steady.rate.median > 0)
    r.steady.time_per_frame_ms = 1000.0 / *r.steady.rate.median;
  r.bytes = bytes_of(r.steady, r.model);
  r.overhead = overhead_of(r);
  r.monitor = monitor.finish();
  r.monitor.energy = energy_per_inference(
      r.monitor,
      r.steady.time_per_frame_ms ? std::optional<double>(*r.steady.time_per_frame_ms / 1e3)
                                 : std::nullopt,
      settings.monitor.idle);
  r.verdict = judge(r);
  r.steady.stable = !r.steady.repeats.empty() &&
                    std::all_of(r.steady.repeats.begin(), r.steady.repeats.end(),
                                [](const SteadyRepeat& rep) { return rep.stable; }) &&
                    !(r.steady.rate.spread && *r.steady.rate.spread > settings.repeat_tolerance);
  return r;
}

}  // namespace rig

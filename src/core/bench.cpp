#include "rig/bench.hpp"

#include <algorithm>
#include <cmath>

#include "rig/units.hpp"

namespace rig {

Result<void> validate(const BenchSettings& s) {
  auto bad = [](const std::string& m) { return fail(ErrorCode::invalid_argument, m); };
  if (s.device.empty()) return bad("device spec is empty");
  if (s.duration <= Nanos(0))
    return bad("duration must be positive, got " + format_duration(s.duration));
  if (s.repeats == 0) return bad("repeats must be >= 1");
  if (s.windows < 3) return bad("windows must be >= 3 (stability compares the last 3)");
  if (s.min_inferences == 0) return bad("min inferences must be >= 1");
  if (!(s.stability_tolerance > 0) || !(s.repeat_tolerance > 0))
    return bad("tolerances must be positive");
  if (s.warmup_max < Nanos(0)) return bad("warm-up cap must not be negative");
  if (s.latency_max <= Nanos(0)) return bad("latency duration must be positive");
  if (s.request_timeout <= Nanos(0)) return bad("request timeout must be positive");
  if (s.reservoir_capacity == 0) return bad("reservoir capacity must be >= 1");
  return {};
}

Result<BenchResult> run_bench(Device& device, const ModelSource& model,
                              const BenchSettings& settings) {
  if (auto ok = validate(settings); !ok) return tl::unexpected(ok.error());
  BenchResult r;
  r.requested = settings;
  r.effective = settings;
  r.device = device.info();
  r.virtual_clock = device.clock().is_virtual();
  r.environment = collect_environment();

  const uint32_t device_depth = std::max<uint32_t>(1, r.device.queue_depth);
  uint32_t depth = settings.depth == 0 ? device_depth : settings.depth;
  if (depth > device_depth) {
    r.verdict.warnings.push_back(
        "depth " + std::to_string(depth) + " exceeds the device's queue depth " +
        std::to_string(device_depth) + "; clamped to " + std::to_string(device_depth));
    depth = device_depth;
  }
  r.effective.depth = depth;

  auto cold = cold_start(device, model, depth, settings.seed);
  if (!cold) return tl::unexpected(cold.error());
  r.ttfo = cold->ttfo;
  r.model = device.model_info();
  const Workspace& ws = cold->workspace;

  LatencySettings ls;
  ls.samples = settings.latency_samples;
  ls.max_duration = settings.latency_max;
  ls.request_timeout = settings.request_timeout;
  r.latency = measure_latency(device, ws, ls);

  SteadySettings ss;
  ss.depth = depth;
  ss.min_duration = settings.duration;
  ss.min_inferences = settings.min_inferences;
  ss.windows = settings.windows;
  ss.stability_tolerance = settings.stability_tolerance;
  ss.warmup_max = settings.warmup_max;
  ss.warmup_window = default_warmup_window(settings.duration, settings.windows);
  ss.request_timeout = settings.request_timeout;
  ss.reservoir_capacity = settings.reservoir_capacity;
  r.steady.depth = depth;
  std::vector<double> rates;
  for (uint32_t i = 0; i < settings.repeats; ++i) {
    ss.seed = settings.seed + i;
    r.steady.repeats.push_back(measure_steady(device, ws, ss));
    const auto& rep = r.steady.repeats.back();
    if (rep.inferences > 0) rates.push_back(rep.rate);
    if (rep.aborted) break;
  }
  r.steady.rate = summarize(rates);
  if (r.steady.rate.median && *r.steady.rate.median > 0)
    r.steady.time_per_frame_ms = 1000.0 / *r.steady.rate.median;

  // Bytes: averaged over every repeat, next to what the model declares.
  r.bytes.model_in = r.model.input_bytes();
  r.bytes.model_out = r.model.output_bytes();
  // Weighted by completions; a repeat that completed nothing adds nothing.
  double n = 0;
  for (const auto& rep : r.steady.repeats) {
    const auto w = static_cast<double>(rep.completed_total);
    r.bytes.payload_in += rep.payload_in_per_inference * w;
    r.bytes.payload_out += rep.payload_out_per_inference * w;
    r.bytes.link_in += rep.link_in_per_inference * w;
    r.bytes.link_out += rep.link_out_per_inference * w;
    n += w;
  }
  if (n > 0) {
    r.bytes.payload_in /= n;
    r.bytes.payload_out /= n;
    r.bytes.link_in /= n;
    r.bytes.link_out /= n;
  }
  if (r.steady.rate.median) {
    r.bytes.payload_mb_per_s =
        (r.bytes.payload_in + r.bytes.payload_out) * *r.steady.rate.median / 1e6;
    if (r.bytes.link_in + r.bytes.link_out > 0)
      r.bytes.link_mb_per_s = (r.bytes.link_in + r.bytes.link_out) * *r.steady.rate.median / 1e6;
  }

  // The rig's own cost: bookkeeping between a completion and the next submit,
  // against the time per frame; and whether the engine thread ever waited.
  Verdict& v = r.verdict;
  if (!r.virtual_clock && !r.steady.repeats.empty() && r.steady.time_per_frame_ms) {
    OverheadResult& o = r.overhead;
    o.measured = true;
    for (const auto& rep : r.steady.repeats) {
      o.bookkeeping_ns_per_inference += rep.bookkeeping_ns_per_inference;
      o.wait_fraction += rep.wait_fraction;
    }
    o.bookkeeping_ns_per_inference /= static_cast<double>(r.steady.repeats.size());
    o.wait_fraction /= static_cast<double>(r.steady.repeats.size());
    o.bookkeeping_share = o.bookkeeping_ns_per_inference / (*r.steady.time_per_frame_ms * 1e6);
    if (o.bookkeeping_share > settings.overhead_limit) {
      o.limiting = true;
      o.note = "rig's bookkeeping takes " + format_fixed(o.bookkeeping_share * 100, 1) +
               "% of the time per frame: the rig may be limiting the rate";
    } else if (o.wait_fraction < 0.05 && depth > 1) {
      o.limiting = true;
      o.note = "the engine thread waited on the device only " +
               format_fixed(o.wait_fraction * 100, 1) +
               "% of the time: submission may be limiting the rate";
    } else {
      o.note = "rig's bookkeeping is " + format_fixed(o.bookkeeping_share * 100, 3) +
               "% of the time per frame";
    }
    if (o.limiting) v.warnings.push_back(o.note);
  }

  // Verdict.
  uint64_t errors = r.latency.errors;
  std::optional<Error> first_error = r.latency.first_error;
  for (const auto& rep : r.steady.repeats) {
    errors += rep.errors;
    if (!first_error && rep.first_error) first_error = rep.first_error;
  }
  if (errors > 0)
    v.reasons.push_back(std::to_string(errors) +
                        " inference(s) failed; first: " + first_error->to_string());
  if (r.steady.repeats.size() < settings.repeats)
    v.reasons.push_back("only " + std::to_string(r.steady.repeats.size()) + " of " +
                        std::to_string(settings.repeats) + " repeats ran");
  bool all_stable = true;
  for (size_t i = 0; i < r.steady.repeats.size(); ++i) {
    const auto& rep = r.steady.repeats[i];
    const std::string which = "repeat " + std::to_string(i + 1);
    if (rep.inferences < settings.min_inferences)
      v.reasons.push_back(which + ": too few samples (" + std::to_string(rep.inferences) + " < " +
                          std::to_string(settings.min_inferences) +
                          "); raise --duration or check the device");
    if (rep.device_stuck)
      v.reasons.push_back(which +
                          ": the device did not return every request after an error "
                          "(its buffers are kept alive); restart the device");
    if (!rep.stable) {
      all_stable = false;
      v.reasons.push_back(which + ": not stable (last 3 windows differ by " +
                          (rep.last_windows_spread
                               ? format_fixed(*rep.last_windows_spread * 100, 1) + "%"
                               : std::string("n/a: fewer than 3 windows")) +
                          " > " + format_fixed(settings.stability_tolerance * 100, 1) +
                          "%); check for throttling or contention, or raise --duration");
    }
    if (!rep.warmup_settled && !rep.aborted)
      v.warnings.push_back(which + ": warm-up hit its cap of " +
                           format_duration(settings.warmup_max) + " before the rate settled");
  }
  if (r.steady.rate.spread && *r.steady.rate.spread > settings.repeat_tolerance) {
    all_stable = false;
    v.reasons.push_back("repeats disagree: spread " + format_fixed(*r.steady.rate.spread * 100, 1) +
                        "% > " + format_fixed(settings.repeat_tolerance * 100, 1) +
                        "%; the host or device is not steady (see warnings)");
  }
  r.steady.stable = all_stable && !r.steady.repeats.empty();
  if (r.latency.samples < 10)
    v.reasons.push_back("lone-frame latency: too few samples (" +
                        std::to_string(r.latency.samples) + " < 10)");
  for (const auto& w : r.environment.warnings) v.warnings.push_back(w);
  for (const auto& w : r.device.warnings) v.warnings.push_back("device: " + w);
  if (r.virtual_clock)
    v.warnings.push_back(
        "virtual clock: figures are the sim device's model, not a measurement of hardware");
  v.valid = v.reasons.empty();
  return r;
}

}  // namespace rig

// rig bench: cold start, lone frames, then the steady-state repeats; the
// bytes and the rig's own overhead derived from them. The verdict is
// judge(BenchResult), at the end of this file, over the shared rules
// (scenario/rules.hpp) and the offered-load run's own.
#include "rig/scenario/bench.hpp"

#include <algorithm>
#include <cmath>

#include "rig/model_graph.hpp"
#include "rig/units.hpp"
#include "scenario/analysis_notes.hpp"
#include "scenario/monitored_run.hpp"
#include "scenario/rules.hpp"

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
  uint32_t depth = settle_depth(r);

  // The monitor watches every phase beside any observer the caller attached.
  MonitoredRun watch(settings.monitor, device, settings.point.observer);
  Monitor& monitor = watch.monitor();
  EngineObserver* observer = watch.observer();

  auto cold =
      cold_start(device, model, depth, settings.point.seed, observer, settings.point.inputs.get());
  if (!cold) return tl::unexpected(cold.error());
  depth = settle_depth_after_load(r, device);  // the loaded model's queue
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
    OfferedSettings os = offered_settings(settings.point, depth);
    os.rate = settings.offered.rate;
    os.arrival = settings.offered.arrival;
    os.on_full = settings.offered.on_full;
    os.late_threshold = settings.offered.late_threshold;
    os.reservoir_capacity = settings.reservoir_capacity;
    os.confidence = settings.confidence;
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

// ---------------------------------------------------------------------------
// The verdict: the shared rules (scenario/rules.hpp) and the offered-load ones.

namespace {

RuleOutcome offered_run_completed(const OfferedRun& o) {
  RuleOutcome out = outcome("offered_run_completed", Severity::invalidates,
                            std::to_string(o.completed) + " of " + std::to_string(o.arrivals) +
                                " measured frames completed");
  if (o.device_stuck)
    finding(out,
            "the device did not return every request (its buffers are kept alive); "
            "restart the device");
  else if (o.aborted)
    finding(out, "the offered-load run aborted: " +
                     (o.first_error ? o.first_error->to_string() : std::string("aborted")));
  if (o.arrivals == 0) finding(out, "no frame arrived in the measured time; raise --duration");
  return out;
}

RuleOutcome frames_on_time(const OfferedRun& o, Nanos threshold) {
  RuleOutcome out =
      outcome("frames_on_time", Severity::warns,
              std::to_string(o.late) + " of " + std::to_string(o.submitted) + " frames (" +
                  format_fixed(o.late_share * 100, 2) + "%) submitted more than " +
                  format_duration(threshold) + " after their arrival, at most " +
                  format_fixed(kLateShareLimit * 100, 0) + "% wanted");
  if (o.late_share > kLateShareLimit)
    finding(out, format_fixed(o.late_share * 100, 1) + "% of frames were submitted late (median " +
                     (o.lateness_ms.median ? format_ms(*o.lateness_ms.median) : "n/a") + ", max " +
                     (o.lateness_ms.max ? format_ms(*o.lateness_ms.max) : "n/a") +
                     " behind schedule): every request slot was busy, or the host could not "
                     "keep the schedule; the latency from arrival includes the wait");
  return out;
}

RuleOutcome no_dropped_frames(const OfferedRun& o) {
  RuleOutcome out =
      outcome("no_dropped_frames", Severity::warns, std::to_string(o.dropped) + " frames dropped");
  if (o.dropped > 0)
    finding(out, std::to_string(o.dropped) + " of " + std::to_string(o.arrivals) +
                     " frames were dropped with every request slot in flight (--on-full drop)");
  return out;
}

RuleOutcome keeps_up(const OfferedRun& o) {
  RuleOutcome out = outcome("keeps_up", Severity::warns,
                            "achieved " + format_fixed(o.achieved_rate, 2) + " frames/s of " +
                                format_fixed(o.scheduled_rate, 2) + " arrived (" +
                                format_fixed(o.offered_rate, 2) + " offered)");
  if (!o.keeps_up && !o.aborted)
    finding(out, "the device does not keep up with " + format_fixed(o.offered_rate, 2) +
                     " frames/s: it completed " + format_fixed(o.achieved_rate, 2) +
                     " frames/s; lower --rate or find the highest rate with rig sweep --rate");
  return out;
}

RuleOutcome rig_not_limiting(const OverheadResult& overhead) {
  RuleOutcome o = outcome("rig_not_limiting", Severity::warns,
                          overhead.measured ? overhead.note : "not measured");
  if (overhead.limiting) finding(o, overhead.note);
  return o;
}

std::string cut_where(const BenchResult& r) {
  if (r.latency.cut_short)
    return "during the lone frames, after " + std::to_string(r.latency.samples);
  if (r.offered)
    return "during the offered-load run, after " + std::to_string(r.offered->arrivals) +
           " measured arrivals";
  const auto& reps = r.steady.repeats;
  return reps.empty() ? std::string("before the steady state")
                      : "in repeat " + std::to_string(reps.size()) + " of " +
                            std::to_string(r.effective.point.repeats) + ", after " +
                            std::to_string(reps.back().inferences) + " measured inferences";
}

// Both paths end with the lone frames' rules, consistency and the confounds
// every result is checked for.
void add_lone_frames_and_confounds(Verdict& v, const BenchResult& r) {
  v.add(enough_lone_frames(r.latency.samples));
  v.add(percentiles_resolved(r.latency.overall_ms, "lone-frame latency",
                             "raise --latency-samples or --latency-duration",
                             "lone_percentiles_resolved"));
  v.add(figures_consistent(r.device, r.model, &r.ttfo, &r.latency));
  add_confounds(v, r.environment, r.device, r.virtual_clock, kVirtualClockNote,
                r.effective.confounds.strict, &r.latency);
}

}  // namespace

Verdict judge(const BenchResult& r) {
  Verdict v;
  v.add(not_cut_short(r.cut_short, cut_where(r)));
  if (r.offered) {
    const OfferedRun& o = *r.offered;
    v.add(depth_within_queue(r.depth_note));
    v.add(no_errors(r.latency.errors + o.errors,
                    r.latency.first_error ? r.latency.first_error : o.first_error,
                    "in lone frames and the offered-load run"));
    v.add(offered_run_completed(o));
    v.add(frames_on_time(o, r.effective.offered.late_threshold));
    v.add(no_dropped_frames(o));
    v.add(keeps_up(o));
    v.add(percentiles_resolved(o.latency_ms, "latency at the offered rate", "raise --duration"));
    add_lone_frames_and_confounds(v, r);
    return v;
  }
  const auto& repeats = r.steady.repeats;
  uint64_t errors = r.latency.errors;
  std::optional<Error> first = r.latency.first_error;
  for (const auto& rep : repeats) {
    errors += rep.errors;
    if (!first && rep.first_error) first = rep.first_error;
  }
  v.saw(r.latency.first_error);
  for (const auto& rep : repeats) v.saw(rep.first_error);
  v.add(depth_within_queue(r.depth_note));
  v.add(no_errors(errors, first, "in lone frames and repeats"));
  v.add(all_repeats_ran(repeats.size(), r.effective.point.repeats));
  v.add(rig_not_limiting(r.overhead));
  for (size_t i = 0; i < repeats.size(); ++i) {
    v.add(enough_samples(repeats[i], i, r.effective.point.min_inferences));
    v.add(device_returned_requests(repeats[i], i));
    v.add(repeat_stable(repeats[i], i, r.effective.point.stability_tolerance));
    v.add(rate_precise(repeats[i], i, r.effective.point.rate_tolerance));
    v.add(warmup_settled(repeats[i], i, r.effective.point.warmup_max));
    v.add(within_declared_cap(repeat_name(i), repeats[i].rate, repeats[i].declared_cap,
                              cap_rounding(r.virtual_clock)));
  }
  v.add(repeats_agree(r.steady.rate, r.effective.repeat_tolerance));
  add_lone_frames_and_confounds(v, r);
  ConfoundInputs in = confound_inputs(r);
  for (const auto& rep : repeats) in.runs.push_back(&rep.windows);
  if (r.ttfo.total > Nanos(0)) in.first_inference = r.ttfo.first_inference;
  in.time_per_frame_ms = r.steady.time_per_frame_ms;
  if (!repeats.empty()) in.warmup_inferences = repeats.front().warmup_inferences;
  add_confound_rules(v, in);
  return v;
}

}  // namespace rig

// rig soak: cooldown, cold start, idle power, one long pipelined run; then
// the windows split into the short-run and long-run spans. The verdict is
// judge(SoakResult), at the end of this file.
#include "rig/scenario/soak.hpp"

#include <algorithm>
#include <cmath>

#include "rig/model_graph.hpp"
#include "rig/scenario/settings.hpp"
#include "rig/stats.hpp"
#include "rig/units.hpp"
#include "scenario/analysis_notes.hpp"
#include "scenario/monitored_run.hpp"
#include "scenario/rules.hpp"

namespace rig {
namespace {

SoakSpan span_of(const std::vector<SoakWindow>& windows, size_t first, size_t last) {
  SoakSpan s;
  if (first >= last) return s;
  std::vector<double> rates;
  double seconds = 0;
  for (size_t i = first; i < last; ++i) {
    s.inferences += windows[i].inferences;
    seconds += windows[i].duration_s;
    rates.push_back(windows[i].rate);
  }
  s.start_s = windows[first].start_s;
  s.duration_s = seconds;
  s.windows = last - first;
  if (seconds > 0) s.rate = static_cast<double>(s.inferences) / seconds;
  s.spread = relative_spread(rates);
  return s;
}

}  // namespace

Nanos soak_window(const SoakSettings& s) {
  return s.window > Nanos(0) ? s.window : std::min(s.short_span, s.long_span) / 5;
}

Result<void> validate(const SoakSettings& s) {
  auto bad = [](const std::string& m) { return fail(ErrorCode::invalid_argument, m); };
  if (s.device.empty()) return bad("device spec is empty");
  if (s.duration <= Nanos(0) || s.short_span <= Nanos(0) || s.long_span <= Nanos(0))
    return bad("--duration, --short and --long must be positive");
  if (s.duration < s.short_span + s.long_span)
    return bad("--duration " + format_duration(s.duration) + " is shorter than --short " +
               format_duration(s.short_span) + " + --long " + format_duration(s.long_span) +
               ": the two spans must not overlap");
  const Nanos w = soak_window(s);
  if (w <= Nanos(0)) return bad("--window must be positive");
  if (w > s.short_span || w > s.long_span)
    return bad("--window " + format_duration(w) + " is longer than --short or --long");
  if (s.duration / w > 1000000) return bad("--duration / --window gives over 1,000,000 windows");
  if (s.cooldown < Nanos(0)) return bad("--cooldown must not be negative");
  if (s.warmup_max < Nanos(0)) return bad("--warmup-max must not be negative");
  if (s.request_timeout <= Nanos(0)) return bad("--timeout must be positive");
  if (!(s.drift_floor >= 0)) return bad("drift floor must not be negative");
  if (s.monitor.idle < Nanos(0)) return bad("--idle must not be negative");
  return validate(s.confounds);
}

void summarize_soak(SoakResult& r) {
  const auto& w = r.windows;
  const double short_s = to_seconds(r.effective.short_span);
  const double long_s = to_seconds(r.effective.long_span);
  double end_s = 0;
  for (const auto& x : w) end_s = std::max(end_s, x.start_s + x.duration_s);
  // Short: the first windows that lie wholly within the first --short.
  size_t short_last = 0;
  while (short_last < w.size() &&
         w[short_last].start_s + w[short_last].duration_s <= short_s + 1e-9)
    ++short_last;
  // Long: the last windows that start within the last --long.
  size_t long_first = w.size();
  while (long_first > short_last && w[long_first - 1].start_s >= end_s - long_s - 1e-9)
    --long_first;
  r.short_run = span_of(w, 0, short_last);
  r.long_run = span_of(w, long_first, w.size());
  r.drift.reset();
  r.noise.reset();
  r.drift_exceeds_noise = false;
  if (r.short_run.rate && r.long_run.rate && *r.short_run.rate > 0) {
    r.drift = *r.long_run.rate / *r.short_run.rate - 1;
    r.noise = std::max(r.short_run.spread.value_or(0), r.long_run.spread.value_or(0));
    r.drift_exceeds_noise = std::fabs(*r.drift) > std::max(*r.noise, r.effective.drift_floor);
  }
}

Result<SoakResult> run_soak(Device& device, const ModelSource& model,
                            const SoakSettings& settings) {
  if (auto ok = validate(settings); !ok) return tl::unexpected(ok.error());
  SoakResult r;
  start_result(r, device, settings);
  r.effective.window = soak_window(settings);
  uint32_t depth = settle_depth(r);

  MonitoredRun watch(settings.monitor, device, settings.observer);
  Monitor& monitor = watch.monitor();
  EngineObserver* observer = watch.observer();
  // Cooldown: waited on the device's clock (no wall time on a virtual one).
  monitor.wait(settings.cooldown, "cooldown");

  auto cold = cold_start(device, model, depth, settings.seed, observer, settings.inputs.get());
  if (!cold) return tl::unexpected(cold.error());
  depth = settle_depth_after_load(r, device);  // the loaded model's queue
  r.ttfo = cold->ttfo;
  r.model = device.model_info();
  r.model.sha256 = model_sha256(model);  // after the cold start: never timed
  if (monitor.power_readable()) monitor.measure_idle(settings.monitor.idle);

  // The run as one point, mapped onto the engine's settings by
  // steady_settings: in windows of the soak's length, for the duration asked
  // for and not longer (no adaptive stop past it).
  PointSettings point;
  point.duration = settings.duration;
  point.windows = static_cast<uint32_t>(settings.duration / r.effective.window);
  point.min_inferences = 1;
  point.max_duration_factor = 1.0;
  point.warmup_max = settings.warmup_max;
  point.request_timeout = settings.request_timeout;
  point.seed = settings.seed;
  point.observer = observer;
  r.run = measure_steady(device, cold->workspace, steady_settings(point, depth));

  r.monitor = monitor.finish();
  // The temperature beside each window: the device's own sensor first.
  std::vector<std::string> temps;
  for (const auto& s : r.monitor.samples)
    for (const auto& [k, v] : s.values)
      if ((k == "device:temperature_c" || k.rfind("temp_c:", 0) == 0) &&
          std::find(temps.begin(), temps.end(), k) == temps.end())
        temps.push_back(k);
  std::sort(temps.begin(), temps.end(), [](const std::string& a, const std::string& b) {
    return (a == "device:temperature_c") != (b == "device:temperature_c")
               ? a == "device:temperature_c"
               : a < b;
  });
  if (!temps.empty()) r.temperature_sensor = temps.front();
  for (size_t i = 0; i < r.run.windows.size(); ++i) {
    const auto& f = r.run.windows[i];
    SoakWindow w{f.start_s, f.duration_s, f.inferences, f.rate, std::nullopt};
    for (const auto& s : r.monitor.samples)
      if (s.event == "window" && s.repeat == 1 && s.window == i + 1 &&
          !r.temperature_sensor.empty())
        if (auto it = s.values.find(r.temperature_sensor); it != s.values.end())
          w.temperature_c = it->second;
    r.windows.push_back(w);
  }
  summarize_soak(r);
  std::optional<double> tpf;
  if (r.run.rate > 0) tpf = 1.0 / r.run.rate;
  r.monitor.energy = energy_per_inference(r.monitor, tpf, settings.monitor.idle);
  r.verdict = judge(r);
  return r;
}

// ---------------------------------------------------------------------------
// The verdict: the run itself, the drift between its spans, then the
// confounds.

namespace {

RuleOutcome spans_measured(const SoakResult& r) {
  RuleOutcome o = outcome("spans_measured", Severity::invalidates,
                          std::to_string(r.short_run.windows) + " short-run and " +
                              std::to_string(r.long_run.windows) + " long-run windows");
  if (!r.short_run.rate || !r.long_run.rate)
    finding(o,
            "the run has no complete short-run or long-run span; lengthen --duration or "
            "shorten --window");
  return o;
}

RuleOutcome drift_within_noise(const SoakResult& r) {
  RuleOutcome o = outcome("drift_within_noise", Severity::warns,
                          r.drift ? "drift " + format_fixed(*r.drift * 100, 2) + "%, noise " +
                                        format_fixed(r.noise.value_or(0) * 100, 2) + "%"
                                  : std::string("drift n/a"));
  o.threshold = "the larger of the two spans' window spread, at least " +
                format_fixed(r.effective.drift_floor * 100, 1) + "%";
  if (r.drift_exceeds_noise)
    finding(o, "long-run rate " + format_fixed(*r.long_run.rate, 2) + " /s differs from the " +
                   "short-run rate " + format_fixed(*r.short_run.rate, 2) + " /s by " +
                   format_fixed(*r.drift * 100, 1) +
                   "%, beyond the noise: a short benchmark does not give the sustained rate; "
                   "quote the long-run rate");
  return o;
}

}  // namespace

Verdict judge(const SoakResult& r) {
  Verdict v;
  v.add(not_cut_short(r.run.cut_short, "after " + format_duration(r.run.elapsed) +
                                           " of the soak, " + std::to_string(r.run.inferences) +
                                           " inferences"));
  v.add(depth_within_queue(r.depth_note));
  v.add(no_errors(r.run.errors, r.run.first_error, "in the soak run"));
  v.saw(r.run.first_error);
  v.add(pipelined_run_completed(r.run, "soak_run_completed"));
  v.add(spans_measured(r));
  v.add(drift_within_noise(r));
  v.add(figures_consistent(r.device, r.model, &r.ttfo, nullptr));
  add_confounds(v, r.environment, r.device, r.virtual_clock, kVirtualClockNote,
                r.effective.confounds.strict);
  ConfoundInputs in = confound_inputs(r);
  in.runs.push_back(&r.run.windows);
  if (r.ttfo.total > Nanos(0)) in.first_inference = r.ttfo.first_inference;
  if (r.run.rate > 0) in.time_per_frame_ms = 1e3 / r.run.rate;
  in.warmup_inferences = r.run.warmup_inferences;
  add_confound_rules(v, in);
  return v;
}

}  // namespace rig

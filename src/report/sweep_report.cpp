// rig sweep's reporters: text with units, and the JSON document.
#include "rig/report/sweep_report.hpp"

#include "report/json_common.hpp"
#include "report/monitor_fields.hpp"
#include "report/monitor_text.hpp"
#include "report/text_common.hpp"
#include "rig/units.hpp"

namespace rig {
namespace {

using report::json;
using namespace report;

json sweep_settings_json(const SweepSettings& s) {
  json j = {{"min_depth", s.min_depth},
            {"max_depth", s.max_depth},
            {"knee_fraction", s.knee_fraction},
            {"refine", s.refine},
            {"latency_samples", s.latency_samples},
            {"point", point_settings_json(s.point)}};
  add_monitor_settings_json(j, s.monitor, s.confounds);
  return j;
}

json rate_sweep_settings_json(const RateSweepSettings& s) {
  json j = {{"min_rate_per_s", s.min_rate},
            {"max_rate_per_s", s.max_rate},
            {"latency_bound_ms", to_ms(s.latency_bound)},
            {"max_probes", s.max_probes},
            {"resolution", s.resolution},
            {"arrival", std::string(to_string(s.arrival))},
            {"on_full", std::string(to_string(s.on_full))},
            {"late_threshold_ms", to_ms(s.late_threshold)},
            {"depth", s.depth},
            {"duration_s", to_seconds(s.point.duration)},
            {"windows", s.point.windows},
            {"request_timeout_s", to_seconds(s.point.request_timeout)},
            {"seed", s.point.seed},
            {"latency_samples", s.latency_samples},
            {"confidence", s.confidence}};
  add_monitor_settings_json(j, s.monitor, s.confounds);
  return j;
}

json probe_json(const RateProbe& p) {
  const OfferedRun& o = p.run;
  return {{"offered_rate_per_s", p.rate},
          {"scheduled_rate_per_s", o.scheduled_rate},
          {"achieved_rate_per_s", o.achieved_rate},
          {"p99_ms", json_number(p.p99_ms)},
          {"p99_enough", p.p99_enough},
          {"keeps_up", p.keeps_up},
          {"meets", p.meets},
          {"depth", o.depth},
          {"arrivals", o.arrivals},
          {"completed", o.completed},
          {"dropped", o.dropped},
          {"late", o.late},
          {"late_share", o.late_share},
          {"latency_from_arrival_ms", json_summary(o.latency_ms)},
          {"latency_from_submission_ms", json_summary(o.service_ms)},
          {"errors", o.errors},
          {"first_error", error_json(o.first_error)},
          {"aborted", o.aborted}};
}

}  // namespace

std::string format_rate_sweep_text(const RateSweepResult& r) {
  const auto& e = r.effective;
  std::string out = "rig sweep --rate: " + r.model.name + " on " + r.device.spec + " (" +
                    queue_text(r.device) + ")\n";
  out +=
      "highest offered rate with p99 latency from arrival <= " + format_duration(e.latency_bound) +
      ", " + std::string(to_string(e.arrival)) + " arrivals, " + format_fixed(e.min_rate, 2) +
      ".." + format_fixed(e.max_rate, 2) + " frames/s, " + format_duration(e.point.duration) +
      " per probe, up to " + std::to_string(e.depth) + " in flight\n";
  out += confounds_text(r.verdict, r.effective.confounds.strict);
  out += "lone frame (depth 1): " + opt_ms(r.lone.overall_ms.median) + " median\n\n";
  out += line("%10s %10s %-48s %8s %6s\n", "offered/s", "achieved/s", "p99 from arrival",
              "keeps up", "meets");
  for (const auto& p : r.search.probes) {
    std::string p99 = percentile_ms(p.p99_ms, p.run.latency_ms.p99_ci);
    if (p.run.aborted) p99 = "aborted";
    out += line("%10.2f %10.2f %-48s %8s %6s\n", p.rate, p.run.achieved_rate, p99.c_str(),
                p.keeps_up ? "yes" : "no", p.meets ? "yes" : "no");
  }
  out += "\n";
  out += "best rate meeting the bound: " +
         (r.search.best_rate ? format_fixed(*r.search.best_rate, 2) + " frames/s"
                             : std::string("none")) +
         "\n";
  out += "first failing rate: " +
         (r.search.first_failing_rate ? format_fixed(*r.search.first_failing_rate, 2) + " frames/s"
                                      : std::string("none")) +
         " (search stopped: " + std::string(to_string(r.search.end)) + ")\n";
  append_notes(out, r.notes);
  out += monitor_text(r.monitor);
  out += verdict_text(r.verdict);
  return out;
}

std::string rate_sweep_to_json(const RateSweepResult& r) {
  json doc = document("rig sweep");
  doc["kind"] = "rate";
  doc["settings"] = {{"requested", rate_sweep_settings_json(r.requested)},
                     {"effective", rate_sweep_settings_json(r.effective)}};
  doc["environment"] = environment_json(r.environment, r.virtual_clock, {{"device", &r.device}});
  doc["model"] = model_summary_json(r.model);
  doc["model"]["path"] = r.model_path;
  json probes = json::array();
  for (const auto& p : r.search.probes) probes.push_back(probe_json(p));
  doc["results"] = {{"probes", probes},
                    {"best_rate_per_s", json_number(r.search.best_rate)},
                    {"first_failing_rate_per_s", json_number(r.search.first_failing_rate)},
                    {"search_end", std::string(to_string(r.search.end))},
                    {"latency_bound_ms", to_ms(r.effective.latency_bound)},
                    {"lone_ms", json_summary(r.lone.overall_ms)},
                    {"ttfo_ms", to_ms(r.ttfo.total)}};
  doc["notes"] = r.notes;
  doc["monitor"] = monitor_json(r.monitor);
  doc["verdict"] = verdict_json(r.verdict);
  doc["input_data"] = input_data_json(r.effective.point.inputs.get(), r.effective.point.seed);
  return dump(doc);
}

std::string format_sweep_text(const SweepResult& r) {
  std::string out =
      "rig sweep: " + r.model.name + " on " + r.device.spec + " (" + queue_text(r.device) + ")\n";
  out += std::to_string(r.effective.point.repeats) + " repeats of " +
         format_duration(r.effective.point.duration) + " per depth\n";
  out += confounds_text(r.verdict, r.effective.confounds.strict);
  out += "lone frame (depth 1): " + opt_ms(r.lone.overall_ms.median) + " median";
  if (r.lone.hardware_ms.median)
    out += " (device compute " + opt_ms(r.lone.hardware_ms.median) + ")";
  out += "\n\n";
  out += line("%7s %11s %10s %9s %9s\n", "depth", "frames/s", "ms/frame", "of best", "spread");
  for (const auto& p : r.points)
    out += line("%6u%s %11s %10s %9s %9s\n", p.result.depth, p.refined ? "*" : " ",
                opt_fixed(p.result.rate.median, 1).c_str(),
                opt_fixed(p.result.ms_per_frame, 3).c_str(), opt_pct(p.fraction_of_best, 1).c_str(),
                opt_pct(p.result.rate.spread).c_str());
  bool any_refined = false;
  for (const auto& p : r.points) any_refined |= p.refined;
  if (any_refined) out += "(* refined around the knee)\n";
  out += "\n";
  if (r.knee)
    out += "knee: depth " + std::to_string(*r.knee) +
           " (the smallest depth with >= " + format_fixed(r.effective.knee_fraction * 100, 0) +
           "% of the best, " + opt_fixed(r.best_rate, 1) + " frames/s at depth " +
           std::to_string(r.best_depth.value_or(0)) + ")\n";
  else
    out += "knee: n/a\n";
  const std::string q = "queue depth " + std::to_string(r.queue_depth);
  const std::string knee = std::to_string(r.knee.value_or(0));
  const std::string top = std::to_string(r.effective.max_depth);
  switch (r.knee_vs_queue) {
    case KneeVsQueue::at_queue_depth:
      out += q + ": the rate flattens at the queue depth (knee " + knee + ", within one step)";
      out += r.effective.max_depth > r.queue_depth
                 ? "; the depths beyond it, up to " + top + ", add latency, not rate\n"
                 : "; the last step into it adds little rate\n";
      break;
    case KneeVsQueue::queue_limited:
      out += q +
             ": the rate was still rising at the queue depth, the deepest the device takes; "
             "the queue limits pipelining (a deeper queue would raise the rate)\n";
      break;
    case KneeVsQueue::above_queue_depth:
      out += q + ": the knee (" + knee + ") is above the device's own queue; the requests a " +
             "connection holds beyond it (up to " + std::to_string(r.device.queue_depth) +
             ") cover the link's round trip\n";
      break;
    case KneeVsQueue::still_rising:
      out += q + ": the rate was still rising at the deepest depth swept (" + top +
             "); raise --depth (up to " + std::to_string(r.device.queue_depth) + ")\n";
      break;
    case KneeVsQueue::below:
      out += q + ": the knee is below it; depths beyond " + knee + " add latency, not rate\n";
      break;
    case KneeVsQueue::unknown:
      break;
  }
  if (r.round_trip_ms)
    out += "round trip: " + opt_ms(r.round_trip_ms) + " of the " + opt_ms(r.single_shot_ms) +
           " single shot (" + opt_pct(r.round_trip_share, 0) + ") is hidden by pipelining (" +
           opt_ms(r.single_shot_ms) + " at depth 1 -> " + opt_ms(r.pipelined_ms) +
           " per frame at depth " + std::to_string(r.best_depth.value_or(0)) + ")\n";
  append_notes(out, r.notes);
  out += monitor_text(r.monitor);
  out += verdict_line(r.verdict);  // the notes above say why
  return out;
}

std::string sweep_to_json(const SweepResult& r) {
  json doc = document("rig sweep");
  doc["settings"] = {{"requested", sweep_settings_json(r.requested)},
                     {"effective", sweep_settings_json(r.effective)}};
  doc["environment"] = environment_json(r.environment, r.virtual_clock, {{"device", &r.device}});
  doc["model"] = model_summary_json(r.model);
  doc["model"]["path"] = r.model_path;
  json points = json::array();
  for (const auto& p : r.points) {
    json j = point_json(p.result);
    j["refined"] = p.refined;
    j["fraction_of_best"] = json_number(p.fraction_of_best);
    points.push_back(j);
  }
  auto opt_u32 = [](const std::optional<uint32_t>& v) { return v ? json(*v) : json(nullptr); };
  doc["results"] = {{"points", points},
                    {"skipped_depths", r.skipped},
                    {"knee", opt_u32(r.knee)},
                    {"best_depth", opt_u32(r.best_depth)},
                    {"best_rate_per_s", json_number(r.best_rate)},
                    {"queue_depth", r.queue_depth},
                    {"max_in_flight", r.device.queue_depth},
                    {"knee_vs_queue", std::string(to_string(r.knee_vs_queue))},
                    {"lone_ms", json_summary(r.lone.overall_ms)},
                    {"lone_hardware_ms", json_summary(r.lone.hardware_ms)},
                    {"single_shot_ms", json_number(r.single_shot_ms)},
                    {"pipelined_ms", json_number(r.pipelined_ms)},
                    {"round_trip_ms", json_number(r.round_trip_ms)},
                    {"round_trip_share", json_number(r.round_trip_share)},
                    {"ttfo_ms", to_ms(r.ttfo.total)}};
  doc["notes"] = r.notes;
  doc["monitor"] = monitor_json(r.monitor);
  doc["verdict"] = verdict_json(r.verdict);
  doc["input_data"] = input_data_json(r.effective.point.inputs.get(), r.effective.point.seed);
  return dump(doc);
}

}  // namespace rig

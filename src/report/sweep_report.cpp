// rig sweep's reporters: text with units, and the JSON document.
#include "rig/report/sweep_report.hpp"

#include "report/json_common.hpp"
#include "report/monitor_text.hpp"
#include "report/sweep_fields.hpp"
#include "report/text_common.hpp"
#include "rig/units.hpp"

namespace rig {
namespace {

using report::json;
using namespace report;

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

std::string rate_sweep_to_json(const RateSweepResult& result) {
  return write_document("rig sweep", result, rate_sweep_fields<JsonWriter>);
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
  if (r.limit_busy_share && r.limit_ms_per_frame) {
    const char* what = r.limited_by == LimitedBy::compute    ? "compute"
                       : r.limited_by == LimitedBy::link_in  ? "the link's in direction"
                       : r.limited_by == LimitedBy::link_out ? "the link's out direction"
                                                             : "the link's shared channel (half "
                                                               "duplex: in + out)";
    out += std::string("limited by ") + what + ": " + format_ms(*r.limit_ms_per_frame) +
           " per frame x " + opt_fixed(r.best_rate, 1) +
           " frames/s = " + opt_pct(r.limit_busy_share, 0) +
           " busy; a deeper queue would not raise the rate\n";
  }
  if (r.round_trip_ms)
    out += "round trip: " + opt_ms(r.round_trip_ms) + " of the " + opt_ms(r.single_shot_ms) +
           " single shot (" + opt_pct(r.round_trip_share, 0) + ") is hidden by pipelining (" +
           opt_ms(r.single_shot_ms) + " at depth 1 -> " + opt_ms(r.pipelined_ms) +
           " per frame at depth " + std::to_string(r.best_depth.value_or(0)) + ")\n";
  return out + closing_text(r.notes, r.monitor, r.verdict);
}

std::string sweep_to_json(const SweepResult& result) {
  return write_document("rig sweep", result, sweep_fields<JsonWriter>);
}

}  // namespace rig

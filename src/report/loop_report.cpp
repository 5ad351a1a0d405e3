// rig loop's reporters: text with units, and the JSON document.
#include "rig/report/loop_report.hpp"

#include "report/json_common.hpp"
#include "report/loop_fields.hpp"
#include "report/monitor_text.hpp"
#include "report/text_common.hpp"
#include "rig/units.hpp"

namespace rig {

using namespace report;

std::string format_loop_text(const LoopResult& r) {
  std::string out = "rig loop: " + r.model.name + " on " + r.device.spec + "\n";
  out += confounds_text(r.verdict, r.effective.confounds.strict);
  if (r.loop_error) {
    out += "  device loop failed: " + r.loop_error->message + "\n";
    out += "  (nothing after the loop was measured)\n";
    out += verdict_text(r.verdict);
    return out;
  }
  out += r.loop.includes_transfers
             ? "  device loop (fallback: a host-driven pipelined loop on one input; every frame "
               "crosses the link, so it includes the per-frame transfers)\n"
             : "  device loop (run_for_duration on one frame, no per-frame transfers)\n";
  if (r.loop.frames_completed)
    out += line("    frames completed      %llu\n",
                static_cast<unsigned long long>(*r.loop.frames_completed));
  else
    out += "    frames completed      unknown (the device reports a rate, not a count)\n";
  if (r.loop.frames_aborted)
    out += line("    frames aborted        %llu (cut off by the end of the loop%s; not counted)\n",
                static_cast<unsigned long long>(*r.loop.frames_aborted),
                r.device.in_process ? "" : ", or of a slice of it on the server");
  else
    out += "    frames aborted        unknown\n";
  out += "    elapsed               " + format_duration(r.loop.elapsed) + "\n";
  out += "    sleep between frames  " + format_duration(r.effective.sleep_between_frames) + "\n";
  if (r.loop.rate_step > 0 && r.device_rate_upper) {
    out += "    device rate           " + format_fixed(r.loop.frames_per_second, 0) + " to " +
           format_fixed(*r.device_rate_upper, 0) +
           " frames/s (the device reports an integer, truncated: the rate lies in [" +
           format_fixed(r.loop.frames_per_second, 0) + ", " +
           format_fixed(*r.device_rate_upper, 0) + "))";
  } else if (r.device_rate && r.device_rate_lower && r.device_rate_upper &&
             r.device_rate_uncertainty && *r.device_rate_upper > *r.device_rate_lower) {
    out += "    device rate           " + format_fixed(*r.device_rate, 2) + " frames/s, within [" +
           format_fixed(*r.device_rate_lower, 2) + ", " + format_fixed(*r.device_rate_upper, 2) +
           "] (+/-" + format_fixed(*r.device_rate_uncertainty * 100, 2) +
           "%: the frame cut off at the end ran but is not counted)";
  } else {
    out += "    device rate           " + format_fixed(r.loop.frames_per_second, 2) + " frames/s";
  }
  if (r.device_rate) out += " (" + format_ms(1e3 / *r.device_rate) + " per frame)";
  for (const auto& note : r.loop.notes) out += "\n    note: " + note;
  out += "\n  host-observed pipelined rate (depth " + std::to_string(r.steady.depth) +
         ", every frame crosses the link)\n";
  const SteadyRepeat& s = r.steady;
  if (!r.host_rate) {
    out += "    INVALID: " + (s.first_error ? s.first_error->to_string() : "aborted") + "\n";
  } else {
    out += "    host rate             " + format_fixed(*r.host_rate, 2) + " frames/s (" +
           (*r.host_rate > 0 ? format_ms(1e3 / *r.host_rate) : std::string("-")) + " per frame, " +
           std::to_string(s.inferences) + " frames in " + format_duration(s.elapsed) + ", " +
           (s.stable ? "stable" : "unstable") + ")\n";
    out += "    bytes per frame       " + format_bytes(s.payload_in_per_inference) + " in, " +
           format_bytes(s.payload_out_per_inference) + " out (payload); " +
           format_bytes(s.link_in_per_inference) + " in, " +
           format_bytes(s.link_out_per_inference) + " out (link)\n";
  }
  if (r.transfer_cost_ms) {
    out += "  cost of per-frame transfers: " + format_ms(*r.transfer_cost_ms) + " per frame (" +
           format_fixed(*r.transfer_cost_share * 100, 1) + "% of the host-observed frame time)";
    const double lower = r.transfer_cost_lower_ms.value_or(*r.transfer_cost_ms);
    const double upper = r.transfer_cost_upper_ms.value_or(*r.transfer_cost_ms);
    if (upper > lower)
      out += ", within [" + format_ms(lower) + ", " + format_ms(upper) +
             "] from the device rate's interval";
    if (*r.transfer_cost_ms < 0 || lower < 0)
      out += " (negative: see the verdict's warning for why)";
    out += "\n";
  }
  out += monitor_text(r.monitor);
  out += verdict_text(r.verdict);
  return out;
}

std::string loop_to_json(const LoopResult& result) {
  return write_document("rig loop", result, loop_fields<JsonWriter>);
}

}  // namespace rig

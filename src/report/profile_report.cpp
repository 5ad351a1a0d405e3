// rig profile's reporters: text with units, and the JSON document.
#include "rig/report/profile_report.hpp"

#include <algorithm>

#include "report/json_common.hpp"
#include "report/profile_fields.hpp"
#include "report/text_common.hpp"
#include "rig/units.hpp"

namespace rig {

using namespace report;

std::string format_profile_text(const ProfileResult& r) {
  std::string out = "rig profile: " + r.model.name + " on " + r.device.spec + "\n";
  out += "  profiler       " + r.profiler + ", " + std::to_string(r.runs) +
         " runs after the cold start\n";
  out += "  per run        " + format_ms(r.wall_per_run_ms) + " elapsed (profiler included), " +
         format_ms(r.layers_per_run_ms) + " in the layers\n";
  const size_t shown = std::min<size_t>(r.effective.top, r.layers.size());
  out += "  top " + std::to_string(shown) + " of " + std::to_string(r.layers.size()) +
         " layers by time\n";
  out += line("  %4s  %6s  %10s  %6s  %-16s  %s\n", "#", "share", "ms/run", "calls", "op", "layer");
  double shown_share = 0;
  for (size_t i = 0; i < shown; ++i) {
    const ProfiledLayer& l = r.layers[i];
    shown_share += l.share;
    out += line("  %4zu  %5.1f%%  %10.3f  %6llu  %-16s  %s\n", i + 1, l.share * 100, l.per_run_ms,
                static_cast<unsigned long long>(l.calls),
                (l.op_type.empty() ? std::string("-") : l.op_type).c_str(), l.name.c_str());
  }
  if (shown < r.layers.size())
    out += line("  (%zu more layers: %.1f%% of the time; --top N lists more, --json all)\n",
                r.layers.size() - shown, std::max(0.0, 1 - shown_share) * 100);
  if (r.verdict.rules.empty())
    return out + "verdict: " + (r.verdict.valid ? "VALID" : "INVALID") +
           " (no rule applies: a profile is a breakdown of the device's time, not a rate)\n";
  return out + verdict_text(r.verdict);
}

std::string profile_to_json(const ProfileResult& result) {
  return write_document("rig profile", result, profile_fields<JsonWriter>);
}

}  // namespace rig

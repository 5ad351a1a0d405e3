// rig ab's reporters: text with units, and the JSON document.
#include "rig/report/ab_report.hpp"

#include "report/ab_fields.hpp"
#include "report/json_common.hpp"
#include "report/monitor_text.hpp"
#include "report/text_common.hpp"
#include "rig/units.hpp"

namespace rig {
namespace {

using report::json;
using namespace report;

}  // namespace

std::string format_ab_text(const AbResult& r) {
  std::string out = "rig ab: " + r.model.name + ", " + std::to_string(r.rates_a.size()) +
                    " interleaved pairs (order within each pair from seed " +
                    std::to_string(r.settings.order_seed) + "), " +
                    format_duration(r.settings.point.duration) + " per run\n";
  out += confounds_text(r.judgement, r.settings.confounds.strict);
  auto side = [&](const char* name, const AbConfig& c, const DeviceInfo& d, uint32_t depth) {
    std::string knobs;
    for (const auto& k : c.knobs) knobs += (knobs.empty() ? "" : ", ") + k;
    return std::string(name) + ": " + knobs + "  ->  " + d.spec + " at depth " +
           std::to_string(depth) + "\n";
  };
  out += side("A", r.a, r.device_a, r.depth_a);
  out += side("B", r.b, r.device_b, r.depth_b);
  out +=
      "\n" + line("%-8s %-6s %14s %14s %8s\n", "pair", "order", "A frames/s", "B frames/s", "B/A");
  for (size_t i = 0; i < r.ratios.size(); ++i)
    out += line("%-8zu %-6s %14.2f %14.2f %8.4f\n", i + 1,
                i < r.order.size() ? r.order[i].c_str() : "?", r.rates_a[i], r.rates_b[i],
                r.ratios[i]);
  out += line("%-8s %-6s %14s %14s %8s\n", "median", "", opt_fixed(r.rate_a.median, 2).c_str(),
              opt_fixed(r.rate_b.median, 2).c_str(), opt_fixed(r.ratio.median, 4).c_str());
  out += line("%-8s %-6s %14s %14s %8s\n", "spread", "", opt_pct(r.rate_a.spread).c_str(),
              opt_pct(r.rate_b.spread).c_str(), opt_pct(r.ratio.spread).c_str());
  out += "\ntest: Mann-Whitney U of the two sides' rates, two-sided, alpha " +
         format_fixed(r.test.alpha, 2) + ": U = " + format_fixed(r.test.u, 1) +
         ", p = " + format_fixed(r.test.p_value, 4) +
         (r.test.exact ? " (exact)" : " (normal approx.)") + "\neffect: B/A " +
         opt_fixed(r.test.ratio, 4) + " (Hodges-Lehmann), " +
         format_fixed(r.test.confidence * 100, 0) + "% interval " +
         (r.test.ratio_lower
              ? opt_fixed(r.test.ratio_lower, 4) + " - " + opt_fixed(r.test.ratio_upper, 4)
              : std::string("none (too few pairs)")) +
         "; same within +/-" + format_fixed(r.settings.same_within * 100, 1) + "%\n";
  out += "result: " + r.verdict_text + "\n";
  out += "\n" + monitor_text(r.monitor);
  append_notes(out, r.notes);
  return out + verdict_text(r.judgement);
}

std::string ab_to_json(const AbResult& result) {
  return write_document("rig ab", result, ab_fields<JsonWriter>);
}

}  // namespace rig

// rig profile's reporters: text with units, and the JSON document.
#include "rig/report/profile_report.hpp"

#include <algorithm>

#include "report/json_common.hpp"
#include "report/text_common.hpp"
#include "rig/units.hpp"

namespace rig {
namespace {

using report::json;
using namespace report;

json profile_settings_json(const ProfileSettings& s) {
  return {
      {"model", s.model}, {"device", s.device}, {"runs", s.runs}, {"top", s.top}, {"seed", s.seed}};
}

}  // namespace

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
  return out;
}

std::string profile_to_json(const ProfileResult& r) {
  json doc = document("rig profile");
  doc["settings"] = {{"requested", profile_settings_json(r.requested)},
                     {"effective", profile_settings_json(r.effective)}};
  doc["environment"] = environment_json(r.environment, r.virtual_clock, {{"device", &r.device}});
  doc["model"] = model_json(r.model);
  doc["ttfo"] = ttfo_json(r.ttfo);
  json layers = json::array();
  for (size_t i = 0; i < r.layers.size(); ++i) {
    const ProfiledLayer& l = r.layers[i];
    layers.push_back({{"rank", i + 1},
                      {"name", l.name},
                      {"op_type", l.op_type},
                      {"calls", l.calls},
                      {"total_ms", json_number(l.total_ms)},
                      {"per_run_ms", json_number(l.per_run_ms)},
                      {"share", json_number(l.share)}});
  }
  doc["profile"] = {{"profiler", r.profiler},
                    {"runs", r.runs},
                    {"wall_per_run_ms", json_number(r.wall_per_run_ms)},
                    {"layers_per_run_ms", json_number(r.layers_per_run_ms)},
                    {"layers", std::move(layers)}};
  doc["verdict"] = verdict_json(r.verdict);
  return dump(doc);
}

}  // namespace rig

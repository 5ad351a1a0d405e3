// rig predict RESULT.json --link PROFILE [--depth N] [--json FILE]
#include <cstdio>
#include <memory>
#include <string>

#include "cli/command.hpp"
#include "cli/options.hpp"
#include "rig/analysis_report.hpp"
#include "rig/link_profile.hpp"
#include "rig/report.hpp"
#include "rig/units.hpp"

namespace rig::cli {
namespace {

struct PredictOptions {
  std::string result;
  std::string link;
  std::optional<uint32_t> depth;
  std::string json;
  bool list = false;
};

int list_links() {
  std::printf("%-14s %12s %12s %12s %7s %7s  %s\n", "profile", "bw in", "bw out", "lat/transfer",
              "queue", "duplex", "source");
  for (const auto& p : link_profiles())
    std::printf("%-14s %12s %12s %12s %7u %7s  %s\n", p.name.c_str(), format_rate(p.bw_in).c_str(),
                format_rate(p.bw_out).c_str(), format_duration(p.latency).c_str(), p.queue_depth,
                p.full_duplex ? "full" : "half", p.source.c_str());
  return 0;
}

int run_predict_command(const PredictOptions& o) {
  if (o.list) return list_links();
  if (o.result.empty())
    return report_error(
        {ErrorCode::invalid_argument, "give a rig bench --json result to predict from"});
  if (o.link.empty())
    return report_error({ErrorCode::invalid_argument,
                         "--link is required: a profile name or bw=BW,lat=DUR,depth=N "
                         "(rig predict --list-links)"});
  auto link = parse_link_profile(o.link);
  if (!link) return report_error({link.error().code, "--link: " + link.error().message});
  uint32_t depth = 0;
  if (o.depth) {
    if (*o.depth == 0)
      return report_error({ErrorCode::invalid_argument, "--depth must be >= 1, got 0"});
    depth = *o.depth;
  }
  if (!o.json.empty())
    if (auto ok = check_writable("--json", o.json); !ok) return report_error(ok.error());

  auto bytes = read_file(o.result);
  if (!bytes) return report_error(bytes.error());
  nlohmann::json doc =
      nlohmann::json::parse(reinterpret_cast<const char*>(bytes->data()),
                            reinterpret_cast<const char*>(bytes->data()) + bytes->size(), nullptr,
                            /*allow_exceptions=*/false);
  if (doc.is_discarded())
    return report_error({ErrorCode::invalid_argument,
                         o.result + ": not JSON (expected a rig bench --json result)"});
  auto source = predict_source_from_json(doc, o.result);
  if (!source) return report_error(source.error());
  const Prediction p = predict(*source, *link, depth);
  std::fputs(format_prediction_text(*source, p).c_str(), stdout);
  if (!o.json.empty())
    if (auto ok = write_json_file(o.json, prediction_to_json(o.result, *source, p)); !ok)
      return report_error(ok.error());
  return 0;
}

}  // namespace

Command add_predict_command(CLI::App& app) {
  auto o = std::make_shared<PredictOptions>();
  CLI::App* sub = app.add_subcommand(
      "predict", "Predict a bench result on another link: rate, lone-frame latency, bus headroom");
  sub->add_option("result", o->result, "a rig bench --json result");
  sub->add_option("--link", o->link,
                  "target link: usb3-gen2, pcie-gen2-x1, pcie-gen3-x4, or bw=BW,lat=DUR,depth=N");
  sub->add_option("--depth", o->depth,
                  "requests in flight on the target (default: the link's queue depth)");
  sub->add_flag("--list-links", o->list, "list the named link profiles and exit");
  sub->add_option("--json", o->json, "also write the prediction as JSON to this file");
  return {sub, [o] { return run_predict_command(*o); }};
}

}  // namespace rig::cli

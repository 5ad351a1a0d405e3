// rig predict RESULT.json --link PROFILE|--ladder LADDER.json [--depth N] [--json FILE]
#include <cstdio>
#include <memory>
#include <string>

#include "cli/command.hpp"
#include "cli/options.hpp"
#include "rig/link_profile.hpp"
#include "rig/output_file.hpp"
#include "rig/report/bench_report.hpp"
#include "rig/report/document.hpp"
#include "rig/report/ladder_report.hpp"
#include "rig/report/predict_report.hpp"
#include "rig/units.hpp"

namespace rig::cli {
namespace {

struct PredictOptions {
  std::string result;
  std::string link;
  std::string ladder;
  std::optional<uint32_t> depth;
  std::string json;
  bool list = false;
  bool strict = false;
};

std::string_view as_text(const std::vector<std::byte>& bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

int list_links() {
  std::fputs(format_link_profiles_text().c_str(), stdout);
  return 0;
}

int run_predict_command(const PredictOptions& o) {
  if (o.list) return list_links();
  if (o.result.empty())
    return report_error(
        {ErrorCode::invalid_argument, "give a rig bench --json result to predict from"});
  if (!o.link.empty() && !o.ladder.empty())
    return report_error({ErrorCode::invalid_argument, "give --link or --ladder, not both"});
  if (o.link.empty() && o.ladder.empty())
    return report_error({ErrorCode::invalid_argument,
                         "--link is required: a profile name or bw=BW,lat=DUR,depth=N "
                         "(rig predict --list-links), or --ladder with a rig ladder result"});
  Result<LinkProfile> link = tl::unexpected(Error{});
  std::vector<InputVerdict> inputs;
  if (!o.ladder.empty()) {
    auto ladder_bytes = read_file(o.ladder);
    if (!ladder_bytes) return report_error(ladder_bytes.error());
    link = read_ladder_link(as_text(*ladder_bytes), o.ladder, "predict --ladder");
    if (!link) return report_error(link.error());
    auto verdict = read_input_verdict(as_text(*ladder_bytes), o.ladder, "predict --ladder");
    if (!verdict) return report_error(verdict.error());
    inputs.push_back(std::move(*verdict));
  } else {
    link = parse_link_profile(o.link);
    if (!link) return report_error({link.error().code, "--link: " + link.error().message});
  }
  auto depth = depth_option(o.depth);
  if (!depth) return report_error(depth.error());
  if (!o.json.empty())
    if (auto ok = check_writable("--json", o.json); !ok) return report_error(ok.error());

  auto bytes = read_file(o.result);
  if (!bytes) return report_error(bytes.error());
  const std::string_view text(reinterpret_cast<const char*>(bytes->data()), bytes->size());
  auto bench = read_bench_json(text, o.result, "predict");
  if (!bench) return report_error(bench.error());
  auto verdict = read_input_verdict(text, o.result, "predict");
  if (!verdict) return report_error(verdict.error());
  inputs.insert(inputs.begin(), std::move(*verdict));
  if (auto ok = refuse_invalid_inputs(inputs, o.strict, "predict"); !ok)
    return report_error(ok.error());
  auto source = predict_source(*bench, o.result);
  if (!source) return report_error(source.error());
  Prediction p = predict(*source, *link, *depth);
  p.inputs = judge_inputs(std::move(inputs), o.strict, "predict");
  std::fputs(terminal_safe(format_prediction_text(*source, p)).c_str(),
             writes_to_stdout(o.json) ? stderr : stdout);
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
  sub->add_option("--ladder", o->ladder,
                  "target link as measured: a rig ladder --json result (each direction's "
                  "bandwidth, the latency per transfer, the duplex, the queue depth)");
  sub->add_option("--depth", o->depth,
                  "requests in flight on the target (default: the link's queue depth)");
  sub->add_flag("--list-links", o->list, "list the named link profiles and exit");
  sub->add_flag("--strict", o->strict,
                "refuse an INVALID input result (exit 2) instead of carrying its verdict into "
                "the prediction's");
  sub->add_option("--json", o->json, "also write the prediction as JSON to this file");
  return {sub, [o] { return run_predict_command(*o); }};
}

}  // namespace rig::cli

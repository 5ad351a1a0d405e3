// rig place RESULT.json... --workload 'fps=30,latency=50ms[,frame=1080p]'
//           [--pipeline 'detect:det.onnx,pose:pose.onnx'] [--json FILE]
#include <cstdio>
#include <memory>
#include <string>

#include "cli/command.hpp"
#include "cli/options.hpp"
#include "rig/model.hpp"
#include "rig/model_graph.hpp"
#include "rig/report/document.hpp"
#include "rig/report/place_report.hpp"

namespace rig::cli {
namespace {

struct PlaceOptions {
  std::vector<std::string> results;
  std::string workload;
  std::string pipeline;
  std::string json;
  bool strict = false;
};

Result<std::vector<PlaceStage>> parse_pipeline(const std::string& text) {
  std::vector<PlaceStage> stages;
  if (text.empty()) {
    PlaceStage only;
    only.name = "model";
    stages.push_back(std::move(only));
    return stages;
  }
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = text.find(',', start);
    const std::string item =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    start = comma == std::string::npos ? text.size() + 1 : comma + 1;
    const size_t colon = item.find(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == item.size())
      return fail(ErrorCode::invalid_argument,
                  "--pipeline: expected NAME:MODEL.onnx, got '" + item + "'");
    PlaceStage s;
    s.name = item.substr(0, colon);
    s.model = item.substr(colon + 1);
    auto bytes = read_file(s.model);
    if (!bytes)
      return fail(bytes.error().code,
                  "--pipeline stage '" + s.name + "': " + bytes.error().message);
    s.sha256 = sha256_hex(*bytes);
    auto info = inspect_onnx(*bytes, s.name);
    if (!info)
      return fail(info.error().code,
                  "--pipeline stage '" + s.name + "' (" + s.model + "): " + info.error().message);
    s.input_bytes = static_cast<double>(info->input_bytes());
    s.output_bytes = static_cast<double>(info->output_bytes());
    s.inputs = info->inputs;
    stages.push_back(std::move(s));
  }
  return stages;
}

int run_place_command(const PlaceOptions& o) {
  if (o.results.empty())
    return report_error({ErrorCode::invalid_argument,
                         "give rig bench or rig predict --json results to place from"});
  if (o.workload.empty())
    return report_error({ErrorCode::invalid_argument,
                         "--workload is required, e.g. 'fps=30,latency=50ms,frame=1080p'"});
  auto workload = parse_workload(o.workload);
  if (!workload) return report_error(workload.error());
  if (!o.json.empty())
    if (auto ok = check_writable("--json", o.json); !ok) return report_error(ok.error());
  auto stages = parse_pipeline(o.pipeline);
  if (!stages) return report_error(stages.error());
  std::vector<PlaceCandidate> candidates;
  std::vector<InputVerdict> inputs;
  for (const auto& path : o.results) {
    auto bytes = read_file(path);
    if (!bytes) return report_error(bytes.error());
    const std::string_view text(reinterpret_cast<const char*>(bytes->data()), bytes->size());
    auto c = read_place_candidate(text, path);
    if (!c) return report_error(c.error());
    candidates.push_back(std::move(*c));
    auto verdict = read_input_verdict(text, path, "place");
    if (!verdict) return report_error(verdict.error());
    inputs.push_back(std::move(*verdict));
  }
  if (auto ok = refuse_invalid_inputs(inputs, o.strict, "place"); !ok)
    return report_error(ok.error());
  if (o.pipeline.empty()) {
    // One stage: every result must be of one model.
    for (const auto& c : candidates)
      if (!c.model_sha256.empty() && !candidates.front().model_sha256.empty() &&
          c.model_sha256 != candidates.front().model_sha256)
        return report_error(
            {ErrorCode::invalid_argument,
             c.source + " measured another model than " + candidates.front().source +
                 " (model.sha256 differs): give --pipeline to place several models"});
  }
  auto r = place(*workload, std::move(*stages), std::move(candidates));
  if (!r) return report_error(r.error());
  r->inputs = judge_inputs(std::move(inputs), o.strict, "place");
  std::fputs(terminal_safe(format_place_text(*r)).c_str(), stdout);
  if (!o.json.empty())
    if (auto ok = write_json_file(o.json, place_to_json(*r)); !ok) return report_error(ok.error());
  return r->met ? 0 : 1;
}

}  // namespace

Command add_place_command(CLI::App& app) {
  auto o = std::make_shared<PlaceOptions>();
  CLI::App* sub = app.add_subcommand(
      "place",
      "Where should each stage run: rate, latency, transfer cost and bus headroom per assignment "
      "of stages to measured devices (exit 1 when none meets the workload)");
  sub->add_option("results", o->results, "rig bench or rig predict --json results");
  sub->add_option("--workload", o->workload, "fps=N[,latency=DUR][,frame=1080p|WxH|BYTES]");
  sub->add_option("--pipeline", o->pipeline,
                  "stages in order, NAME:MODEL.onnx,...; results match a stage by model sha256");
  sub->add_option("--json", o->json, "also write the placement as JSON to this file");
  sub->add_flag("--strict", o->strict,
                "refuse an INVALID input result (exit 2) instead of carrying its verdict into "
                "the placement's");
  return {sub, [o] { return run_place_command(*o); }};
}

}  // namespace rig::cli

// rig fit MODEL|--params N --device-memory 8GiB [--bits 32,16,8,4]
//         [--link PROFILE|--ladder LADDER.json] [--activations BYTES] [--json FILE]
#include <cstdio>
#include <memory>
#include <string>

#include "cli/command.hpp"
#include "cli/options.hpp"
#include "rig/link_profile.hpp"
#include "rig/model.hpp"
#include "rig/model_graph.hpp"
#include "rig/report/document.hpp"
#include "rig/report/fit_report.hpp"
#include "rig/report/ladder_report.hpp"
#include "rig/units.hpp"

namespace rig::cli {
namespace {

constexpr double kMaxParams = 1e15;

struct FitOptions {
  std::string model;
  std::string params;
  std::string memory;
  std::vector<unsigned> bits = {32, 16, 8, 4};
  std::string link;
  std::string ladder;
  std::string activations;
  std::string json;
  bool strict = false;
};

int run_fit_command(const FitOptions& o) {
  FitSettings s;
  s.model = o.model;
  s.bits = o.bits;
  if (o.memory.empty())
    return report_error({ErrorCode::invalid_argument, "--device-memory is required, e.g. 8GiB"});
  auto memory = parse_bytes(o.memory);
  if (!memory)
    return report_error(
        {ErrorCode::invalid_argument, "--device-memory: " + memory.error().message});
  s.device_memory_bytes = *memory;
  if (!o.params.empty()) {
    auto n = parse_number(o.params);
    if (!n) return report_error({ErrorCode::invalid_argument, "--params: " + n.error().message});
    if (!(*n <= kMaxParams))  // a count beyond any model (and beyond a 64-bit count)
      return report_error({ErrorCode::invalid_argument, "--params: '" + o.params +
                                                            "' is more parameters than rig counts "
                                                            "(at most 1e15)"});
    s.params = *n;
  }
  if (!o.activations.empty()) {
    auto a = parse_bytes(o.activations);
    if (!a)
      return report_error({ErrorCode::invalid_argument, "--activations: " + a.error().message});
    s.activation_bytes = *a;
  }
  if (!o.link.empty() && !o.ladder.empty())
    return report_error({ErrorCode::invalid_argument, "give --link or --ladder, not both"});
  if (!o.link.empty()) {
    auto link = parse_link_profile(o.link);
    if (!link) return report_error({link.error().code, "--link: " + link.error().message});
    s.link = *link;
    s.link_from = "profile " + o.link;
  }
  std::vector<InputVerdict> inputs;
  if (!o.ladder.empty()) {
    auto bytes = read_file(o.ladder);
    if (!bytes) return report_error(bytes.error());
    const std::string_view text(reinterpret_cast<const char*>(bytes->data()), bytes->size());
    auto link = read_ladder_link(text, o.ladder, "fit --ladder");
    if (!link) return report_error(link.error());
    auto verdict = read_input_verdict(text, o.ladder, "fit --ladder");
    if (!verdict) return report_error(verdict.error());
    inputs.push_back(std::move(*verdict));
    if (auto ok = refuse_invalid_inputs(inputs, o.strict, "fit"); !ok)
      return report_error(ok.error());
    s.link = *link;
    s.link_from = "rig ladder result " + o.ladder;
  }
  if (auto ok = validate(s); !ok) return report_error(ok.error());
  if (!o.json.empty())
    if (auto ok = check_writable("--json", o.json); !ok) return report_error(ok.error());

  GraphWeights weights;
  if (!s.model.empty()) {
    auto w = read_graph_weights(s.model);
    if (!w) return report_error(w.error());
    weights = *w;
  } else {
    const auto n = static_cast<uint64_t>(*s.params);
    weights.parameters = weights.float_parameters = n;
  }
  FitResult r = plan_fit(s, weights, !s.model.empty());
  r.inputs = judge_inputs(std::move(inputs), o.strict, "fit");
  std::fputs(terminal_safe(format_fit_text(r)).c_str(), stdout);
  if (!o.json.empty())
    if (auto ok = write_json_file(o.json, fit_to_json(r)); !ok) return report_error(ok.error());
  return 0;
}

}  // namespace

Command add_fit_command(CLI::App& app) {
  auto o = std::make_shared<FitOptions>();
  CLI::App* sub = app.add_subcommand(
      "fit",
      "Will the weights stay on the device or cross the link per inference, at each precision");
  sub->add_option("model", o->model,
                  "ONNX model: only its graph is read (initializer shapes), never the weights");
  sub->add_option("--params", o->params,
                  "a raw parameter count instead of a model, e.g. 12.0225e9");
  sub->add_option("--device-memory", o->memory, "the device's memory, e.g. 8GiB or 8GB");
  sub->add_option("--bits", o->bits, "precisions of the floating-point weights")
      ->delimiter(',')
      ->capture_default_str();
  sub->add_option("--link", o->link,
                  "link profile: usb3-gen2, pcie-gen2-x1, pcie-gen3-x4, or bw=BW,lat=DUR,depth=N");
  sub->add_option("--ladder", o->ladder, "the link as measured: a rig ladder --json result");
  sub->add_option("--activations", o->activations,
                  "working memory besides the weights (activations, buffers), e.g. 300MB");
  sub->add_option("--json", o->json, "also write the answer as JSON to this file");
  sub->add_flag("--strict", o->strict,
                "refuse an INVALID --ladder result (exit 2) instead of carrying its verdict into "
                "the answer's");
  return {sub, [o] { return run_fit_command(*o); }};
}

}  // namespace rig::cli

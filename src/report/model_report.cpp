#include "rig/report/model_report.hpp"

#include <algorithm>

#include "report/json_common.hpp"
#include "report/text_common.hpp"
#include "rig/report/document.hpp"
#include "rig/units.hpp"

namespace rig {

std::string format_model_text(const std::string& path, const ModelInfo& model) {
  std::string out = path + "\n";
  auto tensor = [&](const char* dir, const TensorInfo& t) {
    std::string shape;
    for (size_t i = 0; i < t.shape.size(); ++i)
      shape += (i ? "x" : "") + std::to_string(t.shape[i]);
    out += report::line("  %-6s %-20s %-8s %-20s %zu bytes\n", dir, t.name.c_str(),
                        std::string(to_string(t.type)).c_str(), shape.c_str(), t.bytes);
  };
  for (const auto& t : model.inputs) tensor("input", t);
  for (const auto& t : model.outputs) tensor("output", t);
  return out;
}

std::string format_model_written_text(const std::string& path, size_t file_bytes,
                                      const ModelInfo& model) {
  return "wrote " + path + " (" + format_bytes(static_cast<double>(file_bytes)) + "): in " +
         format_bytes(static_cast<double>(model.input_bytes())) + ", out " +
         format_bytes(static_cast<double>(model.output_bytes())) + "\n";
}

std::string format_rewrites(const ModelRewrites& rewrites) {
  std::string out;
  for (const auto& [kind, count] : rewrites.rewrites)
    out += (out.empty() ? "" : ", ") + kind + " " + std::to_string(count);
  return out;
}

std::string format_model_inspection_text(const ModelInspection& m) {
  std::string out = m.info ? format_model_text(m.path, *m.info) : m.path + "\n";
  const OnnxFacts& f = m.facts;
  std::string weights;
  for (const auto& [type, bytes] : f.weight_bytes)
    weights +=
        (weights.empty() ? "" : ", ") + type + " " + format_bytes(static_cast<double>(bytes));
  out += "  nodes " + std::to_string(f.nodes) + ", parameters " + std::to_string(f.parameters) +
         (weights.empty() ? "" : " (weights: " + weights + ")") + "\n";
  std::string opsets;
  for (const auto& [domain, version] : f.opsets)
    opsets += (opsets.empty() ? "" : ", ") + (domain.empty() ? std::string("ai.onnx") : domain) +
              " " + std::to_string(version);
  out += "  opsets: " + (opsets.empty() ? std::string("none declared") : opsets) + "\n";
  std::vector<std::pair<std::string, uint64_t>> ops(f.op_histogram.begin(), f.op_histogram.end());
  std::stable_sort(ops.begin(), ops.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string hist;
  for (const auto& [op, count] : ops)
    hist += (hist.empty() ? "" : ", ") + op + " " + std::to_string(count);
  out += "  ops: " + hist + "\n";
  std::string dynamic;
  for (const auto& d : f.dynamic_dimensions) dynamic += (dynamic.empty() ? "" : "; ") + d;
  out += "  dynamic dimensions: " + (dynamic.empty() ? std::string("none") : dynamic) + "\n";
  if (m.info) {
    const ModelRewrites& n = m.info->normalization;
    const std::string rewrites = format_rewrites(n);
    out += "  normalisation: nodes " + std::to_string(n.nodes_before) + " -> " +
           std::to_string(n.nodes_after) + "; " +
           (rewrites.empty() ? std::string("no rewrites") : "rewrites: " + rewrites) + "\n";
    for (const auto& note : n.notes) out += "    note: " + note + "\n";
  } else if (m.pass_error) {
    out += "  normalisation refused: " + m.pass_error->message + "\n";
  }
  if (m.runs_on_cpu) {
    out += "  runs on cpu: yes\n";
  } else {
    out += "  runs on cpu: no:";
    for (const auto& r : m.cpu_reasons) out += "\n    - " + r;
    out += "\n";
  }
  return out;
}

std::string model_inspection_to_json(const ModelInspection& m) {
  using report::json;
  json doc = report::document("rig model inspect");
  doc["path"] = m.path;
  json facts;
  facts["nodes"] = m.facts.nodes;
  facts["parameters"] = m.facts.parameters;
  facts["weight_bytes"] = m.facts.weight_bytes;
  facts["op_histogram"] = m.facts.op_histogram;
  json opsets = json::object();
  for (const auto& [domain, version] : m.facts.opsets)
    opsets[domain.empty() ? "ai.onnx" : domain] = version;
  facts["opsets"] = opsets;
  facts["dynamic_dimensions"] = m.facts.dynamic_dimensions;
  doc["facts"] = facts;
  if (m.info) {
    doc["model"] = report::model_json(*m.info);
  } else {
    doc["model"] = nullptr;
  }
  doc["normalization_error"] = report::error_json(m.pass_error);
  doc["runs_on_cpu"] = m.runs_on_cpu;
  doc["cpu_reasons"] = m.cpu_reasons;
  return report::dump(doc);
}

}  // namespace rig

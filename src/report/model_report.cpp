#include "rig/report/model_report.hpp"

#include "report/text_common.hpp"
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

}  // namespace rig

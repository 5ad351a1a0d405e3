// rig compare (rig/scenario/compare.hpp).
#include "rig/scenario/compare.hpp"

#include "rig/model.hpp"

namespace rig {
namespace {

// A device that does not compute the model: its outputs are the same for
// any two models with the same output sizes.
std::optional<std::string> outputs_not_the_models(const DeviceInfo& d) {
  std::string kind = d.kind;
  if (auto it = d.properties.find("server.device_kind");
      kind == "remote" && it != d.properties.end())
    kind = it->second;
  if (kind == "sim")
    return std::string(
        "the sim does not compute the model: its outputs are a checksum of the inputs, not the "
        "model's, so variants are not compared by their outputs (use a device that runs the "
        "model, e.g. -d cpu)");
  if (kind == "null")
    return std::string(
        "the null device does not compute the model: its outputs are not written, so variants "
        "are not compared by their outputs (use a device that runs the model, e.g. -d cpu)");
  return std::nullopt;
}

}  // namespace

Result<CompareResult> run_compare(Device& device, std::span<const ModelSource> models,
                                  const CompareSettings& s) {
  if (models.size() < 2)
    return fail(ErrorCode::invalid_argument,
                "rig compare needs at least two models, got " + std::to_string(models.size()));
  CompareResult r;
  r.settings = s;
  r.device = device.info();
  r.virtual_clock = device.clock().is_virtual();
  r.environment = collect_environment();
  r.outputs_not_the_models = outputs_not_the_models(r.device);
  std::vector<std::vector<std::byte>> first_outputs;
  for (size_t v = 0; v < models.size(); ++v) {
    const ModelSource& source = models[v];
    VariantResult out;
    out.model = model_origin(source);
    out.name = model_display_name(source);
    const std::string which = "variant " + std::to_string(v + 1) + " (" +
                              (out.model.empty() ? out.name : out.model) + ")";
    auto named = [&](const Error& e) { return fail(e.code, which + ": " + e.message); };
    if (source.server_name.empty()) {
      auto artifact = read_model_source(source);
      if (!artifact) return named(artifact.error());
      out.weights = model_weights(artifact->bytes);
    }
    if (auto loaded = device.load(source); !loaded) return named(loaded.error());
    const ModelInfo& info = device.model_info();
    auto inputs = prepare_inputs(info, s.inputs, s.seed, &out.input_sources);
    if (!inputs) return named(inputs.error());
    auto first = infer(device, *inputs);
    if (!first) return named(first.error());
    auto again = infer(device, *inputs);
    if (!again) return named(again.error());
    for (size_t i = 0; i < info.outputs.size(); ++i) {
      out.outputs.push_back(
          {info.outputs[i], tensor_stats(info.outputs[i].type, first->outputs[i])});
      out.output_bytes += first->outputs[i].size();
      out.rerun_bytes_differing += bytes_differing(first->outputs[i], again->outputs[i]);
    }
    out.deterministic = out.rerun_bytes_differing == 0;
    if (r.outputs_not_the_models) {
      out.bytes_differing_from_first = std::nullopt;
      if (v > 0) out.note = "outputs not compared: the device does not compute the model";
    } else if (v == 0) {
      first_outputs = std::move(first->outputs);
      out.bytes_differing_from_first = 0;
    } else {
      bool same_sizes = first_outputs.size() == first->outputs.size();
      for (size_t i = 0; same_sizes && i < first_outputs.size(); ++i)
        same_sizes = first_outputs[i].size() == first->outputs[i].size();
      if (same_sizes) {
        uint64_t n = 0;
        for (size_t i = 0; i < first_outputs.size(); ++i)
          n += bytes_differing(first_outputs[i], first->outputs[i]);
        out.bytes_differing_from_first = n;
      } else {
        out.note = "its outputs differ in size from the first variant's: not compared";
      }
    }
    r.variants.push_back(std::move(out));
  }
  return r;
}

}  // namespace rig

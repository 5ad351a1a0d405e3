// The one reading and naming rule of a ModelSource, shared by every device.
#include <filesystem>
#include <string>

#include "rig/model.hpp"

namespace rig {

Result<ModelBytes> read_model_source(const ModelSource& source) {
  ModelBytes model;
  if (!source.bytes.empty()) {
    model.bytes = source.bytes;
    return model;
  }
  if (!source.path.empty()) {
    auto file = read_file(source.path);
    if (!file) return tl::unexpected(file.error());
    if (file->empty())
      return fail(ErrorCode::invalid_argument,
                  "model file '" + source.path + "' is empty (0 bytes): nothing to load");
    model.owned = std::move(*file);
    model.bytes = model.owned;
    return model;
  }
  if (!source.server_name.empty())
    return fail(ErrorCode::invalid_argument,
                "model '" + source.server_name +
                    "' is a name under a server's --model-dir: only a remote device can load it");
  return fail(ErrorCode::invalid_argument, "model source has neither a path nor bytes");
}

Result<PreparedModel> prepare_onnx_model(const ModelSource& source) {
  auto read = read_model_source(source);
  if (!read) return tl::unexpected(read.error());
  return prepare_onnx_model(std::move(*read), model_display_name(source), source.shapes);
}

Result<PreparedModel> prepare_onnx_model(ModelBytes read_bytes, const std::string& name,
                                         const std::vector<InputShape>& shapes) {
  ModelBytes* read = &read_bytes;
  PreparedModel prepared;
  NormalizeOptions options;
  options.shapes = shapes;
  options.opencv_forms = true;  // this copy is what a device loads
  auto normalized = normalize_onnx(read->bytes, options, name);
  if (!normalized) return tl::unexpected(normalized.error());
  if (normalized->changed()) {
    prepared.model.owned = std::move(normalized->bytes);
    prepared.model.bytes = prepared.model.owned;
  } else {
    prepared.model = std::move(*read);
  }
  auto info = inspect_onnx(prepared.model.bytes, name);
  if (!info) return tl::unexpected(info.error());
  prepared.info = std::move(*info);
  prepared.info.normalization = std::move(normalized->report);
  return prepared;
}

std::string model_display_name(const ModelSource& source) {
  if (!source.name.empty()) return source.name;
  for (const std::string* where : {&source.path, &source.server_name}) {
    if (where->empty()) continue;
    std::string stem = std::filesystem::path(*where).stem().string();
    if (!stem.empty()) return stem;
  }
  return "model";
}

std::string model_origin(const ModelSource& source) {
  if (!source.bytes.empty()) return {};
  if (!source.server_name.empty()) return "server:" + source.server_name;
  return source.path;
}

}  // namespace rig

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

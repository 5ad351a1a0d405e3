// rig model's reporters: a model's inputs and outputs with their byte sizes.
#pragma once

#include <cstddef>
#include <string>

#include "rig/device.hpp"

namespace rig {

// "PATH" then one line per tensor: direction, name, type, shape, bytes.
std::string format_model_text(const std::string& path, const ModelInfo& model);

// "wrote PATH (SIZE): in BYTES, out BYTES" for a model rig built.
std::string format_model_written_text(const std::string& path, size_t file_bytes,
                                      const ModelInfo& model);

}  // namespace rig

// Helpers shared by the model builders and the inspector: ONNX element type
// mapping and protobuf (de)serialization. Internal to rig_model.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "rig/device.hpp"
#include "rig/error.hpp"

namespace rig::onnx_util {

// TensorProto::DataType for a rig element type.
int32_t to_onnx(ElementType t);
// The rig element type for a TensorProto::DataType; nullopt for types rig
// cannot size (string, complex, bfloat16, ...).
std::optional<ElementType> from_onnx(int32_t data_type);

// Parses serialized ONNX; invalid_argument when the bytes are not a model.
Result<onnx::ModelProto> parse_model(std::span<const std::byte> bytes);

std::vector<std::byte> serialize(const onnx::ModelProto& model);

// Attribute values that shape inference and OpenCV divide by or index with,
// checked in every node of every (sub)graph (crafted values crash libonnx).
Result<void> check_attributes(const onnx::GraphProto& graph, int depth = 0);

// ONNX shape inference in a child process: libonnx crashes on some malformed
// graphs, and a crash there must be an error, not rig's death.
// With data propagation, shapes computed in the graph (Shape -> Gather ->
// Concat -> Reshape) are followed too.
Result<void> infer_shapes_isolated(onnx::ModelProto& model, bool data_propagation = false);

}  // namespace rig::onnx_util

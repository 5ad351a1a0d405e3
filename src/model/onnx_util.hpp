// Helpers shared by the model builders and the inspector: ONNX element type
// mapping and protobuf (de)serialization. Internal to rig_model.
#pragma once

#include <cstddef>
#include <functional>
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

// Parses serialized ONNX; invalid_argument when the bytes are not a model,
// when messages nest deeper than kMaxMessageNesting, or when a tensor's data
// does not match its declared shape and type (check_tensor_data): every reader
// of a model goes through here, so no backend ever sees such a tensor.
Result<onnx::ModelProto> parse_model(std::span<const std::byte> bytes);

// Protobuf's nesting limit for parsing a model (its default is 100, which a
// model of 34 nested If bodies exceeds); deeper subgraphs are then refused by
// kMaxSubgraphDepth with a message that names the limit.
inline constexpr int kMaxMessageNesting = 400;
inline constexpr int kMaxSubgraphDepth = 16;

// Every tensor a graph carries (initializers, sparse initializers, tensors in
// node attributes such as Constant's value), in every subgraph: its data type
// known, its dimensions non-negative, and its data - raw_data or the one typed
// field its type uses - exactly as many bytes or elements as the dimensions
// declare. External data is refused (rig loads single-file models). OpenCV's
// importer trusts the declared shape and copies that many bytes from the data
// it finds, so a mismatch would read past the buffer. invalid_argument (or
// unsupported for external data), naming the tensor, what it declares and
// what it holds.
Result<void> check_tensor_data(const onnx::GraphProto& graph, int depth = 0);

std::vector<std::byte> serialize(const onnx::ModelProto& model);

// Attribute values that shape inference and OpenCV divide by or index with,
// checked in every node of every (sub)graph (crafted values crash libonnx).
Result<void> check_attributes(const onnx::GraphProto& graph, int depth = 0);

// ONNX shape inference in a child process: libonnx crashes on some malformed
// graphs, and a crash there must be an error, not rig's death; a graph that
// makes it loop is killed at the deadline (shape_inference_timeout), a
// timeout error "ONNX shape inference did not finish within ...".
// With data propagation, shapes computed in the graph (Shape -> Gather ->
// Concat -> Reshape) are followed too.
Result<void> infer_shapes_isolated(onnx::ModelProto& model, bool data_propagation = false);

// The deadline of the shape-inference child: 30 s by default, else
// $RIG_SHAPE_INFERENCE_TIMEOUT (a duration, e.g. 5s) read at first use, else
// what set_shape_inference_timeout() last set (> 0). Thread-safe.
Nanos shape_inference_timeout();
void set_shape_inference_timeout(Nanos timeout);

// The isolation itself, what infer_shapes_isolated runs its body in: `body`
// runs in a forked child with the fatal signals at their default action (a
// crash kills the child, and no handler the parent installed - a fuzzer's,
// a crash reporter's - runs in it, so a contained crash is no finding); its
// result comes back through a pipe. The child is killed (SIGKILL) when it has
// not finished within `timeout`: a timeout error naming `what`. A crash is
// unsupported, naming the signal. Exposed for the tests' children that never
// finish or crash.
Result<std::string> run_in_child(const std::function<std::string()>& body, Nanos timeout,
                                 const std::string& what);

}  // namespace rig::onnx_util

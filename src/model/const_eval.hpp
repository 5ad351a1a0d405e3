// Constant evaluation for the normalisation pass: the value of an ONNX node
// whose inputs are all known, computed exactly as the op defines it, for the
// ops that exporters emit around shapes. Internal to rig_model.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

namespace rig::const_eval {

// A constant tensor: element type (TensorProto::DataType), dimensions and the
// elements in row-major order, little-endian, as TensorProto raw_data holds them.
struct Value {
  int32_t type = 0;
  std::vector<int64_t> dims;
  std::string raw;

  uint64_t count() const;
};

// Byte size of one element; 0 for types the evaluator does not handle.
size_t element_size(int32_t type);

// The TensorProto's value; nullopt when its type or encoding is not handled
// or its data disagrees with its dimensions.
std::optional<Value> from_tensor(const onnx::TensorProto& tensor);
// A TensorProto named `name` holding `value` (raw_data; doubles as double_data,
// which OpenCV 4.6 reads).
onnx::TensorProto to_tensor(const Value& value, const std::string& name);

// What evaluating a node needs besides its constant inputs.
struct Context {
  int64_t opset = 13;
  // Static shape of each input by position (from shape inference), for Shape/Size.
  std::vector<std::optional<std::vector<int64_t>>> input_shapes;
  uint64_t max_elements = uint64_t{1} << 20;  // largest output folded
};

// Whether evaluate() knows the op (in the default domain).
bool foldable_op(const std::string& op_type);
// Shape and Size need only the input's shape, not its value.
bool needs_shape_only(const std::string& op_type);

// The node's outputs, or nullopt when it cannot be folded exactly (an input
// missing, a type or case not handled, an output over max_elements, a value
// the op leaves undefined such as an integer division by zero).
// `inputs[i]` is null for an absent optional input or a non-constant one.
std::optional<std::vector<Value>> evaluate(const onnx::NodeProto& node,
                                           const std::vector<const Value*>& inputs,
                                           const Context& context);

}  // namespace rig::const_eval

// What a model holds, read without loading it: the SHA-256 of its bytes (the
// identity results carry as model.sha256), and its weights' shapes and types
// from the ONNX graph's initializers.
//
// read_graph_weights walks the protobuf wire format of an ONNX ModelProto
// itself (ModelProto.graph = 7; GraphProto.node = 1, initializer = 5,
// input = 11, output = 12; TensorProto.dims = 1, data_type = 2,
// data_location = 14; NodeProto.op_type = 4, attribute = 5;
// AttributeProto.t = 5), skipping every tensor's data by seeking past it. So
// it reads only the graph's structure: an external-data model (weights in side
// files) needs only its .onnx file, and a file over protobuf's 2 GiB message
// limit is read in bounded memory. Lengths are checked against the enclosing
// message before anything is read; a truncated or malformed file is
// invalid_argument naming the byte offset. Initializers of subgraphs (If,
// Loop bodies) are not counted.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "rig/error.hpp"
#include "rig/sha256.hpp"

namespace rig {

// sha256_hex (rig/sha256.hpp) of a file's contents, read in chunks; not_found / io name the path.
Result<std::string> file_sha256(const std::string& path);

// The identity of a model for the record (ModelInfo::sha256): the SHA-256 of
// its bytes, or of its file; "" for a model the server loads by name or a
// file that cannot be read (the load reports that).
struct ModelSource;
std::string model_sha256(const ModelSource& source);

// Initializers of one ONNX data type.
struct WeightGroup {
  uint64_t tensors = 0;
  uint64_t elements = 0;
  uint64_t bytes = 0;     // at the stored type; 4-bit types rounded up per tensor
  bool floating = false;  // float, float16, bfloat16, double, float8 kinds
};

// A graph input or output as declared: its byte size when every dimension is
// a number (nullopt when a dimension is symbolic or the type is not a tensor).
struct GraphTensor {
  std::string name;
  std::optional<uint64_t> bytes;
};

struct GraphWeights {
  uint64_t tensors = 0;           // initializers and Constant-node tensors
  uint64_t parameters = 0;        // their elements
  uint64_t float_parameters = 0;  // elements of floating-point type: what quantization shrinks
  uint64_t stored_bytes = 0;      // every tensor at its stored type
  uint64_t non_float_bytes = 0;   // the integer / bool tensors at their stored type
  uint64_t external_tensors = 0;  // data_location EXTERNAL: the data is in side files
  uint64_t constant_tensors = 0;  // of `tensors`, held by Constant nodes
  std::map<std::string, WeightGroup> by_type;  // "float32", "bfloat16", ...
  std::vector<GraphTensor> inputs;             // real inputs (initializers excluded)
  std::vector<GraphTensor> outputs;
};

// From a file (read in place, in bounded memory) or from bytes in memory.
Result<GraphWeights> read_graph_weights(const std::string& path);
Result<GraphWeights> read_graph_weights(std::span<const std::byte> bytes);

}  // namespace rig

// The check every model read passes before any backend sees it
// (check_tensor_data, model/onnx_util.hpp): each tensor's data, raw or in its
// typed field, holds exactly what its declared type and shape say, in every
// initializer, sparse initializer and attribute of every (sub)graph.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "model/onnx_util.hpp"
#include "rig/units.hpp"

namespace rig {
namespace onnx_util {

namespace {

// How a TensorProto.DataType is stored: bits per element (0: not a fixed
// size), the typed field its values go in, and values per element there.
enum class TypedField {
  none,
  float_data,
  int32_data,
  int64_data,
  double_data,
  uint64_data,
  string_data
};
struct Storage {
  const char* name;
  unsigned bits;
  TypedField field;
  unsigned per_element;  // values in the typed field per element (complex: 2)
};

std::optional<Storage> storage_of(int32_t data_type) {
  switch (data_type) {
    case 1:
      return Storage{"float32", 32, TypedField::float_data, 1};
    case 2:
      return Storage{"uint8", 8, TypedField::int32_data, 1};
    case 3:
      return Storage{"int8", 8, TypedField::int32_data, 1};
    case 4:
      return Storage{"uint16", 16, TypedField::int32_data, 1};
    case 5:
      return Storage{"int16", 16, TypedField::int32_data, 1};
    case 6:
      return Storage{"int32", 32, TypedField::int32_data, 1};
    case 7:
      return Storage{"int64", 64, TypedField::int64_data, 1};
    case 8:
      return Storage{"string", 0, TypedField::string_data, 1};
    case 9:
      return Storage{"bool", 8, TypedField::int32_data, 1};
    case 10:
      return Storage{"float16", 16, TypedField::int32_data, 1};
    case 11:
      return Storage{"float64", 64, TypedField::double_data, 1};
    case 12:
      return Storage{"uint32", 32, TypedField::uint64_data, 1};
    case 13:
      return Storage{"uint64", 64, TypedField::uint64_data, 1};
    case 14:
      return Storage{"complex64", 64, TypedField::float_data, 2};
    case 15:
      return Storage{"complex128", 128, TypedField::double_data, 2};
    case 16:
      return Storage{"bfloat16", 16, TypedField::int32_data, 1};
    case 17:
    case 18:
    case 19:
    case 20:
      return Storage{"float8", 8, TypedField::int32_data, 1};
    default:
      return std::nullopt;  // undefined, or a type newer than rig knows (int4, ...)
  }
}

const char* field_name(TypedField f) {
  switch (f) {
    case TypedField::float_data:
      return "float_data";
    case TypedField::int32_data:
      return "int32_data";
    case TypedField::int64_data:
      return "int64_data";
    case TypedField::double_data:
      return "double_data";
    case TypedField::uint64_data:
      return "uint64_data";
    case TypedField::string_data:
      return "string_data";
    case TypedField::none:
      break;
  }
  return "no field";
}

uint64_t field_size(const onnx::TensorProto& t, TypedField f) {
  switch (f) {
    case TypedField::float_data:
      return static_cast<uint64_t>(t.float_data_size());
    case TypedField::int32_data:
      return static_cast<uint64_t>(t.int32_data_size());
    case TypedField::int64_data:
      return static_cast<uint64_t>(t.int64_data_size());
    case TypedField::double_data:
      return static_cast<uint64_t>(t.double_data_size());
    case TypedField::uint64_data:
      return static_cast<uint64_t>(t.uint64_data_size());
    case TypedField::string_data:
      return static_cast<uint64_t>(t.string_data_size());
    case TypedField::none:
      break;
  }
  return 0;
}

// Elements beyond this cannot be in a model under protobuf's 2 GiB; the cap
// keeps the products below exact.
constexpr uint64_t kMaxTensorElements = uint64_t{1} << 40;

Result<void> check_tensor(const onnx::TensorProto& t, const std::string& what) {
  const std::string who = what + " '" + t.name() + "'";
  auto refuse = [&](const std::string& why) {
    return fail(
        ErrorCode::invalid_argument,
        who + " " + why + ": refused before any device reads it (a crafted or truncated model)");
  };
  if (t.data_location() == onnx::TensorProto::EXTERNAL || t.external_data_size() > 0) {
    std::string file;
    for (const auto& kv : t.external_data())
      if (kv.key() == "location") file = " (in '" + kv.value() + "')";
    return fail(ErrorCode::unsupported,
                who + " keeps its data outside the model file" + file +
                    ": ONNX external data is not supported; rig loads single-file models "
                    "(under protobuf's 2 GiB)");
  }
  const auto storage = storage_of(t.data_type());
  if (!storage)
    return refuse("has data type " + std::to_string(t.data_type()) + ", which rig does not know");
  uint64_t elements = 1;
  std::string dims;
  for (int64_t d : t.dims()) {
    dims += (dims.empty() ? "" : "x") + std::to_string(d);
    if (d < 0) return refuse("declares dimension " + std::to_string(d) + " (negative)");
    if (d != 0 && elements > kMaxTensorElements / static_cast<uint64_t>(d))
      return refuse("declares more than 2^40 elements");
    elements *= static_cast<uint64_t>(d);
  }
  if (dims.empty()) dims = "scalar";
  const std::string declared = std::to_string(elements) + " " + storage->name + " element" +
                               (elements == 1 ? "" : "s") + " (" + dims + ")";
  const TypedField field = storage->field;
  std::vector<TypedField> typed_used;
  for (TypedField f : {TypedField::float_data, TypedField::int32_data, TypedField::int64_data,
                       TypedField::double_data, TypedField::uint64_data, TypedField::string_data})
    if (field_size(t, f) > 0) typed_used.push_back(f);
  if (t.has_raw_data()) {
    if (!typed_used.empty())
      return refuse("holds both raw_data and " + std::string(field_name(typed_used.front())));
    if (storage->bits == 0)
      return refuse("is of type " + std::string(storage->name) + " but holds raw_data");
    const uint64_t want = elements * storage->bits / 8;
    if (t.raw_data().size() != want)
      return refuse("declares " + declared + " = " + std::to_string(want) +
                    " bytes, but its raw_data holds " + std::to_string(t.raw_data().size()) +
                    " bytes");
    return {};
  }
  for (TypedField f : typed_used)
    if (f != field)
      return refuse("is of type " + std::string(storage->name) + " but holds " + field_name(f) +
                    " (its values belong in " + field_name(field) + ")");
  const uint64_t want = elements * storage->per_element;
  const uint64_t have = field_size(t, field);
  if (have != want)
    return refuse("declares " + declared + ", but its " + field_name(field) + " holds " +
                  std::to_string(have) + " value" + (have == 1 ? "" : "s") +
                  (want != elements ? " (" + std::to_string(want) + " expected)" : ""));
  return {};
}

Result<void> check_sparse(const onnx::SparseTensorProto& s, const std::string& what) {
  if (auto ok = check_tensor(s.values(), what + " values"); !ok) return ok;
  return check_tensor(s.indices(), what + " indices");
}

}  // namespace

Result<void> check_tensor_data(const onnx::GraphProto& graph, int depth) {
  if (depth > kMaxSubgraphDepth)
    return fail(ErrorCode::unsupported, "subgraphs (If, Loop, Scan bodies) nest deeper than " +
                                            std::to_string(kMaxSubgraphDepth) +
                                            " levels, rig's limit");
  for (const auto& t : graph.initializer())
    if (auto ok = check_tensor(t, "initializer"); !ok) return ok;
  for (const auto& s : graph.sparse_initializer())
    if (auto ok = check_sparse(s, "sparse initializer"); !ok) return ok;
  for (const auto& node : graph.node()) {
    const std::string where = "node '" + node.name() + "' (" + node.op_type() + ") attribute ";
    for (const auto& attr : node.attribute()) {
      if (attr.has_t())
        if (auto ok = check_tensor(attr.t(), where + attr.name() + ": tensor"); !ok) return ok;
      for (const auto& t : attr.tensors())
        if (auto ok = check_tensor(t, where + attr.name() + ": tensor"); !ok) return ok;
      if (attr.has_sparse_tensor())
        if (auto ok = check_sparse(attr.sparse_tensor(), where + attr.name() + ": sparse tensor");
            !ok)
          return ok;
      for (const auto& s : attr.sparse_tensors())
        if (auto ok = check_sparse(s, where + attr.name() + ": sparse tensor"); !ok) return ok;
      if (attr.has_g())
        if (auto ok = check_tensor_data(attr.g(), depth + 1); !ok) return ok;
      for (const auto& g : attr.graphs())
        if (auto ok = check_tensor_data(g, depth + 1); !ok) return ok;
    }
  }
  return {};
}

}  // namespace onnx_util
}  // namespace rig

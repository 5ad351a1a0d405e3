// Constant evaluation of the ops exporters emit around shapes (see
// const_eval.hpp). Every case that ONNX leaves undefined, or that this code
// does not compute exactly as the op defines it, returns nullopt: the node is
// then left in the graph, never folded into something else.
//
// One file on purpose: one evaluator, a function per op over the same small
// tensor type and the same exactness rules; the ops have no other user.
#include "model/const_eval.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>

namespace rig::const_eval {
namespace {

using TP = onnx::TensorProto;

bool is_integer(int32_t t) {
  switch (t) {
    case TP::INT8:
    case TP::INT16:
    case TP::INT32:
    case TP::INT64:
    case TP::UINT8:
    case TP::UINT16:
    case TP::UINT32:
    case TP::UINT64:
    case TP::BOOL:
      return true;
    default:
      return false;
  }
}
bool is_real(int32_t t) {
  return t == TP::FLOAT || t == TP::DOUBLE;
}

std::optional<uint64_t> product(const std::vector<int64_t>& dims) {
  uint64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) return std::nullopt;
    if (__builtin_mul_overflow(n, static_cast<uint64_t>(d), &n)) return std::nullopt;
  }
  return n;
}

int64_t get_int(const Value& v, uint64_t i) {
  const char* p = v.raw.data() + i * element_size(v.type);
  switch (v.type) {
    case TP::INT8: {
      int8_t x;
      std::memcpy(&x, p, 1);
      return x;
    }
    case TP::UINT8:
    case TP::BOOL: {
      uint8_t x;
      std::memcpy(&x, p, 1);
      return x;
    }
    case TP::INT16: {
      int16_t x;
      std::memcpy(&x, p, 2);
      return x;
    }
    case TP::UINT16: {
      uint16_t x;
      std::memcpy(&x, p, 2);
      return x;
    }
    case TP::INT32: {
      int32_t x;
      std::memcpy(&x, p, 4);
      return x;
    }
    case TP::UINT32: {
      uint32_t x;
      std::memcpy(&x, p, 4);
      return x;
    }
    case TP::INT64:
    case TP::UINT64: {
      int64_t x;
      std::memcpy(&x, p, 8);
      return x;
    }
    default:
      return 0;
  }
}

double get_real(const Value& v, uint64_t i) {
  const char* p = v.raw.data() + i * element_size(v.type);
  if (v.type == TP::FLOAT) {
    float x;
    std::memcpy(&x, p, 4);
    return x;
  }
  if (v.type == TP::DOUBLE) {
    double x;
    std::memcpy(&x, p, 8);
    return x;
  }
  return static_cast<double>(get_int(v, i));
}

void put_int(Value& v, uint64_t i, int64_t x) {
  char* p = v.raw.data() + i * element_size(v.type);
  switch (v.type) {
    case TP::INT8:
    case TP::UINT8: {
      auto b = static_cast<uint8_t>(x);
      std::memcpy(p, &b, 1);
      return;
    }
    case TP::BOOL: {
      uint8_t b = x != 0 ? 1 : 0;
      std::memcpy(p, &b, 1);
      return;
    }
    case TP::INT16:
    case TP::UINT16: {
      auto h = static_cast<uint16_t>(x);
      std::memcpy(p, &h, 2);
      return;
    }
    case TP::INT32:
    case TP::UINT32: {
      auto w = static_cast<uint32_t>(x);
      std::memcpy(p, &w, 4);
      return;
    }
    default:
      std::memcpy(p, &x, 8);
  }
}

void put_real(Value& v, uint64_t i, double x) {
  char* p = v.raw.data() + i * element_size(v.type);
  if (v.type == TP::FLOAT) {
    auto f = static_cast<float>(x);
    std::memcpy(p, &f, 4);
  } else {
    std::memcpy(p, &x, 8);
  }
}

Value make(int32_t type, std::vector<int64_t> dims) {
  Value v;
  v.type = type;
  v.dims = std::move(dims);
  v.raw.assign(v.count() * element_size(type), '\0');
  return v;
}

const onnx::AttributeProto* attr(const onnx::NodeProto& node, const std::string& name) {
  for (const auto& a : node.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

int64_t int_attr(const onnx::NodeProto& node, const std::string& name, int64_t fallback) {
  const auto* a = attr(node, name);
  return a && a->type() == onnx::AttributeProto::INT ? a->i() : fallback;
}

std::optional<std::vector<int64_t>> ints_attr(const onnx::NodeProto& node,
                                              const std::string& name) {
  const auto* a = attr(node, name);
  if (!a || a->type() != onnx::AttributeProto::INTS) return std::nullopt;
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

// A 1-D (or scalar) integer value as a list.
std::optional<std::vector<int64_t>> as_ints(const Value* v) {
  if (!v || !is_integer(v->type) || v->type == TP::BOOL || v->dims.size() > 1) return std::nullopt;
  std::vector<int64_t> out(v->count());
  for (uint64_t i = 0; i < out.size(); ++i) out[i] = get_int(*v, i);
  return out;
}

std::optional<int64_t> normalize_axis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

std::vector<uint64_t> strides_of(const std::vector<int64_t>& dims) {
  std::vector<uint64_t> s(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) s[i - 1] = s[i] * static_cast<uint64_t>(dims[i]);
  return s;
}

// Numpy broadcasting of two shapes; nullopt when they do not broadcast.
std::optional<std::vector<int64_t>> broadcast(const std::vector<int64_t>& a,
                                              const std::vector<int64_t>& b) {
  const size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) return std::nullopt;
    out[i] = da == 1 ? db : da;
  }
  return out;
}

// For each flat index of `out`, the flat index into a value of `in` dims
// broadcast to it.
class BroadcastIndex {
 public:
  BroadcastIndex(const std::vector<int64_t>& in, const std::vector<int64_t>& out)
      : out_(out), strides_(out.size(), 0) {
    const auto in_strides = strides_of(in);
    const size_t offset = out.size() - in.size();
    for (size_t i = 0; i < in.size(); ++i) strides_[offset + i] = in[i] == 1 ? 0 : in_strides[i];
  }
  uint64_t operator()(uint64_t flat) const {
    uint64_t index = 0;
    for (size_t i = out_.size(); i-- > 0;) {
      const auto d = static_cast<uint64_t>(out_[i]);
      index += (flat % d) * strides_[i];
      flat /= d;
    }
    return index;
  }

 private:
  std::vector<int64_t> out_;
  std::vector<uint64_t> strides_;
};

bool too_big(const std::vector<int64_t>& dims, const Context& c) {
  auto n = product(dims);
  return !n || *n > c.max_elements;
}

using Out = std::optional<std::vector<Value>>;

Out one(Value v) {
  return std::vector<Value>{std::move(v)};
}

Out reshaped(const Value& data, std::vector<int64_t> dims, const Context& c) {
  auto n = product(dims);
  if (!n || *n != data.count() || too_big(dims, c)) return std::nullopt;
  Value v = data;
  v.dims = std::move(dims);
  return one(std::move(v));
}

Out eval_constant(const onnx::NodeProto& node) {
  if (node.attribute_size() != 1) return std::nullopt;
  const auto& a = node.attribute(0);
  if (a.name() == "value") {
    auto v = from_tensor(a.t());
    if (!v) return std::nullopt;
    return one(std::move(*v));
  }
  if (a.name() == "value_float" || a.name() == "value_floats") {
    const bool scalar = a.name() == "value_float";
    Value v =
        make(TP::FLOAT, scalar ? std::vector<int64_t>{} : std::vector<int64_t>{a.floats_size()});
    if (scalar) put_real(v, 0, a.f());
    for (int i = 0; !scalar && i < a.floats_size(); ++i)
      put_real(v, static_cast<uint64_t>(i), a.floats(i));
    return one(std::move(v));
  }
  if (a.name() == "value_int" || a.name() == "value_ints") {
    const bool scalar = a.name() == "value_int";
    Value v =
        make(TP::INT64, scalar ? std::vector<int64_t>{} : std::vector<int64_t>{a.ints_size()});
    if (scalar) put_int(v, 0, a.i());
    for (int i = 0; !scalar && i < a.ints_size(); ++i)
      put_int(v, static_cast<uint64_t>(i), a.ints(i));
    return one(std::move(v));
  }
  return std::nullopt;  // sparse and string constants are left alone
}

Out eval_shape(const onnx::NodeProto& node, const std::vector<int64_t>& shape, bool size) {
  if (size) {
    auto n = product(shape);
    if (!n || *n > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
    Value v = make(TP::INT64, {});
    put_int(v, 0, static_cast<int64_t>(*n));
    return one(std::move(v));
  }
  const auto rank = static_cast<int64_t>(shape.size());
  int64_t start = int_attr(node, "start", 0), end = int_attr(node, "end", rank);
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, 0, rank);
  const int64_t n = std::max<int64_t>(0, end - start);
  Value v = make(TP::INT64, {n});
  for (int64_t i = 0; i < n; ++i)
    put_int(v, static_cast<uint64_t>(i), shape[static_cast<size_t>(start + i)]);
  return one(std::move(v));
}

Out eval_gather(const onnx::NodeProto& node, const Value& data, const Value& indices,
                const Context& c) {
  if (!is_integer(indices.type) || indices.type == TP::BOOL) return std::nullopt;
  const auto rank = static_cast<int64_t>(data.dims.size());
  if (rank == 0) return std::nullopt;
  auto axis = normalize_axis(int_attr(node, "axis", 0), rank);
  if (!axis) return std::nullopt;
  const auto a = static_cast<size_t>(*axis);
  std::vector<int64_t> dims(data.dims.begin(), data.dims.begin() + *axis);
  dims.insert(dims.end(), indices.dims.begin(), indices.dims.end());
  dims.insert(dims.end(), data.dims.begin() + *axis + 1, data.dims.end());
  if (too_big(dims, c)) return std::nullopt;
  uint64_t outer = 1, inner = 1;
  for (size_t i = 0; i < a; ++i) outer *= static_cast<uint64_t>(data.dims[i]);
  for (size_t i = a + 1; i < data.dims.size(); ++i) inner *= static_cast<uint64_t>(data.dims[i]);
  const int64_t extent = data.dims[a];
  const size_t es = element_size(data.type);
  Value out = make(data.type, dims);
  uint64_t o = 0;
  for (uint64_t x = 0; x < outer; ++x)
    for (uint64_t k = 0; k < indices.count(); ++k) {
      int64_t idx = get_int(indices, k);
      if (idx < 0) idx += extent;
      if (idx < 0 || idx >= extent) return std::nullopt;
      const uint64_t src = (x * static_cast<uint64_t>(extent) + static_cast<uint64_t>(idx)) * inner;
      std::memcpy(out.raw.data() + o * es, data.raw.data() + src * es, inner * es);
      o += inner;
    }
  return one(std::move(out));
}

Out eval_slice(const onnx::NodeProto& node, const std::vector<const Value*>& in, const Context& c) {
  const Value& data = *in[0];
  const auto rank = static_cast<int64_t>(data.dims.size());
  std::optional<std::vector<int64_t>> starts, ends, axes, steps;
  if (c.opset < 10) {
    starts = ints_attr(node, "starts");
    ends = ints_attr(node, "ends");
    axes = ints_attr(node, "axes");
  } else {
    if (in.size() < 3) return std::nullopt;
    starts = as_ints(in[1]);
    ends = as_ints(in[2]);
    if (in.size() > 3 && node.input(3).size()) {
      axes = as_ints(in[3]);
      if (!axes) return std::nullopt;
    }
    if (in.size() > 4 && node.input(4).size()) {
      steps = as_ints(in[4]);
      if (!steps) return std::nullopt;
    }
  }
  if (!starts || !ends || starts->size() != ends->size()) return std::nullopt;
  if (!axes) {
    axes.emplace();
    for (size_t i = 0; i < starts->size(); ++i) axes->push_back(static_cast<int64_t>(i));
  }
  if (!steps) steps = std::vector<int64_t>(starts->size(), 1);
  if (axes->size() != starts->size() || steps->size() != starts->size()) return std::nullopt;
  std::vector<int64_t> begin(static_cast<size_t>(rank), 0), step(static_cast<size_t>(rank), 1),
      dims = data.dims;
  std::set<int64_t> seen;
  for (size_t i = 0; i < axes->size(); ++i) {
    auto axis = normalize_axis((*axes)[i], rank);
    if (!axis || !seen.insert(*axis).second) return std::nullopt;
    const int64_t d = data.dims[static_cast<size_t>(*axis)], s = (*steps)[i];
    if (s == 0) return std::nullopt;
    int64_t b = (*starts)[i], e = (*ends)[i];
    if (b < 0) b += d;
    if (e < 0) e += d;
    int64_t n;
    if (s > 0) {
      b = std::clamp<int64_t>(b, 0, d);
      e = std::clamp<int64_t>(e, 0, d);
      n = e > b ? (e - b + s - 1) / s : 0;
    } else {
      b = std::clamp<int64_t>(b, 0, d - 1);
      e = std::clamp<int64_t>(e, -1, d - 1);
      n = b > e ? (b - e + (-s) - 1) / (-s) : 0;
    }
    begin[static_cast<size_t>(*axis)] = b;
    step[static_cast<size_t>(*axis)] = s;
    dims[static_cast<size_t>(*axis)] = n;
  }
  if (too_big(dims, c)) return std::nullopt;
  Value out = make(data.type, dims);
  const auto in_strides = strides_of(data.dims);
  const size_t es = element_size(data.type);
  for (uint64_t flat = 0; flat < out.count(); ++flat) {
    uint64_t rest = flat, src = 0;
    for (size_t i = dims.size(); i-- > 0;) {
      const auto d = static_cast<uint64_t>(dims[i]);
      const auto k = static_cast<int64_t>(rest % d);
      rest /= d;
      src += static_cast<uint64_t>(begin[i] + k * step[i]) * in_strides[i];
    }
    std::memcpy(out.raw.data() + flat * es, data.raw.data() + src * es, es);
  }
  return one(std::move(out));
}

Out eval_squeeze(const onnx::NodeProto& node, const std::vector<const Value*>& in, bool unsqueeze,
                 const Context& c) {
  const Value& data = *in[0];
  std::optional<std::vector<int64_t>> axes;
  if (c.opset >= 13) {
    if (in.size() > 1 && node.input(1).size()) {
      axes = as_ints(in[1]);
      if (!axes) return std::nullopt;
    }
  } else {
    axes = ints_attr(node, "axes");
  }
  if (unsqueeze) {
    if (!axes) return std::nullopt;
    const auto rank = static_cast<int64_t>(data.dims.size() + axes->size());
    std::vector<bool> inserted(static_cast<size_t>(rank), false);
    for (int64_t a : *axes) {
      auto axis = normalize_axis(a, rank);
      if (!axis || inserted[static_cast<size_t>(*axis)]) return std::nullopt;
      inserted[static_cast<size_t>(*axis)] = true;
    }
    std::vector<int64_t> dims;
    size_t k = 0;
    for (int64_t i = 0; i < rank; ++i)
      dims.push_back(inserted[static_cast<size_t>(i)] ? 1 : data.dims[k++]);
    return reshaped(data, std::move(dims), c);
  }
  const auto rank = static_cast<int64_t>(data.dims.size());
  std::vector<bool> drop(data.dims.size(), false);
  if (!axes) {
    for (size_t i = 0; i < data.dims.size(); ++i) drop[i] = data.dims[i] == 1;
  } else {
    for (int64_t a : *axes) {
      auto axis = normalize_axis(a, rank);
      if (!axis || data.dims[static_cast<size_t>(*axis)] != 1) return std::nullopt;
      drop[static_cast<size_t>(*axis)] = true;
    }
  }
  std::vector<int64_t> dims;
  for (size_t i = 0; i < data.dims.size(); ++i)
    if (!drop[i]) dims.push_back(data.dims[i]);
  return reshaped(data, std::move(dims), c);
}

Out eval_reshape(const onnx::NodeProto& node, const Value& data, const Value* shape_value,
                 const Context& c) {
  auto shape = as_ints(shape_value);
  if (!shape) return std::nullopt;
  const bool allowzero = int_attr(node, "allowzero", 0) != 0;
  std::vector<int64_t> dims;
  int infer = -1;
  for (size_t i = 0; i < shape->size(); ++i) {
    int64_t d = (*shape)[i];
    if (d == 0 && !allowzero) {
      if (i >= data.dims.size()) return std::nullopt;
      d = data.dims[i];
    } else if (d == -1) {
      if (infer >= 0) return std::nullopt;
      infer = static_cast<int>(i);
      d = 1;
    } else if (d < 0) {
      return std::nullopt;
    }
    dims.push_back(d);
  }
  if (infer >= 0) {
    auto known = product(dims);
    if (!known || *known == 0 || data.count() % *known != 0) return std::nullopt;
    dims[static_cast<size_t>(infer)] = static_cast<int64_t>(data.count() / *known);
  }
  return reshaped(data, std::move(dims), c);
}

Out eval_expand(const Value& data, const Value* shape_value, const Context& c) {
  auto shape = as_ints(shape_value);
  if (!shape) return std::nullopt;
  for (int64_t d : *shape)
    if (d < 0) return std::nullopt;
  auto dims = broadcast(data.dims, *shape);
  if (!dims || too_big(*dims, c)) return std::nullopt;
  Value out = make(data.type, *dims);
  const BroadcastIndex index(data.dims, *dims);
  const size_t es = element_size(data.type);
  for (uint64_t i = 0; i < out.count(); ++i)
    std::memcpy(out.raw.data() + i * es, data.raw.data() + index(i) * es, es);
  return one(std::move(out));
}

Out eval_concat(const onnx::NodeProto& node, const std::vector<const Value*>& in,
                const Context& c) {
  if (in.empty() || !in[0]) return std::nullopt;
  const auto rank = static_cast<int64_t>(in[0]->dims.size());
  auto axis = normalize_axis(int_attr(node, "axis", 0), rank);
  if (!axis) return std::nullopt;
  const auto a = static_cast<size_t>(*axis);
  std::vector<int64_t> dims = in[0]->dims;
  dims[a] = 0;
  for (const Value* v : in) {
    if (!v || v->type != in[0]->type || v->dims.size() != in[0]->dims.size()) return std::nullopt;
    for (size_t i = 0; i < dims.size(); ++i)
      if (i != a && v->dims[i] != in[0]->dims[i]) return std::nullopt;
    dims[a] += v->dims[a];
  }
  if (too_big(dims, c)) return std::nullopt;
  uint64_t outer = 1;
  for (size_t i = 0; i < a; ++i) outer *= static_cast<uint64_t>(dims[i]);
  Value out = make(in[0]->type, dims);
  const size_t es = element_size(out.type);
  uint64_t o = 0;
  for (uint64_t x = 0; x < outer; ++x)
    for (const Value* v : in) {
      const uint64_t block = outer == 0 ? 0 : v->count() / outer;
      std::memcpy(out.raw.data() + o * es, v->raw.data() + x * block * es, block * es);
      o += block;
    }
  return one(std::move(out));
}

Out eval_cast(const onnx::NodeProto& node, const Value& data) {
  const auto to = static_cast<int32_t>(int_attr(node, "to", 0));
  if (element_size(to) == 0 || to == TP::FLOAT16 || data.type == TP::FLOAT16) return std::nullopt;
  Value out = make(to, data.dims);
  for (uint64_t i = 0; i < data.count(); ++i) {
    if (is_integer(to)) {
      if (is_real(data.type)) {
        // Float to integer truncates; out-of-range and NaN are undefined.
        const double x = get_real(data, i);
        if (!std::isfinite(x) || std::abs(x) >= 9.2e18) return std::nullopt;
        put_int(out, i, to == TP::BOOL ? (x != 0 ? 1 : 0) : static_cast<int64_t>(std::trunc(x)));
      } else {
        const int64_t x = get_int(data, i);
        put_int(out, i, to == TP::BOOL ? (x != 0 ? 1 : 0) : x);
      }
    } else if (data.type == TP::UINT64) {
      put_real(out, i, static_cast<double>(static_cast<uint64_t>(get_int(data, i))));
    } else if (is_integer(data.type) && to == TP::FLOAT) {
      // int64 -> float rounds once, as a direct conversion does.
      char* p = out.raw.data() + i * 4;
      auto f = static_cast<float>(get_int(data, i));
      std::memcpy(p, &f, 4);
    } else {
      put_real(out, i, get_real(data, i));
    }
  }
  return one(std::move(out));
}

Out eval_constant_of_shape(const onnx::NodeProto& node, const Value* shape_value,
                           const Context& c) {
  auto shape = as_ints(shape_value);
  if (!shape) return std::nullopt;
  for (int64_t d : *shape)
    if (d < 0) return std::nullopt;
  if (too_big(*shape, c)) return std::nullopt;
  Value fill = make(TP::FLOAT, {1});
  if (const auto* a = attr(node, "value")) {
    auto v = from_tensor(a->t());
    if (!v || v->count() != 1) return std::nullopt;
    fill = *v;
  }
  Value out = make(fill.type, *shape);
  const size_t es = element_size(fill.type);
  for (uint64_t i = 0; i < out.count(); ++i)
    std::memcpy(out.raw.data() + i * es, fill.raw.data(), es);
  return one(std::move(out));
}

Out eval_range(const std::vector<const Value*>& in, const Context& c) {
  if (in.size() != 3) return std::nullopt;
  for (const Value* v : in)
    if (!v || v->count() != 1 || v->type != in[0]->type) return std::nullopt;
  const int32_t type = in[0]->type;
  if (type == TP::BOOL) return std::nullopt;
  if (is_integer(type)) {
    const int64_t start = get_int(*in[0], 0), limit = get_int(*in[1], 0),
                  delta = get_int(*in[2], 0);
    if (delta == 0) return std::nullopt;
    const double span =
        (static_cast<double>(limit) - static_cast<double>(start)) / static_cast<double>(delta);
    const auto n = static_cast<int64_t>(std::max(0.0, std::ceil(span)));
    if (too_big({n}, c)) return std::nullopt;
    Value out = make(type, {n});
    for (int64_t i = 0; i < n; ++i) put_int(out, static_cast<uint64_t>(i), start + i * delta);
    return one(std::move(out));
  }
  if (!is_real(type)) return std::nullopt;
  const double start = get_real(*in[0], 0), limit = get_real(*in[1], 0),
               delta = get_real(*in[2], 0);
  if (delta == 0 || !std::isfinite(start) || !std::isfinite(limit) || !std::isfinite(delta))
    return std::nullopt;
  const double span = std::ceil((limit - start) / delta);
  if (!(span < 1e9)) return std::nullopt;
  const auto n = static_cast<int64_t>(std::max(0.0, span));
  if (too_big({n}, c)) return std::nullopt;
  Value out = make(type, {n});
  for (int64_t i = 0; i < n; ++i) {
    if (type == TP::FLOAT) {
      // In the element type, as a runtime computes it.
      const float x = static_cast<float>(start) + static_cast<float>(i) * static_cast<float>(delta);
      std::memcpy(out.raw.data() + static_cast<size_t>(i) * 4, &x, 4);
    } else {
      put_real(out, static_cast<uint64_t>(i), start + static_cast<double>(i) * delta);
    }
  }
  return one(std::move(out));
}

enum class Bin { add, sub, mul, div, min, max, equal, less, greater, and_, or_ };

std::optional<Bin> binary_of(const std::string& op) {
  static const std::pair<const char*, Bin> table[] = {
      {"Add", Bin::add},         {"Sub", Bin::sub},  {"Mul", Bin::mul},     {"Div", Bin::div},
      {"Min", Bin::min},         {"Max", Bin::max},  {"Equal", Bin::equal}, {"Less", Bin::less},
      {"Greater", Bin::greater}, {"And", Bin::and_}, {"Or", Bin::or_}};
  for (const auto& [name, bin] : table)
    if (op == name) return bin;
  return std::nullopt;
}

bool compares(Bin b) {
  return b == Bin::equal || b == Bin::less || b == Bin::greater;
}

Out eval_binary(Bin op, const Value& a, const Value& b, const Context& c) {
  if (a.type != b.type) return std::nullopt;
  const int32_t type = a.type;
  const bool logical = op == Bin::and_ || op == Bin::or_;
  if (logical != (type == TP::BOOL)) return std::nullopt;
  if (!is_integer(type) && !is_real(type)) return std::nullopt;
  auto dims = broadcast(a.dims, b.dims);
  if (!dims || too_big(*dims, c)) return std::nullopt;
  Value out = make(compares(op) ? TP::BOOL : type, *dims);
  const BroadcastIndex ia(a.dims, *dims), ib(b.dims, *dims);
  for (uint64_t i = 0; i < out.count(); ++i) {
    if (is_real(type)) {
      // f32 arithmetic in f32: the same rounding as the runtime's.
      const double x = get_real(a, ia(i)), y = get_real(b, ib(i));
      const bool f32 = type == TP::FLOAT;
      auto arith = [&](double r, float rf) { put_real(out, i, f32 ? static_cast<double>(rf) : r); };
      const auto xf = static_cast<float>(x), yf = static_cast<float>(y);
      switch (op) {
        case Bin::add:
          arith(x + y, xf + yf);
          break;
        case Bin::sub:
          arith(x - y, xf - yf);
          break;
        case Bin::mul:
          arith(x * y, xf * yf);
          break;
        case Bin::div:
          arith(x / y, xf / yf);
          break;
        case Bin::min:
          if (std::isnan(x) || std::isnan(y)) return std::nullopt;
          put_real(out, i, std::min(x, y));
          break;
        case Bin::max:
          if (std::isnan(x) || std::isnan(y)) return std::nullopt;
          put_real(out, i, std::max(x, y));
          break;
        case Bin::equal:
          put_int(out, i, x == y);
          break;
        case Bin::less:
          put_int(out, i, x < y);
          break;
        case Bin::greater:
          put_int(out, i, x > y);
          break;
        default:
          return std::nullopt;
      }
      continue;
    }
    const int64_t x = get_int(a, ia(i)), y = get_int(b, ib(i));
    int64_t r = 0;
    switch (op) {
      case Bin::add:
        if (__builtin_add_overflow(x, y, &r)) return std::nullopt;
        break;
      case Bin::sub:
        if (__builtin_sub_overflow(x, y, &r)) return std::nullopt;
        break;
      case Bin::mul:
        if (__builtin_mul_overflow(x, y, &r)) return std::nullopt;
        break;
      case Bin::div:
        // Truncating and flooring division agree only without a remainder
        // or with operands of one sign; anything else is left to the runtime.
        if (y == 0 || (x == std::numeric_limits<int64_t>::min() && y == -1)) return std::nullopt;
        if (x % y != 0 && ((x < 0) != (y < 0))) return std::nullopt;
        r = x / y;
        break;
      case Bin::min:
        r = std::min(x, y);
        break;
      case Bin::max:
        r = std::max(x, y);
        break;
      case Bin::equal:
        r = x == y;
        break;
      case Bin::less:
        r = x < y;
        break;
      case Bin::greater:
        r = x > y;
        break;
      case Bin::and_:
        r = (x != 0) && (y != 0);
        break;
      case Bin::or_:
        r = (x != 0) || (y != 0);
        break;
    }
    if (!compares(op) && type != TP::INT64 && type != TP::BOOL) {
      // The result must fit the element type; wrap-around is not folded.
      Value probe = make(type, {});
      put_int(probe, 0, r);
      if (get_int(probe, 0) != r) return std::nullopt;
    }
    put_int(out, i, r);
  }
  return one(std::move(out));
}

Out eval_where(const Value& cond, const Value& x, const Value& y, const Context& c) {
  if (cond.type != TP::BOOL || x.type != y.type) return std::nullopt;
  auto d1 = broadcast(cond.dims, x.dims);
  if (!d1) return std::nullopt;
  auto dims = broadcast(*d1, y.dims);
  if (!dims || too_big(*dims, c)) return std::nullopt;
  Value out = make(x.type, *dims);
  const BroadcastIndex ic(cond.dims, *dims), ix(x.dims, *dims), iy(y.dims, *dims);
  const size_t es = element_size(x.type);
  for (uint64_t i = 0; i < out.count(); ++i) {
    const bool pick = get_int(cond, ic(i)) != 0;
    const Value& from = pick ? x : y;
    std::memcpy(out.raw.data() + i * es, from.raw.data() + (pick ? ix(i) : iy(i)) * es, es);
  }
  return one(std::move(out));
}

Out eval_unary(const std::string& op, const Value& x) {
  Value out = make(x.type, x.dims);
  for (uint64_t i = 0; i < x.count(); ++i) {
    if (op == "Not") {
      if (x.type != TP::BOOL) return std::nullopt;
      put_int(out, i, get_int(x, i) == 0);
    } else if (is_real(x.type)) {
      const double v = get_real(x, i);
      put_real(out, i, op == "Neg" ? -v : std::abs(v));
    } else if (is_integer(x.type) && x.type != TP::BOOL) {
      const int64_t v = get_int(x, i);
      if (v == std::numeric_limits<int64_t>::min()) return std::nullopt;
      const int64_t r = op == "Neg" ? -v : (v < 0 ? -v : v);
      Value probe = make(x.type, {});
      put_int(probe, 0, r);
      if (get_int(probe, 0) != r) return std::nullopt;
      put_int(out, i, r);
    } else {
      return std::nullopt;
    }
  }
  return one(std::move(out));
}

// Mod on integers: fmod=0 takes the divisor's sign (as Python's %), fmod=1
// the dividend's (as C's %). A zero divisor is left to the runtime; float
// Mod is not folded.
Out eval_mod(const onnx::NodeProto& node, const Value& a, const Value& b, const Context& c) {
  if (a.type != b.type || !is_integer(a.type) || a.type == TP::BOOL) return std::nullopt;
  const int64_t fmod = int_attr(node, "fmod", 0);
  if (fmod != 0 && fmod != 1) return std::nullopt;
  auto dims = broadcast(a.dims, b.dims);
  if (!dims || too_big(*dims, c)) return std::nullopt;
  Value out = make(a.type, *dims);
  const BroadcastIndex ia(a.dims, *dims), ib(b.dims, *dims);
  for (uint64_t i = 0; i < out.count(); ++i) {
    const int64_t x = get_int(a, ia(i)), y = get_int(b, ib(i));
    if (y == 0 || (x == std::numeric_limits<int64_t>::min() && y == -1)) return std::nullopt;
    int64_t r = x % y;
    if (fmod == 0 && r != 0 && ((r < 0) != (y < 0))) r += y;
    put_int(out, i, r);
  }
  return one(std::move(out));
}

// Transpose: `perm` (default: the axes reversed), any element type.
Out eval_transpose(const onnx::NodeProto& node, const Value& x, const Context& c) {
  const size_t rank = x.dims.size();
  std::vector<int64_t> perm(rank);
  for (size_t i = 0; i < rank; ++i) perm[i] = static_cast<int64_t>(rank - 1 - i);
  if (attr(node, "perm")) {
    auto given = ints_attr(node, "perm");
    if (!given || given->size() != rank) return std::nullopt;
    perm = *given;
  }
  std::vector<bool> seen(rank, false);
  std::vector<int64_t> dims(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t p = perm[i];
    if (p < 0 || p >= static_cast<int64_t>(rank) || seen[static_cast<size_t>(p)])
      return std::nullopt;
    seen[static_cast<size_t>(p)] = true;
    dims[i] = x.dims[static_cast<size_t>(p)];
  }
  if (too_big(dims, c)) return std::nullopt;
  Value out = make(x.type, dims);
  const auto in_strides = strides_of(x.dims);
  const size_t es = element_size(x.type);
  for (uint64_t flat = 0; flat < out.count(); ++flat) {
    uint64_t rest = flat, src = 0;
    for (size_t i = rank; i-- > 0;) {
      const auto d = static_cast<uint64_t>(dims[i]);
      src += (rest % d) * in_strides[static_cast<size_t>(perm[i])];
      rest /= d;
    }
    std::memcpy(out.raw.data() + flat * es, x.raw.data() + src * es, es);
  }
  return one(std::move(out));
}

// ScatterND without reduction (opset 11 and 13; a `reduction` other than
// "none" is not folded): a copy of data with the slices that indices name
// replaced by updates. Duplicate indices, which ONNX leaves undefined, and
// indices out of range are left to the runtime.
Out eval_scatter_nd(const onnx::NodeProto& node, const Value& data, const Value& indices,
                    const Value& updates, const Context& c) {
  if (const auto* r = attr(node, "reduction"); r && r->s() != "none") return std::nullopt;
  if (indices.type != TP::INT64 || indices.dims.empty() || updates.type != data.type)
    return std::nullopt;
  const auto k = static_cast<size_t>(indices.dims.back());
  const size_t rank = data.dims.size();
  if (k < 1 || k > rank || too_big(data.dims, c)) return std::nullopt;
  std::vector<int64_t> want(indices.dims.begin(), indices.dims.end() - 1);
  want.insert(want.end(), data.dims.begin() + static_cast<int64_t>(k), data.dims.end());
  if (updates.dims != want) return std::nullopt;
  uint64_t slice = 1;
  for (size_t i = k; i < rank; ++i) slice *= static_cast<uint64_t>(data.dims[i]);
  const auto strides = strides_of(data.dims);
  const uint64_t tuples = k == 0 ? 0 : indices.count() / k;
  const size_t es = element_size(data.type);
  Value out = data;
  std::set<uint64_t> written;
  for (uint64_t t = 0; t < tuples; ++t) {
    uint64_t offset = 0;
    for (size_t j = 0; j < k; ++j) {
      int64_t idx = get_int(indices, t * k + j);
      if (idx < 0) idx += data.dims[j];
      if (idx < 0 || idx >= data.dims[j]) return std::nullopt;
      offset += static_cast<uint64_t>(idx) * strides[j];
    }
    if (!written.insert(offset).second) return std::nullopt;
    std::memcpy(out.raw.data() + offset * es, updates.raw.data() + t * slice * es, slice * es);
  }
  return one(std::move(out));
}

// Pow and Sqrt on floating-point constants (a scale such as head_dim ** -0.5).
// Sqrt is exact in IEEE arithmetic; Pow is computed in double and rounded
// once to the element type (within one unit in the last place of a float
// runtime's powf). Integer Pow is not folded.
Out eval_pow(const Value& a, const Value& b, const Context& c) {
  if (!is_real(a.type) || b.type != a.type) return std::nullopt;
  auto dims = broadcast(a.dims, b.dims);
  if (!dims || too_big(*dims, c)) return std::nullopt;
  Value out = make(a.type, *dims);
  const BroadcastIndex ia(a.dims, *dims), ib(b.dims, *dims);
  for (uint64_t i = 0; i < out.count(); ++i) {
    const double r = std::pow(get_real(a, ia(i)), get_real(b, ib(i)));
    if (!std::isfinite(r)) return std::nullopt;
    put_real(out, i, r);
  }
  return one(std::move(out));
}

Out eval_sqrt(const Value& x) {
  if (!is_real(x.type)) return std::nullopt;
  Value out = make(x.type, x.dims);
  for (uint64_t i = 0; i < x.count(); ++i) {
    const double v = get_real(x, i);
    if (!(v >= 0)) return std::nullopt;
    // sqrt of a float in float: the correctly rounded float result.
    put_real(
        out, i,
        x.type == TP::FLOAT ? static_cast<double>(std::sqrt(static_cast<float>(v))) : std::sqrt(v));
  }
  return one(std::move(out));
}

}  // namespace

uint64_t Value::count() const {
  return product(dims).value_or(0);
}

size_t element_size(int32_t type) {
  switch (type) {
    case TP::FLOAT:
    case TP::INT32:
    case TP::UINT32:
      return 4;
    case TP::DOUBLE:
    case TP::INT64:
    case TP::UINT64:
      return 8;
    case TP::INT16:
    case TP::UINT16:
    case TP::FLOAT16:
      return 2;
    case TP::INT8:
    case TP::UINT8:
    case TP::BOOL:
      return 1;
    default:
      return 0;
  }
}

std::optional<Value> from_tensor(const onnx::TensorProto& t) {
  const size_t es = element_size(t.data_type());
  if (es == 0 || t.data_location() == TP::EXTERNAL || t.has_segment()) return std::nullopt;
  Value v;
  v.type = t.data_type();
  v.dims.assign(t.dims().begin(), t.dims().end());
  auto n = product(v.dims);
  if (!n || *n > (uint64_t{1} << 31) / es) return std::nullopt;
  if (t.has_raw_data()) {
    if (t.raw_data().size() != *n * es) return std::nullopt;
    v.raw = t.raw_data();
    return v;
  }
  v.raw.assign(*n * es, '\0');
  auto fill = [&](const auto& field, auto put) -> bool {
    if (static_cast<uint64_t>(field.size()) != *n) return false;
    for (uint64_t i = 0; i < *n; ++i) put(i, field.Get(static_cast<int>(i)));
    return true;
  };
  bool ok = false;
  switch (t.data_type()) {
    case TP::FLOAT:
      ok = fill(t.float_data(), [&](uint64_t i, float x) { put_real(v, i, x); });
      break;
    case TP::DOUBLE:
      ok = fill(t.double_data(), [&](uint64_t i, double x) { put_real(v, i, x); });
      break;
    case TP::INT64:
      ok = fill(t.int64_data(), [&](uint64_t i, int64_t x) { put_int(v, i, x); });
      break;
    case TP::UINT32:
    case TP::UINT64:
      ok = fill(t.uint64_data(),
                [&](uint64_t i, uint64_t x) { put_int(v, i, static_cast<int64_t>(x)); });
      break;
    default:  // int32, int16, int8, uint16, uint8, bool, float16 bits
      ok = fill(t.int32_data(), [&](uint64_t i, int32_t x) { put_int(v, i, x); });
      break;
  }
  if (!ok) return std::nullopt;
  return v;
}

onnx::TensorProto to_tensor(const Value& value, const std::string& name) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(value.type);
  for (int64_t d : value.dims) t.add_dims(d);
  if (value.type == TP::DOUBLE) {
    for (uint64_t i = 0; i < value.count(); ++i) t.add_double_data(get_real(value, i));
  } else {
    t.set_raw_data(value.raw);
  }
  return t;
}

bool foldable_op(const std::string& op) {
  static const std::set<std::string> ops = {"Constant",
                                            "Shape",
                                            "Size",
                                            "Gather",
                                            "Slice",
                                            "Squeeze",
                                            "Unsqueeze",
                                            "Flatten",
                                            "Concat",
                                            "Cast",
                                            "Reshape",
                                            "Expand",
                                            "ConstantOfShape",
                                            "Range",
                                            "Add",
                                            "Sub",
                                            "Mul",
                                            "Div",
                                            "Min",
                                            "Max",
                                            "Equal",
                                            "Less",
                                            "Greater",
                                            "And",
                                            "Or",
                                            "Not",
                                            "Neg",
                                            "Abs",
                                            "Where",
                                            "Mod",
                                            "Transpose",
                                            "ScatterND",
                                            "Pow",
                                            "Sqrt"};
  return ops.count(op) > 0;
}

bool needs_shape_only(const std::string& op) {
  return op == "Shape" || op == "Size";
}

std::optional<std::vector<Value>> evaluate(const onnx::NodeProto& node,
                                           const std::vector<const Value*>& in, const Context& c) {
  const std::string& op = node.op_type();
  if (!node.domain().empty() && node.domain() != "ai.onnx") return std::nullopt;
  if (op == "Constant") return eval_constant(node);
  if (needs_shape_only(op)) {
    std::optional<std::vector<int64_t>> shape;
    if (!in.empty() && in[0]) shape = in[0]->dims;
    if (!shape && !c.input_shapes.empty()) shape = c.input_shapes[0];
    if (!shape) return std::nullopt;
    return eval_shape(node, *shape, op == "Size");
  }
  if (in.empty() || !in[0]) return std::nullopt;
  // Every input named by the node must be known (optional ones may be absent).
  for (int i = 0; i < node.input_size(); ++i)
    if (!node.input(i).empty() &&
        (static_cast<size_t>(i) >= in.size() || !in[static_cast<size_t>(i)]))
      return std::nullopt;
  const Value& x = *in[0];
  if (element_size(x.type) == 0) return std::nullopt;
  if (op == "Gather" && in.size() == 2) return eval_gather(node, x, *in[1], c);
  if (op == "Slice") return eval_slice(node, in, c);
  if (op == "Squeeze" || op == "Unsqueeze") return eval_squeeze(node, in, op == "Unsqueeze", c);
  if (op == "Flatten") {
    const auto rank = static_cast<int64_t>(x.dims.size());
    int64_t axis = int_attr(node, "axis", 1);
    if (axis < 0) axis += rank;
    if (axis < 0 || axis > rank) return std::nullopt;
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < rank; ++i) (i < axis ? outer : inner) *= x.dims[static_cast<size_t>(i)];
    return reshaped(x, {outer, inner}, c);
  }
  if (op == "Concat") return eval_concat(node, in, c);
  if (op == "Cast") return eval_cast(node, x);
  if (op == "Reshape" && in.size() == 2) return eval_reshape(node, x, in[1], c);
  if (op == "Expand" && in.size() == 2) return eval_expand(x, in[1], c);
  if (op == "ConstantOfShape") return eval_constant_of_shape(node, in[0], c);
  if (op == "Range") return eval_range(in, c);
  if (op == "Where" && in.size() == 3) return eval_where(x, *in[1], *in[2], c);
  if ((op == "Not" || op == "Neg" || op == "Abs") && in.size() == 1) return eval_unary(op, x);
  if (op == "Mod" && in.size() == 2) return eval_mod(node, x, *in[1], c);
  if (op == "Transpose" && in.size() == 1) return eval_transpose(node, x, c);
  if (op == "Pow" && in.size() == 2) return eval_pow(x, *in[1], c);
  if (op == "Sqrt" && in.size() == 1) return eval_sqrt(x);
  if (op == "ScatterND" && in.size() == 3) return eval_scatter_nd(node, x, *in[1], *in[2], c);
  if (auto bin = binary_of(op); bin && in.size() == 2) return eval_binary(*bin, x, *in[1], c);
  return std::nullopt;
}

}  // namespace rig::const_eval

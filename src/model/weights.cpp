// Digests and per-tensor facts of a model artifact (rig/model_weights.hpp).
#include <algorithm>
#include <cstring>
#include <map>
#include <set>

#include "model/onnx_util.hpp"
#include "rig/model_weights.hpp"
#include "rig/sha256.hpp"

namespace rig {
namespace {

template <class T>
void put_le(Sha256& h, T v) {
  std::byte b[sizeof(T)];
  std::memcpy(b, &v, sizeof v);  // the hosts rig runs on are little-endian
  h.update(b);
}

// An initializer's elements as little-endian bytes, and the count.
void hash_elements(Sha256& h, const onnx::TensorProto& t) {
  if (t.has_raw_data()) {
    const std::string& raw = t.raw_data();
    h.update({reinterpret_cast<const std::byte*>(raw.data()), raw.size()});
    return;
  }
  for (float v : t.float_data()) put_le(h, v);
  for (double v : t.double_data()) put_le(h, v);
  for (int64_t v : t.int64_data()) put_le(h, v);
  for (uint64_t v : t.uint64_data()) put_le(h, v);
  for (int32_t v : t.int32_data()) put_le(h, v);
  for (const std::string& s : t.string_data())
    h.update({reinterpret_cast<const std::byte*>(s.data()), s.size()});
}

uint64_t element_count(const onnx::TensorProto& t) {
  uint64_t n = 1;
  for (int64_t d : t.dims()) n *= static_cast<uint64_t>(d < 0 ? 0 : d);
  return n;
}

// The first element of a scalar-like float initializer.
std::optional<double> scalar_value(const onnx::TensorProto& t) {
  if (element_count(t) < 1) return std::nullopt;
  if (t.data_type() == onnx::TensorProto::FLOAT) {
    if (t.float_data_size() > 0) return t.float_data(0);
    if (t.raw_data().size() >= 4) {
      float v;
      std::memcpy(&v, t.raw_data().data(), 4);
      return v;
    }
  }
  if (t.data_type() == onnx::TensorProto::UINT8 || t.data_type() == onnx::TensorProto::INT8) {
    if (t.int32_data_size() > 0) return t.int32_data(0);
    if (!t.raw_data().empty())
      return t.data_type() == onnx::TensorProto::UINT8
                 ? static_cast<double>(static_cast<uint8_t>(t.raw_data()[0]))
                 : static_cast<double>(static_cast<int8_t>(t.raw_data()[0]));
  }
  return std::nullopt;
}

}  // namespace

ModelWeights model_weights(std::span<const std::byte> artifact) {
  ModelWeights w;
  w.artifact_sha256 = sha256_hex(artifact);
  auto model = onnx_util::parse_model(artifact);
  if (!model || !model->has_graph()) return w;
  const onnx::GraphProto& g = model->graph();
  Sha256 h;
  uint64_t parameters = 0;
  std::map<std::string, const onnx::TensorProto*> by_name;
  for (const onnx::TensorProto& t : g.initializer()) {
    put_le(h, t.data_type());
    put_le(h, static_cast<uint64_t>(t.dims_size()));
    for (int64_t d : t.dims()) put_le(h, d);
    hash_elements(h, t);
    parameters += element_count(t);
    by_name[t.name()] = &t;
  }
  w.weights_sha256 = h.hex();
  w.facts.push_back({"", "initializers", static_cast<double>(g.initializer_size())});
  w.facts.push_back({"", "parameters", static_cast<double>(parameters)});
  // Quantisation: the scale (input 1) and zero point (input 2) of each
  // QuantizeLinear / DequantizeLinear, once per tensor.
  std::set<std::string> seen;
  for (const onnx::NodeProto& n : g.node()) {
    if (n.op_type() != "QuantizeLinear" && n.op_type() != "DequantizeLinear") continue;
    for (int i = 1; i < std::min(n.input_size(), 3); ++i) {
      if (w.facts.size() >= kMaxTensorFacts + 2) return w;
      const std::string& name = n.input(i);
      auto it = by_name.find(name);
      if (it == by_name.end() || !seen.insert(name).second) continue;
      if (auto v = scalar_value(*it->second))
        w.facts.push_back({name, i == 1 ? "quantisation scale" : "zero point", *v});
    }
  }
  return w;
}

}  // namespace rig

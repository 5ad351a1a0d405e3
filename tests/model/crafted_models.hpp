// The crafted-tensor family (issue 26, item 1): models whose initializers or
// constants carry less (or other) data than their declared shape and type, the
// kind that made OpenCV's importer read past the buffer. Shared by the model
// and server tests, the model fuzz target's seeds and bench/soak's hostile
// clients. Header-only; needs onnx_pb.
#pragma once

#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

namespace rig::crafted {

struct CraftedModel {
  std::string name;    // what is wrong, e.g. "raw_data_short"
  std::string tensor;  // the tensor the refusal must name
  std::vector<std::byte> bytes;
};

inline std::vector<std::byte> to_bytes(const onnx::ModelProto& model) {
  const std::string s = model.SerializeAsString();
  std::vector<std::byte> out(s.size());
  std::memcpy(out.data(), s.data(), s.size());
  return out;
}

inline void float_value(onnx::ValueInfoProto* v, const std::string& name, int64_t n) {
  v->set_name(name);
  auto* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(onnx::TensorProto::FLOAT);
  t->mutable_shape()->add_dim()->set_dim_value(n);
}

// y = x + w, x and w float [n]: the model of the heap read. `w` is
// returned for the caller to fill (or not); the model is valid when w holds
// n floats.
inline onnx::ModelProto add_model(int64_t n, onnx::TensorProto** w) {
  onnx::ModelProto model;
  model.set_ir_version(7);
  auto* o = model.add_opset_import();
  o->set_domain("");
  o->set_version(13);
  auto* g = model.mutable_graph();
  g->set_name("crafted");
  float_value(g->add_input(), "x", n);
  float_value(g->add_output(), "y", n);
  auto* node = g->add_node();
  node->set_op_type("Add");
  node->set_name("add");
  node->add_input("x");
  node->add_input("w");
  node->add_output("y");
  *w = g->add_initializer();
  (*w)->set_name("w");
  (*w)->set_data_type(onnx::TensorProto::FLOAT);
  (*w)->add_dims(n);
  return model;
}

// y = x + c, c from a Constant node (its `value` attribute) rather than an
// initializer.
inline onnx::ModelProto constant_model(int64_t n, onnx::TensorProto** c) {
  onnx::TensorProto* unused = nullptr;
  onnx::ModelProto model = add_model(n, &unused);
  auto* g = model.mutable_graph();
  g->clear_initializer();
  g->mutable_node(0)->set_input(1, "c");
  auto* node = g->add_node();
  node->set_op_type("Constant");
  node->set_name("const");
  node->add_output("c");
  auto* attr = node->add_attribute();
  attr->set_name("value");
  attr->set_type(onnx::AttributeProto::TENSOR);
  *c = attr->mutable_t();
  (*c)->set_name("c");
  (*c)->set_data_type(onnx::TensorProto::FLOAT);
  (*c)->add_dims(n);
  // Constant comes first in topological order.
  g->mutable_node()->SwapElements(0, 1);
  return model;
}

inline std::string floats_raw(size_t count) {
  return std::string(count * 4, '\x01');
}

// The valid model of the family: w holds all n floats (the control).
inline std::vector<std::byte> valid_add(int64_t n = 8) {
  onnx::TensorProto* w = nullptr;
  onnx::ModelProto m = add_model(n, &w);
  w->set_raw_data(floats_raw(static_cast<size_t>(n)));
  return to_bytes(m);
}

// The valid model as a 1xn row (x, w and y all 1xn): the control the server
// tests run on the cpu device. The 1-D form is not one: OpenCV 4.10 (Debian
// 13) computes its Add as n x n, which the cpu device refuses by name
// (normalize_test's OneDimensionalAdd).
inline std::vector<std::byte> valid_add_row(int64_t n = 8) {
  onnx::TensorProto* w = nullptr;
  onnx::ModelProto m = add_model(n, &w);
  w->set_raw_data(floats_raw(static_cast<size_t>(n)));
  w->clear_dims();
  w->add_dims(1);
  w->add_dims(n);
  auto* g = m.mutable_graph();
  for (auto* v : {g->mutable_input(0), g->mutable_output(0)}) {
    auto* shape = v->mutable_type()->mutable_tensor_type()->mutable_shape();
    shape->clear_dim();
    shape->add_dim()->set_dim_value(1);
    shape->add_dim()->set_dim_value(n);
  }
  return to_bytes(m);
}

inline std::vector<CraftedModel> crafted_models() {
  std::vector<CraftedModel> out;
  onnx::TensorProto* t = nullptr;
  {  // the crash: 1,048,576 floats declared, 16 bytes given
    onnx::ModelProto m = add_model(1048576, &t);
    t->set_raw_data(floats_raw(4));
    out.push_back({"raw_data_short_1m", "w", to_bytes(m)});
  }
  {  // the heap read: 8192 floats declared, 4 bytes given
    onnx::ModelProto m = add_model(8192, &t);
    t->set_raw_data(floats_raw(1));
    out.push_back({"raw_data_short", "w", to_bytes(m)});
  }
  {  // more bytes than declared
    onnx::ModelProto m = add_model(8, &t);
    t->set_raw_data(floats_raw(9));
    out.push_back({"raw_data_long", "w", to_bytes(m)});
  }
  {  // typed field short
    onnx::ModelProto m = add_model(8192, &t);
    t->add_float_data(1.0f);
    out.push_back({"float_data_short", "w", to_bytes(m)});
  }
  {  // no data at all
    onnx::ModelProto m = add_model(64, &t);
    out.push_back({"no_data", "w", to_bytes(m)});
  }
  {  // values in the field another type uses
    onnx::ModelProto m = add_model(4, &t);
    for (int i = 0; i < 4; ++i) t->add_int64_data(i);
    out.push_back({"wrong_typed_field", "w", to_bytes(m)});
  }
  {  // both raw and typed data
    onnx::ModelProto m = add_model(2, &t);
    t->set_raw_data(floats_raw(2));
    t->add_float_data(1.0f);
    t->add_float_data(2.0f);
    out.push_back({"raw_and_typed", "w", to_bytes(m)});
  }
  {  // a negative dimension with an empty payload
    onnx::ModelProto m = add_model(4, &t);
    t->clear_dims();
    t->add_dims(-4);
    out.push_back({"negative_dim", "w", to_bytes(m)});
  }
  {  // a type rig does not know
    onnx::ModelProto m = add_model(4, &t);
    t->set_data_type(77);
    t->set_raw_data(floats_raw(4));
    out.push_back({"unknown_type", "w", to_bytes(m)});
  }
  {  // external data pointing at a system file
    onnx::ModelProto m = add_model(8192, &t);
    t->set_data_location(onnx::TensorProto::EXTERNAL);
    auto* kv = t->add_external_data();
    kv->set_key("location");
    kv->set_value("/etc/passwd");
    out.push_back({"external_data", "w", to_bytes(m)});
  }
  {  // a Constant node's value, short
    onnx::ModelProto m = constant_model(8192, &t);
    t->set_raw_data(floats_raw(1));
    out.push_back({"constant_short", "c", to_bytes(m)});
  }
  {  // a short constant inside an If branch (a subgraph)
    onnx::ModelProto m = constant_model(8, &t);
    t->set_raw_data(floats_raw(8));
    auto* g = m.mutable_graph();
    auto* cond = g->add_initializer();
    cond->set_name("cond");
    cond->set_data_type(onnx::TensorProto::BOOL);
    cond->set_raw_data(std::string(1, '\x01'));
    auto* node = g->add_node();
    node->set_op_type("If");
    node->set_name("if");
    node->add_input("cond");
    node->add_output("z");
    for (const char* branch : {"then_branch", "else_branch"}) {
      auto* attr = node->add_attribute();
      attr->set_name(branch);
      attr->set_type(onnx::AttributeProto::GRAPH);
      auto* sub = attr->mutable_g();
      sub->set_name(branch);
      auto* k = sub->add_node();
      k->set_op_type("Constant");
      k->set_name(std::string(branch) + "_const");
      k->add_output("k");
      auto* a = k->add_attribute();
      a->set_name("value");
      a->set_type(onnx::AttributeProto::TENSOR);
      auto* kt = a->mutable_t();
      kt->set_name("k");
      kt->set_data_type(onnx::TensorProto::FLOAT);
      kt->add_dims(4096);
      kt->set_raw_data(floats_raw(1));
      float_value(sub->add_output(), "k", 4096);
    }
    float_value(g->add_output(), "z", 4096);
    out.push_back({"subgraph_constant_short", "k", to_bytes(m)});
  }
  return out;
}

// y = If(cond) nested `depth` levels deep: each branch holds the next If;
// the innermost branches return a Constant.
inline std::vector<std::byte> nested_if_model(int depth) {
  onnx::ModelProto model;
  model.set_ir_version(7);
  auto* o = model.add_opset_import();
  o->set_domain("");
  o->set_version(13);
  auto* g = model.mutable_graph();
  g->set_name("nested");
  auto* cond = g->add_initializer();
  cond->set_name("cond");
  cond->set_data_type(onnx::TensorProto::BOOL);
  cond->set_raw_data(std::string(1, '\x01'));
  float_value(g->add_output(), "y", 1);
  onnx::GraphProto* at = g;
  for (int level = 0; level <= depth; ++level) {
    auto* node = at->add_node();
    node->set_name("n" + std::to_string(level));
    node->add_output("y");
    if (level == depth) {
      node->set_op_type("Constant");
      auto* a = node->add_attribute();
      a->set_name("value");
      a->set_type(onnx::AttributeProto::TENSOR);
      auto* t = a->mutable_t();
      t->set_data_type(onnx::TensorProto::FLOAT);
      t->add_dims(1);
      t->add_float_data(1.0f);
      break;
    }
    node->set_op_type("If");
    node->add_input("cond");
    auto* attr = node->add_attribute();
    attr->set_name("then_branch");
    attr->set_type(onnx::AttributeProto::GRAPH);
    at = attr->mutable_g();
    at->set_name("b" + std::to_string(level));
    float_value(at->add_output(), "y", 1);
  }
  return to_bytes(model);
}

}  // namespace rig::crafted

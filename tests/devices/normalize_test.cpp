// The load-time normalisation pass: for every rewrite kind, a small graph in
// the form exporters emit runs on the cpu device (which normalises it) and is
// compared with a reference: hand-computed values, or the same computation in
// a form OpenCV already accepts. Plus idempotence, --shape and refusals.
// Over 600 lines: one case per rewrite kind, each with its graph and reference.
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>

#include "devices/cpu/cpu_device.hpp"
#include "rig/model.hpp"
#include "rig/units.hpp"

namespace rig {
namespace {

using TP = onnx::TensorProto;

// A graph under construction.
struct Graph {
  onnx::ModelProto model;
  onnx::GraphProto* g;

  explicit Graph(int64_t opset = 13) {
    model.set_ir_version(7);
    model.set_producer_name("pytorch");
    auto* o = model.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    g = model.mutable_graph();
    g->set_name("test");
  }
  void value(onnx::ValueInfoProto* v, const std::string& name, int32_t type,
             const std::vector<int64_t>& shape, const std::vector<std::string>& params = {}) {
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(type);
    for (size_t i = 0; i < shape.size(); ++i) {
      auto* d = t->mutable_shape()->add_dim();
      if (i < params.size() && !params[i].empty())
        d->set_dim_param(params[i]);
      else
        d->set_dim_value(shape[i]);
    }
  }
  void input(const std::string& name, const std::vector<int64_t>& shape,
             const std::vector<std::string>& params = {}) {
    value(g->add_input(), name, TP::FLOAT, shape, params);
  }
  void output(const std::string& name, const std::vector<int64_t>& shape) {
    value(g->add_output(), name, TP::FLOAT, shape);
  }
  void floats(const std::string& name, const std::vector<int64_t>& dims,
              const std::vector<float>& values) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(TP::FLOAT);
    for (int64_t d : dims) t->add_dims(d);
    for (float v : values) t->add_float_data(v);
  }
  void ints(const std::string& name, const std::vector<int64_t>& dims,
            const std::vector<int64_t>& values) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(TP::INT64);
    for (int64_t d : dims) t->add_dims(d);
    for (int64_t v : values) t->add_int64_data(v);
  }
  onnx::NodeProto* node(const std::string& op, const std::string& name,
                        const std::vector<std::string>& in, const std::vector<std::string>& out) {
    auto* n = g->add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (const auto& i : in) n->add_input(i);
    for (const auto& o : out) n->add_output(o);
    return n;
  }
  static void attr_ints(onnx::NodeProto* n, const std::string& name, std::vector<int64_t> v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
  }
  static void attr_int(onnx::NodeProto* n, const std::string& name, int64_t v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static void attr_string(onnx::NodeProto* n, const std::string& name, const std::string& v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(v);
  }
  void boolean(const std::string& name, bool v) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(TP::BOOL);
    t->add_int32_data(v ? 1 : 0);
  }
  // A Constant node holding a float scalar.
  void constant_scalar(const std::string& out, float v) {
    auto* n = node("Constant", out + "_const", {}, {out});
    auto* a = n->add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    a->mutable_t()->set_data_type(TP::FLOAT);
    a->mutable_t()->add_float_data(v);
  }
  std::vector<std::byte> bytes() const {
    std::string text = model.SerializeAsString();
    std::vector<std::byte> b(text.size());
    std::memcpy(b.data(), text.data(), text.size());
    return b;
  }
};

struct Run {
  std::vector<std::vector<float>> outputs;
  ModelInfo info;
};

// The OpenCV runtime, whatever the build's default: these tests are about the
// pass and the forms OpenCV's importer needs (on Debian 13 the default is
// ONNX Runtime, which takes ONNX's own forms; cpu_runtime_test covers it).
std::unique_ptr<Device> cpu() {
  auto spec = parse_spec("cpu:threads=1,runtime=opencv");
  EXPECT_TRUE(spec);
  auto device = open_cpu_device(spec->params);
  EXPECT_TRUE(device);
  return device ? std::move(*device) : nullptr;
}

// Loads the model on the cpu device (which runs the pass) and runs one
// inference on `input`.
Result<Run> run_cpu(const std::vector<std::byte>& bytes, const std::vector<float>& input,
                    std::vector<InputShape> shapes = {}) {
  auto device = cpu();
  ModelSource source;
  source.bytes = bytes;
  source.name = "t";
  source.shapes = std::move(shapes);
  auto loaded = device->load(source);
  if (!loaded) return tl::unexpected(loaded.error());
  Run r;
  r.info = device->model_info();
  std::vector<float> in = input;
  in.resize(r.info.inputs.at(0).bytes / 4);
  for (const auto& t : r.info.outputs) r.outputs.emplace_back(t.bytes / 4);
  Bindings b;
  b.inputs.push_back(std::as_bytes(std::span(in)));
  for (auto& o : r.outputs) b.outputs.push_back(std::as_writable_bytes(std::span(o)));
  auto id = device->bind(b);
  if (!id) return tl::unexpected(id.error());
  auto ran = device->run(*id);
  if (!ran) return tl::unexpected(ran.error());
  return r;
}

// max|a - b| / max|b|.
double relative_error(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  double diff = 0, scale = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    diff = std::max(diff, std::abs(static_cast<double>(a[i]) - b[i]));
    scale = std::max(scale, std::abs(static_cast<double>(b[i])));
  }
  return scale == 0 ? diff : diff / scale;
}

uint64_t rewrites(const ModelInfo& info, const std::string& kind) {
  auto it = info.normalization.rewrites.find(kind);
  return it == info.normalization.rewrites.end() ? 0 : it->second;
}

// The pass run twice: the second run must rewrite nothing, in the form
// written out (valid ONNX) and in the form a device loads (opencv_forms).
void expect_idempotent(const std::vector<std::byte>& bytes) {
  for (bool opencv_forms : {false, true}) {
    NormalizeOptions options;
    options.opencv_forms = opencv_forms;
    auto first = normalize_onnx(bytes, options, "t");
    ASSERT_TRUE(first) << first.error().to_string();
    const std::vector<std::byte>& once = first->changed() ? first->bytes : bytes;
    auto second = normalize_onnx(once, options, "t");
    ASSERT_TRUE(second) << second.error().to_string();
    EXPECT_EQ(second->report.total(), 0u)
        << "second run rewrote something (opencv_forms " << opencv_forms << ")";
    EXPECT_FALSE(second->changed());
  }
}

// What libonnx's checker says of a model (empty: valid ONNX).
std::string checker_says(const std::vector<std::byte>& bytes) {
  onnx::ModelProto model;
  if (!model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) return "does not parse";
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception& e) {
    return e.what();
  }
  return {};
}

std::vector<float> ramp(size_t n, float start, float step) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = start + step * static_cast<float>(i);
  return v;
}

TEST(Normalize, IdentityOnInitializersAndValuesIsDropped) {
  // y = Relu(Identity(x) * Identity(w)), as PyTorch's deduplicated weights.
  Graph m;
  m.input("x", {1, 4});
  m.output("y", {1, 4});
  m.floats("w", {1, 4}, {1.5f, -2.0f, 0.25f, 3.0f});
  m.node("Identity", "id_w", {"w"}, {"w2"});
  m.node("Identity", "id_x", {"x"}, {"x2"});
  m.node("Mul", "mul", {"x2", "w2"}, {"p"});
  m.node("Relu", "relu", {"p"}, {"y"});
  const std::vector<float> x = {1, 2, -3, 4};
  auto r = run_cpu(m.bytes(), x);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(rewrites(r->info, "identity_removed"), 2u);
  const std::vector<float> want = {1.5f, 0.0f, 0.0f, 12.0f};  // by hand
  EXPECT_EQ(r->outputs[0], want);
  EXPECT_EQ(r->info.normalization.nodes_before, 4u);
  EXPECT_EQ(r->info.normalization.nodes_after, 2u);
  expect_idempotent(m.bytes());
}

TEST(Normalize, IdentityFeedingAGraphOutputKeepsTheOutputName) {
  Graph m;
  m.input("x", {1, 4});
  m.output("y", {1, 4});
  m.node("Relu", "relu", {"x"}, {"r"});
  m.node("Identity", "id", {"r"}, {"y"});
  auto r = run_cpu(m.bytes(), {-1, 2, -3, 4});
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(rewrites(r->info, "identity_removed"), 1u);
  EXPECT_EQ(r->info.outputs.at(0).name, "y");
  EXPECT_EQ(r->outputs[0], (std::vector<float>{0, 2, 0, 4}));
}

TEST(Normalize, ClipBoundsGivenAsInputsBecomeAttributes) {
  // ReLU6 as opset 13 exports it: min from a Constant, max from an initializer.
  Graph m;
  m.input("x", {1, 8});
  m.output("y", {1, 8});
  m.constant_scalar("lo", 0.0f);
  m.floats("hi", {}, {6.0f});
  m.node("Clip", "relu6", {"x", "lo", "hi"}, {"y"});
  const auto x = ramp(8, -9.0f, 2.5f);  // -9 .. 8.5
  auto r = run_cpu(m.bytes(), x);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(rewrites(r->info, "clip_bounds_to_attributes"), 1u);
  std::vector<float> want;
  for (float v : x) want.push_back(std::min(6.0f, std::max(0.0f, v)));
  EXPECT_EQ(r->outputs[0], want);  // a copy op: exact
  expect_idempotent(m.bytes());

  // The attribute form is OpenCV 4.6's, not ONNX's (Clip-11 and later take
  // the bounds as inputs only): the model written out (`rig model normalize`)
  // keeps the inputs and stays valid ONNX, and it computes the same when the
  // cpu device loads it.
  ASSERT_EQ(checker_says(m.bytes()), "");
  auto written = normalize_onnx(m.bytes(), {}, "t");
  ASSERT_TRUE(written) << written.error().to_string();
  EXPECT_EQ(written->report.rewrites.count("clip_bounds_to_attributes"), 0u);
  const std::vector<std::byte>& out = written->changed() ? written->bytes : m.bytes();
  EXPECT_EQ(checker_says(out), "");
  auto r_written = run_cpu(out, x);
  ASSERT_TRUE(r_written) << r_written.error().to_string();
  EXPECT_EQ(rewrites(r_written->info, "clip_bounds_to_attributes"), 1u);
  EXPECT_EQ(r_written->outputs[0], want);
  NormalizeOptions for_opencv;
  for_opencv.opencv_forms = true;
  auto device_copy = normalize_onnx(m.bytes(), for_opencv, "t");
  ASSERT_TRUE(device_copy) << device_copy.error().to_string();
  ASSERT_TRUE(device_copy->changed());
  EXPECT_NE(checker_says(device_copy->bytes), "");  // why it is never written out

  // Only a max: the min stays unbounded (OpenCV's ReLU6 would default it to 0).
  Graph only_max;
  only_max.input("x", {1, 8});
  only_max.output("y", {1, 8});
  only_max.floats("hi", {}, {2.0f});
  only_max.node("Clip", "clip", {"x", "", "hi"}, {"y"});
  auto r2 = run_cpu(only_max.bytes(), x);
  ASSERT_TRUE(r2) << r2.error().to_string();
  want.clear();
  for (float v : x) want.push_back(std::min(2.0f, v));
  EXPECT_EQ(r2->outputs[0], want);
}

TEST(Normalize, ShapeArithmeticAroundReshapeIsFolded) {
  // x.view(x.size(0), x.size(1), -1) as exporters emit it:
  // Shape -> Gather -> Unsqueeze -> Concat -> Reshape.
  Graph m;
  m.input("x", {1, 2, 3, 4});
  m.output("y", {1, 2, 12});
  m.ints("i0", {}, {0});
  m.ints("i1", {}, {1});
  m.ints("axes0", {1}, {0});
  m.ints("minus1", {1}, {-1});
  m.node("Shape", "shape", {"x"}, {"s"});
  Graph::attr_int(m.node("Gather", "g0", {"s", "i0"}, {"d0"}), "axis", 0);
  Graph::attr_int(m.node("Gather", "g1", {"s", "i1"}, {"d1"}), "axis", 0);
  m.node("Unsqueeze", "u0", {"d0", "axes0"}, {"d0u"});
  m.node("Unsqueeze", "u1", {"d1", "axes0"}, {"d1u"});
  Graph::attr_int(m.node("Concat", "cat", {"d0u", "d1u", "minus1"}, {"shape2"}), "axis", 0);
  m.node("Reshape", "reshape", {"x", "shape2"}, {"r"});
  m.node("Relu", "relu", {"r"}, {"y"});
  const auto x = ramp(24, 0.0f, 1.0f);
  auto r = run_cpu(m.bytes(), x);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(rewrites(r->info, "constant_folded"), 6u);
  EXPECT_EQ(r->info.normalization.nodes_after, 2u);  // Reshape, Relu
  EXPECT_EQ(r->info.outputs.at(0).shape, (std::vector<int64_t>{1, 2, 12}));
  EXPECT_EQ(r->outputs[0], x);  // a copy: exact
  expect_idempotent(m.bytes());
}

TEST(Normalize, ComputedShapesOfConstantOfShapeRangeAndArithmeticFold) {
  // y = x + Cast(Range(0, n)) * ConstantOfShape([1])[0] where n = Shape(x)[1] / 2 * 2:
  // integer arithmetic, Range, ConstantOfShape and Cast all fold.
  Graph m;
  m.input("x", {1, 6});
  m.output("y", {1, 6});
  m.ints("i1", {}, {1});
  m.ints("two", {}, {2});
  m.ints("zero", {}, {0});
  m.ints("one", {}, {1});
  m.node("Shape", "shape", {"x"}, {"s"});
  Graph::attr_int(m.node("Gather", "g", {"s", "i1"}, {"n"}), "axis", 0);
  m.node("Div", "div", {"n", "two"}, {"h"});
  m.node("Mul", "mul", {"h", "two"}, {"n2"});
  m.node("Range", "range", {"zero", "n2", "one"}, {"r"});
  Graph::attr_int(m.node("Cast", "cast", {"r"}, {"rf"}), "to", TP::FLOAT);
  m.node("Add", "add", {"x", "rf"}, {"y"});
  const auto x = ramp(6, 0.5f, 0.25f);
  auto r = run_cpu(m.bytes(), x);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_GE(rewrites(r->info, "constant_folded"), 6u);
  std::vector<float> want;
  for (size_t i = 0; i < x.size(); ++i) want.push_back(x[i] + static_cast<float>(i));
  EXPECT_LE(relative_error(r->outputs[0], want), 1e-5);
  expect_idempotent(m.bytes());
}

TEST(Normalize, ModAndTransposeInComputedPadsFold) {
  // Swin's padding of an NHWC map to a multiple of the window (4 here), as
  // PyTorch 1.13 exports F.pad(x, (0, 0, 0, pad_r, 0, pad_b)): the pads are
  // integer arithmetic on Shape(x) (Mod), laid out as ONNX wants by
  // Reshape(-1, 2) -> Slice(step -1) -> Transpose -> Reshape(-1). Here
  // pad_b = -H mod 4 (fmod 0, the divisor's sign: -5 mod 4 = 3) and
  // pad_r = -(-W fmod 4) (fmod 1, the dividend's sign: -(-2) = 2).
  Graph m;
  m.input("x", {1, 5, 6, 2});
  m.output("y", {1, 8, 8, 2});
  m.ints("i1", {}, {1});
  m.ints("i2", {}, {2});
  m.ints("win", {}, {4});
  m.ints("axes0", {1}, {0});
  m.ints("z", {1}, {0});
  m.ints("rows", {2}, {-1, 2});
  m.ints("flat", {1}, {-1});
  m.ints("start", {1}, {-1});
  m.ints("end", {1}, {std::numeric_limits<int64_t>::min() + 1});
  m.ints("axis0", {1}, {0});
  m.ints("step", {1}, {-1});
  m.node("Shape", "shape", {"x"}, {"s"});
  Graph::attr_int(m.node("Gather", "gh", {"s", "i1"}, {"h"}), "axis", 0);
  Graph::attr_int(m.node("Gather", "gw", {"s", "i2"}, {"w"}), "axis", 0);
  m.node("Neg", "negh", {"h"}, {"nh"});
  m.node("Mod", "modh", {"nh", "win"}, {"pb"});
  m.node("Neg", "negw", {"w"}, {"nw"});
  Graph::attr_int(m.node("Mod", "modw", {"nw", "win"}, {"prn"}), "fmod", 1);
  m.node("Neg", "negr", {"prn"}, {"pr"});
  m.node("Unsqueeze", "ub", {"pb", "axes0"}, {"pb1"});
  m.node("Unsqueeze", "ur", {"pr", "axes0"}, {"pr1"});
  // (C_l, C_r, W_l, W_r, H_l, H_r, N_l, N_r), torch's order: last axis first.
  Graph::attr_int(m.node("Concat", "cat", {"z", "z", "z", "pr1", "z", "pb1", "z", "z"}, {"p8"}),
                  "axis", 0);
  m.node("Reshape", "pairs", {"p8", "rows"}, {"p4x2"});
  m.node("Slice", "reverse", {"p4x2", "start", "end", "axis0", "step"}, {"rev"});
  Graph::attr_ints(m.node("Transpose", "tr", {"rev"}, {"t"}), "perm", {1, 0});
  m.node("Reshape", "pads", {"t", "flat"}, {"pads"});
  Graph::attr_string(m.node("Pad", "pad", {"x", "pads"}, {"y"}), "mode", "constant");
  const auto x = ramp(60, 1.0f, 1.0f);
  auto r = run_cpu(m.bytes(), x);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(r->info.normalization.nodes_after, 1u);  // the Pad, its pads an initializer
  EXPECT_EQ(r->info.outputs.at(0).shape, (std::vector<int64_t>{1, 8, 8, 2}));
  std::vector<float> want(8 * 8 * 2, 0.0f);  // x at the top left, zeros below and right
  for (size_t hh = 0; hh < 5; ++hh)
    for (size_t ww = 0; ww < 6; ++ww)
      for (size_t c = 0; c < 2; ++c) want[(hh * 8 + ww) * 2 + c] = x[(hh * 6 + ww) * 2 + c];
  EXPECT_EQ(r->outputs[0], want);  // a copy: exact
  expect_idempotent(m.bytes());
}

TEST(Normalize, ChainedComputedPadsNeedAShapeInferenceRunEach) {
  // Six blocks, each padding its input to a multiple of 4 with pads computed
  // from its input's shape by Mod (which ONNX shape inference does not
  // propagate): each Pad's output shape is known only once its pads are
  // folded, so shape inference runs again for every block (Swin-S has 24).
  Graph m;
  m.input("x", {1, 5, 6});
  m.output("y", {1, 8, 8});
  m.ints("i1", {}, {1});
  m.ints("i2", {}, {2});
  m.ints("win", {}, {4});
  m.ints("axes0", {1}, {0});
  m.ints("z", {1}, {0});
  std::string in = "x";
  const int blocks = 6;
  for (int b = 0; b < blocks; ++b) {
    const std::string p = "b" + std::to_string(b) + "_";
    m.node("Shape", p + "shape", {in}, {p + "s"});
    Graph::attr_int(m.node("Gather", p + "gh", {p + "s", "i1"}, {p + "h"}), "axis", 0);
    Graph::attr_int(m.node("Gather", p + "gw", {p + "s", "i2"}, {p + "w"}), "axis", 0);
    m.node("Neg", p + "negh", {p + "h"}, {p + "nh"});
    m.node("Neg", p + "negw", {p + "w"}, {p + "nw"});
    m.node("Mod", p + "modh", {p + "nh", "win"}, {p + "pb"});
    m.node("Mod", p + "modw", {p + "nw", "win"}, {p + "pr"});
    m.node("Unsqueeze", p + "ub", {p + "pb", "axes0"}, {p + "pb1"});
    m.node("Unsqueeze", p + "ur", {p + "pr", "axes0"}, {p + "pr1"});
    Graph::attr_int(
        m.node("Concat", p + "cat", {"z", "z", "z", "z", p + "pb1", p + "pr1"}, {p + "pads"}),
        "axis", 0);
    const std::string out = b + 1 == blocks ? "y" : p + "out";
    Graph::attr_string(m.node("Pad", p + "pad", {in, p + "pads"}, {out}), "mode", "constant");
    in = out;
  }
  const auto x = ramp(30, 1.0f, 1.0f);
  auto r = run_cpu(m.bytes(), x);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(r->info.normalization.nodes_after, static_cast<uint64_t>(blocks));  // the Pads
  EXPECT_TRUE(r->info.normalization.notes.empty());
  std::vector<float> want(64, 0.0f);
  for (size_t hh = 0; hh < 5; ++hh)
    for (size_t ww = 0; ww < 6; ++ww) want[hh * 8 + ww] = x[hh * 6 + ww];
  EXPECT_EQ(r->outputs[0], want);
  expect_idempotent(m.bytes());
}

TEST(Normalize, ScatterNDOnConstantsFolds) {
  // Swin's shifted-window mask: zeros, then regions set to region numbers
  // with ScatterND on constant indices (mask[h0:h1, w0:w1] = n), then added
  // to the data. Here a 2x3 mask gets row 1 set to 5 and element (0, 2) to 7.
  Graph m;
  m.input("x", {2, 3});
  m.output("y", {2, 3});
  m.ints("dims", {2}, {2, 3});
  m.ints("row1", {1, 1}, {1});
  m.floats("fives", {1, 3}, {5, 5, 5});
  m.ints("at02", {1, 2}, {0, 2});
  m.floats("seven", {1}, {7});
  auto* zeros = m.node("ConstantOfShape", "zeros", {"dims"}, {"z"});
  auto* value = zeros->add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  value->mutable_t()->set_data_type(TP::FLOAT);
  value->mutable_t()->add_dims(1);
  value->mutable_t()->add_float_data(0.0f);
  m.node("ScatterND", "s1", {"z", "row1", "fives"}, {"m1"});
  m.node("ScatterND", "s2", {"m1", "at02", "seven"}, {"mask"});
  m.node("Add", "add", {"x", "mask"}, {"y"});
  const auto x = ramp(6, 0.5f, 1.0f);
  auto r = run_cpu(m.bytes(), x);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(rewrites(r->info, "constant_folded"), 3u);
  EXPECT_EQ(r->info.normalization.nodes_after, 1u);
  const std::vector<float> mask = {0, 0, 7, 5, 5, 5};
  std::vector<float> want;
  for (size_t i = 0; i < x.size(); ++i) want.push_back(x[i] + mask[i]);
  EXPECT_EQ(r->outputs[0], want);  // small integers in float: exact
  expect_idempotent(m.bytes());

  // Duplicate indices are undefined in ONNX: left to the runtime, not folded.
  Graph dup;
  dup.input("x", {2, 3});
  dup.output("y", {2, 3});
  dup.floats("data", {2, 3}, {0, 0, 0, 0, 0, 0});
  dup.ints("twice", {2, 1}, {1, 1});
  dup.floats("rows", {2, 3}, {1, 1, 1, 2, 2, 2});
  dup.node("ScatterND", "s", {"data", "twice", "rows"}, {"mask"});
  dup.node("Add", "add", {"x", "mask"}, {"y"});
  auto n = normalize_onnx(dup.bytes(), {}, "dup");
  ASSERT_TRUE(n) << n.error().to_string();
  EXPECT_EQ(n->report.rewrites.count("constant_folded"), 0u);
}

TEST(Normalize, PowAndSqrtOnConstantsFold) {
  // y = x * 32 ** -0.5 + sqrt(2.25): attention's scale, as Swin exports it.
  Graph m;
  m.input("x", {1, 4});
  m.output("y", {1, 4});
  m.constant_scalar("head", 32.0f);
  m.constant_scalar("minus_half", -0.5f);
  m.constant_scalar("v", 2.25f);
  m.node("Pow", "pow", {"head", "minus_half"}, {"scale"});
  m.node("Sqrt", "sqrt", {"v"}, {"root"});
  m.node("Mul", "mul", {"x", "scale"}, {"xs"});
  m.node("Add", "add", {"xs", "root"}, {"y"});
  const auto x = ramp(4, -2.0f, 1.5f);
  auto r = run_cpu(m.bytes(), x);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(rewrites(r->info, "constant_folded"), 5u);  // 3 Constants, Pow, Sqrt
  std::vector<float> want;
  for (float v : x) want.push_back(static_cast<float>(v / std::sqrt(32.0) + 1.5));
  EXPECT_LE(relative_error(r->outputs[0], want), 1e-5);
  expect_idempotent(m.bytes());
}

TEST(Normalize, InferenceDropoutIsAnIdentity) {
  // Opset 13 Dropout with training_mode false, and with training_mode true
  // but a ratio of 0 (Swin's attention dropout): both pass x through.
  Graph m;
  m.input("x", {1, 6});
  m.output("y", {1, 6});
  m.floats("ratio0", {}, {0.0f});
  m.floats("ratio3", {}, {0.3f});
  m.boolean("yes", true);
  m.boolean("no", false);
  m.node("Dropout", "d0", {"x", "ratio0", "yes"}, {"a", "mask_a"});
  m.node("Dropout", "d1", {"a", "ratio3", "no"}, {"b"});
  m.node("Relu", "relu", {"b"}, {"y"});
  const auto x = ramp(6, -3.0f, 1.25f);
  auto r = run_cpu(m.bytes(), x);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(rewrites(r->info, "identity_removed"), 2u);
  EXPECT_EQ(r->info.normalization.nodes_after, 1u);
  std::vector<float> want;
  for (float v : x) want.push_back(std::max(0.0f, v));
  EXPECT_EQ(r->outputs[0], want);
  expect_idempotent(m.bytes());

  // Training mode with a ratio above 0 drops at random: it stays.
  Graph training;
  training.input("x", {1, 6});
  training.output("y", {1, 6});
  training.floats("ratio", {}, {0.5f});
  training.boolean("yes", true);
  training.node("Dropout", "d", {"x", "ratio", "yes"}, {"y"});
  auto n = normalize_onnx(training.bytes(), {}, "training");
  ASSERT_TRUE(n) << n.error().to_string();
  EXPECT_EQ(n->report.total(), 0u);
}

TEST(Normalize, TrailingEmptyOptionalInputsAreDropped) {
  // Pad(x, pads, "") as PyTorch exports it: the absent constant_value is an
  // empty name, which OpenCV 4.6 looks up as a blob.
  Graph m;
  m.input("x", {1, 1, 2, 2});
  m.output("y", {1, 1, 2, 3});
  m.ints("pads", {8}, {0, 0, 0, 1, 0, 0, 0, 0});
  Graph::attr_string(m.node("Pad", "pad", {"x", "pads", ""}, {"y"}), "mode", "constant");
  const auto x = ramp(4, 1.0f, 1.0f);
  auto r = run_cpu(m.bytes(), x);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(rewrites(r->info, "empty_input_dropped"), 1u);
  EXPECT_EQ(r->outputs[0], (std::vector<float>{0, 1, 2, 0, 3, 4}));
  expect_idempotent(m.bytes());
  auto written = normalize_onnx(m.bytes(), {}, "t");
  ASSERT_TRUE(written) << written.error().to_string();
  ASSERT_TRUE(written->changed());
  EXPECT_EQ(checker_says(written->bytes), "");
}

TEST(Normalize, ExpandToItsOwnShapeIsRemoved) {
  // x.expand(x.shape): an Expand with a computed shape that changes nothing.
  Graph m;
  m.input("x", {1, 3, 4});
  m.output("y", {1, 3, 4});
  m.node("Shape", "shape", {"x"}, {"s"});
  m.node("Expand", "expand", {"x", "s"}, {"e"});
  m.node("Relu", "relu", {"e"}, {"y"});
  const auto x = ramp(12, -6.0f, 1.0f);
  auto r = run_cpu(m.bytes(), x);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(rewrites(r->info, "noop_expand_removed"), 1u);
  EXPECT_EQ(rewrites(r->info, "constant_folded"), 1u);
  std::vector<float> want;
  for (float v : x) want.push_back(std::max(0.0f, v));
  EXPECT_EQ(r->outputs[0], want);
  expect_idempotent(m.bytes());
}

TEST(Normalize, ConvWithoutKernelShapeComputesAsWithIt) {
  auto conv = [](bool kernel_shape) {
    Graph m;
    m.input("x", {1, 2, 5, 5});
    m.output("y", {1, 3, 5, 5});
    std::vector<float> w(3 * 2 * 3 * 3);
    for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>((i * 7) % 11) / 11.0f - 0.4f;
    m.floats("w", {3, 2, 3, 3}, w);
    m.floats("b", {3}, {0.1f, -0.2f, 0.3f});
    auto* n = m.node("Conv", "conv", {"x", "w", "b"}, {"y"});
    Graph::attr_ints(n, "pads", {1, 1, 1, 1});
    if (kernel_shape) Graph::attr_ints(n, "kernel_shape", {3, 3});
    return m.bytes();
  };
  const auto x = ramp(50, -1.0f, 0.04f);
  auto exported = run_cpu(conv(false), x);
  auto reference = run_cpu(conv(true), x);  // the form OpenCV already accepts
  ASSERT_TRUE(exported) << exported.error().to_string();
  ASSERT_TRUE(reference) << reference.error().to_string();
  EXPECT_EQ(rewrites(exported->info, "kernel_shape_set"), 1u);
  EXPECT_EQ(reference->info.normalization.total(), 0u);
  EXPECT_LE(relative_error(exported->outputs[0], reference->outputs[0]), 1e-5);
  expect_idempotent(conv(false));
}

TEST(Normalize, ResizeWithDefaultedModesGetsThemSpelledOut) {
  // F.interpolate(scale_factor=2, mode="nearest") at opset 13, with the
  // coordinate mode left to its default (half_pixel, round_prefer_floor).
  Graph m;
  m.input("x", {1, 1, 2, 2});
  m.output("y", {1, 1, 4, 4});
  m.floats("roi", {0}, {});
  m.floats("scales", {4}, {1, 1, 2, 2});
  m.node("Resize", "resize", {"x", "roi", "scales"}, {"y"});
  auto r = run_cpu(m.bytes(), {1, 2, 3, 4});
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(rewrites(r->info, "resize_defaults_set"), 1u);
  // By hand: half_pixel maps output 0..3 to input -0.25, 0.25, 0.75, 1.25,
  // which round_prefer_floor takes to 0, 0, 1, 1.
  const std::vector<float> want = {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4};
  EXPECT_EQ(r->outputs[0], want);
  expect_idempotent(m.bytes());
}

TEST(Normalize, DeadNodesAndUnusedInitializersAreRemoved) {
  Graph m;
  m.input("x", {1, 4});
  m.output("y", {1, 4});
  m.floats("unused", {4}, {1, 2, 3, 4});
  m.node("Sigmoid", "dead", {"x"}, {"nobody"});
  m.node("Relu", "relu", {"x"}, {"y"});
  auto r = run_cpu(m.bytes(), {-1, 1, -2, 2});
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(rewrites(r->info, "dead_node_removed"), 1u);
  EXPECT_EQ(rewrites(r->info, "unused_initializer_removed"), 1u);
  EXPECT_EQ(r->outputs[0], (std::vector<float>{0, 1, 0, 2}));
  expect_idempotent(m.bytes());
}

TEST(Normalize, TheRigsOwnModelsPassUnchanged) {
  TransportSpec t;
  t.frame = {16, 16};
  CnnSpec c;
  c.frame = {16, 16};
  for (const auto& bytes : {build_transport_model(t), build_cnn_model(c)}) {
    ASSERT_TRUE(bytes);
    auto n = normalize_onnx(*bytes, {}, "own");
    ASSERT_TRUE(n) << n.error().to_string();
    EXPECT_FALSE(n->changed());
    EXPECT_EQ(n->report.total(), 0u);
    EXPECT_TRUE(n->report.notes.empty());
    EXPECT_EQ(n->report.nodes_before, n->report.nodes_after);
  }
}

Graph dynamic_model() {
  Graph m;
  m.input("image", {0, 3, 0, 0}, {"batch_size", "", "height", "width"});
  auto* out = m.g->add_output();
  out->set_name("y");
  out->mutable_type()->mutable_tensor_type()->set_elem_type(TP::FLOAT);
  m.node("Relu", "relu", {"image"}, {"y"});
  return m;
}

TEST(Normalize, ShapeFixesADynamicModelAndAFreeBatchIsNoted) {
  const auto bytes = dynamic_model().bytes();
  // Without --shape: the free height is an error naming input, name and index.
  auto refused = run_cpu(bytes, {});
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::invalid_argument);
  EXPECT_NE(refused.error().message.find("input 'image' dimension 2 ('height')"), std::string::npos)
      << refused.error().message;
  auto r = run_cpu(bytes, ramp(3 * 4 * 5, -1, 0.1f), {{"image", {1, 3, 4, 5}}});
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(r->info.inputs.at(0).shape, (std::vector<int64_t>{1, 3, 4, 5}));
  EXPECT_EQ(r->info.outputs.at(0).shape, (std::vector<int64_t>{1, 3, 4, 5}));
  EXPECT_TRUE(r->info.normalization.notes.empty());

  // A free batch alone defaults to 1, and says so.
  Graph batch;
  batch.input("x", {0, 4}, {"N"});
  batch.output("y", {0, 4});
  batch.node("Relu", "relu", {"x"}, {"y"});
  auto b = run_cpu(batch.bytes(), {1, -1, 2, -2});
  ASSERT_TRUE(b) << b.error().to_string();
  ASSERT_EQ(b->info.normalization.notes.size(), 1u);
  EXPECT_NE(b->info.normalization.notes[0].find("free batch dimension 0 ('N') set to 1"),
            std::string::npos)
      << b->info.normalization.notes[0];
}

TEST(Normalize, WrongShapesAreNamedErrors) {
  const auto bytes = dynamic_model().bytes();
  auto expect_error = [&](std::vector<InputShape> shapes, const std::string& text) {
    NormalizeOptions o;
    o.shapes = std::move(shapes);
    auto n = normalize_onnx(bytes, o, "dyn");
    ASSERT_FALSE(n) << text;
    EXPECT_EQ(n.error().code, ErrorCode::invalid_argument);
    EXPECT_NE(n.error().message.find(text), std::string::npos) << n.error().message;
  };
  expect_error({{"picture", {1, 3, 4, 4}}}, "input 'picture', which the model does not have");
  expect_error({{"image", {1, 3, 4}}}, "has rank 4, not 3");
  expect_error({{"image", {1, 4, 4, 4}}}, "dimension 1 is fixed at 3");

  for (const char* bad : {"image=1x3x0x4", "image=", "=1x3", "image", "image=1x-3", "image=2xx3"}) {
    auto s = parse_input_shape(bad);
    ASSERT_FALSE(s) << bad;
    EXPECT_EQ(s.error().code, ErrorCode::invalid_argument);
    EXPECT_NE(s.error().message.find(bad), std::string::npos) << s.error().message;
  }
  auto s = parse_input_shape("a=b=1x3x224x224");  // NAME is everything before the last '='
  ASSERT_TRUE(s) << s.error().to_string();
  EXPECT_EQ(s->name, "a=b");
  EXPECT_EQ(s->dims, (std::vector<int64_t>{1, 3, 224, 224}));
}

// x + w over two 1-D tensors of 8: OpenCV 4.6 (Debian 12) computes 8
// values; OpenCV 4.10 (Debian 13) computes 8 x 8, which the cpu device, which
// holds OpenCV's outputs to the shapes the model declares, refuses by name
// rather than pass on. As a 1x8 row both compute the 8 values.
TEST(Normalize, OneDimensionalAddIsRightOrRefusedByName) {
  auto add = [](const std::vector<int64_t>& shape) {
    Graph m;
    m.input("x", shape);
    m.output("y", shape);
    m.floats("w", shape, ramp(8, 1.0f, 1.0f));
    m.node("Add", "add", {"x", "w"}, {"y"});
    return m.bytes();
  };
  const auto x = ramp(8, 0.0f, 10.0f);
  std::vector<float> want(8);
  for (size_t i = 0; i < want.size(); ++i) want[i] = x[i] + 1.0f + static_cast<float>(i);

  auto row = run_cpu(add({1, 8}), x);
  ASSERT_TRUE(row) << row.error().to_string();
  EXPECT_EQ(row->outputs[0], want);

  const auto props = cpu()->info().properties;
  const auto version = props.find("opencv_version");
  ASSERT_NE(version, props.end());
  auto flat = run_cpu(add({8}), x);
  if (version->second.rfind("4.6.", 0) == 0) {
    ASSERT_TRUE(flat) << flat.error().to_string();
    EXPECT_EQ(flat->outputs[0], want);
  } else if (version->second.rfind("4.10.", 0) == 0) {
    ASSERT_FALSE(flat);
    EXPECT_NE(flat.error().message.find("produced 64 elements, the model declares 8"),
              std::string::npos)
        << flat.error().message;
  } else if (!flat) {  // another OpenCV: right, or refused by name
    EXPECT_NE(flat.error().message.find("the model declares 8"), std::string::npos)
        << flat.error().message;
  } else {
    EXPECT_EQ(flat->outputs[0], want);
  }
}

TEST(Normalize, UnsupportedNodesAreListedThenTheImportersRefusal) {
  Graph m;
  m.input("x", {1, 16});
  m.output("values", {1, 4});
  m.ints("k", {1}, {4});
  auto* topk = m.node("TopK", "topk0", {"x", "k"}, {"values", "indices"});
  (void)topk;
  m.node("NonZero", "nz", {"indices"}, {"where"});
  auto* o = m.g->add_output();
  o->set_name("where");
  o->mutable_type()->mutable_tensor_type()->set_elem_type(TP::INT64);
  auto r = run_cpu(m.bytes(), {});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::unsupported);
  const std::string& msg = r.error().message;
  EXPECT_NE(msg.find("has no importer for 2 nodes"), std::string::npos) << msg;
  EXPECT_NE(msg.find("TopK 'topk0' (opset 13, inputs 1x16, 1)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("NonZero 'nz' (opset 13"), std::string::npos) << msg;
  EXPECT_NE(msg.find("first refusal"), std::string::npos) << msg;
}

TEST(Normalize, ExternalDataAndNewerOpsetsAreRefusedByName) {
  Graph m;
  m.input("x", {1, 4});
  m.output("y", {1, 4});
  auto* w = m.g->add_initializer();
  w->set_name("w");
  w->set_data_type(TP::FLOAT);
  w->add_dims(4);
  w->set_data_location(TP::EXTERNAL);
  auto* kv = w->add_external_data();
  kv->set_key("location");
  kv->set_value("weights.bin");
  m.node("Add", "add", {"x", "w"}, {"y"});
  auto n = normalize_onnx(m.bytes(), {}, "ext");
  ASSERT_FALSE(n);
  EXPECT_EQ(n.error().code, ErrorCode::unsupported);
  EXPECT_NE(n.error().message.find("initializer 'w'"), std::string::npos) << n.error().message;
  EXPECT_NE(n.error().message.find("weights.bin"), std::string::npos);
  EXPECT_NE(n.error().message.find("external data"), std::string::npos);

  Graph future(99);
  future.input("x", {1, 4});
  future.output("y", {1, 4});
  future.node("Relu", "relu", {"x"}, {"y"});
  auto f = normalize_onnx(future.bytes(), {}, "future");
  ASSERT_FALSE(f);
  EXPECT_EQ(f.error().code, ErrorCode::unsupported);
  EXPECT_NE(f.error().message.find("opset 99"), std::string::npos) << f.error().message;
  // The newest opset the installed libonnx knows: 17 in ONNX 1.12 (Debian 12),
  // 22 in ONNX 1.17 (Debian 13).
  const int newest = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map().at("").second;
  EXPECT_GE(newest, 17);
  EXPECT_NE(f.error().message.find("knows (" + std::to_string(newest) + ")"), std::string::npos)
      << f.error().message;
}

TEST(Normalize, TheWorkCapStopsThePassAndSaysSo) {
  Graph m;
  m.input("x", {1, 4});
  m.output("y", {1, 4});
  m.ints("big", {1}, {64});
  // ConstantOfShape([64]) folds to 64 elements, over a cap of 16.
  m.node("ConstantOfShape", "cos", {"big"}, {"c"});
  m.node("Relu", "relu", {"x"}, {"y"});
  auto uncapped = normalize_onnx(m.bytes(), {}, "cap");
  ASSERT_TRUE(uncapped) << uncapped.error().to_string();
  EXPECT_EQ(uncapped->report.rewrites.count("constant_folded"), 1u);
  NormalizeOptions o;
  o.max_folded_elements = 16;
  auto n = normalize_onnx(m.bytes(), o, "cap");
  ASSERT_TRUE(n) << n.error().to_string();
  EXPECT_EQ(n->report.rewrites.count("constant_folded"), 0u);
  o.max_rounds = 0;
  auto zero = normalize_onnx(m.bytes(), o, "cap");
  ASSERT_TRUE(zero) << zero.error().to_string();
  ASSERT_FALSE(zero->report.notes.empty());
  EXPECT_NE(zero->report.notes.back().find("cap of 0 rounds"), std::string::npos);
}

}  // namespace
}  // namespace rig

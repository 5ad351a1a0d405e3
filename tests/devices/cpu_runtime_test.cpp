// The cpu device's runtimes: the spec's runtime rules (both builds), the ort
// runtime where ONNX Runtime is built (skipped elsewhere; its refusal is
// tested instead), and the per-layer profile of both runtimes.
#include <cmath>
#include <cstring>
#include <string>

#include <gtest/gtest.h>

#include <onnx/onnx_pb.h>

#include "devices/cpu/cpu_device.hpp"
#include "rig/model.hpp"
#include "rig/units.hpp"

namespace rig {
namespace {

Result<std::unique_ptr<Device>> open_spec(const std::string& text) {
  auto spec = parse_spec(text);
  EXPECT_TRUE(spec) << text;
  return open_cpu_device(spec->params);
}

bool ort_built() {
  return open_spec("cpu:runtime=ort").has_value();
}

std::vector<std::byte> small_cnn() {
  CnnSpec spec;
  spec.frame = {32, 32};
  spec.channels = 4;
  spec.layers = 2;
  auto bytes = build_cnn_model(spec);
  EXPECT_TRUE(bytes);
  return *bytes;
}

std::vector<std::byte> transport(ElementType type) {
  TransportSpec spec;
  spec.frame = {32, 32};
  spec.input_type = type;
  auto bytes = build_transport_model(spec);
  EXPECT_TRUE(bytes);
  return *bytes;
}

ModelSource from_bytes(std::vector<std::byte> bytes, std::string name = "test") {
  ModelSource source;
  source.bytes = std::move(bytes);
  source.name = std::move(name);
  return source;
}

// One binding's buffers, inputs filled with a fixed pattern.
struct Buffers {
  std::vector<std::vector<std::byte>> inputs, outputs;
  explicit Buffers(const ModelInfo& info) {
    for (const auto& t : info.inputs) {
      inputs.emplace_back(t.bytes);
      for (size_t k = 0; k < t.bytes; ++k) inputs.back()[k] = static_cast<std::byte>(k * 7 % 97);
      if (t.type == ElementType::f32)
        for (size_t k = 0; k < t.bytes / 4; ++k) {
          const float v = static_cast<float>(k % 101) / 101.0f - 0.3f;
          std::memcpy(inputs.back().data() + 4 * k, &v, 4);
        }
    }
    for (const auto& t : info.outputs) outputs.emplace_back(t.bytes);
  }
  Bindings bindings() {
    Bindings b;
    for (auto& in : inputs) b.inputs.emplace_back(in);
    for (auto& out : outputs) b.outputs.emplace_back(out);
    return b;
  }
  std::vector<float> floats(size_t i) const {
    std::vector<float> v(outputs[i].size() / 4);
    std::memcpy(v.data(), outputs[i].data(), outputs[i].size());
    return v;
  }
};

// A graph of one node, op `op` in `domain`, x[1,16] -> y[1,16], at `opset`.
std::vector<std::byte> one_node_model(const std::string& domain, const std::string& op,
                                      int64_t opset) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  auto* ai = model.add_opset_import();
  ai->set_domain("");
  ai->set_version(opset);
  if (!domain.empty()) {
    auto* custom = model.add_opset_import();
    custom->set_domain(domain);
    custom->set_version(1);
  }
  auto* graph = model.mutable_graph();
  graph->set_name("one");
  for (auto [value, name] : {std::pair{graph->add_input(), "x"}, {graph->add_output(), "y"}}) {
    value->set_name(name);
    auto* tensor = value->mutable_type()->mutable_tensor_type();
    tensor->set_elem_type(onnx::TensorProto::FLOAT);
    tensor->mutable_shape()->add_dim()->set_dim_value(1);
    tensor->mutable_shape()->add_dim()->set_dim_value(16);
  }
  auto* node = graph->add_node();
  node->set_op_type(op);
  node->set_domain(domain);
  node->set_name("the_node");
  node->add_input("x");
  node->add_output("y");
  const std::string text = model.SerializeAsString();
  std::vector<std::byte> bytes(text.size());
  std::memcpy(bytes.data(), text.data(), text.size());
  return bytes;
}

TEST(CpuRuntime, UnknownRuntimeAndParametersAreNamed) {
  auto bogus = open_spec("cpu:runtime=tflite");
  ASSERT_FALSE(bogus);
  EXPECT_EQ(bogus.error().code, ErrorCode::invalid_argument);
  EXPECT_NE(bogus.error().message.find("runtime='tflite'"), std::string::npos);

  auto unknown = open_spec("cpu:runtime=opencv,intra=2");
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message.find("unknown cpu parameter 'intra'"), std::string::npos);
  EXPECT_EQ(exit_code_for(unknown.error().code), 2);

  // ONNX Runtime's parameters mean nothing to OpenCV: refused by name.
  for (const char* text :
       {"cpu:runtime=opencv,inter_threads=2", "cpu:runtime=opencv,optimization=all",
        "cpu:runtime=opencv,execution=parallel"}) {
    auto refused = open_spec(text);
    ASSERT_FALSE(refused) << text;
    EXPECT_EQ(refused.error().code, ErrorCode::invalid_argument) << text;
    EXPECT_NE(refused.error().message.find("means nothing for runtime=opencv"), std::string::npos)
        << refused.error().message;
  }
}

TEST(CpuRuntime, OrtIsRefusedByNameWhereItIsNotBuilt) {
  if (ort_built()) GTEST_SKIP() << "ONNX Runtime is built";
  auto ort = open_spec("cpu:runtime=ort");
  ASSERT_FALSE(ort);
  EXPECT_EQ(ort.error().code, ErrorCode::unsupported);
  EXPECT_EQ(exit_code_for(ort.error().code), 2);
  EXPECT_NE(ort.error().message.find("not built: ONNX Runtime was not found at configure time; "
                                     "on Debian 13 install libonnxruntime-dev"),
            std::string::npos)
      << ort.error().message;
  // The default is the runtime that is built.
  auto plain = open_spec("cpu");
  ASSERT_TRUE(plain);
  EXPECT_EQ((*plain)->info().properties.at("runtime"), "opencv");
}

TEST(CpuRuntime, OrtIsTheDefaultAndStatesItsSettings) {
  if (!ort_built()) GTEST_SKIP() << "ONNX Runtime is not built";
  auto plain = open_spec("cpu:threads=1");
  ASSERT_TRUE(plain);
  const DeviceInfo info = (*plain)->info();
  EXPECT_EQ(info.properties.at("runtime"), "ort");
  EXPECT_EQ(info.spec,
            "cpu:runtime=ort,threads=1,inter_threads=1,optimization=all,execution=sequential,"
            "workers=1,depth=2");
  EXPECT_FALSE(info.properties.at("onnxruntime_version").empty());

  auto tuned = open_spec(
      "cpu:runtime=ort,threads=2,inter_threads=2,optimization=basic,"
      "execution=parallel,workers=2,depth=3");
  ASSERT_TRUE(tuned) << tuned.error().to_string();
  const DeviceInfo t = (*tuned)->info();
  EXPECT_EQ(t.properties.at("optimization"), "basic");
  EXPECT_EQ(t.properties.at("execution"), "parallel");
  EXPECT_EQ(t.properties.at("inter_threads"), "2");
  EXPECT_EQ(t.queue_depth, 3u);

  for (const char* text : {"cpu:runtime=ort,optimization=max", "cpu:runtime=ort,execution=async",
                           "cpu:runtime=ort,inter_threads=0"}) {
    auto bad = open_spec(text);
    ASSERT_FALSE(bad) << text;
    EXPECT_EQ(bad.error().code, ErrorCode::invalid_argument) << text;
  }
}

class OrtTypes : public testing::TestWithParam<ElementType> {};

// Every input type the transport model takes, bound without copies: the
// output lands in the caller's buffer and equals OpenCV's.
TEST_P(OrtTypes, RunsTheTransportModelAsOpenCvDoes) {
  if (!ort_built()) GTEST_SKIP() << "ONNX Runtime is not built";
  auto ort = open_spec("cpu:runtime=ort,threads=1");
  auto cv = open_spec("cpu:runtime=opencv,threads=1");
  ASSERT_TRUE(ort && cv);
  std::vector<float> results[2];
  int i = 0;
  for (Device* device : {ort->get(), cv->get()}) {
    auto loaded = device->load(from_bytes(transport(GetParam())));
    ASSERT_TRUE(loaded) << loaded.error().to_string();
    Buffers buffers(device->model_info());
    auto id = device->bind(buffers.bindings());
    ASSERT_TRUE(id) << id.error().to_string();
    auto run = device->run(*id);
    ASSERT_TRUE(run) << run.error().to_string();
    ASSERT_TRUE(run->compute);
    results[i++] = buffers.floats(0);
  }
  ASSERT_EQ(results[0].size(), results[1].size());
  for (size_t k = 0; k < results[0].size(); ++k)
    ASSERT_NEAR(results[0][k], results[1][k], 1e-4) << k;
}

INSTANTIATE_TEST_SUITE_P(Types, OrtTypes, testing::Values(ElementType::u8, ElementType::f32));

TEST(CpuRuntime, OrtColdStartAsyncPoolAndLoop) {
  if (!ort_built()) GTEST_SKIP() << "ONNX Runtime is not built";
  auto device = open_spec("cpu:runtime=ort,threads=1,workers=2,depth=4");
  ASSERT_TRUE(device);
  auto loaded = (*device)->load(from_bytes(small_cnn()));
  ASSERT_TRUE(loaded) << loaded.error().to_string();
  EXPECT_GT(loaded->compile.count(), 0);  // session creation
  const ModelInfo& info = (*device)->model_info();
  std::vector<std::unique_ptr<Buffers>> sets;
  std::vector<BindingId> ids;
  for (int b = 0; b < 4; ++b) {
    sets.push_back(std::make_unique<Buffers>(info));
    auto id = (*device)->bind(sets.back()->bindings());
    ASSERT_TRUE(id);
    ids.push_back(*id);
  }
  for (uint64_t tag = 0; tag < 4; ++tag) ASSERT_TRUE((*device)->submit(ids[tag], tag));
  EXPECT_EQ((*device)->submit(ids[0], 9).error().code, ErrorCode::invalid_argument);  // busy
  std::set<uint64_t> seen;
  for (int n = 0; n < 4; ++n) {
    auto c = (*device)->wait_next(std::chrono::seconds(30));
    ASSERT_TRUE(c) << c.error().to_string();
    ASSERT_FALSE(c->error) << c->error->to_string();
    seen.insert(c->tag);
  }
  EXPECT_EQ(seen.size(), 4u);
  // Same inputs, same outputs in every binding.
  for (int b = 1; b < 4; ++b) EXPECT_EQ(sets[b]->outputs, sets[0]->outputs);

  std::fill(sets[1]->outputs[0].begin(), sets[1]->outputs[0].end(), std::byte{0});
  auto loop = (*device)->run_for_duration(ids[1], std::chrono::milliseconds(50), Nanos{0});
  ASSERT_TRUE(loop) << loop.error().to_string();
  EXPECT_GT(*loop->frames_completed, 0u);
  EXPECT_EQ(sets[1]->outputs, sets[0]->outputs);
}

TEST(CpuRuntime, OrtRefusesAnOperatorItLacksByName) {
  if (!ort_built()) GTEST_SKIP() << "ONNX Runtime is not built";
  auto device = open_spec("cpu:runtime=ort");
  ASSERT_TRUE(device);
  auto loaded = (*device)->load(from_bytes(one_node_model("com.example", "NoSuchOp", 13)));
  ASSERT_FALSE(loaded);
  EXPECT_EQ(loaded.error().code, ErrorCode::unsupported);
  EXPECT_EQ(exit_code_for(loaded.error().code), 2);
  EXPECT_NE(loaded.error().message.find("ONNX Runtime"), std::string::npos);
  EXPECT_NE(loaded.error().message.find("NoSuchOp"), std::string::npos) << loaded.error().message;
  // A failed load leaves no model loaded.
  EXPECT_FALSE((*device)->bind(Bindings{}));
}

TEST(CpuRuntime, AnOpsetNewerThanKnownIsRefusedBeforeTheRuntime) {
  for (const char* runtime : {"opencv", "ort"}) {
    auto device = open_spec(std::string("cpu:runtime=") + runtime);
    if (!device) continue;  // ort not built
    auto loaded = (*device)->load(from_bytes(one_node_model("", "Relu", 999)));
    ASSERT_FALSE(loaded) << runtime;
    EXPECT_EQ(exit_code_for(loaded.error().code), 2) << loaded.error().to_string();
    EXPECT_NE(loaded.error().message.find("999"), std::string::npos) << loaded.error().message;
  }
}

TEST(CpuRuntime, EveryBuiltRuntimeProfilesLayers) {
  for (const char* runtime : {"opencv", "ort"}) {
    auto device = open_spec(std::string("cpu:threads=1,runtime=") + runtime);
    if (!device) continue;  // ort not built
    ASSERT_TRUE((*device)->load(from_bytes(small_cnn())));
    Buffers buffers((*device)->model_info());
    auto id = (*device)->bind(buffers.bindings());
    ASSERT_TRUE(id);
    auto profile = (*device)->profile_layers(*id, 3);
    ASSERT_TRUE(profile) << runtime << ": " << profile.error().to_string();
    EXPECT_EQ(profile->runs, 3u);
    EXPECT_FALSE(profile->profiler.empty());
    bool conv = false;
    Nanos total{0};
    for (const auto& layer : profile->layers) {
      conv = conv || layer.op_type.find("Conv") != std::string::npos ||
             layer.op_type.find("Convolution") != std::string::npos;
      EXPECT_LE(layer.calls, 3u) << layer.name;
      total += layer.total;
    }
    EXPECT_TRUE(conv) << runtime;
    EXPECT_GT(total.count(), 0) << runtime;
    EXPECT_LE(total, profile->wall) << runtime;
    EXPECT_FALSE((*device)->profile_layers(*id, 0));
  }
}

TEST(CpuRuntime, ADeviceWithoutAProfileRefusesByName) {
  auto sim = open_device("sim:compute=1ms");
  ASSERT_TRUE(sim);
  auto profile = (*sim)->profile_layers(1, 1);
  ASSERT_FALSE(profile);
  EXPECT_EQ(profile.error().code, ErrorCode::unsupported);
  EXPECT_NE(profile.error().message.find("no per-layer profile"), std::string::npos);
}

}  // namespace
}  // namespace rig

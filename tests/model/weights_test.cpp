// The weights reader (the graph's initializer shapes, never their data) and
// SHA-256, against known answers.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "rig/device.hpp"
#include "rig/model.hpp"
#include "rig/model_graph.hpp"

namespace rig {
namespace {

std::span<const std::byte> as_bytes(const std::string& s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(sha256_hex(as_bytes("")),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex(as_bytes("abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex(as_bytes("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  const std::string million(1000000, 'a');
  EXPECT_EQ(sha256_hex(as_bytes(million)),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, FileMatchesBytesAndModelSource) {
  const auto path =
      std::filesystem::temp_directory_path() / ("rig-sha-" + std::to_string(::getpid()) + ".bin");
  const std::string text(3 << 20, 'x');  // several read chunks
  ASSERT_TRUE(write_file_atomic(path.string(), std::string_view(text)).has_value());
  auto h = file_sha256(path.string());
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(*h, sha256_hex(as_bytes(text)));
  ModelSource source;
  source.path = path.string();
  EXPECT_EQ(model_sha256(source), *h);
  source.server_name = "x";
  source.path.clear();
  EXPECT_EQ(model_sha256(source), "");
  std::filesystem::remove(path);
  EXPECT_EQ(file_sha256(path.string()).error().code, ErrorCode::not_found);
}

// The generator's own count: conv weights and biases, then the Gemm's.
uint64_t cnn_parameters(const CnnSpec& s) {
  uint64_t n = 0;
  int64_t in = s.input_channels;
  for (int64_t l = 0; l < s.layers; ++l) {
    n += static_cast<uint64_t>(s.channels * in * 9 + s.channels);
    in = s.channels;
  }
  return n + static_cast<uint64_t>(s.classes * s.channels + s.classes);
}

TEST(GraphWeights, CnnParameterCountIsTheGenerators) {
  for (const CnnSpec& spec : {CnnSpec{}, CnnSpec{.channels = 16, .layers = 6, .classes = 100}}) {
    auto bytes = build_cnn_model(spec);
    ASSERT_TRUE(bytes.has_value());
    auto w = read_graph_weights(*bytes);
    ASSERT_TRUE(w.has_value()) << w.error().message;
    const uint64_t expected = cnn_parameters(spec);
    EXPECT_EQ(w->float_parameters, expected);
    ASSERT_TRUE(w->by_type.count("float32"));
    EXPECT_EQ(w->by_type.at("float32").bytes, expected * 4);
    EXPECT_EQ(w->external_tensors, 0u);
    // The real input (initializers excluded) with its declared size.
    ASSERT_EQ(w->inputs.size(), 1u);
    ASSERT_TRUE(w->inputs[0].bytes.has_value());
    EXPECT_EQ(*w->inputs[0].bytes, static_cast<uint64_t>(spec.input_channels * spec.frame.width *
                                                         spec.frame.height * 4));
  }
}

// A model whose weights live in a side file that does not even exist: the
// graph alone gives the count, so a model far over 2 GiB is fine.
TEST(GraphWeights, ExternalDataModelFarOver2GiB) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(13);
  auto* graph = model.mutable_graph();
  graph->set_name("big");
  const int64_t rows = 100000, cols = 60000;  // 6e9 bf16 parameters = 12 GB
  for (int i = 0; i < 2; ++i) {
    auto* t = graph->add_initializer();
    t->set_name("w" + std::to_string(i));
    t->set_data_type(onnx::TensorProto::BFLOAT16);
    t->add_dims(rows);
    t->add_dims(cols);
    t->set_data_location(onnx::TensorProto::EXTERNAL);
    auto* loc = t->add_external_data();
    loc->set_key("location");
    loc->set_value("weights.bin");
  }
  auto* small = graph->add_initializer();  // int64 shape data: not quantized
  small->set_name("shape");
  small->set_data_type(onnx::TensorProto::INT64);
  small->add_dims(4);
  for (int i = 0; i < 4; ++i) small->add_int64_data(i);
  const std::string bytes = model.SerializeAsString();
  ASSERT_LT(bytes.size(), 1000u);
  auto w = read_graph_weights(as_bytes(bytes));
  ASSERT_TRUE(w.has_value()) << w.error().message;
  EXPECT_EQ(w->float_parameters, 12000000000ull);
  EXPECT_EQ(w->parameters, 12000000004ull);
  EXPECT_EQ(w->external_tensors, 2u);
  EXPECT_EQ(w->by_type.at("bfloat16").bytes, 24000000000ull);
  EXPECT_EQ(w->non_float_bytes, 32u);
}

// Raw data is skipped by seeking, read from a file in place.
TEST(GraphWeights, FileWithRawDataAndConstantNode) {
  onnx::ModelProto model;
  auto* graph = model.mutable_graph();
  auto* t = graph->add_initializer();
  t->set_name("w");
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_dims(1 << 18);
  t->set_raw_data(std::string(size_t{4} << 18, '\1'));
  auto* node = graph->add_node();
  node->set_op_type("Constant");
  auto* attr = node->add_attribute();
  attr->set_name("value");
  attr->set_type(onnx::AttributeProto::TENSOR);
  attr->mutable_t()->set_data_type(onnx::TensorProto::FLOAT16);
  attr->mutable_t()->add_dims(10);
  const auto path = std::filesystem::temp_directory_path() /
                    ("rig-weights-" + std::to_string(::getpid()) + ".onnx");
  const std::string bytes = model.SerializeAsString();
  ASSERT_TRUE(write_file_atomic(path.string(), std::string_view(bytes)).has_value());
  auto w = read_graph_weights(path.string());
  std::filesystem::remove(path);
  ASSERT_TRUE(w.has_value()) << w.error().message;
  EXPECT_EQ(w->float_parameters, (1u << 18) + 10u);
  EXPECT_EQ(w->constant_tensors, 1u);
  EXPECT_EQ(w->stored_bytes, (4u << 18) + 20u);
}

TEST(GraphWeights, TruncatedAndForeignBytesAreNamedErrors) {
  auto bytes = build_cnn_model(CnnSpec{});
  ASSERT_TRUE(bytes.has_value());
  auto cut = read_graph_weights(std::span<const std::byte>(bytes->data(), bytes->size() / 2));
  ASSERT_FALSE(cut.has_value());
  EXPECT_NE(cut.error().message.find("at byte"), std::string::npos) << cut.error().message;
  auto text = read_graph_weights(as_bytes("this is not an onnx model at all"));
  ASSERT_FALSE(text.has_value());
  EXPECT_EQ(text.error().code, ErrorCode::invalid_argument);
  auto missing = read_graph_weights(std::string("/nonexistent/m.onnx"));
  EXPECT_EQ(missing.error().code, ErrorCode::not_found);
}

}  // namespace
}  // namespace rig

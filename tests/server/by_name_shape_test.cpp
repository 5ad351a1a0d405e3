// A model loaded by name (server:NAME) is normalised on the server with the
// client's --shape, which travels in LoadModelRequest.shapes (issue 8): a
// graph with free height and width loads with the shape given, and without
// it fails with the error naming the free dimension.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "rig/device.hpp"
#include "server/server.hpp"

namespace rig::server {
namespace {

namespace fs = std::filesystem;

// x [1, 3, h, w] -> Relu -> y, float.
std::string dynamic_relu() {
  onnx::ModelProto model;
  model.set_ir_version(7);
  auto* o = model.add_opset_import();
  o->set_domain("");
  o->set_version(13);
  auto* g = model.mutable_graph();
  g->set_name("dyn");
  auto value = [](onnx::ValueInfoProto* v, const std::string& name, bool free_hw) {
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    const char* params[] = {"", "", "h", "w"};
    const int64_t dims[] = {1, 3, 8, 8};
    for (int i = 0; i < 4; ++i) {
      auto* d = t->mutable_shape()->add_dim();
      if (free_hw && params[i][0] != '\0')
        d->set_dim_param(params[i]);
      else
        d->set_dim_value(dims[i]);
    }
  };
  value(g->add_input(), "x", true);
  value(g->add_output(), "y", true);
  auto* n = g->add_node();
  n->set_op_type("Relu");
  n->set_name("relu");
  n->add_input("x");
  n->add_output("y");
  return model.SerializeAsString();
}

class ByNameShape : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("rig-by-name-" + std::to_string(::getpid()));
    fs::create_directories(root_);
    std::ofstream(root_ / "dyn.onnx", std::ios::binary) << dynamic_relu();
    auto sim = open_device("sim:compute=1ms");
    ASSERT_TRUE(sim) << sim.error().to_string();
    ServerSettings s;
    s.listen = "127.0.0.1:0";
    s.model_dir = root_.string();
    auto server = Server::start(std::move(*sim), s);
    ASSERT_TRUE(server) << server.error().to_string();
    server_ = std::move(*server);
    auto remote = open_device(server_->address());
    ASSERT_TRUE(remote) << remote.error().to_string();
    remote_ = std::move(*remote);
  }
  void TearDown() override { fs::remove_all(root_); }

  Result<void> load(std::vector<InputShape> shapes) {
    ModelSource m;
    m.server_name = "dyn.onnx";
    m.shapes = std::move(shapes);
    auto r = remote_->load(m);
    if (!r) return tl::unexpected(r.error());
    return {};
  }

  fs::path root_;
  std::unique_ptr<Server> server_;
  std::unique_ptr<Device> remote_;
};

TEST_F(ByNameShape, TheShapeGivenFixesTheFreeDimensionsOnTheServer) {
  auto ok = load({{"x", {1, 3, 16, 12}}});
  ASSERT_TRUE(ok) << ok.error().to_string();
  const ModelInfo& info = remote_->model_info();
  ASSERT_EQ(info.inputs.size(), 1u);
  EXPECT_EQ(info.inputs[0].shape, (std::vector<int64_t>{1, 3, 16, 12}));
  EXPECT_EQ(info.inputs[0].bytes, 1u * 3 * 16 * 12 * 4);
  ASSERT_EQ(info.outputs.size(), 1u);
  EXPECT_EQ(info.outputs[0].bytes, 1u * 3 * 16 * 12 * 4);
  std::vector<std::byte> in(info.inputs[0].bytes), out(info.outputs[0].bytes);
  Bindings b;
  b.inputs.emplace_back(in);
  b.outputs.emplace_back(out);
  auto binding = remote_->bind(b);
  ASSERT_TRUE(binding);
  EXPECT_TRUE(remote_->run(*binding));
}

TEST_F(ByNameShape, WithoutTheShapeTheFreeDimensionIsNamed) {
  auto r = load({});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::invalid_argument) << r.error().to_string();
  EXPECT_NE(r.error().message.find("'h'"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("--shape"), std::string::npos) << r.error().message;
}

TEST_F(ByNameShape, AWrongShapeIsANamedError) {
  for (const auto& [shape, says] :
       std::vector<std::pair<InputShape, std::string>>{{{"nope", {1, 3, 8, 8}}, "nope"},
                                                       {{"x", {1, 3, 8}}, "rank"},
                                                       {{"x", {1, 3, 0, 8}}, "zero"}}) {
    auto r = load({shape});
    ASSERT_FALSE(r) << says;
    EXPECT_EQ(r.error().code, ErrorCode::invalid_argument) << r.error().to_string();
    EXPECT_NE(r.error().message.find(says), std::string::npos) << r.error().message;
  }
}

}  // namespace
}  // namespace rig::server

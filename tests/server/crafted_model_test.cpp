// Issue 26, item 1: a client uploading a crafted model (an initializer or a
// constant whose data does not match its declared shape and type) gets an
// error naming the tensor, and the server, serving the cpu device whose
// importer would read past the buffer, goes on serving: a valid model loads
// and runs after every one of them. Uploaded and loaded by name.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "model/crafted_models.hpp"
#include "rig/device.hpp"
#include "server/server.hpp"

namespace rig::server {
namespace {

namespace fs = std::filesystem;

class CraftedModel : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("rig-crafted-" + std::to_string(::getpid()));
    fs::create_directories(root_);
    for (const auto& m : crafted::crafted_models())
      std::ofstream(root_ / (m.name + ".onnx"), std::ios::binary)
          .write(reinterpret_cast<const char*>(m.bytes.data()),
                 static_cast<std::streamsize>(m.bytes.size()));
    auto cpu = open_device("cpu");
    ASSERT_TRUE(cpu) << cpu.error().to_string();
    ServerSettings s;
    s.listen = "127.0.0.1:0";
    s.model_dir = root_.string();
    auto server = Server::start(std::move(*cpu), s);
    ASSERT_TRUE(server) << server.error().to_string();
    server_ = std::move(*server);
    auto remote = open_device(server_->address());
    ASSERT_TRUE(remote) << remote.error().to_string();
    remote_ = std::move(*remote);
  }
  void TearDown() override { fs::remove_all(root_); }

  // The valid model of the family loads and runs: the server is alive.
  void still_serves() {
    const auto valid = crafted::valid_add_row(8);
    ModelSource m;
    m.bytes = valid;
    m.name = "valid";
    auto ok = remote_->load(m);
    ASSERT_TRUE(ok) << ok.error().to_string();
    std::vector<std::byte> in(32), out(32);
    Bindings b;
    b.inputs.emplace_back(in);
    b.outputs.emplace_back(out);
    auto binding = remote_->bind(b);
    ASSERT_TRUE(binding) << binding.error().to_string();
    auto run = remote_->run(*binding);
    ASSERT_TRUE(run) << run.error().to_string();
  }

  fs::path root_;
  std::unique_ptr<Server> server_;
  std::unique_ptr<Device> remote_;
};

TEST_F(CraftedModel, AnUploadIsRefusedNamingTheTensorAndTheServerGoesOn) {
  for (const auto& m : crafted::crafted_models()) {
    SCOPED_TRACE(m.name);
    ModelSource source;
    source.bytes = m.bytes;
    source.name = m.name;
    auto r = remote_->load(source);
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("'" + m.tensor + "'"), std::string::npos) << r.error().message;
  }
  still_serves();
}

TEST_F(CraftedModel, ALoadByNameIsRefusedNamingTheTensorAndTheServerGoesOn) {
  for (const auto& m : crafted::crafted_models()) {
    SCOPED_TRACE(m.name);
    ModelSource source;
    source.server_name = m.name + ".onnx";
    auto r = remote_->load(source);
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("'" + m.tensor + "'"), std::string::npos) << r.error().message;
  }
  still_serves();
}

// The cpu device in this process refuses them too (rig run/check/compare).
TEST(CraftedModelLocal, TheCpuDeviceRefusesThemBeforeItsImporterSeesThem) {
  auto cpu = open_device("cpu");
  ASSERT_TRUE(cpu) << cpu.error().to_string();
  for (const auto& m : crafted::crafted_models()) {
    SCOPED_TRACE(m.name);
    ModelSource source;
    source.bytes = m.bytes;
    auto r = (*cpu)->load(source);
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("'" + m.tensor + "'"), std::string::npos) << r.error().message;
  }
}

}  // namespace
}  // namespace rig::server

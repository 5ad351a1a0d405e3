// Running the rig executable from tests: RIG_BINARY is its path (a compile
// definition), each test gets a scratch folder with a 64x64 transport model.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "rig/model.hpp"

namespace rig::test {

struct CliRun {
  int status = -1;
  std::string output;  // stdout and stderr together
};

// Runs `rig ARGS` through the shell and waits for it.
inline CliRun rig(const std::string& args) {
  const std::string cmd = std::string(RIG_BINARY) + " " + args + " 2>&1";
  CliRun r;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.output.append(buf, n);
  const int raw = ::pclose(p);
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
  return r;
}

// A scratch folder per test, removed afterwards, holding t64.onnx (model_).
class CliFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("rig-cli-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->test_suite_name() + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    TransportSpec spec;
    spec.frame = {64, 64};
    auto bytes = build_transport_model(spec);
    ASSERT_TRUE(bytes.has_value());
    model_ = (dir_ / "t64.onnx").string();
    ASSERT_TRUE(write_file_atomic(model_, *bytes).has_value());
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  std::filesystem::path dir_;
  std::string model_;
};

}  // namespace rig::test

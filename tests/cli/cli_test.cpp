// The rig executable end to end: bad input gets a named error and a non-zero
// exit; a good run writes complete JSON and leaves no temporary files.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_support.hpp"
#include "rig/model.hpp"

namespace rig {
namespace {

namespace fs = std::filesystem;

using test::CliRun;
using test::rig;

class Cli : public test::CliFixture {};

constexpr const char* kSim = "-d sim:compute=1ms,bw=1GB/s,depth=4 --duration 2s -q";

void expect_error(const CliRun& r, int status, const std::string& needle) {
  EXPECT_EQ(r.status, status) << r.output;
  EXPECT_NE(r.output.find(needle), std::string::npos) << "missing '" << needle << "' in:\n"
                                                      << r.output;
  EXPECT_NE(r.output.find("rig: error:"), std::string::npos) << r.output;
}

TEST_F(Cli, MissingModelFile) {
  expect_error(rig("bench " + path("nope.onnx") + " " + kSim), 2, "does not exist");
}

TEST_F(Cli, CorruptModelFile) {
  std::ofstream(path("bad.onnx")) << "this is not a protobuf \x01\x02\x03";
  expect_error(rig("bench " + path("bad.onnx") + " " + kSim), 2, "bad.onnx");
  expect_error(rig("bench " + path("bad.onnx") + " -d cpu --duration 1s -q"), 2, "bad.onnx");
}

TEST_F(Cli, UnsupportedOperatorIsNamed) {
  onnx::ModelProto model;
  model.set_ir_version(7);
  model.add_opset_import()->set_version(13);
  auto* g = model.mutable_graph();
  g->set_name("g");
  auto add_value = [](onnx::ValueInfoProto* v, const char* name) {
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    for (int d : {1, 4}) t->mutable_shape()->add_dim()->set_dim_value(d);
  };
  add_value(g->add_input(), "x");
  add_value(g->add_output(), "y");
  auto* node = g->add_node();
  node->set_op_type("RigFrobnicate");
  node->add_input("x");
  node->add_output("y");
  std::string bytes;
  ASSERT_TRUE(model.SerializeToString(&bytes));
  std::ofstream(path("odd.onnx"), std::ios::binary) << bytes;
  const CliRun r = rig("bench " + path("odd.onnx") + " -d cpu --duration 1s -q");
  expect_error(r, 2, "RigFrobnicate");
  EXPECT_NE(r.output.find("unsupported"), std::string::npos) << r.output;
}

TEST_F(Cli, UnknownDeviceAndParameter) {
  expect_error(rig("bench " + model_ + " -d tpu:fast=1 -q"), 2, "unknown device 'tpu'");
  expect_error(rig("bench " + model_ + " -d sim:warp=9 -q"), 2, "unknown sim parameter 'warp'");
  expect_error(rig("bench " + model_ + " -d cpu:turbo=1 -q"), 2, "turbo");
}

TEST_F(Cli, DepthZero) {
  expect_error(rig("bench " + model_ + " " + kSim + " --depth 0"), 2, "--depth must be >= 1");
}

TEST_F(Cli, NonPositiveDuration) {
  expect_error(rig("bench " + model_ + " -d sim --duration 0s"), 2, "--duration must be positive");
  expect_error(rig("bench " + model_ + " -d sim --duration -3s"), 2, "--duration must be positive");
  expect_error(rig("bench " + model_ + " -d sim --duration soon"), 2, "--duration");
}

TEST_F(Cli, UnwritableOutputPath) {
  expect_error(rig("bench " + model_ + " " + kSim + " --json " + path("missing/dir/out.json")), 2,
               "does not exist");
  expect_error(rig("bench " + model_ + " " + kSim + " --json " + dir_.string()), 2,
               "is a directory");
}

TEST_F(Cli, BadFrameSizeForModelBuilder) {
  expect_error(rig("model transport --frame 13p -o " + path("x.onnx")), 2, "13p");
  EXPECT_FALSE(fs::exists(path("x.onnx")));
}

TEST_F(Cli, SimBenchWritesCompleteJsonAtomically) {
  const std::string out = path("result.json");
  const CliRun r = rig("bench " + model_ + " " + kSim + " --json " + out);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("time to first output"), std::string::npos);
  EXPECT_NE(r.output.find("verdict: VALID"), std::string::npos) << r.output;
  std::ifstream in(out);
  const auto doc = nlohmann::json::parse(in);
  EXPECT_EQ(doc["schema_version"], 3);
  EXPECT_EQ(doc["verdict"]["status"], "VALID");
  EXPECT_EQ(doc["bytes"]["model_in"], 64 * 64 * 4);
  EXPECT_EQ(doc["settings"]["effective"]["depth"], 4);
  // Only the result remains: no temporary files beside it.
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir_)) files += e.is_regular_file();
  EXPECT_EQ(files, 2u);  // the model and the result
}

TEST_F(Cli, StrictExitsNonZeroWhenInvalid) {
  const CliRun r =
      rig("bench " + model_ + " -d sim:compute=1ms,drift=0.5 --duration 2s -q --strict");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("verdict: INVALID"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace rig

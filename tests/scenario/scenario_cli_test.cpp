// rig ladder, sweep, ab and predict end to end: bad input gets a named error
// and exit status 2; a good run prints its figures with units and writes
// complete JSON (schema_version, settings, results; never NaN).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

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

class AnalysisCli : public test::CliFixture {
 protected:
  nlohmann::json read_json(const std::string& file) {
    std::ifstream in(file);
    return nlohmann::json::parse(in);
  }

  void expect_complete_json(const std::string& file, const char* tool) {
    ASSERT_TRUE(fs::exists(file));
    std::ifstream in(file);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(text.find("NaN"), std::string::npos);
    const auto doc = nlohmann::json::parse(text);
    EXPECT_EQ(doc["schema_version"], 3);
    EXPECT_EQ(doc["tool"], tool);
    EXPECT_TRUE(doc.contains("settings"));
    EXPECT_TRUE(doc.contains("results"));
    for (const auto& entry : fs::directory_iterator(dir_))
      EXPECT_EQ(entry.path().filename().string().find(".tmp"), std::string::npos)
          << "temporary file left: " << entry.path();
  }
};

constexpr const char* kSim = "-d sim:link=usb3-gen2,compute=0.1ms --duration 200ms -q";
constexpr const char* kSizes = "--sizes 64x64,128x128,256x256";

void expect_error(const CliRun& r, int status, const std::string& needle) {
  EXPECT_EQ(r.status, status) << r.output;
  EXPECT_NE(r.output.find(needle), std::string::npos) << "missing '" << needle << "' in:\n"
                                                      << r.output;
  EXPECT_NE(r.output.find("rig: error:"), std::string::npos) << r.output;
}

TEST_F(AnalysisCli, LadderBadInput) {
  const std::string base = std::string("ladder ") + kSim + " ";
  expect_error(rig(base + "--sizes 512p,huge"), 2, "--sizes: frame size 'huge'");
  expect_error(rig(base + "--sizes 512p"), 2, "at least two frame sizes");
  expect_error(rig(base + "--sizes 512p,512x512"), 2, "given twice");
  expect_error(rig(base + kSizes + " --depth 0"), 2, "--depth must be >= 1");
  expect_error(rig(std::string("ladder -d sim:compute=1us -q --duration 0s ") + kSizes), 2,
               "--duration must be positive");
  expect_error(rig(base + kSizes + " --json " + path("missing/dir/out.json")), 2, "does not exist");
  expect_error(rig(std::string("ladder -d sim:link=usb9 ") + kSizes + " -q"), 2,
               "unknown link profile 'usb9'");
  expect_error(rig(std::string("ladder -d sim:colour=red ") + kSizes + " -q"), 2,
               "unknown sim parameter 'colour'");
}

TEST_F(AnalysisCli, LadderWritesJson) {
  const std::string out = path("ladder.json");
  const CliRun r = rig(std::string("ladder ") + kSim + " " + kSizes + " --json " + out);
  ASSERT_EQ(r.status, 0) << r.output;
  for (const char* needle : {"MB/s", "ms/frame", "bandwidth:", "fixed latency:", "round trip",
                             "per transfer", "plateau", "reproducibility"})
    EXPECT_NE(r.output.find(needle), std::string::npos) << needle << " in\n" << r.output;
  expect_complete_json(out, "rig ladder");
  const auto doc = read_json(out);
  EXPECT_EQ(doc["results"]["rungs"].size(), 3u);
  EXPECT_EQ(doc["settings"]["effective"]["sizes"].size(), 3u);
}

TEST_F(AnalysisCli, SweepBadInput) {
  const std::string base = "sweep " + model_ + " " + kSim + " ";
  expect_error(rig(base + "--depth 8..2"), 2, "runs backwards");
  expect_error(rig(base + "--depth lots"), 2, "--depth: depth range 'lots'");
  expect_error(rig(base + "--depth 0"), 2, "--depth");
  expect_error(rig(base + "--depth 64..128"), 2, "above the device's queue depth 32");
  expect_error(rig("sweep " + path("nope.onnx") + " " + kSim), 2, "does not exist");
}

TEST_F(AnalysisCli, SweepWritesJson) {
  const std::string out = path("sweep.json");
  const CliRun r = rig("sweep " + model_ + " " + kSim + " --depth 1..8 --repeats 1 --json " + out);
  ASSERT_EQ(r.status, 0) << r.output;
  for (const char* needle : {"frames/s", "knee: depth", "round trip", "queue depth 32"})
    EXPECT_NE(r.output.find(needle), std::string::npos) << needle << " in\n" << r.output;
  expect_complete_json(out, "rig sweep");
}

TEST_F(AnalysisCli, AbBadInput) {
  const std::string base = "ab " + model_ + " " + kSim + " ";
  expect_error(rig(base + "--a depth --b depth=1"), 2, "--a: knob 'depth' is not KNOB=VALUE");
  expect_error(rig(base + "--a depth=1 --b depth=0"), 2, "--b: knob depth=0");
  expect_error(rig(base + "--a depth=1 --b link=usb9"), 2, "unknown link profile 'usb9'");
  // One or two pairs have no spread to call noise.
  for (const char* n : {"0", "1", "2"})
    expect_error(rig(base + "--a depth=1 --b depth=2 --pairs " + n), 2,
                 std::string("--pairs must be >= 3 for a verdict") +
                     " (the runs' own spread is "
                     "the noise estimate), got " +
                     n);
  expect_error(rig("ab " + model_ + " -d tcp://127.0.0.1:1 -q --a threads=2 --b threads=1"), 2,
               "only depth applies to a remote device");
  // --b is required (CLI11 names it).
  const CliRun missing = rig(base + "--a depth=1");
  EXPECT_EQ(missing.status, 2) << missing.output;
  EXPECT_NE(missing.output.find("--b"), std::string::npos) << missing.output;
}

TEST_F(AnalysisCli, AbWritesJson) {
  const std::string out = path("ab.json");
  const CliRun r =
      rig("ab " + model_ + " " + kSim + " --a depth=1 --b depth=8 --pairs 3 --json " + out);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("verdict: B (depth=8) is faster"), std::string::npos) << r.output;
  expect_complete_json(out, "rig ab");
}

TEST_F(AnalysisCli, PredictBadInputAndRoundTrip) {
  expect_error(rig("predict " + path("nope.json") + " --link usb3-gen2"), 2, "nope.json");
  std::ofstream(path("garbage.json")) << "{ not json";
  expect_error(rig("predict " + path("garbage.json") + " --link usb3-gen2"), 2, "not JSON");
  std::ofstream(path("empty.json")) << "{}";
  expect_error(rig("predict " + path("empty.json") + " --link usb3-gen2"), 2,
               "field 'schema_version' is missing");

  const std::string bench = path("bench.json");
  const CliRun b = rig("bench " + model_ +
                       " -d sim:compute=1ms,bw=10GB/s,depth=8 --duration 1s "
                       "--repeats 1 -q --json " +
                       bench);
  ASSERT_EQ(b.status, 0) << b.output;
  expect_error(rig("predict " + bench), 2, "--link is required");
  expect_error(rig("predict " + bench + " --link usb9"), 2, "--link: unknown link profile 'usb9'");
  expect_error(rig("predict " + bench + " --link bw=1GB/s,lat=1ms"), 2, "needs depth=");
  expect_error(rig("predict " + bench + " --link usb3-gen2 --depth 0"), 2, "--depth must be >= 1");

  const std::string ladder = path("ladder.json");
  ASSERT_EQ(rig(std::string("ladder ") + kSim + " " + kSizes + " --json " + ladder).status, 0);
  expect_error(rig("predict " + ladder + " --link usb3-gen2"), 2, "predict reads a rig bench");

  const std::string out = path("predict.json");
  const CliRun r = rig("predict " + bench + " --link usb3-gen2 --json " + out);
  ASSERT_EQ(r.status, 0) << r.output;
  for (const char* needle :
       {"steady:", "frames/s", "lone frame:", "time to first output:", "bounded by", "% idle"})
    EXPECT_NE(r.output.find(needle), std::string::npos) << needle << " in\n" << r.output;
  expect_complete_json(out, "rig predict");
  const CliRun list = rig("predict --list-links");
  EXPECT_EQ(list.status, 0);
  EXPECT_NE(list.output.find("pcie-gen3-x4"), std::string::npos);
}

}  // namespace
}  // namespace rig

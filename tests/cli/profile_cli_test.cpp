// rig profile end to end: the top layers in text and JSON, a page section
// in rig report, and named refusals (exit 2, nothing written) for a device
// with no profile, a runtime that is not built and a bad spec.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_support.hpp"
#include "rig/model.hpp"

namespace rig {
namespace {

using test::CliRun;
using test::rig;

class ProfileCli : public test::CliFixture {
 protected:
  void SetUp() override {
    CliFixture::SetUp();
    CnnSpec spec;
    spec.frame = {32, 32};
    spec.channels = 4;
    spec.layers = 2;
    auto bytes = build_cnn_model(spec);
    ASSERT_TRUE(bytes);
    cnn_ = path("cnn.onnx");
    ASSERT_TRUE(write_file_atomic(cnn_, *bytes));
  }
  std::string cnn_;
};

TEST_F(ProfileCli, ListsTheTopLayersInTextJsonAndTheReport) {
  const std::string json = path("profile.json");
  const CliRun r = rig("profile " + cnn_ + " -d cpu:runtime=opencv,threads=1 --runs 3 --top 2 -q " +
                       "--no-history --json " + json);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("rig profile: cnn on cpu:runtime=opencv"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("opencv getPerfProfile, 3 runs"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("top 2 of"), std::string::npos) << r.output;
  std::ifstream in(json);
  const auto doc = nlohmann::json::parse(in);
  EXPECT_EQ(doc["tool"], "rig profile");
  EXPECT_EQ(doc["profile"]["runs"], 3);
  const auto& layers = doc["profile"]["layers"];
  ASSERT_FALSE(layers.empty());
  double share = 0, previous = 1e300;
  for (const auto& l : layers) {
    share += l["share"].get<double>();
    EXPECT_LE(l["total_ms"].get<double>(), previous);  // slowest first
    previous = l["total_ms"].get<double>();
  }
  EXPECT_NEAR(share, 1.0, 1e-9);
  EXPECT_EQ(doc["environment"]["device"]["properties"]["runtime"], "opencv");

  const std::string html = path("report.html");
  const CliRun page = rig("report " + json + " -o " + html + " --no-history");
  ASSERT_EQ(page.status, 0) << page.output;
  std::ifstream page_in(html);
  const std::string text((std::istreambuf_iterator<char>(page_in)), {});
  EXPECT_NE(text.find("opencv getPerfProfile"), std::string::npos);
  EXPECT_NE(text.find(layers[0]["name"].get<std::string>()), std::string::npos);
}

TEST_F(ProfileCli, RefusesByNameAndWritesNothing) {
  const std::string json = path("refused.json");
  auto expect_refused = [&](const std::string& device, const std::string& needle) {
    const CliRun r = rig("profile " + cnn_ + " -d " + device + " -q --no-history --json " + json);
    EXPECT_EQ(r.status, 2) << device << ": " << r.output;
    EXPECT_NE(r.output.find(needle), std::string::npos) << device << ": " << r.output;
    EXPECT_FALSE(std::filesystem::exists(json)) << device;
  };
  expect_refused("sim:compute=1ms", "no per-layer profile: the sim device");
  expect_refused("null", "no per-layer profile");
  expect_refused("cpu:runtime=opencv,optimization=all", "means nothing for runtime=opencv");
  expect_refused("cpu:runtime=tflite", "runtime='tflite'");
  expect_refused("cpu:threads=1,colour=blue", "unknown cpu parameter 'colour'");
  // Where ONNX Runtime is not built, asking for it is refused by name.
  const CliRun ort =
      rig("profile " + cnn_ + " -d cpu:runtime=ort,threads=1 --runs 2 -q --no-history");
  if (ort.status != 0) {
    EXPECT_EQ(ort.status, 2) << ort.output;
    EXPECT_NE(ort.output.find("not built: ONNX Runtime was not found at configure time; on Debian "
                              "13 install libonnxruntime-dev"),
              std::string::npos)
        << ort.output;
  } else {
    EXPECT_NE(ort.output.find("onnxruntime"), std::string::npos) << ort.output;
  }
}

// ONNX Runtime's profiler writes a file; rig reads it and leaves nothing
// behind in the temporary directory.
TEST_F(ProfileCli, OnnxRuntimeProfileLeavesNoFileBehind) {
  const std::filesystem::path tmp = path("tmp");
  std::filesystem::create_directories(tmp);
  const char* before = std::getenv("TMPDIR");
  const std::string saved = before ? before : "";
  ::setenv("TMPDIR", tmp.c_str(), 1);
  const CliRun ok =
      rig("profile " + cnn_ + " -d cpu:runtime=ort,threads=1 --runs 2 -q --no-history");
  if (before)
    ::setenv("TMPDIR", saved.c_str(), 1);
  else
    ::unsetenv("TMPDIR");
  if (ok.status == 2 && ok.output.find("not built") != std::string::npos)
    GTEST_SKIP() << "ONNX Runtime is not built here";
  ASSERT_EQ(ok.status, 0) << ok.output;
  std::vector<std::string> left;
  for (const auto& entry : std::filesystem::directory_iterator(tmp))
    left.push_back(entry.path().filename().string());
  EXPECT_TRUE(left.empty()) << "left in TMPDIR: " << (left.empty() ? "" : left.front());
}

}  // namespace
}  // namespace rig

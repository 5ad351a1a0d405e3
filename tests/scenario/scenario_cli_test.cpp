// rig ladder, sweep, ab and predict end to end: bad input gets a named error
// and exit status 2; a good run prints its figures with units and writes
// complete JSON (schema_version, settings, results; never NaN).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_support.hpp"
#include "rig/model.hpp"
#include "rig/report/document.hpp"

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
    EXPECT_EQ(doc["schema_version"], kJsonSchemaVersion);
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
  EXPECT_EQ(doc["results"]["rungs"].size(), 6u);  // each size in-heavy and out-heavy
  EXPECT_EQ(doc["settings"]["effective"]["sizes"].size(), 3u);
  EXPECT_EQ(doc["results"]["rungs"][3]["shape"], "out_heavy");
  EXPECT_NE(r.output.find("--link bw_in="), std::string::npos) << r.output;
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

// rig sweep --rate: refusals name the option; nothing is written.
TEST_F(AnalysisCli, SweepRateBadInput) {
  const std::string base = "sweep " + model_ + " " + kSim + " ";
  const std::string out = path("rate.json");
  expect_error(rig(base + "--rate 10/s..100/s --depth 1..8 --json " + out), 2, "--depth");
  expect_error(rig(base + "--rate 10/s..100/s --knee 0.9"), 2, "--knee");
  expect_error(rig(base + "--rate 10/s..100/s --repeats 2 --tolerance 0.1"), 2,
               "--repeats, --tolerance belong(s) to the depth sweep");
  expect_error(rig(base + "--latency-bound 5ms"), 2,
               "--latency-bound belong(s) to the rate search");
  expect_error(rig(base + "--max-probes 4 --depth 1..2"), 2, "--max-probes");
  expect_error(rig(base + "--rate 100/s..10/s"), 2, "runs backwards");
  expect_error(rig(base + "--rate 100/s"), 2, "--rate: rate range '100/s'");
  expect_error(rig(base + "--rate fast..100/s"), 2, "--rate: rate range 'fast..100/s'");
  expect_error(rig(base + "--rate 10/s..100/s --latency-bound 0ms"), 2, "--latency-bound");
  const CliRun one = rig(base + "--rate 10/s..100/s --max-probes 1");  // refused by CLI11
  EXPECT_EQ(one.status, 2) << one.output;
  EXPECT_NE(one.output.find("--max-probes"), std::string::npos) << one.output;
  expect_error(rig(base + "--rate 10/s..100/s --json " + path("missing/dir/out.json")), 2,
               "does not exist");
  EXPECT_FALSE(fs::exists(out));
  // The device cannot be reached: a device failure, exit 3.
  const CliRun r = rig("sweep " + model_ + " -d tcp://127.0.0.1:1 -q --rate 10/s..100/s");
  EXPECT_EQ(r.status, 3) << r.output;
}

// Ground truth on the sim's virtual clock: 2 ms compute per frame and a fast
// link serve at most 500 frames/s; constant arrivals keep up at 400/s and not
// at 600/s, so with a 10 ms p99 bound (5 frames of compute: met by an idle
// device, missed once a backlog builds) the best rate lies in [400, 600).
TEST_F(AnalysisCli, SweepRateFindsTheHighestRateMeetingTheBound) {
  const std::string out = path("rate.json");
  const CliRun r =
      rig("sweep " + model_ +
          " -d sim:compute=2ms,bw=10GB/s,depth=8 -q --duration 2s --rate 200/s..1000/s "
          "--latency-bound 10ms --arrival constant --max-probes 12 --json " +
          out);
  ASSERT_EQ(r.status, 0) << r.output;
  for (const char* needle : {"offered/s", "achieved/s", "p99 from arrival", "keeps up", "meets",
                             "best rate meeting the bound:", "first failing rate:",
                             "not enough samples (n = 2000, p99 needs >= 8000)", "95% CI"})
    EXPECT_NE(r.output.find(needle), std::string::npos) << needle << " in\n" << r.output;
  expect_complete_json(out, "rig sweep");
  const auto doc = read_json(out);
  EXPECT_EQ(doc["kind"], "rate");
  const double best = doc["results"]["best_rate_per_s"].get<double>();
  const double failing = doc["results"]["first_failing_rate_per_s"].get<double>();
  EXPECT_GE(best, 400.0);
  EXPECT_LT(best, 600.0);
  EXPECT_LE(best, 500.0);  // the device's own ceiling
  EXPECT_GT(failing, best);
  EXPECT_LT(failing, 600.0);
  EXPECT_EQ(doc["results"]["search_end"], "resolved");
  EXPECT_EQ(doc["results"]["latency_bound_ms"], 10.0);
  const auto& probes = doc["results"]["probes"];
  ASSERT_GE(probes.size(), 3u);
  EXPECT_LE(probes.size(), 12u);
  EXPECT_EQ(probes[0]["offered_rate_per_s"], 1000.0);  // the top of the range first
  EXPECT_EQ(probes[0]["meets"], false);
  EXPECT_EQ(probes[1]["offered_rate_per_s"], 200.0);
  EXPECT_EQ(probes[1]["meets"], true);
  for (const auto& p : probes) {
    const double rate = p["offered_rate_per_s"].get<double>();
    EXPECT_EQ(p["meets"].get<bool>(), rate <= best) << rate;
    // An idle device: every frame sees the lone-frame latency (<= 10 ms).
    if (rate <= 400) {
      EXPECT_TRUE(p["keeps_up"].get<bool>()) << rate;
    }
    if (rate >= 600) {
      EXPECT_FALSE(p["keeps_up"].get<bool>()) << rate;
    }
    EXPECT_TRUE(p["latency_from_arrival_ms"]["intervals"]["p99"].contains("enough"));
  }
  // The verdict names its rules; the 1000/s probe's p99 lacks samples.
  std::vector<std::string> rules;
  for (const auto& rule : doc["verdict"]["rules"]) rules.push_back(rule["rule"]);
  for (const char* name :
       {"probes_completed", "rate_bracketed", "search_resolved", "probe_percentiles_resolved"})
    EXPECT_NE(std::find(rules.begin(), rules.end(), name), rules.end()) << name;
  EXPECT_EQ(doc["verdict"]["status"], "VALID");

  // A bound below the lone frame: no rate meets it, the verdict warns.
  const CliRun none = rig("sweep " + model_ +
                          " -d sim:compute=2ms,bw=10GB/s,depth=8 -q --duration 1s --rate "
                          "10/s..1000/s --latency-bound 1ms --json " +
                          out);
  ASSERT_EQ(none.status, 0) << none.output;
  EXPECT_NE(none.output.find("best rate meeting the bound: none"), std::string::npos)
      << none.output;
  EXPECT_NE(none.output.find("no rate in the range met p99 <= 1.000 ms"), std::string::npos)
      << none.output;
  EXPECT_TRUE(read_json(out)["results"]["best_rate_per_s"].is_null());

  // Probes too short to state a p99 (20 frames at 10/s): judged by none,
  // and said so, with what to change.
  const CliRun unjudged = rig("sweep " + model_ +
                              " -d sim:compute=2ms,bw=10GB/s,depth=8 -q --duration 2s --rate "
                              "10/s..1000/s --latency-bound 10ms --arrival constant");
  ASSERT_EQ(unjudged.status, 0) << unjudged.output;
  EXPECT_NE(unjudged.output.find("best rate meeting the bound: none"), std::string::npos)
      << unjudged.output;
  EXPECT_NE(unjudged.output.find("no probe could be judged: at 10.00/s the p99's interval needs "
                                 "368 frames, the probe had 20"),
            std::string::npos)
      << unjudged.output;
}

TEST_F(AnalysisCli, AbBadInput) {
  const std::string base = "ab " + model_ + " " + kSim + " ";
  expect_error(rig(base + "--a depth --b depth=1"), 2, "--a: knob 'depth' is not KNOB=VALUE");
  expect_error(rig(base + "--a depth=1 --b depth=0"), 2, "--b: knob depth=0");
  expect_error(rig(base + "--a depth=1 --b link=usb9"), 2, "unknown link profile 'usb9'");
  // Fewer than 4 pairs: the U test cannot reach alpha 0.05.
  for (const char* n : {"0", "1", "3"})
    expect_error(rig(base + "--a depth=1 --b depth=2 --pairs " + n), 2,
                 std::string("--pairs must be >= 4 for a verdict") +
                     " (the U test cannot reach alpha 0.05 with fewer; 9 are recommended), got " +
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
      rig("ab " + model_ + " " + kSim + " --a depth=1 --b depth=8 --pairs 4 --json " + out);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("result: B (depth=8) is faster"), std::string::npos) << r.output;
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
  expect_error(rig("predict " + bench + " --link usb3-gen2 --ladder " + ladder), 2,
               "give --link or --ladder, not both");
  expect_error(rig("predict " + bench + " --ladder " + bench), 2, "predict --ladder");
  // The link as the ladder measured it: each direction, the latency, the duplex.
  const CliRun measured = rig("predict " + bench + " --ladder " + ladder);
  ASSERT_EQ(measured.status, 0) << measured.output;
  EXPECT_NE(measured.output.find("link measured: "), std::string::npos) << measured.output;
  EXPECT_NE(measured.output.find("uncertainty: "), std::string::npos) << measured.output;

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

// The monitor through the rig executable on the cpu device (a real clock):
// fake /proc and /sys roots with no powercap, hwmon or cpufreq (as this
// machine has none) give "unavailable" with a reason in the JSON and no W or
// J figure in the text; --no-monitor; rig soak's named errors.
#include <gtest/gtest.h>

#include <cctype>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_support.hpp"
#include "rig/report/document.hpp"

namespace rig {
namespace {

using test::CliFixture;
using test::rig;

class MonitorCli : public CliFixture {
 protected:
  void write(const std::string& rel, const std::string& text) {
    const auto p = dir_ / rel;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  std::string fake_roots() {
    write("proc/stat", "cpu  100 0 50 1000 0 0 0 0 0 0\n");
    write("proc/self/stat", "1 (rig) R 1 1 1 0 -1 0 0 0 0 0 10 5 0 0 20 0 1 0\n");
    write("proc/loadavg", "0.10 0.10 0.10 1/1 1\n");
    std::filesystem::create_directories(dir_ / "sys");
    return " --proc-root " + path("proc") + " --sys-root " + path("sys");
  }
  static constexpr const char* kQuick =
      " -d cpu:workers=1,depth=1 --duration 200ms --repeats 1 --min-inferences 1 "
      "--latency-samples 3 --warmup-max 50ms -q";
};

// A figure in watts or joules: a digit, a space, then W, J, mJ or uJ as a
// whole word (what the energy and power rows would print).
bool has_power_figure(const std::string& text) {
  for (size_t i = 0; i + 2 < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9' || text[i + 1] != ' ') continue;
    for (const char* unit : {"W", "J", "mJ", "uJ"}) {
      const std::string u(unit);
      if (text.compare(i + 2, u.size(), u) != 0) continue;
      const size_t end = i + 2 + u.size();
      const bool word_end =
          end == text.size() ||
          !(std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '_');
      if (word_end) return true;
    }
  }
  return false;
}

TEST_F(MonitorCli, NoPowerSourceMeansUnavailableWithAReasonAndNoFigure) {
  const auto run = rig("bench " + model_ + kQuick + fake_roots() + " --json " + path("r.json"));
  ASSERT_EQ(run.status, 0) << run.output;
  std::ifstream in(path("r.json"));
  const auto doc = nlohmann::json::parse(in);
  EXPECT_EQ(doc["schema_version"], kJsonSchemaVersion);
  const auto& m = doc["monitor"];
  EXPECT_TRUE(m["enabled"].get<bool>());
  EXPECT_TRUE(m["host_sampled"].get<bool>());
  const auto& e = m["energy"];
  EXPECT_FALSE(e["available"].get<bool>());
  EXPECT_TRUE(e["joules_per_inference"].is_null());
  EXPECT_TRUE(e["mean_power_w"].is_null());
  const std::string reason = e["reason"];
  EXPECT_EQ(reason.rfind("unavailable: ", 0), 0u) << reason;
  EXPECT_NE(reason.find("no " + path("sys") + "/class/powercap on this host"), std::string::npos)
      << reason;
  std::map<std::string, std::string> states;
  for (const auto& s : m["sources"]) states[s["name"]] = s["state"];
  EXPECT_EQ(states["host_cpu"], "available");
  EXPECT_EQ(states["loadavg"], "available");
  for (const char* absent : {"powercap", "hwmon_power", "hwmon_temp", "cpufreq", "nvml"})
    EXPECT_EQ(states[absent], "unavailable") << absent;
  // The environment fingerprint.
  for (const char* fact : {"host", "kernel", "cpu_count", "build_type", "compiler", "git_revision",
                           "rig_version", "opencv_version"})
    EXPECT_TRUE(doc["environment"].contains(fact)) << fact;
  // The human report: the reason, and no power or energy figure.
  EXPECT_NE(run.output.find("energy per inference"), std::string::npos);
  EXPECT_NE(run.output.find("unavailable: no power reading"), std::string::npos);
  ASSERT_TRUE(has_power_figure("mean power 2.50 W, 1.2 mJ per inference"));  // the check can fail
  EXPECT_FALSE(has_power_figure(run.output)) << run.output;
}

TEST_F(MonitorCli, NoMonitorSamplesNothing) {
  const auto run = rig("bench " + model_ + kQuick + " --no-monitor --json " + path("r.json"));
  ASSERT_EQ(run.status, 0) << run.output;
  std::ifstream in(path("r.json"));
  const auto doc = nlohmann::json::parse(in);
  EXPECT_FALSE(doc["monitor"]["enabled"].get<bool>());
  EXPECT_TRUE(doc["monitor"]["samples"].empty());
  EXPECT_NE(doc["monitor"]["energy"]["reason"].get<std::string>().find("--no-monitor"),
            std::string::npos);
  EXPECT_NE(run.output.find("--no-monitor: nothing sampled"), std::string::npos);
}

TEST_F(MonitorCli, SoakOnTheSimAndItsNamedErrors) {
  const auto ok = rig("soak " + model_ +
                      " -d sim:compute=1ms,slow_at=6s,slow_factor=1.5 --duration 12s --short 3s "
                      "--long 3s -q --json " +
                      path("s.json"));
  ASSERT_EQ(ok.status, 0) << ok.output;
  EXPECT_NE(ok.output.find("beyond the noise"), std::string::npos) << ok.output;
  std::ifstream in(path("s.json"));
  const auto doc = nlohmann::json::parse(in);
  EXPECT_EQ(doc["tool"], "rig soak");
  EXPECT_NEAR(doc["soak"]["drift"].get<double>(), 1 / 1.5 - 1, 0.01);
  const auto bad = rig("soak " + model_ + " -d sim --duration 5s --short 4s --long 2s -q");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.output.find("is shorter than --short"), std::string::npos) << bad.output;
  const auto idle = rig("bench " + model_ + " -d sim --idle -1s -q");
  EXPECT_EQ(idle.status, 2) << idle.output;
}

// loop, ladder, sweep and ab take the monitor's options too: the record and
// its settings are in their JSON, and --no-monitor turns it off.
TEST_F(MonitorCli, EveryAnalysisCommandRunsTheMonitor) {
  const std::string sim = " -d sim:compute=1ms,depth=4 --duration 100ms -q";
  const std::vector<std::string> commands = {
      "loop " + model_ + sim, "ladder --sizes 64x64,128x128 --repeats 1" + sim,
      "sweep " + model_ + " --depth 1..4 --repeats 1" + sim,
      "sweep " + model_ + " --rate 100/s..1000/s --max-probes 3" + sim,
      "ab " + model_ + " --a depth=1 --b depth=2 --pairs 4" + sim};
  for (const auto& command : commands) {
    for (const bool off : {false, true}) {
      const std::string json = path("m.json");
      std::filesystem::remove(json);
      const auto run = rig(command + (off ? " --no-monitor" : "") + " --json " + json);
      ASSERT_NE(run.status, 2) << command << "\n" << run.output;
      std::ifstream in(json);
      ASSERT_TRUE(in.good()) << command << "\n" << run.output;
      const auto doc = nlohmann::json::parse(in);
      ASSERT_TRUE(doc.contains("monitor")) << command;
      EXPECT_EQ(doc["monitor"]["enabled"].get<bool>(), !off) << command;
      EXPECT_EQ(doc["monitor"]["samples"].empty(), off) << command;
      bool contention_rule = false;
      for (const auto& r : doc["verdict"]["rules"])
        contention_rule |= r["rule"] == "host_contention";
      EXPECT_TRUE(contention_rule) << command;
    }
  }
  const auto bad = rig("loop " + model_ + sim + " --idle -1s");
  EXPECT_EQ(bad.status, 2) << bad.output;
}

}  // namespace
}  // namespace rig

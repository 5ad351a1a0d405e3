// What the measuring commands attach to the engine, end to end through the
// rig executable on the sim: --trace (Chrome trace-event JSON whose counts
// equal the result's) and the live progress line (on a pseudo-terminal,
// never on a pipe or under --quiet); and rig report / rig export on the
// results they write.
#include <fcntl.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli_support.hpp"

namespace rig::test {
namespace {

using nlohmann::json;

const std::string kSim = "sim:compute=1ms,bw=200MB/s,lat=0.05ms,depth=4";

json read_json(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return json::parse(ss.str(), nullptr, false);
}

// B/E pairs balance on every track, in order, and never go back in time.
void expect_balanced(const json& events) {
  std::map<std::pair<int, int>, std::vector<std::string>> open;
  std::map<std::pair<int, int>, double> last;
  for (const auto& e : events) {
    const std::string ph = e["ph"];
    if (ph != "B" && ph != "E") continue;
    const auto track = std::pair{e["pid"].get<int>(), e["tid"].get<int>()};
    const double ts = e["ts"].get<double>();
    EXPECT_GE(ts, last[track]) << e.dump();
    last[track] = ts;
    if (ph == "B") {
      open[track].push_back(e["name"]);
    } else {
      ASSERT_FALSE(open[track].empty()) << "an E without its B: " << e.dump();
      EXPECT_EQ(open[track].back(), e["name"].get<std::string>());
      open[track].pop_back();
    }
  }
  for (const auto& [track, names] : open)
    EXPECT_TRUE(names.empty()) << "tid " << track.second << " left " << names.size() << " open";
}

size_t count(const json& events, const std::string& ph, const std::string& name,
             const std::string& phase = "") {
  size_t n = 0;
  for (const auto& e : events)
    if (e["ph"] == ph && e["name"] == name &&
        (phase.empty() || (e.contains("args") && e["args"].value("phase", "") == phase)))
      ++n;
  return n;
}

TEST_F(CliFixture, BenchTraceHasOneBeginAndEndPerInferenceAndTheResultsCounts) {
  auto r = rig("bench " + model_ + " -d " + kSim + " --duration 0.5s --repeats 2 " +
               "--latency-samples 30 --json " + path("b.json") + " --trace " + path("t.json"));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("rig: wrote " + path("t.json")), std::string::npos) << r.output;
  const json trace = read_json(path("t.json"));
  ASSERT_FALSE(trace.is_discarded()) << "the trace is not JSON";
  const json result = read_json(path("b.json"));
  ASSERT_TRUE(trace.contains("traceEvents"));
  const json& ev = trace["traceEvents"];
  expect_balanced(ev);

  uint64_t measured = 0, warm = 0;
  for (const auto& rep : result["steady"]["repeats"]) {
    measured += rep["inferences"].get<uint64_t>();
    warm += rep["warmup_inferences"].get<uint64_t>();
  }
  EXPECT_EQ(count(ev, "B", "inference", "measure"), measured);
  EXPECT_EQ(count(ev, "B", "inference", "latency"), result["latency"]["samples"].get<uint64_t>());
  EXPECT_EQ(count(ev, "B", "inference", "first inference"), 1u);
  EXPECT_GE(count(ev, "B", "inference", "warm-up"), warm);
  EXPECT_EQ(count(ev, "B", "inference"), count(ev, "E", "inference"));
  EXPECT_EQ(trace["otherData"]["recorded_inferences"].get<uint64_t>(), count(ev, "B", "inference"));
  // The sim reports every device-side duration: one derived span of each per inference.
  EXPECT_EQ(count(ev, "X", "compute"), count(ev, "B", "inference"));
  EXPECT_EQ(count(ev, "X", "transfer_in"), count(ev, "B", "inference"));
  for (const auto& e : ev)
    if (e["ph"] == "X" && e["name"] == "compute") {
      EXPECT_EQ(e["pid"], 2);
      EXPECT_TRUE(e["args"]["derived"].get<bool>());
      EXPECT_NEAR(e["dur"].get<double>(), 1000.0, 1e-6);  // compute=1ms, in microseconds
    }
  // Phases as spans, one warm-up and measure per repeat; a window span per window.
  EXPECT_EQ(count(ev, "B", "load"), 1u);
  EXPECT_EQ(count(ev, "B", "measure"), result["steady"]["repeats"].size());
  size_t windows = 0;
  for (const auto& rep : result["steady"]["repeats"]) windows += rep["windows"].size();
  EXPECT_EQ(count(ev, "X", "window"), windows);
  EXPECT_FALSE(trace["otherData"]["stopped"].get<bool>());
  // One track per in-flight slot (depth 4).
  std::set<int> slots;
  for (const auto& e : ev)
    if (e["ph"] == "B" && e["name"] == "inference") slots.insert(e["tid"].get<int>());
  EXPECT_EQ(slots.size(), 4u);
}

TEST_F(CliFixture, TraceStopsAtItsCapAndSaysSo) {
  auto r = rig("bench " + model_ + " -d " + kSim + " --duration 0.5s --repeats 1 " +
               "--latency-samples 30 --trace " + path("t.json") + " --trace-limit 200");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("stopped recording at the cap"), std::string::npos) << r.output;
  const json trace = read_json(path("t.json"));
  ASSERT_FALSE(trace.is_discarded());
  const json& ev = trace["traceEvents"];
  EXPECT_TRUE(trace["otherData"]["stopped"].get<bool>());
  EXPECT_LE(trace["otherData"]["recorded_events"].get<size_t>(), 200u);
  EXPECT_GT(trace["otherData"]["dropped_inferences"].get<uint64_t>(), 0u);
  size_t recorded = 0, closing = 0, stop = 0;
  for (const auto& e : ev) {
    if (e["ph"] == "M") continue;
    if (e.contains("args") && e["args"].contains("truncated")) {
      ++closing;
    } else if (e["ph"] == "i") {
      ++stop;
      EXPECT_NE(e["name"].get<std::string>().find("trace stopped"), std::string::npos);
    } else {
      ++recorded;
    }
  }
  EXPECT_EQ(stop, 1u);
  EXPECT_LE(recorded, 200u);
  EXPECT_LE(closing, 2u);
  expect_balanced(ev);
}

TEST_F(CliFixture, EveryMeasuringCommandTakesTrace) {
  for (const std::string& cmd :
       {"loop " + model_ + " -d " + kSim + " --duration 0.2s",
        "sweep " + model_ + " -d " + kSim + " --depth 1..2 --duration 0.2s --repeats 1",
        "sweep " + model_ + " -d " + kSim + " --rate 10/s..100/s --max-probes 2 --duration 0.2s",
        "ladder -d " + kSim + " --sizes 64x64,128x128 --duration 0.2s --repeats 1",
        "ab " + model_ + " -d " + kSim + " --a depth=1 --b depth=2 --pairs 4 --duration 0.2s"}) {
    std::filesystem::remove(path("t.json"));
    auto r = rig(cmd + " -q --trace " + path("t.json"));
    ASSERT_EQ(r.status, 0) << cmd << "\n" << r.output;
    const json trace = read_json(path("t.json"));
    ASSERT_FALSE(trace.is_discarded()) << cmd;
    EXPECT_GT(count(trace["traceEvents"], "B", "inference"), 0u) << cmd;
    expect_balanced(trace["traceEvents"]);
  }
  auto r = rig("bench " + model_ + " -d " + kSim + " --trace " + path("missing/t.json"));
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("--trace"), std::string::npos) << r.output;
}

// Runs rig on a pseudo-terminal (stdout and stderr both) and returns all it wrote.
std::string rig_on_pty(const std::string& args) {
  int master = -1;
  const pid_t pid = ::forkpty(&master, nullptr, nullptr, nullptr);
  if (pid < 0) return "forkpty failed";
  if (pid == 0) {
    const std::string cmd = std::string(RIG_BINARY) + " " + args;
    ::execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  std::string out;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(master, buf, sizeof buf);
    if (n > 0) {
      out.append(buf, static_cast<size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      break;  // EIO once the child has gone
    }
  }
  ::close(master);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return out;
}

TEST_F(CliFixture, ProgressIsDrawnOnATerminalAndErasedAtTheEnd) {
  // realtime=1 paces the sim to real time, so the run lasts long enough to draw.
  const std::string args = "bench " + model_ + " -d " + kSim +
                           ",realtime=1 --duration 0.4s --repeats 2 --latency-samples 5";
  const std::string out = rig_on_pty(args);
  // A container without /dev/pts has no pseudo-terminals: nothing to test there.
  if (out == "forkpty failed")
    GTEST_SKIP() << "no pseudo-terminal on this machine (forkpty failed)";
  EXPECT_NE(out.find("\rrig bench  "), std::string::npos) << out;
  EXPECT_NE(out.find("  run 1/2  "), std::string::npos) << out;
  EXPECT_NE(out.find("\x1b[K"), std::string::npos) << out;
  // Erased before the result is printed.
  const size_t erase = out.rfind("\r\x1b[K");
  const size_t table = out.find("rig bench: ");
  ASSERT_NE(erase, std::string::npos);
  ASSERT_NE(table, std::string::npos) << out;
  EXPECT_LT(erase, table);
  EXPECT_EQ(out.find("  run ", table), std::string::npos);

  // Under --quiet, no line even on a terminal.
  const std::string quiet = rig_on_pty(args + " -q");
  EXPECT_EQ(quiet.find("\x1b[K"), std::string::npos) << quiet;
  EXPECT_NE(quiet.find("rig bench: "), std::string::npos) << quiet;
}

TEST_F(CliFixture, NoProgressOnAPipe) {
  auto r = rig("bench " + model_ + " -d " + kSim +
               ",realtime=1 --duration 0.3s --repeats 1 --latency-samples 5");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output.find("\x1b[K"), std::string::npos);
  EXPECT_EQ(r.output.find("\rrig bench"), std::string::npos);
}

TEST_F(CliFixture, ReportAndExportOnWhatTheCommandsWrote) {
  ASSERT_EQ(rig("bench " + model_ + " -d " + kSim + " --duration 0.3s -q --json " + path("b.json"))
                .status,
            0);
  ASSERT_EQ(rig("sweep " + model_ + " -d " + kSim +
                " --depth 1..4 --duration 0.2s --repeats 1 -q --json " + path("s.json"))
                .status,
            0);
  auto r = rig("report " + path("b.json") + " " + path("s.json") + " -o " + path("r.html") +
               " --gnuplot " + path("none"));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("rig: wrote " + path("r.html") + " (2 results, 0 plots, 3 skipped"),
            std::string::npos)
      << r.output;
  std::ifstream f(path("r.html"));
  std::stringstream html;
  html << f.rdbuf();
  EXPECT_NE(html.str().find("gnuplot not found at " + path("none")), std::string::npos);

  r = rig("export " + path("b.json") + " --csv -o " + path("b.csv"));
  ASSERT_EQ(r.status, 0) << r.output;
  r = rig("export " + path("b.json") + " --csv-windows");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(
      r.output.rfind("result,series,repeat,window,start_s,duration_s,inferences,rate_per_s", 0), 0u)
      << r.output;
  // Bad input: named, exit 2, nothing written.
  r = rig("export " + path("b.json") + " --csv --csv-windows");
  EXPECT_EQ(r.status, 2) << r.output;
  r = rig("report " + path("nothing.json") + " -o " + path("x.html"));
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_FALSE(std::filesystem::exists(path("x.html")));
  {
    std::ofstream bad(path("bad.json"));
    bad << R"({"schema_version": 8, "tool": "rig bench"})";
  }
  r = rig("report " + path("bad.json") + " -o " + path("x.html"));
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("bad.json: schema_version 8 is not one this rig reads"),
            std::string::npos)
      << r.output;
  EXPECT_FALSE(std::filesystem::exists(path("x.html")));
}

}  // namespace
}  // namespace rig::test

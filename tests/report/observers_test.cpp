// The engine's watchers from rig_report, on the sim: the trace records what
// the engine did (its counts equal the result's), the progress line reads
// what the engine published, and FanOutObserver hands every call to each.
#include <gtest/gtest.h>

#include <pty.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include <nlohmann/json.hpp>

#include "rig/device.hpp"
#include "rig/fanout_observer.hpp"
#include "rig/model.hpp"
#include "rig/report/bench_report.hpp"
#include "rig/report/progress.hpp"
#include "rig/report/trace.hpp"
#include "rig/scenario/bench.hpp"

namespace rig {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

std::unique_ptr<Device> sim(const std::string& params) {
  auto d = open_device("sim:" + params);
  EXPECT_TRUE(d.has_value()) << d.error().to_string();
  return std::move(*d);
}

ModelSource transport(uint32_t side) {
  TransportSpec spec;
  spec.frame = {side, side};
  ModelSource m;
  m.bytes = *build_transport_model(spec);
  m.name = "t";
  return m;
}

BenchSettings quick() {
  BenchSettings s;
  s.device = "sim";
  s.point.duration = 200ms;
  s.point.repeats = 2;
  s.point.min_inferences = 10;
  s.latency_samples = 20;
  return s;
}

struct Counter final : EngineObserver {
  uint64_t begins = 0, ends = 0, windows = 0, submits = 0, completions = 0;
  void phase_begin(EnginePhase, Nanos) override { ++begins; }
  void phase_end(EnginePhase, Nanos) override { ++ends; }
  void window_closed(const WindowFigure&, Nanos) override { ++windows; }
  void submitted(uint32_t, Nanos) override { ++submits; }
  void completed(uint32_t, const Completion&, Nanos) override { ++completions; }
};

TEST(FanOut, GivesNothingTheLoneObserverOrItselfAndHandsEveryCallToEach) {
  FanOutObserver none;
  none.add(nullptr);
  EXPECT_EQ(none.get(), nullptr);
  Counter a, b;
  FanOutObserver one;
  one.add(&a);
  EXPECT_EQ(one.get(), &a);
  FanOutObserver both;
  both.add(&a);
  both.add(nullptr);
  both.add(&b);
  EXPECT_EQ(both.get(), &both);
  EXPECT_EQ(both.size(), 2u);

  auto dev = sim("compute=1ms,bw=1GB/s,depth=4");
  BenchSettings s = quick();
  s.point.observer = both.get();
  auto r = run_bench(*dev, transport(64), s);
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  uint64_t steady = 0, windows = 0;
  for (const auto& rep : r->steady.repeats) {
    steady += rep.completed_total;
    windows += rep.windows.size();
  }
  for (const Counter* c : {&a, &b}) {
    EXPECT_EQ(c->completions, 1 + r->latency.samples + steady);
    EXPECT_EQ(c->submits, c->completions);
    EXPECT_EQ(c->windows, windows);
    EXPECT_EQ(c->begins, c->ends);
    EXPECT_GT(c->begins, 0u);
  }
}

TEST(Trace, EveryInferenceOnceWithItsPhaseAndTheDevicesDerivedSpans) {
  auto dev = sim("compute=1ms,bw=100MB/s,lat=0.1ms,depth=4");
  TraceRecorder trace;
  BenchSettings s = quick();
  s.point.observer = &trace;
  auto r = run_bench(*dev, transport(64), s);
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  uint64_t steady = 0, measured = 0;
  for (const auto& rep : r->steady.repeats) {
    steady += rep.completed_total;
    measured += rep.inferences;
  }
  EXPECT_EQ(trace.recorded_inferences(), 1 + r->latency.samples + steady);
  EXPECT_FALSE(trace.stopped());
  const json doc = json::parse(trace.to_json());
  size_t b = 0, e = 0, in_measure = 0, compute = 0;
  double last_e_ts = 0;
  for (const auto& ev : doc["traceEvents"]) {
    if (ev["name"] != "inference" && ev["name"] != "compute") continue;
    if (ev["ph"] == "B") {
      ++b;
      if (ev["args"]["phase"] == "measure") ++in_measure;
    } else if (ev["ph"] == "E") {
      ++e;
      last_e_ts = ev["ts"].get<double>();
    } else if (ev["ph"] == "X") {
      ++compute;
      // Laid back from the completion: it ends at or before the E just written.
      EXPECT_LE(ev["ts"].get<double>() + ev["dur"].get<double>(), last_e_ts + 1e-3);
    }
  }
  EXPECT_EQ(b, trace.recorded_inferences());
  EXPECT_EQ(e, b);
  EXPECT_EQ(in_measure, measured);
  EXPECT_EQ(compute, b);
  EXPECT_EQ(doc["otherData"]["recorded_events"].get<size_t>(), trace.recorded_events());
}

TEST(Trace, TheCapIsNeverExceededAndTheRestIsCounted) {
  for (size_t cap : {size_t{1}, size_t{7}, size_t{100}, size_t{1000}}) {
    auto dev = sim("compute=1ms,bw=1GB/s,depth=4");
    TraceRecorder trace(TraceSettings{cap});
    BenchSettings s = quick();
    s.point.observer = &trace;
    auto r = run_bench(*dev, transport(32), s);
    ASSERT_TRUE(r.has_value());
    uint64_t all = 1 + r->latency.samples;
    for (const auto& rep : r->steady.repeats) all += rep.completed_total;
    EXPECT_TRUE(trace.stopped()) << cap;
    EXPECT_LE(trace.recorded_events(), cap);
    EXPECT_EQ(trace.recorded_inferences() + trace.dropped_inferences(), all) << cap;
    const json doc = json::parse(trace.to_json());
    EXPECT_TRUE(doc["otherData"]["stopped"].get<bool>());
  }
}

TEST(Progress, ShowsThePublishedPhaseRunTimeAndRate) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  {
    ProgressLine line({"rig bench", 3, 10s}, fds[1], std::chrono::milliseconds(5));
    EXPECT_EQ(line.text(), "rig bench  starting");
    line.phase_begin(EnginePhase::load, 0s);
    EXPECT_EQ(line.text(), "rig bench  load");
    // A new phase is drawn at once: wait for it on the pipe.
    char first[256];
    const ssize_t got = ::read(fds[0], first, sizeof first);
    ASSERT_GT(got, 0);
    EXPECT_EQ(std::string(first, static_cast<size_t>(got)), "\rrig bench  load\x1b[K");
    line.phase_begin(EnginePhase::warmup, 1s);
    line.phase_begin(EnginePhase::measure, 2s);
    WindowFigure w;
    w.rate = 441.25;
    line.window_closed(w, 6s);
    EXPECT_EQ(line.text(), "rig bench  run 1/3  measure  4.0 s / 10 s  441.2 /s");
    line.phase_begin(EnginePhase::warmup, 13s);
    EXPECT_EQ(line.text(), "rig bench  run 2/3  warm-up");
    line.stop();
  }
  ::close(fds[1]);
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fds[0], buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  ::close(fds[0]);
  // Drawn in place, and erased at the end.
  ASSERT_GE(out.size(), 4u);
  EXPECT_EQ(out.substr(out.size() - 4), "\r\x1b[K");
  EXPECT_EQ(out.find('\n'), std::string::npos);
}

// Issue 27, item 6: the start line plans the whole command, not one
// repeat's --duration: lone frames, each repeat's warm-up cap and its
// measured part up to the adaptive stop's cap. `bench --duration 1s
// --repeats 2` took 38.7 s where the line said "about 1.000 s per repeat".
TEST(Progress, TheStartLinePlansTheWholeCommand) {
  BenchSettings s;
  s.point.duration = 1s;
  s.point.repeats = 2;
  s.point.max_duration_factor = 10;  // rig bench's
  s.point.warmup_max = 5s;
  s.latency_max = 15s;
  const WallPlan plan = bench_wall_plan(s);
  EXPECT_EQ(plan.upper(), 45s);
  EXPECT_EQ(plan.lower(), 2s);
  const std::string text = wall_plan_text(plan);
  for (const char* needle :
       {"at most 45 s after the cold start", "2 repeats", "until stable", "at least 2.0 s"})
    EXPECT_NE(text.find(needle), std::string::npos) << needle << ": " << text;
  // An offered-load run: one warm-up window and exactly the duration.
  s.offered.rate = 100;
  EXPECT_EQ(bench_wall_plan(s).upper(), 15s + 100ms + 1s);
  // The progress line tracks the command against the plan from the end of
  // the cold start, where the plan starts: the load's second is not counted.
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  {
    ProgressLine line({"rig bench", 2, 1s, plan.upper()}, fds[1], std::chrono::milliseconds(5));
    line.phase_begin(EnginePhase::load, 10s);
    line.phase_begin(EnginePhase::latency, 11s);
    line.phase_begin(EnginePhase::warmup, 20s);
    line.phase_begin(EnginePhase::measure, 22s);
    WindowFigure w;
    w.rate = 50;
    line.window_closed(w, 23s);
    EXPECT_EQ(line.text(),
              "rig bench  run 1/2  measure  1.0 s / 1.0 s  50.00 /s  [12 s of <= 45 s planned]");
    line.stop();
  }
  ::close(fds[1]);
  ::close(fds[0]);
}

TEST(Progress, WantedOnlyOnATerminalAndNotQuietNorJsonOnStdout) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  EXPECT_FALSE(ProgressLine::wanted(fds[1], false, false));
  ::close(fds[0]);
  ::close(fds[1]);
  int master = -1, slave = -1;
  // A container without /dev/pts has no pseudo-terminals: nothing to test there.
  if (::openpty(&master, &slave, nullptr, nullptr, nullptr) != 0)
    GTEST_SKIP() << "no pseudo-terminal on this machine (openpty: " << std::strerror(errno) << ")";
  EXPECT_TRUE(ProgressLine::wanted(slave, false, false));
  EXPECT_FALSE(ProgressLine::wanted(slave, true, false));
  EXPECT_FALSE(ProgressLine::wanted(slave, false, true));
  ::close(slave);
  ::close(master);
}

}  // namespace
}  // namespace rig

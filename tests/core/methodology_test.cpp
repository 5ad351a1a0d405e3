// The measurement methodology against ground truth: the sim device's virtual
// clock makes every expected figure computable by hand. Over 600 lines: one
// suite, one fixture; the fidelity properties live in tests/fidelity/.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>

#include "rig/engine.hpp"
#include "rig/model.hpp"
#include "rig/report/bench_report.hpp"
#include "rig/scenario/bench.hpp"

namespace rig {
namespace {

using namespace std::chrono_literals;

// 512p uint8 transport: 1,048,576 bytes in, 262,144 bytes out.
constexpr double kIn = 1048576, kOut = 262144;

ModelSource transport_512p() {
  TransportSpec spec;
  spec.frame = {512, 512};
  auto bytes = build_transport_model(spec);
  EXPECT_TRUE(bytes.has_value());
  ModelSource m;
  m.bytes = *bytes;
  m.name = "transport-512p";
  return m;
}

std::unique_ptr<Device> sim(const std::string& params) {
  auto d = open_device("sim:" + params);
  EXPECT_TRUE(d.has_value()) << (d ? "" : d.error().to_string());
  return std::move(*d);
}

BenchSettings quick(uint32_t depth) {
  BenchSettings s;
  s.depth = depth;
  s.point.duration = 5s;
  s.point.max_duration_factor = 2;  // a 10 s cap (bench's default is 10x its 2 s)
  s.point.repeats = 3;
  s.latency_samples = 50;
  return s;
}

double ms(Nanos d) {
  return static_cast<double>(d.count()) / 1e6;
}

// A sim whose reported compute time is scaled after its first `skip`
// inferences: beyond the inference's elapsed time (on the same clock), or
// negative, it is implausible.
class InflatedCompute final : public Device {
 public:
  InflatedCompute(std::unique_ptr<Device> inner, double factor, int skip)
      : inner_(std::move(inner)), factor_(factor), skip_(skip) {}
  DeviceInfo info() const override { return inner_->info(); }
  Clock& clock() override { return inner_->clock(); }
  Result<LoadTimings> load(const ModelSource& m) override { return inner_->load(m); }
  const ModelInfo& model_info() const override { return inner_->model_info(); }
  Result<BindingId> bind(const Bindings& b) override { return inner_->bind(b); }
  Result<InferenceTimings> run(BindingId b) override {
    auto t = inner_->run(b);
    if (t) inflate(*t);
    return t;
  }
  Result<void> submit(BindingId b, uint64_t tag) override { return inner_->submit(b, tag); }
  Result<Completion> wait_next(Nanos timeout) override {
    auto c = inner_->wait_next(timeout);
    if (c) inflate(c->timings);
    return c;
  }
  uint32_t in_flight() const override { return inner_->in_flight(); }
  Result<DurationRun> run_for_duration(BindingId b, Nanos d, Nanos s) override {
    return inner_->run_for_duration(b, d, s);
  }
  ByteCounters bytes() const override { return inner_->bytes(); }

 private:
  void inflate(InferenceTimings& t) {
    if (skip_-- > 0 || !t.compute) return;
    t.compute = Nanos(static_cast<int64_t>(static_cast<double>(t.compute->count()) * factor_));
  }
  std::unique_ptr<Device> inner_;
  double factor_;
  int skip_;
};

TEST(Methodology, DeviceTimingsOutsideTheElapsedTimeAreRefused) {
  // compute=2ms of a ~15 ms round trip: x1 is plausible, x100 exceeds the
  // elapsed time, x-1 is negative.
  for (const double factor : {1.0, 100.0, -1.0}) {
    // From the first inference: the cold start is refused, the run stops.
    InflatedCompute first(sim("compute=2ms,bw=100MB/s,depth=4"), factor, 0);
    BenchSettings s = quick(4);
    s.point.repeats = 1;
    auto r = run_bench(first, transport_512p(), s);
    if (factor == 1.0) {
      ASSERT_TRUE(r) << r.error().to_string();
      EXPECT_TRUE(r->verdict.valid);
      continue;
    }
    ASSERT_FALSE(r) << factor;
    EXPECT_EQ(r.error().code, ErrorCode::device);
    EXPECT_NE(r.error().message.find("implausible device timing: compute"), std::string::npos)
        << r.error().message;
    EXPECT_EQ(exit_code_for(r.error().code), 3);
    // After the cold start: the lone frames and the steady state fail, the
    // result is INVALID by no_errors, and the run is a device failure (exit 3).
    InflatedCompute later(sim("compute=2ms,bw=100MB/s,depth=4"), factor, 1);
    auto late = run_bench(later, transport_512p(), s);
    ASSERT_TRUE(late) << late.error().to_string();
    EXPECT_FALSE(late->verdict.valid);
    ASSERT_TRUE(late->verdict.failure);
    EXPECT_NE(late->verdict.failure->message.find("implausible device timing"), std::string::npos);
    EXPECT_EQ(late->latency.samples, 0u);
    bool named = false;
    for (const auto& rule : late->verdict.rules)
      if (rule.rule == "no_errors" && !rule.met)
        for (const auto& f : rule.findings)
          named = named || f.find("implausible device timing") != std::string::npos;
    EXPECT_TRUE(named);
  }
}

TEST(Methodology, TtfoBreakdownEqualsConfiguredCosts) {
  // bw 100 MB/s: in 10.48576 ms, out 2.62144 ms; lat 0.5 ms each way.
  auto dev = sim("compute=2ms,bw=100MB/s,lat=0.5ms,depth=8,load=250ms,first=40ms");
  auto r = run_bench(*dev, transport_512p(), quick(8));
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  const double serial = kIn / 100e6 * 1e3 + 0.5 + 2 + kOut / 100e6 * 1e3 + 0.5;
  EXPECT_NEAR(ms(r->ttfo.load), 250, 1e-6);
  EXPECT_NEAR(ms(r->ttfo.allocate), 0, 1e-6);  // binding is free on the virtual clock
  EXPECT_NEAR(ms(r->ttfo.first_inference), serial + 40, 1e-5);
  EXPECT_NEAR(ms(r->ttfo.total), 250 + serial + 40, 1e-5);
  EXPECT_NEAR(ms(*r->ttfo.first_timings.compute), 42, 1e-6);
}

TEST(Methodology, DeepQueueRateIsTheSlowestStage) {
  // Half duplex, link-bound: one channel carries in + out = 13.1072 ms/frame.
  {
    auto dev = sim("compute=2ms,bw=100MB/s,lat=0.5ms,depth=16");
    auto r = run_bench(*dev, transport_512p(), quick(16));
    ASSERT_TRUE(r.has_value());
    const double expected = 1.0 / ((kIn + kOut) / 100e6);
    EXPECT_NEAR(*r->steady.rate.median / expected, 1.0, 0.002);
    EXPECT_TRUE(r->verdict.valid) << r->verdict.reasons.front();
  }
  // Full duplex: the input direction alone (10.49 ms) is the slowest stage.
  {
    auto dev = sim("compute=2ms,bw=100MB/s,lat=0.5ms,depth=16,duplex=full");
    auto r = run_bench(*dev, transport_512p(), quick(16));
    ASSERT_TRUE(r.has_value());
    EXPECT_NEAR(*r->steady.rate.median / (100e6 / kIn), 1.0, 0.002);
  }
  // Compute-bound: 1 GB/s makes the link 1.31 ms, compute 2.27 ms is slowest.
  {
    auto dev = sim("compute=2.27ms,bw=1GB/s,lat=0.45ms,depth=32");
    auto r = run_bench(*dev, transport_512p(), quick(32));
    ASSERT_TRUE(r.has_value());
    EXPECT_NEAR(*r->steady.rate.median / (1000.0 / 2.27), 1.0, 0.002);
  }
}

TEST(Methodology, DepthOneRateIsTheSerialSum) {
  auto dev = sim("compute=2ms,bw=100MB/s,lat=0.5ms,depth=16");
  auto r = run_bench(*dev, transport_512p(), quick(1));
  ASSERT_TRUE(r.has_value());
  const double serial_ms = kIn / 1e5 + 0.5 + 2 + kOut / 1e5 + 0.5;
  EXPECT_NEAR(*r->steady.rate.median / (1000.0 / serial_ms), 1.0, 0.002);
  // Lone-frame latency is the same serial sum; hardware latency is compute.
  EXPECT_NEAR(*r->latency.overall_ms.median, serial_ms, 1e-5);
  EXPECT_NEAR(*r->latency.hardware_ms.median, 2.0, 1e-6);
  EXPECT_NEAR(*r->latency.bus_share, (serial_ms - 2.0) / serial_ms, 1e-6);
}

TEST(Methodology, BytesPerInferenceEqualTheModelFrames) {
  auto dev = sim("compute=1ms,bw=1GB/s,depth=4");
  auto r = run_bench(*dev, transport_512p(), quick(4));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->bytes.model_in, 1048576u);
  EXPECT_EQ(r->bytes.model_out, 262144u);
  EXPECT_DOUBLE_EQ(r->bytes.payload_in, kIn);
  EXPECT_DOUBLE_EQ(r->bytes.payload_out, kOut);
  EXPECT_NEAR(*r->bytes.payload_mb_per_s, (kIn + kOut) * *r->steady.rate.median / 1e6, 1e-9);
}

// rig bench --rate: the bytes per inference of an offered-load run are the
// model's frames too (they were 0: counted from steady repeats it has none of).
TEST(Methodology, BytesPerInferenceOfAnOfferedLoadRun) {
  auto dev = sim("compute=1ms,bw=1GB/s,depth=4");
  BenchSettings s = quick(4);
  s.point.duration = 1s;
  s.offered.rate = 100;
  auto r = run_bench(*dev, transport_512p(), s);
  ASSERT_TRUE(r.has_value());
  ASSERT_TRUE(r->offered.has_value());
  EXPECT_TRUE(r->offered->keeps_up);
  EXPECT_DOUBLE_EQ(r->bytes.payload_in, kIn);
  EXPECT_DOUBLE_EQ(r->bytes.payload_out, kOut);
  EXPECT_DOUBLE_EQ(r->bytes.payload_in + r->bytes.payload_out, kIn + kOut);
  ASSERT_TRUE(r->bytes.payload_mb_per_s.has_value());
  EXPECT_NEAR(*r->bytes.payload_mb_per_s, (kIn + kOut) * r->offered->achieved_rate / 1e6, 1e-9);
}

TEST(Methodology, LatencyOverlapsWhenPipelined) {
  // A large fixed latency with tiny frames: depth 1 pays it twice per frame,
  // a deep queue hides it entirely (the seed note's 724 -> 2094 climb).
  auto dev = sim("compute=0.3ms,bw=1GB/s,lat=0.45ms,depth=32");
  auto shallow = run_bench(*dev, transport_512p(), quick(1));
  auto dev2 = sim("compute=0.3ms,bw=1GB/s,lat=0.45ms,depth=32");
  auto deep = run_bench(*dev2, transport_512p(), quick(32));
  ASSERT_TRUE(shallow && deep);
  const double link_ms = (kIn + kOut) / 1e6;  // 1.31072 ms on the shared channel
  EXPECT_NEAR(*deep->steady.rate.median / (1000.0 / link_ms), 1.0, 0.002);
  EXPECT_NEAR(*shallow->steady.rate.median / (1000.0 / (link_ms + 0.3 + 0.9)), 1.0, 0.002);
}

TEST(Methodology, DriftingDeviceIsUnstableAndInvalid) {
  auto dev = sim("compute=2ms,bw=1GB/s,depth=8,drift=0.5");
  auto r = run_bench(*dev, transport_512p(), quick(8));
  ASSERT_TRUE(r.has_value());
  EXPECT_FALSE(r->verdict.valid);
  EXPECT_FALSE(r->steady.stable);
  bool named = false;
  for (const auto& reason : r->verdict.reasons)
    named |= reason.find("not stable") != std::string::npos;
  EXPECT_TRUE(named);
  // An INVALID run still shows what it saw.
  EXPECT_TRUE(r->steady.rate.median.has_value());
  EXPECT_GT(r->steady.repeats.front().windows.size(), 3u);
}

TEST(Methodology, StepSlowdownMakesRepeatsDisagree) {
  // Compute triples 12 s into the run: the repeats see different rates.
  auto dev = sim("compute=2ms,bw=1GB/s,depth=8,slow_at=12s,slow_factor=3");
  auto r = run_bench(*dev, transport_512p(), quick(8));
  ASSERT_TRUE(r.has_value());
  EXPECT_FALSE(r->verdict.valid);
  EXPECT_GT(*r->steady.rate.spread, 0.5);
}

TEST(Methodology, SteadyDeviceIsValidWithEveryWindowRecorded) {
  auto dev = sim("compute=2ms,bw=1GB/s,depth=8,jitter=0.02,seed=3");
  auto r = run_bench(*dev, transport_512p(), quick(8));
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(r->verdict.valid) << (r->verdict.reasons.empty() ? "" : r->verdict.reasons.front());
  for (const auto& rep : r->steady.repeats) {
    EXPECT_TRUE(rep.stable);
    EXPECT_GE(rep.elapsed, 5s);
    EXPECT_GE(rep.windows.size(), 9u);
    EXPECT_EQ(rep.errors, 0u);
    uint64_t in_windows = 0;
    for (const auto& w : rep.windows) in_windows += w.inferences;
    // Windows partition the measured span exactly.
    EXPECT_EQ(in_windows, rep.inferences);
    double window_time = 0;
    for (const auto& w : rep.windows) window_time += w.duration_s;
    EXPECT_NEAR(window_time, static_cast<double>(rep.elapsed.count()) / 1e9, 1e-6);
  }
}

TEST(Methodology, TooFewSamplesIsInvalid) {
  // 1 s per frame: a 5 s repeat stops at its 10 s cap with about 10 of the
  // 100 inferences it wants, and says so; the lone-frame phase has enough.
  auto dev = sim("compute=1s,bw=1GB/s,depth=1");
  BenchSettings s = quick(1);
  s.latency_samples = 12;
  s.latency_max = 60s;
  auto r = run_bench(*dev, transport_512p(), s);
  ASSERT_TRUE(r.has_value());
  EXPECT_FALSE(r->verdict.valid);
  EXPECT_EQ(r->latency.samples, 12u);
  for (const auto& rep : r->steady.repeats) {
    EXPECT_LE(rep.elapsed, 11s);
    EXPECT_LT(rep.inferences, 100u);
  }
  bool named = false;
  for (const auto& reason : r->verdict.reasons)
    named |= reason.find("repeat 1: too few samples") != std::string::npos;
  EXPECT_TRUE(named);
}

// Issue 27: given input frames (--input) are copied into their buffer sets
// once, when bound; with more frames than the depth, each slot cycles
// through its own sets, so every frame is measured and none is copied in
// the measured loop. The lone frames take every set in turn.
TEST(Methodology, GivenFramesAreBoundToTheirOwnSetsAndAllMeasured) {
  struct Bindings final : EngineObserver {
    std::set<BindingId> seen;
    void completed(uint32_t, const Completion& c, Nanos) override { seen.insert(c.binding); }
  };
  auto dev = sim("compute=1ms,bw=1000GB/s,depth=2");
  InputFiles files;
  files.map = [](const ModelInfo& model) -> Result<std::vector<InputFrame>> {
    std::vector<InputFrame> frames;
    for (int k = 0; k < 5; ++k)
      frames.push_back({std::vector<std::byte>(model.inputs[0].bytes, std::byte(10 + k))});
    return frames;
  };
  auto cold = cold_start(*dev, transport_512p(), 2, 1, nullptr, &files);
  ASSERT_TRUE(cold.has_value()) << cold.error().to_string();
  const Workspace& ws = cold->workspace;
  ASSERT_EQ(ws.bindings.size(), 5u);  // one set per frame, beyond the depth of 2
  const size_t per_set = ws.views.size() / ws.bindings.size();
  for (size_t k = 0; k < 5; ++k) {
    const auto view = ws.views[k * per_set];
    EXPECT_EQ(view.front(), std::byte(10 + k)) << k;
    EXPECT_EQ(view.back(), std::byte(10 + k)) << k;
  }
  Bindings steady;
  SteadySettings ss;
  ss.depth = 2;
  ss.min_duration = 100ms;
  ss.min_inferences = 20;
  ss.observer = &steady;
  auto rep = measure_steady(*dev, ws, ss);
  EXPECT_FALSE(rep.aborted);
  EXPECT_EQ(steady.seen.size(), 5u);
  Bindings lone;
  LatencySettings ls;
  ls.samples = 10;
  ls.observer = &lone;
  EXPECT_EQ(measure_latency(*dev, ws, ls).samples, 10u);
  EXPECT_EQ(lone.seen.size(), 5u);
  // A map that refuses the model fails the cold start with its error.
  files.map = [](const ModelInfo&) -> Result<std::vector<InputFrame>> {
    return fail(ErrorCode::invalid_argument, "x.npy: input 'input' expects ...");
  };
  auto refused = cold_start(*dev, transport_512p(), 2, 1, nullptr, &files);
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code, ErrorCode::invalid_argument);
  EXPECT_NE(refused.error().message.find("x.npy"), std::string::npos);
}

TEST(Methodology, TimeoutAbortsAndDrainsTheDevice) {
  // Each frame takes 2.5 ms; the engine waits at most 1 ms: the repeat aborts
  // with a timeout, then collects the late request before returning.
  auto dev = sim("compute=2.5ms,bw=1000GB/s,depth=2");
  auto cold = cold_start(*dev, transport_512p(), 2, 1);
  ASSERT_TRUE(cold.has_value());
  SteadySettings ss;
  ss.depth = 2;
  ss.request_timeout = 1ms;
  auto rep = measure_steady(*dev, cold->workspace, ss);
  EXPECT_TRUE(rep.aborted);
  EXPECT_EQ(rep.first_error->code, ErrorCode::timeout);
  EXPECT_FALSE(rep.device_stuck);
  EXPECT_EQ(dev->in_flight(), 0u);
  // A device that never answers within three more waits is declared stuck.
  auto slow = sim("compute=1s,bw=1000GB/s,depth=1");
  auto cold2 = cold_start(*slow, transport_512p(), 1, 1);
  ASSERT_TRUE(cold2.has_value());
  ss.depth = 1;
  auto stuck = measure_steady(*slow, cold2->workspace, ss);
  EXPECT_TRUE(stuck.device_stuck);
  EXPECT_EQ(slow->in_flight(), 1u);
}

TEST(Methodology, InputsAreInRangeForTheirType) {
  // A float model's inputs are in [0, 1): no NaN, infinities or denormals.
  CnnSpec spec;
  spec.frame = {8, 8};
  spec.layers = 1;
  auto bytes = build_cnn_model(spec);
  ASSERT_TRUE(bytes.has_value());
  ModelSource m;
  m.bytes = *bytes;
  auto dev = sim("compute=1ms");
  auto cold = cold_start(*dev, m, 1, 1);
  ASSERT_TRUE(cold.has_value());
  const auto& input = cold->workspace.buffers->at(0);
  ASSERT_EQ(input.size(), 3u * 8 * 8 * 4);
  for (size_t i = 0; i < input.size(); i += 4) {
    float v;
    std::memcpy(&v, input.data() + i, 4);
    EXPECT_TRUE(v >= 0.0f && v < 1.0f) << v;
  }
}

TEST(Methodology, BuffersBeyondTheMemoryBudgetAreRefused) {
  auto dev = sim("compute=1ms,depth=65536");
  TransportSpec spec;
  spec.frame = {3840, 2160};
  ModelSource m;
  m.bytes = *build_transport_model(spec);
  auto cold = cold_start(*dev, m, 65536, 1);
  ASSERT_FALSE(cold.has_value());
  EXPECT_EQ(cold.error().code, ErrorCode::limit_exceeded);
  EXPECT_NE(cold.error().message.find("--depth"), std::string::npos);
}

TEST(Methodology, TenMinuteRunIsInstantAndBounded) {
  // 10 minutes at 10k inferences/s on the virtual clock: 6M completions,
  // memory bounded by the reservoir (thinned by halves: at least half of
  // it, never more than all of it, stays filled).
  auto dev = sim("compute=100us,bw=1000GB/s,depth=8");
  TransportSpec spec;
  spec.frame = {16, 16};
  auto bytes = build_transport_model(spec);
  ASSERT_TRUE(bytes.has_value());
  ModelSource m;
  m.bytes = *bytes;
  auto cold = cold_start(*dev, m, 8, 1);
  ASSERT_TRUE(cold.has_value());
  SteadySettings ss;
  ss.depth = 8;
  ss.min_duration = 10min;
  ss.windows = 10;
  ss.reservoir_capacity = 1000;
  auto rep = measure_steady(*dev, cold->workspace, ss);
  EXPECT_NEAR(rep.rate, 10000, 0.1);
  EXPECT_GE(rep.inferences, 6000000u);
  EXPECT_LE(rep.latency_ms.count, 1000u);
  EXPECT_GE(rep.latency_ms.count, 500u);
  EXPECT_EQ(rep.windows.size(), 10u);
}

TEST(Methodology, JsonHasEverySectionAndNoNan) {
  auto dev = sim("compute=2ms,bw=1GB/s,depth=4");
  auto r = run_bench(*dev, transport_512p(), quick(4));
  ASSERT_TRUE(r.has_value());
  const auto doc = nlohmann::json::parse(bench_to_json(*r));
  for (const char* key : {"schema_version", "settings", "environment", "ttfo", "steady", "latency",
                          "bytes", "verdict"})
    EXPECT_TRUE(doc.contains(key)) << key;
  EXPECT_EQ(doc["verdict"]["status"], "VALID");
  EXPECT_EQ(doc["settings"]["effective"]["depth"], 4);
  const std::string text = doc.dump();
  EXPECT_EQ(text.find("NaN"), std::string::npos);
  EXPECT_EQ(text.find("Infinity"), std::string::npos);
  EXPECT_FALSE(doc["steady"]["repeats"][0]["windows"].empty());
  // Figures that do not exist are null, not NaN (the sim reports no overhead).
  EXPECT_TRUE(doc["steady"]["rate_per_s"]["median"].is_number());
}

TEST(Methodology, DepthBeyondTheDeviceIsClampedWithAWarning) {
  auto dev = sim("compute=2ms,bw=1GB/s,depth=4");
  auto r = run_bench(*dev, transport_512p(), quick(64));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->effective.depth, 4u);
  EXPECT_EQ(r->requested.depth, 64u);
  EXPECT_FALSE(r->verdict.warnings.empty());
}

TEST(Methodology, RunForDurationCountsExactly) {
  auto dev = sim("compute=3ms,bw=1GB/s,depth=4");
  auto cold = cold_start(*dev, transport_512p(), 1, 1);
  ASSERT_TRUE(cold.has_value());
  auto r = dev->run_for_duration(cold->workspace.bindings[0], 1s, Nanos(0));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->frames_completed, 333u);
  EXPECT_EQ(r->frames_aborted, 1u);
  EXPECT_DOUBLE_EQ(r->frames_per_second, 333.0);
  // A rate below one frame per second stays a real number.
  auto slow = dev->run_for_duration(cold->workspace.bindings[0], 3s, 5s - 3ms);
  ASSERT_TRUE(slow.has_value());
  EXPECT_EQ(slow->frames_completed, 1u);
  EXPECT_NEAR(slow->frames_per_second, 1.0 / 3.0, 1e-12);
}

TEST(Methodology, RealtimeSimFollowsTheSameTimeline) {
  // Paced against the wall clock, the figures are still the model's: the
  // virtual timeline is identical, only the waiting is real.
  auto paced = sim("compute=1ms,bw=1GB/s,depth=2,load=1ms,realtime=1");
  auto cold = cold_start(*paced, transport_512p(), 2, 1);
  ASSERT_TRUE(cold.has_value());
  auto lat = measure_latency(*paced, cold->workspace, LatencySettings{.samples = 5});
  EXPECT_EQ(lat.samples, 5u);
  EXPECT_NEAR(*lat.overall_ms.median, 1.0 + (kIn + kOut) / 1e6, 1e-6);
  EXPECT_NE(paced->info().spec.find("realtime=1"), std::string::npos);
}

TEST(Methodology, BadSimSpecsAreNamed) {
  for (const char* spec : {"sim:depth=0", "sim:compute=-1ms", "sim:bw=fast", "sim:warp=9",
                           "sim:duplex=triple", "sim:jitter=2"}) {
    auto d = open_device(spec);
    ASSERT_FALSE(d.has_value()) << spec;
    EXPECT_EQ(d.error().code, ErrorCode::invalid_argument) << spec;
  }
  auto d = open_device("sim:warp=9");
  EXPECT_NE(d.error().message.find("warp"), std::string::npos);
  auto u = open_device("tpu");
  ASSERT_FALSE(u.has_value());
  EXPECT_NE(u.error().message.find("unknown device 'tpu'"), std::string::npos);
}

// Counts what the engine tells its observer.
struct CountingObserver final : EngineObserver {
  std::vector<std::string> phases;  // "+name" at begin, "-name" at end
  uint64_t submits = 0, completions = 0, windows = 0;
  Nanos last_window_at{0};
  void phase_begin(EnginePhase p, Nanos) override {
    phases.push_back("+" + std::string(to_string(p)));
  }
  void phase_end(EnginePhase p, Nanos) override {
    phases.push_back("-" + std::string(to_string(p)));
  }
  void window_closed(const WindowFigure&, Nanos at) override {
    ++windows;
    last_window_at = at;
  }
  void submitted(uint32_t, Nanos) override { ++submits; }
  void completed(uint32_t, const Completion& c, Nanos) override {
    if (!c.error) ++completions;
  }
};

TEST(Methodology, TheObserverSeesEveryPhaseWindowAndInference) {
  auto dev = sim("compute=2ms,bw=1GB/s,depth=4,load=10ms");
  CountingObserver seen;
  BenchSettings s = quick(4);
  s.point.repeats = 2;
  s.point.observer = &seen;
  auto r = run_bench(*dev, transport_512p(), s);
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  ASSERT_GE(seen.phases.size(), 6u);
  EXPECT_EQ(seen.phases[0], "+load");
  EXPECT_EQ(seen.phases[1], "-load");
  EXPECT_EQ(seen.phases[2], "+allocate");
  EXPECT_EQ(seen.phases[5], "-first inference");
  EXPECT_EQ(std::count(seen.phases.begin(), seen.phases.end(), "+measure"), 2);
  EXPECT_EQ(std::count(seen.phases.begin(), seen.phases.end(), "-drain"), 2);
  EXPECT_EQ(std::count(seen.phases.begin(), seen.phases.end(), "+latency"), 1);
  // Every inference is seen once going in and once coming back: the first
  // one, the lone frames and every completion of both repeats.
  uint64_t steady = 0, windows = 0;
  for (const auto& rep : r->steady.repeats) {
    steady += rep.completed_total;
    windows += rep.windows.size();
  }
  const uint64_t expected = 1 + r->latency.samples + steady;
  EXPECT_EQ(seen.completions, expected);
  EXPECT_EQ(seen.submits, expected);
  EXPECT_EQ(seen.windows, windows);
}

// A device that asks for page-aligned, page-padded buffers (DeviceInfo's
// buffer_alignment / buffer_padding, as the hailo device declares the
// system's page size): the sim underneath, which records what was bound.
class PageAligned final : public Device {
 public:
  explicit PageAligned(std::unique_ptr<Device> inner) : inner_(std::move(inner)) {}
  DeviceInfo info() const override {
    DeviceInfo i = inner_->info();
    i.buffer_alignment = 16384;
    i.buffer_padding = 16384;
    return i;
  }
  Clock& clock() override { return inner_->clock(); }
  Result<LoadTimings> load(const ModelSource& m) override { return inner_->load(m); }
  const ModelInfo& model_info() const override { return inner_->model_info(); }
  Result<BindingId> bind(const Bindings& b) override {
    bound.push_back(b);
    return inner_->bind(b);
  }
  Result<InferenceTimings> run(BindingId b) override { return inner_->run(b); }
  Result<void> submit(BindingId b, uint64_t tag) override { return inner_->submit(b, tag); }
  Result<Completion> wait_next(Nanos t) override { return inner_->wait_next(t); }
  uint32_t in_flight() const override { return inner_->in_flight(); }
  Result<DurationRun> run_for_duration(BindingId b, Nanos d, Nanos s) override {
    return inner_->run_for_duration(b, d, s);
  }
  ByteCounters bytes() const override { return inner_->bytes(); }
  std::vector<Bindings> bound;

 private:
  std::unique_ptr<Device> inner_;
};

// Issue 25 item 5: the engine's buffers honour a device's declared alignment
// and padding; what is bound keeps the tensor's exact size.
TEST(Methodology, BuffersHonourTheDevicesAlignmentAndPadding) {
  auto sim = open_device("sim:compute=1ms,depth=4");
  ASSERT_TRUE(sim);
  PageAligned dev(std::move(*sim));
  TransportSpec t;
  t.frame = {32, 17};  // sizes that are no multiple of a page
  auto bytes = build_transport_model(t);
  ASSERT_TRUE(bytes);
  ModelSource m;
  m.bytes = *bytes;
  auto cs = cold_start(dev, m, 4, 1);
  ASSERT_TRUE(cs) << cs.error().to_string();
  ASSERT_EQ(dev.bound.size(), 4u);
  for (const auto& b : dev.bound) {
    for (const auto& in : b.inputs) {
      EXPECT_EQ(reinterpret_cast<uintptr_t>(in.data()) % 16384, 0u);
      EXPECT_EQ(in.size(), dev.model_info().inputs[0].bytes);
    }
    for (const auto& out : b.outputs) {
      EXPECT_EQ(reinterpret_cast<uintptr_t>(out.data()) % 16384, 0u);
      EXPECT_EQ(out.size(), dev.model_info().outputs[0].bytes);
    }
  }
  // Each allocation is padded to whole pages past its aligned start.
  for (size_t i = 0; i < cs->workspace.views.size(); ++i) {
    const auto& a = (*cs->workspace.buffers)[i];
    const auto& v = cs->workspace.views[i];
    const size_t after = static_cast<size_t>((a.data() + a.size()) - v.data());
    EXPECT_GE(after, (v.size() + 16383) / 16384 * 16384);
  }
  // And it measures as before.
  const SteadyRepeat r = measure_steady(dev, cs->workspace, SteadySettings{.depth = 4});
  EXPECT_FALSE(r.aborted);
  EXPECT_GT(r.rate, 0);
}

}  // namespace
}  // namespace rig

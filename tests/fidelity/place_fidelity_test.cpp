// Property (place): for one stage, the rate rig place claims never exceeds
// what the result it reads measured at those conditions, and a workload is
// MEETS only when the measured figures meet it: the rate at least the fps,
// the lone latency within the bound. A frame=WxH of the model's own size
// crosses as the model's own input bytes, whatever its element type.
//
// Also the examples (items 2 and 3), which failed before the fix:
// place ignored the depth / lone-frame limit and the measured rate, and cost
// a WxH frame as 3 bytes per pixel whatever the model's input.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "fidelity/sim_case.hpp"
#include "rig/report/bench_report.hpp"
#include "rig/report/place_report.hpp"
#include "rig/scenario/bench.hpp"
#include "rig/scenario/place.hpp"

namespace rig::fidelity {
namespace {

using namespace std::chrono_literals;

// Short benches: place reads the steady median, the lone latency and the
// compute time; the repeats' precision is not what is checked here.
BenchSettings short_bench() {
  BenchSettings s;
  s.point.duration = 300ms;
  s.point.repeats = 2;
  s.latency_samples = 10;
  s.monitor.enabled = false;
  return s;
}

PlaceCandidate measured(Device& device, const ModelSource& model, const BenchSettings& s) {
  auto bench = run_bench(device, model, s);
  EXPECT_TRUE(bench.has_value()) << bench.error().to_string();
  if (!bench) return {};
  auto c = read_place_candidate(bench_to_json(*bench), "bench.json");
  EXPECT_TRUE(c.has_value()) << c.error().to_string();
  return c ? *c : PlaceCandidate{};
}

Result<PlaceResult> place_one(const std::string& workload, const PlaceCandidate& c) {
  auto w = parse_workload(workload);
  if (!w) return tl::unexpected(w.error());
  PlaceStage only;
  only.name = "model";
  return place(*w, {only}, {c});
}

// Rounding: the claim is the measured rate itself or a model figure below
// it; 1e-9 relative covers the arithmetic of a scale multiplied back. The
// lone latency place models (bytes / bandwidth + latency each way, plus
// compute) is the sim's exactly; 1e-6 relative and 1 us cover the
// nanosecond rounding of the sim's clock.
constexpr double kRateRounding = 1e-9;
bool lone_within(double lone_ms, double bound_ms) {
  return lone_ms <= bound_ms * (1 + 1e-6) + 1e-3;
}

TEST(PlaceFidelity, NeverClaimsMoreThanMeasuredAndMeetsOnlyWhatTheFiguresMeet) {
  CaseRanges ranges;
  ranges.compute_lo_s = 100e-6;
  int cases = 0;
  for (uint64_t seed : case_seeds(16, 2)) {
    Drawn d = draw_case(seed, ranges);
    SCOPED_TRACE(d.c.describe());
    auto dev = open_device(d.c.spec());
    ASSERT_TRUE(dev) << dev.error().to_string();
    const PlaceCandidate c = measured(**dev, d.model, short_bench());
    ASSERT_GT(c.rate_per_s, 0);
    ++cases;
    const double rate = c.rate_per_s, lone = c.lone_ms;
    for (double fps_share : {0.5, 0.97, 1.03, 2.0}) {
      for (double bound_share : {0.0, 0.95, 1.05}) {
        const double fps = rate * fps_share;
        std::string w = "fps=" + format_fixed(fps, 6);
        if (bound_share > 0) w += ",latency=" + format_fixed(lone * bound_share * 1e3, 3) + "us";
        SCOPED_TRACE(w);
        auto r = place_one(w, c);
        ASSERT_TRUE(r) << r.error().to_string();
        const Assignment& a = r->assignments.front();
        EXPECT_LE(a.rate_per_s, rate * (1 + kRateRounding))
            << "place claims " << a.rate_per_s << "/s where the result measured " << rate << "/s";
        if (a.meets) {
          EXPECT_GE(rate, r->workload.fps) << "MEETS though the measured rate is short";
          if (r->workload.latency_ms) {
            EXPECT_TRUE(lone_within(lone, *r->workload.latency_ms))
                << "MEETS though the measured lone latency " << lone << " ms is over the bound";
          }
        }
      }
    }
    // The model's own frame size crosses as its own input bytes.
    const auto& in = d.c.model.frame;
    auto own =
        place_one("fps=1,frame=" + std::to_string(in.width) + "x" + std::to_string(in.height), c);
    ASSERT_TRUE(own) << own.error().to_string();
    EXPECT_DOUBLE_EQ(*own->workload.frame_bytes, static_cast<double>(d.c.in_bytes));
    EXPECT_LE(own->assignments.front().rate_per_s, rate * (1 + kRateRounding));
  }
  EXPECT_EQ(cases, 16);
}

ModelSource transport(FrameSize frame, ElementType type) {
  TransportSpec t;
  t.frame = frame;
  t.input_type = type;
  auto bytes = build_transport_model(t);
  EXPECT_TRUE(bytes.has_value());
  ModelSource m;
  if (bytes) m.bytes = *bytes;
  m.name = "transport";
  return m;
}

// Item 2: `rig model transport --frame 1000x500` (u8 x 4: 2 MB in, 0.5 MB
// out) on compute=2ms,bw=1GB/s,lat=10ms,depth=1 measures 40.8/s (one
// 24.5 ms frame at a time). Place said "MEETS at 400/s (4.00x)" for
// fps=100,latency=50ms: 1 / its 2.5 ms of link per frame, ignoring the depth.
TEST(PlaceFidelity, TheDepthAndTheMeasuredRateBoundTheClaim) {
  auto dev = open_device("sim:compute=2ms,bw=1GB/s,lat=10ms,depth=1");
  ASSERT_TRUE(dev);
  const PlaceCandidate c = measured(**dev, transport({1000, 500}, ElementType::u8), short_bench());
  EXPECT_NEAR(c.rate_per_s, 1e3 / 24.5, 0.01);
  EXPECT_EQ(c.depth, 1u);
  auto r = place_one("fps=100,latency=50ms", c);
  ASSERT_TRUE(r) << r.error().to_string();
  const Assignment& a = r->assignments.front();
  EXPECT_FALSE(a.meets);
  EXPECT_FALSE(r->met);
  EXPECT_LE(a.rate_per_s, c.rate_per_s * (1 + kRateRounding));
  EXPECT_NEAR(a.rate_per_s, 1e3 / 24.5, 0.01);
  ASSERT_TRUE(a.depth_rate_per_s);
  EXPECT_NEAR(*a.depth_rate_per_s, 1e3 / 24.5, 1e-6);
  EXPECT_NEAR(a.resource_rate_per_s, 400, 1e-6);
  EXPECT_NE(a.bound.find("queue depth"), std::string::npos) << a.bound;
  EXPECT_EQ(format_place_text(*r).find("MEETS"), std::string::npos) << format_place_text(*r);
}

// Item 3: `rig model cnn` (224x224 f32 input, 602,112 B) measured at 479/s
// on sim:link=usb3-gen2,compute=1ms: its link caps it near 482/s (a short
// bench reads a few % above until the engine's item 5 is fixed). With
// frame=224x224 place cost the frame as 150,528 B (3 B per pixel) and said
// it "MEETS 600 fps".
TEST(PlaceFidelity, AWxHFrameCrossesAsTheModelsOwnInput) {
  CnnSpec spec;
  spec.channels = 16;  // `rig model cnn`'s default --width
  auto cnn_bytes = build_cnn_model(spec);
  ASSERT_TRUE(cnn_bytes);
  ModelSource cnn;
  cnn.bytes = *cnn_bytes;
  cnn.name = "cnn";
  auto dev = open_device("sim:link=usb3-gen2,compute=1ms");
  ASSERT_TRUE(dev);
  const PlaceCandidate c = measured(**dev, cnn, short_bench());
  EXPECT_NEAR(c.rate_per_s, 482, 15);
  auto r = place_one("fps=600,frame=224x224", c);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_DOUBLE_EQ(*r->workload.frame_bytes, 224.0 * 224 * 3 * 4);
  EXPECT_NE(r->frame_mapping.find("float32"), std::string::npos) << r->frame_mapping;
  EXPECT_FALSE(r->met);
  EXPECT_LE(r->assignments.front().rate_per_s, c.rate_per_s * (1 + kRateRounding));
  // A larger frame crosses at its own size in the model's format, and says
  // that the compute is the one measured at the model's size.
  auto big = place_one("fps=10,frame=448x448", c);
  ASSERT_TRUE(big) << big.error().to_string();
  EXPECT_DOUBLE_EQ(*big->workload.frame_bytes, 448.0 * 448 * 3 * 4);
  EXPECT_NE(big->frame_mapping.find("not rescaled"), std::string::npos) << big->frame_mapping;
  // A byte count is taken as given.
  auto bytes = place_one("fps=10,frame=1MB", c);
  ASSERT_TRUE(bytes);
  EXPECT_DOUBLE_EQ(*bytes->workload.frame_bytes, 1e6);
}

TEST(PlaceFidelity, AFrameThatCannotBeMappedIsRefusedWithAReason) {
  TensorInfo image{"x", ElementType::u8, {1, 3, 480, 640}, 3 * 480 * 640};
  auto ok = frame_as_input({320, 240}, {image});
  ASSERT_TRUE(ok);
  EXPECT_DOUBLE_EQ(ok->bytes, 3.0 * 320 * 240);
  EXPECT_FALSE(ok->model_size);
  TensorInfo nhwc{"x", ElementType::f16, {1, 480, 640, 3}, 2 * 3 * 480 * 640};
  EXPECT_DOUBLE_EQ(frame_as_input({640, 480}, {nhwc})->bytes, 2.0 * 3 * 480 * 640);
  TensorInfo tokens{"ids", ElementType::i64, {1, 128}, 8 * 128};
  TensorInfo flat{"v", ElementType::f32, {1, 10, 20, 30, 40}, 4 * 240000};
  auto two = frame_as_input({640, 480}, {image, image});
  ASSERT_FALSE(two);
  EXPECT_NE(two.error().message.find("2 inputs"), std::string::npos) << two.error().message;
  EXPECT_NE(two.error().message.find("frame=BYTES"), std::string::npos);
  for (const TensorInfo& t : {flat, tokens}) {
    auto odd = frame_as_input({640, 480}, {t});
    ASSERT_FALSE(odd);
    EXPECT_NE(odd.error().message.find("not an image layout"), std::string::npos)
        << odd.error().message;
  }
  // A result without the model's inputs (rig predict's) cannot map a frame.
  PlaceCandidate predicted;
  predicted.device = "sim on usb3-gen2";
  predicted.rate_per_s = 100;
  predicted.compute_ms = predicted.compute_ms_per_frame = 1;
  auto refused = place_one("fps=10,frame=640x480", predicted);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("input shape"), std::string::npos)
      << refused.error().message;
}

// A device behind rig serve: place costs the link from the run's own figures
// (measured_link). On a half-duplex link with one bandwidth both ways, the
// lone frame is in/bw + lat + compute + out/bw + lat and the round trip
// 2 x lat, so the measured link must give back bw and lat (1e-6 relative:
// the latency is rounded to a nanosecond), and its lone-frame link time must
// be the lone frame less compute (within the two latencies' nanosecond
// rounding, 1e-6 ms), over 200 seeded cases.
TEST(PlaceFidelity, AServedDevicesMeasuredLinkRecoversTheSimsLink) {
  std::mt19937_64 rng(27);
  std::uniform_real_distribution<double> log_bw(6, 10);  // 1 MB/s .. 10 GB/s
  std::uniform_real_distribution<double> lat_ms(0.01, 5);
  std::uniform_real_distribution<double> compute_ms(0.05, 50);
  std::uniform_real_distribution<double> log_bytes(2, 7);  // 100 B .. 10 MB
  for (int i = 0; i < 200; ++i) {
    const double bw = std::pow(10, log_bw(rng));
    const double lat = lat_ms(rng), compute = compute_ms(rng);
    const double in = std::pow(10, log_bytes(rng)), out = std::pow(10, log_bytes(rng));
    const double lone = (in + out) / bw * 1e3 + 2 * lat + compute;
    const auto link = measured_link(lone, compute, in, out, in + out, 2 * lat, 4, "case");
    ASSERT_TRUE(link) << "case " << i;
    EXPECT_NEAR(link->bw_in, bw, bw * 1e-6) << "case " << i;
    EXPECT_NEAR(link->bw_out, bw, bw * 1e-6) << "case " << i;
    EXPECT_NEAR(to_ms(link->latency), lat, 1e-6) << "case " << i;
    const double link_ms = (in / link->bw_in + out / link->bw_out) * 1e3 + 2 * to_ms(link->latency);
    EXPECT_NEAR(link_ms, lone - compute, (lone - compute) * 1e-6 + 1e-6) << "case " << i;
  }
  // A lone frame no longer than its compute has no link to cost.
  EXPECT_FALSE(measured_link(5.0, 5.0, 1000, 1000, 2000, 0.1, 4, "equal"));
}

}  // namespace
}  // namespace rig::fidelity

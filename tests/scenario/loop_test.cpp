// rig loop against the sim's ground truth: the device's own loop rate, the
// host-observed pipelined rate, and what the per-frame transfers cost.
#include <gtest/gtest.h>

#include "rig/model.hpp"
#include "rig/scenario/loop.hpp"

namespace rig {
namespace {

using namespace std::chrono_literals;

ModelSource transport_512p() {
  TransportSpec spec;  // 512x512 u8 x 4 in (1,048,576 B), 262,144 B out
  auto bytes = build_transport_model(spec);
  EXPECT_TRUE(bytes.has_value());
  ModelSource m;
  m.bytes = *bytes;
  m.name = "transport-512p";
  return m;
}

TEST(Loop, DeviceRateHostRateAndTheCostOfTransfers) {
  // 100 MB/s half duplex: a frame's 1,310,720 bytes take 13.1 ms on the link,
  // which pipelining cannot hide; the loop sees the 1 ms of compute only.
  auto dev = open_device("sim:compute=1ms,bw=100MB/s,lat=0.1ms,depth=8");
  ASSERT_TRUE(dev.has_value()) << dev.error().to_string();
  LoopSettings s;
  s.point.duration = 3s;
  auto r = run_loop(**dev, transport_512p(), s);
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  EXPECT_EQ(r->loop.frames_completed, 3000u);  // floor(3 s / 1 ms)
  ASSERT_TRUE(r->device_rate && r->host_rate && r->transfer_cost_ms);
  EXPECT_NEAR(*r->device_rate, 1000, 1e-6);
  const double link_ms = 1310720 / 100e6 * 1e3;
  EXPECT_NEAR(1e3 / *r->host_rate, link_ms, link_ms * 0.01);
  EXPECT_NEAR(*r->transfer_cost_ms, link_ms - 1, link_ms * 0.01);
  EXPECT_NEAR(*r->transfer_cost_share, (link_ms - 1) / link_ms, 0.01);
  EXPECT_EQ(r->effective.depth, 8u);  // the device's queue depth
  EXPECT_TRUE(r->verdict.valid);
  EXPECT_FALSE(r->mixed_clocks);
  bool virtual_named = false;
  for (const auto& w : r->verdict.warnings)
    virtual_named |=
        w.find("runs on a virtual clock; both rates are simulated") != std::string::npos;
  EXPECT_TRUE(virtual_named);
}

TEST(Loop, WarmsUpAsBenchAndClampsTheDepth) {
  auto dev = open_device("sim:compute=2ms,bw=1GB/s,depth=4");
  ASSERT_TRUE(dev.has_value());
  LoopSettings s;
  s.point.duration = 1s;
  s.depth = 64;
  auto r = run_loop(**dev, transport_512p(), s);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->requested.depth, 64u);
  EXPECT_EQ(r->effective.depth, 4u);
  ASSERT_TRUE(r->depth_note.has_value());
  EXPECT_NE(r->depth_note->find("exceeds the device's queue depth 4"), std::string::npos);
  EXPECT_TRUE(r->verdict.valid);  // a clamp warns, it does not invalidate
  EXPECT_FALSE(r->verdict.warnings.empty());
  // The warm-up window is bench's: min(500 ms, one window = 100 ms).
  EXPECT_LE(r->steady.warmup, default_warmup_window(1s, 10) * 20);
  EXPECT_EQ(r->steady.windows.size(), 10u);
}

TEST(Loop, SleepBetweenFramesIsNotATransferCost) {
  // The device's time per frame is its period less the sleep, so the
  // transfer cost with a sleep is the one without it, within the device
  // rate's interval (100 frames in 1 s: the period is known to ~0.1 ms).
  auto dev = open_device("sim:compute=1ms,bw=1GB/s,depth=2");
  ASSERT_TRUE(dev.has_value());
  LoopSettings s;
  s.point.duration = 1s;
  auto plain = run_loop(**dev, transport_512p(), s);
  ASSERT_TRUE(plain.has_value());
  ASSERT_TRUE(plain->transfer_cost_ms.has_value());
  s.sleep_between_frames = 9ms;
  auto r = run_loop(**dev, transport_512p(), s);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->loop.frames_completed, 100u);  // one frame per 10 ms
  ASSERT_TRUE(r->transfer_cost_ms.has_value());
  ASSERT_TRUE(r->transfer_cost_lower_ms && r->transfer_cost_upper_ms);
  EXPECT_LE(*r->transfer_cost_lower_ms, *plain->transfer_cost_ms + 0.01);
  EXPECT_GE(*r->transfer_cost_upper_ms, *plain->transfer_cost_ms - 0.01);
  EXPECT_LT(*r->transfer_cost_upper_ms - *r->transfer_cost_lower_ms, 0.2);
}

TEST(Loop, BadSettingsAreNamed) {
  auto dev = open_device("sim:compute=1ms");
  ASSERT_TRUE(dev.has_value());
  LoopSettings s;
  s.sleep_between_frames = -1ms;
  auto r = run_loop(**dev, transport_512p(), s);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message.find("sleep between frames"), std::string::npos);
  s = LoopSettings{};
  s.point.windows = 2;
  r = run_loop(**dev, transport_512p(), s);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message.find("windows must be >= 3"), std::string::npos);
}

}  // namespace
}  // namespace rig

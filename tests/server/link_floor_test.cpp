// The floor of a remote link: the protocol's ping, timed by the remote device
// at open, carried into the lone-frame latency and the ladder's fit, and
// absent where there is no link.
#include <gtest/gtest.h>

#include "rig/device.hpp"
#include "rig/model.hpp"
#include "rig/report/bench_report.hpp"
#include "rig/report/ladder_report.hpp"
#include "rig/scenario/bench.hpp"
#include "rig/scenario/ladder.hpp"
#include "server/fake_device.hpp"
#include "server/server.hpp"

namespace rig::server {
namespace {

using namespace std::chrono_literals;

std::unique_ptr<Server> serve_sim() {
  auto sim = open_device("sim:compute=1us,load=0ms,bw=100GB/s,depth=4");
  EXPECT_TRUE(sim) << sim.error().to_string();
  ServerSettings s;
  s.listen = "127.0.0.1:0";
  auto server = Server::start(std::move(*sim), s);
  EXPECT_TRUE(server) << server.error().to_string();
  return std::move(*server);
}

ModelSource transport_16() {
  TransportSpec spec;
  spec.frame = {16, 16};
  auto bytes = build_transport_model(spec);
  EXPECT_TRUE(bytes) << bytes.error().to_string();
  ModelSource m;
  m.bytes = std::move(*bytes);
  m.name = "transport-16";
  return m;
}

TEST(LinkFloor, ARemoteDeviceTimesPingsAtOpenWithinItsBound) {
  testing::FakeOptions fake;
  ServerSettings settings;
  settings.listen = "127.0.0.1:0";
  auto started = Server::start(std::make_unique<testing::FakeDevice>(fake), settings);
  ASSERT_TRUE(started) << started.error().to_string();
  auto& server = *started;
  auto remote = open_device(server->address());
  ASSERT_TRUE(remote) << remote.error().to_string();
  const DeviceInfo info = (*remote)->info();
  ASSERT_TRUE(info.link_floor) << "no link floor for a remote device";
  const LinkFloor& f = *info.link_floor;
  EXPECT_GE(f.round_trips, 1u);
  EXPECT_LE(f.round_trips, 200u);
  EXPECT_GT(f.min, Nanos(0));
  EXPECT_LE(f.min, f.median);
  EXPECT_LE(f.median, f.max);
  // The loop starts a ping only while less than 50 ms have passed, so it ends
  // within the budget plus its longest round trip (and the two clock reads).
  EXPECT_LE(f.spent, 50ms + f.max + 1ms);
  // Every ping reached the server (after hello), and none reached the device.
  EXPECT_GE(server->stats().requests, uint64_t{f.round_trips} + 1);
  std::lock_guard lock(fake.control->mu);
  EXPECT_EQ(fake.control->runs + fake.control->submits + fake.control->loads, 0);
}

TEST(LinkFloor, CalibrateZeroTurnsItOffAndSaysSoInTheSpec) {
  auto server = serve_sim();
  auto remote = open_device(server->address() + "?calibrate=0");
  ASSERT_TRUE(remote) << remote.error().to_string();
  EXPECT_FALSE((*remote)->info().link_floor);
  EXPECT_NE((*remote)->info().spec.find("calibrate=0"), std::string::npos);
  auto bad = open_device(server->address() + "?calibrate=yes");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("calibrate must be 0 or 1"), std::string::npos);
}

TEST(LinkFloor, InProcessDevicesHaveNone) {
  for (const char* spec : {"sim", "cpu"}) {
    auto d = open_device(spec);
    ASSERT_TRUE(d) << d.error().to_string();
    EXPECT_FALSE((*d)->info().link_floor) << spec;
  }
  auto sim = open_device("sim:compute=1ms,load=0ms");
  ASSERT_TRUE(sim);
  BenchSettings s;
  s.point.duration = 100ms;
  s.point.repeats = 1;
  s.latency_samples = 5;
  auto r = run_bench(**sim, transport_16(), s);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_FALSE(r->latency.rig_round_trip_ms);
  EXPECT_EQ(format_bench_text(*r).find("rig round trip"), std::string::npos);
}

TEST(LinkFloor, BenchAndLadderCarryTheFigure) {
  auto server = serve_sim();
  auto remote = open_device(server->address());
  ASSERT_TRUE(remote) << remote.error().to_string();
  const LinkFloor floor = *(*remote)->info().link_floor;
  BenchSettings s;
  s.point.duration = 50ms;
  s.point.repeats = 1;
  s.point.min_inferences = 5;
  s.latency_samples = 5;
  auto r = run_bench(**remote, transport_16(), s);
  ASSERT_TRUE(r) << r.error().to_string();
  ASSERT_TRUE(r->latency.rig_round_trip_ms);
  EXPECT_DOUBLE_EQ(*r->latency.rig_round_trip_ms, to_ms(floor.median));
  EXPECT_NE(format_bench_text(*r).find("rig round trip, no device"), std::string::npos);
  const std::string json = bench_to_json(*r);
  EXPECT_NE(json.find("\"rig_round_trip_ms\""), std::string::npos);
  EXPECT_NE(json.find("\"link_floor_median_ms\""), std::string::npos);

  LadderSettings ls;
  ls.sizes = {"16x16", "32x32"};
  ls.point.duration = 20ms;
  ls.point.repeats = 1;
  ls.point.min_inferences = 5;
  ls.latency_samples = 5;
  auto ladder = run_ladder(**remote, ls);
  ASSERT_TRUE(ladder) << ladder.error().to_string();
  ASSERT_TRUE(ladder->rig_round_trip_ms);
  EXPECT_DOUBLE_EQ(*ladder->rig_round_trip_ms, to_ms(floor.median));
  EXPECT_NE(format_ladder_text(*ladder).find("rig round trip on this link, no device"),
            std::string::npos);
  EXPECT_NE(ladder_to_json(*ladder).find("\"rig_round_trip_ms\""), std::string::npos);
}

}  // namespace
}  // namespace rig::server

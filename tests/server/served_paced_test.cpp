// A sim served with realtime=1 is timed like a real device (issue 38, items
// 3 and 4; issue 36, item 10): no "bus share is not meaningful" warning, the
// host sampled and its confound rules checked, the hosted device's duplex
// declared to the client; a sim that is not paced says "serve the sim with
// realtime=1" first. A ladder's poor fit gives no bandwidth and no --link
// spec. Wall-clock runs vary: nothing here asserts a timed figure.
#include <gtest/gtest.h>

#include <chrono>

#include "rig/device.hpp"
#include "rig/model.hpp"
#include "rig/report/ladder_report.hpp"
#include "rig/scenario/bench.hpp"
#include "rig/scenario/confounds.hpp"
#include "rig/scenario/ladder.hpp"
#include "server/server.hpp"

namespace rig::server {
namespace {

constexpr const char* kRealtimeSim =
    "sim:compute=1ms,bw=10MB/s,lat=0.2ms,load=5ms,depth=4,realtime=1";

ModelSource transport_model(uint32_t side) {
  TransportSpec spec;
  spec.frame = {side, side};
  ModelSource m;
  m.bytes = *build_transport_model(spec);
  m.name = "transport-" + std::to_string(side);
  return m;
}

std::unique_ptr<Server> sim_server(const std::string& spec) {
  auto sim = open_device(spec);
  EXPECT_TRUE(sim) << sim.error().to_string();
  if (!sim) return nullptr;
  ServerSettings s;
  s.listen = "127.0.0.1:0";
  auto server = Server::start(std::move(*sim), s);
  EXPECT_TRUE(server) << server.error().to_string();
  return server ? std::move(*server) : nullptr;
}

const RuleOutcome* find_rule(const Verdict& v, std::string_view name) {
  for (const auto& r : v.rules)
    if (r.rule == name) return &r;
  return nullptr;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string s;
  for (const auto& l : lines) s += l + "\n";
  return s;
}

TEST(ServedPacedSim, IsTimedLikeARealDevice) {
  auto server = sim_server(kRealtimeSim);
  ASSERT_TRUE(server);
  auto remote = open_device(server->address());
  ASSERT_TRUE(remote) << remote.error().to_string();
  const DeviceInfo info = (*remote)->info();
  EXPECT_TRUE(info.paced_clock);
  EXPECT_EQ(joined(info.warnings).find("bus share is not meaningful"), std::string::npos)
      << joined(info.warnings);
  // The hosted sim's duplex (half by default) reaches the client.
  EXPECT_EQ(info.duplex, Duplex::half);

  BenchSettings s;
  s.point.duration = std::chrono::milliseconds(300);
  s.point.repeats = 1;
  s.point.min_inferences = 10;
  s.point.warmup_max = std::chrono::milliseconds(100);
  s.latency_samples = 5;
  auto r = run_bench(**remote, transport_model(64), s);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_TRUE(r->monitor.host_sampled) << r->monitor.host_note;
  for (const char* rule : {"host_contention", "steal_time"}) {
    const RuleOutcome* o = find_rule(r->verdict, rule);
    ASSERT_NE(o, nullptr) << rule;
    EXPECT_EQ(o->evidence.find("virtual clock"), std::string::npos) << rule << ": " << o->evidence;
  }
}

TEST(ServedUnpacedSim, SaysServeWithRealtimeFirst) {
  auto server = sim_server("sim:compute=1ms,bw=100MB/s");
  ASSERT_TRUE(server);
  auto remote = open_device(server->address());
  ASSERT_TRUE(remote) << remote.error().to_string();
  const DeviceInfo info = (*remote)->info();
  ASSERT_FALSE(info.warnings.empty());
  EXPECT_EQ(info.warnings.back().rfind("serve the sim with realtime=1", 0), 0u)
      << joined(info.warnings);
}

// Issue 36, item 10: timed by the wall clock (virtual_clock false, real_clock
// met), a host the monitor did not sample is not skipped as "virtual clock".
TEST(HostRules, NotSkippedAsVirtualClockOnTheWallClock) {
  MonitorRecord m;
  m.enabled = true;
  m.host_sampled = false;
  ConfoundSettings settings;
  ConfoundInputs in;
  in.monitor = &m;
  in.settings = &settings;
  in.virtual_clock = false;
  Verdict v;
  add_confound_rules(v, in);
  for (const char* rule : {"host_contention", "steal_time"}) {
    const RuleOutcome* o = find_rule(v, rule);
    ASSERT_NE(o, nullptr) << rule;
    EXPECT_EQ(o->evidence.find("virtual clock: the figures are simulated"), std::string::npos)
        << rule << ": " << o->evidence;
  }
}

// A ladder whose fits stray by more than 10% (rig ladder -d cpu: 74.5%)
// states no bandwidth and no --link spec; a good fit keeps both.
TEST(LadderPoorFit, GivesNoBandwidthAndNoLinkSpec) {
  LadderResult r;
  r.device.spec = "cpu";
  r.bandwidth_bytes_per_s = 17200102.2e6;
  r.pipelined_fit.bandwidth_bytes_per_s = r.bandwidth_bytes_per_s;
  r.pipelined_fit.fixed_ms = 8.7;
  r.pipelined_fit.points = 4;
  r.pipelined_fit.max_relative_residual = 0.745;
  r.bw_in_bytes_per_s = r.bw_out_bytes_per_s = 300e6;
  r.direction_fit_max_relative_residual = 0.30;
  ASSERT_TRUE(measured_link(r));
  drop_poor_fits(r);
  EXPECT_FALSE(r.bandwidth_bytes_per_s);
  EXPECT_FALSE(measured_link(r));
  const std::string text = format_ladder_text(r);
  EXPECT_EQ(text.find("17200102"), std::string::npos) << text;
  EXPECT_EQ(text.find("as a link for rig predict"), std::string::npos) << text;
  EXPECT_NE(text.find("poor fit"), std::string::npos) << text;

  LadderResult good;
  good.bandwidth_bytes_per_s = good.bw_in_bytes_per_s = good.bw_out_bytes_per_s = 290e6;
  good.pipelined_fit.max_relative_residual = 0.01;
  good.direction_fit_max_relative_residual = 0.02;
  drop_poor_fits(good);
  EXPECT_TRUE(good.bandwidth_bytes_per_s);
  EXPECT_TRUE(measured_link(good));
}

// A served ladder: the duplex is the server's declaration, not inferred, and
// rig's own round trip is taken off the fixed latency before it is halved.
TEST(ServedPacedSim, LadderUsesTheDeclaredDuplexAndTheLinkFloor) {
  auto server = sim_server(kRealtimeSim);
  ASSERT_TRUE(server);
  auto remote = open_device(server->address());
  ASSERT_TRUE(remote) << remote.error().to_string();
  LadderSettings s;
  s.sizes = {"64x64", "96x96", "128x128"};
  s.latency_samples = 5;
  s.point.duration = std::chrono::milliseconds(100);
  s.point.repeats = 1;
  s.point.min_inferences = 10;
  s.point.warmup_max = std::chrono::milliseconds(100);
  auto r = run_ladder(**remote, s);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(r->duplex, Duplex::half);
  EXPECT_TRUE(r->duplex_from_device);
  const std::string text = format_ladder_text(*r);
  EXPECT_NE(text.find("duplex: half (the device says so)"), std::string::npos) << text;
  if (r->round_trip_ms && r->rig_round_trip_ms) {
    ASSERT_TRUE(r->per_transfer_ms);
    EXPECT_DOUBLE_EQ(*r->per_transfer_ms,
                     std::max(0.0, *r->round_trip_ms - *r->rig_round_trip_ms) / 2);
    EXPECT_NE(text.find("less rig's own"), std::string::npos) << text;
  }
}

}  // namespace
}  // namespace rig::server

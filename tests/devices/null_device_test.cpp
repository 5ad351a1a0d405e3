// The null device: every request completes at once, nothing is copied; in
// process and hosted by rig serve (the rig's own ceiling, bench/engine).
#include <gtest/gtest.h>

#include "rig/engine.hpp"
#include "rig/model.hpp"
#include "server/server.hpp"

namespace rig {
namespace {

using namespace std::chrono_literals;

ModelSource small_model() {
  TransportSpec spec;
  spec.frame = {16, 16};
  auto bytes = build_transport_model(spec);
  EXPECT_TRUE(bytes.has_value());
  ModelSource m;
  m.bytes = *bytes;
  m.name = "transport-16";
  return m;
}

TEST(NullDevice, CompletesAtOnceUpToItsDepth) {
  auto d = open_device("null:depth=2");
  ASSERT_TRUE(d) << d.error().to_string();
  Device& dev = **d;
  EXPECT_EQ(dev.info().kind, "null");
  EXPECT_EQ(dev.info().queue_depth, 2u);
  auto cs = cold_start(dev, small_model(), 3, 1);
  ASSERT_TRUE(cs) << cs.error().to_string();
  ASSERT_TRUE(dev.submit(cs->workspace.bindings[0], 7));
  ASSERT_TRUE(dev.submit(cs->workspace.bindings[1], 8));
  auto full = dev.submit(cs->workspace.bindings[2], 9);
  ASSERT_FALSE(full);
  EXPECT_EQ(full.error().code, ErrorCode::queue_full);
  EXPECT_EQ(dev.in_flight(), 2u);
  auto c = dev.wait_next(1s);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->tag, 7u);
  ASSERT_TRUE(dev.wait_next(1s));
  EXPECT_FALSE(dev.wait_next(1s));  // nothing in flight
  EXPECT_EQ(dev.bytes().payload_in, 0u);
  EXPECT_FALSE(open_device("null:colour=red"));
  EXPECT_FALSE(open_device("null:depth=0"));
}

TEST(NullDevice, TheEngineDrivesItAndTheLoopCancels) {
  auto d = open_device("null");
  ASSERT_TRUE(d) << d.error().to_string();
  auto cs = cold_start(**d, small_model(), 32, 1);
  ASSERT_TRUE(cs) << cs.error().to_string();
  SteadySettings s;
  s.depth = 32;
  s.min_duration = 50ms;
  s.warmup_window = 5ms;
  const SteadyRepeat r = measure_steady(**d, cs->workspace, s);
  EXPECT_FALSE(r.aborted);
  EXPECT_GT(r.inferences, 100u);
  EXPECT_EQ(r.errors, 0u);
  auto loop = (*d)->run_for_duration(cs->workspace.bindings[0], 20ms, Nanos(0));
  ASSERT_TRUE(loop) << loop.error().to_string();
  EXPECT_GT(loop->frames_completed, 0u);
}

TEST(NullDevice, RigServeHostsIt) {
  auto null = open_device("null:depth=8");
  ASSERT_TRUE(null);
  server::ServerSettings settings;
  settings.listen = "127.0.0.1:0";
  auto srv = server::Server::start(std::move(*null), settings);
  ASSERT_TRUE(srv) << srv.error().to_string();
  auto remote = open_device((*srv)->address());
  ASSERT_TRUE(remote) << remote.error().to_string();
  EXPECT_NE((*remote)->info().description.find("null"), std::string::npos)
      << (*remote)->info().description;
  auto cs = cold_start(**remote, small_model(), 4, 1);
  ASSERT_TRUE(cs) << cs.error().to_string();
  SteadySettings s;
  s.depth = 4;
  s.min_duration = 50ms;
  s.warmup_window = 5ms;
  const SteadyRepeat r = measure_steady(**remote, cs->workspace, s);
  EXPECT_FALSE(r.aborted);
  EXPECT_GT(r.inferences, 10u);
  EXPECT_GT(r.link_in_per_inference,
            0);  // the wire carries the frames even when the device copies nothing
}

}  // namespace
}  // namespace rig

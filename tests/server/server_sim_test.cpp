// rig serve hosting the sim device, driven through the remote device: the
// loop counts are exact (the sim completes floor(duration / compute) frames),
// so every figure of seeds/000 is checked end to end. Also the engine's
// phases over the wire.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "rig/device.hpp"
#include "rig/engine.hpp"
#include "rig/model.hpp"
#include "server/server.hpp"

namespace rig::server {
namespace {

class SimServer : public ::testing::Test {
 protected:
  void SetUp() override {
    auto sim = open_device("sim:compute=1us,load=0ms,bw=100GB/s,depth=4");
    ASSERT_TRUE(sim) << sim.error().to_string();
    ServerSettings s;
    s.listen = "127.0.0.1:0";
    auto server = Server::start(std::move(*sim), s);
    ASSERT_TRUE(server) << server.error().to_string();
    server_ = std::move(*server);
    auto remote = open_device(server_->address());
    ASSERT_TRUE(remote) << remote.error().to_string();
    remote_ = std::move(*remote);
    TransportSpec spec;
    spec.frame = {16, 16};
    auto bytes = build_transport_model(spec);
    ASSERT_TRUE(bytes) << bytes.error().to_string();
    model_.bytes = std::move(*bytes);
    model_.name = "transport-16";
  }

  std::unique_ptr<Server> server_;
  std::unique_ptr<Device> remote_;
  ModelSource model_;
};

// A realtime sim's loop is waited out in real time: cancel() cuts it short,
// and the frames are counted up to the cut (exact for a constant period).
TEST(SimCancel, CancelEndsARealtimeLoopWithExactCounts) {
  auto sim = open_device("sim:compute=1ms,load=0ms,bw=100GB/s,lat=0ms,realtime=1");
  ASSERT_TRUE(sim);
  TransportSpec spec;
  spec.frame = {16, 16};
  ModelSource model;
  model.bytes = *build_transport_model(spec);
  ASSERT_TRUE((*sim)->load(model));
  std::vector<std::byte> in((*sim)->model_info().input_bytes()),
      out((*sim)->model_info().output_bytes());
  Bindings b;
  b.inputs.emplace_back(in);
  b.outputs.emplace_back(out);
  auto binding = (*sim)->bind(b);
  ASSERT_TRUE(binding);
  std::atomic<bool> done{false};
  Result<DurationRun> run = fail(ErrorCode::internal, "not run");
  std::thread loop([&] {
    run = (*sim)->run_for_duration(*binding, std::chrono::hours(1), Nanos(0));
    done = true;
  });
  while (!done) {
    (*sim)->cancel();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  loop.join();
  ASSERT_TRUE(run) << run.error().to_string();
  EXPECT_LT(run->elapsed, std::chrono::hours(1));
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(run->elapsed).count();
  // Frames of 1 ms back to back: each whole millisecond completed one, a
  // frame under way at the cut is aborted.
  EXPECT_EQ(run->frames_completed, static_cast<uint64_t>(ms));
  EXPECT_EQ(run->frames_aborted, run->elapsed % std::chrono::milliseconds(1) == Nanos(0) ? 0u : 1u);
}

// SIGTERM (Server::stop) does not wait out a loop that is not sliced (a
// realtime sim's clock is virtual, so its loops never are): the host cancels
// it, and the client's loop fails with disconnected.
TEST(SimCancel, StopCancelsAnUnslicedLoop) {
  auto sim = open_device("sim:compute=1ms,load=0ms,bw=100GB/s,lat=0ms,realtime=1");
  ASSERT_TRUE(sim);
  ServerSettings s;
  s.listen = "127.0.0.1:0";
  auto server = Server::start(std::move(*sim), s);
  ASSERT_TRUE(server);
  auto remote = open_device((*server)->address());
  ASSERT_TRUE(remote);
  TransportSpec spec;
  spec.frame = {16, 16};
  ModelSource model;
  model.bytes = *build_transport_model(spec);
  ASSERT_TRUE((*remote)->load(model));
  std::vector<std::byte> in((*remote)->model_info().input_bytes()),
      out((*remote)->model_info().output_bytes());
  Bindings b;
  b.inputs.emplace_back(in);
  b.outputs.emplace_back(out);
  auto binding = (*remote)->bind(b);
  ASSERT_TRUE(binding);
  Result<DurationRun> run = fail(ErrorCode::internal, "not run");
  std::thread loop(
      [&] { run = (*remote)->run_for_duration(*binding, std::chrono::hours(1), Nanos(0)); });
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::minutes(1);
  while ((*server)->stats().loops_started == 0 && std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_EQ((*server)->stats().loops_started, 1u);
  (*server)->stop();  // returns once the loop was cancelled (it would take an hour otherwise)
  loop.join();
  ASSERT_FALSE(run);
  EXPECT_EQ(run.error().code, ErrorCode::disconnected) << run.error().to_string();
}

// Device::cancel() on a remote device is passed on to its server (action
// cancel): an hour-long realtime loop returns with the frames completed so
// far, counted exactly, and the connection stays usable.
TEST(SimCancel, ARemoteDevicesCancelCutsItsServersLoopShort) {
  auto sim = open_device("sim:compute=1ms,load=0ms,bw=100GB/s,lat=0ms,realtime=1");
  ASSERT_TRUE(sim);
  ServerSettings s;
  s.listen = "127.0.0.1:0";
  auto server = Server::start(std::move(*sim), s);
  ASSERT_TRUE(server);
  auto remote = open_device((*server)->address());
  ASSERT_TRUE(remote);
  TransportSpec spec;
  spec.frame = {16, 16};
  ModelSource model;
  model.bytes = *build_transport_model(spec);
  ASSERT_TRUE((*remote)->load(model));
  std::vector<std::byte> in((*remote)->model_info().input_bytes()),
      out((*remote)->model_info().output_bytes());
  Bindings b;
  b.inputs.emplace_back(in);
  b.outputs.emplace_back(out);
  auto binding = (*remote)->bind(b);
  ASSERT_TRUE(binding);
  // Before a loop, cancel() has no effect on it.
  (*remote)->cancel();
  Result<DurationRun> run = fail(ErrorCode::internal, "not run");
  std::atomic<bool> done{false};
  std::thread loop([&] {
    run = (*remote)->run_for_duration(*binding, std::chrono::hours(1), Nanos(0));
    done = true;
  });
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::minutes(1);
  while ((*server)->stats().loops_started == 0 && std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_EQ((*server)->stats().loops_started, 1u);
  (*remote)->cancel();  // from another thread, as a signal handler would
  loop.join();
  ASSERT_TRUE(run) << run.error().to_string();
  EXPECT_LT(run->elapsed, std::chrono::hours(1));
  ASSERT_TRUE(run->frames_completed);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(run->elapsed).count();
  EXPECT_EQ(*run->frames_completed, static_cast<uint64_t>(ms));
  // The connection goes on: a lone frame runs.
  ASSERT_TRUE((*remote)->submit(*binding, 7));
  auto c = (*remote)->wait_next(std::chrono::seconds(30));
  ASSERT_TRUE(c) << c.error().to_string();
  EXPECT_FALSE(c->error);
}

TEST_F(SimServer, TheTypedFactsDescribeTheHostedSim) {
  const DeviceInfo info = remote_->info();
  EXPECT_EQ(info.kind, "remote");
  EXPECT_EQ(info.own_queue_depth, 4u);
  EXPECT_EQ(info.device_queue_depth(), 4u);
  EXPECT_GT(info.queue_depth, 4u);
  EXPECT_EQ(info.clock, ClockKind::virtual_time);
  EXPECT_FALSE(info.memory_bytes);  // the sim declares none: hello says 0
  // The sim's duplex is the hosted link's, a display fact; the client's link
  // is the network.
  EXPECT_EQ(info.duplex, Duplex::unknown);
  EXPECT_EQ(info.properties.at("server.duplex"), "half");
}

TEST_F(SimServer, LoopCountsAreExactEndToEnd) {
  auto cold =
      cold_start(*remote_, model_, 1, 7);  // its first run also clears the sim's first-frame cost
  ASSERT_TRUE(cold) << cold.error().to_string();
  const BindingId binding = cold->workspace.bindings[0];
  const Nanos compute = std::chrono::microseconds(1);
  for (uint64_t n :
       {0ull, 1ull, 127ull, 128ull, 240ull, 300ull, 16384ull, 1ull << 21, 1ull << 28}) {
    const Nanos duration = n == 0 ? compute / 2 : compute * static_cast<int64_t>(n);
    auto r = remote_->run_for_duration(binding, duration, Nanos(0));
    ASSERT_TRUE(r) << "n=" << n << ": " << r.error().to_string();
    EXPECT_EQ(r->frames_completed, n);
    EXPECT_EQ(r->frames_aborted, n == 0 ? 1u : 0u);
    EXPECT_EQ(r->elapsed, duration);
    EXPECT_DOUBLE_EQ(r->frames_per_second,
                     static_cast<double>(n) / (static_cast<double>(duration.count()) / 1e9));
  }
}

TEST_F(SimServer, FractionalRateWithSleepBetweenFrames) {
  auto cold = cold_start(*remote_, model_, 1, 7);
  ASSERT_TRUE(cold);
  // As in seeds/000: a 3 s loop sleeping 5 s between frames completes one
  // frame: 0.33 frames/s, which must not become 0.
  auto r = remote_->run_for_duration(cold->workspace.bindings[0], std::chrono::seconds(3),
                                     std::chrono::seconds(5));
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(r->frames_completed, 1u);
  EXPECT_NEAR(r->frames_per_second, 1.0 / 3.0, 1e-12);
}

TEST_F(SimServer, TwoLoopsThenOrdinaryRunsAndAPipeline) {
  auto cold = cold_start(*remote_, model_, 4, 7);
  ASSERT_TRUE(cold);
  const auto& ws = cold->workspace;
  for (int i = 0; i < 2; ++i) {
    auto r = remote_->run_for_duration(ws.bindings[0], std::chrono::milliseconds(3), Nanos(0));
    ASSERT_TRUE(r) << r.error().to_string();
    EXPECT_EQ(r->frames_completed, 3000u);
  }
  auto run = remote_->run(ws.bindings[1]);
  ASSERT_TRUE(run) << run.error().to_string();
  ASSERT_TRUE(run->compute);
  EXPECT_EQ(*run->compute, std::chrono::microseconds(1));  // the sim's own compute time

  SteadySettings s;
  s.depth = 4;
  s.min_duration = std::chrono::milliseconds(100);
  s.min_inferences = 50;
  s.windows = 5;
  s.warmup_window = std::chrono::milliseconds(20);
  s.warmup_max = std::chrono::milliseconds(200);
  s.max_duration_factor = 1.0;
  const SteadyRepeat rep = measure_steady(*remote_, ws, s);
  EXPECT_FALSE(rep.aborted) << (rep.first_error ? rep.first_error->to_string() : "");
  EXPECT_EQ(rep.errors, 0u);
  EXPECT_GT(rep.inferences, 0u);
  const ModelInfo& info = remote_->model_info();
  EXPECT_DOUBLE_EQ(rep.payload_in_per_inference, static_cast<double>(info.input_bytes()));
  EXPECT_DOUBLE_EQ(rep.payload_out_per_inference, static_cast<double>(info.output_bytes()));
  // Headers and bodies cross too.
  EXPECT_GT(rep.link_in_per_inference, rep.payload_in_per_inference);
  EXPECT_GT(rep.link_out_per_inference, rep.payload_out_per_inference);
}

}  // namespace
}  // namespace rig::server

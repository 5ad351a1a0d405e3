// rig serve hosting the sim device, driven through the remote device: the
// loop counts are exact (the sim completes floor(duration / compute) frames),
// so every figure of seeds/000 is checked end to end. Also the engine's
// phases over the wire.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "raw_client.hpp"
#include "rig/device.hpp"
#include "rig/engine.hpp"
#include "rig/model.hpp"
#include "rig/scenario/bench.hpp"
#include "server/server.hpp"

namespace rig::server {
namespace {

using testing::RawClient;
using wire::Action;
using wire::Status;
namespace pb = wire::pb;

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

// A client of a served sim: a remote device with one model and one binding.
struct ServedClient {
  std::unique_ptr<Device> device;
  std::vector<std::byte> in, out;
  BindingId binding = 0;
};

ModelSource transport_model(uint32_t side) {
  TransportSpec spec;
  spec.frame = {side, side};
  ModelSource m;
  m.bytes = *build_transport_model(spec);
  m.name = "transport-" + std::to_string(side);
  return m;
}

ServedClient served_client(const Server& server, const ModelSource& model) {
  ServedClient c;
  auto d = open_device(server.address());
  EXPECT_TRUE(d);
  if (!d) return c;
  c.device = std::move(*d);
  EXPECT_TRUE(c.device->load(model));
  c.in.resize(c.device->model_info().input_bytes());
  c.out.resize(c.device->model_info().output_bytes());
  Bindings b;
  b.inputs.emplace_back(c.in);
  b.outputs.emplace_back(c.out);
  c.binding = c.device->bind(b).value_or(0);
  return c;
}

// A server on 127.0.0.1 hosting a sim of `spec`.
std::unique_ptr<Server> sim_server(const std::string& spec) {
  auto sim = open_device(spec);
  EXPECT_TRUE(sim);
  if (!sim) return nullptr;
  ServerSettings s;
  s.listen = "127.0.0.1:0";
  auto server = Server::start(std::move(*sim), s);
  EXPECT_TRUE(server);
  return server ? std::move(*server) : nullptr;
}

// The sharing tests' server: loads take 5 ms of virtual time.
std::unique_ptr<Server> sharing_server() {
  return sim_server("sim:compute=1ms,load=5ms,bw=100GB/s,lat=0ms");
}

// A realtime sim: loops are waited out in real time, frames of 1 ms exactly.
constexpr const char* kRealtimeSim = "sim:compute=1ms,load=0ms,bw=100GB/s,lat=0ms,realtime=1";

// Waits (a minute at most) until the server has started a loop.
void wait_for_a_loop(const Server& server) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::minutes(1);
  while (server.stats().loops_started == 0 && std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

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
  auto server = sim_server(kRealtimeSim);
  ASSERT_TRUE(server);
  ServedClient client = served_client(*server, transport_model(16));
  ASSERT_TRUE(client.device);
  Device* remote = client.device.get();
  const BindingId binding = client.binding;
  Result<DurationRun> run = fail(ErrorCode::internal, "not run");
  std::thread loop(
      [&] { run = remote->run_for_duration(binding, std::chrono::hours(1), Nanos(0)); });
  wait_for_a_loop(*server);
  ASSERT_EQ(server->stats().loops_started, 1u);
  server->stop();  // returns once the loop was cancelled (it would take an hour otherwise)
  loop.join();
  ASSERT_FALSE(run);
  EXPECT_EQ(run.error().code, ErrorCode::disconnected) << run.error().to_string();
}

// Device::cancel() on a remote device is passed on to its server (action
// cancel): an hour-long realtime loop returns with the frames completed so
// far, counted exactly, and the connection stays usable.
TEST(SimCancel, ARemoteDevicesCancelCutsItsServersLoopShort) {
  auto server = sim_server(kRealtimeSim);
  ASSERT_TRUE(server);
  ServedClient client = served_client(*server, transport_model(16));
  ASSERT_TRUE(client.device);
  Device* remote = client.device.get();
  const BindingId binding = client.binding;
  // Before a loop, cancel() has no effect on it.
  remote->cancel();
  Result<DurationRun> run = fail(ErrorCode::internal, "not run");
  std::atomic<bool> done{false};
  std::thread loop([&] {
    run = remote->run_for_duration(binding, std::chrono::hours(1), Nanos(0));
    done = true;
  });
  wait_for_a_loop(*server);
  ASSERT_EQ(server->stats().loops_started, 1u);
  remote->cancel();  // from another thread, as a signal handler would
  loop.join();
  ASSERT_TRUE(run) << run.error().to_string();
  EXPECT_LT(run->elapsed, std::chrono::hours(1));
  ASSERT_TRUE(run->frames_completed);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(run->elapsed).count();
  EXPECT_EQ(*run->frames_completed, static_cast<uint64_t>(ms));
  // The connection goes on: a lone frame runs.
  ASSERT_TRUE(remote->submit(binding, 7));
  auto c = remote->wait_next(std::chrono::seconds(30));
  ASSERT_TRUE(c) << c.error().to_string();
  EXPECT_FALSE(c->error);
}

// A cancel cuts only its own connection's loops: another connection that
// sends one while this one's loop runs is told no loop was cut, and this
// loop runs its whole duration (a realtime sim: exact counts).
TEST(SimCancel, ACancelOnAnotherConnectionLeavesTheLoopAlone) {
  auto server = sim_server(kRealtimeSim);
  ASSERT_TRUE(server);
  ServedClient client = served_client(*server, transport_model(16));
  ASSERT_TRUE(client.device);
  Device* remote = client.device.get();
  const BindingId binding = client.binding;
  Result<DurationRun> run = fail(ErrorCode::internal, "not run");
  std::thread loop(
      [&] { run = remote->run_for_duration(binding, std::chrono::milliseconds(300), Nanos(0)); });
  wait_for_a_loop(*server);
  auto other = RawClient::connect(server->address());
  other.hello();
  pb::Body cancel;
  cancel.mutable_cancel_request();
  const wire::Frame reply = other.request(2, Action::cancel, cancel);
  EXPECT_EQ(reply.header.status, Status::ok);
  ASSERT_TRUE(reply.body.has_cancel_reply());
  EXPECT_FALSE(reply.body.cancel_reply().loop_cut());
  loop.join();
  ASSERT_TRUE(run) << run.error().to_string();
  EXPECT_EQ(run->elapsed, std::chrono::milliseconds(300));
  EXPECT_EQ(run->frames_completed, 300u);
}

// Two connections that upload identical model bytes share one load: their
// runs alternate on the device with no reload; different bytes reload it at
// every switch. Each client reads how the device was shared (issue 9).
TEST(SimSharing, IdenticalModelsShareOneLoadAndTheCountsReachTheClients) {
  auto server = sharing_server();
  ASSERT_TRUE(server);
  ServedClient a = served_client(*server, transport_model(16)),
               b = served_client(*server, transport_model(16));
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(a.device->run(a.binding));
    ASSERT_TRUE(b.device->run(b.binding));
  }
  EXPECT_EQ(server->stats().model_reloads, 0u);
  EXPECT_GE(server->stats().shared_switches, 5u);
  auto seen = a.device->read_sensors();
  EXPECT_EQ(seen["server.other_requests"], 3);  // b's runs
  EXPECT_EQ(seen["server.other_connections"], 1);
  EXPECT_EQ(seen["server.model_reloads"], 2);  // the two loads themselves; no switch reloaded

  // A third client with other bytes: its load puts them on the device (a
  // load, not a reload); every switch away from them and back reloads.
  ServedClient c = served_client(*server, transport_model(32));
  ASSERT_TRUE(c.device->run(c.binding));
  ASSERT_TRUE(a.device->run(a.binding));
  ASSERT_TRUE(c.device->run(c.binding));
  EXPECT_EQ(server->stats().model_reloads, 2u);
  EXPECT_EQ(server->stats().device_loads, 5u);
  seen = a.device->read_sensors();
  EXPECT_EQ(seen["server.model_reloads"], 5);   // three loads and two switch reloads
  EXPECT_EQ(seen["server.other_requests"], 5);  // b's 3 and c's 2
  EXPECT_EQ(seen["server.other_connections"], 2);
}

// At every window of a bench on one connection, another client runs a
// request: the verdict says the device was shared; when the other client's
// model differs, the reloads make the run INVALID.
class OtherClientEachWindow final : public EngineObserver {
 public:
  explicit OtherClientEachWindow(ServedClient& other) : other_(other) {}
  void window_closed(const WindowFigure&, Nanos) override {
    ok_ = other_.device->run(other_.binding).has_value() && ok_;
  }
  bool ok() const { return ok_; }

 private:
  ServedClient& other_;
  bool ok_ = true;
};

const RuleOutcome* find_rule(const Verdict& v, std::string_view name) {
  for (const auto& r : v.rules)
    if (r.rule == name) return &r;
  return nullptr;
}

TEST(SimSharing, ABenchOnASharedDeviceSaysSo) {
  for (const uint32_t other_side : {16u, 32u}) {
    auto server = sharing_server();
    ASSERT_TRUE(server);
    auto a = open_device(server->address());
    ASSERT_TRUE(a);
    ServedClient b = served_client(*server, transport_model(other_side));
    OtherClientEachWindow other(b);
    BenchSettings s;
    s.point.duration = std::chrono::milliseconds(200);
    s.point.repeats = 1;
    s.point.min_inferences = 10;
    s.latency_samples = 5;
    s.point.observer = &other;
    auto r = run_bench(**a, transport_model(16), s);
    ASSERT_TRUE(r) << r.error().to_string();
    EXPECT_TRUE(other.ok());
    const RuleOutcome* o = find_rule(r->verdict, "device_shared");
    ASSERT_NE(o, nullptr);
    ASSERT_FALSE(o->met) << o->evidence;
    EXPECT_NE(o->findings.at(0).find("device shared with 1 other client"), std::string::npos)
        << o->findings.at(0);
    if (other_side == 16) {  // identical bytes: one load, no reloads
      EXPECT_NE(o->findings.at(0).find("; 0 model reloads"), std::string::npos);
      EXPECT_EQ(o->severity, Severity::warns);
    } else {
      EXPECT_EQ(o->findings.at(0).find("; 0 model reloads"), std::string::npos);
      EXPECT_EQ(o->severity, Severity::invalidates);
      EXPECT_FALSE(r->verdict.valid);
    }
  }
}

TEST(SimSharing, ABenchWithTheDeviceToItselfIsNotShared) {
  auto server = sharing_server();
  ASSERT_TRUE(server);
  auto a = open_device(server->address());
  ASSERT_TRUE(a);
  BenchSettings s;
  s.point.duration = std::chrono::milliseconds(200);
  s.point.repeats = 1;
  s.point.min_inferences = 10;
  s.latency_samples = 5;
  auto r = run_bench(**a, transport_model(16), s);
  ASSERT_TRUE(r) << r.error().to_string();
  const RuleOutcome* o = find_rule(r->verdict, "device_shared");
  ASSERT_NE(o, nullptr);
  EXPECT_TRUE(o->met) << o->evidence;
  EXPECT_NE(o->evidence.find("0 requests from other clients, 0 model reloads"), std::string::npos)
      << o->evidence;
}

TEST_F(SimServer, TheTypedFactsDescribeTheHostedSim) {
  const DeviceInfo info = remote_->info();
  EXPECT_EQ(info.kind, "remote");
  EXPECT_EQ(info.own_queue_depth, 4u);
  EXPECT_EQ(info.device_queue_depth(), 4u);
  EXPECT_GT(info.queue_depth, 4u);
  EXPECT_EQ(info.clock, ClockKind::virtual_time);
  EXPECT_FALSE(info.memory_bytes);  // the sim declares none: hello says 0
  // The duplex is the one the server declares for its device (the ladder
  // uses it rather than guessing from lone frames the loopback copy fools).
  EXPECT_EQ(info.duplex, Duplex::half);
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

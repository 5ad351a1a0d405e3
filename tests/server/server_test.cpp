// rig serve and the remote device, end to end over 127.0.0.1 and unix
// sockets, with a scripted device. Servers run in-process on ephemeral ports.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <condition_variable>
#include <cstring>
#include <mutex>

#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <thread>

#include "devices/remote/remote_device.hpp"
#include "proto/convert.hpp"
#include "rig/engine.hpp"
#include "server/fake_device.hpp"
#include "server/policy.hpp"
#include "server/raw_client.hpp"
#include "server/server.hpp"

namespace rig::server {
namespace {

using testing::FakeControl;
using testing::FakeDevice;
using testing::FakeOptions;
using testing::RawClient;
using wire::Action;
using wire::Status;
namespace pb = wire::pb;

std::span<const std::byte> as_bytes(const std::string& s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

ModelSource fake_model(const std::string& text) {
  ModelSource m;
  m.bytes.assign(as_bytes(text).begin(), as_bytes(text).end());
  m.name = "fake";
  return m;
}

// Waits (on the fake's condition variable, not on a clock) until `done`
// holds; false only if it does not within a minute, so a regression fails
// instead of hanging.
bool wait_for(FakeControl& control, const std::function<bool(FakeControl&)>& done) {
  std::unique_lock lock(control.mu);
  return control.cv.wait_for(lock, std::chrono::minutes(1), [&] { return done(control); });
}

pb::Body hello_body() {
  pb::Body b;
  b.mutable_hello_request()->set_min_version(wire::kMinVersion);
  b.mutable_hello_request()->set_max_version(wire::kMaxVersion);
  return b;
}

void append(std::vector<std::byte>& out, uint32_t id, Action action, pb::Body body,
            std::vector<std::span<const std::byte>> buffers = {}) {
  auto f = wire::encode_frame(id, action, Status::ok, body, std::move(buffers), wire::Limits{});
  ASSERT_TRUE(f) << f.error().to_string();
  wire::append_frame(*f, out);
}

std::vector<std::byte> pattern(size_t n, uint8_t seed) {
  std::vector<std::byte> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<std::byte>((i * 13 + seed * 7 + 1) & 0xff);
  return v;
}

std::unique_ptr<Server> start_server(FakeOptions options = {}, ServerSettings settings = {}) {
  if (settings.listen == "127.0.0.1:5757") settings.listen = "127.0.0.1:0";
  auto server = Server::start(std::make_unique<FakeDevice>(std::move(options)), settings);
  EXPECT_TRUE(server) << server.error().to_string();
  return server ? std::move(*server) : nullptr;
}

std::unique_ptr<Device> open(const std::string& spec) {
  auto d = open_device(spec);
  EXPECT_TRUE(d) << d.error().to_string();
  return d ? std::move(*d) : nullptr;
}

// Caller-side buffers for one binding.
struct Frames {
  std::vector<std::byte> in, out;
  BindingId id = 0;
};

Frames bind(Device& d, size_t in, size_t out, uint8_t seed) {
  Frames f;
  f.in = pattern(in, seed);
  f.out.assign(out, std::byte{0});
  Bindings b;
  b.inputs.emplace_back(f.in);
  b.outputs.emplace_back(f.out);
  auto id = d.bind(b);
  EXPECT_TRUE(id) << id.error().to_string();
  f.id = id.value_or(0);
  return f;
}

TEST(Server, HelloDescribesTheHostedDevice) {
  FakeOptions o;
  o.sensors = {{"temperature_c", 41.5}};
  auto server = start_server(o);
  auto d = open(server->address());
  ASSERT_TRUE(d);
  const DeviceInfo info = d->info();
  EXPECT_EQ(info.kind, "remote");
  EXPECT_EQ(info.spec, server->address());
  EXPECT_FALSE(info.in_process);
  EXPECT_EQ(info.queue_depth, 8u);  // twice the fake's depth of 4
  EXPECT_EQ(info.properties.at("server.device_kind"), "fake");
  EXPECT_EQ(info.properties.at("server.device_queue_depth"), "4");
  EXPECT_EQ(info.properties.at("device_queue_depth"), "4");  // the device's own, beside 8
  EXPECT_EQ(info.properties.at("server.memory_bytes"), "1048576");
  EXPECT_EQ(info.properties.at("server.sensors"), "temperature_c");
  EXPECT_EQ(info.properties.at("server.clock"), "virtual");
  EXPECT_FALSE(d->clock().is_virtual());  // the remote device's clock is the host's
  auto sensors = d->read_sensors();
  EXPECT_EQ(sensors.at("temperature_c"), 41.5);
}

TEST(Server, HelloFillsTheTypedFactsOfTheHostedDevice) {
  auto server = start_server();
  auto d = open(server->address());
  ASSERT_TRUE(d);
  const DeviceInfo info = d->info();
  EXPECT_EQ(info.queue_depth, 8u);      // what this client may keep in flight
  EXPECT_EQ(info.own_queue_depth, 4u);  // the fake's own
  EXPECT_EQ(info.device_queue_depth(), 4u);
  EXPECT_EQ(info.clock, ClockKind::virtual_time);
  ASSERT_TRUE(info.memory_bytes);
  EXPECT_EQ(*info.memory_bytes, 1048576u);
  EXPECT_EQ(info.duplex, Duplex::unknown);  // the network declares none

  FakeOptions real;
  real.real_clock = true;
  real.depth = 3;
  auto real_server = start_server(real);
  auto r = open(real_server->address());
  ASSERT_TRUE(r);
  EXPECT_EQ(r->info().clock, ClockKind::real);
  EXPECT_EQ(r->info().own_queue_depth, 3u);
  EXPECT_EQ(r->info().properties.at("server.clock"), "real");
}

// The protobuf run (compact=0); compact_run_server_test.cpp has run_compact.
TEST(Server, RunCarriesInputsOutputsTimingsAndCountsBytes) {
  auto server = start_server();
  auto d = open(server->address() + "?compact=0");
  ASSERT_TRUE(d);
  auto load = d->load(fake_model("in=64,out=32,out=5"));
  ASSERT_TRUE(load) << load.error().to_string();
  EXPECT_EQ(load->compile, std::chrono::milliseconds(5));
  ASSERT_EQ(d->model_info().outputs.size(), 2u);
  std::vector<std::byte> in = pattern(64, 1), out0(32), out1(5);
  Bindings b{{in}, {out0, out1}};
  auto id = d->bind(b);
  ASSERT_TRUE(id);
  const ByteCounters before = d->bytes();
  auto t = d->run(*id);
  ASSERT_TRUE(t) << t.error().to_string();
  EXPECT_EQ(out0, testing::fake_expected(in, 0, 32));
  EXPECT_EQ(out1, testing::fake_expected(in, 1, 5));
  ASSERT_TRUE(t->compute);
  EXPECT_EQ(*t->compute, std::chrono::milliseconds(1));  // the server-side compute time
  EXPECT_TRUE(t->transfer_in && t->queue_wait && t->transfer_out);
  const ByteCounters after = d->bytes();
  EXPECT_EQ(after.payload_in - before.payload_in, 64u);
  EXPECT_EQ(after.payload_out - before.payload_out, 37u);
  // Exactly the request frame went out: header + body + the input.
  pb::Body body;
  body.mutable_run_request()->set_handle(1);
  auto frame = wire::encode_frame(1, Action::run, Status::ok, body, {in}, wire::Limits{});
  EXPECT_EQ(after.link_in - before.link_in, frame->size());
  // The reply: header, a body of timings, both outputs.
  EXPECT_GT(after.link_out - before.link_out, wire::kHeaderSize + 37);
  EXPECT_LT(after.link_out - before.link_out, wire::kHeaderSize + 37 + 64);
}

// Hundreds of requests in flight, replies matched by message id: none lost,
// none duplicated, every output the one of its own input.
TEST(Server, PipelinedRunsWithHundredsInFlight) {
  ServerSettings s;
  s.depth = 400;
  auto server = start_server({}, s);
  auto d = open(server->address());
  ASSERT_TRUE(d);
  EXPECT_EQ(d->info().queue_depth, 400u);
  ASSERT_TRUE(d->load(fake_model("in=48,out=24")));
  std::vector<Frames> frames;
  for (int i = 0; i < 300; ++i) frames.push_back(bind(*d, 48, 24, static_cast<uint8_t>(i)));
  for (int round = 0; round < 3; ++round) {
    for (auto& f : frames) std::fill(f.out.begin(), f.out.end(), std::byte{0});
    for (size_t i = 0; i < frames.size(); ++i) ASSERT_TRUE(d->submit(frames[i].id, 1000 + i));
    EXPECT_EQ(d->in_flight(), 300u);
    std::set<uint64_t> seen;
    for (size_t i = 0; i < frames.size(); ++i) {
      auto c = d->wait_next(std::chrono::seconds(30));
      ASSERT_TRUE(c) << c.error().to_string();
      ASSERT_FALSE(c->error) << c->error->to_string();
      EXPECT_TRUE(seen.insert(c->tag).second) << "duplicate " << c->tag;
      const Frames& f = frames.at(c->tag - 1000);
      EXPECT_EQ(c->binding, f.id);
      EXPECT_EQ(f.out, testing::fake_expected(f.in, 0, 24));
    }
    EXPECT_EQ(seen.size(), 300u);
    EXPECT_EQ(d->in_flight(), 0u);
  }
  auto none = d->wait_next(std::chrono::seconds(1));
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code, ErrorCode::invalid_argument);
}

TEST(Server, QueueDepthAndBindingsAreEnforcedOnTheClient) {
  ServerSettings s;
  s.depth = 2;
  auto server = start_server({}, s);
  auto d = open(server->address());
  ASSERT_TRUE(d->load(fake_model("in=4,out=4")));
  auto a = bind(*d, 4, 4, 1), b = bind(*d, 4, 4, 2), c = bind(*d, 4, 4, 3);
  ASSERT_TRUE(d->submit(a.id, 1));
  auto again = d->submit(a.id, 2);
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code, ErrorCode::invalid_argument);
  ASSERT_TRUE(d->submit(b.id, 2));
  auto full = d->submit(c.id, 3);
  ASSERT_FALSE(full);
  EXPECT_EQ(full.error().code, ErrorCode::queue_full);
  ASSERT_TRUE(d->wait_next(std::chrono::seconds(30)));
  ASSERT_TRUE(d->wait_next(std::chrono::seconds(30)));
  std::vector<std::byte> small(3), out(4);
  EXPECT_EQ(d->bind(Bindings{{small}, {out}}).error().code, ErrorCode::invalid_argument);
}

TEST(Server, UnixSocketTransport) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("rig-server-" + std::to_string(::getpid()) + ".sock"))
                               .string();
  ServerSettings s;
  s.listen = "unix:" + path;
  auto server = start_server({}, s);
  ASSERT_TRUE(server);
  EXPECT_EQ(server->address(), "unix:" + path);
  auto d = open(server->address());
  ASSERT_TRUE(d);
  ASSERT_TRUE(d->load(fake_model("in=100,out=7")));
  auto f = bind(*d, 100, 7, 9);
  ASSERT_TRUE(d->run(f.id));
  EXPECT_EQ(f.out, testing::fake_expected(f.in, 0, 7));
  d.reset();
  server.reset();
  EXPECT_FALSE(std::filesystem::exists(path));
}

// The counts of seeds/000 through the whole client path: server, wire,
// parser, reply checks.
TEST(Server, LoopFiguresArriveExactly) {
  auto control = std::make_shared<FakeControl>();
  FakeOptions o;
  o.control = control;
  auto server = start_server(o);
  auto d = open(server->address());
  ASSERT_TRUE(d->load(fake_model("in=16,out=16")));
  auto f = bind(*d, 16, 16, 4);
  for (uint64_t n :
       {0ull, 1ull, 127ull, 128ull, 240ull, 300ull, 16384ull, 1ull << 21, 1ull << 28}) {
    const DurationRun scripted{n, n % 3, std::chrono::seconds(3), static_cast<double>(n) / 3.0};
    {
      std::lock_guard lock(control->mu);
      control->loop_result = scripted;
    }
    auto r = d->run_for_duration(f.id, std::chrono::seconds(3), Nanos(0));
    ASSERT_TRUE(r) << "n=" << n << ": " << r.error().to_string();
    EXPECT_EQ(r->frames_completed, n);
    EXPECT_EQ(r->frames_aborted, n % 3);
    EXPECT_EQ(r->elapsed, std::chrono::seconds(3));
    EXPECT_EQ(r->frames_per_second, static_cast<double>(n) / 3.0);
  }
  // A device whose figures disagree with each other is refused, not believed.
  {
    std::lock_guard lock(control->mu);
    control->loop_result = DurationRun{720, 0, std::chrono::seconds(3), 0.0};
  }
  auto bad = d->run_for_duration(f.id, std::chrono::seconds(3), Nanos(0));
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, ErrorCode::protocol);
}

TEST(Server, LoopTwiceThenRunAndErrorsArePropagated) {
  auto control = std::make_shared<FakeControl>();
  FakeOptions o;
  o.control = control;
  auto server = start_server(o);
  auto d = open(server->address());
  ASSERT_TRUE(d->load(fake_model("in=16,out=8")));
  auto f = bind(*d, 16, 8, 4);
  for (int i = 0; i < 2; ++i) {
    std::fill(f.out.begin(), f.out.end(), std::byte{0});
    auto r = d->run_for_duration(f.id, std::chrono::milliseconds(10), Nanos(0));
    ASSERT_TRUE(r) << r.error().to_string();
    EXPECT_EQ(r->frames_completed, 10u);  // 10 ms of 1 ms frames
    EXPECT_EQ(r->frames_aborted, 0u);
    EXPECT_DOUBLE_EQ(r->frames_per_second, 1000.0);
    EXPECT_EQ(f.out, testing::fake_expected(f.in, 0, 8));  // the last frame's outputs
  }
  auto run = d->run(f.id);
  ASSERT_TRUE(run) << run.error().to_string();
  // Sleeping between frames: 1 frame in the 3 s loop, 0.33 frames/s, not 0.
  auto slow = d->run_for_duration(f.id, std::chrono::seconds(3), std::chrono::seconds(5));
  ASSERT_TRUE(slow);
  EXPECT_EQ(slow->frames_completed, 1u);
  EXPECT_NEAR(slow->frames_per_second, 1.0 / 3.0, 1e-12);
  // A device error comes back as an error, never as a count.
  {
    std::lock_guard lock(control->mu);
    control->loop_error = Error{ErrorCode::device, "thermal shutdown"};
  }
  auto failed = d->run_for_duration(f.id, std::chrono::seconds(1), Nanos(0));
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().code, ErrorCode::device);
  EXPECT_NE(failed.error().message.find("thermal shutdown"), std::string::npos);
  {
    std::lock_guard lock(control->mu);
    control->loop_error.reset();
  }
  // Arguments the server refuses.
  EXPECT_EQ(d->run_for_duration(f.id, Nanos(0), Nanos(0)).error().code,
            ErrorCode::invalid_argument);
  EXPECT_EQ(d->run_for_duration(f.id, std::chrono::hours(2), Nanos(0)).error().code,
            ErrorCode::limit_exceeded);
  EXPECT_TRUE(d->run(f.id));
}

TEST(Server, RunErrorsReachTheirCompletion) {
  auto control = std::make_shared<FakeControl>();
  control->run_error = Error{ErrorCode::device, "bad frame"};
  FakeOptions o;
  o.control = control;
  auto server = start_server(o);
  auto d = open(server->address());
  ASSERT_TRUE(d->load(fake_model("in=4,out=4")));
  auto f = bind(*d, 4, 4, 1);
  ASSERT_TRUE(d->submit(f.id, 77));
  auto c = d->wait_next(std::chrono::seconds(30));
  ASSERT_TRUE(c);
  EXPECT_EQ(c->tag, 77u);
  ASSERT_TRUE(c->error);
  EXPECT_EQ(c->error->code, ErrorCode::device);
  auto sync = d->run(f.id);
  ASSERT_FALSE(sync);
  EXPECT_NE(sync.error().message.find("bad frame"), std::string::npos);
}

// A connection reuses its request and reply state from run to run (the
// server's run job, reply body and frame, the client's request body, frame
// and pending list, the parser's frames): nothing of one run reaches the
// next. Device timings present in one reply and absent from the next, a
// failed run between good ones, and sync runs between async ones.
TEST(Server, ReusedRunStateNeverLeaksIntoTheNextRun) {
  auto control = std::make_shared<FakeControl>();
  FakeOptions o;
  o.control = control;
  auto server = start_server(o);
  auto d = open(server->address());
  ASSERT_TRUE(d);
  ASSERT_TRUE(d->load(fake_model("in=16,out=8,out=3")));
  std::vector<std::byte> in = pattern(16, 3), out0(8), out1(3);
  std::vector<std::byte> other_in = pattern(16, 4), other0(8), other1(3);
  auto id = d->bind(Bindings{{in}, {out0, out1}});
  auto other = d->bind(Bindings{{other_in}, {other0, other1}});
  ASSERT_TRUE(id && other);
  const Nanos hour = std::chrono::hours(1);
  const auto set = [&](std::optional<InferenceTimings> t, std::optional<Error> e) {
    std::lock_guard lock(control->mu);
    control->timings = std::move(t);
    control->run_error = std::move(e);
  };
  InferenceTimings all;
  all.transfer_in = hour;
  all.queue_wait = hour;
  all.compute = Nanos(2'000'000);
  all.transfer_out = hour;
  for (int round = 0; round < 3; ++round) {
    set(all, std::nullopt);
    auto first = d->run(*id);
    ASSERT_TRUE(first) << first.error().to_string();
    EXPECT_EQ(first->compute, Nanos(2'000'000));
    EXPECT_GE(*first->transfer_in, hour);
    EXPECT_GE(*first->queue_wait, hour);
    EXPECT_GE(*first->transfer_out, hour);
    // The device reports nothing but compute now: the hour is gone.
    InferenceTimings bare;
    bare.compute = Nanos(1'000'000);
    set(bare, std::nullopt);
    auto second = d->run(*id);
    ASSERT_TRUE(second) << second.error().to_string();
    EXPECT_EQ(second->compute, Nanos(1'000'000));
    EXPECT_LT(*second->transfer_in, hour);
    EXPECT_LT(*second->queue_wait, hour);
    EXPECT_LT(*second->transfer_out, hour);
    // A failed run, sync and async, then clean ones with the right outputs.
    set(std::nullopt, Error{ErrorCode::device, "bad frame " + std::to_string(round)});
    auto failed = d->run(*id);
    ASSERT_FALSE(failed);
    EXPECT_NE(failed.error().message.find("bad frame " + std::to_string(round)), std::string::npos);
    ASSERT_TRUE(d->submit(*id, 5));
    auto c = d->wait_next(std::chrono::seconds(30));
    ASSERT_TRUE(c);
    ASSERT_TRUE(c->error);
    set(std::nullopt, std::nullopt);
    std::fill(out0.begin(), out0.end(), std::byte{0});
    std::fill(out1.begin(), out1.end(), std::byte{0});
    const auto next = pattern(16, static_cast<uint8_t>(10 + round));
    std::copy(next.begin(), next.end(), in.begin());  // the bound buffer, new contents
    auto clean = d->run(*id);
    ASSERT_TRUE(clean) << clean.error().to_string();
    EXPECT_EQ(clean->compute, std::chrono::milliseconds(1));
    EXPECT_EQ(out0, testing::fake_expected(in, 0, 8));
    EXPECT_EQ(out1, testing::fake_expected(in, 1, 3));
    ASSERT_TRUE(d->submit(*id, 6));
    ASSERT_TRUE(d->submit(*other, 7));
    for (int k = 0; k < 2; ++k) {
      auto done = d->wait_next(std::chrono::seconds(30));
      ASSERT_TRUE(done);
      EXPECT_FALSE(done->error) << done->error->to_string();
    }
    EXPECT_EQ(other0, testing::fake_expected(other_in, 0, 8));
    EXPECT_EQ(other1, testing::fake_expected(other_in, 1, 3));
  }
}

// Models of other sizes and buffer counts, one after another on the same
// connection (through the remote device) and alternating on one connection
// (two handles, raw frames): every reply declares and carries exactly its
// own model's outputs, though the buffers' lists and bodies are reused.
TEST(Server, AlternatingModelSizesReuseBuffersCorrectly) {
  auto server = start_server();
  auto d = open(server->address());
  ASSERT_TRUE(d);
  const struct {
    const char* text;
    size_t in;
    std::vector<size_t> outs;
  } models[] = {{"in=64,out=32,out=5", 64, {32, 5}},
                {"in=4096,out=3000", 4096, {3000}},
                {"in=8", 8, {}},
                {"in=3,out=1,out=2,out=70000", 3, {1, 2, 70000}},
                {"in=64,out=32,out=5", 64, {32, 5}}};
  for (int pass = 0; pass < 2; ++pass)
    for (const auto& m : models) {
      ASSERT_TRUE(d->load(fake_model(m.text))) << m.text;
      std::vector<std::byte> in = pattern(m.in, static_cast<uint8_t>(pass + m.outs.size()));
      std::vector<std::vector<std::byte>> outs;
      for (size_t n : m.outs) outs.emplace_back(n, std::byte{0});
      Bindings b;
      b.inputs.emplace_back(in);
      for (auto& o : outs) b.outputs.emplace_back(o);
      auto id = d->bind(b);
      ASSERT_TRUE(id);
      for (int k = 0; k < 2; ++k) {
        auto t = k == 0 ? d->run(*id) : Result<InferenceTimings>{};
        if (k == 1) {
          ASSERT_TRUE(d->submit(*id, 1));
          auto c = d->wait_next(std::chrono::seconds(30));
          ASSERT_TRUE(c);
          EXPECT_FALSE(c->error) << c->error->to_string();
        }
        ASSERT_TRUE(t) << m.text << ": " << t.error().to_string();
        for (size_t i = 0; i < outs.size(); ++i)
          EXPECT_EQ(outs[i], testing::fake_expected(in, i, m.outs[i])) << m.text << " output " << i;
      }
    }
  // Two handles on one raw connection, runs alternating between them.
  auto c = RawClient::connect(server->address());
  c.hello();
  const uint32_t big = c.load("in=100,out=40,out=7", 2);
  const uint32_t none = c.load("in=5", 3);
  uint32_t msg = 10;
  for (int i = 0; i < 6; ++i) {
    const bool with_outputs = i % 2 == 0;
    pb::Body b;
    b.mutable_run_request()->set_handle(with_outputs ? big : none);
    const auto in = pattern(with_outputs ? 100 : 5, static_cast<uint8_t>(i));
    auto f = c.request(msg, Action::run, b, {in});
    ASSERT_EQ(f.header.status, Status::ok) << f.body.error_reply().message();
    EXPECT_EQ(f.header.message_id, msg);
    ASSERT_TRUE(f.body.has_run_reply());
    ++msg;
    if (!with_outputs) {
      EXPECT_EQ(f.body.buffer_sizes_size(), 0);
      EXPECT_TRUE(f.buffers.empty());
      continue;
    }
    ASSERT_EQ(f.body.buffer_sizes_size(), 2);
    ASSERT_EQ(f.buffers.size(), 2u);
    const std::vector<std::byte> out0(f.buffers[0].begin(), f.buffers[0].end()),
        out1(f.buffers[1].begin(), f.buffers[1].end());
    EXPECT_EQ(out0, testing::fake_expected(in, 0, 40));
    EXPECT_EQ(out1, testing::fake_expected(in, 1, 7));
  }
}

// A run still queued when its connection breaks is dropped by the host
// unanswered: the session's reused run job must not keep the session alive
// (the AddressSanitizer build's leak check fails otherwise), and the server
// goes on serving.
TEST(Server, AQueuedRunOfABrokenConnectionIsDroppedCleanly) {
  auto control = std::make_shared<FakeControl>();
  control->hold = true;  // the first run stays on the device
  FakeOptions o;
  o.depth = 1;          // so the second one waits in the host's queue
  o.real_clock = true;  // a held wait_next times out: the reader goes back to its socket
  o.control = control;
  ServerSettings settings;
  settings.max_connections = 1;
  auto server = start_server(o, settings);
  ASSERT_TRUE(server);
  {
    auto c = RawClient::connect(server->address());
    ASSERT_EQ(c.hello().header.status, Status::ok);
    const uint32_t handle = c.load("in=8,out=4");
    pb::Body run;
    run.mutable_run_request()->set_handle(handle);
    const auto in = pattern(8, 1);
    std::vector<std::byte> bytes;
    append(bytes, 3, Action::run, run, {in});
    append(bytes, 4, Action::run, run, {in});
    append(bytes, 5, Action::run, run, {in});
    c.send_bytes(std::span(bytes).first(bytes.size() - 3));  // the third one cut short
    ASSERT_TRUE(wait_for(*control, [](FakeControl& k) { return k.submits == 1; }));
    c.socket().close();  // mid-frame: the server closes without answering
  }
  // Its slot is given back only once it has closed (max_connections 1): a
  // hello that succeeds means the queued run is now cancelled.
  std::optional<RawClient> next;
  for (int attempt = 0; attempt < 100000 && !next; ++attempt) {
    auto c = RawClient::connect(server->address());
    if (c.hello().header.status == Status::ok) next.emplace(std::move(c));
  }
  ASSERT_TRUE(next);
  control->set_hold(false);  // the first run completes; the second is dropped
  const uint32_t handle = next->load("in=8,out=4");
  pb::Body run;
  run.mutable_run_request()->set_handle(handle);
  const auto in = pattern(8, 2);
  auto f = next->request(3, Action::run, run, {in});
  ASSERT_EQ(f.header.status, Status::ok) << f.body.error_reply().message();
  ASSERT_EQ(f.buffers.size(), 1u);
  EXPECT_EQ(std::vector<std::byte>(f.buffers[0].begin(), f.buffers[0].end()),
            testing::fake_expected(in, 0, 4));
  std::lock_guard lock(control->mu);
  EXPECT_EQ(control->submits, 2);  // the dropped run never reached the device
}

// A server's timings are untrusted figures: a negative compute time, or a
// transfer of +-4.6e12 ms, fails the inference with a named error (a device
// failure: the run's verdict INVALID, exit 3) instead of being measured.
TEST(Server, ImplausibleDeviceTimingsFailTheInference) {
  auto control = std::make_shared<FakeControl>();
  FakeOptions o;
  o.control = control;
  auto server = start_server(o);
  auto d = open(server->address());
  ASSERT_TRUE(d);
  auto cs = cold_start(*d, fake_model("in=8,out=8"), 2, 1, nullptr);
  ASSERT_TRUE(cs) << cs.error().to_string();
  const auto timings = [](std::optional<Nanos> in, std::optional<Nanos> wait,
                          std::optional<Nanos> compute, std::optional<Nanos> out) {
    InferenceTimings t;
    t.transfer_in = in;
    t.queue_wait = wait;
    t.compute = compute;
    t.transfer_out = out;
    return t;
  };
  const Nanos huge(4'600'000'000'000'000'000);
  const std::pair<InferenceTimings, std::string> lies[] = {
      {timings({}, {}, Nanos(-5'000'000), {}), "compute -5000000 ns"},
      {timings({}, {}, {}, huge), "transfer_out"},
      // -huge plus the server's receive time (0 when the request came in one read)
      {timings(-huge, {}, {}, {}), "transfer_in -4"},
      {timings({}, Nanos::max(), {}, {}), "queue_wait"},  // the server's sum saturates
  };
  for (const auto& [lie, named] : lies) {
    {
      std::lock_guard lock(control->mu);
      control->timings = lie;
    }
    LatencySettings ls;
    ls.samples = 2;
    const LatencyResult lat = measure_latency(*d, cs->workspace, ls);
    EXPECT_EQ(lat.samples, 0u) << named;
    ASSERT_TRUE(lat.first_error) << named;
    EXPECT_EQ(lat.first_error->code, ErrorCode::device);
    EXPECT_NE(lat.first_error->message.find("implausible device timing: " + named),
              std::string::npos)
        << lat.first_error->message;
    SteadySettings ss;
    ss.depth = 2;
    const SteadyRepeat steady = measure_steady(*d, cs->workspace, ss);
    EXPECT_EQ(steady.inferences, 0u);
    ASSERT_TRUE(steady.first_error);
    EXPECT_NE(steady.first_error->message.find("implausible device timing"), std::string::npos)
        << steady.first_error->message;
  }
  // The first inference of a cold start is refused the same way.
  auto refused = cold_start(*d, fake_model("in=8,out=8"), 1, 1, nullptr);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::device) << refused.error().to_string();
  EXPECT_NE(refused.error().message.find("implausible device timing"), std::string::npos)
      << refused.error().to_string();
}

// Two clients with different models on one device: the server swaps the model
// on the device as their requests alternate, and every answer is right.
TEST(Server, ClientsWithDifferentModelsShareTheDevice) {
  auto control = std::make_shared<FakeControl>();
  FakeOptions o;
  o.control = control;
  auto server = start_server(o);
  auto a = open(server->address());
  auto b = open(server->address());
  ASSERT_TRUE(a->load(fake_model("in=8,out=8")));
  ASSERT_TRUE(b->load(fake_model("in=16,out=4")));
  auto fa = bind(*a, 8, 8, 1);
  auto fb = bind(*b, 16, 4, 2);
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(a->run(fa.id));
    ASSERT_TRUE(b->run(fb.id));
  }
  EXPECT_EQ(fa.out, testing::fake_expected(fa.in, 0, 8));
  EXPECT_EQ(fb.out, testing::fake_expected(fb.in, 0, 4));
  std::lock_guard lock(control->mu);
  EXPECT_GE(control->loads, 10);  // every alternation reloaded
}

TEST(Server, ModelLimitIsCheckedBeforeSending) {
  ServerSettings s;
  s.limits.max_model_bytes = 8;
  auto server = start_server({}, s);
  auto d = open(server->address());
  auto r = d->load(fake_model("in=4000,out=4"));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::limit_exceeded);
  EXPECT_NE(r.error().message.find("max_model_bytes is 8"), std::string::npos);
  ASSERT_TRUE(d->load(fake_model("in=4")));
}

TEST(Server, ModelTensorsOverTheLimitAreRefusedAtLoad) {
  ServerSettings s;
  s.limits.max_buffer_bytes = 100;
  auto server = start_server({}, s);
  auto d = open(server->address());
  auto r = d->load(fake_model("in=10,out=101"));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::limit_exceeded);
  EXPECT_NE(r.error().message.find("max_buffer_bytes is 100"), std::string::npos);
  EXPECT_TRUE(d->load(fake_model("in=10,out=100")));
}

TEST(Server, TokenIsCheckedInHello) {
  ServerSettings s;
  s.token = "s3cret";
  s.auth_backoff = Nanos(0);  // FailedAuthenticationsAreRateLimited tests the backoff
  auto server = start_server({}, s);
  auto refused = open_device(server->address() + "?token=wrong");
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::permission);
  auto none = open_device(server->address());
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code, ErrorCode::permission);
  auto ok = open_device(server->address() + "?token=s3cret");
  ASSERT_TRUE(ok) << ok.error().to_string();
  EXPECT_EQ((*ok)->info().spec, server->address());  // the token is never echoed
}

// Issue 26, items 9 and 11: settings out of range are refused by name.
TEST(Server, TheRootAsModelDirAndAnAbsurdDepthAreRefused) {
  ServerSettings root;
  root.model_dir = "/";
  auto r = Server::start(std::make_unique<FakeDevice>(), root);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("root of the file system"), std::string::npos)
      << r.error().message;
  ServerSettings deep;
  deep.depth = 2147483648u;
  auto d = Server::start(std::make_unique<FakeDevice>(), deep);
  ASSERT_FALSE(d);
  EXPECT_EQ(d.error().code, ErrorCode::invalid_argument);
  EXPECT_NE(d.error().message.find("depth 2147483648 is out of range"), std::string::npos)
      << d.error().message;
}

TEST(Server, NonLoopbackListenNeedsAToken) {
  ServerSettings s;
  s.listen = "0.0.0.0:0";
  auto r = Server::start(std::make_unique<FakeDevice>(), s);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::permission);
  EXPECT_NE(r.error().message.find("--token"), std::string::npos);
}

TEST(Server, LoadByNameStaysUnderTheModelDir) {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / ("rig-models-" + std::to_string(::getpid()));
  fs::create_directories(root / "models" / "sub");
  std::ofstream(root / "models" / "sub" / "a.fake") << "in=8,out=2\n";
  std::ofstream(root / "outside.fake") << "in=8,out=2\n";
  fs::create_symlink(root / "outside.fake", root / "models" / "link.fake");
  ServerSettings s;
  s.model_dir = (root / "models").string();
  auto server = start_server({}, s);
  auto d = open(server->address());
  ModelSource by_name;
  by_name.server_name = "sub/a.fake";
  auto ok = d->load(by_name);
  ASSERT_TRUE(ok) << ok.error().to_string();
  EXPECT_EQ(d->model_info().name, "a");
  EXPECT_EQ(d->model_info().inputs[0].bytes, 8u);
  auto f = bind(*d, 8, 2, 1);
  ASSERT_TRUE(d->run(f.id));
  for (auto [name, code] : std::vector<std::pair<std::string, ErrorCode>>{
           {"../outside.fake", ErrorCode::permission},
           {"sub/../../outside.fake", ErrorCode::permission},
           {"link.fake", ErrorCode::permission},
           {(root / "outside.fake").string(), ErrorCode::invalid_argument},
           {"missing.fake", ErrorCode::not_found},
           {"", ErrorCode::invalid_argument},
           {std::string(5000, 'a'), ErrorCode::invalid_argument},
           {"sub/" + std::string(300, 'b') + ".fake", ErrorCode::invalid_argument}}) {
    ModelSource m;
    m.server_name = name;
    auto r = d->load(m);
    ASSERT_FALSE(r) << name;
    EXPECT_EQ(r.error().code, code) << name << ": " << r.error().to_string();
    // A name too long for the filesystem is said to be, not to escape.
    if (name.size() > 255) {
      EXPECT_EQ(r.error().message.find("escapes"), std::string::npos) << r.error().message;
    }
  }
  ModelSource too_long;
  too_long.server_name = std::string(5000, 'a');
  EXPECT_NE(d->load(too_long).error().message.find("model name of 5000 bytes is too long"),
            std::string::npos);
  too_long.server_name = "sub/" + std::string(300, 'b');
  EXPECT_NE(d->load(too_long).error().message.find("has a part of 300 bytes"), std::string::npos);
  fs::remove_all(root);
  // Without --model-dir, loading by name is refused.
  auto plain = start_server();
  auto p = open(plain->address());
  ModelSource m;
  m.server_name = "a.fake";
  EXPECT_EQ(p->load(m).error().code, ErrorCode::unsupported);
}

// A model loaded by name is read once and kept: swapping its file for a
// symlink to a file outside --model-dir afterwards changes nothing, even
// when another client's model forces a reload. By-name loads obey
// max_model_bytes, checked before reading.
TEST(Server, LoadByNameKeepsTheCheckedBytesAndObeysTheModelLimit) {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / ("rig-swap-" + std::to_string(::getpid()));
  fs::create_directories(root / "models");
  std::ofstream(root / "models" / "a.fake") << "in=8,out=2\n";
  std::ofstream(root / "outside.fake") << "in=16,out=2\n";
  ServerSettings s;
  s.model_dir = (root / "models").string();
  auto server = start_server({}, s);
  auto d = open(server->address());
  ModelSource by_name;
  by_name.server_name = "a.fake";
  ASSERT_TRUE(d->load(by_name));
  auto f = bind(*d, 8, 2, 1);
  ASSERT_TRUE(d->run(f.id));
  fs::remove(root / "models" / "a.fake");
  fs::create_symlink(root / "outside.fake", root / "models" / "a.fake");
  auto other = open(server->address());  // puts another model on the device
  ASSERT_TRUE(other->load(fake_model("in=4,out=4")));
  auto g = bind(*other, 4, 4, 2);
  ASSERT_TRUE(other->run(g.id));
  auto again = d->run(f.id);  // reloads a.fake: from the bytes that were checked
  EXPECT_TRUE(again) << again.error().to_string();
  ModelSource swapped;
  swapped.server_name = "a.fake";
  auto refused = other->load(swapped);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::permission) << refused.error().to_string();

  ServerSettings small = s;
  small.limits.max_model_bytes = 5;
  std::ofstream(root / "models" / "b.fake") << "in=8,out=2\n";
  auto limited = start_server({}, small);
  auto l = open(limited->address());
  ModelSource b;
  b.server_name = "b.fake";
  auto over = l->load(b);
  ASSERT_FALSE(over);
  EXPECT_EQ(over.error().code, ErrorCode::limit_exceeded);
  EXPECT_NE(over.error().message.find("max_model_bytes is 5"), std::string::npos)
      << over.error().message;
  fs::remove_all(root);
}

// ---- errors, through a raw client ------------------------------------------

class RawServer : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = start_server();
    ASSERT_TRUE(server_);
  }
  std::unique_ptr<Server> server_;
};

TEST_F(RawServer, RequestsBeforeHelloAreRefused) {
  auto c = RawClient::connect(server_->address());
  pb::Body b;
  b.mutable_describe_model_request()->set_handle(1);
  auto f = c.request(5, Action::describe_model, b);
  EXPECT_EQ(f.header.message_id, 5u);
  EXPECT_EQ(f.header.status, Status::permission);
  EXPECT_EQ(c.hello().header.status, Status::ok);
}

TEST_F(RawServer, VersionNegotiation) {
  auto c = RawClient::connect(server_->address());
  pb::Body b;
  b.mutable_hello_request()->set_min_version(2);
  b.mutable_hello_request()->set_max_version(5);
  auto f = c.request(1, Action::hello, b);
  EXPECT_EQ(f.header.status, Status::unsupported);
  EXPECT_NE(f.body.error_reply().message().find("client speaks 2 to 5, this server 1 to 1"),
            std::string::npos);
  b.mutable_hello_request()->set_min_version(1);
  auto ok = c.request(2, Action::hello, b);
  ASSERT_EQ(ok.header.status, Status::ok);
  EXPECT_EQ(ok.body.hello_reply().version(), 1u);
  EXPECT_EQ(ok.body.hello_reply().limits().max_body_bytes(), 1u << 20);
}

TEST_F(RawServer, UnknownActionIsAnsweredAndTheConnectionGoesOn) {
  auto c = RawClient::connect(server_->address());
  c.hello();
  pb::Body b;
  b.mutable_read_sensors_request();
  const auto junk = pattern(100, 1);
  auto f = c.request(9, static_cast<Action>(99), b, {junk});  // buffers are skipped
  EXPECT_EQ(f.header.message_id, 9u);
  EXPECT_EQ(f.header.status, Status::unsupported);
  EXPECT_NE(f.body.error_reply().message().find("action 99"), std::string::npos);
  auto again = c.request(10, Action::read_sensors, b);
  EXPECT_EQ(again.header.status, Status::ok);
}

TEST_F(RawServer, WrongBodyForTheAction) {
  auto c = RawClient::connect(server_->address());
  c.hello();
  pb::Body b;
  b.mutable_release_model_request()->set_handle(1);
  auto f = c.request(3, Action::describe_model, b);
  EXPECT_EQ(f.header.status, Status::protocol);
  auto g = c.request(4, Action::run, b);
  EXPECT_EQ(g.header.status, Status::protocol);
}

TEST_F(RawServer, UnknownHandlesAndRelease) {
  auto c = RawClient::connect(server_->address());
  c.hello();
  const uint32_t handle = c.load("in=8,out=4");
  pb::Body d;
  d.mutable_describe_model_request()->set_handle(handle);
  auto desc = c.request(3, Action::describe_model, d);
  ASSERT_EQ(desc.header.status, Status::ok);
  EXPECT_EQ(desc.body.describe_model_reply().info().inputs(0).bytes(), 8u);
  const auto in = pattern(8, 2);
  pb::Body run;
  run.mutable_run_request()->set_handle(handle + 7);
  auto unknown = c.request(4, Action::run, run, {in});
  EXPECT_EQ(unknown.header.status, Status::not_found);
  EXPECT_NE(unknown.body.error_reply().message().find("unknown model handle"), std::string::npos);
  pb::Body rel;
  rel.mutable_release_model_request()->set_handle(handle);
  EXPECT_EQ(c.request(5, Action::release_model, rel).header.status, Status::ok);
  EXPECT_EQ(c.request(6, Action::release_model, rel).header.status, Status::not_found);
  EXPECT_EQ(c.request(7, Action::describe_model, d).header.status, Status::not_found);
  run.mutable_run_request()->set_handle(handle);
  EXPECT_EQ(c.request(8, Action::run, run, {in}).header.status, Status::not_found);
}

TEST_F(RawServer, BufferSizesMustMatchTheModelExactly) {
  auto c = RawClient::connect(server_->address());
  c.hello();
  const uint32_t handle = c.load("in=8,out=4");
  pb::Body run;
  run.mutable_run_request()->set_handle(handle);
  for (size_t size : {size_t{7}, size_t{9}, size_t{0}}) {
    const auto in = pattern(size, 1);
    auto f = c.request(10, Action::run, run, {in});
    EXPECT_EQ(f.header.status, Status::invalid_argument);
    const std::string expected = "expected 8 bytes, got " + std::to_string(size);
    EXPECT_NE(f.body.error_reply().message().find(expected), std::string::npos)
        << f.body.error_reply().message();
  }
  const auto in = pattern(8, 1);
  auto two = c.request(11, Action::run, run, {in, in});
  EXPECT_EQ(two.header.status, Status::invalid_argument);
  auto none = c.request(12, Action::run, run);
  EXPECT_EQ(none.header.status, Status::invalid_argument);
  // Still in step: a correct run works.
  auto ok = c.request(13, Action::run, run, {in});
  ASSERT_EQ(ok.header.status, Status::ok);
  ASSERT_EQ(ok.buffers.size(), 1u);
  EXPECT_TRUE(std::ranges::equal(ok.buffers[0], testing::fake_expected(in, 0, 4)));
}

TEST_F(RawServer, BadMagicIsAnsweredThenClosed) {
  auto c = RawClient::connect(server_->address());
  c.hello();
  std::vector<std::byte> junk = pattern(64, 3);
  c.send_bytes(junk);
  auto f = c.read();
  ASSERT_TRUE(f);
  EXPECT_EQ(f->header.message_id, 0u);
  EXPECT_EQ(f->header.status, Status::protocol);
  EXPECT_NE(f->body.error_reply().message().find("bad magic"), std::string::npos);
  EXPECT_TRUE(c.at_eof());
}

TEST_F(RawServer, BodyOverTheLimitIsAnsweredThenClosed) {
  auto c = RawClient::connect(server_->address());
  c.hello();
  wire::Header h;
  h.message_id = 42;
  h.action = Action::run;
  h.body_size = 64u << 20;
  c.send_bytes(wire::encode_header(h));
  auto f = c.read();
  ASSERT_TRUE(f);
  EXPECT_EQ(f->header.message_id, 42u);
  EXPECT_EQ(f->header.status, Status::limit_exceeded);
  EXPECT_NE(f->body.error_reply().message().find("max_body_bytes"), std::string::npos);
  EXPECT_TRUE(c.at_eof());
}

TEST_F(RawServer, BufferOverTheLimitIsAnsweredThenClosed) {
  auto c = RawClient::connect(server_->address());
  c.hello();
  pb::Body b;
  b.mutable_run_request()->set_handle(1);
  b.add_buffer_sizes(8ull << 30);
  std::string text;
  b.SerializeToString(&text);
  wire::Header h;
  h.message_id = 43;
  h.action = Action::run;
  h.body_size = static_cast<uint32_t>(text.size());
  c.send_bytes(wire::encode_header(h));
  c.send_bytes(as_bytes(text));
  auto f = c.read();
  ASSERT_TRUE(f);
  EXPECT_EQ(f->header.message_id, 43u);
  EXPECT_EQ(f->header.status, Status::limit_exceeded);
  EXPECT_NE(f->body.error_reply().message().find("max_buffer_bytes"), std::string::npos);
  EXPECT_TRUE(c.at_eof());
}

// Requests that arrive in one read take effect in order: hello before load,
// the load before a describe of the handle it creates.
TEST_F(RawServer, HelloLoadAndDescribeInOneWrite) {
  auto c = RawClient::connect(server_->address());
  const std::string model = "in=8,out=4";
  std::vector<std::byte> bytes;
  append(bytes, 1, Action::hello, hello_body());
  pb::Body load;
  load.mutable_load_model_request()->set_name("m");
  append(bytes, 2, Action::load_model, load, {as_bytes(model)});
  pb::Body describe;
  describe.mutable_describe_model_request()->set_handle(1);
  append(bytes, 3, Action::describe_model, describe);
  c.send_bytes(bytes);
  for (uint32_t id = 1; id <= 3; ++id) {
    auto f = c.read();
    ASSERT_TRUE(f);
    EXPECT_EQ(f->header.message_id, id);
    ASSERT_EQ(f->header.status, Status::ok) << f->body.error_reply().message();
  }
}

TEST_F(RawServer, ReleaseThenRunInOneWriteStayInOrder) {
  auto c = RawClient::connect(server_->address());
  c.hello();
  const uint32_t handle = c.load("in=8,out=4");
  const auto in = pattern(8, 1);
  std::vector<std::byte> bytes;
  pb::Body release;
  release.mutable_release_model_request()->set_handle(handle);
  append(bytes, 3, Action::release_model, release);
  pb::Body run;
  run.mutable_run_request()->set_handle(handle);
  append(bytes, 4, Action::run, run, {in});
  c.send_bytes(bytes);
  auto released = c.read();
  ASSERT_TRUE(released);
  EXPECT_EQ(released->header.message_id, 3u);
  EXPECT_EQ(released->header.status, Status::ok);
  auto refused = c.read();
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->header.message_id, 4u);
  EXPECT_EQ(refused->header.status, Status::not_found) << refused->body.error_reply().message();
}

// A client that dies mid-transfer costs its own connection only.
TEST_F(RawServer, ClientKilledMidTransferDoesNotDisturbAnother) {
  auto good = open(server_->address());
  ASSERT_TRUE(good->load(fake_model("in=4096,out=64")));
  auto f = bind(*good, 4096, 64, 5);
  for (int round = 0; round < 3; ++round) {
    auto bad = RawClient::connect(server_->address());
    bad.hello();
    const uint32_t handle = bad.load("in=4096,out=64");
    pb::Body run;
    run.mutable_run_request()->set_handle(handle);
    const auto in = pattern(4096, 1);
    auto frame = wire::encode_frame(3, Action::run, Status::ok, run, {in}, wire::Limits{});
    std::vector<std::byte> bytes;
    wire::append_frame(*frame, bytes);
    // Cut in the header, the body, and the buffer.
    const size_t cut = round == 0 ? 10 : round == 1 ? wire::kHeaderSize + 1 : bytes.size() - 100;
    bad.send_bytes(std::span(bytes).first(cut));
    ASSERT_TRUE(good->submit(f.id, 1));
    bad.socket().close();
    auto c = good->wait_next(std::chrono::seconds(30));
    ASSERT_TRUE(c && !c->error);
    ASSERT_TRUE(good->run(f.id));
    EXPECT_EQ(f.out, testing::fake_expected(f.in, 0, 64));
  }
}

// The server goes away with requests in flight: every pending request fails
// with a clear error, and nothing hangs.
TEST(Server, ServerGoneMidRunFailsEveryPendingRequest) {
  auto control = std::make_shared<FakeControl>();
  control->hold = true;  // the device never completes until released
  FakeOptions o;
  o.control = control;
  auto server = start_server(o);
  auto d = open(server->address());
  ASSERT_TRUE(d->load(fake_model("in=32,out=32")));
  std::vector<Frames> frames;
  for (int i = 0; i < 6; ++i) frames.push_back(bind(*d, 32, 32, static_cast<uint8_t>(i)));
  for (size_t i = 0; i < frames.size(); ++i) ASSERT_TRUE(d->submit(frames[i].id, i));
  std::thread stopper([&] { server->stop(); });
  std::set<uint64_t> failed;
  for (size_t i = 0; i < frames.size(); ++i) {
    auto c = d->wait_next(std::chrono::seconds(60));
    ASSERT_TRUE(c) << c.error().to_string();
    ASSERT_TRUE(c->error);
    EXPECT_EQ(c->error->code, ErrorCode::disconnected);
    EXPECT_NE(c->error->message.find("closed the connection"), std::string::npos)
        << c->error->message;
    failed.insert(c->tag);
  }
  EXPECT_EQ(failed.size(), frames.size());
  auto after = d->run(frames[0].id);
  ASSERT_FALSE(after);
  EXPECT_EQ(after.error().code, ErrorCode::disconnected);
  control->set_hold(false);
  stopper.join();
}

// An upload of no bytes is said to be empty (not "file not found: ").
TEST(Server, AnEmptyUploadIsNamed) {
  auto server = start_server();
  auto c = RawClient::connect(server->address());
  ASSERT_EQ(c.hello().header.status, Status::ok);
  pb::Body b;
  b.mutable_load_model_request()->set_name("m");
  const std::vector<std::byte> none;
  auto f = c.request(2, Action::load_model, b, {std::span<const std::byte>(none)});
  EXPECT_EQ(f.header.status, Status::invalid_argument);
  EXPECT_NE(f.body.error_reply().message().find("the uploaded model is empty (0 bytes)"),
            std::string::npos)
      << f.body.error_reply().message();
}

// A reply over the client's limits (a 4 GiB body) is the server's failure:
// protocol, exit 3, not the limit_exceeded of bad input.
TEST(Server, AnOversizedReplyIsAProtocolFailure) {
  auto listener = wire::Listener::listen(*wire::parse_listen_address("127.0.0.1:0"));
  ASSERT_TRUE(listener);
  std::thread fake([&] {
    auto s = listener->accept();
    ASSERT_TRUE(s);
    RawClient peer(std::move(*s));
    auto hello = peer.read();
    ASSERT_TRUE(hello);
    pb::Body b;
    b.mutable_hello_reply()->set_version(1);
    b.mutable_hello_reply()->set_queue_depth(4);
    peer.send(hello->header.message_id, Action::hello, b);
    auto request = peer.read();
    if (!request) return;
    wire::Header h;
    h.body_size = 0xffffffffu;
    h.message_id = request->header.message_id;
    h.action = request->header.action;
    peer.send_bytes(wire::encode_header(h));
    while (peer.read()) {
    }
  });
  auto d = open(listener->bound().to_string() + "?calibrate=0");
  ASSERT_TRUE(d);
  auto load = d->load(fake_model("in=4,out=4"));
  ASSERT_FALSE(load);
  EXPECT_EQ(load.error().code, ErrorCode::protocol) << load.error().to_string();
  EXPECT_NE(load.error().message.find("max_body_bytes"), std::string::npos) << load.error().message;
  EXPECT_EQ(exit_code_for(load.error().code), 3);
  d.reset();
  fake.join();
}

// A server that accepts and then never answers: the client gives up after
// its timeout, and every pending request fails.
TEST(Server, SilentServerTimesOut) {
  auto listener = wire::Listener::listen(*wire::parse_listen_address("127.0.0.1:0"));
  ASSERT_TRUE(listener);
  std::thread fake([&] {
    auto s = listener->accept();
    ASSERT_TRUE(s);
    RawClient peer(std::move(*s));
    auto hello = peer.read();  // answer hello only
    ASSERT_TRUE(hello);
    pb::Body b;
    b.mutable_hello_reply()->set_version(1);
    b.mutable_hello_reply()->set_queue_depth(4);
    peer.send(hello->header.message_id, Action::hello, b);
    while (peer.read()) {
    }
  });
  // calibrate=0: this server would not answer the pings at open either.
  auto d = open(listener->bound().to_string() + "?timeout=50ms&calibrate=0");
  ASSERT_TRUE(d);
  auto r = d->read_sensors();  // unanswered; read_sensors cannot fail, it is empty
  EXPECT_TRUE(r.empty());
  ModelSource m = fake_model("in=4");
  auto load = d->load(m);
  ASSERT_FALSE(load);
  EXPECT_EQ(load.error().code, ErrorCode::timeout);
  d.reset();  // closes the connection; the fake sees EOF
  fake.join();
}

TEST(Server, AServerWithoutPingGivesNoLinkFloor) {
  // A server from before the ping action answers it as an unknown action.
  auto listener = wire::Listener::listen(*wire::parse_listen_address("127.0.0.1:0"));
  ASSERT_TRUE(listener);
  std::thread fake([&] {
    auto s = listener->accept();
    if (!s) return;
    RawClient peer(std::move(*s));
    while (auto f = peer.read()) {
      if (f->header.action == Action::hello) {
        pb::Body b;
        b.mutable_hello_reply()->set_version(1);
        b.mutable_hello_reply()->set_queue_depth(4);
        peer.send(f->header.message_id, Action::hello, b);
      } else {
        const wire::OutFrame e = wire::encode_error(
            f->header.message_id, f->header.action,
            {ErrorCode::unsupported, "unknown action 9 (protocol 1 has 1 to 7)"});
        std::vector<std::byte> bytes;
        wire::append_frame(e, bytes);
        peer.send_bytes(bytes);
      }
    }
  });
  auto d = open(listener->bound().to_string());
  ASSERT_TRUE(d);
  EXPECT_FALSE(d->info().link_floor);
  EXPECT_EQ(d->info().properties.at("link_floor"), "unavailable: the server does not answer ping");
  d.reset();
  fake.join();
}

// ---- server-wide limits ----------------------------------------------------

TEST(Server, ConnectionsOverTheLimitAreAnsweredAndClosed) {
  ServerSettings s;
  s.max_connections = 2;
  auto server = start_server({}, s);
  auto a = RawClient::connect(server->address());
  auto b = RawClient::connect(server->address());
  EXPECT_EQ(a.hello().header.status, Status::ok);  // both are being served
  EXPECT_EQ(b.hello().header.status, Status::ok);
  auto c = RawClient::connect(server->address());
  auto f = c.hello();  // the slot is claimed at hello
  EXPECT_EQ(f.header.message_id, 1u);
  EXPECT_EQ(f.header.status, Status::limit_exceeded);
  EXPECT_NE(f.body.error_reply().message().find("max_connections is 2"), std::string::npos)
      << f.body.error_reply().message();
  EXPECT_TRUE(c.at_eof());
  // The remote device reports the server's reason, as a device failure (a
  // full server is busy, exit 3; not bad input, exit 2).
  auto d = open_device(server->address());
  ASSERT_FALSE(d);
  EXPECT_EQ(d.error().code, ErrorCode::queue_full) << d.error().to_string();
  EXPECT_EQ(exit_code_for(d.error().code), 3);
  EXPECT_NE(d.error().message.find("max_connections is 2"), std::string::npos);
  EXPECT_EQ(server->stats().refused, 2u);
  // The connections being served go on.
  pb::Body sensors;
  sensors.mutable_read_sensors_request();
  EXPECT_EQ(a.request(5, Action::read_sensors, sensors).header.status, Status::ok);
}

TEST(Server, ModelsPerConnectionAreLimited) {
  ServerSettings s;
  s.max_models_per_connection = 2;
  auto server = start_server({}, s);
  auto c = RawClient::connect(server->address());
  c.hello();
  const uint32_t first = c.load("in=4,out=4", 2);
  c.load("in=4,out=4", 3);
  pb::Body load;
  load.mutable_load_model_request()->set_name("m");
  const std::string model = "in=4,out=4";
  auto f = c.request(4, Action::load_model, load, {as_bytes(model)});
  EXPECT_EQ(f.header.status, Status::limit_exceeded);
  EXPECT_NE(f.body.error_reply().message().find("max_models_per_connection is 2"),
            std::string::npos)
      << f.body.error_reply().message();
  pb::Body release;
  release.mutable_release_model_request()->set_handle(first);
  EXPECT_EQ(c.request(5, Action::release_model, release).header.status, Status::ok);
  c.load("in=4,out=4", 6);
}

// Identical bytes loaded by name share one load only with the same --shape:
// the server normalises a by-name model with its shapes, so other shapes
// are another model, and switching to it reloads.
TEST(Server, ByNameModelsShareALoadOnlyWithTheSameShapes) {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / ("rig-share-" + std::to_string(::getpid()));
  fs::create_directories(root);
  std::ofstream(root / "a.fake") << "in=8,out=2\n";
  ServerSettings s;
  s.model_dir = root.string();
  auto server = start_server({}, s);
  auto load = [&](std::vector<InputShape> shapes) {
    auto d = open(server->address());
    ModelSource m;
    m.server_name = "a.fake";
    m.shapes = std::move(shapes);
    EXPECT_TRUE(d->load(m));
    return d;
  };
  auto a = load({}), b = load({}), c = load({{"x", {1, 8}}});
  Frames fa = bind(*a, 8, 2, 1), fb = bind(*b, 8, 2, 2), fc = bind(*c, 8, 2, 3);
  ASSERT_TRUE(a->run(fa.id));  // c's load is on the device: a reload
  ASSERT_TRUE(b->run(fb.id));  // the same bytes and shapes as a: shared
  EXPECT_EQ(server->stats().model_reloads, 1u);
  ASSERT_TRUE(c->run(fc.id));  // other shapes: another model
  EXPECT_EQ(server->stats().model_reloads, 2u);
  fs::remove_all(root);
}

TEST(Server, PendingBytesLimitIsCheckedBeforeReceiving) {
  ServerSettings s;
  s.max_pending_bytes = 10000;
  EXPECT_EQ(start_server({}, ServerSettings{})->settings().max_pending_bytes > 0, true);
  auto server = start_server({}, s);
  EXPECT_EQ(server->settings().max_pending_bytes, 10000u);
  auto c = RawClient::connect(server->address());
  c.hello();
  // A model upload the server cannot hold is refused before its bytes are
  // read; the connection stays in step.
  std::string big = "in=4,out=4";
  big.resize(20000, ' ');
  pb::Body load;
  load.mutable_load_model_request()->set_name("big");
  auto f = c.request(2, Action::load_model, load, {as_bytes(big)});
  EXPECT_EQ(f.header.status, Status::limit_exceeded);
  EXPECT_NE(f.body.error_reply().message().find("max_pending_bytes is 10000"), std::string::npos)
      << f.body.error_reply().message();
  c.load("in=4,out=4", 3);
}

// Through the remote device, a run the server has no room for (its
// max_pending_bytes) finds the server full: a device-side failure, exit 3,
// not bad input; the run in flight completes.
TEST(Server, ARunRefusedForWantOfRoomIsADeviceFailureForTheClient) {
  auto control = std::make_shared<FakeControl>();
  control->hold = true;
  FakeOptions o;
  o.control = control;
  o.real_clock = true;
  ServerSettings s;
  s.max_pending_bytes = 10000;
  auto server = start_server(o, s);
  auto d = open(server->address());
  ASSERT_TRUE(d);
  ASSERT_TRUE(d->load(fake_model("in=3000,out=3000")));  // 6000 bytes per slot
  Frames a = bind(*d, 3000, 3000, 1), b = bind(*d, 3000, 3000, 2);
  ASSERT_TRUE(d->submit(a.id, 1));
  ASSERT_TRUE(wait_for(*control, [](FakeControl& f) { return f.submits == 1; }));
  ASSERT_TRUE(d->submit(b.id, 2));
  auto refused = d->wait_next(std::chrono::seconds(30));
  ASSERT_TRUE(refused) << refused.error().to_string();
  EXPECT_EQ(refused->tag, 2u);
  ASSERT_TRUE(refused->error);
  EXPECT_EQ(refused->error->code, ErrorCode::queue_full) << refused->error->to_string();
  EXPECT_EQ(exit_code_for(refused->error->code), 3);
  EXPECT_NE(refused->error->message.find("max_pending_bytes is 10000"), std::string::npos);
  control->set_hold(false);
  auto done = d->wait_next(std::chrono::seconds(30));
  ASSERT_TRUE(done) << done.error().to_string();
  EXPECT_EQ(done->tag, 1u);
  EXPECT_FALSE(done->error);
}

TEST(Server, PendingBytesLimitCoversRunSlots) {
  auto control = std::make_shared<FakeControl>();
  control->hold = true;
  FakeOptions o;
  o.control = control;
  o.real_clock = true;  // a held request does not keep its reader from reading
  ServerSettings s;
  s.max_pending_bytes = 10000;
  auto server = start_server(o, s);
  auto c = RawClient::connect(server->address());
  c.hello();
  const uint32_t handle = c.load("in=3000,out=3000");  // 6000 bytes per slot
  const auto in = pattern(3000, 1);
  pb::Body run;
  run.mutable_run_request()->set_handle(handle);
  c.send(3, Action::run, run, {in});
  ASSERT_TRUE(wait_for(*control, [](FakeControl& f) { return f.submits == 1; }));
  // A second slot would take the server past 10000 bytes.
  auto refused = c.request(4, Action::run, run, {in});
  EXPECT_EQ(refused.header.message_id, 4u);
  EXPECT_EQ(refused.header.status, Status::limit_exceeded);
  EXPECT_NE(refused.body.error_reply().message().find("max_pending_bytes is 10000"),
            std::string::npos)
      << refused.body.error_reply().message();
  control->set_hold(false);
  auto done = c.read();
  ASSERT_TRUE(done);
  EXPECT_EQ(done->header.message_id, 3u);
  EXPECT_EQ(done->header.status, Status::ok);
  // (Its slot is free again once the server has finished writing the reply,
  // which may be just after the client has read it.)
}

// Out of file descriptors, accept() fails while the connection waits in the
// backlog: the accept loop backs off (10, 20, 40 ms, ...) instead of
// spinning, and serves the connection once descriptors are available again.
TEST(Server, AcceptBacksOffWhenOutOfFileDescriptors) {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::string> accept_errors;
  ServerSettings s;
  s.log = [&](const std::string& line) {
    if (line.rfind("accept: ", 0) != 0) return;
    std::lock_guard lock(mu);
    accept_errors.push_back(line);
    cv.notify_all();
  };
  auto server = start_server({}, s);
  auto where = wire::parse_endpoint(server->address());
  ASSERT_TRUE(where);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(where->port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  // The client's descriptor exists before the limit; connect() needs none.
  wire::Socket client(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  ASSERT_TRUE(client.valid());
  const int lowest_free = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(lowest_free, 0);
  ::close(lowest_free);
  rlimit normal{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &normal), 0);
  rlimit none = normal;
  none.rlim_cur = static_cast<rlim_t>(lowest_free);  // no descriptor left to allocate
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &none), 0);
  const int connected =
      ::connect(client.fd(), reinterpret_cast<const sockaddr*>(&address), sizeof address);
  bool three = false;
  if (connected == 0) {
    std::unique_lock lock(mu);
    three = cv.wait_for(lock, std::chrono::minutes(1), [&] { return accept_errors.size() >= 3; });
  }
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &normal), 0);
  ASSERT_EQ(connected, 0) << std::strerror(errno);
  ASSERT_TRUE(three);
  {
    std::lock_guard lock(mu);
    EXPECT_NE(accept_errors[0].find("retrying in 10 ms"), std::string::npos) << accept_errors[0];
    EXPECT_NE(accept_errors[1].find("retrying in 20 ms"), std::string::npos) << accept_errors[1];
    EXPECT_NE(accept_errors[2].find("retrying in 40 ms"), std::string::npos) << accept_errors[2];
  }
  RawClient c(std::move(client));
  EXPECT_EQ(c.hello().header.status, Status::ok);
}

// ---- the device host ---------------------------------------------------------

// A run posted while another one is on the device is submitted at once, not
// at the next completion.
TEST(Server, NewRunsAreSubmittedWhileOthersAreInFlight) {
  auto control = std::make_shared<FakeControl>();
  control->hold = true;
  FakeOptions o;
  o.control = control;
  o.real_clock = true;
  auto server = start_server(o);
  auto d = open(server->address());
  ASSERT_TRUE(d->load(fake_model("in=4,out=4")));
  auto a = bind(*d, 4, 4, 1), b = bind(*d, 4, 4, 2);
  ASSERT_TRUE(d->submit(a.id, 1));
  ASSERT_TRUE(wait_for(*control, [](FakeControl& f) { return f.submits == 1; }));
  ASSERT_TRUE(d->submit(b.id, 2));
  // Both on the device while neither has completed.
  ASSERT_TRUE(wait_for(*control, [](FakeControl& f) { return f.submits == 2; }));
  {
    std::lock_guard lock(control->mu);
    EXPECT_EQ(control->runs, 0);
  }
  control->set_hold(false);
  std::set<uint64_t> tags;
  for (int i = 0; i < 2; ++i) {
    auto c = d->wait_next(std::chrono::seconds(30));
    ASSERT_TRUE(c && !c->error);
    tags.insert(c->tag);
  }
  EXPECT_EQ(tags, (std::set<uint64_t>{1, 2}));
  EXPECT_EQ(a.out, testing::fake_expected(a.in, 0, 4));
}

// A loop on a real-time clock longer than loop_slice runs as slices; the
// figures are their sums (docs/protocol.md, run_for_duration).
TEST(Server, LongLoopsRunInSlicesWhoseFiguresAreSummed) {
  auto control = std::make_shared<FakeControl>();
  FakeOptions o;
  o.control = control;
  o.real_clock = true;
  o.compute = std::chrono::microseconds(300);
  ServerSettings s;
  s.loop_slice = std::chrono::milliseconds(20);
  auto server = start_server(o, s);
  auto d = open(server->address());
  ASSERT_TRUE(d->load(fake_model("in=16,out=16")));
  auto f = bind(*d, 16, 16, 3);
  // Up to loop_slice: one device loop, 66 frames, the 67th cut off.
  auto one = d->run_for_duration(f.id, std::chrono::milliseconds(20), Nanos(0));
  ASSERT_TRUE(one) << one.error().to_string();
  EXPECT_EQ(one->frames_completed, 66u);
  EXPECT_EQ(one->frames_aborted, 1u);
  {
    std::lock_guard lock(control->mu);
    EXPECT_EQ(control->loops, 1);
    control->loops = 0;
  }
  // 60 ms: a first slice of 20 ms (60 / 3) measures the frame time, 0.3 ms;
  // 100 frames take 30 ms, so the remaining 40 ms are one slice (two slices
  // of 20 ms would hold under 100 frames each). Every slice cuts a frame off
  // at its end.
  auto split = d->run_for_duration(f.id, std::chrono::milliseconds(60), Nanos(0));
  ASSERT_TRUE(split) << split.error().to_string();
  EXPECT_EQ(split->frames_completed, 66u + 133u);
  EXPECT_EQ(split->frames_aborted, 2u);
  EXPECT_EQ(split->elapsed, std::chrono::milliseconds(60));
  EXPECT_DOUBLE_EQ(split->frames_per_second, 199 / 0.060);
  EXPECT_EQ(f.out, testing::fake_expected(f.in, 0, 16));
  {
    std::lock_guard lock(control->mu);
    EXPECT_EQ(control->loops, 2);
    control->loops = 0;
  }
  // Sleeping 1 ms between frames: a slice would hold under 100 frames, so
  // the loop is not split.
  auto sleepy =
      d->run_for_duration(f.id, std::chrono::milliseconds(60), std::chrono::milliseconds(1));
  ASSERT_TRUE(sleepy) << sleepy.error().to_string();
  std::lock_guard lock(control->mu);
  EXPECT_EQ(control->loops, 1);
}

// A device whose loop must run whole (the hailo device) gets one device loop
// however long, with its own figures.
TEST(Server, LoopsOfALoopWholeDeviceAreNeverSplit) {
  auto control = std::make_shared<FakeControl>();
  FakeOptions o;
  o.control = control;
  o.real_clock = true;
  o.loop_whole = true;
  o.compute = std::chrono::microseconds(300);
  ServerSettings s;
  s.loop_slice = std::chrono::milliseconds(20);
  auto server = start_server(o, s);
  auto d = open(server->address());
  ASSERT_TRUE(d->load(fake_model("in=16,out=16")));
  auto f = bind(*d, 16, 16, 3);
  auto whole = d->run_for_duration(f.id, std::chrono::milliseconds(60), Nanos(0));
  ASSERT_TRUE(whole) << whole.error().to_string();
  EXPECT_EQ(whole->frames_completed, 200u);  // one loop of 60 ms: 200 frames of 0.3 ms
  EXPECT_EQ(whole->frames_aborted, 0u);
  std::lock_guard lock(control->mu);
  EXPECT_EQ(control->loops, 1);
}

// stop() does not wait for an hour-long loop: it is split, and the server
// looks up between slices.
TEST(Server, StopDoesNotWaitForALongLoop) {
  auto control = std::make_shared<FakeControl>();
  FakeOptions o;
  o.control = control;
  o.real_clock = true;
  o.compute = std::chrono::microseconds(10);
  ServerSettings s;
  s.loop_slice = std::chrono::milliseconds(10);
  auto server = start_server(o, s);
  auto c = RawClient::connect(server->address());
  c.hello();
  const uint32_t handle = c.load("in=4,out=4");
  pb::Body loop;
  loop.mutable_run_for_duration_request()->set_handle(handle);
  loop.mutable_run_for_duration_request()->set_duration_ns(
      std::chrono::nanoseconds(std::chrono::hours(1)).count());
  const auto in = pattern(4, 1);
  c.send(3, Action::run_for_duration, loop, {in});
  ASSERT_TRUE(wait_for(*control, [](FakeControl& f) { return f.loops >= 1; }));
  server->stop();  // returns within a slice (the test would hang otherwise)
  // The loop is answered before the connection closes (issue 26, item 7).
  auto cut = c.read();
  ASSERT_TRUE(cut) << "the stopping server closed without answering the loop";
  EXPECT_EQ(cut->header.message_id, 3u);
  EXPECT_EQ(cut->header.status, Status::disconnected);
  EXPECT_NE(cut->body.error_reply().message().find("the server stopped during the loop ("),
            std::string::npos)
      << cut->body.error_reply().message();
  EXPECT_NE(cut->body.error_reply().message().find(" frames completed)"), std::string::npos)
      << cut->body.error_reply().message();
  while (c.read()) {
  }
  EXPECT_TRUE(c.at_eof());
}

// A client whose connection breaks mid-loop (reset, as when a process dies
// with unread data) frees the device for the others at the next slice. (A
// client that only closes may have half-closed: the server still answers.)
TEST(Server, LoopStopsWhenItsClientGoesAway) {
  auto control = std::make_shared<FakeControl>();
  FakeOptions o;
  o.control = control;
  o.real_clock = true;
  o.compute = std::chrono::microseconds(10);
  ServerSettings s;
  s.loop_slice = std::chrono::milliseconds(10);
  auto server = start_server(o, s);
  {
    auto c = RawClient::connect(server->address());
    c.hello();
    const uint32_t handle = c.load("in=4,out=4");
    pb::Body loop;
    loop.mutable_run_for_duration_request()->set_handle(handle);
    loop.mutable_run_for_duration_request()->set_duration_ns(
        std::chrono::nanoseconds(std::chrono::hours(1)).count());
    const auto in = pattern(4, 1);
    c.send(3, Action::run_for_duration, loop, {in});
    ASSERT_TRUE(wait_for(*control, [](FakeControl& f) { return f.loops >= 1; }));
    const linger reset{1, 0};
    ASSERT_EQ(::setsockopt(c.socket().fd(), SOL_SOCKET, SO_LINGER, &reset, sizeof reset), 0);
  }  // closed with a reset
  auto d = open(server->address());
  ASSERT_TRUE(d->load(fake_model("in=4,out=4")));  // waits for the device
  auto f = bind(*d, 4, 4, 2);
  EXPECT_TRUE(d->run(f.id));
}

// An exception on the device path (here a device that breaks the
// no-exceptions contract) fails that request, never the process.
TEST(Server, ExceptionsOnTheDevicePathFailTheRequestOnly) {
  auto control = std::make_shared<FakeControl>();
  control->throw_on_submit = true;
  FakeOptions o;
  o.control = control;
  auto server = start_server(o);
  auto d = open(server->address());
  ASSERT_TRUE(d->load(fake_model("in=4,out=4")));
  auto f = bind(*d, 4, 4, 1);
  auto r = d->run(f.id);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::internal) << r.error().to_string();
  EXPECT_NE(r.error().message.find("bad_alloc"), std::string::npos) << r.error().message;
  {
    std::lock_guard lock(control->mu);
    control->throw_on_submit = false;
  }
  ASSERT_TRUE(d->run(f.id));
  EXPECT_EQ(f.out, testing::fake_expected(f.in, 0, 4));
}

TEST(Server, StopIsIdempotentAndClosesClients) {
  auto server = start_server();
  auto d = open(server->address());
  ASSERT_TRUE(d->load(fake_model("in=4,out=4")));
  server->stop();
  server->stop();
  auto f = bind(*d, 4, 4, 1);
  auto r = d->run(f.id);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::disconnected);
  EXPECT_FALSE(open_device(server->address()));
}

// Garbage on many connections at once: the server answers or closes, and
// still serves a well-behaved client afterwards.
TEST(Server, GarbageNeverTakesTheServerDown) {
  auto server = start_server();
  for (uint8_t seed = 0; seed < 20; ++seed) {
    auto pair = wire::socket_pair();
    ASSERT_TRUE(pair);
    server->adopt(std::move(pair->first));
    RawClient c(std::move(pair->second));
    if (seed % 2) c.hello();
    std::vector<std::byte> junk = pattern(1000 + seed * 37, seed);
    if (seed % 3 == 0) {  // a valid header in front of junk
      wire::Header h;
      h.action = static_cast<Action>(seed % 9);
      h.body_size = 50;
      const auto head = wire::encode_header(h);
      std::copy(head.begin(), head.end(), junk.begin());
    }
    c.send_bytes(junk);
    c.socket().shutdown_write();
    while (c.read()) {
    }
  }
  auto d = open(server->address());
  ASSERT_TRUE(d->load(fake_model("in=4,out=4")));
  auto f = bind(*d, 4, 4, 1);
  EXPECT_TRUE(d->run(f.id));
  EXPECT_GE(server->stats().connections, 21u);
}

// Waits (poll, bounded at a minute so that a regression fails rather than
// hangs) until the server closes `c`; true when it did.
bool closed_by_server(RawClient& c) {
  pollfd p{c.socket().fd(), POLLIN, 0};
  for (;;) {
    if (::poll(&p, 1, 60'000) <= 0) return false;
    auto f = c.read();
    if (!f) return true;  // end of stream
  }
}

// A connection that never says hello is closed at hello_timeout; one that
// said hello and then sits idle with nothing in flight, at idle_timeout.
TEST(Server, SilentConnectionsAreClosedAtTheirDeadlines) {
  ServerSettings s;
  s.hello_timeout = std::chrono::milliseconds(20);
  s.idle_timeout = std::chrono::milliseconds(20);
  auto server = start_server({}, s);
  auto silent = RawClient::connect(server->address());
  EXPECT_TRUE(closed_by_server(silent));
  auto slow = RawClient::connect(server->address());
  slow.send_bytes(std::vector<std::byte>(5, std::byte{0x52}));  // a header, begun and never ended
  EXPECT_TRUE(closed_by_server(slow));
  auto idle = RawClient::connect(server->address());
  ASSERT_EQ(idle.hello().header.status, Status::ok);
  EXPECT_TRUE(closed_by_server(idle));
  EXPECT_EQ(server->stats().timed_out, 3u);
}

// Idle connections that have not said hello do not take the slots real
// clients need; they have their own cap, and at the cap the one that has
// waited longest gives way to the newcomer (issue 26, item 2).
TEST(Server, HandshakesHaveTheirOwnCapAndLeaveTheSlotsToClients) {
  ServerSettings s;
  s.max_connections = 2;
  s.max_handshakes = 4;
  auto server = start_server({}, s);
  std::vector<RawClient> idle;
  for (int i = 0; i < 3; ++i) idle.push_back(RawClient::connect(server->address()));
  auto a = open(server->address());  // both slots are still free
  auto b = open(server->address());
  ASSERT_TRUE(a && b);
  ASSERT_TRUE(a->load(fake_model("in=4,out=4")));
  auto f = bind(*a, 4, 4, 1);
  EXPECT_TRUE(a->run(f.id));
  // The 4th handshake is free again (a and b are served): one more idle
  // connection fits; the one after takes the slot of the oldest idle one.
  auto fits = RawClient::connect(server->address());
  EXPECT_TRUE(b->load(fake_model("in=4,out=4")));  // b is served meanwhile
  auto extra = RawClient::connect(server->address());
  auto evicted = idle[0].read();
  ASSERT_TRUE(evicted);
  EXPECT_EQ(evicted->header.status, Status::limit_exceeded);
  EXPECT_NE(evicted->body.error_reply().message().find("max_handshakes is 4"), std::string::npos)
      << evicted->body.error_reply().message();
  EXPECT_TRUE(idle[0].at_eof());
  EXPECT_EQ(server->stats().evicted, 1u);
}

// 2 handshake slots held by sockets that never say hello, renewed as soon as
// they are closed: a client that connects and says hello is still served
// (before, it was refused with "max_handshakes is 2" while they were held).
TEST(Server, SocketsHeldBeforeHelloDoNotLockClientsOut) {
  ServerSettings s;
  s.max_handshakes = 2;
  auto server = start_server({}, s);
  std::vector<RawClient> held;
  for (int i = 0; i < 2; ++i) held.push_back(RawClient::connect(server->address()));
  for (int round = 0; round < 5; ++round) {
    auto client = RawClient::connect(server->address());
    auto hello = client.hello();
    ASSERT_EQ(hello.header.status, Status::ok) << hello.body.error_reply().message();
    // The attacker renews what it lost (an evicted socket has its error and
    // then the end of the stream to read).
    for (auto& h : held) {
      pollfd p{h.socket().fd(), POLLIN, 0};
      if (::poll(&p, 1, 0) == 0) continue;
      while (h.read()) {
      }
      h = RawClient::connect(server->address());
    }
  }
  EXPECT_GE(server->stats().evicted, 1u);
  EXPECT_EQ(server->stats().refused, 0u);
}

// max_connections served and one more client: the served connection idle
// longest gives way; one with a request in flight never does.
TEST(Server, AnIdleServedConnectionGivesItsSlotToANewClient) {
  ServerSettings s;
  s.max_connections = 1;
  s.evict_idle_after = Nanos(0);
  auto server = start_server({}, s);
  auto idle = RawClient::connect(server->address());
  ASSERT_EQ(idle.hello().header.status, Status::ok);
  auto newcomer = RawClient::connect(server->address());
  ASSERT_EQ(newcomer.hello().header.status, Status::ok);
  auto evicted = idle.read();
  ASSERT_TRUE(evicted);
  EXPECT_EQ(evicted->header.status, Status::limit_exceeded);
  EXPECT_NE(evicted->body.error_reply().message().find("max_connections is 1"), std::string::npos)
      << evicted->body.error_reply().message();
  EXPECT_TRUE(idle.at_eof());
  EXPECT_EQ(server->stats().evicted, 1u);
}

TEST(Server, ABusyServedConnectionKeepsItsSlot) {
  auto control = std::make_shared<FakeControl>();
  control->hold = true;
  FakeOptions o;
  o.control = control;
  ServerSettings s;
  s.max_connections = 1;
  s.evict_idle_after = Nanos(0);
  auto server = start_server(o, s);
  auto busy = RawClient::connect(server->address());
  ASSERT_EQ(busy.hello().header.status, Status::ok);
  const uint32_t handle = busy.load("in=4,out=4");
  pb::Body run;
  run.mutable_run_request()->set_handle(handle);
  const std::vector<std::byte> input(4, std::byte{1});
  busy.send(3, Action::run, run, {std::span<const std::byte>(input)});
  ASSERT_TRUE(wait_for(*control, [](FakeControl& k) { return k.submits == 1; }));
  auto newcomer = RawClient::connect(server->address());
  auto refused = newcomer.hello();
  EXPECT_EQ(refused.header.status, Status::limit_exceeded);
  EXPECT_EQ(server->stats().evicted, 0u);
  control->set_hold(false);
  auto done = busy.read();
  ASSERT_TRUE(done);
  EXPECT_EQ(done->header.status, Status::ok);
}

// A guesser at full speed, many wrong tokens on connections of their own,
// and a client with the right token at the same time: the right token is
// always compared and admitted (before, one failure locked every client of
// the address out for the backoff; over a unix socket nothing slowed the
// guesser). Wrong tokens are answered only after the backoff (an hour here),
// so each guess holds its connection meanwhile.
void guess_while_authenticating(const std::string& listen) {
  ServerSettings s;
  s.listen = listen;
  s.token = "a-token-of-16-chars";
  s.auth_backoff = std::chrono::hours(1);
  s.max_handshakes = 512;
  auto server = start_server({}, s);
  std::atomic<bool> stop{false};
  std::thread guesser([&] {
    std::vector<RawClient> guesses;
    for (int i = 0; !stop && i < 256; ++i) {
      guesses.push_back(RawClient::connect(server->address()));
      pb::Body b;
      b.mutable_hello_request()->set_min_version(wire::kMinVersion);
      b.mutable_hello_request()->set_max_version(wire::kMaxVersion);
      b.mutable_hello_request()->set_token("guess-" + std::to_string(i));
      guesses.back().send(1, Action::hello, b);
    }
    // None of them is answered before its backoff.
    for (auto& g : guesses) {
      pollfd p{g.socket().fd(), POLLIN, 0};
      EXPECT_EQ(::poll(&p, 1, 0), 0);
    }
  });
  // Wait until guesses have failed, then authenticate while it goes on.
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::minutes(1);
  while (server->stats().auth_failures < 8 && std::chrono::steady_clock::now() < give_up)
    std::this_thread::yield();
  EXPECT_GE(server->stats().auth_failures, 8u);
  for (int i = 0; i < 3; ++i) {
    auto right = RawClient::connect(server->address());
    auto ok = right.hello(s.token);
    EXPECT_EQ(ok.header.status, Status::ok) << ok.body.error_reply().message();
  }
  stop = true;
  guesser.join();
  // The delayed refusals end with the server, not at their backoff.
  server->stop();
}

TEST(Server, AGuesserNeverLocksOutTheRightTokenOverTcp) {
  guess_while_authenticating("127.0.0.1:0");
}

TEST(Server, AGuesserNeverLocksOutTheRightTokenOverAUnixSocket) {
  const auto path =
      std::filesystem::temp_directory_path() / ("rig-auth-" + std::to_string(::getpid()) + ".sock");
  guess_while_authenticating("unix:" + path.string());
}

size_t open_fds();

// A guesser that hangs up during its delay gives its descriptor back at
// once, not at the end of the delay (an hour here).
TEST(Server, AGuesserThatHangsUpDuringItsDelayIsGoneAtOnce) {
  ServerSettings s;
  s.token = "a-token-of-16-chars";
  s.auth_backoff = std::chrono::hours(1);
  auto server = start_server({}, s);
  const size_t before = open_fds();
  {
    auto guess = RawClient::connect(server->address());
    pb::Body b;
    b.mutable_hello_request()->set_min_version(wire::kMinVersion);
    b.mutable_hello_request()->set_max_version(wire::kMaxVersion);
    b.mutable_hello_request()->set_token("guess");
    guess.send(1, Action::hello, b);
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::minutes(1);
    while (server->stats().auth_failures < 1 && std::chrono::steady_clock::now() < give_up)
      std::this_thread::yield();
    ASSERT_EQ(server->stats().auth_failures, 1u);
  }  // hangs up
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::minutes(1);
  while (open_fds() > before && std::chrono::steady_clock::now() < give_up)
    std::this_thread::yield();
  EXPECT_EQ(open_fds(), before);
}

// A wrong token is answered after the backoff, and the delay doubles with
// the peer's failures.
TEST(Server, AWrongTokenIsAnsweredAfterTheBackoff) {
  AuthLimiter limiter(std::chrono::seconds(1));
  EXPECT_EQ(limiter.failed("127.0.0.1", Nanos(0)), std::chrono::seconds(1));
  EXPECT_EQ(limiter.failed("127.0.0.1", Nanos(1)), std::chrono::seconds(2));
  EXPECT_EQ(limiter.failed("unix", Nanos(1)), std::chrono::seconds(1));
  for (int i = 0; i < 10; ++i) limiter.failed("127.0.0.1", Nanos(2));
  EXPECT_EQ(limiter.failed("127.0.0.1", Nanos(3)), std::chrono::seconds(64));
  // Once its last wait has passed, a peer starts again.
  EXPECT_EQ(limiter.failed("127.0.0.1", std::chrono::hours(1)), std::chrono::seconds(1));
  ServerSettings s;
  s.token = "a-token-of-16-chars";
  s.auth_backoff = std::chrono::milliseconds(1);
  auto server = start_server({}, s);
  auto wrong = RawClient::connect(server->address());
  auto refused = wrong.hello("guess-1");
  EXPECT_EQ(refused.header.status, Status::permission);
  EXPECT_TRUE(wrong.at_eof());
}

size_t open_fds() {
  return static_cast<size_t>(std::distance(std::filesystem::directory_iterator("/proc/self/fd"),
                                           std::filesystem::directory_iterator()));
}

// A connection that ends gives its file descriptor back at once, not when
// the server next accepts one (here, no connection follows).
TEST(Server, EndedConnectionsGiveTheirDescriptorsBack) {
  auto server = start_server();
  const size_t before = open_fds();
  {
    std::vector<RawClient> clients;
    for (int i = 0; i < 20; ++i) {
      clients.push_back(RawClient::connect(server->address()));
      if (i % 2) {
        ASSERT_EQ(clients.back().hello().header.status, Status::ok);
      }
    }
  }  // the clients close
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (open_fds() > before && std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_LE(open_fds(), before);
}

// A connection whose writer thread has started (a reply larger than the
// socket takes at once) and then gone idle still ends when its client goes:
// the writer sees the connection dead, so the reader's close-down can join it
// and give the descriptor back.
TEST(Server, AConnectionWithAnIdleWriterEndsWhenItsClientGoes) {
  auto server = start_server();
  const size_t before = open_fds();
  {
    auto client = open(server->address());
    ASSERT_TRUE(client->load(fake_model("in=4,out=16777216")));
    auto f = bind(*client, 4, 16u << 20, 1);
    ASSERT_TRUE(client->run(f.id));  // 16 MiB back: more than one write of the socket
  }                                  // the client closes
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (open_fds() > before && std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const bool ended = open_fds() <= before;
  EXPECT_TRUE(ended) << "the connection did not end within 20 s of its client closing";
  if (!ended) (void)server.release();  // stopping it would wait for that connection forever
}

// A client that sends requests and never reads the replies: once its unsent
// replies reach its share of max_pending_bytes the server stops reading from
// it, so what the server holds for it stays bounded; other clients are served.
TEST(Server, AClientThatNeverReadsCannotGrowTheServer) {
  ServerSettings s;
  s.max_pending_bytes = 1 << 20;
  s.max_connections = 4;  // a share of 256 KiB
  auto server = start_server({}, s);
  auto pair = wire::socket_pair();
  ASSERT_TRUE(pair);
  server->adopt(std::move(pair->first));
  RawClient c(std::move(pair->second));
  ASSERT_EQ(c.hello().header.status, Status::ok);
  // 40000 requests answered with an error each: megabytes of replies.
  constexpr uint32_t kRequests = 40000;
  std::vector<std::byte> stream;
  pb::Body d;
  d.mutable_describe_model_request()->set_handle(99);
  for (uint32_t i = 0; i < kRequests; ++i) append(stream, 10 + i, Action::describe_model, d);
  std::thread sender([&] { c.send_bytes(stream); });
  // Either the server pauses this reader, or (without back-pressure) it reads
  // and answers everything; the test waits for whichever comes first.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(1);
  while (server->stats().reads_paused == 0 && server->stats().requests < kRequests + 1 &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const uint64_t share = s.max_pending_bytes / s.max_connections;
  EXPECT_GT(server->stats().reads_paused, 0u);
  EXPECT_LE(server->stats().peak_unsent_bytes, share + 4096);
  // The others are served meanwhile.
  auto other = open(server->address());
  ASSERT_TRUE(other->load(fake_model("in=4,out=4")));
  auto f = bind(*other, 4, 4, 1);
  EXPECT_TRUE(other->run(f.id));
  c.socket().shutdown();
  sender.join();
}

}  // namespace
}  // namespace rig::server

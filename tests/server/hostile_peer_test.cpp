// A hostile server and a client that goes away: every figure a server
// declares is bounded before the client allocates from it (the fault is the
// server's: protocol, exit 3), its durations and counts must be possible,
// and a loop whose client closed frees the device at the next slice.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <thread>

#include "proto/convert.hpp"
#include "rig/engine.hpp"
#include "server/fake_device.hpp"
#include "server/raw_client.hpp"
#include "server/server.hpp"

namespace rig::server {
namespace {

using testing::FakeControl;
using testing::FakeDevice;
using testing::FakeOptions;
using testing::RawClient;
using wire::Action;
namespace pb = wire::pb;

ModelSource fake_model(const std::string& text) {
  ModelSource m;
  m.bytes.resize(text.size());
  std::memcpy(m.bytes.data(), text.data(), text.size());
  m.name = "fake";
  return m;
}

// A server scripted by the test: it answers hello with `hello` (a real
// clock, depth 4 unless changed) and every later request with `answer`,
// until the client closes. Stops by itself when the client goes.
class ScriptedServer {
 public:
  using Answer = std::function<void(RawClient&, const wire::Frame&)>;
  ScriptedServer(pb::HelloReply hello, Answer answer)
      : listener_(*wire::Listener::listen(*wire::parse_listen_address("127.0.0.1:0"))) {
    thread_ = std::thread([this, hello = std::move(hello), answer = std::move(answer)] {
      auto s = listener_.accept();
      if (!s) return;
      RawClient peer(std::move(*s));
      while (auto f = peer.read()) {
        if (f->header.action == Action::hello) {
          pb::Body b;
          *b.mutable_hello_reply() = hello;
          peer.send(f->header.message_id, Action::hello, b);
        } else {
          answer(peer, *f);
        }
      }
    });
  }
  ~ScriptedServer() { thread_.join(); }
  // The device spec of this server, without the link calibration.
  std::string spec() const { return listener_.bound().to_string() + "?calibrate=0&timeout=20s"; }

  static pb::HelloReply hello(uint32_t depth = 4) {
    pb::HelloReply h;
    h.set_version(1);
    h.set_queue_depth(depth);
    h.set_device_queue_depth(depth);
    return h;
  }

 private:
  wire::Listener listener_;
  std::thread thread_;
};

// A load reply describing a model of `info`, with `parse_ns` of parsing.
void answer_load(RawClient& peer, const wire::Frame& f, const ModelInfo& info,
                 int64_t parse_ns = 0) {
  pb::Body b;
  auto* r = b.mutable_load_model_reply();
  r->set_handle(1);
  wire::to_pb(info, *r->mutable_info());
  r->set_parse_ns(parse_ns);
  peer.send(f.header.message_id, Action::load_model, b);
}

ModelInfo u8_model(uint64_t in, uint64_t out) {
  ModelInfo m;
  m.name = "m";
  TensorInfo i{"x", ElementType::u8, {static_cast<int64_t>(in)}, in};
  TensorInfo o{"y", ElementType::u8, {static_cast<int64_t>(out)}, out};
  m.inputs.push_back(i);
  m.outputs.push_back(o);
  return m;
}

// Item 3 and 12: a queue depth of 2^32 - 1 would have the client allocate
// 2^32 - 1 buffer sets (3.5 GB of bookkeeping for 0-byte tensors; "lower
// --depth", the user's fault, for real ones). Refused at hello, the server's
// fault.
TEST(HostilePeer, AnUnboundedQueueDepthIsRefusedAtHello) {
  for (auto [depth, own] : {std::pair<uint32_t, uint32_t>{0xffffffffu, 4}, {4, 0xffffffffu}}) {
    pb::HelloReply h = ScriptedServer::hello();
    h.set_queue_depth(depth);
    h.set_device_queue_depth(own);
    ScriptedServer server(h, [](RawClient&, const wire::Frame&) {});
    auto d = open_device(server.spec());
    ASSERT_FALSE(d) << "a hello with queue depth " << depth << "/" << own << " was accepted";
    EXPECT_EQ(d.error().code, ErrorCode::protocol) << d.error().to_string();
    EXPECT_EQ(exit_code_for(d.error().code), 3);
    EXPECT_NE(d.error().message.find("4294967295"), std::string::npos) << d.error().message;
  }
}

// The largest depth a server may declare is accepted.
TEST(HostilePeer, TheLargestQueueDepthIsAccepted) {
  ScriptedServer server(ScriptedServer::hello(4096), [](RawClient&, const wire::Frame&) {});
  auto d = open_device(server.spec());
  ASSERT_TRUE(d) << d.error().to_string();
  EXPECT_EQ((*d)->info().queue_depth, 4096u);
}

// grow_workspace counts slots, not only their bytes: 0-byte tensors do not
// let a depth of 2^32 - 1 through the budget.
TEST(HostilePeer, ZeroByteTensorsStillCostEachSlot) {
  FakeDevice device(FakeOptions{});
  ASSERT_TRUE(device.load(fake_model("in=0,out=0")));
  Workspace ws;
  auto grown = grow_workspace(device, ws, std::numeric_limits<uint32_t>::max(), 1);
  ASSERT_FALSE(grown);
  EXPECT_EQ(grown.error().code, ErrorCode::limit_exceeded) << grown.error().to_string();
  EXPECT_TRUE(ws.bindings.empty());
}

// Item 3: an output the client's max_buffer_bytes (1 GiB) would never let
// arrive is refused at load, before a buffer is allocated for it; so is an
// input over the server's own advertised limit.
TEST(HostilePeer, TensorsThatCouldNeverCrossAreRefusedAtLoad) {
  const uint64_t gib = uint64_t{1} << 30;
  for (auto [in, out] :
       {std::pair<uint64_t, uint64_t>{16, 2 * gib}, {16, 8 * gib}, {2 * gib, 16}}) {
    ScriptedServer server(ScriptedServer::hello(), [&](RawClient& peer, const wire::Frame& f) {
      if (f.header.action == Action::load_model) answer_load(peer, f, u8_model(in, out));
    });
    auto d = open_device(server.spec());
    ASSERT_TRUE(d) << d.error().to_string();
    auto load = (*d)->load(fake_model("in=16,out=16"));
    ASSERT_FALSE(load) << "a model of " << in << " in, " << out << " out was accepted";
    EXPECT_EQ(load.error().code, ErrorCode::protocol) << load.error().to_string();
    EXPECT_NE(load.error().message.find("max_buffer_bytes"), std::string::npos)
        << load.error().message;
    EXPECT_EQ(exit_code_for(load.error().code), 3);
    d->reset();
  }
}

// Item 10: a load reply whose durations are negative, or longer than the
// load took on a real clock, is the server's fault.
TEST(HostilePeer, ImpossibleLoadTimingsAreRefused) {
  for (int64_t parse : {-(int64_t{1} << 62), int64_t{1} << 62}) {
    ScriptedServer server(ScriptedServer::hello(), [&](RawClient& peer, const wire::Frame& f) {
      if (f.header.action == Action::load_model) answer_load(peer, f, u8_model(4, 4), parse);
    });
    auto d = open_device(server.spec());
    ASSERT_TRUE(d) << d.error().to_string();
    auto load = (*d)->load(fake_model("in=4,out=4"));
    ASSERT_FALSE(load) << "parse_ns " << parse << " was accepted";
    EXPECT_EQ(load.error().code, ErrorCode::protocol) << load.error().to_string();
    EXPECT_NE(load.error().message.find("parse_ns"), std::string::npos) << load.error().message;
    d->reset();
  }
}

// Item 10: a loop of 2^64 - 1 frames in 1 ns (consistent with its own rate),
// or of an elapsed time longer than the loop took, is refused.
TEST(HostilePeer, ImpossibleLoopFiguresAreRefused) {
  struct Case {
    uint64_t frames;
    int64_t elapsed_ns;
  };
  for (const Case c :
       {Case{std::numeric_limits<uint64_t>::max(), 1}, Case{10, int64_t{3600} * 1'000'000'000}}) {
    ScriptedServer server(ScriptedServer::hello(), [&](RawClient& peer, const wire::Frame& f) {
      if (f.header.action == Action::load_model) return answer_load(peer, f, u8_model(4, 4));
      if (f.header.action != Action::run_for_duration) return;
      pb::Body b;
      auto* r = b.mutable_run_for_duration_reply();
      r->set_frames_completed(c.frames);
      r->set_elapsed_ns(c.elapsed_ns);
      r->set_frames_per_second(static_cast<double>(c.frames) /
                               (static_cast<double>(c.elapsed_ns) * 1e-9));
      const std::vector<std::byte> out(4);
      peer.send(f.header.message_id, Action::run_for_duration, b, {std::span(out)});
    });
    auto d = open_device(server.spec());
    ASSERT_TRUE(d) << d.error().to_string();
    ASSERT_TRUE((*d)->load(fake_model("in=4,out=4")));
    std::vector<std::byte> in(4), out(4);
    Bindings bindings;
    bindings.inputs.emplace_back(in);
    bindings.outputs.emplace_back(out);
    auto id = (*d)->bind(bindings);
    ASSERT_TRUE(id);
    auto run = (*d)->run_for_duration(*id, std::chrono::milliseconds(1), Nanos(0));
    ASSERT_FALSE(run) << c.frames << " frames in " << c.elapsed_ns << " ns were accepted";
    EXPECT_EQ(run.error().code, ErrorCode::protocol) << run.error().to_string();
    EXPECT_NE(run.error().message.find("implausible loop figures"), std::string::npos)
        << run.error().message;
    d->reset();
  }
}

// Item 3: a read_sensors reply of 20,000 readings: the first
// kMaxSensorReadings are kept, and the warnings say how many were dropped.
TEST(HostilePeer, AFloodOfSensorReadingsIsCappedAndSaid) {
  ScriptedServer server(ScriptedServer::hello(), [](RawClient& peer, const wire::Frame& f) {
    if (f.header.action != Action::read_sensors) return;
    pb::Body b;
    auto* r = b.mutable_read_sensors_reply();
    for (int i = 0; i < 20'000; ++i) {
      auto* reading = r->add_readings();
      reading->set_name("s" + std::to_string(i));
      reading->set_value(i);
    }
    peer.send(f.header.message_id, Action::read_sensors, b);
  });
  auto d = open_device(server.spec());
  ASSERT_TRUE(d) << d.error().to_string();
  const auto readings = (*d)->read_sensors();
  EXPECT_LE(readings.size(), 256u + 5u);  // and the server's five sharing counts
  EXPECT_GE(readings.size(), 256u);
  const auto warnings = (*d)->take_warnings();
  bool said = false;
  for (const auto& w : warnings)
    said = said || (w.find("19744 readings were dropped") != std::string::npos &&
                    w.find("20000") != std::string::npos);
  EXPECT_TRUE(said) << "no warning of the dropped readings";
  d->reset();
}

// Item 6: a client that starts an hour's loop and closes (a plain close, not
// a reset) frees the device at the next slice: another client's requests
// are answered within its timeout.
TEST(HostilePeer, ALoopOfAClientThatClosedStopsAtTheNextSlice) {
  auto control = std::make_shared<FakeControl>();
  FakeOptions o;
  o.control = control;
  o.real_clock = true;
  o.compute = std::chrono::microseconds(10);
  ServerSettings s;
  s.listen = "127.0.0.1:0";
  auto server = Server::start(std::make_unique<FakeDevice>(o), s);
  ASSERT_TRUE(server) << server.error().to_string();
  {
    auto c = RawClient::connect((*server)->address());
    c.hello();
    const uint32_t handle = c.load("in=4,out=4");
    pb::Body loop;
    loop.mutable_run_for_duration_request()->set_handle(handle);
    loop.mutable_run_for_duration_request()->set_duration_ns(
        std::chrono::nanoseconds(std::chrono::hours(1)).count());
    const std::vector<std::byte> in(4);
    c.send(3, Action::run_for_duration, loop, {std::span(in)});
    std::unique_lock lock(control->mu);
    ASSERT_TRUE(
        control->cv.wait_for(lock, std::chrono::minutes(1), [&] { return control->loops >= 1; }));
  }  // closed: the server reads its end of stream
  auto d = open_device((*server)->address() + "?timeout=20s&calibrate=0");
  ASSERT_TRUE(d) << d.error().to_string();
  auto load = (*d)->load(fake_model("in=4,out=4"));  // waits for the device
  ASSERT_TRUE(load) << load.error().to_string();
  std::vector<std::byte> in(4), out(4);
  Bindings bindings;
  bindings.inputs.emplace_back(in);
  bindings.outputs.emplace_back(out);
  auto id = (*d)->bind(bindings);
  ASSERT_TRUE(id);
  auto run = (*d)->run(*id);
  EXPECT_TRUE(run) << run.error().to_string();
}

// Item 13: a unix socket is 0600 whatever the umask; 0660 and the group's
// with socket_group.
TEST(HostilePeer, AUnixSocketIsTheOwnersWhateverTheUmask) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("rig-hostile-" + std::to_string(::getpid()) + ".sock"))
                               .string();
  for (bool group : {false, true}) {
    const mode_t old = ::umask(0);
    ServerSettings s;
    s.listen = "unix:" + path;
    if (group) s.socket_group = static_cast<uint32_t>(::getgid());
    auto server = Server::start(std::make_unique<FakeDevice>(FakeOptions{}), s);
    ::umask(old);
    ASSERT_TRUE(server) << server.error().to_string();
    struct stat st {};
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, group ? 0660u : 0600u) << std::oct << (st.st_mode & 0777);
    if (group) {
      EXPECT_EQ(st.st_gid, ::getgid());
    }
    auto d = open_device((*server)->address() + "?calibrate=0");
    EXPECT_TRUE(d) << d.error().to_string();  // its owner still connects
  }
}

}  // namespace
}  // namespace rig::server

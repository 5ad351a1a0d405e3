// The floor of a remote link: the protocol's ping, timed by the remote device
// at open, carried into the lone-frame latency and the ladder's fit, and
// absent where there is no link.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "proto/transport.hpp"
#include "proto/wire.hpp"
#include "rig/device.hpp"
#include "rig/model.hpp"
#include "rig/report/bench_report.hpp"
#include "rig/report/ladder_report.hpp"
#include "rig/scenario/bench.hpp"
#include "rig/scenario/ladder.hpp"
#include "server/fake_device.hpp"
#include "server/raw_client.hpp"
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

// A server hosting the scripted fake device (its script in fake.control).
std::unique_ptr<Server> serve_fake(const testing::FakeOptions& fake) {
  ServerSettings s;
  s.listen = "127.0.0.1:0";
  auto server = Server::start(std::make_unique<testing::FakeDevice>(fake), s);
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
  auto server = serve_fake(fake);
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
  // Each arrived whole (one 23-byte write over loopback) and was answered
  // without the parser or protobuf.
  EXPECT_EQ(server->stats().whole_requests, uint64_t{f.round_trips});
  std::lock_guard lock(fake.control->mu);
  EXPECT_EQ(fake.control->runs + fake.control->submits + fake.control->loads, 0);
}

// The canonical ping frame, and the same ping_request encoded another way
// (the field twice, which protobuf merges).
std::vector<std::byte> ping_bytes(uint32_t id, bool reply, bool twice = false) {
  wire::OutFrame f;
  wire::encode_ping_into(f, id, reply);
  if (twice) {
    const auto body = wire::ping_body(reply);
    f.body.append(reinterpret_cast<const char*>(body.data()), body.size());
    wire::Header h;
    h.message_id = id;
    h.action = wire::Action::ping;
    h.body_size = static_cast<uint32_t>(f.body.size());
    f.header = wire::encode_header(h);
  }
  std::vector<std::byte> out;
  wire::append_frame(f, out);
  return out;
}

TEST(LinkFloor, ThePingsTheServerTakesWholeAndThoseItLeavesToTheParser) {
  testing::FakeOptions fake;
  auto server = serve_fake(fake);
  auto client = testing::RawClient::connect(server->address());
  // Before hello a ping is refused, whole or not.
  client.send_bytes(ping_bytes(1, false));
  auto refused = client.read();
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->header.status, wire::Status::permission);
  EXPECT_EQ(server->stats().whole_requests, 0u);
  ASSERT_EQ(client.hello().header.status, wire::Status::ok);

  const auto answered = [&](uint32_t id) {
    auto f = client.read();
    ASSERT_TRUE(f);
    EXPECT_EQ(f->header.message_id, id);
    EXPECT_EQ(f->header.status, wire::Status::ok);
    EXPECT_TRUE(f->body.has_ping_reply());
    EXPECT_TRUE(f->buffers.empty());
  };
  const auto whole = [&] { return server->stats().whole_requests; };
  client.send_bytes(ping_bytes(2, false));
  answered(2);
  EXPECT_EQ(whole(), 1u);
  // In two pieces, sent 20 ms apart: answered either way. (The server
  // usually reads the first piece alone and leaves it to the parser; a
  // reader that was late sees the ping whole.)
  const auto piecewise = ping_bytes(3, false);
  client.send_bytes(std::span(piecewise).first(7));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  client.send_bytes(std::span(piecewise).subspan(7));
  answered(3);
  const uint64_t after_pieces = whole();
  EXPECT_LE(after_pieces, 2u);
  // Encoded another way: always the parser's.
  client.send_bytes(ping_bytes(4, false, true));
  answered(4);
  EXPECT_EQ(whole(), after_pieces);
  // Two canonical pings in one write: each taken whole, in order.
  auto two = ping_bytes(5, false);
  const auto next = ping_bytes(6, false);
  two.insert(two.end(), next.begin(), next.end());
  client.send_bytes(two);
  answered(5);
  answered(6);
  EXPECT_EQ(whole(), after_pieces + 2);
  EXPECT_EQ(server->stats().errors_sent, 1u);  // the ping before hello
}

// Joins a fake server's thread when the test returns, also after a failed
// ASSERT. Declared after the thread and before the device, so the device
// (which the fake waits for) goes first.
struct Joined {
  std::thread& thread;
  ~Joined() {
    if (thread.joinable()) thread.join();
  }
};

// A fake server that answers hello, then each ping with `answer(id, n)`
// (n counts the pings), until the client goes away.
template <class Answer>
std::thread fake_server(wire::Listener& listener, const Answer& answer) {
  return std::thread([&listener, answer] {
    auto s = listener.accept();
    if (!s) return;
    testing::RawClient peer(std::move(*s));
    int pings = 0;
    while (auto f = peer.read()) {
      if (f->header.action == wire::Action::hello) {
        wire::pb::Body b;
        b.mutable_hello_reply()->set_version(1);
        b.mutable_hello_reply()->set_queue_depth(4);
        peer.send(f->header.message_id, wire::Action::hello, b);
      } else if (f->header.action == wire::Action::ping) {
        answer(peer, f->header.message_id, pings++);
      }
    }
  });
}

TEST(LinkFloor, TheClientTakesPingRepliesInPiecesAndEncodedAnotherWay) {
  auto listener = wire::Listener::listen(*wire::parse_listen_address("127.0.0.1:0"));
  ASSERT_TRUE(listener);
  std::thread fake = fake_server(*listener, [](testing::RawClient& peer, uint32_t id, int n) {
    switch (n % 3) {
      case 0:  // whole and canonical: the client's whole-reply path
        peer.send_bytes(ping_bytes(id, true));
        break;
      case 1: {  // in two pieces, the first read alone
        const auto bytes = ping_bytes(id, true);
        peer.send_bytes(std::span(bytes).first(21));
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        peer.send_bytes(std::span(bytes).subspan(21));
        break;
      }
      default:  // valid but not canonical: through the parser
        peer.send_bytes(ping_bytes(id, true, true));
    }
  });
  const Joined joined{fake};
  auto remote = open_device(listener->bound().to_string());
  ASSERT_TRUE(remote) << remote.error().to_string();
  ASSERT_TRUE((*remote)->info().link_floor);
  EXPECT_GE((*remote)->info().link_floor->round_trips, 3u);
}

TEST(LinkFloor, APingAnsweredWithAnotherBodyFailsTheOpen) {
  auto listener = wire::Listener::listen(*wire::parse_listen_address("127.0.0.1:0"));
  ASSERT_TRUE(listener);
  std::thread fake = fake_server(*listener, [](testing::RawClient& peer, uint32_t id, int) {
    wire::pb::Body b;
    b.mutable_cancel_reply();
    peer.send(id, wire::Action::ping, b);
  });
  const Joined joined{fake};
  auto remote = open_device(listener->bound().to_string());
  ASSERT_FALSE(remote);
  EXPECT_EQ(remote.error().code, ErrorCode::protocol);
  EXPECT_NE(remote.error().message.find("(ping) does not carry its reply body"), std::string::npos)
      << remote.error().message;
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
  EXPECT_NE(format_ladder_text(*ladder).find("to the server (protocol ping, no device)"),
            std::string::npos);
  EXPECT_NE(ladder_to_json(*ladder).find("\"rig_round_trip_ms\""), std::string::npos);
}

}  // namespace
}  // namespace rig::server

// Peers that never read their replies. Before hello, the server must not
// hold such a connection (and its threads) past hello_timeout, neither while
// its reads are paused for reply room nor while it waits, closing, for its
// last replies to go out. After hello, a client that takes none of a reply
// for idle_timeout is gone: its connection is closed.
#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <thread>

#include "proto/transport.hpp"
#include "server/fake_device.hpp"
#include "server/raw_client.hpp"
#include "server/server.hpp"

namespace rig::server {
namespace {

// A server whose one connection is `peer`'s end of a socketpair, with a
// small send buffer on the server's end so that replies queue early.
struct Handshake {
  std::unique_ptr<Server> server;
  testing::RawClient peer{wire::Socket()};
};

Handshake serve_one(const ServerSettings& s) {
  Handshake h;
  auto server = Server::start(std::make_unique<testing::FakeDevice>(testing::FakeOptions{}), s);
  EXPECT_TRUE(server) << server.error().to_string();
  auto pair = wire::socket_pair();
  EXPECT_TRUE(pair);
  const int small = 4096;
  ::setsockopt(pair->first.fd(), SOL_SOCKET, SO_SNDBUF, &small, sizeof small);
  (*server)->adopt(std::move(pair->first));
  h.server = std::move(*server);
  h.peer = testing::RawClient(std::move(pair->second));
  return h;
}

ServerSettings handshake_settings() {
  ServerSettings s;
  s.listen = "127.0.0.1:0";
  s.max_pending_bytes = 256 << 10;
  s.max_connections = 4;  // a share of 64 KiB
  s.hello_timeout = std::chrono::milliseconds(500);
  return s;
}

// `n` describe requests, each refused before hello with an error reply.
std::vector<std::byte> refused_requests(uint32_t n) {
  std::vector<std::byte> stream;
  wire::pb::Body d;
  d.mutable_describe_model_request()->set_handle(1);
  for (uint32_t i = 0; i < n; ++i) {
    auto f = wire::encode_frame(i + 1, wire::Action::describe_model, wire::Status::ok, d, {},
                                wire::Limits{});
    EXPECT_TRUE(f);
    wire::append_frame(*f, stream);
  }
  return stream;
}

// Waits, bounded (never an assertion on time), until `done`.
template <class Done>
bool eventually(Done done) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::minutes(1);
  while (!done() && std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return done();
}

size_t open_fds() {
  size_t n = 0;
  if (DIR* d = ::opendir("/proc/self/fd")) {
    while (::readdir(d)) ++n;
    ::closedir(d);
  }
  return n;
}

TEST(HandshakePause, PausedReadsBeforeHelloEndAtTheHelloTimeout) {
  const ServerSettings s = handshake_settings();
  Handshake h = serve_one(s);
  // 40000 refusals, none of them read: far more than the share.
  const auto stream = refused_requests(40000);
  std::thread sender([&] { h.peer.send_bytes(stream); });
  EXPECT_TRUE(eventually([&] { return h.server->stats().reads_paused > 0; }));
  const bool closed = eventually([&] { return h.server->stats().timed_out > 0; });
  EXPECT_TRUE(closed) << "a paused handshake outlived hello_timeout";
  // The server closed its end: the sender's writes fail and it ends (on a
  // failure, this end is closed so that the test ends too).
  if (!closed) h.peer.socket().shutdown();
  sender.join();
}

// Refusals under the share, then a frame that breaks framing: the server
// answers and closes, waiting for its replies to go out, but not past
// hello_timeout when the peer reads none of them.
TEST(HandshakePause, ClosingBeforeHelloWaitsForItsRepliesNoLongerThanTheHelloTimeout) {
  const ServerSettings s = handshake_settings();
  Handshake h = serve_one(s);
  const size_t open = open_fds();       // the server's, and both ends of the socketpair
  auto stream = refused_requests(400);  // ~30 KiB of replies: under the 64 KiB share
  const std::byte junk[wire::kHeaderSize] = {std::byte{'X'}};
  stream.insert(stream.end(), std::begin(junk), std::end(junk));
  h.peer.send_bytes(stream);
  EXPECT_TRUE(eventually([&] { return h.server->stats().closed_on_error > 0; }));
  // The server's end of the socketpair is closed, though nothing was read.
  const bool closed = eventually([&] { return open_fds() < open; });
  EXPECT_TRUE(closed) << "a closing handshake outlived hello_timeout";
  EXPECT_EQ(h.server->stats().reads_paused, 0u);  // it never paused: the other test's path
  h.peer.socket().shutdown();
}

// Issue 26, item 5: before hello a connection holds at most what a hello
// needs. Its unread refusals stop its reads at 64 KiB (not at its share of
// max_pending_bytes, here 16 MiB), and once it closes the server's
// accounted bytes are back to 0.
TEST(PreHello, AFloodOfRequestsBeforeHelloHoldsAtMostTheHelloShareAndIsGivenBack) {
  ServerSettings s;
  s.listen = "127.0.0.1:0";
  s.max_pending_bytes = 64 << 20;
  s.max_connections = 4;
  s.hello_timeout = std::chrono::minutes(1);
  Handshake h = serve_one(s);
  const auto stream = refused_requests(40000);  // about 3 MB of refusals
  std::thread sender([&] { h.peer.send_bytes(stream); });
  EXPECT_TRUE(eventually([&] {
    const auto st = h.server->stats();
    return st.reads_paused > 0 || st.requests >= 40000;
  }));
  EXPECT_GT(h.server->stats().reads_paused, 0u);
  EXPECT_LE(h.server->stats().unsent_bytes, uint64_t{(64 << 10) + 1024});
  h.peer.socket().shutdown();
  sender.join();
  EXPECT_TRUE(eventually([&] {
    const auto st = h.server->stats();
    return st.unsent_bytes == 0 && st.held_bytes == 0;
  }));
  EXPECT_EQ(h.server->stats().unsent_bytes, 0u);
  EXPECT_EQ(h.server->stats().held_bytes, 0u);
}

// A request with buffers before hello breaks framing (a hello has none):
// answered, naming the rule, and closed, its bytes never buffered.
TEST(PreHello, BuffersBeforeHelloCloseTheConnection) {
  ServerSettings s;
  s.listen = "127.0.0.1:0";
  Handshake h = serve_one(s);
  wire::pb::Body load;
  load.mutable_load_model_request()->set_name("m");
  const std::vector<std::byte> model(1 << 20, std::byte{7});
  auto f = wire::encode_frame(1, wire::Action::load_model, wire::Status::ok, load,
                              {std::span<const std::byte>(model)}, wire::Limits{});
  ASSERT_TRUE(f);
  std::vector<std::byte> stream;
  wire::append_frame(*f, stream);
  std::thread sender([&] { h.peer.send_bytes(stream); });
  auto refused = h.peer.read();
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->header.status, wire::Status::limit_exceeded);
  EXPECT_NE(refused->body.error_reply().message().find("before hello"), std::string::npos)
      << refused->body.error_reply().message();
  EXPECT_TRUE(h.peer.at_eof());
  h.peer.socket().shutdown();
  sender.join();
  EXPECT_TRUE(eventually([&] { return h.server->stats().unsent_bytes == 0; }));
}

// After a session (a model loaded, runs), what it held goes back: only the
// model the device holds stays accounted (its kept bytes and its bound run
// slots, until another load replaces it), so a second session like the
// first leaves the same count, and nothing of the first.
TEST(PreHello, WhatASessionHeldIsGivenBackWhenItCloses) {
  ServerSettings s;
  s.listen = "127.0.0.1:0";
  auto server = Server::start(std::make_unique<testing::FakeDevice>(testing::FakeOptions{}), s);
  ASSERT_TRUE(server) << server.error().to_string();
  auto session = [&](const std::string& model) {
    auto c = testing::RawClient::connect((*server)->address());
    ASSERT_EQ(c.hello().header.status, wire::Status::ok);
    const uint32_t handle = c.load(model);
    wire::pb::Body run;
    run.mutable_run_request()->set_handle(handle);
    const std::vector<std::byte> input(4, std::byte{1});
    auto r = c.request(3, wire::Action::run, run, {std::span<const std::byte>(input)});
    EXPECT_EQ(r.header.status, wire::Status::ok);
    EXPECT_GT((*server)->stats().held_bytes, 0u);
  };
  session("in=4,out=64");
  EXPECT_TRUE(eventually([&] { return (*server)->stats().unsent_bytes == 0; }));
  const uint64_t after_one = (*server)->stats().held_bytes;
  session("in=4,out=65");  // another model: the first one's bytes go
  EXPECT_TRUE(eventually([&] {
    const auto st = (*server)->stats();
    return st.unsent_bytes == 0 && st.held_bytes <= after_one + 2;
  }));
  EXPECT_LE((*server)->stats().held_bytes, after_one + 2);  // one more output byte per slot
}

TEST(UnreadReplies, AClientThatTakesNoneOfAReplyForTheIdleTimeoutIsClosed) {
  ServerSettings s;
  s.listen = "127.0.0.1:0";
  s.idle_timeout = std::chrono::milliseconds(300);
  Handshake h = serve_one(s);
  ASSERT_EQ(h.peer.hello().header.status, wire::Status::ok);
  const uint32_t handle = h.peer.load("in=4,out=1048576");
  const size_t open = open_fds();
  // One run whose 4 MiB reply the socket cannot take; the client reads none.
  wire::pb::Body run;
  run.mutable_run_request()->set_handle(handle);
  const std::vector<std::byte> input(4, std::byte{1});
  h.peer.send(3, wire::Action::run, run, {std::span<const std::byte>(input)});
  const bool closed = eventually([&] { return h.server->stats().timed_out > 0; });
  EXPECT_TRUE(closed) << "a client that read nothing kept its connection";
  EXPECT_TRUE(eventually([&] { return open_fds() < open; }));  // the server's end is closed
  // Closed by the stalled reply, not refused and then idle: no error reply.
  EXPECT_EQ(h.server->stats().errors_sent, 0u);
  EXPECT_EQ(h.server->stats().requests, 3u);  // hello, load, run
  h.peer.socket().shutdown();
}

}  // namespace
}  // namespace rig::server

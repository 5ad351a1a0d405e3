// A peer that sends requests before hello and never reads their refusals:
// once its unsent replies reach its share the server stops reading from it,
// and that pause, like a read, ends at hello_timeout with the connection
// closed; it does not hold the connection (and its thread) for ever.
#include <gtest/gtest.h>

#include <thread>

#include "proto/transport.hpp"
#include "server/fake_device.hpp"
#include "server/raw_client.hpp"
#include "server/server.hpp"

namespace rig::server {
namespace {

TEST(HandshakePause, PausedReadsBeforeHelloEndAtTheHelloTimeout) {
  ServerSettings s;
  s.listen = "127.0.0.1:0";
  s.max_pending_bytes = 1 << 20;
  s.max_connections = 4;  // a share of 256 KiB
  s.hello_timeout = std::chrono::milliseconds(300);
  auto server = Server::start(std::make_unique<testing::FakeDevice>(testing::FakeOptions{}), s);
  ASSERT_TRUE(server) << server.error().to_string();
  auto pair = wire::socket_pair();
  ASSERT_TRUE(pair);
  (*server)->adopt(std::move(pair->first));
  testing::RawClient c(std::move(pair->second));
  // 40000 requests before hello, each refused with an error reply:
  // megabytes of replies, none of them read.
  std::vector<std::byte> stream;
  wire::pb::Body d;
  d.mutable_describe_model_request()->set_handle(1);
  for (uint32_t i = 0; i < 40000; ++i) {
    auto f = wire::encode_frame(i + 1, wire::Action::describe_model, wire::Status::ok, d, {},
                                wire::Limits{});
    ASSERT_TRUE(f);
    wire::append_frame(*f, stream);
  }
  std::thread sender([&] { c.send_bytes(stream); });
  // Bounded waits on the server's counters (never an assertion on time):
  // first the pause, then the close at hello_timeout.
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::minutes(1);
  const auto wait_until = [&](auto done) {
    while (!done() && std::chrono::steady_clock::now() < give_up)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return done();
  };
  EXPECT_TRUE(wait_until([&] { return (*server)->stats().reads_paused > 0; }));
  const bool closed = wait_until([&] { return (*server)->stats().timed_out > 0; });
  EXPECT_TRUE(closed) << "a paused handshake outlived hello_timeout";
  // The server closed its end: the sender's writes fail and it ends (on a
  // failure, this end is closed so that the test ends too).
  if (!closed) c.socket().shutdown();
  sender.join();
}

}  // namespace
}  // namespace rig::server

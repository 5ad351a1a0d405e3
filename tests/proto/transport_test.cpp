// Addresses, listeners and the gather write, over socketpairs, 127.0.0.1 and
// unix sockets only.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <string>
#include <vector>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include "proto/transport.hpp"

namespace rig::wire {
namespace {

TEST(Endpoints, ClientSpecs) {
  auto tcp = parse_endpoint("tcp://127.0.0.1:6000");
  ASSERT_TRUE(tcp);
  EXPECT_EQ(tcp->host, "127.0.0.1");
  EXPECT_EQ(tcp->port, 6000);
  EXPECT_EQ(tcp->to_string(), "tcp://127.0.0.1:6000");
  auto v6 = parse_endpoint("tcp://[::1]:7");
  ASSERT_TRUE(v6);
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->to_string(), "tcp://[::1]:7");
  auto unix_ep = parse_endpoint("unix:/tmp/rig.sock");
  ASSERT_TRUE(unix_ep);
  EXPECT_EQ(unix_ep->kind, Endpoint::Kind::unix_socket);
  EXPECT_EQ(unix_ep->to_string(), "unix:/tmp/rig.sock");
  for (const char* bad : {"tcp://127.0.0.1", "tcp://:80", "tcp://h:99999", "tcp://h:x",
                          "unix:", "tcp://::1:80", "http://x:1", "tcp://[::1"}) {
    auto e = parse_endpoint(bad);
    EXPECT_FALSE(e) << bad;
    if (!e) {
      EXPECT_EQ(e.error().code, ErrorCode::invalid_argument);
    }
  }
  EXPECT_FALSE(parse_endpoint("unix:/" + std::string(200, 'x')));
}

TEST(Endpoints, ListenAddressesDefaultToLoopbackAndTheDefaultPort) {
  auto def = parse_listen_address("");
  ASSERT_TRUE(def);
  EXPECT_EQ(def->host, "127.0.0.1");
  EXPECT_EQ(def->port, kDefaultPort);
  auto port_only = parse_listen_address(":0");
  ASSERT_TRUE(port_only);
  EXPECT_EQ(port_only->host, "127.0.0.1");
  EXPECT_EQ(port_only->port, 0);
  auto host_only = parse_listen_address("0.0.0.0");
  ASSERT_TRUE(host_only);
  EXPECT_EQ(host_only->port, kDefaultPort);
  auto full = parse_listen_address("tcp://127.0.0.2:99");
  ASSERT_TRUE(full);
  EXPECT_EQ(full->host, "127.0.0.2");
  EXPECT_EQ(full->port, 99);
}

TEST(Endpoints, LoopbackDetection) {
  EXPECT_TRUE(*is_loopback(*parse_listen_address("127.0.0.1:0")));
  EXPECT_TRUE(*is_loopback(*parse_listen_address("127.9.9.9:0")));
  EXPECT_TRUE(*is_loopback(*parse_listen_address("[::1]:0")));
  EXPECT_TRUE(*is_loopback(*parse_listen_address("[::1]:5757")));
  EXPECT_FALSE(*is_loopback(*parse_listen_address("0.0.0.0:0")));
  EXPECT_FALSE(*is_loopback(*parse_listen_address("[::]:0")));
  EXPECT_TRUE(*is_loopback(*parse_listen_address("unix:/tmp/x")));
  // IPv4 loopback written as IPv6 (issue 26, item 11).
  EXPECT_TRUE(*is_loopback(*parse_listen_address("[::ffff:127.0.0.1]:0")));
  EXPECT_FALSE(*is_loopback(*parse_listen_address("[::ffff:10.0.0.1]:0")));
}

// A token put where a URL carries credentials is refused before any lookup,
// and the message does not repeat it (issue 26, item 8).
TEST(Endpoints, UserinfoIsRefusedWithoutRepeatingIt) {
  for (const char* spec : {"tcp://SECRET@127.0.0.1:5757", "tcp://user:SECRET@127.0.0.1:5757",
                           "tcp://SECRET@no-such-host.invalid:1"}) {
    auto e = parse_endpoint(spec);
    ASSERT_FALSE(e) << spec;
    EXPECT_EQ(e.error().code, ErrorCode::invalid_argument);
    EXPECT_EQ(e.error().message.find("SECRET"), std::string::npos) << e.error().message;
    EXPECT_NE(e.error().message.find("?token="), std::string::npos) << e.error().message;
  }
  auto l = parse_listen_address("SECRET@127.0.0.1:0");
  ASSERT_FALSE(l);
  EXPECT_EQ(l.error().message.find("SECRET"), std::string::npos) << l.error().message;
}

// Tests reach servers by numeric loopback addresses (127.0.0.1, ::1) and
// unix sockets only: a name goes through the resolver, which a CI host may
// configure to return anything.
TEST(TestHygiene, TestsUseNumericLoopbackAddressesOnly) {
  namespace fs = std::filesystem;
  const std::string name = std::string("local") + "host";  // not itself a hit
  std::vector<std::string> hits;
  for (const auto& e : fs::recursive_directory_iterator(fs::path(RIG_SOURCE_DIR) / "tests")) {
    const auto ext = e.path().extension();
    if (!e.is_regular_file() || (ext != ".cpp" && ext != ".hpp" && ext != ".sh")) continue;
    std::ifstream in(e.path());
    std::string line;
    for (int n = 1; std::getline(in, line); ++n)
      if (line.find(name) != std::string::npos)
        hits.push_back(e.path().string() + ":" + std::to_string(n));
  }
  EXPECT_TRUE(hits.empty()) << "use 127.0.0.1 or ::1 instead of " << name << " at " << hits.front();
}

// A large frame written with one gather write from another thread, read back
// with the socket reader's pattern: staging reads, direct reads into buffers.
TEST(Transport, GatherWriteAndDirectReadOverASocketPair) {
  auto pair = socket_pair();
  ASSERT_TRUE(pair);
  std::vector<std::byte> big(3'000'000), small(17);
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<std::byte>(i * 7);
  for (size_t i = 0; i < small.size(); ++i) small[i] = static_cast<std::byte>(i + 100);
  pb::Body body;
  body.mutable_run_request()->set_handle(3);
  auto frame = encode_frame(11, Action::run, Status::ok, body, {big, small}, Limits{});
  ASSERT_TRUE(frame);
  std::thread writer([&] {
    for (int i = 0; i < 3; ++i) EXPECT_TRUE(write_frame(pair->first, *frame));
    pair->first.shutdown_write();
  });
  FrameParser parser;
  std::vector<std::byte> staging(64 * 1024);
  std::vector<Frame> frames;
  for (;;) {
    auto direct = parser.direct_target();
    if (!direct.empty()) {
      auto n = read_some(pair->second, direct, false);
      ASSERT_TRUE(n);
      ASSERT_FALSE(n->eof);
      ASSERT_TRUE(parser.commit_direct(n->bytes));
    } else {
      auto n = read_some(pair->second, staging, false);
      ASSERT_TRUE(n);
      if (n->eof) break;
      ASSERT_TRUE(parser.feed(std::span(staging).first(n->bytes)));
    }
    while (auto f = parser.pop()) frames.push_back(std::move(*f));
  }
  writer.join();
  EXPECT_TRUE(parser.finish());
  ASSERT_EQ(frames.size(), 3u);
  for (const auto& f : frames) {
    EXPECT_EQ(f.header.message_id, 11u);
    EXPECT_TRUE(std::ranges::equal(f.buffers[0], big));
    EXPECT_TRUE(std::ranges::equal(f.buffers[1], small));
    EXPECT_EQ(f.wire_bytes, frame->size());
  }
}

TEST(Transport, NonBlockingWriteReportsPartialProgress) {
  auto pair = socket_pair();
  ASSERT_TRUE(pair);
  std::vector<std::byte> big(16 << 20);
  pb::Body body;
  body.mutable_run_request();
  auto frame = encode_frame(1, Action::run, Status::ok, body, {big}, Limits{});
  ASSERT_TRUE(frame);
  auto n = write_frame_some(pair->first, *frame, 0, true);
  ASSERT_TRUE(n);
  EXPECT_GT(n->bytes, 0u);
  EXPECT_LT(n->bytes, frame->size());  // the socket buffer is smaller than 16 MiB
  auto again = write_frame_some(pair->first, *frame, n->bytes, true);
  ASSERT_TRUE(again);
  EXPECT_TRUE(again->would_block);
  pair->second.close();
  auto gone = write_frame_some(pair->first, *frame, n->bytes, true);
  ASSERT_FALSE(gone);
  EXPECT_EQ(gone.error().code, ErrorCode::disconnected);
}

TEST(Transport, TcpListenerOnAnEphemeralPort) {
  auto listener = Listener::listen(*parse_listen_address("127.0.0.1:0"));
  ASSERT_TRUE(listener) << listener.error().to_string();
  ASSERT_NE(listener->bound().port, 0);
  auto client = connect_to(listener->bound());
  ASSERT_TRUE(client) << client.error().to_string();
  auto server = listener->accept();
  ASSERT_TRUE(server);
  const std::byte ping[3] = {std::byte{1}, std::byte{2}, std::byte{3}};
  ASSERT_EQ(::send(client->fd(), ping, 3, 0), 3);
  std::byte got[3];
  auto n = read_some(*server, got, false);
  ASSERT_TRUE(n);
  EXPECT_EQ(n->bytes, 3u);
  listener->shutdown();
  auto none = listener->accept();
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code, ErrorCode::disconnected);
}

// The accept loop's back-off after EMFILE and the like waits here, so that
// stopping the server still ends it at once.
TEST(Transport, ListenerBackOffEndsAtShutdown) {
  auto listener = Listener::listen(*parse_listen_address("127.0.0.1:0"));
  ASSERT_TRUE(listener) << listener.error().to_string();
  EXPECT_FALSE(listener->wait_for_shutdown(std::chrono::milliseconds(0)));
  listener->shutdown();
  EXPECT_TRUE(listener->wait_for_shutdown(std::chrono::hours(1)));  // returns at once
  EXPECT_TRUE(listener->wait_for_shutdown(std::chrono::milliseconds(0)));
}

TEST(Transport, UnixListenerReplacesAStaleSocketButNotAFile) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("rig-transport-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "s.sock").string();
  auto ep = *parse_listen_address("unix:" + path);
  {
    auto first = Listener::listen(ep);
    ASSERT_TRUE(first) << first.error().to_string();
    // In use: a second server must not steal it.
    EXPECT_FALSE(Listener::listen(ep));
    auto client = connect_to(first->bound());
    EXPECT_TRUE(client);
  }
  EXPECT_FALSE(std::filesystem::exists(path));  // removed on close
  {
    // A server that died: the socket file stays, nobody listens on it.
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::snprintf(a.sun_path, sizeof a.sun_path, "%s", path.c_str());
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    ::close(fd);
    ASSERT_TRUE(std::filesystem::exists(path));
    auto replaced = Listener::listen(ep);
    ASSERT_TRUE(replaced) << replaced.error().to_string();
  }
  std::ofstream(dir / "file") << "x";
  auto refused = Listener::listen(*parse_listen_address("unix:" + (dir / "file").string()));
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("not a socket"), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(Transport, ConnectToNothingIsADisconnectedError) {
  EXPECT_FALSE(Listener::listen(*parse_listen_address("unix:/nonexistent-dir/x.sock")));
  auto c = connect_to(*parse_endpoint("unix:/nonexistent-dir/x.sock"));
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().code, ErrorCode::disconnected);
}

}  // namespace
}  // namespace rig::wire

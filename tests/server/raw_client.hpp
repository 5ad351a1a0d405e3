// A bare wire-protocol client for tests that need to send what the remote
// device never would: malformed frames, wrong sizes, unknown actions.
#pragma once

#include <gtest/gtest.h>

#include <sys/socket.h>

#include <optional>
#include <string>
#include <vector>

#include "proto/transport.hpp"
#include "proto/wire.hpp"

namespace rig::testing {

class RawClient {
 public:
  explicit RawClient(wire::Socket socket) : socket_(std::move(socket)) {}

  static RawClient connect(const std::string& address) {
    auto ep = wire::parse_endpoint(address);
    EXPECT_TRUE(ep) << address;
    auto s = wire::connect_to(*ep);
    EXPECT_TRUE(s) << s.error().to_string();
    return RawClient(std::move(*s));
  }

  void send_bytes(std::span<const std::byte> bytes) {
    size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n =
          ::send(socket_.fd(), bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
      if (n <= 0) return;  // the server may have closed on us; reads tell
      done += static_cast<size_t>(n);
    }
  }

  void send(uint32_t id, wire::Action action, wire::pb::Body body,
            std::vector<std::span<const std::byte>> buffers = {}) {
    auto f =
        wire::encode_frame(id, action, wire::Status::ok, body, std::move(buffers), wire::Limits{});
    ASSERT_TRUE(f) << f.error().to_string();
    ASSERT_TRUE(wire::write_frame(socket_, *f));
  }

  // A run_compact request of `handle` with `buffers` as its inputs.
  void send_compact(uint32_t id, uint32_t handle, std::vector<std::span<const std::byte>> buffers,
                    wire::CompactRun::Kind kind = wire::CompactRun::Kind::request) {
    wire::OutFrame f;
    f.buffers = std::move(buffers);
    wire::CompactRun run;
    run.kind = kind;
    run.handle = handle;
    ASSERT_TRUE(wire::encode_compact_into(f, id, run, wire::Limits{}));
    ASSERT_TRUE(wire::write_frame(socket_, f));
  }

  // The next frame; nullopt at a clean end of stream.
  std::optional<wire::Frame> read() {
    for (;;) {
      if (auto f = parser_.pop()) return f;
      auto n = wire::read_some(socket_, staging_, false);
      if (!n || n->eof) {
        eof_ = true;
        EXPECT_TRUE(parser_.finish());
        return std::nullopt;
      }
      auto ok = parser_.feed(std::span(staging_).first(n->bytes));
      EXPECT_TRUE(ok) << ok.error().to_string();
      if (!ok) return std::nullopt;
    }
  }

  wire::Frame request(uint32_t id, wire::Action action, wire::pb::Body body,
                      std::vector<std::span<const std::byte>> buffers = {}) {
    send(id, action, std::move(body), std::move(buffers));
    auto f = read();
    EXPECT_TRUE(f) << "no reply to message " << id;
    return f ? std::move(*f) : wire::Frame{};
  }

  wire::Frame hello(const std::string& token = "") {
    wire::pb::Body b;
    b.mutable_hello_request()->set_min_version(wire::kMinVersion);
    b.mutable_hello_request()->set_max_version(wire::kMaxVersion);
    b.mutable_hello_request()->set_token(token);
    return request(1, wire::Action::hello, b);
  }

  // Loads a fake-device model from its text; returns the handle.
  uint32_t load(const std::string& text, uint32_t id = 2) {
    wire::pb::Body b;
    b.mutable_load_model_request()->set_name("m");
    std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(text.data()), text.size());
    auto f = request(id, wire::Action::load_model, b, {bytes});
    EXPECT_EQ(f.header.status, wire::Status::ok) << f.body.error_reply().message();
    return f.body.load_model_reply().handle();
  }

  bool at_eof() {
    if (!eof_) {
      auto f = read();
      EXPECT_FALSE(f) << "expected the server to close the connection";
    }
    return eof_;
  }

  wire::Socket& socket() { return socket_; }

 private:
  wire::Socket socket_;
  wire::FrameParser parser_;
  std::vector<std::byte> staging_ = std::vector<std::byte>(64 * 1024);
  bool eof_ = false;
};

}  // namespace rig::testing

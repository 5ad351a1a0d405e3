// Pings without protobuf (wire.hpp "Pings"): the bytes are those the
// protobuf encoder sends, so nothing changes on the wire, and whole_ping()
// takes exactly the canonical ping frame, whole, and nothing else.
#include <gtest/gtest.h>

#include <vector>

#include "proto/wire.hpp"

namespace rig::wire {
namespace {

std::vector<std::byte> bytes_of(const OutFrame& f) {
  std::vector<std::byte> out;
  append_frame(f, out);
  return out;
}

std::vector<std::byte> protobuf_ping(uint32_t id, bool reply, Status status = Status::ok) {
  pb::Body body;
  if (reply) {
    body.mutable_ping_reply();
  } else {
    body.mutable_ping_request();
  }
  auto f = encode_frame(id, Action::ping, status, body, {}, Limits{});
  EXPECT_TRUE(f) << f.error().to_string();
  return bytes_of(*f);
}

std::vector<std::byte> lean_ping(uint32_t id, bool reply) {
  OutFrame f;
  encode_ping_into(f, id, reply);
  return bytes_of(f);
}

TEST(PingFrame, TheLeanEncodingIsTheProtobufOne) {
  for (bool reply : {false, true}) {
    EXPECT_EQ(lean_ping(7, reply), protobuf_ping(7, reply)) << "reply " << reply;
    EXPECT_EQ(lean_ping(0xfffffffe, reply), protobuf_ping(0xfffffffe, reply));
  }
  // And it parses as any frame: a ping_request (ping_reply) with no buffers.
  auto f = parse_frame(lean_ping(3, false));
  ASSERT_TRUE(f) << f.error().to_string();
  EXPECT_EQ(f->header.action, Action::ping);
  EXPECT_EQ(f->header.message_id, 3u);
  EXPECT_TRUE(f->body.has_ping_request());
  EXPECT_EQ(f->body.buffer_sizes_size(), 0);
}

TEST(PingFrame, AFrameReusedForAPingHoldsNothingElse) {
  OutFrame f;
  const std::byte data[4] = {};
  f.buffers.emplace_back(data);
  f.body = std::string(100, 'x');
  encode_ping_into(f, 9, true);
  EXPECT_TRUE(f.buffers.empty());
  EXPECT_EQ(bytes_of(f), protobuf_ping(9, true));
}

TEST(PingFrame, WholePingTakesTheWholeCanonicalFrameOnly) {
  const Limits limits;
  uint32_t id = 0;
  auto request = lean_ping(41, false);
  EXPECT_EQ(whole_ping(request, false, limits, id), request.size());
  EXPECT_EQ(id, 41u);
  // A request is not a reply, nor the other way round.
  EXPECT_EQ(whole_ping(request, true, limits, id), 0u);
  auto reply = lean_ping(42, true);
  EXPECT_EQ(whole_ping(reply, true, limits, id), reply.size());
  EXPECT_EQ(id, 42u);
  // Followed by more bytes: the ping's own length.
  auto two = request;
  two.insert(two.end(), reply.begin(), reply.end());
  EXPECT_EQ(whole_ping(two, false, limits, id), request.size());
  // In pieces: every prefix is left to the parser.
  for (size_t n = 0; n < request.size(); ++n)
    EXPECT_EQ(whole_ping(std::span(request).first(n), false, limits, id), 0u) << n << " bytes";
}

TEST(PingFrame, WholePingLeavesEveryOtherFrameToTheParser) {
  const Limits limits;
  uint32_t id = 0;
  // Status other than ok.
  EXPECT_EQ(whole_ping(protobuf_ping(1, false, Status::internal), false, limits, id), 0u);
  // Another action with the same body bytes.
  auto other = lean_ping(1, false);
  other[12] = static_cast<std::byte>(static_cast<uint32_t>(Action::cancel));
  EXPECT_EQ(whole_ping(other, false, limits, id), 0u);
  // A bad magic.
  auto magic = lean_ping(1, false);
  magic[0] ^= std::byte{0xff};
  EXPECT_EQ(whole_ping(magic, false, limits, id), 0u);
  // The same message encoded another way (the field twice, which protobuf
  // merges): valid, and the parser's to take.
  auto twice = lean_ping(1, false);
  const auto body = ping_body(false);
  twice.insert(twice.end(), body.begin(), body.end());
  twice[4] = static_cast<std::byte>(2 * body.size());
  auto parsed = parse_frame(twice);
  ASSERT_TRUE(parsed) << parsed.error().to_string();
  EXPECT_TRUE(parsed->body.has_ping_request());
  EXPECT_EQ(whole_ping(twice, false, limits, id), 0u);
  // A ping with a buffer declared.
  pb::Body with_buffer;
  with_buffer.mutable_ping_request();
  const std::byte one[1] = {};
  auto buffered = encode_frame(1, Action::ping, Status::ok, with_buffer, {std::span(one)}, limits);
  ASSERT_TRUE(buffered);
  EXPECT_EQ(whole_ping(bytes_of(*buffered), false, limits, id), 0u);
  // A body over the limits: the parser refuses it, naming the limit.
  Limits tiny;
  tiny.max_body_bytes = 1;
  EXPECT_EQ(whole_ping(lean_ping(1, false), false, tiny, id), 0u);
}

}  // namespace
}  // namespace rig::wire

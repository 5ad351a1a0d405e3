// The compact run encoding (action run_compact, wire::CompactRun): its exact
// byte layout, round trips through the parser in pieces of every size, and
// every malformed body refused by name.
#include <gtest/gtest.h>

#include <cstring>

#include "proto/wire.hpp"

namespace rig::wire {
namespace {

std::vector<std::byte> pattern(size_t n, uint8_t seed) {
  std::vector<std::byte> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<std::byte>((i * 7 + seed) & 0xff);
  return v;
}

std::vector<std::byte> compact_frame(uint32_t id, const CompactRun& run,
                                     std::vector<std::span<const std::byte>> buffers,
                                     const Limits& limits = {}) {
  OutFrame f;
  f.buffers = std::move(buffers);
  auto ok = encode_compact_into(f, id, run, limits);
  EXPECT_TRUE(ok) << ok.error().to_string();
  std::vector<std::byte> out;
  append_frame(f, out);
  return out;
}

CompactRun reply_with(uint32_t present) {
  CompactRun r;
  r.kind = CompactRun::Kind::reply;
  r.receive_ns = 11;
  r.queue_wait_ns = 22;
  r.compute_ns = 123456789;
  r.reply_wait_ns = 44;
  r.previous_send_ns = -5;  // the receiver judges the figures, the codec carries them
  r.device_present = present;
  r.device = {101, 102, 103, 104};
  return r;
}

// A frame from raw words: the header, then `body` as it stands.
std::vector<std::byte> raw_frame(uint32_t id, std::vector<uint32_t> body_words,
                                 size_t buffer_bytes = 0) {
  Header h;
  h.message_id = id;
  h.action = Action::run_compact;
  h.body_size = static_cast<uint32_t>(body_words.size() * 4);
  const auto head = encode_header(h);
  std::vector<std::byte> out(head.begin(), head.end());
  for (uint32_t w : body_words)
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::byte>(w >> (8 * i) & 0xff));
  out.resize(out.size() + buffer_bytes);
  return out;
}

TEST(CompactRun, RequestIsTwelveBytesAndItsSizesInTheDocumentedOrder) {
  const auto a = pattern(64, 1);
  CompactRun request;
  request.handle = 3;
  const auto bytes = compact_frame(9, request, {a});
  const uint8_t expected[] = {
      'W', 'R', 'I', 'G', 20, 0, 0, 0, 9, 0, 0, 0,
      11,  0,   0,   0,   0,  0, 0, 0,              // header: body 20, id 9, action 11, status 0
      1,   0,   0,   0,   3,  0, 0, 0, 1, 0, 0, 0,  // kind, handle, count
      64,  0,   0,   0,   0,  0, 0, 0};             // buffer_sizes[0]
  ASSERT_EQ(bytes.size(), sizeof expected + 64);
  EXPECT_EQ(0, std::memcmp(bytes.data(), expected, sizeof expected));
  EXPECT_TRUE(std::equal(a.begin(), a.end(), bytes.begin() + sizeof expected));

  auto f = parse_frame(bytes);
  ASSERT_TRUE(f) << f.error().to_string();
  EXPECT_EQ(f->header.action, Action::run_compact);
  EXPECT_EQ(f->compact.kind, CompactRun::Kind::request);
  EXPECT_EQ(f->compact.handle, 3u);
  // The sizes are in the body as for every frame; no message case is set.
  ASSERT_EQ(f->body.buffer_sizes_size(), 1);
  EXPECT_EQ(f->body.buffer_sizes(0), 64u);
  EXPECT_EQ(f->body.message_case(), pb::Body::MESSAGE_NOT_SET);
  ASSERT_EQ(f->buffers.size(), 1u);
  EXPECT_TRUE(std::ranges::equal(f->buffers[0], a));
}

TEST(CompactRun, ReplyCarriesOnlyTheDeviceTimingsPresent) {
  const auto out0 = pattern(32, 2), out1 = pattern(5, 3);
  for (uint32_t present = 0; present <= CompactRun::kAllDevice; ++present) {
    SCOPED_TRACE(present);
    const auto bytes = compact_frame(4, reply_with(present), {out0, out1});
    const size_t body = 12 + 40 + 8 * static_cast<size_t>(std::popcount(present)) + 16;
    ASSERT_EQ(bytes.size(), kHeaderSize + body + 37);
    auto f = parse_frame(bytes);
    ASSERT_TRUE(f) << f.error().to_string();
    const CompactRun& r = f->compact;
    EXPECT_EQ(r.kind, CompactRun::Kind::reply);
    EXPECT_EQ(r.receive_ns, 11);
    EXPECT_EQ(r.queue_wait_ns, 22);
    EXPECT_EQ(r.compute_ns, 123456789);
    EXPECT_EQ(r.reply_wait_ns, 44);
    EXPECT_EQ(r.previous_send_ns, -5);
    EXPECT_EQ(r.device_present, present);
    for (uint32_t i = 0; i < 4; ++i) EXPECT_EQ(r.device[i], present >> i & 1 ? 101 + i : 0) << i;
    ASSERT_EQ(f->buffers.size(), 2u);
    EXPECT_TRUE(std::ranges::equal(f->buffers[0], out0));
    EXPECT_TRUE(std::ranges::equal(f->buffers[1], out1));
  }
}

// Compact and protobuf frames mixed in one stream, fed in pieces of every
// size: each frame comes out whole, with the right encoding's fields, and a
// reused parser frame carries nothing of the previous one.
TEST(CompactRun, MixedStreamsParseInPiecesOfEverySize) {
  const auto a = pattern(40, 4), b = pattern(9, 5);
  std::vector<std::byte> stream;
  CompactRun request;
  request.handle = 7;
  for (auto& part : {compact_frame(1, request, {a}), compact_frame(2, reply_with(0x5), {b})})
    stream.insert(stream.end(), part.begin(), part.end());
  pb::Body pb_run;
  pb_run.mutable_run_request()->set_handle(8);
  auto pb_frame = encode_frame(3, Action::run, Status::ok, pb_run, {a}, Limits{});
  ASSERT_TRUE(pb_frame);
  append_frame(*pb_frame, stream);
  append_frame(encode_error(4, Action::run_compact, {ErrorCode::not_found, "no model 9"}), stream);
  for (size_t chunk = 1; chunk <= stream.size(); ++chunk) {
    SCOPED_TRACE(chunk);
    FrameParser parser;
    std::vector<Frame> frames;
    for (size_t at = 0; at < stream.size(); at += chunk) {
      ASSERT_TRUE(parser.feed(std::span(stream).subspan(at, std::min(chunk, stream.size() - at))));
      while (Frame* f = parser.peek()) {
        frames.emplace_back();
        swap(frames.back(), *f);
        parser.release();
      }
    }
    ASSERT_EQ(frames.size(), 4u);
    EXPECT_EQ(frames[0].compact.handle, 7u);
    EXPECT_TRUE(std::ranges::equal(frames[0].buffers[0], a));
    EXPECT_EQ(frames[1].compact.kind, CompactRun::Kind::reply);
    EXPECT_EQ(frames[1].compact.device_present, 0x5u);
    EXPECT_EQ(frames[1].compact.device[2], 103);
    EXPECT_EQ(frames[1].compact.device[1], 0);
    EXPECT_TRUE(std::ranges::equal(frames[1].buffers[0], b));
    EXPECT_EQ(frames[2].body.run_request().handle(), 8u);
    EXPECT_EQ(frames[2].compact.kind, CompactRun::Kind::request);  // reset: nothing carried over
    EXPECT_EQ(frames[2].compact.handle, 0u);
    // An error reply to a compact run is a protobuf ErrorReply, as for any action.
    EXPECT_EQ(frames[3].header.status, Status::not_found);
    EXPECT_EQ(frames[3].body.error_reply().message(), "no model 9");
  }
}

std::string refusal(const std::vector<std::byte>& bytes, const Limits& limits = {}) {
  auto f = parse_frame(bytes, limits);
  EXPECT_FALSE(f);
  return f ? "" : f.error().to_string();
}

TEST(CompactRun, MalformedBodiesAreRefusedByName) {
  // Too short, an unknown kind, sizes that disagree with the count, unknown
  // device bits, more buffers than max_buffers.
  EXPECT_NE(refusal(raw_frame(1, {1, 3})).find("shorter than its 12 fixed bytes"),
            std::string::npos);
  EXPECT_NE(refusal(raw_frame(1, {7, 3, 0})).find("kind 0x00000007 is neither 1"),
            std::string::npos);
  EXPECT_NE(
      refusal(raw_frame(1, {1, 3, 2, 64, 0}, 64)).find("a request with 2 buffers is 28 bytes"),
      std::string::npos);
  EXPECT_NE(refusal(raw_frame(1, {2, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}))
                .find("device_present has bits beyond"),
            std::string::npos);
  EXPECT_NE(refusal(raw_frame(1, {2, 0x1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}))
                .find("a reply with 1 device timings and 0 buffers is 60 bytes"),
            std::string::npos);
  Limits two;
  two.max_buffers = 2;
  const std::string over = refusal(raw_frame(1, {1, 3, 3, 1, 0, 1, 0, 1, 0}, 3), two);
  EXPECT_NE(over.find("declares 3 buffers; max_buffers is 2"), std::string::npos) << over;
  Limits small;
  small.max_buffer_bytes = 63;
  const std::string big = refusal(raw_frame(1, {1, 3, 1, 64, 0}, 64), small);
  EXPECT_NE(big.find("max_buffer_bytes is 63"), std::string::npos) << big;
  // Every refusal names the message and the action.
  EXPECT_NE(refusal(raw_frame(5, {9, 0, 0})).find("message 5 (run_compact)"), std::string::npos);
}

// seeds/000: a body taken from the header's offset reads the magic as the
// kind, which is neither a request nor a reply.
TEST(CompactRun, BytesFromTheHeaderOffsetNeverParseAsACompactBody) {
  const auto a = pattern(64, 1);
  CompactRun request;
  request.handle = 1;
  const auto good = compact_frame(1, request, {a});
  const auto replied = compact_frame(1, reply_with(0x3), {a});
  for (const auto* bytes : {&good, &replied}) {
    auto head = split_frame(*bytes, Limits{});
    ASSERT_TRUE(head);
    std::vector<uint64_t> sizes;
    EXPECT_TRUE(decode_compact(head->header, head->body, Limits{}, sizes));
    // A frame whose body is the first body_size bytes from offset 0 (the
    // header's): the frame parser's one place refuses it.
    const size_t n = head->body.size();
    std::vector<std::byte> wrong(bytes->begin(), bytes->begin() + kHeaderSize);
    wrong.insert(wrong.end(), bytes->begin(), bytes->begin() + static_cast<std::ptrdiff_t>(n));
    const std::string why = refusal(wrong);
    EXPECT_NE(why.find("kind 0x47495257"), std::string::npos) << why;
  }
}

TEST(CompactRun, TheSenderChecksTheLimits) {
  const auto a = pattern(64, 1);
  OutFrame f;
  f.buffers = {a, a, a};
  Limits two;
  two.max_buffers = 2;
  CompactRun request;
  auto r = encode_compact_into(f, 1, request, two);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::limit_exceeded);
  Limits small;
  small.max_frame_bytes = 100;
  r = encode_compact_into(f, 1, request, small);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("max_frame_bytes"), std::string::npos);
}

// Encoding into the same frame again reuses its body and leaves nothing of a
// longer previous body behind.
TEST(CompactRun, EncodingIntoAReusedFrameLeavesNothingBehind) {
  const auto a = pattern(8, 1);
  OutFrame f;
  f.buffers = {a, a};
  ASSERT_TRUE(encode_compact_into(f, 1, reply_with(0xf), Limits{}));
  const size_t longer = f.body.size();
  f.buffers = {a};
  CompactRun request;
  request.handle = 2;
  ASSERT_TRUE(encode_compact_into(f, 2, request, Limits{}));
  EXPECT_LT(f.body.size(), longer);
  EXPECT_EQ(f.body.size(), 20u);
  std::vector<std::byte> out;
  append_frame(f, out);
  auto back = parse_frame(out);
  ASSERT_TRUE(back) << back.error().to_string();
  EXPECT_EQ(back->compact.handle, 2u);
  EXPECT_EQ(back->header.message_id, 2u);
}

}  // namespace
}  // namespace rig::wire

// The frame parser's common case: a frame whose header and body arrive whole
// in one input, decoded where they lie (wire.hpp FrameParser). Its edges:
// buffers that follow in pieces, several frames in one input, refusals that
// must read as they do when the same bytes come one at a time, and whole
// heads after a frame that came in pieces.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "proto/wire.hpp"

namespace rig::wire {
namespace {

std::vector<std::byte> pattern(size_t n, uint8_t seed) {
  std::vector<std::byte> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<std::byte>((i * 13 + seed) & 0xff);
  return v;
}

std::vector<std::byte> compact_request(uint32_t id, uint32_t handle,
                                       std::vector<std::span<const std::byte>> buffers,
                                       const Limits& limits = {}) {
  OutFrame f;
  f.buffers = std::move(buffers);
  CompactRun run;
  run.handle = handle;
  auto ok = encode_compact_into(f, id, run, limits);
  EXPECT_TRUE(ok) << ok.error().to_string();
  std::vector<std::byte> out;
  append_frame(f, out);
  return out;
}

std::vector<std::byte> run_frame(uint32_t id, uint32_t handle,
                                 std::vector<std::span<const std::byte>> buffers) {
  pb::Body body;
  body.mutable_run_request()->set_handle(handle);
  auto f = encode_frame(id, Action::run, Status::ok, body, std::move(buffers), Limits{});
  EXPECT_TRUE(f) << f.error().to_string();
  std::vector<std::byte> out;
  append_frame(*f, out);
  return out;
}

size_t head_size(std::span<const std::byte> frame) {
  auto split = split_frame(frame, Limits{});
  EXPECT_TRUE(split) << split.error().to_string();
  return kHeaderSize + split->body.size();
}

// The head and the first `k` buffer bytes in one feed_some(), the rest one
// byte at a time; the buffers go into the placer's targets.
TEST(WholeHead, BuffersThatFollowInPiecesArriveWhole) {
  const auto a = pattern(64, 1), b = pattern(5, 2);
  for (const bool compact : {true, false}) {
    const auto frame = compact ? compact_request(7, 3, {a, b}) : run_frame(7, 3, {a, b});
    const size_t head = head_size(frame);
    for (size_t k = 0; k <= a.size() + b.size(); ++k) {
      SCOPED_TRACE(std::to_string(compact) + " " + std::to_string(k));
      std::vector<std::byte> out_a(a.size()), out_b(b.size());
      int placed = 0;
      FrameParser parser(Limits{}, [&](const Frame& f) {
        ++placed;
        EXPECT_EQ(f.header.message_id, 7u);
        EXPECT_EQ(f.body.buffer_sizes_size(), 2);
        BufferPlan plan;
        plan.targets = {out_a, out_b};
        return plan;
      });
      auto taken = parser.feed_some(std::span(frame).first(head + k));
      ASSERT_TRUE(taken) << taken.error().to_string();
      EXPECT_EQ(*taken, head + k);
      EXPECT_EQ(placed, 1);                                // placed as soon as the head was decoded
      EXPECT_EQ(parser.idle(), k == a.size() + b.size());  // idle once the frame is complete
      for (size_t at = head + k; at < frame.size(); ++at)
        ASSERT_TRUE(parser.feed_some(std::span(frame).subspan(at, 1)));
      const Frame* f = parser.peek();
      ASSERT_NE(f, nullptr);
      EXPECT_EQ(f->compact.handle, compact ? 3u : 0u);
      EXPECT_EQ(f->body.has_run_request(), !compact);
      EXPECT_EQ(f->wire_bytes, frame.size());
      ASSERT_EQ(f->buffers.size(), 2u);
      EXPECT_EQ(f->buffers[0].data(), out_a.data());
      EXPECT_TRUE(std::ranges::equal(out_a, a));
      EXPECT_TRUE(std::ranges::equal(out_b, b));
      parser.release();
      EXPECT_TRUE(parser.idle());
      EXPECT_TRUE(parser.finish());
    }
  }
}

// Several whole frames in one input: feed_some() stops after each one, the
// next is placed only after the one before it was popped, and a frame
// without buffers (complete with its head) stops it too.
TEST(WholeHead, FeedSomeStopsAfterEachWholeFrame) {
  const auto a = pattern(64, 3);
  std::vector<std::vector<std::byte>> frames = {compact_request(1, 10, {a}),
                                                compact_request(2, 11, {}), run_frame(3, 12, {}),
                                                run_frame(4, 13, {a}), compact_request(5, 14, {a})};
  std::vector<std::byte> stream;
  for (const auto& f : frames) stream.insert(stream.end(), f.begin(), f.end());
  std::vector<std::string> events;
  FrameParser parser(Limits{}, [&](const Frame& f) {
    events.push_back("place " + std::to_string(f.header.message_id));
    return BufferPlan{};
  });
  std::span<const std::byte> rest(stream);
  for (uint32_t id = 1; id <= frames.size(); ++id) {
    auto taken = parser.feed_some(rest);
    ASSERT_TRUE(taken) << taken.error().to_string();
    EXPECT_EQ(*taken, frames[id - 1].size()) << id;
    rest = rest.subspan(*taken);
    auto none = parser.feed_some(rest);
    ASSERT_TRUE(none);
    EXPECT_EQ(*none, 0u);
    auto f = parser.pop();
    ASSERT_TRUE(f);
    EXPECT_EQ(f->header.message_id, id);
    EXPECT_FALSE(parser.has_frames());
    events.push_back("pop " + std::to_string(id));
  }
  EXPECT_TRUE(rest.empty());
  EXPECT_EQ(events, (std::vector<std::string>{"place 1", "pop 1", "place 2", "pop 2", "place 3",
                                              "pop 3", "place 4", "pop 4", "place 5", "pop 5"}));
  EXPECT_TRUE(parser.finish());
}

struct Refusal {
  std::string error;
  std::optional<Header> header;
};

Refusal refusal_of(const FrameParser& parser, const Error& e) {
  return {e.to_string(), parser.failed_header()};
}

// Every way of feeding `bytes` refuses them with the same error and the same
// failed header: whole (feed and feed_some), one byte at a time, and the
// head in two pieces.
void expect_same_refusal(const std::vector<std::byte>& bytes, const Limits& limits,
                         const std::string& expected) {
  std::vector<Refusal> seen;
  {
    // As the server reads: whole frames one at a time, each popped.
    FrameParser p(limits);
    std::span<const std::byte> rest(bytes);
    Result<size_t> r = size_t{0};
    while (r && !rest.empty()) {
      r = p.feed_some(rest);
      if (r) rest = rest.subspan(*r);
      while (p.pop()) {
      }
    }
    ASSERT_FALSE(r) << "accepted";
    seen.push_back(refusal_of(p, r.error()));
    // It stays failed, with the same error.
    auto again = p.feed_some(bytes);
    ASSERT_FALSE(again);
    EXPECT_EQ(again.error().to_string(), seen.back().error);
  }
  {
    FrameParser p(limits);
    auto r = p.feed(bytes);
    ASSERT_FALSE(r);
    seen.push_back(refusal_of(p, r.error()));
  }
  for (const size_t first : {size_t{1}, kHeaderSize - 1, kHeaderSize, kHeaderSize + 1}) {
    if (first >= bytes.size()) continue;
    FrameParser p(limits);
    auto r = p.feed(std::span(bytes).first(first));
    if (r) r = p.feed(std::span(bytes).subspan(first));
    ASSERT_FALSE(r) << first;
    seen.push_back(refusal_of(p, r.error()));
  }
  {
    FrameParser p(limits);
    Result<void> r;
    for (size_t at = 0; r && at < bytes.size(); ++at) r = p.feed(std::span(bytes).subspan(at, 1));
    ASSERT_FALSE(r);
    seen.push_back(refusal_of(p, r.error()));
  }
  EXPECT_NE(seen[0].error.find(expected), std::string::npos) << seen[0].error;
  for (size_t i = 1; i < seen.size(); ++i) {
    EXPECT_EQ(seen[i].error, seen[0].error) << i;
    ASSERT_EQ(seen[i].header.has_value(), seen[0].header.has_value()) << i;
    if (seen[0].header) {
      EXPECT_EQ(seen[i].header->message_id, seen[0].header->message_id) << i;
      EXPECT_EQ(seen[i].header->magic, seen[0].header->magic) << i;
      EXPECT_EQ(seen[i].header->body_size, seen[0].header->body_size) << i;
    }
  }
}

void put_u32(std::vector<std::byte>& bytes, size_t at, uint32_t v) {
  for (size_t i = 0; i < 4; ++i) bytes[at + i] = static_cast<std::byte>(v >> (8 * i) & 0xff);
}

TEST(WholeHead, RefusalsReadAsWhenFedByteByByte) {
  const auto a = pattern(64, 4);
  const auto good = compact_request(9, 1, {a});
  const auto good_pb = run_frame(9, 1, {a});

  auto bad_magic = good;
  bad_magic[1] = std::byte{'X'};
  expect_same_refusal(bad_magic, Limits{}, "bad magic");

  // A body over max_body_bytes that is nonetheless all there.
  Limits small_body;
  small_body.max_body_bytes = 8;
  expect_same_refusal(good, small_body, "max_body_bytes is 8");

  auto bad_kind = good;
  put_u32(bad_kind, kHeaderSize, 7);
  expect_same_refusal(bad_kind, Limits{}, "kind 0x00000007 is neither 1");

  auto bad_count = good;
  put_u32(bad_count, kHeaderSize + 8, 2);
  expect_same_refusal(bad_count, Limits{}, "a request with 2 buffers is 28 bytes");

  Limits small_buffer;
  small_buffer.max_buffer_bytes = 63;
  expect_same_refusal(good, small_buffer, "max_buffer_bytes is 63");

  auto corrupt_pb = good_pb;
  corrupt_pb[kHeaderSize] = std::byte{0xff};
  expect_same_refusal(corrupt_pb, Limits{}, "is not a valid rig.wire.pb.Body");

  // A compact frame behind a good one: the second is refused the same way.
  auto second_bad = good;
  second_bad.insert(second_bad.end(), bad_kind.begin(), bad_kind.end());
  expect_same_refusal(second_bad, Limits{}, "kind 0x00000007");
}

// A whole head that follows a frame fed in pieces: from the middle of its
// header, its body or its buffers. Then a smaller head in pieces after a
// larger one (head_ keeps its size).
TEST(WholeHead, WholeHeadAfterAFrameInPieces) {
  const auto a = pattern(64, 5), big = pattern(3, 6);
  pb::Body long_body;
  long_body.mutable_error_reply()->set_message(std::string(500, 'x'));
  auto long_frame = encode_frame(1, Action::run, Status::not_found, long_body, {}, Limits{});
  ASSERT_TRUE(long_frame);
  std::vector<std::byte> first;
  append_frame(*long_frame, first);
  const auto next = compact_request(2, 20, {a});
  const auto last = compact_request(3, 30, {big});
  std::vector<std::byte> stream = first;
  stream.insert(stream.end(), next.begin(), next.end());
  stream.insert(stream.end(), last.begin(), last.end());
  for (size_t split = 1; split < first.size(); ++split) {
    SCOPED_TRACE(split);
    FrameParser parser;
    std::vector<Frame> frames;
    // The first frame up to `split`, then the rest of it with the next
    // frame whole, then the last one in pieces of 7.
    const size_t second_end = first.size() + next.size();
    ASSERT_TRUE(parser.feed(std::span(stream).first(split)));
    ASSERT_TRUE(parser.feed(std::span(stream).subspan(split, second_end - split)));
    for (size_t at = second_end; at < stream.size(); at += 7)
      ASSERT_TRUE(
          parser.feed(std::span(stream).subspan(at, std::min<size_t>(7, stream.size() - at))));
    while (auto f = parser.pop()) frames.push_back(std::move(*f));
    ASSERT_EQ(frames.size(), 3u);
    EXPECT_EQ(frames[0].body.error_reply().message(), std::string(500, 'x'));
    EXPECT_EQ(frames[1].compact.handle, 20u);
    ASSERT_EQ(frames[1].buffers.size(), 1u);
    EXPECT_TRUE(std::ranges::equal(frames[1].buffers[0], a));
    EXPECT_EQ(frames[2].compact.handle, 30u);
    ASSERT_EQ(frames[2].buffers.size(), 1u);
    EXPECT_TRUE(std::ranges::equal(frames[2].buffers[0], big));
    EXPECT_EQ(frames[2].wire_bytes, last.size());
    EXPECT_TRUE(parser.finish());
  }
}

// A frame is decoded into storage an earlier frame used: what the placer
// sees carries nothing of it (its error, its buffers, its compact fields).
TEST(WholeHead, AReusedFrameCarriesNothingOfTheOneBefore) {
  const auto a = pattern(64, 7);
  pb::Body ping;
  ping.mutable_ping_request();
  auto ping_frame = encode_frame(2, Action::ping, Status::ok, ping, {}, Limits{});
  ASSERT_TRUE(ping_frame);
  std::vector<std::byte> stream = compact_request(1, 5, {a});
  append_frame(*ping_frame, stream);
  const auto third = compact_request(3, 6, {a});
  stream.insert(stream.end(), third.begin(), third.end());
  std::vector<std::byte> out(a.size());
  FrameParser parser(Limits{}, [&](const Frame& f) {
    EXPECT_FALSE(f.error) << f.header.message_id;
    EXPECT_TRUE(f.buffers.empty()) << f.header.message_id;
    EXPECT_TRUE(f.owned.empty()) << f.header.message_id;
    BufferPlan plan;
    if (f.header.message_id == 1) plan.error = Error{ErrorCode::not_found, "no model 5"};
    if (f.header.message_id == 3) plan.targets = {out};
    return plan;
  });
  std::span<const std::byte> rest(stream);
  std::vector<uint32_t> ids;
  while (!rest.empty()) {
    auto taken = parser.feed_some(rest);
    ASSERT_TRUE(taken) << taken.error().to_string();
    rest = rest.subspan(*taken);
    while (const Frame* f = parser.peek()) {
      ids.push_back(f->header.message_id);
      if (f->header.message_id == 1) {
        ASSERT_TRUE(f->error);
        EXPECT_TRUE(f->buffers.empty());  // discarded
      }
      if (f->header.message_id == 2) {
        EXPECT_TRUE(f->body.has_ping_request());
        EXPECT_EQ(f->compact, CompactRun{});
        EXPECT_FALSE(f->error);
      }
      if (f->header.message_id == 3) {
        EXPECT_EQ(f->compact.handle, 6u);
        EXPECT_EQ(f->body.message_case(), pb::Body::MESSAGE_NOT_SET);
        ASSERT_EQ(f->buffers.size(), 1u);
        EXPECT_EQ(f->buffers[0].data(), out.data());
      }
      parser.release();
    }
  }
  EXPECT_EQ(ids, (std::vector<uint32_t>{1, 2, 3}));
  EXPECT_TRUE(std::ranges::equal(out, a));
}

}  // namespace
}  // namespace rig::wire

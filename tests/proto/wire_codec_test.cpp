// The wire codec: header layout, round trips of every message, the frame
// parser fed in fragments of every size, limits, and end of stream.
#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <numeric>

#include "proto/convert.hpp"
#include "proto/wire.hpp"

namespace rig::wire {
namespace {

using google::protobuf::util::MessageDifferencer;

std::vector<std::byte> pattern(size_t n, uint8_t seed) {
  std::vector<std::byte> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<std::byte>((i * 31 + seed) & 0xff);
  return v;
}

std::vector<std::byte> bytes_of(const OutFrame& f) {
  std::vector<std::byte> out;
  append_frame(f, out);
  return out;
}

OutFrame must_encode(uint32_t id, Action action, pb::Body body,
                     std::vector<std::span<const std::byte>> buffers = {},
                     Status status = Status::ok) {
  auto f = encode_frame(id, action, status, body, std::move(buffers), Limits{});
  EXPECT_TRUE(f.has_value()) << f.error().to_string();
  return std::move(*f);
}

// Feeds `bytes` in pieces of `chunk` bytes and returns every frame.
std::vector<Frame> feed_in_chunks(std::span<const std::byte> bytes, size_t chunk,
                                  const Limits& limits = {}) {
  FrameParser parser(limits);
  std::vector<Frame> frames;
  for (size_t at = 0; at < bytes.size(); at += chunk) {
    auto ok = parser.feed(bytes.subspan(at, std::min(chunk, bytes.size() - at)));
    EXPECT_TRUE(ok.has_value()) << ok.error().to_string();
    while (auto f = parser.pop()) frames.push_back(std::move(*f));
  }
  EXPECT_TRUE(parser.finish().has_value());
  return frames;
}

pb::Body run_request(uint32_t handle) {
  pb::Body b;
  b.mutable_run_request()->set_handle(handle);
  return b;
}

TEST(WireHeader, IsTwentyLittleEndianBytesInTheDocumentedOrder) {
  Header h;
  h.body_size = 0x04030201;
  h.message_id = 0x0d0c0b0a;
  h.action = Action::run_for_duration;
  h.status = Status::limit_exceeded;
  const auto b = encode_header(h);
  const uint8_t expected[kHeaderSize] = {'W',  'R',  'I', 'G', 1, 2, 3, 4, 0x0a, 0x0b,
                                         0x0c, 0x0d, 5,   0,   0, 0, 6, 0, 0,    0};
  EXPECT_EQ(0, std::memcmp(b.data(), expected, kHeaderSize));
  Limits limits;
  limits.max_body_bytes = 0xffffffff;
  auto back = decode_header(b, limits);
  ASSERT_TRUE(back) << back.error().to_string();
  EXPECT_EQ(back->body_size, h.body_size);
  EXPECT_EQ(back->message_id, h.message_id);
  EXPECT_EQ(back->action, h.action);
  EXPECT_EQ(back->status, h.status);
}

// seeds/000: a reply body parsed from the header's offset instead of the
// body's. With rig's magic such a parse can never succeed quietly.
TEST(WireHeader, BytesFromTheHeaderOffsetNeverParseAsABody) {
  for (uint64_t n :
       {0ull, 1ull, 127ull, 128ull, 240ull, 300ull, 16384ull, 1ull << 21, 1ull << 28}) {
    pb::Body body;
    DurationRun run{n, 0, std::chrono::seconds(3), static_cast<double>(n) / 3.0};
    to_pb(run, *body.mutable_run_for_duration_reply());
    const auto bytes = bytes_of(must_encode(7, Action::run_for_duration, body));
    const size_t body_size = bytes.size() - kHeaderSize;
    for (size_t len = 1; len <= std::min(body_size, kHeaderSize); ++len) {
      pb::Body wrong;
      EXPECT_FALSE(wrong.ParseFromArray(bytes.data(), static_cast<int>(len)))
          << "n=" << n << " len=" << len;
    }
  }
}

TEST(WireCodec, EveryMessageRoundTrips) {
  std::vector<pb::Body> bodies(15);
  {
    auto* m = bodies[0].mutable_hello_request();
    m->set_min_version(1);
    m->set_max_version(3);
    m->set_token("t0k");
    m->set_client("test");
  }
  {
    auto* m = bodies[1].mutable_hello_reply();
    m->set_version(1);
    m->set_server("rig");
    m->set_device_spec("sim:compute=1ms");
    m->set_device_kind("sim");
    m->set_device_description("d");
    m->set_queue_depth(16);
    m->set_device_queue_depth(8);
    m->set_memory_bytes(1ull << 33);
    m->add_sensors("power_w");
    m->add_properties()->set_key("duplex");
    m->mutable_properties(0)->set_value("half");
    m->add_warnings("w");
    m->set_virtual_clock(true);
    to_pb(Limits{}, *m->mutable_limits());
  }
  {
    auto* m = bodies[2].mutable_load_model_request();
    m->set_name("a/b.onnx");
    m->set_by_name(true);
  }
  {
    auto* m = bodies[3].mutable_load_model_reply();
    m->set_handle(9);
    m->set_read_ns(1);
    m->set_parse_ns(2);
    m->set_compile_ns(3);
    ModelInfo info{
        "m", {{"in", ElementType::u8, {1, 3, 2, 2}, 12}}, {{"out", ElementType::f32, {1, 2}, 8}}};
    to_pb(info, *m->mutable_info());
  }
  bodies[4].mutable_describe_model_request()->set_handle(3);
  to_pb(ModelInfo{"x", {}, {{"o", ElementType::i64, {2}, 16}}},
        *bodies[5].mutable_describe_model_reply()->mutable_info());
  bodies[6].mutable_run_request()->set_handle(4);
  {
    auto* m = bodies[7].mutable_run_reply();
    m->set_receive_ns(10);
    m->set_queue_wait_ns(20);
    m->set_compute_ns(30);
    m->set_reply_wait_ns(40);
    m->set_previous_send_ns(50);
    m->mutable_device()->set_compute_ns(25);
  }
  {
    auto* m = bodies[8].mutable_run_for_duration_request();
    m->set_handle(1);
    m->set_duration_ns(3'000'000'000);
    m->set_sleep_between_frames_ns(5);
  }
  to_pb(DurationRun{720, 1, std::chrono::seconds(3), 240.0},
        *bodies[9].mutable_run_for_duration_reply());
  bodies[10].mutable_read_sensors_request();
  bodies[11].mutable_read_sensors_reply()->add_readings()->set_name("temperature_c");
  bodies[11].mutable_read_sensors_reply()->mutable_readings(0)->set_value(51.5);
  // Text need not be UTF-8 (file names, messages).
  bodies[14].mutable_error_reply()->set_message("bad name \xff\xfe");
  bodies[12].mutable_release_model_request()->set_handle(2);
  bodies[13].mutable_release_model_reply();

  const auto in = pattern(100, 1);
  for (size_t i = 0; i < bodies.size(); ++i) {
    SCOPED_TRACE(bodies[i].message_case());
    pb::Body sent = bodies[i];
    std::vector<std::span<const std::byte>> buffers;
    if (i % 3 == 0) buffers = {in, std::span<const std::byte>(in).first(7)};
    const auto bytes =
        bytes_of(must_encode(static_cast<uint32_t>(i + 1), Action::hello, sent, buffers));
    auto frame = parse_frame(bytes);
    ASSERT_TRUE(frame) << frame.error().to_string();
    EXPECT_EQ(frame->header.message_id, i + 1);
    EXPECT_EQ(frame->wire_bytes, bytes.size());
    pb::Body expected = bodies[i];
    for (const auto& b : buffers) expected.add_buffer_sizes(b.size());
    EXPECT_TRUE(MessageDifferencer::Equals(frame->body, expected));
    ASSERT_EQ(frame->buffers.size(), buffers.size());
    for (size_t k = 0; k < buffers.size(); ++k)
      EXPECT_TRUE(std::equal(buffers[k].begin(), buffers[k].end(), frame->buffers[k].begin(),
                             frame->buffers[k].end()));
  }
}

// The counts of seeds/000 (and 0: the empty body that "worked"), through the
// parse path the client uses: FrameParser -> Frame -> from_pb.
TEST(WireCodec, RunForDurationCountsAndRatesParseExactly) {
  for (uint64_t n :
       {0ull, 1ull, 127ull, 128ull, 240ull, 300ull, 16384ull, 1ull << 21, 1ull << 28}) {
    for (int64_t elapsed_ns : {int64_t{1'000'000'000}, int64_t{3'000'000'000}}) {
      SCOPED_TRACE("n=" + std::to_string(n) + " elapsed=" + std::to_string(elapsed_ns));
      const DurationRun sent{n, n % 2, Nanos(elapsed_ns),
                             static_cast<double>(n) / (static_cast<double>(elapsed_ns) / 1e9)};
      pb::Body body;
      to_pb(sent, *body.mutable_run_for_duration_reply());
      const auto out = pattern(64, 3);
      const auto bytes = bytes_of(must_encode(42, Action::run_for_duration, body, {out}));
      for (size_t chunk : {size_t{1}, size_t{3}, bytes.size()}) {
        auto frames = feed_in_chunks(bytes, chunk);
        ASSERT_EQ(frames.size(), 1u);
        ASSERT_TRUE(frames[0].body.has_run_for_duration_reply());
        auto run = from_pb(frames[0].body.run_for_duration_reply());
        ASSERT_TRUE(run) << run.error().to_string();
        EXPECT_EQ(run->frames_completed, sent.frames_completed);
        EXPECT_EQ(run->frames_aborted, sent.frames_aborted);
        EXPECT_EQ(run->elapsed, sent.elapsed);
        EXPECT_EQ(run->frames_per_second, sent.frames_per_second);  // bit-exact double
      }
    }
  }
}

TEST(WireCodec, FractionalRatesStayFractional) {
  // One frame in 5 s is 0.2 frames/s, not 0.
  pb::Body body;
  to_pb(DurationRun{1, 0, std::chrono::seconds(5), 0.2}, *body.mutable_run_for_duration_reply());
  auto frame = parse_frame(bytes_of(must_encode(1, Action::run_for_duration, body)));
  ASSERT_TRUE(frame);
  auto run = from_pb(frame->body.run_for_duration_reply());
  ASSERT_TRUE(run);
  EXPECT_DOUBLE_EQ(run->frames_per_second, 0.2);
}

TEST(WireCodec, UnknownCountsTruncatedRatesAndNotesCrossTheWire) {
  // A HailoRT loop: a truncated rate and no counts; a fallback: counts and notes.
  DurationRun hailo;
  hailo.frames_completed.reset();
  hailo.frames_aborted.reset();
  hailo.elapsed = std::chrono::seconds(3);
  hailo.frames_per_second = 440;
  hailo.rate_step = 1;
  hailo.notes = {"HailoRT reports an integer", "re-configured"};
  pb::Body body;
  to_pb(hailo, *body.mutable_run_for_duration_reply());
  auto frame = parse_frame(bytes_of(must_encode(1, Action::run_for_duration, body)));
  ASSERT_TRUE(frame);
  auto run = from_pb(frame->body.run_for_duration_reply());
  ASSERT_TRUE(run) << run.error().to_string();
  EXPECT_FALSE(run->frames_completed);
  EXPECT_FALSE(run->frames_aborted);
  EXPECT_EQ(run->frames_per_second, 440);
  EXPECT_EQ(run->rate_step, 1);
  EXPECT_FALSE(run->includes_transfers);
  EXPECT_EQ(run->notes, hailo.notes);
  DurationRun fallback{1000, 2, std::chrono::seconds(2), 500.0};
  fallback.includes_transfers = true;
  pb::RunForDurationReply r;
  to_pb(fallback, r);
  auto back = from_pb(r);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->frames_completed, 1000u);
  EXPECT_TRUE(back->includes_transfers);
  r.set_rate_step(-1);
  EXPECT_EQ(from_pb(r).error().code, ErrorCode::protocol);
}

TEST(WireCodec, InconsistentLoopFiguresAreRefused) {
  pb::RunForDurationReply r;
  r.set_frames_completed(720);
  r.set_elapsed_ns(3'000'000'000);
  r.set_frames_per_second(0);
  EXPECT_EQ(from_pb(r).error().code, ErrorCode::protocol);
  r.set_frames_per_second(std::nan(""));
  EXPECT_EQ(from_pb(r).error().code, ErrorCode::protocol);
  r.set_frames_per_second(-240);
  EXPECT_EQ(from_pb(r).error().code, ErrorCode::protocol);
  r.set_frames_per_second(240);
  EXPECT_TRUE(from_pb(r));
  r.set_elapsed_ns(0);
  EXPECT_EQ(from_pb(r).error().code, ErrorCode::protocol);
}

// A request, a reply with two buffers and an empty one, and an error: fed in
// pieces of every size, and split in two at every offset.
class Fragments : public ::testing::Test {
 protected:
  void SetUp() override {
    in_a_ = pattern(300, 5);
    in_b_ = pattern(5, 9);
    append_frame(must_encode(1, Action::run, run_request(7), {in_a_, {}, in_b_}), stream_);
    pb::Body reply;
    reply.mutable_run_reply()->set_compute_ns(123456789);
    append_frame(must_encode(2, Action::run, reply, {in_b_}), stream_);
    append_frame(encode_error(3, Action::run, {ErrorCode::not_found, "unknown model handle 7"}),
                 stream_);
  }

  void check(const std::vector<Frame>& frames) {
    ASSERT_EQ(frames.size(), 3u);
    EXPECT_EQ(frames[0].header.message_id, 1u);
    ASSERT_EQ(frames[0].buffers.size(), 3u);
    EXPECT_TRUE(std::ranges::equal(frames[0].buffers[0], in_a_));
    EXPECT_TRUE(frames[0].buffers[1].empty());
    EXPECT_TRUE(std::ranges::equal(frames[0].buffers[2], in_b_));
    EXPECT_EQ(frames[0].body.run_request().handle(), 7u);
    EXPECT_EQ(frames[1].body.run_reply().compute_ns(), 123456789);
    ASSERT_EQ(frames[1].buffers.size(), 1u);
    EXPECT_TRUE(std::ranges::equal(frames[1].buffers[0], in_b_));
    EXPECT_EQ(frames[2].header.status, Status::not_found);
    EXPECT_EQ(frames[2].body.error_reply().message(), "unknown model handle 7");
  }

  std::vector<std::byte> in_a_, in_b_, stream_;
};

TEST_F(Fragments, EveryChunkSize) {
  for (size_t chunk = 1; chunk <= stream_.size(); ++chunk) {
    SCOPED_TRACE(chunk);
    check(feed_in_chunks(stream_, chunk));
  }
}

TEST_F(Fragments, EverySplitPoint) {
  for (size_t split = 0; split <= stream_.size(); ++split) {
    SCOPED_TRACE(split);
    FrameParser parser;
    ASSERT_TRUE(parser.feed(std::span(stream_).first(split)));
    ASSERT_TRUE(parser.feed(std::span(stream_).subspan(split)));
    std::vector<Frame> frames;
    while (auto f = parser.pop()) frames.push_back(std::move(*f));
    check(frames);
  }
}

// The socket reader's path: recv() straight into the buffer the parser names,
// staging bytes otherwise. Pieces of every size exercise both.
TEST_F(Fragments, DirectReadsIntoBuffers) {
  for (size_t chunk = 1; chunk <= 64; ++chunk) {
    FrameParser parser;
    std::vector<Frame> frames;
    size_t at = 0;
    while (at < stream_.size()) {
      const size_t n = std::min(chunk, stream_.size() - at);
      auto direct = parser.direct_target();
      if (!direct.empty()) {
        const size_t m = std::min(n, direct.size());
        std::memcpy(direct.data(), stream_.data() + at, m);
        ASSERT_TRUE(parser.commit_direct(m));
        at += m;
      } else {
        ASSERT_TRUE(parser.feed(std::span(stream_).subspan(at, n)));
        at += n;
      }
      while (auto f = parser.pop()) frames.push_back(std::move(*f));
    }
    check(frames);
  }
}

TEST_F(Fragments, CleanEndOfStreamIsDistinctFromATruncatedFrame) {
  // Frame boundaries: 0, end of frame 1, end of frame 2, end.
  std::vector<size_t> boundaries = {0};
  {
    FrameParser parser;
    for (size_t i = 0; i < stream_.size(); ++i) {
      ASSERT_TRUE(parser.feed(std::span(stream_).subspan(i, 1)));
      if (parser.idle()) boundaries.push_back(i + 1);
    }
  }
  ASSERT_EQ(boundaries.size(), 4u);
  for (size_t len = 0; len <= stream_.size(); ++len) {
    FrameParser parser;
    ASSERT_TRUE(parser.feed(std::span(stream_).first(len)));
    auto end = parser.finish();
    const bool boundary = std::ranges::find(boundaries, len) != boundaries.end();
    EXPECT_EQ(end.has_value(), boundary) << len;
    if (!boundary) {
      EXPECT_EQ(end.error().code, ErrorCode::protocol);
      EXPECT_NE(end.error().message.find("truncated frame"), std::string::npos);
    }
  }
  FrameParser parser;
  ASSERT_TRUE(parser.feed(std::span(stream_).first(10)));
  EXPECT_NE(parser.finish().error().message.find("after 10 of the 20 header bytes"),
            std::string::npos);
  FrameParser in_buffer;
  ASSERT_TRUE(in_buffer.feed(std::span(stream_).first(boundaries[1] - 3)));
  EXPECT_NE(in_buffer.finish().error().message.find("in buffer 3 of 3 after 2 of 5 bytes"),
            std::string::npos)
      << in_buffer.finish().error().message;
}

TEST(WireLimits, OversizedBodyFailsAtTheHeaderNamingTheLimit) {
  Header h;
  h.body_size = 0xffffffff;  // 4 GiB: never allocated
  FrameParser parser;
  const auto head = encode_header(h);
  auto r = parser.feed(head);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::limit_exceeded);
  EXPECT_NE(r.error().message.find("max_body_bytes is 1048576"), std::string::npos);
  ASSERT_TRUE(parser.failed_header());
  EXPECT_EQ(parser.failed_header()->body_size, 0xffffffffu);
  // Failed for good.
  EXPECT_FALSE(parser.feed(head));
  EXPECT_FALSE(parser.finish());
}

TEST(WireLimits, BuffersAreCheckedBeforeAllocation) {
  Limits limits;
  limits.max_buffer_bytes = 1000;
  limits.max_model_bytes = 5000;
  limits.max_buffers = 3;
  limits.max_frame_bytes = 2500;
  auto check = [&](Action action, std::vector<uint64_t> sizes, const char* limit_name) {
    pb::Body body;
    for (uint64_t s : sizes) body.add_buffer_sizes(s);
    std::string text;
    body.SerializeToString(&text);
    Header h;
    h.action = action;
    h.body_size = static_cast<uint32_t>(text.size());
    std::vector<std::byte> bytes;
    const auto head = encode_header(h);
    bytes.insert(bytes.end(), head.begin(), head.end());
    for (char c : text) bytes.push_back(static_cast<std::byte>(c));
    FrameParser parser(limits);
    auto r = parser.feed(bytes);  // header + body only: no buffer byte yet
    if (!limit_name) {
      EXPECT_TRUE(r);
      return;
    }
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, ErrorCode::limit_exceeded);
    EXPECT_NE(r.error().message.find(limit_name), std::string::npos) << r.error().message;
  };
  check(Action::run, {1000, 1000}, nullptr);
  check(Action::run, {1001}, "max_buffer_bytes is 1000");
  check(Action::run, {1, 1, 1, 1}, "max_buffers is 3");
  check(Action::run, {1000, 1000, 1000}, "max_frame_bytes is 2500");
  check(Action::load_model, {4000}, "max_frame_bytes");
  check(Action::load_model, {5001}, "max_model_bytes is 5000");
  check(Action::run, {~0ull}, "max_buffer_bytes");
}

TEST(WireLimits, TheSenderChecksToo) {
  Limits limits;
  limits.max_buffer_bytes = 10;
  const auto big = pattern(11, 0);
  pb::Body body = run_request(1);
  auto f = encode_frame(1, Action::run, Status::ok, body, {big}, limits);
  ASSERT_FALSE(f);
  EXPECT_NE(f.error().message.find("max_buffer_bytes is 10"), std::string::npos);
}

TEST(WireParser, BadMagicIsAProtocolError) {
  auto bytes = bytes_of(must_encode(5, Action::run, run_request(1)));
  bytes[0] = std::byte{'X'};
  FrameParser parser;
  auto r = parser.feed(bytes);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::protocol);
  EXPECT_NE(r.error().message.find("bad magic"), std::string::npos);
}

TEST(WireParser, CorruptBodyIsAProtocolError) {
  auto bytes = bytes_of(must_encode(5, Action::run, run_request(1)));
  bytes[kHeaderSize] = std::byte{0xff};  // an invalid tag
  auto r = parse_frame(bytes);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::protocol);
  EXPECT_NE(r.error().message.find("message 5 (run)"), std::string::npos);
}

TEST(WireParser, SplitFrameNeedsTheWholeBody) {
  auto bytes = bytes_of(must_encode(5, Action::run, run_request(1)));
  auto head = split_frame(bytes, Limits{});
  ASSERT_TRUE(head);
  EXPECT_EQ(head->body.size(), bytes.size() - kHeaderSize);
  EXPECT_EQ(head->body.bytes().data(), bytes.data() + kHeaderSize);
  EXPECT_FALSE(split_frame(std::span(bytes).first(bytes.size() - 1), Limits{}));
  EXPECT_FALSE(split_frame(std::span(bytes).first(kHeaderSize - 1), Limits{}));
}

TEST(WireParser, PlacerTargetsReceiveBuffersInPlace) {
  const auto a = pattern(50, 1), b = pattern(70, 2);
  const auto bytes = bytes_of(must_encode(9, Action::run, run_request(1), {a, b}));
  std::vector<std::byte> ta(50), tb(70);
  FrameParser parser(Limits{}, [&](const Frame& f) {
    EXPECT_EQ(f.header.message_id, 9u);
    EXPECT_EQ(f.body.buffer_sizes_size(), 2);
    return BufferPlan{{ta, tb}, false, std::nullopt, {}};
  });
  for (size_t i = 0; i < bytes.size(); ++i)
    ASSERT_TRUE(parser.feed(std::span(bytes).subspan(i, 1)));
  auto f = parser.pop();
  ASSERT_TRUE(f);
  EXPECT_TRUE(f->owned.empty());
  EXPECT_EQ(ta, a);
  EXPECT_EQ(tb, b);
  EXPECT_EQ(f->buffers[1].data(), tb.data());
}

TEST(WireParser, DiscardedBuffersKeepTheStreamInStep) {
  const auto a = pattern(50, 1);
  std::vector<std::byte> stream;
  append_frame(must_encode(1, Action::run, run_request(1), {a}), stream);
  append_frame(must_encode(2, Action::run, run_request(2), {a}), stream);
  FrameParser parser(Limits{}, [](const Frame& f) {
    BufferPlan plan;
    if (f.header.message_id == 1) plan.error = Error{ErrorCode::invalid_argument, "wrong size"};
    return plan;
  });
  ASSERT_TRUE(parser.feed(stream));
  auto first = parser.pop();
  auto second = parser.pop();
  ASSERT_TRUE(first && second);
  ASSERT_TRUE(first->error);
  EXPECT_EQ(first->error->message, "wrong size");
  EXPECT_TRUE(first->buffers.empty());
  EXPECT_FALSE(second->error);
  EXPECT_TRUE(std::ranges::equal(second->buffers[0], a));
}

TEST(WireParser, TargetsOfTheWrongSizeAreABug) {
  const auto a = pattern(50, 1);
  std::vector<std::byte> small(49);
  FrameParser parser(Limits{}, [&](const Frame&) {
    return BufferPlan{{small}, false, std::nullopt, {}};
  });
  auto r = parser.feed(bytes_of(must_encode(1, Action::run, run_request(1), {a})));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::internal);
}

// The server's order guarantee rests on this: a frame is placed only after
// every earlier frame was popped, even when all of them arrive in one piece.
TEST(WireParser, FeedSomeHandsOutOneFrameAtATime) {
  const auto a = pattern(30, 1);
  std::vector<std::byte> stream;
  std::vector<size_t> ends;
  for (uint32_t id = 1; id <= 3; ++id) {
    append_frame(must_encode(id, Action::run, run_request(id), {a}), stream);
    ends.push_back(stream.size());
  }
  std::vector<std::string> events;
  FrameParser parser(Limits{}, [&](const Frame& f) {
    events.push_back("place " + std::to_string(f.header.message_id));
    return BufferPlan{};
  });
  std::span<const std::byte> rest(stream);
  size_t at = 0;
  for (uint32_t id = 1; id <= 3; ++id) {
    auto taken = parser.feed_some(rest);
    ASSERT_TRUE(taken) << taken.error().to_string();
    at += *taken;
    EXPECT_EQ(at, ends[id - 1]);  // stopped exactly at the end of the frame
    rest = rest.subspan(*taken);
    // Nothing more is taken while a frame waits to be popped.
    auto none = parser.feed_some(rest);
    ASSERT_TRUE(none);
    EXPECT_EQ(*none, 0u);
    auto f = parser.pop();
    ASSERT_TRUE(f);
    events.push_back("pop " + std::to_string(f->header.message_id));
    EXPECT_TRUE(std::ranges::equal(f->buffers[0], a));
  }
  EXPECT_TRUE(rest.empty());
  EXPECT_EQ(events,
            (std::vector<std::string>{"place 1", "pop 1", "place 2", "pop 2", "place 3", "pop 3"}));
  EXPECT_TRUE(parser.finish());
}

// A header that declares a large buffer costs memory only as the buffer's
// bytes arrive.
TEST(WireParser, OwnedBuffersGrowAsTheirBytesArrive) {
  Limits limits;
  limits.max_buffer_bytes = 1ull << 30;
  pb::Body body = run_request(1);
  body.add_buffer_sizes(1ull << 30);
  std::string text;
  body.SerializeToString(&text);
  Header h;
  h.message_id = 7;
  h.action = Action::run;
  h.body_size = static_cast<uint32_t>(text.size());
  std::vector<std::byte> bytes;
  const auto head = encode_header(h);
  bytes.insert(bytes.end(), head.begin(), head.end());
  for (char c : text) bytes.push_back(static_cast<std::byte>(c));
  bytes.resize(bytes.size() + 100, std::byte{9});  // 100 bytes of the 1 GiB buffer
  FrameParser parser(limits);
  ASSERT_TRUE(parser.feed(bytes));
  const auto room = parser.direct_target();
  EXPECT_GT(room.size(), 0u);
  EXPECT_LE(room.size() + 100, kGrowBytes);  // what is allocated so far
  auto end = parser.finish();
  ASSERT_FALSE(end);
  EXPECT_NE(end.error().message.find("after 100 of 1073741824 bytes"), std::string::npos)
      << end.error().message;
}

TEST(WireParser, GrownBuffersArriveWholeThroughBothPaths) {
  Limits limits;
  limits.max_buffer_bytes = 8u << 20;
  const auto big = pattern(3 * kGrowBytes + 12345, 5), small = pattern(10, 6);
  std::vector<std::byte> stream;
  append_frame(must_encode(1, Action::run, run_request(1), {big, small}), stream);
  append_frame(must_encode(2, Action::run, run_request(2), {small}), stream);
  for (size_t chunk : {size_t{4096}, size_t{65536}, size_t{1} << 20}) {
    for (bool direct_reads : {false, true}) {
      SCOPED_TRACE(std::to_string(chunk) + (direct_reads ? " direct" : " fed"));
      FrameParser parser(limits);
      std::vector<Frame> frames;
      size_t at = 0;
      while (at < stream.size()) {
        const size_t n = std::min(chunk, stream.size() - at);
        auto direct = direct_reads ? parser.direct_target() : std::span<std::byte>{};
        if (!direct.empty()) {
          const size_t m = std::min(n, direct.size());
          std::memcpy(direct.data(), stream.data() + at, m);
          ASSERT_TRUE(parser.commit_direct(m));
          at += m;
        } else {
          ASSERT_TRUE(parser.feed(std::span(stream).subspan(at, n)));
          at += n;
        }
        while (auto f = parser.pop()) frames.push_back(std::move(*f));
      }
      ASSERT_EQ(frames.size(), 2u);
      ASSERT_EQ(frames[0].buffers.size(), 2u);
      EXPECT_TRUE(std::ranges::equal(frames[0].buffers[0], big));
      EXPECT_TRUE(std::ranges::equal(frames[0].buffers[1], small));
      EXPECT_EQ(frames[0].owned[0].capacity(), big.size());  // grown, never past the declared size
      EXPECT_TRUE(std::ranges::equal(frames[1].buffers[0], small));
      EXPECT_TRUE(parser.finish());
    }
  }
}

// Releasing a lent frame lets go of the bytes it owns (an upload's), not only
// when its element is next decoded into: a peer that stops between frames,
// or mid-way into the next one, must not keep them.
TEST(WireParser, ReleasingALentFrameFreesItsOwnedBytes) {
  Limits limits;
  limits.max_buffer_bytes = 8u << 20;
  const auto upload = pattern(2 * kGrowBytes, 7);
  std::vector<std::byte> stream;
  append_frame(must_encode(1, Action::run, run_request(1), {upload}), stream);
  FrameParser parser(limits);
  ASSERT_TRUE(parser.feed(stream));
  Frame* f = parser.peek();
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(f->owned.size(), 1u);
  EXPECT_TRUE(std::ranges::equal(f->buffers[0], upload));
  parser.release();
  // The element stays in the parser's ring for reuse, without the bytes.
  EXPECT_TRUE(f->owned.empty());
  EXPECT_TRUE(f->buffers.empty());
  std::vector<std::byte> next;
  append_frame(must_encode(2, Action::run, run_request(2), {upload}), next);
  ASSERT_TRUE(parser.feed(std::span(next).first(5)));  // a header begun, never ended
  EXPECT_EQ(parser.peek(), nullptr);
}

// Lent frames (peek/release) reuse their storage: frames of other actions,
// bodies and buffer counts decode into what earlier ones left, and come out
// exactly as sent and in order, also when the ring grows while it wraps and
// when pop() and peek() are mixed.
TEST(WireParser, LentFramesReuseTheirStorageAndStayInOrder) {
  std::vector<std::vector<std::byte>> payloads;
  std::vector<std::byte> stream;
  std::vector<uint32_t> sent_ids;
  const auto add = [&](uint32_t id) {
    pb::Body body;
    std::vector<std::span<const std::byte>> buffers;
    switch (id % 4) {
      case 0:
        body = run_request(id);
        payloads.push_back(pattern(id % 7 + 1, static_cast<uint8_t>(id)));
        payloads.push_back(pattern(id % 5 + 3, static_cast<uint8_t>(id + 1)));
        buffers = {payloads[payloads.size() - 2], payloads.back()};
        break;
      case 1:
        body.mutable_ping_request();
        break;
      case 2:
        body.mutable_run_reply()->set_compute_ns(id);
        body.mutable_run_reply()->mutable_device()->set_compute_ns(id * 10);
        payloads.push_back(pattern(3, static_cast<uint8_t>(id)));
        buffers = {payloads.back()};
        break;
      default:
        body.mutable_error_reply()->set_message("error " + std::to_string(id));
        break;
    }
    const auto frame = must_encode(id, Action::run, body, buffers);
    append_frame(frame, stream);
    sent_ids.push_back(id);
  };
  payloads.reserve(1000);  // spans into it stay valid
  const auto check = [&](const Frame& f, uint32_t id) {
    EXPECT_EQ(f.header.message_id, id);
    EXPECT_EQ(f.wire_bytes > 0, true);
    switch (id % 4) {
      case 0:
        ASSERT_TRUE(f.body.has_run_request()) << id;
        EXPECT_EQ(f.body.run_request().handle(), id);
        ASSERT_EQ(f.buffers.size(), 2u) << id;
        EXPECT_EQ(f.buffers[0].size(), id % 7 + 1);
        EXPECT_EQ(f.buffers[1].size(), id % 5 + 3);
        EXPECT_TRUE(std::equal(f.buffers[0].begin(), f.buffers[0].end(),
                               pattern(id % 7 + 1, static_cast<uint8_t>(id)).begin()));
        break;
      case 1:
        EXPECT_TRUE(f.body.has_ping_request()) << id;
        EXPECT_EQ(f.body.buffer_sizes_size(), 0) << id;
        EXPECT_TRUE(f.buffers.empty() && f.owned.empty()) << id;
        break;
      case 2:
        ASSERT_TRUE(f.body.has_run_reply()) << id;
        EXPECT_EQ(f.body.run_reply().compute_ns(), id);
        EXPECT_EQ(f.body.run_reply().device().compute_ns(), id * 10);
        EXPECT_FALSE(f.body.run_reply().device().has_transfer_in_ns());
        ASSERT_EQ(f.buffers.size(), 1u);
        EXPECT_EQ(f.buffers[0].size(), 3u);
        break;
      default:
        ASSERT_TRUE(f.body.has_error_reply()) << id;
        EXPECT_EQ(f.body.error_reply().message(), "error " + std::to_string(id));
        EXPECT_TRUE(f.buffers.empty()) << id;
        break;
    }
  };
  FrameParser parser;
  uint32_t next_id = 1, expect = 1;
  // Rounds of a growing number of frames fed at once, and fewer taken out
  // than went in, so that the ring is full and wrapped when it grows.
  for (uint32_t round = 1; round <= 12; ++round) {
    stream.clear();
    for (uint32_t k = 0; k < round; ++k) add(next_id++);
    ASSERT_TRUE(parser.feed(stream));
    const uint32_t take = round / 2 + 1;
    for (uint32_t k = 0; k < take && parser.has_frames(); ++k) {
      if (k % 3 == 2) {
        auto f = parser.pop();
        ASSERT_TRUE(f);
        check(*f, expect++);
      } else {
        const Frame* f = parser.peek();
        ASSERT_NE(f, nullptr);
        check(*f, expect++);
        parser.release();
      }
    }
  }
  while (const Frame* f = parser.peek()) {
    check(*f, expect++);
    parser.release();
  }
  EXPECT_EQ(expect, next_id);
  EXPECT_EQ(parser.peek(), nullptr);
  EXPECT_TRUE(parser.finish());
}

// encode_frame_into() rewrites everything of a reused frame: a frame with
// buffers, then one with fewer and none, then with more, each decodes to
// exactly what it was given.
TEST(WireCodec, EncodingIntoAReusedFrameLeavesNothingBehind) {
  OutFrame frame;
  pb::Body body;  // reused too, as the server's reply body is
  const auto a = pattern(10, 1), b = pattern(300, 2), c = pattern(1, 3);
  const std::vector<std::vector<std::span<const std::byte>>> lists = {
      {a, b, c}, {b}, {}, {c, a, b, a}, {}};
  uint32_t id = 1;
  for (const auto& list : lists) {
    frame.buffers = list;
    auto* r = body.mutable_run_reply();
    r->set_compute_ns(id);
    ASSERT_TRUE(encode_frame_into(frame, id, Action::run, Status::ok, body, Limits{}));
    auto parsed = parse_frame(bytes_of(frame));
    ASSERT_TRUE(parsed) << parsed.error().to_string();
    EXPECT_EQ(parsed->header.message_id, id);
    EXPECT_EQ(parsed->body.run_reply().compute_ns(), id);
    ASSERT_EQ(parsed->buffers.size(), list.size());
    for (size_t i = 0; i < list.size(); ++i)
      EXPECT_TRUE(std::equal(parsed->buffers[i].begin(), parsed->buffers[i].end(), list[i].begin(),
                             list[i].end()))
          << id << " buffer " << i;
    ++id;
  }
  // A refused frame (over max_buffers) is an error, not a frame.
  frame.buffers = {a, b, c};
  Limits tight;
  tight.max_buffers = 2;
  EXPECT_FALSE(encode_frame_into(frame, 9, Action::run, Status::ok, body, tight));
}

// A placer may lend its own list of targets (BufferPlan::borrowed): the
// buffers land in it, and a lent list of the wrong size is refused as a bug.
TEST(WireParser, BorrowedTargetsReceiveBuffersInPlace) {
  std::vector<std::byte> x(4), y(6);
  const std::vector<std::span<std::byte>> lent = {x, y};
  bool wrong = false;
  FrameParser parser(Limits{}, [&](const Frame&) {
    BufferPlan plan;
    plan.borrowed = wrong ? std::span<const std::span<std::byte>>(lent).first(1)
                          : std::span<const std::span<std::byte>>(lent);
    return plan;
  });
  const auto a = pattern(4, 1), b = pattern(6, 2);
  for (int k = 0; k < 3; ++k) {
    ASSERT_TRUE(parser.feed(bytes_of(must_encode(1, Action::run, run_request(1), {a, b}))));
    const Frame* f = parser.peek();
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(f->buffers.size(), 2u);
    EXPECT_EQ(f->buffers[0].data(), x.data());
    EXPECT_EQ(f->buffers[1].data(), y.data());
    EXPECT_TRUE(f->owned.empty());
    parser.release();
    EXPECT_EQ(x, a);
    EXPECT_EQ(y, b);
    std::fill(x.begin(), x.end(), std::byte{0});
  }
  wrong = true;
  auto r = parser.feed(bytes_of(must_encode(1, Action::run, run_request(1), {a, b})));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::internal);
}

TEST(WireStatus, EveryErrorCodeCrossesTheWire) {
  for (int c = 0; c <= static_cast<int>(ErrorCode::internal); ++c) {
    const auto code = static_cast<ErrorCode>(c);
    const auto bytes = bytes_of(encode_error(4, Action::load_model, {code, "why"}));
    auto f = parse_frame(bytes);
    ASSERT_TRUE(f);
    const Error e = error_for(f->header.status, f->body.error_reply().message());
    EXPECT_EQ(e.code, code);
    EXPECT_EQ(e.message, "why");
  }
  EXPECT_EQ(error_for(static_cast<Status>(999), "x").code, ErrorCode::protocol);
  EXPECT_EQ(to_string(static_cast<Action>(99)), "action 99");
  EXPECT_FALSE(is_known(static_cast<Action>(0)));
  EXPECT_TRUE(is_known(Action::release_model));
}

TEST(WireConvert, ModelInfoRoundTripsAndIsValidated) {
  ModelInfo info{"m",
                 {{"a", ElementType::u8, {1, 4, 8, 8}, 256}, {"b", ElementType::f16, {3}, 6}},
                 {{"c", ElementType::boolean, {2, 2}, 4}}};
  pb::ModelInfo p;
  to_pb(info, p);
  auto back = from_pb(p);
  ASSERT_TRUE(back);
  ASSERT_EQ(back->inputs.size(), 2u);
  EXPECT_EQ(back->inputs[0].shape, info.inputs[0].shape);
  EXPECT_EQ(back->inputs[1].type, ElementType::f16);
  EXPECT_EQ(back->outputs[0].bytes, 4u);
  p.mutable_inputs(0)->set_bytes(255);
  EXPECT_EQ(from_pb(p).error().code, ErrorCode::protocol);
  p.mutable_inputs(0)->set_bytes(256);
  p.mutable_inputs(0)->set_type(static_cast<pb::ElementType>(77));
  EXPECT_EQ(from_pb(p).error().code, ErrorCode::protocol);
  p.mutable_inputs(0)->set_type(pb::ELEMENT_TYPE_U8);
  p.mutable_inputs(0)->add_shape(1ll << 40);
  p.mutable_inputs(0)->add_shape(1ll << 40);
  EXPECT_EQ(from_pb(p).error().code, ErrorCode::protocol);
}

}  // namespace
}  // namespace rig::wire

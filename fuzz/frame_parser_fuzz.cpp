// libFuzzer target: the frame parser, on arbitrary bytes.
//
// Checks, beyond "does not crash": the parser gives the same frames and the
// same end-of-stream verdict whether the bytes come whole (each frame's head
// then decoded where it lies), in pieces (also through the zero-copy direct
// reads, into buffers that grow as they arrive), or one frame at a time
// (feed_some, as the server reads: a frame is placed only after the one
// before it was popped), and every frame it accepts encodes back to bytes
// that parse to the same frame.
//
// RIG_FUZZ_SEEDS=DIR writes a seed corpus (one frame of every message) to DIR.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "proto/convert.hpp"
#include "proto/wire.hpp"

namespace {

using namespace rig;
using namespace rig::wire;

Limits fuzz_limits() {
  Limits l;
  l.max_body_bytes = 1 << 16;
  l.max_buffer_bytes = 1 << 20;
  l.max_model_bytes = 1 << 20;
  l.max_frame_bytes = 1 << 21;
  l.max_buffers = 16;
  return l;
}

void check(bool ok) {
  if (!ok) __builtin_trap();
}

struct Outcome {
  std::vector<Frame> frames;
  bool failed = false;
  bool clean_end = false;
};

Outcome parse_whole(std::span<const std::byte> bytes) {
  Outcome o;
  FrameParser p(fuzz_limits());
  o.failed = !p.feed(bytes);
  while (auto f = p.pop()) o.frames.push_back(std::move(*f));
  o.clean_end = !o.failed && p.finish().has_value();
  return o;
}

// A deep copy of a frame the parser lent (its storage is reused later).
Frame copy_of(const Frame& f) {
  Frame c;
  c.header = f.header;
  c.body.CopyFrom(f.body);
  c.compact = f.compact;
  c.error = f.error;
  c.wire_bytes = f.wire_bytes;
  for (const auto& b : f.buffers) c.owned.emplace_back(b.begin(), b.end());
  for (auto& v : c.owned) c.buffers.emplace_back(v);
  return c;
}

// Pieces of 1..7 bytes (from the first byte), through direct reads when the
// parser offers them: the socket reader's two paths. Frames are lent
// (peek/release), as the server and the remote device take them.
Outcome parse_pieces(std::span<const std::byte> bytes) {
  Outcome o;
  FrameParser p(fuzz_limits());
  const size_t piece = bytes.empty() ? 1 : static_cast<size_t>(bytes[0]) % 7 + 1;
  size_t at = 0;
  while (at < bytes.size() && !o.failed) {
    const size_t n = std::min(piece, bytes.size() - at);
    auto direct = p.direct_target();
    if (!direct.empty()) {
      const size_t m = std::min(n, direct.size());
      std::memcpy(direct.data(), bytes.data() + at, m);
      o.failed = !p.commit_direct(m);
      at += m;
    } else {
      o.failed = !p.feed(bytes.subspan(at, n));
      at += n;
    }
    while (const Frame* f = p.peek()) {
      o.frames.push_back(copy_of(*f));
      p.release();
    }
  }
  o.clean_end = !o.failed && p.finish().has_value();
  return o;
}

// feed_some() in pieces, popping after each call, with a placer that checks
// the order: every frame is placed after the previous one was popped.
Outcome parse_one_at_a_time(std::span<const std::byte> bytes) {
  Outcome o;
  size_t placed = 0, popped = 0;
  FrameParser p(fuzz_limits(), [&](const Frame&) {
    check(placed == popped);
    ++placed;
    return BufferPlan{};
  });
  const size_t piece = bytes.empty() ? 1 : static_cast<size_t>(bytes[0]) % 97 + 1;
  size_t at = 0;
  while (at < bytes.size() && !o.failed) {
    auto rest = bytes.subspan(at, std::min(piece, bytes.size() - at));
    while (!rest.empty()) {
      auto taken = p.feed_some(rest);
      if (!taken) {
        o.failed = true;
        break;
      }
      check(*taken > 0 || p.has_frames());
      rest = rest.subspan(*taken);
      at += *taken;
      while (auto f = p.pop()) {
        ++popped;
        o.frames.push_back(std::move(*f));
      }
    }
  }
  o.clean_end = !o.failed && p.finish().has_value();
  return o;
}

bool same_frame(const Frame& a, const Frame& b) {
  if (a.header.message_id != b.header.message_id || a.header.action != b.header.action ||
      a.header.status != b.header.status || a.header.body_size != b.header.body_size ||
      a.wire_bytes != b.wire_bytes || a.buffers.size() != b.buffers.size())
    return false;
  if (a.body.SerializeAsString() != b.body.SerializeAsString() || !(a.compact == b.compact))
    return false;
  for (size_t i = 0; i < a.buffers.size(); ++i)
    if (!std::equal(a.buffers[i].begin(), a.buffers[i].end(), b.buffers[i].begin(),
                    b.buffers[i].end()))
      return false;
  return true;
}

void write_seeds(const char* dir) {
  auto save = [&](const std::string& name, Action action, pb::Body body,
                  std::vector<std::span<const std::byte>> buffers) {
    auto f = encode_frame(1, action, Status::ok, body, std::move(buffers), fuzz_limits());
    if (!f) return;
    std::vector<std::byte> bytes;
    append_frame(*f, bytes);
    std::ofstream(std::string(dir) + "/" + name, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()),
               static_cast<std::streamsize>(bytes.size()));
  };
  std::vector<std::byte> data(40, std::byte{7});
  pb::Body b;
  b.mutable_hello_request()->set_max_version(1);
  save("hello", Action::hello, b, {});
  b.Clear();
  b.mutable_run_request()->set_handle(1);
  save("run", Action::run, b, {data, std::span<const std::byte>(data).first(3)});
  b.Clear();
  to_pb(DurationRun{240, 1, std::chrono::seconds(3), 80.0}, *b.mutable_run_for_duration_reply());
  save("loop_reply", Action::run_for_duration, b, {data});
  b.Clear();
  to_pb(ModelInfo{"m", {{"in", ElementType::u8, {1, 40}, 40}}, {{"out", ElementType::f32, {2}, 8}}},
        *b.mutable_load_model_reply()->mutable_info());
  save("load_reply", Action::load_model, b, {});
  b.Clear();
  b.mutable_error_reply()->set_message("no");
  save("error", Action::run, b, {});
  auto save_compact = [&](const std::string& name, const CompactRun& run) {
    OutFrame f;
    f.buffers = {data, std::span<const std::byte>(data).first(3)};
    if (!encode_compact_into(f, 2, run, fuzz_limits())) return;
    std::vector<std::byte> bytes;
    append_frame(f, bytes);
    std::ofstream(std::string(dir) + "/" + name, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()),
               static_cast<std::streamsize>(bytes.size()));
  };
  CompactRun request;
  request.handle = 1;
  save_compact("compact_run", request);
  CompactRun reply;
  reply.kind = CompactRun::Kind::reply;
  reply.compute_ns = 1000;
  reply.device_present = 0x5;
  reply.device = {1, 2, 3, 4};
  save_compact("compact_reply", reply);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (const char* dir = std::getenv("RIG_FUZZ_SEEDS")) write_seeds(dir);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  const Outcome whole = parse_whole(bytes);
  for (const Outcome& other : {parse_pieces(bytes), parse_one_at_a_time(bytes)}) {
    check(whole.failed == other.failed);
    check(whole.clean_end == other.clean_end);
    check(whole.frames.size() == other.frames.size());
    for (size_t i = 0; i < whole.frames.size(); ++i)
      check(same_frame(whole.frames[i], other.frames[i]));
  }

  for (const Frame& f : whole.frames) {
    if (is_compact(f.header)) {
      // A compact body has one encoding: it encodes back to the same fields
      // in a body of the same size.
      OutFrame again;
      again.buffers.assign(f.buffers.begin(), f.buffers.end());
      check(encode_compact_into(again, f.header.message_id, f.compact, fuzz_limits()).has_value());
      check(again.body.size() == f.header.body_size);
      std::vector<std::byte> out;
      append_frame(again, out);
      auto back = parse_frame(out, fuzz_limits());
      check(back.has_value());
      check(back->compact == f.compact);
      check(back->buffers.size() == f.buffers.size());
      continue;
    }
    // What was accepted encodes back to an equivalent frame.
    pb::Body body = f.body;
    std::vector<std::span<const std::byte>> buffers(f.buffers.begin(), f.buffers.end());
    auto again = encode_frame(f.header.message_id, f.header.action, f.header.status, body, buffers,
                              fuzz_limits());
    if (again) {
      std::vector<std::byte> out;
      append_frame(*again, out);
      auto back = parse_frame(out, fuzz_limits());
      check(back.has_value());
      check(back->buffers.size() == f.buffers.size());
      check(back->body.SerializeAsString() == again->body);
    }
    // The conversions the client applies to replies.
    if (f.body.has_run_for_duration_reply()) (void)from_pb(f.body.run_for_duration_reply());
    if (f.body.has_load_model_reply()) (void)from_pb(f.body.load_model_reply().info());
    if (f.body.has_hello_reply()) (void)from_pb(f.body.hello_reply().limits());
    (void)error_for(f.header.status, "x");
  }
  (void)parse_frame(bytes, fuzz_limits());
  return 0;
}

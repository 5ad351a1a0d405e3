// The run_compact body (wire.hpp CompactRun, docs/protocol.md "Compact
// run"): fixed little-endian words, encoded and checked here; the frame
// parser (wire.cpp) takes the body from split_frame() and calls
// decode_compact().
#include <bit>
#include <cstdio>

#include "proto/wire.hpp"
#include "proto/wire_bytes.hpp"

namespace rig::wire {

using detail::BufferSizes;
using detail::check_buffers;
using detail::describe;
using detail::load_u32;
using detail::load_u64;
using detail::store_u32;
using detail::store_u64;

namespace {

// The device timings a reply carries: the bits set in the four of
// device_present (a table: std::popcount is a library call where the target
// has no popcnt instruction).
size_t device_count(uint32_t present) {
  static constexpr uint8_t kBits[16] = {0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4};
  return kBits[present & CompactRun::kAllDevice];
}

// Bytes of a compact body before its buffer sizes.
size_t compact_fields(const CompactRun& run) {
  if (run.kind != CompactRun::Kind::reply) return CompactRun::kFixedBytes;
  return CompactRun::kFixedBytes + CompactRun::kReplyFieldBytes +
         8 * device_count(run.device_present);
}

}  // namespace

Result<void> encode_compact_into(OutFrame& out, uint32_t message_id, const CompactRun& run,
                                 const Limits& limits) {
  Header h;
  h.message_id = message_id;
  h.action = Action::run_compact;
  if (auto ok = check_buffers(h, BufferSizes{out.buffers}, limits); !ok) return ok;
  const size_t n = out.buffers.size();
  const bool reply = run.kind == CompactRun::Kind::reply;
  const uint32_t present = run.device_present & CompactRun::kAllDevice;
  const size_t fields = compact_fields(run);
  out.body.resize(fields + 8 * n);  // keeps the string's capacity
  auto* p = reinterpret_cast<std::byte*>(out.body.data());
  store_u32(p, static_cast<uint32_t>(run.kind));
  store_u32(p + 4, reply ? present : run.handle);
  store_u32(p + 8, static_cast<uint32_t>(n));
  if (reply) {
    std::byte* w = p + CompactRun::kFixedBytes;
    for (int64_t v : {run.receive_ns, run.queue_wait_ns, run.compute_ns, run.reply_wait_ns,
                      run.previous_send_ns}) {
      store_u64(w, static_cast<uint64_t>(v));
      w += 8;
    }
    for (uint32_t i = 0; i < 4; ++i)
      if (present >> i & 1) {
        store_u64(w, static_cast<uint64_t>(run.device[i]));
        w += 8;
      }
  }
  for (size_t i = 0; i < n; ++i) store_u64(p + fields + 8 * i, out.buffers[i].size());
  if (out.body.size() > limits.max_body_bytes)
    return fail(ErrorCode::limit_exceeded,
                describe(h) + " would have a body of " + std::to_string(out.body.size()) +
                    " bytes; max_body_bytes is " + std::to_string(limits.max_body_bytes));
  h.body_size = static_cast<uint32_t>(out.body.size());
  out.header = encode_header(h);
  return {};
}

Result<CompactRun> decode_compact(const Header& header, BodyView body, const Limits& limits,
                                  std::vector<uint64_t>& sizes) {
  CompactRun run;
  if (auto ok = decode_compact_into(header, body, limits, run, sizes); !ok)
    return tl::unexpected(ok.error());
  return run;
}

Result<void> decode_compact_into(const Header& header, BodyView body, const Limits& limits,
                                 CompactRun& run, std::vector<uint64_t>& sizes) {
  const std::span<const std::byte> b = body.bytes();
  const auto refuse = [&](const std::string& why) {
    return fail(ErrorCode::protocol, describe(header) + ": its " + std::to_string(b.size()) +
                                         "-byte body is not a compact run body: " + why);
  };
  if (b.size() < CompactRun::kFixedBytes)
    return refuse("shorter than its " + std::to_string(CompactRun::kFixedBytes) + " fixed bytes");
  run = CompactRun{};
  const uint32_t kind = load_u32(b.data());
  if (kind != static_cast<uint32_t>(CompactRun::Kind::request) &&
      kind != static_cast<uint32_t>(CompactRun::Kind::reply)) {
    char text[16];
    std::snprintf(text, sizeof text, "0x%08x", kind);
    return refuse(std::string("kind ") + text + " is neither 1 (request) nor 2 (reply)");
  }
  run.kind = static_cast<CompactRun::Kind>(kind);
  const bool reply = run.kind == CompactRun::Kind::reply;
  const uint32_t second = load_u32(b.data() + 4);
  const uint32_t count = load_u32(b.data() + 8);
  if (reply && (second & ~CompactRun::kAllDevice) != 0)
    return refuse("device_present has bits beyond the four device timings");
  if (reply) run.device_present = second;
  if (!reply) run.handle = second;
  if (count > limits.max_buffers)
    return fail(ErrorCode::limit_exceeded, describe(header) + " declares " + std::to_string(count) +
                                               " buffers; max_buffers is " +
                                               std::to_string(limits.max_buffers));
  // In 64 bits: a count near 2^32 cannot wrap the size it implies.
  const uint64_t expected = compact_fields(run) + 8 * uint64_t{count};
  const size_t fields = compact_fields(run);
  if (b.size() != expected)
    return refuse(std::string(reply ? "a reply" : "a request") + " with " +
                  (reply ? std::to_string(device_count(second)) + " device timings and " : "") +
                  std::to_string(count) + " buffers is " + std::to_string(expected) + " bytes");
  if (reply) {
    const auto word = [&](size_t i) {
      return static_cast<int64_t>(load_u64(b.data() + CompactRun::kFixedBytes + 8 * i));
    };
    run.receive_ns = word(0);
    run.queue_wait_ns = word(1);
    run.compute_ns = word(2);
    run.reply_wait_ns = word(3);
    run.previous_send_ns = word(4);
    size_t next = 5;
    for (uint32_t bits = second; bits != 0; bits &= bits - 1)  // lowest set bit first
      run.device[static_cast<size_t>(std::countr_zero(bits))] = word(next++);
  }
  sizes.resize(count);
  for (size_t i = 0; i < count; ++i) sizes[i] = load_u64(b.data() + fields + 8 * i);
  return check_buffers(header, sizes, limits);
}

}  // namespace rig::wire

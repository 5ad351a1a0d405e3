// The rig wire codec, shared by `rig serve` and the remote device.
//
// Wire format (docs/protocol.md has the full text):
//
//   offset  size  field        (all little-endian)
//        0     4  magic        0x47495257, the bytes "WRIG"
//        4     4  body_size    bytes of protobuf body that follow the header
//        8     4  message_id   chosen by the client; a reply carries its request's id
//       12     4  action       Action: which message the body holds
//       16     4  status       Status: 0 in requests and successful replies
//       20     -  body         one rig.wire.pb.Body (src/proto/rig.proto), body_size bytes
//        -     -  buffers      raw bytes, Body.buffer_sizes[i] each, back to back
//
// The first byte of the magic, 0x57, is a protobuf tag with the invalid wire
// type 7: bytes parsed as a body from the header's offset fail at once instead
// of decoding into plausible values (the failure in seeds/000).
//
// Exactly one function knows where a body starts: split_frame(). The frame
// parser, and through it every request the server reads and every reply the
// client reads, takes bodies from it; decode_body() accepts only the BodyView
// split_frame() returns, so a body cannot be taken from anywhere else.
//
// Limits (Limits) are checked before anything is allocated: the body size as
// soon as the header is complete, the buffer count and sizes as soon as the
// body is. Errors name the limit to raise. Buffers the parser allocates grow
// as their bytes arrive (kGrowBytes first, then doubling up to the declared
// size), so a header that declares a large buffer costs memory only as fast
// as the peer actually sends it.
//
// Thread safety: the functions are pure; a FrameParser is used by one thread.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "proto/rig.pb.h"
#include "rig/clock.hpp"
#include "rig/error.hpp"

namespace rig::wire {

inline constexpr uint32_t kMagic = 0x47495257;  // "WRIG" on the wire
inline constexpr size_t kHeaderSize = 20;
// Protocol versions this build speaks; negotiated in hello.
inline constexpr uint32_t kMinVersion = 1;
inline constexpr uint32_t kMaxVersion = 1;
// The server's default TCP port.
inline constexpr uint16_t kDefaultPort = 5757;
// First allocation of a buffer the parser owns; it doubles from there.
inline constexpr size_t kGrowBytes = 1 << 20;

enum class Action : uint32_t {
  hello = 1,
  load_model = 2,
  describe_model = 3,
  run = 4,
  run_for_duration = 5,
  read_sensors = 6,
  release_model = 7,
  ping = 9,          // answered by the connection, never by the device
  cancel = 10,       // cuts this connection's loop short
  run_compact = 11,  // a run with a fixed-layout body instead of protobuf (CompactRun)
};
std::string to_string(Action action);  // "run"; "action 99" for unknown values
bool is_known(Action action);

// Wire status codes. Values are fixed on the wire; never renumber.
enum class Status : uint32_t {
  ok = 0,
  invalid_argument = 1,
  not_found = 2,
  unsupported = 3,
  io = 4,
  protocol = 5,
  limit_exceeded = 6,
  queue_full = 7,
  timeout = 8,
  disconnected = 9,
  device = 10,
  permission = 11,
  internal = 12,
};
Status status_for(ErrorCode code);
// The error a non-ok status and its message stand for; unknown values map to
// protocol errors that name the value.
Error error_for(Status status, std::string message);

struct Header {
  uint32_t magic = kMagic;
  uint32_t body_size = 0;
  uint32_t message_id = 0;
  Action action = Action::hello;
  Status status = Status::ok;
};

struct Limits {
  uint32_t max_body_bytes = 1u << 20;              // protobuf body of one frame
  uint64_t max_buffer_bytes = 1ull << 30;          // one tensor buffer
  uint64_t max_model_bytes = (2ull << 30) - 1;     // the buffer of a load_model request
  uint32_t max_buffers = 64;                       // buffers in one frame
  uint64_t max_frame_bytes = 4ull << 30;           // all buffers of one frame together
  Nanos max_loop_duration{std::chrono::hours(1)};  // run_for_duration (server policy)
};

// Header bytes of `header` (magic included as given).
std::array<std::byte, kHeaderSize> encode_header(const Header& header);
// Reads a header; fails on a bad magic (protocol) or a body over
// max_body_bytes (limit_exceeded), naming the limit.
Result<Header> decode_header(std::span<const std::byte, kHeaderSize> bytes, const Limits& limits);

struct FrameHead;

// A view of a frame's body. Only split_frame() makes one.
class BodyView {
 public:
  std::span<const std::byte> bytes() const { return bytes_; }
  size_t size() const { return bytes_.size(); }

 private:
  explicit BodyView(std::span<const std::byte> bytes) : bytes_(bytes) {}
  std::span<const std::byte> bytes_;
  friend Result<FrameHead> split_frame(std::span<const std::byte> frame, const Limits& limits);
};

struct FrameHead {
  Header header;
  BodyView body;
};

// THE place that knows where a body starts. `frame` begins with a header and
// holds at least its body; the body is the body_size bytes after the header.
Result<FrameHead> split_frame(std::span<const std::byte> frame, const Limits& limits);

// Parses a body and checks the buffers it declares against the limits
// (count, each size; load_model's buffer against max_model_bytes).
Result<pb::Body> decode_body(const Header& header, BodyView body, const Limits& limits);

// The body of a run_compact frame (action 11, docs/protocol.md "Compact
// run"): a run request or its successful reply as fixed little-endian words,
// so a small run costs no protobuf encoding or decoding on either side. An
// error reply (status != 0) carries an ErrorReply, as for any action.
//
//   request: u32 kind = 1, u32 handle, u32 buffer_count,
//            u64 buffer_sizes[buffer_count]                        12 + 8n bytes
//   reply:   u32 kind = 2, u32 device_present, u32 buffer_count,
//            i64 receive_ns, queue_wait_ns, compute_ns, reply_wait_ns,
//                previous_send_ns (RunReply's fields),
//            i64 for each bit set in device_present, lowest first (the
//                DeviceTimings the device reported: bit 0 transfer_in,
//                1 queue_wait, 2 compute, 3 transfer_out),
//            u64 buffer_sizes[buffer_count]               52 + 8d + 8n bytes
//
// The first word is the kind: bytes taken from the header's offset read the
// magic there and are refused, as a protobuf body refuses them.
struct CompactRun {
  enum class Kind : uint32_t { request = 1, reply = 2 };
  static constexpr size_t kFixedBytes = 12;       // kind, handle/device_present, count
  static constexpr size_t kReplyFieldBytes = 40;  // a reply's five RunReply fields
  static constexpr uint32_t kAllDevice = 0xf;     // device_present's defined bits

  Kind kind = Kind::request;
  uint32_t handle = 0;  // request
  // Reply: RunReply's fields, and the device's own timings where present.
  int64_t receive_ns = 0, queue_wait_ns = 0, compute_ns = 0, reply_wait_ns = 0,
          previous_send_ns = 0;
  uint32_t device_present = 0;
  std::array<int64_t, 4> device{};  // device[i] means something when bit i is set

  bool operator==(const CompactRun&) const = default;
};

// A frame ready to send: header, body and the buffers it declares, written
// with one gather write (transport.hpp). `hold` keeps the buffers' owner alive
// until the frame has been written.
struct OutFrame {
  std::array<std::byte, kHeaderSize> header{};
  std::string body;
  std::vector<std::span<const std::byte>> buffers;
  std::shared_ptr<void> hold;

  uint64_t size() const;     // every byte that crosses: header + body + buffers
  uint64_t payload() const;  // buffer bytes only
};

// Encodes a frame. body.buffer_sizes is (re)written from `buffers`, so the
// sizes declared always equal the bytes sent. Fails when the frame would break
// `limits` (the peer's, when known), naming the limit.
Result<OutFrame> encode_frame(uint32_t message_id, Action action, Status status, pb::Body& body,
                              std::vector<std::span<const std::byte>> buffers,
                              const Limits& limits);
// encode_frame() into `out`, whose buffers the caller has set: the header,
// the body (re-using out.body's capacity, so a frame encoded into the same
// OutFrame again allocates nothing) and body.buffer_sizes are rewritten; the
// buffers and `hold` are left as they are. On failure `out` is unspecified.
Result<void> encode_frame_into(OutFrame& out, uint32_t message_id, Action action, Status status,
                               pb::Body& body, const Limits& limits);
// A run_compact frame into `out`, whose buffers the caller has set (as
// encode_frame_into: out.body's capacity is reused, the buffers and `hold`
// are left as they are). Fails when the frame would break `limits`.
Result<void> encode_compact_into(OutFrame& out, uint32_t message_id, const CompactRun& run,
                                 const Limits& limits);
// True for a frame whose body is a CompactRun: action run_compact, status 0.
inline bool is_compact(const Header& h) {
  return h.action == Action::run_compact && h.status == Status::ok;
}
// Parses a compact body (the BodyView split_frame() returns) and checks it:
// its kind, its exact size for the device timings and buffers it declares,
// and the buffers against the limits. The declared sizes go to `sizes`.
Result<CompactRun> decode_compact(const Header& header, BodyView body, const Limits& limits,
                                  std::vector<uint64_t>& sizes);
// decode_compact() into `run`, which the parser reuses from frame to frame.
// On failure `run` is unspecified.
Result<void> decode_compact_into(const Header& header, BodyView body, const Limits& limits,
                                 CompactRun& run, std::vector<uint64_t>& sizes);

// An error reply: status from the error's code, ErrorReply body, no buffers.
OutFrame encode_error(uint32_t message_id, Action action, const Error& error);

// Pings (ping_frame.cpp) without protobuf on the path that every calibration
// round trip takes. ping_body() is the body Body serializes for an empty
// ping_request (or, with `reply`, ping_reply) and no buffers: the bytes any
// encoder of rig.proto sends for it. encode_ping_into() writes a ping frame
// with that body into `out` (no buffers, status 0; out.body's capacity is
// reused, out.hold is left as it is). whole_ping() is the length of the ping
// frame `bytes` begin with when it is whole, has status 0 and exactly that
// body within `limits` (its message id into `message_id`), and 0 for
// anything else: another frame, a ping still in pieces, or a ping encoded
// another way, which the frame parser and decode_body() take as before.
std::span<const std::byte> ping_body(bool reply);
void encode_ping_into(OutFrame& out, uint32_t message_id, bool reply);
size_t whole_ping(std::span<const std::byte> bytes, bool reply, const Limits& limits,
                  uint32_t& message_id);

// A received frame. Buffers point either into `owned` or into memory the
// placer supplied (e.g. the caller's output tensors: no copy).
//
// A run_compact frame with status 0 has its fixed fields in `compact`; its
// `body` then holds only buffer_sizes (copied from the compact body, so that
// readers check the sizes of every frame in one place) and no message case.
struct Frame {
  Header header;
  pb::Body body;
  CompactRun compact;
  std::vector<std::span<std::byte>> buffers;
  std::vector<std::vector<std::byte>> owned;
  std::optional<Error> error;  // set by the placer; buffers were discarded
  uint64_t wire_bytes = 0;     // header + body + buffers
};
// Exchanges two frames member by member (protobuf's Swap for the bodies):
// no Body is constructed, nothing is allocated.
void swap(Frame& a, Frame& b) noexcept;

// Where a frame's buffers go, decided once its body is decoded.
//  * targets empty, discard false: the parser allocates them (limits checked).
//  * targets: one span per declared buffer, of exactly the declared size.
//  * discard: the buffer bytes are read and dropped; `error` travels with the
//    frame so that its handler can answer it.
//  * borrowed: as targets, in storage of the placer's that outlives the
//    frame (e.g. a bound slot's list): copied into the frame's reused list,
//    so placing a frame allocates no list. Used when targets is empty.
struct BufferPlan {
  std::vector<std::span<std::byte>> targets;
  bool discard = false;
  std::optional<Error> error;
  std::span<const std::span<std::byte>> borrowed;
};
// Called with the frame whose body is complete: its header, body and, for a
// compact frame, `compact` are set; its buffers are not.
using Placer = std::function<BufferPlan(const Frame&)>;

// Incremental frame parser: feed it bytes in pieces of any size; complete
// frames come out of pop(). After a failure it stays failed (the stream cannot
// be resynchronised) and reports the same error.
//
// A frame's header and body that arrive whole in one feed (the common case
// for a small frame: one recv() holds it) are decoded where they lie; others
// are gathered in the parser first. Either way the same checks run, in the
// same order, with the same errors.
//
// Order: the placer of a frame runs when its body is complete. A reader whose
// placer depends on what earlier frames did (the server: hello before
// anything, release before run) feeds with feed_some(), which stops at the end
// of each frame, and pops and handles that frame before feeding the rest; the
// next frame is then placed only after the earlier one was handled. feed()
// takes every byte at once and queues the frames, for readers whose placement
// does not depend on earlier frames.
//
// Zero-copy: while a buffer is being received, direct_target() is the part of
// it still missing (for a buffer the parser owns, the part allocated so far);
// a reader may recv() straight into it and commit_direct(). A direct read
// never goes past the end of the current buffer, so it completes at most one
// frame.
class FrameParser {
 public:
  explicit FrameParser(Limits limits = {}, Placer placer = {});

  // Takes every byte; complete frames queue up for pop().
  Result<void> feed(std::span<const std::byte> bytes);
  // Takes bytes up to the end of the next complete frame and returns how many
  // it took (fewer than given when a frame completed). Takes none while a
  // complete frame waits to be popped.
  Result<size_t> feed_some(std::span<const std::byte> bytes);
  std::span<std::byte> direct_target();
  Result<void> commit_direct(size_t bytes);

  std::optional<Frame> pop();
  // The oldest complete frame, lent rather than moved out (nullptr when
  // none): it stays valid until release() or the next feed. release() ends
  // the loan; the frame's storage (its body, its buffer lists) is kept and
  // the next frame is decoded into it, so a reader that peeks and releases
  // moves no Frame and allocates no body per frame.
  Frame* peek() { return ready_count_ ? &ring_[ready_head_] : nullptr; }
  void release();
  bool has_frames() const { return ready_count_ != 0; }
  // True between frames: nothing of a next frame has arrived.
  bool idle() const { return stage_ == Stage::header && head_have_ == 0; }
  // The header of the frame that failed, when it was complete.
  const std::optional<Header>& failed_header() const { return failed_header_; }

  // The peer closed the stream: success when it stopped between frames (clean
  // end of stream), else a protocol error saying how much of which part of the
  // frame was missing (truncated frame).
  Result<void> finish() const;

  const Limits& limits() const { return limits_; }
  // Limits for the frames after the current one (a server widens them once
  // a connection completed hello). Between frames only.
  void set_limits(const Limits& limits) { limits_ = limits; }

 private:
  enum class Stage { header, body, buffers };
  Result<size_t> consume(std::span<const std::byte> bytes, bool stop_after_frame);
  Result<void> fail_with(Error error);
  // Decodes a frame's header and body, `head` (in head_, or in the bytes fed
  // when they hold both whole), into the ring's first free element, places
  // its buffers and starts the buffers stage.
  Result<void> finish_head(std::span<const std::byte> head);
  // The ring's first free element, reset for the next frame; the ring grows
  // when every element holds a ready frame.
  Frame& next_free_frame();
  // Room in the current owned buffer from its received end: at least
  // `at_least` bytes (within the declared size), growing it if needed.
  std::span<std::byte> owned_room(size_t at_least);
  void buffer_advanced(size_t n);
  void emit();

  Limits limits_;
  Placer placer_;
  Stage stage_ = Stage::header;
  // Header + body, contiguous, for a frame whose head arrives in pieces:
  // head_have_ bytes so far. It grows to the largest head seen and is not
  // shrunk, so a stream of heads of one size resizes it once.
  std::vector<std::byte> head_;
  size_t head_have_ = 0;
  Header header_;  // the frame's in head_, once its header is complete
  // The frame whose buffers are being received: an element of ring_, set by
  // finish_head() and handed out (ready_count_ counts it) by emit().
  Frame* frame_ = nullptr;
  std::vector<uint64_t> sizes_;  // its declared buffer sizes
  bool discard_ = false;
  bool owned_ = false;  // the buffers go into frame_->owned, grown as they arrive
  size_t buffer_index_ = 0;
  uint64_t buffer_have_ = 0;
  // Complete frames, oldest first: ready_count_ of ring_ from ready_head_
  // (wrapping). A frame is decoded into the ring's first free element, so
  // that emit() hands it out by counting it: no Frame moves, and the
  // element's storage (body, buffer lists) is reused by a later frame.
  std::vector<Frame> ring_;
  size_t ready_head_ = 0, ready_count_ = 0;
  std::optional<Error> failed_;
  std::optional<Header> failed_header_;
};

// Parses exactly one complete frame held in `bytes` (tests, fuzzing, tools).
Result<Frame> parse_frame(std::span<const std::byte> bytes, const Limits& limits = {});

// Appends every byte of `frame` to `out` (tests and tools; sockets use a
// gather write instead).
void append_frame(const OutFrame& frame, std::vector<std::byte>& out);

}  // namespace rig::wire

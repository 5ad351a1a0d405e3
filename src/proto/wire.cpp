#include "proto/wire.hpp"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstring>

#include "proto/wire_bytes.hpp"

namespace rig::wire {
namespace {

using detail::check_buffers;
using detail::describe;
using detail::load_u32;
using detail::store_u32;

Header read_fields(std::span<const std::byte, kHeaderSize> bytes) {
  Header h;
  h.magic = load_u32(bytes.data());
  h.body_size = load_u32(bytes.data() + 4);
  h.message_id = load_u32(bytes.data() + 8);
  h.action = static_cast<Action>(load_u32(bytes.data() + 12));
  h.status = static_cast<Status>(load_u32(bytes.data() + 16));
  return h;
}

}  // namespace

std::string to_string(Action action) {
  switch (action) {
    case Action::hello:
      return "hello";
    case Action::load_model:
      return "load_model";
    case Action::describe_model:
      return "describe_model";
    case Action::run:
      return "run";
    case Action::run_for_duration:
      return "run_for_duration";
    case Action::read_sensors:
      return "read_sensors";
    case Action::release_model:
      return "release_model";
    case Action::ping:
      return "ping";
    case Action::cancel:
      return "cancel";
    case Action::run_compact:
      return "run_compact";
  }
  return "action " + std::to_string(static_cast<uint32_t>(action));
}

bool is_known(Action action) {
  const auto v = static_cast<uint32_t>(action);
  return (v >= static_cast<uint32_t>(Action::hello) &&
          v <= static_cast<uint32_t>(Action::release_model)) ||
         action == Action::ping || action == Action::cancel || action == Action::run_compact;
}

Status status_for(ErrorCode code) {
  switch (code) {
    case ErrorCode::invalid_argument:
      return Status::invalid_argument;
    case ErrorCode::not_found:
      return Status::not_found;
    case ErrorCode::unsupported:
      return Status::unsupported;
    case ErrorCode::io:
      return Status::io;
    case ErrorCode::protocol:
      return Status::protocol;
    case ErrorCode::limit_exceeded:
      return Status::limit_exceeded;
    case ErrorCode::queue_full:
      return Status::queue_full;
    case ErrorCode::timeout:
      return Status::timeout;
    case ErrorCode::disconnected:
      return Status::disconnected;
    case ErrorCode::device:
      return Status::device;
    case ErrorCode::permission:
      return Status::permission;
    case ErrorCode::internal:
      return Status::internal;
  }
  return Status::internal;
}

Error error_for(Status status, std::string message) {
  switch (status) {
    case Status::ok:
      break;
    case Status::invalid_argument:
      return {ErrorCode::invalid_argument, std::move(message)};
    case Status::not_found:
      return {ErrorCode::not_found, std::move(message)};
    case Status::unsupported:
      return {ErrorCode::unsupported, std::move(message)};
    case Status::io:
      return {ErrorCode::io, std::move(message)};
    case Status::protocol:
      return {ErrorCode::protocol, std::move(message)};
    case Status::limit_exceeded:
      return {ErrorCode::limit_exceeded, std::move(message)};
    case Status::queue_full:
      return {ErrorCode::queue_full, std::move(message)};
    case Status::timeout:
      return {ErrorCode::timeout, std::move(message)};
    case Status::disconnected:
      return {ErrorCode::disconnected, std::move(message)};
    case Status::device:
      return {ErrorCode::device, std::move(message)};
    case Status::permission:
      return {ErrorCode::permission, std::move(message)};
    case Status::internal:
      return {ErrorCode::internal, std::move(message)};
  }
  return {ErrorCode::protocol, "unknown status " + std::to_string(static_cast<uint32_t>(status)) +
                                   (message.empty() ? "" : ": " + message)};
}

std::array<std::byte, kHeaderSize> encode_header(const Header& h) {
  std::array<std::byte, kHeaderSize> out{};
  store_u32(out.data(), h.magic);
  store_u32(out.data() + 4, h.body_size);
  store_u32(out.data() + 8, h.message_id);
  store_u32(out.data() + 12, static_cast<uint32_t>(h.action));
  store_u32(out.data() + 16, static_cast<uint32_t>(h.status));
  return out;
}

namespace {

// decode_header() and split_frame() refusals, built out of line: the checks
// run for every frame received.
[[gnu::cold, gnu::noinline]] Error bad_magic(uint32_t magic) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", magic);
  return {ErrorCode::protocol, std::string("bad magic ") + buf +
                                   " (expected 0x47495257, \"WRIG\"): not a rig peer, or "
                                   "the stream lost its framing"};
}

[[gnu::cold, gnu::noinline]] Error body_too_large(const Header& h, const Limits& limits) {
  return {ErrorCode::limit_exceeded, describe(h) + " has a body of " + std::to_string(h.body_size) +
                                         " bytes; max_body_bytes is " +
                                         std::to_string(limits.max_body_bytes)};
}

[[gnu::cold, gnu::noinline]] Error shorter_than_header(size_t size) {
  return {ErrorCode::protocol,
          "frame of " + std::to_string(size) + " bytes is shorter than the 20-byte header"};
}

[[gnu::cold, gnu::noinline]] Error body_missing(const Header& h, size_t have) {
  return {ErrorCode::protocol, describe(h) + " declares a body of " + std::to_string(h.body_size) +
                                   " bytes but has " + std::to_string(have)};
}

}  // namespace

Result<Header> decode_header(std::span<const std::byte, kHeaderSize> bytes, const Limits& limits) {
  const Header h = read_fields(bytes);
  if (h.magic != kMagic) return tl::unexpected(bad_magic(h.magic));
  if (h.body_size > limits.max_body_bytes) return tl::unexpected(body_too_large(h, limits));
  return h;
}

Result<FrameHead> split_frame(std::span<const std::byte> frame, const Limits& limits) {
  if (frame.size() < kHeaderSize) return tl::unexpected(shorter_than_header(frame.size()));
  auto header = decode_header(frame.first<kHeaderSize>(), limits);
  if (!header) return tl::unexpected(header.error());
  if (frame.size() - kHeaderSize < header->body_size)
    return tl::unexpected(body_missing(*header, frame.size() - kHeaderSize));
  return FrameHead{*header, BodyView(frame.subspan(kHeaderSize, header->body_size))};
}

namespace {

// decode_body into `message`, which the parser reuses from frame to frame (no
// new Body per frame).
Result<void> decode_body_into(const Header& header, BodyView body, const Limits& limits,
                              pb::Body& message) {
  // max_body_bytes is a u32 but ParseFromArray takes an int.
  if (body.size() > static_cast<size_t>(INT_MAX) ||
      !message.ParseFromArray(body.bytes().data(), static_cast<int>(body.size())))
    return fail(ErrorCode::protocol, describe(header) + ": its " + std::to_string(body.size()) +
                                         "-byte body is not a valid rig.wire.pb.Body");
  const auto& sizes = message.buffer_sizes();
  return check_buffers(header, std::span<const uint64_t>(sizes.data(), sizes.size()), limits);
}

}  // namespace

Result<pb::Body> decode_body(const Header& header, BodyView body, const Limits& limits) {
  pb::Body message;
  if (auto ok = decode_body_into(header, body, limits, message); !ok)
    return tl::unexpected(ok.error());
  return message;
}

uint64_t OutFrame::size() const {
  return kHeaderSize + body.size() + payload();
}

uint64_t OutFrame::payload() const {
  uint64_t n = 0;
  for (const auto& b : buffers) n += b.size();
  return n;
}

Result<void> encode_frame_into(OutFrame& out, uint32_t message_id, Action action, Status status,
                               pb::Body& body, const Limits& limits) {
  // Rewritten in place: a repeated field keeps its capacity.
  auto* sizes = body.mutable_buffer_sizes();
  if (static_cast<size_t>(sizes->size()) != out.buffers.size())
    sizes->Resize(static_cast<int>(std::min<size_t>(out.buffers.size(), INT_MAX)), 0);
  for (size_t i = 0; i < out.buffers.size(); ++i)
    sizes->Set(static_cast<int>(i), out.buffers[i].size());
  Header h;
  h.message_id = message_id;
  h.action = action;
  h.status = status;
  if (auto ok = check_buffers(h, std::span<const uint64_t>(sizes->data(), sizes->size()), limits);
      !ok)
    return ok;
  // SerializeToString clears the string first and keeps its capacity.
  if (!body.SerializeToString(&out.body))
    return fail(ErrorCode::internal, describe(h) + ": cannot serialize the body");
  if (out.body.size() > limits.max_body_bytes)
    return fail(ErrorCode::limit_exceeded,
                describe(h) + " would have a body of " + std::to_string(out.body.size()) +
                    " bytes; max_body_bytes is " + std::to_string(limits.max_body_bytes));
  h.body_size = static_cast<uint32_t>(out.body.size());
  out.header = encode_header(h);
  return {};
}

Result<OutFrame> encode_frame(uint32_t message_id, Action action, Status status, pb::Body& body,
                              std::vector<std::span<const std::byte>> buffers,
                              const Limits& limits) {
  OutFrame out;
  out.buffers = std::move(buffers);
  if (auto ok = encode_frame_into(out, message_id, action, status, body, limits); !ok)
    return tl::unexpected(ok.error());
  return out;
}

OutFrame encode_error(uint32_t message_id, Action action, const Error& error) {
  pb::Body body;
  // Bounded so that an error always fits any sane max_body_bytes.
  body.mutable_error_reply()->set_message(error.message.substr(0, 4096));
  Header h;
  h.message_id = message_id;
  h.action = action;
  h.status = status_for(error.code);
  OutFrame out;
  body.SerializeToString(&out.body);
  h.body_size = static_cast<uint32_t>(out.body.size());
  out.header = encode_header(h);
  return out;
}

FrameParser::FrameParser(Limits limits, Placer placer)
    : limits_(limits), placer_(std::move(placer)), head_(kHeaderSize) {}

Result<void> FrameParser::fail_with(Error error) {
  failed_ = error;
  return tl::unexpected(std::move(error));
}

Result<void> FrameParser::feed(std::span<const std::byte> bytes) {
  auto taken = consume(bytes, false);
  if (!taken) return tl::unexpected(taken.error());
  return {};
}

Result<size_t> FrameParser::feed_some(std::span<const std::byte> bytes) {
  if (failed_) return tl::unexpected(*failed_);
  if (ready_count_ != 0) return size_t{0};
  return consume(bytes, true);
}

Result<size_t> FrameParser::consume(std::span<const std::byte> bytes, bool stop_after_frame) {
  if (failed_) return tl::unexpected(*failed_);
  const size_t given = bytes.size();
  const size_t ready_before = ready_count_;
  while (!bytes.empty()) {
    // The next frame is placed only after the caller has handled this one.
    if (stop_after_frame && ready_count_ > ready_before) break;
    switch (stage_) {
      case Stage::header: {
        if (head_have_ == 0 && bytes.size() >= kHeaderSize) {
          // Between frames, with the header here: when its body is here too,
          // the head is decoded where it lies instead of copied into head_.
          // finish_head() checks the header as decode_header() below does.
          const Header fields = read_fields(bytes.first<kHeaderSize>());
          if (bytes.size() - kHeaderSize >= fields.body_size) {
            const size_t head_size = kHeaderSize + fields.body_size;
            if (auto ok = finish_head(bytes.first(head_size)); !ok)
              return tl::unexpected(ok.error());
            bytes = bytes.subspan(head_size);
            break;
          }
        }
        const size_t n = std::min(kHeaderSize - head_have_, bytes.size());
        std::memcpy(head_.data() + head_have_, bytes.data(), n);
        head_have_ += n;
        bytes = bytes.subspan(n);
        if (head_have_ < kHeaderSize) break;
        const std::span<const std::byte, kHeaderSize> raw(head_.data(), kHeaderSize);
        auto h = decode_header(raw, limits_);
        if (!h) {
          failed_header_ = read_fields(raw);
          return tl::unexpected(fail_with(h.error()).error());
        }
        header_ = *h;
        const size_t head_size = kHeaderSize + h->body_size;  // within max_body_bytes
        if (head_.size() < head_size) head_.resize(head_size);
        stage_ = Stage::body;
        if (h->body_size == 0)
          if (auto ok = finish_head(std::span(head_).first(kHeaderSize)); !ok)
            return tl::unexpected(ok.error());
        break;
      }
      case Stage::body: {
        const size_t head_size = kHeaderSize + header_.body_size;
        const size_t n = std::min(head_size - head_have_, bytes.size());
        std::memcpy(head_.data() + head_have_, bytes.data(), n);
        head_have_ += n;
        bytes = bytes.subspan(n);
        if (head_have_ == head_size)
          if (auto ok = finish_head(std::span(head_).first(head_size)); !ok)
            return tl::unexpected(ok.error());
        break;
      }
      case Stage::buffers: {
        const uint64_t want = sizes_[buffer_index_] - buffer_have_;
        const size_t n = static_cast<size_t>(std::min<uint64_t>(want, bytes.size()));
        if (!discard_) {
          const std::span<std::byte> room =
              owned_ ? owned_room(n)
                     : frame_->buffers[buffer_index_].subspan(static_cast<size_t>(buffer_have_));
          std::memcpy(room.data(), bytes.data(), n);
        }
        bytes = bytes.subspan(n);
        buffer_advanced(n);
        break;
      }
    }
  }
  return given - bytes.size();
}

Frame& FrameParser::next_free_frame() {
  if (ready_count_ == ring_.size()) {
    // Every element holds a ready frame (pop() and release() free them):
    // a new one goes in just before the oldest, which moves up by one, so
    // that it follows the newest in ring order.
    ring_.emplace(ring_.begin() + static_cast<std::ptrdiff_t>(ready_head_));
    ready_head_ = (ready_head_ + 1) % ring_.size();
  }
  Frame& f = ring_[(ready_head_ + ready_count_) % ring_.size()];
  // A free element was released (its buffers dropped) or popped (emptied);
  // what is left of the frame it held is reset here, keeping its storage.
  // The body is parsed in place, or cleared for a compact frame.
  f.buffers.clear();
  f.owned.clear();
  f.error.reset();
  return f;
}

Result<void> FrameParser::finish_head(std::span<const std::byte> head) {
  auto split = split_frame(head, limits_);
  if (!split) {
    // Only for a head decoded where it arrived: a head from head_ had its
    // header checked as it completed.
    failed_header_ = read_fields(head.first<kHeaderSize>());
    return fail_with(split.error());
  }
  Frame& f = next_free_frame();
  f.header = split->header;
  if (is_compact(split->header)) {
    if (auto ok = decode_compact_into(split->header, split->body, limits_, f.compact, sizes_);
        !ok) {
      failed_header_ = split->header;
      return fail_with(ok.error());
    }
    f.body.Clear();
    // Rewritten in place: the repeated field keeps its capacity.
    auto* declared = f.body.mutable_buffer_sizes();
    declared->Resize(static_cast<int>(sizes_.size()), 0);
    for (size_t i = 0; i < sizes_.size(); ++i) declared->Set(static_cast<int>(i), sizes_[i]);
  } else {
    f.compact = CompactRun{};
    if (auto ok = decode_body_into(split->header, split->body, limits_, f.body); !ok) {
      failed_header_ = split->header;
      return fail_with(ok.error());
    }
    sizes_.assign(f.body.buffer_sizes().begin(), f.body.buffer_sizes().end());
  }
  f.wire_bytes = head.size();
  for (uint64_t s : sizes_) f.wire_bytes += s;

  BufferPlan plan = placer_ ? placer_(f) : BufferPlan{};
  discard_ = plan.discard || plan.error.has_value();
  owned_ = false;
  f.error = std::move(plan.error);
  if (!discard_) {
    const std::span<const std::span<std::byte>> targets =
        plan.targets.empty() ? plan.borrowed : std::span<const std::span<std::byte>>(plan.targets);
    if (!targets.empty()) {
      bool fits = targets.size() == sizes_.size();
      for (size_t i = 0; fits && i < sizes_.size(); ++i) fits = targets[i].size() == sizes_[i];
      if (!fits) {
        failed_header_ = f.header;
        return fail_with({ErrorCode::internal, describe(f.header) +
                                                   ": buffer targets do not match the sizes "
                                                   "its body declares"});
      }
      f.buffers.assign(targets.begin(), targets.end());  // keeps the list's capacity
    } else {
      // Nothing is allocated yet: owned_room() grows each buffer as its
      // bytes arrive.
      owned_ = true;
      f.owned.resize(sizes_.size());
    }
  }
  frame_ = &f;
  head_have_ = 0;
  stage_ = Stage::buffers;
  buffer_index_ = 0;
  buffer_have_ = 0;
  buffer_advanced(0);  // skips empty buffers; emits a frame without buffers
  return {};
}

std::span<std::byte> FrameParser::owned_room(size_t at_least) {
  std::vector<std::byte>& v = frame_->owned[buffer_index_];
  const size_t have = static_cast<size_t>(buffer_have_);
  const size_t declared = static_cast<size_t>(sizes_[buffer_index_]);  // <= max_frame_bytes
  if (v.size() < have + at_least) {
    // Double, starting at kGrowBytes; reserve() first so that the capacity is
    // exactly what is asked (resize() alone may round it up past `declared`).
    const size_t grown = std::min(declared, std::max({have + at_least, 2 * v.size(), kGrowBytes}));
    v.reserve(grown);
    v.resize(grown);
  }
  return std::span(v).subspan(have);
}

void FrameParser::buffer_advanced(size_t n) {
  buffer_have_ += n;
  while (buffer_index_ < sizes_.size() && buffer_have_ == sizes_[buffer_index_]) {
    ++buffer_index_;
    buffer_have_ = 0;
  }
  if (buffer_index_ == sizes_.size()) emit();
}

void swap(Frame& a, Frame& b) noexcept {
  std::swap(a.header, b.header);
  a.body.Swap(&b.body);  // both on the heap: an internal swap
  std::swap(a.compact, b.compact);
  a.buffers.swap(b.buffers);
  a.owned.swap(b.owned);
  a.error.swap(b.error);
  std::swap(a.wire_bytes, b.wire_bytes);
}

void FrameParser::emit() {
  if (owned_) {
    // Every owned buffer has reached its declared size: no more growth, so
    // the spans stay valid.
    frame_->buffers.clear();
    for (auto& v : frame_->owned) frame_->buffers.emplace_back(v);
  }
  ++ready_count_;  // frame_ is the ring's first free element: now the newest ready one
  frame_ = nullptr;
  discard_ = false;
  owned_ = false;
  stage_ = Stage::header;
  head_have_ = 0;
}

void FrameParser::release() {
  if (ready_count_ == 0) return;
  // An upload's bytes go with the loan, not when the element is next decoded
  // into: a peer that stops between frames must not keep them held.
  Frame& done = ring_[ready_head_];
  done.buffers.clear();
  done.owned.clear();
  ready_head_ = (ready_head_ + 1) % ring_.size();
  --ready_count_;
}

std::span<std::byte> FrameParser::direct_target() {
  if (failed_ || stage_ != Stage::buffers || discard_) return {};
  if (owned_) return owned_room(1);
  return frame_->buffers[buffer_index_].subspan(static_cast<size_t>(buffer_have_));
}

Result<void> FrameParser::commit_direct(size_t bytes) {
  if (failed_) return tl::unexpected(*failed_);
  if (stage_ != Stage::buffers || discard_)
    return fail_with({ErrorCode::internal, "commit_direct outside a buffer"});
  const uint64_t room = owned_ ? frame_->owned[buffer_index_].size() - buffer_have_
                               : frame_->buffers[buffer_index_].size() - buffer_have_;
  if (bytes > room)
    return fail_with({ErrorCode::internal, "commit_direct past the end of the buffer"});
  buffer_advanced(bytes);
  return {};
}

std::optional<Frame> FrameParser::pop() {
  std::optional<Frame> f;
  if (ready_count_ == 0) return f;
  f.emplace();
  swap(*f, ring_[ready_head_]);  // the ring keeps an empty frame
  release();
  return f;
}

Result<void> FrameParser::finish() const {
  if (failed_) return tl::unexpected(*failed_);
  switch (stage_) {
    case Stage::header:
      if (head_have_ == 0) return {};
      return fail(ErrorCode::protocol, "truncated frame: the stream ended after " +
                                           std::to_string(head_have_) + " of the " +
                                           std::to_string(kHeaderSize) + " header bytes");
    case Stage::body:
      return fail(ErrorCode::protocol, "truncated frame: " + describe(header_) + " ended after " +
                                           std::to_string(head_have_ - kHeaderSize) + " of " +
                                           std::to_string(header_.body_size) + " body bytes");
    case Stage::buffers:
      return fail(ErrorCode::protocol, "truncated frame: " + describe(frame_->header) +
                                           " ended in buffer " + std::to_string(buffer_index_ + 1) +
                                           " of " + std::to_string(sizes_.size()) + " after " +
                                           std::to_string(buffer_have_) + " of " +
                                           std::to_string(sizes_[buffer_index_]) + " bytes");
  }
  return {};
}

Result<Frame> parse_frame(std::span<const std::byte> bytes, const Limits& limits) {
  FrameParser parser(limits);
  if (auto ok = parser.feed(bytes); !ok) return tl::unexpected(ok.error());
  auto frame = parser.pop();
  if (!frame) {
    if (auto ok = parser.finish(); !ok) return tl::unexpected(ok.error());
    return fail(ErrorCode::protocol, "no frame in " + std::to_string(bytes.size()) + " bytes");
  }
  if (parser.has_frames() || !parser.idle())
    return fail(ErrorCode::protocol, "bytes after the end of the frame");
  return std::move(*frame);
}

void append_frame(const OutFrame& frame, std::vector<std::byte>& out) {
  out.insert(out.end(), frame.header.begin(), frame.header.end());
  const auto* body = reinterpret_cast<const std::byte*>(frame.body.data());
  out.insert(out.end(), body, body + frame.body.size());
  for (const auto& b : frame.buffers) out.insert(out.end(), b.begin(), b.end());
}

}  // namespace rig::wire

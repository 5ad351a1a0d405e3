// The client side of a connection to rig serve (remote_connection.hpp).
// One file on purpose (over 600 lines): the framing, the pump and the fast
// paths of a lone ping or run share the connection's pending requests, its
// parser and its read buffer, and read best together.
#include "devices/remote/remote_connection.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>

#include "proto/convert.hpp"
#include "rig/units.hpp"
#include "rig/version.hpp"

namespace rig::remote {

Nanos now() {
  return steady_clock().now();
}

Nanos add_saturating(Nanos a, Nanos b) {
  if (b > Nanos(0) && a > Nanos::max() - b) return Nanos::max();
  return a + b;
}

namespace {

using wire::Action;
using wire::Status;
namespace pb = wire::pb;

// The link calibration at open: at most this many pings, stopping once this
// much time has passed.
constexpr uint32_t kCalibrationPings = 200;
constexpr std::chrono::milliseconds kCalibrationBudget{50};

}  // namespace

Result<RemoteOptions> parse_remote_spec(std::string_view spec) {
  RemoteOptions o;
  const size_t q = spec.find('?');
  auto endpoint = wire::parse_endpoint(spec.substr(0, q));
  if (!endpoint) return tl::unexpected(endpoint.error());
  o.endpoint = *endpoint;
  if (const char* env = std::getenv("RIG_TOKEN")) o.token = env;
  if (q == std::string_view::npos) return o;
  std::string_view query = spec.substr(q + 1);
  while (!query.empty()) {
    const size_t amp = query.find('&');
    const std::string_view item = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    const size_t eq = item.find('=');
    const std::string key(item.substr(0, eq));
    const std::string value(eq == std::string_view::npos ? std::string_view{}
                                                         : item.substr(eq + 1));
    if (key == "token") {
      o.token = value;
    } else if (key == "timeout") {
      auto d = parse_duration(value);
      if (!d)
        return fail(ErrorCode::invalid_argument, "remote device timeout: " + d.error().message);
      if (*d <= Nanos(0))
        return fail(ErrorCode::invalid_argument, "remote device timeout must be > 0");
      o.timeout = *d;
      o.timeout_given = true;
    } else if (key == "calibrate") {
      if (value != "0" && value != "1")
        return fail(ErrorCode::invalid_argument,
                    "remote device calibrate must be 0 or 1, got '" + value + "'");
      o.calibrate = value == "1";
    } else if (key == "compact") {
      if (value != "0" && value != "1")
        return fail(ErrorCode::invalid_argument,
                    "remote device compact must be 0 or 1, got '" + value + "'");
      o.compact = value == "1";
    } else {
      return fail(ErrorCode::invalid_argument, "unknown remote device option '" + key +
                                                   "' (known: token, timeout, calibrate, compact)");
    }
  }
  return o;
}

namespace {

std::string sizes_text(const std::vector<uint64_t>& sizes) {
  std::string s = "[";
  for (size_t i = 0; i < sizes.size(); ++i) s += (i ? ", " : "") + std::to_string(sizes[i]);
  return s + "]";
}

// The bytes of a run's outputs (payload_out).
uint64_t bytes_of(Outputs outputs) {
  uint64_t n = 0;
  for (const auto& out : outputs) n += out.size();
  return n;
}

}  // namespace

RemoteConnection::RemoteConnection(RemoteOptions options,
                                   std::function<void(Completion)> on_completion)
    : options_(std::move(options)),
      on_completion_(std::move(on_completion)),
      parser_(wire::Limits{},
              [this](const wire::Frame& frame) { return place(frame.header, frame.body); }),
      staging_(64 * 1024) {}

Result<void> RemoteConnection::open() {
  auto socket = wire::connect_to(options_.endpoint);
  if (!socket) return tl::unexpected(socket.error());
  socket_ = std::move(*socket);
  // The socket stays blocking: writes and most reads pass MSG_DONTWAIT, and
  // a wait with nothing to write blocks in recv() itself, in slices of
  // kBlockingSlice so that deadlines are still checked.
  const timeval slice{static_cast<time_t>(kBlockingSlice.count() / 1'000'000),
                      static_cast<suseconds_t>(kBlockingSlice.count() % 1'000'000)};
  if (::setsockopt(socket_.fd(), SOL_SOCKET, SO_RCVTIMEO, &slice, sizeof slice) != 0)
    return fail(ErrorCode::io, std::string("setsockopt(SO_RCVTIMEO): ") + std::strerror(errno));
  pb::Body body;
  auto* h = body.mutable_hello_request();
  h->set_min_version(wire::kMinVersion);
  h->set_max_version(wire::kMaxVersion);
  h->set_token(options_.token);
  h->set_client(std::string(kVersionString) + " remote device");
  auto reply = call(Action::hello, body, {}, Nanos(0), std::nullopt, false);
  if (!reply) {
    // A hello carries nothing of the user's to be too large: a server at
    // its connection limits is busy (a device failure, exit 3), not bad input.
    Error e = reply.error();
    if (e.code == ErrorCode::limit_exceeded) e.code = ErrorCode::queue_full;
    return tl::unexpected(e);
  }
  if (!reply->frame.body.has_hello_reply()) return wrong_reply(reply->frame);
  const auto& r = reply->frame.body.hello_reply();
  if (r.version() < wire::kMinVersion || r.version() > wire::kMaxVersion)
    return fail(ErrorCode::protocol, "server chose protocol version " +
                                         std::to_string(r.version()) + ", outside 1 to " +
                                         std::to_string(wire::kMaxVersion));
  struct Bound {
    const char* what;
    uint32_t declared;
    uint32_t limit;
  };
  for (const Bound& b : {Bound{"queue_depth", r.queue_depth(), kMaxServerQueueDepth},
                         Bound{"device_queue_depth", r.device_queue_depth(), kMaxDeviceQueueDepth}})
    if (b.declared > b.limit)
      return fail(ErrorCode::protocol, std::string("the server's hello declares a ") + b.what +
                                           " of " + std::to_string(b.declared) +
                                           "; a client accepts at most " + std::to_string(b.limit) +
                                           " (the client allocates a buffer set per slot)");
  depth_ = std::max<uint32_t>(1, r.queue_depth());
  if (r.has_limits()) server_limits_ = wire::from_pb(r.limits());
  // Runs skip protobuf when the server takes run_compact (an older one
  // does not say so) and the spec does not turn it off.
  compact_ = options_.compact && r.compact_run();
  hello_ = r;
  return {};
}

// A server without ping answers unsupported: no floor.
Result<std::optional<LinkFloor>> RemoteConnection::calibrate() {
  std::vector<Nanos> trips;
  trips.reserve(kCalibrationPings);
  const Nanos start = now();
  // At least one ping, even when the thread lost the CPU past the budget
  // before its first look at the clock.
  while (trips.empty() ||
         (trips.size() < kCalibrationPings && now() - start < kCalibrationBudget)) {
    const Nanos t0 = now();
    auto pinged = ping();
    const Nanos t1 = now();
    if (!pinged) {
      // The server's answer to the ping, not a connection that died (whose
      // cause may carry any code).
      if (pinged.error().code == ErrorCode::unsupported && !dead_)
        return std::optional<LinkFloor>();
      return tl::unexpected(pinged.error());
    }
    trips.push_back(t1 - t0);
  }
  LinkFloor f;
  f.round_trips = static_cast<uint32_t>(trips.size());
  f.spent = now() - start;
  std::sort(trips.begin(), trips.end());
  f.min = trips.front();
  f.max = trips.back();
  f.median = trips[trips.size() / 2];
  if (trips.size() % 2 == 0) f.median = (trips[trips.size() / 2 - 1] + f.median) / 2;
  return std::optional<LinkFloor>(f);
}

// One ping, encoded without protobuf. Its reply, when it arrives whole in
// the first read with the canonical body (wire::whole_ping), is taken
// straight from the read buffer; any other reply goes through the parser
// and is checked as call() checks it.
Result<void> RemoteConnection::ping() {
  auto id = send_encoded(Action::ping, {}, Pending{}, Nanos(0), false,
                         [](wire::OutFrame& frame, uint32_t message_id) {
                           wire::encode_ping_into(frame, message_id, false);
                           return Result<void>{};
                         });
  if (!id) return tl::unexpected(id.error());
  if (lone_read_pays())
    if (read_lone([&](std::span<const std::byte> bytes) { return take_lone_ping(bytes, *id); }))
      return {};
  auto reply = await_reply(*id);
  if (!reply) return tl::unexpected(reply.error());
  if (!reply->frame.body.has_ping_reply()) return wrong_reply(reply->frame);
  return {};
}

// A run request of `inputs`: run_compact when the server takes
// it, else run with a body kept in its run_request case (no submessage
// allocated per run; encoding rewrites its buffer sizes).
Result<uint32_t> RemoteConnection::send_run(uint32_t handle, Inputs inputs, Pending p) {
  if (compact_) {
    wire::CompactRun request;
    request.handle = handle;
    return send_encoded(Action::run_compact, inputs, p, Nanos(0), true,
                        [&](wire::OutFrame& frame, uint32_t id) {
                          return wire::encode_compact_into(frame, id, request, server_limits_);
                        });
  }
  run_body_.mutable_run_request()->set_handle(handle);
  return send_request(Action::run, run_body_, inputs, p, Nanos(0), true);
}

// call() without a Reply: on_frame() turns the reply into the run's
// timings (or error) where the parser lends it, so no frame is moved.
Result<InferenceTimings> RemoteConnection::run(uint32_t handle, Inputs inputs, Outputs outputs) {
  if (dead_) return tl::unexpected(*dead_);
  Pending p;
  p.has_outputs = true;
  p.outputs = outputs;
  p.sync_run = true;
  auto id = send_run(handle, inputs, p);
  if (!id) return tl::unexpected(id.error());
  const auto answered = [&] { return run_answer_ && run_answer_->first == *id; };
  if (compact_ && lone_read_pays())
    read_lone([&](std::span<const std::byte> bytes) { return take_lone_run(bytes, *id); });
  auto ok = pump(Nanos::max(), answered);
  if (!answered()) return tl::unexpected(ok.error());
  Result<InferenceTimings> r = std::move(run_answer_->second);
  run_answer_.reset();
  if (!r) return tl::unexpected(server_full(r.error()));
  return r;
}

Result<void> RemoteConnection::submit(uint32_t handle, Inputs inputs, Outputs outputs,
                                      BindingId binding, uint64_t tag) {
  if (dead_) return tl::unexpected(*dead_);
  Pending p;
  p.async = true;
  p.has_outputs = true;
  p.outputs = outputs;
  p.binding = binding;
  p.tag = tag;
  auto id = send_run(handle, inputs, p);
  if (!id) return tl::unexpected(id.error());
  // A failure while sending arrives as this request's completion.
  return {};
}

Result<void> RemoteConnection::await_completion(Nanos timeout) {
  const uint64_t before = completions_;
  return pump(add_saturating(now(), timeout), [&] { return completions_ != before; });
}

void RemoteConnection::send_discarded(Action action, pb::Body& body) {
  Pending p;
  p.discard = true;
  (void)send_request(action, body, {}, p, Nanos(0), false);
}

void RemoteConnection::complete(const Pending& p, std::optional<Error> error,
                                const InferenceTimings& timings) {
  Completion c;
  c.tag = p.tag;
  c.binding = p.binding;
  c.error = std::move(error);
  c.timings = timings;
  c.completed_at = now();
  ++completions_;
  on_completion_(std::move(c));
}

// Whether a successful reply carries a run's reply: a RunReply, or the
// compact reply of a run_compact request.
bool RemoteConnection::has_run_reply(const wire::Frame& frame) {
  if (frame.header.action == Action::run_compact)
    return wire::is_compact(frame.header) && frame.compact.kind == wire::CompactRun::Kind::reply;
  return frame.body.has_run_reply();
}

tl::unexpected<Error> RemoteConnection::wrong_reply(const wire::Frame& frame) const {
  return fail(ErrorCode::protocol, "reply to message " + std::to_string(frame.header.message_id) +
                                       " (" + wire::to_string(frame.header.action) +
                                       ") does not carry its reply body");
}

Error RemoteConnection::server_error(const wire::Frame& frame) {
  if (!frame.body.has_error_reply())
    return {ErrorCode::protocol, "error reply " +
                                     std::to_string(static_cast<uint32_t>(frame.header.status)) +
                                     " without an ErrorReply body"};
  return wire::error_for(frame.header.status, "server: " + frame.body.error_reply().message());
}

// A run the server refused for want of room (its max_pending_bytes: the
// run's buffers were checked against the model when it loaded) found the
// server full: a device-side failure (exit 3), not bad input.
Error RemoteConnection::server_full(Error e) {
  if (e.code == ErrorCode::limit_exceeded) e.code = ErrorCode::queue_full;
  return e;
}

InferenceTimings RemoteConnection::timings_of(const Reply& reply) const {
  return timings_of(reply.frame, reply.started, reply.completed);
}
// A run's timings from its reply (has_run_reply), in either encoding.
InferenceTimings RemoteConnection::timings_of(const wire::Frame& frame, Nanos started,
                                              Nanos completed) const {
  if (frame.header.action == Action::run_compact)
    return timings_of(frame.compact, started, completed);
  wire::CompactRun r;
  {
    const auto& m = frame.body.run_reply();
    const auto& d = m.device();
    r.receive_ns = m.receive_ns();
    r.queue_wait_ns = m.queue_wait_ns();
    r.compute_ns = m.compute_ns();
    const bool present[4] = {d.has_transfer_in_ns(), d.has_queue_wait_ns(), d.has_compute_ns(),
                             d.has_transfer_out_ns()};
    r.device = {d.transfer_in_ns(), d.queue_wait_ns(), d.compute_ns(), d.transfer_out_ns()};
    for (uint32_t i = 0; i < 4; ++i)
      if (present[i]) r.device_present |= 1u << i;
  }
  return timings_of(r, started, completed);
}
InferenceTimings RemoteConnection::timings_of(const wire::CompactRun& r, Nanos started,
                                              Nanos completed) const {
  const auto device = [&](int i) { return r.device_present >> i & 1 ? r.device[i] : 0; };
  // The server's figures are untrusted: their sums saturate rather than
  // wrap, and the engine refuses what lies outside [0, elapsed].
  const auto sum = [](int64_t a, int64_t b) {
    int64_t out = 0;
    if (__builtin_add_overflow(a, b, &out)) return b > 0 ? Nanos::max() : Nanos::min();
    return Nanos(out);
  };
  InferenceTimings t;
  t.compute = Nanos(r.compute_ns);
  t.transfer_in = sum(r.receive_ns, device(0));
  t.queue_wait = sum(r.queue_wait_ns, device(1));
  t.transfer_out = sum((completed - started).count(), device(3));
  return t;
}

// Queues a request and writes as much of it as the socket takes now. With
// nothing queued before it, the request is encoded into a frame kept for
// the next one and written from there: a request the socket takes at once
// allocates nothing.
Result<uint32_t> RemoteConnection::send_request(Action action, pb::Body& body,
                                                std::span<const std::span<const std::byte>> buffers,
                                                Pending pending, Nanos extra_timeout,
                                                bool payload) {
  return send_encoded(
      action, buffers, pending, extra_timeout, payload, [&](wire::OutFrame& frame, uint32_t id) {
        return wire::encode_frame_into(frame, id, action, Status::ok, body, server_limits_);
      });
}
// send_request() with the frame encoded by `encode(frame, id)` into the
// frame kept for the next request (its buffers already set).
template <class Encode>
Result<uint32_t> RemoteConnection::send_encoded(Action action,
                                                std::span<const std::span<const std::byte>> buffers,
                                                Pending pending, Nanos extra_timeout, bool payload,
                                                const Encode& encode) {
  if (dead_) return tl::unexpected(*dead_);
  const uint32_t id = next_id_++;
  if (next_id_ == 0) next_id_ = 1;  // 0 is the server's "no message" id
  wire::OutFrame& frame = spare_;
  frame.hold.reset();
  frame.buffers.assign(buffers.begin(), buffers.end());
  if (auto ok = encode(frame, id); !ok) {
    frame.buffers.clear();
    return tl::unexpected(ok.error());
  }
  pending.action = action;
  pending.deadline = add_saturating(add_saturating(now(), options_.timeout), extra_timeout);
  pending_.emplace_back(id, pending);
  if (out_.empty()) {
    auto n = wire::write_frame_some(socket_, frame, 0, true);
    if (!n) {
      frame.buffers.clear();
      // Kills the connection and fails this request.
      (void)lost(n.error());
      return id;
    }
    bytes_.link_in += n->bytes;
    if (n->bytes == frame.size()) {
      if (payload) bytes_.payload_in += frame.payload();
      frame.buffers.clear();
      return id;
    }
    out_.push_back({std::move(frame), n->bytes, payload});
    frame = wire::OutFrame{};
    return id;
  }
  out_.push_back({std::move(frame), 0, payload});
  frame = wire::OutFrame{};
  (void)flush();  // a failure kills the connection and fails this request
  return id;
}

// A request and its reply. The reply's status is checked; its body is the
// caller's to check.
// `while_waiting` runs before each wait of the pump.
Result<RemoteConnection::Reply> RemoteConnection::call(
    Action action, pb::Body& body, std::span<const std::span<const std::byte>> buffers,
    Nanos extra_timeout, std::optional<Outputs> outputs, bool payload,
    const std::function<void()>& while_waiting) {
  Pending p;
  p.has_outputs = outputs.has_value();
  if (outputs) p.outputs = *outputs;
  auto id = send_request(action, body, buffers, p, extra_timeout, payload);
  if (!id) return tl::unexpected(id.error());
  return await_reply(*id, while_waiting);
}

// The reply to request `id`, sent and pending (call()).
Result<RemoteConnection::Reply> RemoteConnection::await_reply(
    uint32_t id, const std::function<void()>& while_waiting) {
  const auto answered = [&] {
    return std::find_if(sync_done_.begin(), sync_done_.end(),
                        [&](const auto& e) { return e.first == id; });
  };
  auto ok = pump(Nanos::max(), [&] {
    if (answered() != sync_done_.end()) return true;
    if (while_waiting) while_waiting();
    return false;
  });
  auto it = answered();
  if (it == sync_done_.end()) return tl::unexpected(ok.error());
  Result<Reply> reply = std::move(it->second);
  sync_done_.erase(it);
  if (reply && reply->frame.header.status != Status::ok)
    return tl::unexpected(server_error(reply->frame));
  return reply;
}

// Moves bytes both ways until done() or `deadline`; fails the connection
// when a pending request outlives its own deadline.
template <class Done>
Result<void> RemoteConnection::pump(Nanos deadline, const Done& done) {
  for (;;) {
    if (done()) return {};
    if (dead_) return tl::unexpected(*dead_);
    if (auto ok = flush(); !ok) return ok;
    if (done()) return {};
    const Nanos t = now();
    Nanos wake = deadline;
    const std::pair<uint32_t, Pending>* oldest = nullptr;
    for (const auto& entry : pending_)
      if (entry.second.deadline < wake) {
        wake = entry.second.deadline;
        oldest = &entry;
      }
    if (t >= wake) {
      if (!oldest) return fail(ErrorCode::timeout, "no completion within the wait's timeout");
      return tl::unexpected(kill(
          {ErrorCode::timeout, "no reply from " + options_.endpoint.to_string() + " to message " +
                                   std::to_string(oldest->first) + " (" +
                                   wire::to_string(oldest->second.action) + ") in time (timeout " +
                                   format_duration(options_.timeout) + "); connection closed"}));
    }
    if (out_.empty() && wake - t > kBlockingSlice) {
      // Nothing to write: one blocking recv() instead of poll() + recv().
      if (auto ok = read_available(true); !ok) return ok;
      continue;
    }
    const auto wait_ms = std::chrono::ceil<std::chrono::milliseconds>(wake - t).count();
    pollfd p{socket_.fd(), static_cast<short>(POLLIN | (out_.empty() ? 0 : POLLOUT)), 0};
    const int r = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(wait_ms, INT_MAX)));
    if (r < 0) {
      if (errno == EINTR) continue;
      return tl::unexpected(kill({ErrorCode::io, std::string("poll: ") + std::strerror(errno)}));
    }
    if (p.revents & (POLLIN | POLLHUP | POLLERR))
      if (auto ok = read_available(false); !ok) return ok;
  }
}

Result<void> RemoteConnection::flush() {
  while (!out_.empty()) {
    Outgoing& o = out_.front();
    auto n = wire::write_frame_some(socket_, o.frame, o.offset, true);
    if (!n) return tl::unexpected(lost(n.error()));
    bytes_.link_in += n->bytes;
    o.offset += n->bytes;
    if (n->would_block) return {};
    if (o.offset < o.frame.size()) continue;
    if (o.payload) bytes_.payload_in += o.frame.payload();
    out_.pop_front();
  }
  return {};
}

// Reads what has arrived; with `block_first`, the first recv() waits for
// data (up to kBlockingSlice).
Result<void> RemoteConnection::read_available(bool block_first) {
  for (int i = 0; i < 64; ++i) {
    auto direct = parser_.direct_target();
    auto n = wire::read_some(socket_, direct.empty() ? std::span(staging_) : direct,
                             !(block_first && i == 0));
    if (!n) return tl::unexpected(lost(n.error()));
    if (n->would_block) return {};
    if (auto ok = take_read(*n, direct); !ok) return ok;
    // A short read drained the socket: poll() says when there is more,
    // which saves a recv() that would only fail with EAGAIN.
    if (n->bytes < (direct.empty() ? staging_.size() : direct.size())) return {};
  }
  return {};
}

// Kills the connection after a failed read or write.
Error RemoteConnection::lost(const Error& e) {
  return kill({e.code, "connection to " + options_.endpoint.to_string() + " lost: " + e.message});
}

// Whether the request just sent is the only one in flight, with nothing
// left to write or parse, and a first read that blocks a whole slice is
// allowed (the deadline is further away, as pump() decides).
bool RemoteConnection::lone_read_pays() const {
  return pending_.size() == 1 && out_.empty() && parser_.idle() &&
         options_.timeout > kBlockingSlice;
}

// The first read of a lone request (lone_read_pays()): a reply that
// arrived whole in it is taken straight from the read buffer by
// `take(bytes)` (take_lone_run, take_lone_ping), which changes nothing and
// returns false for anything else; that goes to the frame parser as
// usual, and the pump goes on from there. True when `take` took it.
template <class Take>
bool RemoteConnection::read_lone(const Take& take) {
  auto n = wire::read_some(socket_, staging_, false);  // waits up to kBlockingSlice
  if (!n) {
    lost(n.error());
    return false;
  }
  if (n->would_block) return false;
  if (!n->eof && take(std::span<const std::byte>(staging_).first(n->bytes))) return true;
  (void)take_read(*n, {});  // a failure kills the connection, which answers the request
  return false;
}

// The canonical ping reply to `id`, the one request pending, when `bytes`
// are exactly that reply; false, having changed nothing, otherwise.
bool RemoteConnection::take_lone_ping(std::span<const std::byte> bytes, uint32_t id) {
  uint32_t replied = 0;
  if (wire::whole_ping(bytes, true, parser_.limits(), replied) != bytes.size() || replied != id ||
      pending_.size() != 1 || pending_.front().first != id)
    return false;
  bytes_.link_out += bytes.size();
  pending_.pop_back();
  return true;
}

// The run_compact reply to `id`, the one request pending, when `bytes` are
// exactly that whole reply with outputs of the binding's sizes: checked as
// the parser and on_frame() check it, its outputs copied into the
// binding's buffers. Its header and last byte arrived in the same read, so
// the client's part of transfer_out is 0 (reply_completed()).
// False, having changed nothing, for anything else.
bool RemoteConnection::take_lone_run(std::span<const std::byte> bytes, uint32_t id) {
  const wire::Limits& limits = parser_.limits();
  if (bytes.size() < wire::kHeaderSize) return false;
  auto h = wire::decode_header(bytes.first<wire::kHeaderSize>(), limits);
  if (!h || h->message_id != id || !wire::is_compact(*h) ||
      bytes.size() - wire::kHeaderSize < h->body_size)
    return false;
  auto head = wire::split_frame(bytes, limits);
  if (!head ||
      !wire::decode_compact_into(head->header, head->body, limits, lone_reply_, lone_sizes_) ||
      lone_reply_.kind != wire::CompactRun::Kind::reply)
    return false;
  if (pending_.size() != 1 || pending_.front().first != id) return false;
  const Pending& p = pending_.front().second;
  const Outputs outputs = p.outputs;
  if (lone_sizes_.size() != outputs.size()) return false;
  size_t at = wire::kHeaderSize + h->body_size;
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (lone_sizes_[i] != outputs[i].size()) return false;
    at += outputs[i].size();
  }
  if (at != bytes.size()) return false;  // a partial reply, or more behind it
  at = wire::kHeaderSize + h->body_size;
  for (const auto& out : outputs) {
    std::memcpy(out.data(), bytes.data() + at, out.size());
    at += out.size();
  }
  bytes_.link_out += bytes.size();
  bytes_.payload_out += bytes_of(outputs);
  const Nanos t = now();
  pending_.pop_back();
  run_answer_.emplace(id, timings_of(lone_reply_, t, t));
  return true;
}

// Handles what one read brought (`n`, into `direct` or else staging_):
// the end of the stream, or bytes for the parser, whose complete frames go
// to on_frame(). A failure kills the connection.
Result<void> RemoteConnection::take_read(const wire::IoStatus& n, std::span<std::byte> direct) {
  if (n.eof) {
    auto end = parser_.finish();
    return tl::unexpected(
        kill(end ? Error{ErrorCode::disconnected, "the server at " + options_.endpoint.to_string() +
                                                      " closed the connection"}
                 : Error{ErrorCode::disconnected,
                         "the server at " + options_.endpoint.to_string() +
                             " closed the connection mid-reply: " + end.error().message}));
  }
  bytes_.link_out += n.bytes;
  ++reads_;
  Result<void> fed;
  if (!direct.empty()) {
    fed = parser_.commit_direct(n.bytes);
    deliver_frames();
  } else {
    // One frame at a time, like the server: a reply is handled before
    // the next one is placed.
    std::span<const std::byte> rest = std::span(staging_).first(n.bytes);
    while (!rest.empty() && !dead_) {
      auto taken = parser_.feed_some(rest);
      if (!taken) {
        fed = tl::unexpected(taken.error());
        break;
      }
      rest = rest.subspan(*taken);
      deliver_frames();
    }
  }
  // A reply over this client's limits is the server's fault: protocol.
  if (!fed)
    return tl::unexpected(kill(
        {fed.error().code == ErrorCode::limit_exceeded ? ErrorCode::protocol : fed.error().code,
         "reply stream from " + options_.endpoint.to_string() + ": " + fed.error().message}));
  if (dead_) return tl::unexpected(*dead_);
  return {};
}

// The parser's complete frames, lent to on_frame() one by one.
void RemoteConnection::deliver_frames() {
  while (wire::Frame* frame = parser_.peek()) {
    on_frame(*frame);
    parser_.release();
  }
}

// Run outputs go straight into the caller's output buffers.
std::vector<std::pair<uint32_t, RemoteConnection::Pending>>::iterator
RemoteConnection::find_pending(uint32_t id) {
  return std::find_if(pending_.begin(), pending_.end(),
                      [&](const auto& e) { return e.first == id; });
}

wire::BufferPlan RemoteConnection::place(const wire::Header& h, const pb::Body& body) {
  wire::BufferPlan plan;
  auto it = find_pending(h.message_id);
  if (it == pending_.end()) {
    plan.discard = true;
    return plan;  // on_frame fails the connection
  }
  Pending& p = it->second;
  p.reply_started = now();
  p.placed_read = reads_;
  const bool outputs =
      h.status == Status::ok && (p.action == Action::run || p.action == Action::run_compact ||
                                 p.action == Action::run_for_duration);
  const bool bound = outputs && p.has_outputs;
  // Compared in place: a reply allocates nothing here unless it is wrong.
  const auto& declared = body.buffer_sizes();
  bool match = declared.size() == (bound ? static_cast<int>(p.outputs.size()) : 0);
  for (int i = 0; match && bound && i < declared.size(); ++i)
    match = declared.Get(i) == p.outputs[static_cast<size_t>(i)].size();
  if (!match) {
    std::vector<uint64_t> sizes(declared.begin(), declared.end()), expected;
    if (bound)
      for (const auto& out : p.outputs) expected.push_back(out.size());
    plan.error = Error{ErrorCode::protocol, "reply to message " + std::to_string(h.message_id) +
                                                " (" + wire::to_string(p.action) +
                                                ") carries buffers of " + sizes_text(sizes) +
                                                " bytes, expected " + sizes_text(expected)};
    return plan;
  }
  // The binding outlives the frame: lent, not copied into a new list.
  if (bound) plan.borrowed = p.outputs;
  return plan;
}

// `frame` is lent by the parser: what outlives this call is moved out.
void RemoteConnection::on_frame(wire::Frame& frame) {
  const uint32_t id = frame.header.message_id;
  auto it = find_pending(id);
  if (it == pending_.end()) {
    if (frame.header.status != Status::ok && frame.body.has_error_reply())
      kill(server_error(frame));  // the server gave up on the connection
    else
      kill({ErrorCode::protocol, "reply to message " + std::to_string(id) +
                                     ", which is not pending; connection closed"});
    return;
  }
  Pending p = it->second;
  // Order does not matter: the last one takes its place.
  if (it != pending_.end() - 1) *it = std::move(pending_.back());
  pending_.pop_back();
  if (p.discard) return;
  if (p.sync_run) {
    const Nanos completed = reply_completed(p);
    Result<InferenceTimings> r;
    if (frame.error) {
      r = tl::unexpected(*frame.error);
    } else if (frame.header.action != p.action) {
      r = fail(ErrorCode::protocol, "reply to message " + std::to_string(id) + " (" +
                                        wire::to_string(p.action) + ") came back as " +
                                        wire::to_string(frame.header.action));
    } else if (frame.header.status != Status::ok) {
      r = tl::unexpected(server_error(frame));
    } else if (!has_run_reply(frame)) {
      r = wrong_reply(frame);
    } else {
      bytes_.payload_out += bytes_of(p.outputs);
      r = timings_of(frame, p.reply_started, completed);
    }
    run_answer_.emplace(id, std::move(r));
    return;
  }
  Result<Reply> reply = Reply{std::move(frame), p.reply_started, reply_completed(p)};
  if (reply->frame.error) {
    reply = tl::unexpected(*reply->frame.error);
  } else if (reply->frame.header.action != p.action) {
    reply = fail(ErrorCode::protocol, "reply to message " + std::to_string(id) + " (" +
                                          wire::to_string(p.action) + ") came back as " +
                                          wire::to_string(reply->frame.header.action));
  }
  if (!p.async) {
    sync_done_.emplace_back(id, std::move(reply));
    return;
  }
  if (!reply) return complete(p, reply.error(), {});
  if (reply->frame.header.status != Status::ok)
    return complete(p, server_full(server_error(reply->frame)), {});
  if (!has_run_reply(reply->frame)) return complete(p, wrong_reply(reply->frame).value(), {});
  bytes_.payload_out += bytes_of(p.outputs);
  complete(p, std::nullopt, timings_of(*reply));
}

// When the last byte of `p`'s reply arrived: with its header in the same
// read, the time between them cannot be seen and is 0 (transfer_out).
Nanos RemoteConnection::reply_completed(const Pending& p) const {
  return p.placed_read == reads_ ? p.reply_started : now();
}

// The connection is unusable: every pending request fails with `error`.
Error RemoteConnection::kill(Error error) {
  if (dead_) return *dead_;
  dead_ = error;
  socket_.shutdown();
  out_.clear();
  for (auto& [id, p] : pending_) {
    if (p.discard) continue;
    if (p.sync_run) {
      run_answer_.emplace(id, tl::unexpected(error));
      continue;
    }
    if (!p.async) {
      sync_done_.emplace_back(id, tl::unexpected(error));
      continue;
    }
    complete(p, error, {});
  }
  pending_.clear();
  return error;
}

}  // namespace rig::remote

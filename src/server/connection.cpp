// A connection's I/O (connection.hpp): reading and framing, writing and its
// queue, back-pressure, deadlines and the close. One file on purpose: the
// reader, the writer and the closing wait share one lock, one queue and the
// counts they wait on, whose hand-offs a split would spread over files.
#include "server/connection.hpp"

#include "rig/units.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <exception>
#include <system_error>

namespace rig::server {
namespace {

using wire::Action;
using wire::Status;

constexpr size_t kStagingBytes = 64 * 1024;
// After an error that breaks framing, input is read and dropped (so that the
// client sees the error reply rather than a reset) up to this much.
constexpr size_t kDrainBytes = 16 << 20;
constexpr int kDrainPollMs = 1000;
// The least a connection may queue before its reader pauses, whatever
// max_pending_bytes / max_connections gives: one large reply must fit.
constexpr uint64_t kMinReplyShare = 64 * 1024;
// Receive-timeout slices of the reader's blocking reads (set_read_slice).
constexpr int64_t kSliceDivisor = 8;
constexpr std::chrono::milliseconds kMinSlice{1};
constexpr std::chrono::seconds kMaxSlice{1};

// Before hello a connection may send what a hello needs and no more: a
// body of at most 64 KiB (versions and a token), no buffers. Anything larger
// breaks framing: answered, then the connection is closed.
constexpr uint32_t kHelloBodyBytes = 64 * 1024;

wire::Limits hello_limits(const wire::Limits& server) {
  wire::Limits l = server;
  l.max_body_bytes = std::min(server.max_body_bytes, kHelloBodyBytes);
  l.max_buffers = 0;
  l.max_buffer_bytes = 0;
  l.max_model_bytes = 0;
  l.max_frame_bytes = 0;
  return l;
}

uint64_t reply_share_of(const ServerSettings& s) {
  const uint64_t share = s.max_pending_bytes / std::max<uint64_t>(1, s.max_connections);
  return std::max(share, kMinReplyShare);
}

}  // namespace

std::string peer_name(const wire::Socket& s) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (::getpeername(s.fd(), reinterpret_cast<sockaddr*>(&ss), &len) != 0) return "local";
  if (ss.ss_family == AF_UNIX) return "unix";
  char host[64] = "?";
  uint16_t port = 0;
  if (ss.ss_family == AF_INET) {
    const auto* a = reinterpret_cast<const sockaddr_in*>(&ss);
    ::inet_ntop(AF_INET, &a->sin_addr, host, sizeof host);
    port = ntohs(a->sin_port);
  } else if (ss.ss_family == AF_INET6) {
    const auto* a = reinterpret_cast<const sockaddr_in6*>(&ss);
    ::inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof host);
    port = ntohs(a->sin6_port);
  }
  return std::string(host) + ":" + std::to_string(port);
}

Connection::Connection(ServerContext& server, wire::Socket socket, uint64_t id)
    : server_(server),
      socket_(std::move(socket)),
      id_(id),
      peer_(peer_name(socket_)),
      reply_share_(std::min(kMinReplyShare, reply_share_of(server.settings))) {
  last_input_ = steady_clock().now();
}

void Connection::start() {
  reader_ = std::thread([this] { reader_main(); });
}

void Connection::shutdown() {
  {
    std::lock_guard lock(write_mu_);
    stopping_ = true;
    announce_gone_locked();
    socket_.shutdown();  // under the lock: close_down() may close it
  }
  write_cv_.notify_all();
}

void Connection::join() {
  if (reader_.joinable()) reader_.join();
  {
    std::lock_guard lock(write_mu_);
    writer_exit_ = true;
  }
  write_cv_.notify_all();
  if (writer_.joinable()) writer_.join();
}

std::string Connection::who() const {
  return "connection " + std::to_string(id_) + " (" + peer_ + ")";
}

void Connection::abort(const std::string& why) {
  ++server_.closed_on_error;
  server_.log(who() + ": closing: " + why);
  std::lock_guard lock(write_mu_);
  mark_dead_locked();
}

void Connection::owe_answer() {
  answers_owed_.fetch_add(1);
}

void Connection::answered() {
  if (answers_owed_.fetch_sub(1) != 1 || !awaiting_answers_.load()) return;
  {
    std::lock_guard lock(write_mu_);  // the waiter is waiting, or has not looked yet
  }
  write_cv_.notify_all();
}

// ---- writing ---------------------------------------------------------------

void Connection::reply(uint32_t id, Action action, wire::pb::Body& body,
                       std::vector<std::span<const std::byte>> buffers,
                       std::shared_ptr<void> hold) {
  auto frame =
      wire::encode_frame(id, action, Status::ok, body, std::move(buffers), server_.settings.limits);
  if (!frame) return reply_error(id, action, frame.error());
  frame->hold = std::move(hold);
  send(std::move(*frame));
}

void Connection::reply_reusing(uint32_t id, Action action, wire::pb::Body& body,
                               std::span<const std::span<std::byte>> buffers,
                               std::shared_ptr<void> hold, Nanos made_at) {
  send_reusing(id, action, buffers, std::move(hold), made_at, [&](wire::OutFrame& frame) {
    return wire::encode_frame_into(frame, id, action, Status::ok, body, server_.settings.limits);
  });
}

void Connection::reply_compact(uint32_t id, const wire::CompactRun& run,
                               std::span<const std::span<std::byte>> buffers,
                               std::shared_ptr<void> hold, Nanos made_at) {
  send_reusing(id, Action::run_compact, buffers, std::move(hold), made_at,
               [&](wire::OutFrame& frame) {
                 return wire::encode_compact_into(frame, id, run, server_.settings.limits);
               });
}

void Connection::reply_ping(uint32_t id) {
  thread_local wire::OutFrame frame;
  wire::encode_ping_into(frame, id, true);
  send_from(frame);
}

template <class Encode>
void Connection::send_reusing(uint32_t id, Action action,
                              std::span<const std::span<std::byte>> buffers,
                              std::shared_ptr<void> hold, Nanos made_at, const Encode& encode) {
  thread_local wire::OutFrame frame;
  frame.buffers.clear();
  for (const auto& b : buffers) frame.buffers.emplace_back(b);
  if (auto ok = encode(frame); !ok) {
    frame.buffers.clear();
    return reply_error(id, action, ok.error());
  }
  frame.hold = std::move(hold);
  send_from(frame, made_at);
  // Written (or moved into the queue): nothing of this reply stays here.
  frame.hold.reset();
  frame.buffers.clear();
}

void Connection::reply_error(uint32_t id, Action action, const Error& error) {
  ++server_.errors_sent;
  send(wire::encode_error(id, action, error));
}

void Connection::send_from(wire::OutFrame& frame, Nanos made_at) {
  std::unique_lock lock(write_mu_);
  if (dead_) return;
  if (queue_.empty()) {
    const Nanos t0 = made_at >= Nanos(0) ? made_at : steady_clock().now();
    auto n = wire::write_frame_some(socket_, frame, 0, true);
    if (!n) {
      mark_dead_locked();
      return;
    }
    count_link_bytes(n->bytes);
    if (n->bytes == frame.size()) {
      last_send_ = steady_clock().now() - t0;
      return;
    }
    queued_locked(frame.size());
    queue_.push_back({std::move(frame), n->bytes, t0});
  } else {
    queued_locked(frame.size());
    queue_.push_back({std::move(frame), 0, made_at >= Nanos(0) ? made_at : steady_clock().now()});
  }
  if (!writer_started_) {
    try {
      writer_ = std::thread([this] { writer_main(); });
      writer_started_ = true;
    } catch (const std::system_error& e) {
      ++server_.closed_on_error;
      server_.log(who() + ": closing: cannot start a writer thread: " + e.what());
      clear_queue_locked();  // no writer holds any of it
      mark_dead_locked();
      return;
    }
  }
  write_cv_.notify_all();
}

void Connection::unqueued_locked(uint64_t bytes) {
  queued_bytes_ -= bytes;
  server_.unsent_bytes -= bytes;
}

void Connection::clear_queue_locked() {
  queue_.clear();
  server_.unsent_bytes -= queued_bytes_.load();
  queued_bytes_ = 0;
}

void Connection::queued_locked(uint64_t bytes) {
  queued_bytes_ += bytes;
  server_.unsent_bytes += bytes;
  uint64_t peak = server_.peak_unsent_bytes.load();
  const uint64_t now_queued = queued_bytes_.load();
  while (now_queued > peak && !server_.peak_unsent_bytes.compare_exchange_weak(peak, now_queued)) {
  }
}

void Connection::writer_main() {
  try {
    writer_loop();
  } catch (const std::exception& e) {
    ++server_.closed_on_error;
    server_.log(who() + ": closing: writer failed: " + e.what());
    std::lock_guard lock(write_mu_);
    clear_queue_locked();  // this thread was the only one writing from it
    mark_dead_locked();
  }
}

void Connection::writer_loop() {
  // Writes block in sendmsg() itself, in slices of idle_timeout when it is
  // set (one system call per write, as before; a slice that passes without
  // room comes back as would_block and wait_writable() checks the deadline).
  if (const Nanos idle = server_.settings.idle_timeout; idle > Nanos(0)) {
    const auto slice = std::chrono::duration_cast<std::chrono::microseconds>(
        std::clamp(idle / kSliceDivisor, Nanos(kMinSlice), Nanos(kMaxSlice)));
    const timeval tv{static_cast<time_t>(slice.count() / 1'000'000),
                     static_cast<suseconds_t>(slice.count() % 1'000'000)};
    (void)::setsockopt(socket_.fd(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  }
  std::unique_lock lock(write_mu_);
  for (;;) {
    // dead_: close_down() joins this thread once the connection has ended.
    write_cv_.wait(lock, [&] { return !queue_.empty() || writer_exit_ || dead_; });
    if (dead_) {
      clear_queue_locked();  // replies of a dead connection go nowhere
      write_cv_.notify_all();
    }
    if (queue_.empty()) {
      if (writer_exit_ || dead_) return;
      continue;
    }
    Outgoing& out = queue_.front();  // stays put: others only push_back
    lock.unlock();
    Result<void> ok;
    Nanos stalled_since{-1};  // since when the client has taken none of this reply
    while (out.offset < out.frame.size()) {
      auto n = wire::write_frame_some(socket_, out.frame, out.offset, false);
      if (!n) {
        ok = tl::unexpected(n.error());
        break;
      }
      out.offset += n->bytes;
      count_link_bytes(n->bytes);
      if (n->bytes > 0) stalled_since = Nanos(-1);
      if (n->would_block && !wait_writable(stalled_since)) {
        ok = fail(ErrorCode::timeout, "stalled");
        break;
      }
    }
    const Nanos took = steady_clock().now() - out.started;
    lock.lock();
    last_send_ = took;
    unqueued_locked(queue_.front().frame.size());
    queue_.pop_front();
    if (!ok) mark_dead_locked();
    write_cv_.notify_all();
  }
}

bool Connection::wait_writable(Nanos& stalled_since) {
  const Nanos idle = server_.settings.idle_timeout;
  const Nanos now = steady_clock().now();
  if (stalled_since < Nanos(0)) stalled_since = now;
  int wait_ms = -1;  // idle_timeout 0: wait for room (or shutdown()) for ever
  if (idle > Nanos(0)) {
    const Nanos left = idle - (now - stalled_since);
    if (left <= Nanos(0)) {
      ++server_.timed_out;
      server_.log(who() + ": closing: the client took none of its replies for " +
                  format_duration(idle) + " (idle_timeout)");
      return false;
    }
    // In slices: the deadline is checked again after each.
    wait_ms = static_cast<int>(
        std::clamp<int64_t>(std::chrono::ceil<std::chrono::milliseconds>(left).count(), 1, 1000));
  }
  // A blocking write has already waited its slice (SO_SNDTIMEO); a socket
  // handed over non-blocking (Server::adopt) waits here instead of spinning.
  pollfd p{socket_.fd(), POLLOUT, 0};
  while (::poll(&p, 1, wait_ms) < 0 && errno == EINTR) {
  }
  return true;  // room, an error or the end (the next write tells), or a slice passed
}

// No more writes. The queue is left to the writer (which may be writing its
// front right now) to drop.
void Connection::mark_dead_locked() {
  dead_ = true;
  announce_gone_locked();
  socket_.shutdown();
  write_cv_.notify_all();
}

// dead_ or stopping_ was just set: the session's waits end.
void Connection::announce_gone_locked() {
  gone_.store(true);
  wake();
}

// ---- reading ---------------------------------------------------------------

void Connection::reader_main() {
  try {
    reader_loop();
  } catch (const std::exception& e) {
    // std::bad_alloc growing a buffer, or anything else unexpected: this
    // connection ends, the server goes on.
    ++server_.closed_on_error;
    server_.log(who() + ": closing after an internal failure: " + e.what());
  }
  close_down();
}

void Connection::close_down() {
  {
    // No new replies from here on; the shutdown below ends any write.
    std::lock_guard lock(write_mu_);
    dead_ = true;
    announce_gone_locked();
  }
  closed_.store(true);
  server_.leave(slot);
  closed();
  std::thread writer;
  {
    std::lock_guard lock(write_mu_);
    socket_.shutdown();
    writer = std::move(writer_);
  }
  write_cv_.notify_all();
  // The writer ends once the connection is dead; then nothing uses the
  // socket, and its descriptor goes back at once rather than when the server
  // next reaps connections.
  if (writer.joinable()) writer.join();
  {
    std::lock_guard lock(write_mu_);
    clear_queue_locked();  // what no writer took: its bytes go back
    socket_.close();
  }
  reader_done_.store(true);
}

void Connection::reader_loop() {
  parser_ = std::make_unique<wire::FrameParser>(
      hello_limits(server_.settings.limits),
      [this](const wire::Frame& frame) { return place(frame); });
  std::vector<std::byte> staging(kStagingBytes);
  bool answer_then_close = false;
  hello_deadline_ = steady_clock().now() + server_.settings.hello_timeout;
  blocking_reads_ = set_read_slice(server_.settings.hello_timeout);
  for (;;) {
    if (!wait_for_reply_room()) {
      hello_timed_out();
      break;
    }
    if (!blocking_reads_ && !wait_for_input()) break;
    if (blocking_reads_ && established_ && !slice_for_idle_) {
      slice_for_idle_ = true;
      blocking_reads_ = set_read_slice(server_.settings.idle_timeout);
    }
    auto direct = parser_->direct_target();
    const std::span<std::byte> into = direct.empty() ? std::span(staging) : direct;
    auto n = wire::read_some(socket_, into, false);
    if (!n) {
      server_.log(who() + ": " + n.error().to_string());
      break;
    }
    if (blocking_reads_ && n->would_block) {  // a slice without input
      if (!within_deadlines()) break;
      continue;
    }
    quiet_since_ = Nanos(-1);
    ++reads_;
    count_link_bytes(n->bytes);
    last_input_ = steady_clock().now();
    if (n->eof) {
      if (auto end = parser_->finish(); !end) {
        ++server_.closed_on_error;
        server_.log(who() + ": client went away mid-frame: " + end.error().to_string());
      } else {
        answer_then_close = true;  // the client may have half-closed: answer what it asked
      }
      // Close first, then drain: a loop of a client that is gone must not
      // hold the device for its whole duration while its answer is awaited.
      peer_ended();
      break;
    }
    Result<void> fed;
    bool overdue = false;  // the handshake's deadline passed while reads were paused
    if (!direct.empty()) {
      // A direct read stays within one buffer: it completes at most one frame.
      fed = parser_->commit_direct(n->bytes);
      dispatch_ready();
    } else {
      // One frame at a time: each is handled before the next one is placed.
      std::span<const std::byte> rest = std::span(staging).first(n->bytes);
      while (!rest.empty() && !closing_) {
        if (!wait_for_reply_room()) {
          overdue = true;
          break;
        }
        if (parser_->idle())
          if (const size_t took = take_whole(rest)) {
            rest = rest.subspan(took);
            continue;
          }
        auto taken = parser_->feed_some(rest);
        if (!taken) {
          fed = tl::unexpected(taken.error());
          break;
        }
        rest = rest.subspan(*taken);
        dispatch_ready();
      }
    }
    if (!fed) {
      // The stream lost its framing: answer, then close.
      ++server_.closed_on_error;
      server_.log(who() + ": closing: " + fed.error().to_string());
      const auto& h = parser_->failed_header();
      const bool trusted = h && h->magic == wire::kMagic;
      Error e = fed.error();
      if (!established_)
        e.message +=
            " (before hello a connection may send only what a hello needs: a body of at "
            "most " +
            std::to_string(kHelloBodyBytes) + " bytes and no buffers)";
      reply_error(trusted ? h->message_id : 0, trusted ? h->action : Action::hello, e);
      closing_ = true;
    }
    if (closing_) {
      answer_then_close = true;
      break;
    }
    if (overdue || hello_overdue()) {  // trickled input never extends the handshake
      hello_timed_out();
      break;
    }
  }
  reading_stopped();
  if (answer_then_close) {
    wait_until_answered();
    if (closing_) drain_input();
  }
}

bool Connection::establish() {
  if (!server_.establish(slot) && !(server_.make_room && server_.make_room(*this))) return false;
  established_ = true;
  parser_->set_limits(server_.settings.limits);
  reply_share_ = reply_share_of(server_.settings);
  return true;
}

bool Connection::pause_until(Nanos deadline) {
  // On the socket rather than a condition: the peer closing ends the wait
  // (a guesser that hangs up does not keep its descriptor for the delay),
  // and so does shutdown() or evict(), which shut the socket down.
  for (;;) {
    {
      std::lock_guard lock(write_mu_);
      if (dead_ || stopping_) return false;
    }
    const Nanos left = deadline - steady_clock().now();
    if (left <= Nanos(0)) return true;
    pollfd p{socket_.fd(), POLLRDHUP, 0};
    const int ms = static_cast<int>(
        std::clamp<int64_t>(std::chrono::ceil<std::chrono::milliseconds>(left).count(), 1, 1000));
    const int r = ::poll(&p, 1, ms);
    if (r > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) != 0) return false;
  }
}

Nanos Connection::idle_for(Nanos now) const {
  if (!server_.is_served(slot)) return Nanos(-1);
  if (answers_owed_.load() > 0 || queued_bytes_.load() > 0) return Nanos(-1);
  return now - last_input_.load();
}

void Connection::evict(const std::string& why) {
  ++server_.evicted;
  server_.log(who() + ": closing: " + why);
  {
    // Only what the socket takes at once: an evicted peer is not waited for.
    std::lock_guard lock(write_mu_);
    if (!dead_ && queue_.empty()) {
      ++server_.errors_sent;
      auto frame = wire::encode_error(
          0, Action::hello, {ErrorCode::limit_exceeded, "closing the connection: " + why});
      (void)wire::write_frame_some(socket_, frame, 0, true);
    }
    mark_dead_locked();
  }
  write_cv_.notify_all();
}

std::string Connection::auth_peer() const {
  const auto colon = peer_.rfind(':');
  if (peer_ == "unix" || peer_ == "local" || colon == std::string::npos) return peer_;
  return peer_.substr(0, colon);
}

bool Connection::set_read_slice(Nanos deadline) {
  const int flags = ::fcntl(socket_.fd(), F_GETFL);
  if (flags < 0 || (flags & O_NONBLOCK) != 0) return false;
  Nanos slice{0};  // no receive timeout: recv() waits for input or shutdown()
  if (deadline > Nanos(0))
    slice = std::clamp(deadline / kSliceDivisor, Nanos(kMinSlice), Nanos(kMaxSlice));
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(slice).count();
  const timeval tv{static_cast<time_t>(us / 1'000'000), static_cast<suseconds_t>(us % 1'000'000)};
  if (::setsockopt(socket_.fd(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) != 0) return false;
  read_slice_ = slice;
  quiet_since_ = Nanos(-1);
  return true;
}

bool Connection::hello_overdue() const {
  return !established_ && steady_clock().now() >= hello_deadline_;
}

bool Connection::within_deadlines() {
  if (!established_) {
    if (!hello_overdue()) return true;
    hello_timed_out();
    return false;
  }
  const Nanos idle = server_.settings.idle_timeout;
  if (idle <= Nanos(0)) return true;
  // Measured on the clock, not by counting slices (a slice can end early or
  // late); the slice that just ended was the first without input.
  const Nanos now = steady_clock().now();
  if (quiet_since_ < Nanos(0)) quiet_since_ = now - read_slice_;
  if (now - quiet_since_ < idle) return true;
  {
    // Idle only when nothing is in flight: a long loop is not idleness.
    std::lock_guard lock(write_mu_);
    if (answers_owed_ > 0 || !queue_.empty()) {
      quiet_since_ = Nanos(-1);
      return true;
    }
  }
  time_out("no request for " + format_duration(idle) + " (idle_timeout)");
  return false;
}

void Connection::hello_timed_out() {
  time_out("no hello within " + format_duration(server_.settings.hello_timeout) +
           " (hello_timeout)");
}

void Connection::time_out(const std::string& why) {
  ++server_.timed_out;
  server_.log(who() + ": closing: " + why);
  reply_error(0, Action::hello, {ErrorCode::timeout, "closing the connection: " + why});
}

bool Connection::wait_for_input() {
  const Nanos idle = server_.settings.idle_timeout;
  for (;;) {
    Nanos wait{-1};  // no deadline
    if (!established_) {
      wait = std::max(Nanos(0), hello_deadline_ - steady_clock().now());
    } else if (idle > Nanos(0)) {
      wait = idle;
    }
    const int ms = wait < Nanos(0)
                       ? -1
                       : static_cast<int>(std::min<int64_t>(
                             std::chrono::ceil<std::chrono::milliseconds>(wait).count(), INT_MAX));
    pollfd p{socket_.fd(), POLLIN, 0};
    const int r = ::poll(&p, 1, ms);
    if (r != 0) return true;  // input, the end of the stream, an error: the read tells
    if (established_) {
      // Idle only when nothing is in flight: a long loop is not idleness.
      std::lock_guard lock(write_mu_);
      if (answers_owed_ > 0 || !queue_.empty()) continue;
    }
    if (established_)
      time_out("no request for " + format_duration(idle) + " (idle_timeout)");
    else
      hello_timed_out();
    return false;
  }
}

bool Connection::wait_for_reply_room() {
  // The common case, without the lock: the unsent replies fit.
  if (queued_bytes_.load(std::memory_order_relaxed) <= reply_share()) return true;
  std::unique_lock lock(write_mu_);
  const auto room = [&] { return queued_bytes_ <= reply_share() || dead_ || stopping_; };
  if (room()) return true;
  ++server_.reads_paused;
  if (established_) {
    write_cv_.wait(lock, room);
    return true;
  }
  // In the handshake the pause ends at hello_timeout, as reading does: a
  // peer that sends requests before hello and reads none of their refusals
  // does not hold the connection past it.
  return write_cv_.wait_until(lock, handshake_end(), room);
}

std::chrono::steady_clock::time_point Connection::handshake_end() const {
  // rig's steady clock is std::chrono::steady_clock.
  return std::chrono::steady_clock::time_point(
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(hello_deadline_));
}

void Connection::dispatch_ready() {
  while (!closing_) {
    wire::Frame* frame = parser_->peek();
    if (!frame) return;
    dispatch(*frame);
    parser_->release();
  }
}

// Until every answer owed is given and every reply is out; before hello, at
// most until hello_timeout (a peer that reads none of its refusals does not
// hold the connection past it: the connection is then given up).
void Connection::wait_until_answered() {
  std::unique_lock lock(write_mu_);
  awaiting_answers_.store(true);  // before the count is read (answered())
  const auto done = [&] { return (answers_owed_ == 0 && queue_.empty()) || dead_ || stopping_; };
  if (established_) {
    write_cv_.wait(lock, done);
    return;
  }
  if (!write_cv_.wait_until(lock, handshake_end(), done)) mark_dead_locked();
}

void Connection::drain_input() {
  socket_.shutdown_write();
  std::vector<std::byte> sink(kStagingBytes);
  size_t drained = 0;
  while (drained < kDrainBytes) {
    pollfd p{socket_.fd(), POLLIN, 0};
    if (::poll(&p, 1, kDrainPollMs) <= 0) return;
    auto n = wire::read_some(socket_, sink, false);
    if (!n || n->eof) return;
    drained += n->bytes;
  }
}

}  // namespace rig::server

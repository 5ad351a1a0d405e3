// Connection: the I/O of one client: its socket, the reader thread that
// parses its requests, the writer thread that sends what a socket did not
// take at once, and how the connection ends. What the requests mean is the
// Session's (session.hpp), which derives from it and fills in the hooks.
//
// Threads:
//  * The reader thread (start()) reads, feeds the frame parser, and calls
//    place() and dispatch() for each frame, one frame at a time in stream
//    order. When the stream ends or breaks it answers what it can, waits
//    until every answer owed (owe_answer) is out, drops the rest of the input
//    after an error that broke framing, and closes the connection.
//  * send() may be called from any thread and never blocks on the socket:
//    what the socket does not take at once is queued for the writer thread,
//    started on first need, so replies leave in the order they were sent.
//  * Back-pressure: while the replies queued and not yet written exceed the
//    connection's share of max_pending_bytes (reply_share()), the reader
//    stops reading, so a client that sends and never reads costs the server
//    at most its share plus the replies of the requests already admitted
//    (bounded by its run slots); the other connections are not affected.
//    Such a client does not keep its connection: before hello, the pause and
//    the closing wait end at hello_timeout; after it, the writer gives up on
//    a reply the client takes none of for idle_timeout (wait_writable()).
//  * shutdown() (the server stopping) wakes every thread of the connection;
//    join() then waits for them.
//
// Errors: a framing error (the parser's) is answered, logged and closes the
// connection; an exception in a thread body closes the connection only. Each
// counts in closed_on_error.
//
// Ownership: shared (std::shared_ptr) by the server's connection list and by
// the device jobs still to answer; the server joins the threads before it
// lets go. The ServerContext outlives the connection.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "proto/transport.hpp"
#include "proto/wire.hpp"
#include "server/context.hpp"

namespace rig::server {

// "host:port" of a socket's peer, "unix" for a unix socket, "local" when it
// has none (a socketpair).
std::string peer_name(const wire::Socket& socket);

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(ServerContext& server, wire::Socket socket, uint64_t id);
  virtual ~Connection() = default;
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Starts the reader thread; throws std::system_error when it cannot.
  void start();
  // Wakes every thread of this connection; used when the server stops.
  void shutdown();
  // Waits for the reader and the writer to end (after shutdown(), or once
  // finished()).
  void join();
  // The reader has ended: the connection is closed and may be joined.
  bool finished() const { return reader_done_.load(); }
  // How long a served connection has had nothing in flight and sent
  // nothing; negative when it is not served or has something in flight.
  // Any thread.
  Nanos idle_for(Nanos now) const;
  // Closes this connection to give its slot to a newcomer (the slot was
  // taken over already): answers `why` (message id 0) when the socket takes
  // it at once, logs, counts in evicted. Any thread.
  void evict(const std::string& why);

  // Which slot this connection holds; read and changed only under the
  // ServerContext's slot lock (its methods take it).
  ConnectionSlot slot = ConnectionSlot::none;

 protected:
  // ---- hooks, called on the reader thread --------------------------------
  // Where a request's buffers go, decided when its body is complete and
  // before any buffer byte is read (wire::FrameParser's placer).
  virtual wire::BufferPlan place(const wire::Frame& frame) = 0;
  // A complete frame, after place() ran for it, lent by the parser until
  // this returns (its storage is reused for a later frame: take what must
  // outlive the call, e.g. an uploaded model's bytes, by moving it out); the
  // next frame is placed only after this returns.
  virtual void dispatch(wire::Frame& frame) = 0;
  // Between frames, `bytes` (read and not yet parsed) begin with a frame the
  // session may take whole, without the parser: its length when it did
  // (placed and dispatched as the parser would have), 0 to leave it to the
  // parser, having changed nothing.
  virtual size_t take_whole(std::span<const std::byte> bytes) = 0;
  // No more frames will be dispatched: drop what place() holds for one that
  // will not be.
  virtual void reading_stopped() = 0;
  // The peer ended its stream (end of stream, which a client that closed or
  // died sends as well as one that half-closed): cut its loops, so that the
  // device is free at the next slice; what it asked is still answered (a cut
  // loop with the frames completed so far).
  virtual void peer_ended() = 0;
  // The connection is closed (also after an exception in the reader): drop
  // everything the session holds for the client, placements included.
  virtual void closed() = 0;
  // ---- hook, called on any thread ------------------------------------------
  // The connection died or is stopping (gone() is now true): wake any wait of
  // the session. Called with the connection's lock held.
  virtual void wake() = 0;

  // ---- for the session -----------------------------------------------------
  ServerContext& server() const { return server_; }
  // Bytes read and written on this connection so far. Any thread.
  uint64_t link_bytes() const { return link_bytes_.load(std::memory_order_relaxed); }
  // "connection 3 (127.0.0.1:40112)", the start of every log line about it.
  std::string who() const;
  // Replies with `body` and `buffers`; `hold` travels with the frame until it
  // is written (it keeps the buffers alive). An encoding error (a limit) is
  // answered instead. Any thread.
  void reply(uint32_t id, wire::Action action, wire::pb::Body& body,
             std::vector<std::span<const std::byte>> buffers = {}, std::shared_ptr<void> hold = {});
  // reply() with buffers the caller keeps alive through `hold` (a slot's
  // outputs), encoded into a frame this thread reuses: a reply the socket
  // takes at once allocates nothing. `made_at` (steady clock) is when the
  // caller took the reply's fields: its send time (last_send) counts from
  // there, so the caller's clock read serves both. Any thread.
  void reply_reusing(uint32_t id, wire::Action action, wire::pb::Body& body,
                     std::span<const std::span<std::byte>> buffers, std::shared_ptr<void> hold,
                     Nanos made_at);
  // The reply to a ping, without protobuf (wire::encode_ping_into).
  void reply_ping(uint32_t id);
  // reply_reusing() of a run_compact reply: `run`'s fields, no protobuf.
  void reply_compact(uint32_t id, const wire::CompactRun& run,
                     std::span<const std::span<std::byte>> buffers, std::shared_ptr<void> hold,
                     Nanos made_at);
  void reply_error(uint32_t id, wire::Action action, const Error& error);
  // Something failed that the protocol cannot answer (an exception while
  // replying): close this connection, keep the server. Any thread.
  void abort(const std::string& why);
  // Reader thread: stop reading once the current frame is handled; answer
  // what is owed, then close.
  void close_after_answering() { closing_ = true; }
  // An answer another thread still owes (a device job); the connection does
  // not close before answered() was called as often. Any thread.
  void owe_answer();
  void answered();
  // The connection died or is stopping: replies go nowhere.
  bool gone() const { return gone_.load(); }
  // The reader has finished: queued jobs may be dropped.
  bool is_closed() const { return closed_.load(); }
  // Hello succeeded: take a served slot (max_connections), evicting the
  // longest-idle served connection when all are taken (make_room); false
  // when none can be (the connection stays in its handshake; close it). The
  // frame limits and the reply share become the server's own (before hello
  // they are what a hello needs: kHelloLimits, kMinReplyShare). Reader
  // thread.
  bool establish();
  // Waits until `deadline` (steady clock), or until the peer hangs up, the
  // connection dies or the server stops: false in those cases. Reader
  // thread.
  bool pause_until(Nanos deadline);
  // The key failed authentications are counted under: the peer's address
  // for TCP, "unix" for a unix socket, "local" for a socketpair (the delay
  // of a peer's wrong tokens grows with its failures; it never refuses).
  std::string auth_peer() const;
  // How long the last reply took to write (from made_at for a reused one).
  Nanos last_send() const { return last_send_.load(); }
  // The unsent reply bytes above which the reader pauses.
  uint64_t reply_share() const { return reply_share_.load(std::memory_order_relaxed); }
  // Reads from the socket so far (reader thread): a frame placed and
  // complete at the same count arrived whole in one read.
  uint64_t reads() const { return reads_; }

 private:
  struct Outgoing {
    wire::OutFrame frame;
    uint64_t offset = 0;
    Nanos started{0};
  };

  void send(wire::OutFrame frame) { send_from(frame); }
  // Encodes with `encode` into this thread's reused frame, whose buffers are
  // `buffers`, and sends it; an encoding error is answered instead.
  template <class Encode>
  void send_reusing(uint32_t id, wire::Action action, std::span<const std::span<std::byte>> buffers,
                    std::shared_ptr<void> hold, Nanos made_at, const Encode& encode);
  // Sends `frame`; what the socket does not take at once is moved into the
  // queue. Written whole, `frame` is left as it was (its hold included).
  // The send time counts from `made_at`, or from now when it is negative.
  void send_from(wire::OutFrame& frame, Nanos made_at = Nanos(-1));
  void writer_main();
  void writer_loop();
  // Writer thread: the socket took none of a reply. Waits for room, at most
  // a slice; false (counted in timed_out, logged) once the client has taken
  // nothing since `stalled_since` for idle_timeout (0: never), as a client
  // that reads none of its replies is gone. Sets `stalled_since` when < 0.
  bool wait_writable(Nanos& stalled_since);
  void mark_dead_locked();
  void announce_gone_locked();
  void reader_main();
  void reader_loop();
  void dispatch_ready();
  // Waits until the socket has input: false (after answering, when it can)
  // when hello_timeout or idle_timeout ran out first. Only when the socket
  // has no receive timeout (blocking_reads_ false).
  bool wait_for_input();
  // Blocking reads: the reader blocks in recv() itself (one system call per
  // request, not poll() and recv()), woken by input, by shutdown(), or by
  // the socket's receive timeout, a slice of the deadline that applies
  // (kSliceDivisor of hello_timeout during the handshake, of idle_timeout
  // afterwards, within [kMinSlice, kMaxSlice]; no timeout at all for a zero
  // idle_timeout, "never"). False when the timeout cannot be set or the
  // socket is non-blocking (it would spin): then poll() waits, as
  // wait_for_input() does.
  bool set_read_slice(Nanos deadline);
  // A read slice passed without input: false (after answering) when a
  // deadline has run out.
  bool within_deadlines();
  // The handshake's deadline has passed (trickled input does not extend it).
  bool hello_overdue() const;
  // Answers and counts a connection closed at a deadline; `why` says which.
  void time_out(const std::string& why);
  void hello_timed_out();
  // Back-pressure: returns once the unsent replies fit reply_share() (or the
  // connection is gone): true; false when, before hello, hello_timeout ran
  // out first.
  bool wait_for_reply_room();
  // hello_deadline_ as a time point of std::chrono::steady_clock.
  std::chrono::steady_clock::time_point handshake_end() const;
  void queued_locked(uint64_t bytes);
  // Queued bytes written or dropped: out of this connection's count and the
  // server's.
  void unqueued_locked(uint64_t bytes);
  void clear_queue_locked();
  void wait_until_answered();
  void drain_input();
  void close_down();

  ServerContext& server_;
  wire::Socket socket_;
  const uint64_t id_;
  const std::string peer_;
  std::thread reader_, writer_;
  std::atomic<bool> reader_done_{false};
  std::atomic<bool> closed_{false};  // the reader has finished; queued jobs are dropped
  std::atomic<bool> gone_{false};    // dead_ || stopping_, for the session's waits

  // Reader-thread state.
  std::unique_ptr<wire::FrameParser> parser_;
  bool closing_ = false;
  bool established_ = false;
  Nanos hello_deadline_{0};
  bool blocking_reads_ = false;  // set_read_slice()
  bool slice_for_idle_ = false;  // the slice set is idle_timeout's
  Nanos read_slice_{0};
  Nanos quiet_since_{-1};  // when the reads without input began; < 0: input came last
  uint64_t reads_ = 0;     // reads()
  // Bytes read and written on this connection (any thread reads it); the
  // server's total is link_bytes.
  std::atomic<uint64_t> link_bytes_{0};
  void count_link_bytes(size_t bytes) {
    link_bytes_.fetch_add(bytes, std::memory_order_relaxed);
    server_.link_bytes.fetch_add(bytes, std::memory_order_relaxed);
  }
  std::atomic<Nanos> last_input_{Nanos(0)};  // when input last came (steady clock)

  // Writing; write_cv_ also wakes wait_until_answered().
  std::mutex write_mu_;
  std::condition_variable write_cv_;
  std::deque<Outgoing> queue_;
  // Frame bytes in queue_, written or not. Changed under write_mu_; atomic
  // so that wait_for_reply_room() can see without the lock that they fit.
  std::atomic<uint64_t> queued_bytes_{0};
  std::atomic<uint64_t> reply_share_;
  bool writer_started_ = false;
  bool writer_exit_ = false;
  bool dead_ = false;
  bool stopping_ = false;
  // Answers owed (owe_answer, answered) change without write_mu_: answered()
  // takes the lock to notify only when it gives the last one while
  // wait_until_answered() waits for it (awaiting_answers_). Both are
  // sequentially consistent: either the waiter sees the count reach zero, or
  // the notifier sees the waiter.
  std::atomic<uint32_t> answers_owed_{0};
  std::atomic<bool> awaiting_answers_{false};
  std::atomic<Nanos> last_send_{Nanos(0)};
};

}  // namespace rig::server

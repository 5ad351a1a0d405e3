// The client side of one connection to rig serve: the socket, the framing
// (proto/wire.hpp), hello, the link calibration, and the request pump that
// writes requests and matches replies by message id, with the fast paths of
// a lone ping or run. It knows nothing of the Device contract: the remote
// device (remote_device.cpp) drives it, as the server's Session drives its
// Connection.
//
// Concurrency: no threads, so a lone request costs no thread hand-off. Every
// call moves bytes both ways while it waits (writes without blocking, reads
// what has arrived, polls for both; with nothing to write it blocks in recv()
// itself, in slices of kBlockingSlice so that deadlines are still checked),
// so requests pipeline up to the queue depth the server advertised. Driven by
// one thread at a time; a request's input buffers must stay untouched until
// its reply (a request may still be partly unwritten when submit returns),
// and a run's outputs are received straight into the output buffers it was
// given, which must outlive its reply.
//
// Failures: a failed read or write, a reply that breaks the protocol, or a
// request unanswered past its deadline (the timeout option) kills the
// connection: every pending request fails with that error, and every later
// call returns it.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "proto/transport.hpp"
#include "proto/wire.hpp"
#include "rig/device.hpp"

namespace rig::remote {

// The host's steady clock, which the client's own figures are on.
Nanos now();
// a + b, at most Nanos::max() (a deadline that never comes).
Nanos add_saturating(Nanos a, Nanos b);
// Longest a blocking recv() waits before the client looks at its deadlines;
// also how often a pending cancel is passed on while a loop is awaited.
constexpr std::chrono::microseconds kBlockingSlice{100'000};

// Bounds on what a server declares, checked before anything is allocated
// from the figure (docs/protocol.md "Limits"): a server past one is at
// fault, a protocol failure (exit 3), never the user's.
// hello's queue_depth and device_queue_depth: the client allocates a buffer
// set per slot of the queue depth.
constexpr uint32_t kMaxServerQueueDepth = 4096;
// hello's device_queue_depth (the hosted device's own depth, the most a
// sweep goes to): the sim's own bound.
constexpr uint32_t kMaxDeviceQueueDepth = 65536;
// Readings kept from one read_sensors reply (the first ones, in the reply's
// order); the remote device counts the rest and says so in a warning.
constexpr size_t kMaxSensorReadings = 256;

// What the spec says: tcp://HOST:PORT[?token=T&timeout=DUR&calibrate=0|1&compact=0|1]
// or unix:PATH[?...] (remote_device.hpp).
struct RemoteOptions {
  wire::Endpoint endpoint;
  std::string token;
  Nanos timeout{std::chrono::seconds(30)};
  bool timeout_given = false;
  bool calibrate = true;  // time pings at open (LinkFloor)
  bool compact = true;    // runs as run_compact when the server takes it
};
Result<RemoteOptions> parse_remote_spec(std::string_view spec);

using Inputs = std::span<const std::span<const std::byte>>;
using Outputs = std::span<const std::span<std::byte>>;

class RemoteConnection {
 public:
  // `on_completion` receives each submitted run's Completion as its reply
  // lands (or the connection dies), on the thread driving the connection.
  RemoteConnection(RemoteOptions options, std::function<void(Completion)> on_completion);
  RemoteConnection(const RemoteConnection&) = delete;
  RemoteConnection& operator=(const RemoteConnection&) = delete;

  // Connects and says hello; a server at its connection limits is busy
  // (queue_full), not bad input.
  Result<void> open();
  const wire::pb::HelloReply& hello() const { return hello_; }
  const RemoteOptions& options() const { return options_; }
  bool compact() const { return compact_; }  // runs go as run_compact
  uint32_t depth() const { return depth_; }  // the server's per-connection queue depth
  // The receive limits the server advertised (the defaults when it did not).
  const wire::Limits& server_limits() const { return server_limits_; }

  // Times pings (at most kCalibrationPings within kCalibrationBudget).
  // nullopt: the server does not answer ping.
  Result<std::optional<LinkFloor>> calibrate();

  struct Reply {
    wire::Frame frame;
    Nanos started{0};    // the reply's header and body had arrived
    Nanos completed{0};  // its last buffer byte had arrived
  };
  // A request and its reply, status checked (the body is the caller's to
  // check). `outputs`: where the reply's buffers go (a loop's outputs);
  // `payload`: the request's buffers are tensors. `while_waiting` runs
  // before each wait of the pump.
  Result<Reply> call(wire::Action action, wire::pb::Body& body, Inputs buffers, Nanos extra_timeout,
                     std::optional<Outputs> outputs, bool payload,
                     const std::function<void()>& while_waiting = {});
  // A request whose reply is dropped (a cancel's: the loop's reply tells).
  void send_discarded(wire::Action action, wire::pb::Body& body);

  // One run, synchronously: its outputs land in `outputs`.
  Result<InferenceTimings> run(uint32_t handle, Inputs inputs, Outputs outputs);
  // One run, pipelined: its Completion goes to on_completion. A failure
  // while sending arrives as that completion; an error here means nothing
  // was sent.
  Result<void> submit(uint32_t handle, Inputs inputs, Outputs outputs, BindingId binding,
                      uint64_t tag);
  // Pumps until at least one Completion went to on_completion, or
  // `timeout` passes (timeout error) or the connection dies (its error).
  Result<void> await_completion(Nanos timeout);

  // payload_* count tensor bytes, link_* every byte that crossed the socket.
  ByteCounters& bytes() { return bytes_; }
  const ByteCounters& bytes() const { return bytes_; }
  bool dead() const { return dead_.has_value(); }

  tl::unexpected<Error> wrong_reply(const wire::Frame& frame) const;
  // A run refused for want of room found the server full: queue_full.
  static Error server_full(Error e);

 private:
  struct Pending {
    wire::Action action = wire::Action::hello;
    bool async = false;
    bool has_outputs = false;
    Outputs outputs;  // where a run's or a loop's outputs go
    BindingId binding = 0;
    uint64_t tag = 0;
    Nanos deadline{0};
    Nanos reply_started{0};
    uint64_t placed_read = 0;  // reads_ when its header and body had arrived
    bool discard = false;      // its reply is dropped (a cancel's: the loop's reply tells)
    bool sync_run = false;     // run(): answered in run_answer_
  };
  struct Outgoing {
    wire::OutFrame frame;
    uint64_t offset = 0;
    bool payload = false;  // its buffers are tensors
  };

  Result<void> ping();
  Result<uint32_t> send_run(uint32_t handle, Inputs inputs, Pending p);
  static bool has_run_reply(const wire::Frame& frame);
  static Error server_error(const wire::Frame& frame);
  InferenceTimings timings_of(const Reply& reply) const;
  InferenceTimings timings_of(const wire::Frame& frame, Nanos started, Nanos completed) const;
  InferenceTimings timings_of(const wire::CompactRun& r, Nanos started, Nanos completed) const;
  Result<uint32_t> send_request(wire::Action action, wire::pb::Body& body, Inputs buffers,
                                Pending pending, Nanos extra_timeout, bool payload);
  template <class Encode>
  Result<uint32_t> send_encoded(wire::Action action, Inputs buffers, Pending pending,
                                Nanos extra_timeout, bool payload, const Encode& encode);
  Result<Reply> await_reply(uint32_t id, const std::function<void()>& while_waiting = {});
  template <class Done>
  Result<void> pump(Nanos deadline, const Done& done);
  Result<void> flush();
  Result<void> read_available(bool block_first);
  Error lost(const Error& e);
  bool lone_read_pays() const;
  template <class Take>
  bool read_lone(const Take& take);
  bool take_lone_ping(std::span<const std::byte> bytes, uint32_t id);
  bool take_lone_run(std::span<const std::byte> bytes, uint32_t id);
  Result<void> take_read(const wire::IoStatus& n, std::span<std::byte> direct);
  void deliver_frames();
  std::vector<std::pair<uint32_t, Pending>>::iterator find_pending(uint32_t id);
  wire::BufferPlan place(const wire::Header& h, const wire::pb::Body& body);
  void on_frame(wire::Frame& frame);
  Nanos reply_completed(const Pending& p) const;
  // A submitted run's Completion (`p`'s tag and binding), to on_completion_.
  void complete(const Pending& p, std::optional<Error> error, const InferenceTimings& timings);
  Error kill(Error error);

  RemoteOptions options_;
  std::function<void(Completion)> on_completion_;
  wire::Socket socket_;
  wire::FrameParser parser_;
  std::vector<std::byte> staging_;
  std::deque<Outgoing> out_;
  uint32_t next_id_ = 1;
  // Requests sent and not yet answered, and the answers of calls not yet
  // collected: a few at a time (up to the queue depth), so small vectors
  // searched in full, which keep their capacity (no allocation per request).
  std::vector<std::pair<uint32_t, Pending>> pending_;
  std::vector<std::pair<uint32_t, Result<Reply>>> sync_done_;
  std::optional<std::pair<uint32_t, Result<InferenceTimings>>> run_answer_;  // run()'s
  wire::pb::Body run_body_;                                                  // send_run()
  uint64_t reads_ = 0;                // reads that brought bytes for the parser
  uint64_t completions_ = 0;          // Completions handed to on_completion_
  wire::CompactRun lone_reply_;       // take_lone_run()
  std::vector<uint64_t> lone_sizes_;  // take_lone_run()
  bool compact_ = false;              // runs go as run_compact (the server takes it)
  wire::OutFrame spare_;              // send_request()'s frame, reused
  std::optional<Error> dead_;
  wire::pb::HelloReply hello_;
  ByteCounters bytes_;
  wire::Limits server_limits_;
  uint32_t depth_ = 1;
};

}  // namespace rig::remote

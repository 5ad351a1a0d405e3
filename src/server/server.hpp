// rig serve: hosts one local Device for remote clients over the wire protocol
// (docs/protocol.md, src/proto/wire.hpp).
//
// Threads: one accept thread; per connection a reader thread (parses
// requests, answers hello/describe/release itself, posts device work to the
// DeviceHost) and, only when a reply could not be written at once, a writer
// thread; the DeviceHost's device thread. Replies are written by whichever
// thread has them, without blocking: what the socket does not take at once is
// left to the connection's writer, so a slow client never stalls the device
// or the other clients.
//
// Order: the requests of one connection take effect in the order they were
// sent, even when they arrive in one read (hello then load, release then run):
// a request's buffers are placed only after every earlier request was
// handled, and a request that names a model handle waits for the
// connection's earlier loads to finish.
//
// Safety: a malformed or hostile stream costs its own connection only. Errors
// that leave the stream in step (unknown action, unknown handle, wrong buffer
// size, a server-wide limit, ...) are answered and the connection goes on;
// errors that break framing (bad magic, a body or buffer over a limit, a
// truncated frame) are answered when possible and the connection is closed.
// Limits are checked before allocation; buffers grow as their bytes arrive.
// Server-wide limits bound what all clients together can make the server
// hold: connections, models per connection, and the bytes held for clients
// (max_pending_bytes). Every thread body catches exceptions (std::bad_alloc,
// std::system_error when a thread cannot start): the connection concerned is
// closed and the event logged; the process never terminates. A listen address
// that is not loopback requires a token, which every client must present in
// hello.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "proto/transport.hpp"
#include "proto/wire.hpp"
#include "rig/device.hpp"

namespace rig::server {

struct ServerSettings {
  // HOST:PORT, :PORT, unix:PATH (see proto/transport.hpp); port 0 picks a
  // free port. Empty: no listener, connections come only through adopt().
  std::string listen = "127.0.0.1:5757";
  // A unix socket is made mode 0600 whatever the umask; with a group id, it
  // is given to that group and made 0660 (rig serve --socket-group).
  std::optional<uint32_t> socket_group;
  std::string token;      // required in hello when set; required for a non-loopback listen
  std::string model_dir;  // root for load-by-name; empty disables it
  // Requests each connection may keep in flight, advertised in hello.
  // 0: twice the device's queue depth, at least 2.
  uint32_t depth = 0;
  wire::Limits limits;  // what the server accepts; advertised in hello
  // Connections served at once, counted from a completed hello (with its
  // token, when one is set). A hello beyond it takes the slot of the served
  // connection idle longest (nothing in flight, no request for at least
  // evict_idle_after), which is closed; when there is none, it is answered
  // with limit_exceeded and the connection closed. Connections still in
  // their handshake do not count (see max_handshakes).
  uint32_t max_connections = 64;
  // Connections that have not completed hello, at once. One more takes the
  // slot of the one that has waited longest, which is closed (an error,
  // message id 0, when its socket takes it at once), so sockets held open
  // cannot lock real clients out: an attacker must out-pace their hello.
  // File descriptors stay bounded (max_connections + max_handshakes).
  uint32_t max_handshakes = 64;
  // A connection must complete hello within this time, or it is closed.
  Nanos hello_timeout{std::chrono::seconds(5)};
  // A connection that has completed hello, has nothing in flight and sends
  // nothing for this long is closed. 0: never.
  Nanos idle_timeout{std::chrono::minutes(2)};
  // A served connection idle (as above) at least this long gives its slot to
  // a new client when max_connections are served.
  Nanos evict_idle_after{std::chrono::seconds(10)};
  // A wrong or missing token is answered this late, on its own connection,
  // doubling with each further failure of the same peer (TCP: its address;
  // every unix-socket client is one peer) within the previous wait, up to 64
  // times. The token is always compared: a right one is always admitted.
  Nanos auth_backoff{std::chrono::seconds(1)};
  // Models one connection may hold loaded at once.
  uint32_t max_models_per_connection = 16;
  // Bytes the server holds for all clients together: model uploads being
  // received, models kept for reloading, and run slots (inputs + outputs).
  // A request that would break it is refused with limit_exceeded.
  // 0: half the physical memory (4 GiB when that is unknown).
  uint64_t max_pending_bytes = 0;
  // How long the device may go without completing anything before the
  // requests in flight fail with timeout.
  Nanos request_timeout{std::chrono::seconds(30)};
  // Longest uninterrupted device loop on a real-time clock: longer loops run
  // as consecutive slices so that stop() is not held up (docs/protocol.md).
  // 0: never split.
  Nanos loop_slice{std::chrono::seconds(1)};
  // One line per connection event worth telling an operator; may be empty.
  std::function<void(const std::string&)> log;
};

struct ServerStats {
  uint64_t connections = 0;      // accepted or adopted
  uint64_t requests = 0;         // frames parsed
  uint64_t errors_sent = 0;      // error replies
  uint64_t closed_on_error = 0;  // connections closed because the stream broke
  uint64_t refused = 0;          // connections refused at max_connections or max_handshakes
  uint64_t timed_out = 0;        // connections closed at hello_timeout or idle_timeout
  uint64_t auth_failures = 0;    // hellos refused for their token
  uint64_t evicted = 0;          // connections closed to give their slot to a newcomer
  // Now: reply bytes queued unsent over every connection, and the bytes
  // held against max_pending_bytes. Both are 0 once every connection closed
  // and no model is kept.
  uint64_t unsent_bytes = 0;
  uint64_t held_bytes = 0;
  // The most reply bytes one connection had queued and not yet written; a
  // connection's reader pauses above max_pending_bytes / max_connections (at
  // least 64 KiB), so this stays near that share whatever a client does.
  uint64_t peak_unsent_bytes = 0;
  uint64_t reads_paused = 0;  // times a reader paused for that reason
  // Requests taken whole from a read buffer, without the frame parser (a
  // lone run_compact request, a ping with the canonical body; of `requests`).
  uint64_t whole_requests = 0;
  uint64_t loops_started = 0;  // run_for_duration loops the device started
  // Sharing the device: reloads when a request needed another model than
  // the one on it; switches between connections' identical models (by
  // bytes), which need none.
  uint64_t model_reloads = 0;
  uint64_t shared_switches = 0;
  uint64_t device_loads = 0;  // every load of a model on the device: explicit, and those reloads
};

class Server {
 public:
  // Checks the settings (a non-loopback listen needs a token; the model dir
  // must exist), binds, and starts accepting on its own thread.
  static Result<std::unique_ptr<Server>> start(std::unique_ptr<Device> device,
                                               ServerSettings settings);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // The spec a client passes to open_device: tcp://127.0.0.1:43121 or
  // unix:/path. Empty without a listener.
  std::string address() const;
  const DeviceInfo& device_info() const;
  uint32_t depth() const;
  // The effective settings (max_pending_bytes resolved).
  const ServerSettings& settings() const;

  // Serves an already-connected socket (a socketpair end in tests and the
  // fuzzer) exactly like an accepted one.
  void adopt(wire::Socket socket);

  // Stops accepting, closes every connection, stops the device host (within
  // one wait or loop slice plus the call the device is in), and joins every
  // thread. Idempotent; the destructor calls it.
  void stop();

  ServerStats stats() const;

  struct State;

 private:
  explicit Server(std::shared_ptr<State> state) : state_(std::move(state)) {}
  std::shared_ptr<State> state_;
};

}  // namespace rig::server

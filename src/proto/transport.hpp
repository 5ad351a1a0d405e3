// Sockets for the wire protocol: addresses, connect/listen/accept, and the
// gather write that sends a frame's header, body and buffers in one call.
//
// Addresses:
//   client   tcp://HOST:PORT   unix:PATH
//   listen   HOST:PORT  :PORT  HOST  tcp://HOST:PORT  unix:PATH
//            (HOST defaults to 127.0.0.1, PORT to wire::kDefaultPort; IPv6 as [::1]:PORT)
//
// Every socket is close-on-exec; TCP sockets have TCP_NODELAY (a frame is one
// write, so Nagle would only delay small replies). No call raises SIGPIPE.
// Thread safety: a Socket may be read by one thread while another writes it;
// shutdown() may be called from any thread to wake both.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "proto/wire.hpp"
#include "rig/error.hpp"

namespace rig::wire {

struct Endpoint {
  enum class Kind { tcp, unix_socket };
  Kind kind = Kind::tcp;
  std::string host = "127.0.0.1";
  uint16_t port = kDefaultPort;
  std::string path;  // unix sockets

  // "tcp://127.0.0.1:5757", "tcp://[::1]:5757", "unix:/run/rig.sock": the
  // spec a client passes to open_device.
  std::string to_string() const;
};

Result<Endpoint> parse_endpoint(std::string_view text);
Result<Endpoint> parse_listen_address(std::string_view text);

// True when every address `endpoint` resolves to is a loopback address
// (127.0.0.0/8, ::1), and for unix sockets. Fails when the host does not resolve.
Result<bool> is_loopback(const Endpoint& endpoint);

class Socket {
 public:
  Socket() = default;
  explicit Socket(int fd) : fd_(fd) {}
  Socket(Socket&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  Socket& operator=(Socket&& o) noexcept;
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  ~Socket() { close(); }

  int fd() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  void close();
  // Wakes any thread blocked on the socket; the fd stays open until close().
  void shutdown();
  void shutdown_write();
  Result<void> set_nonblocking(bool on);

 private:
  int fd_ = -1;
};

struct IoStatus {
  size_t bytes = 0;
  bool eof = false;          // the peer closed (reads only)
  bool would_block = false;  // non-blocking call that could not proceed
};

// One recv(); EINTR is retried. A reset connection is a disconnected error.
Result<IoStatus> read_some(const Socket& socket, std::span<std::byte> into, bool nonblocking);

// Writes `frame` from byte `offset` (of header + body + buffers) with one
// sendmsg() carrying every remaining part; returns how many bytes went.
Result<IoStatus> write_frame_some(const Socket& socket, const OutFrame& frame, uint64_t offset,
                                  bool nonblocking);
// Blocking: writes the whole frame (one gather write, repeated only when the
// kernel takes part of it).
Result<void> write_frame(const Socket& socket, const OutFrame& frame);

Result<Socket> connect_to(const Endpoint& endpoint);
Result<std::pair<Socket, Socket>> socket_pair();

class Listener {
 public:
  // Binds and listens. Port 0 picks a free port; bound() tells which. A unix
  // socket path left by a dead server is replaced; any other file is not.
  // A unix socket is made mode 0600 whatever the umask (0660 with
  // `unix_group`, a group id it is given to: its members may connect), before
  // it listens, so that no connection arrives while it is wider.
  static Result<Listener> listen(const Endpoint& endpoint,
                                 std::optional<uint32_t> unix_group = std::nullopt);
  Listener() = default;
  Listener(Listener&& o) noexcept;
  Listener& operator=(Listener&& o) = delete;
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;
  ~Listener();

  // Blocks until a client connects or shutdown() is called (then fails with
  // disconnected). Other failures (io) are returned at once; a caller that
  // retries should wait first (wait_for_shutdown): after EMFILE, ENFILE,
  // ENOBUFS or ENOMEM the connection stays in the backlog and the listening
  // socket polls readable again at once.
  Result<Socket> accept();
  // Waits up to `timeout` for shutdown(); true once it was called.
  bool wait_for_shutdown(std::chrono::milliseconds timeout);
  void shutdown();
  const Endpoint& bound() const { return bound_; }

 private:
  Socket socket_;
  Socket wake_read_, wake_write_;  // a pipe: shutdown() wakes accept()
  Endpoint bound_;
  bool unlink_on_close_ = false;
};

}  // namespace rig::wire

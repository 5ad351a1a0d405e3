#include "proto/transport.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <memory>
#include <vector>

namespace rig::wire {
namespace {

std::string errno_text(int err) {
  return std::strerror(err);
}

Error socket_error(const std::string& what, int err) {
  const bool gone = err == EPIPE || err == ECONNRESET || err == ENOTCONN || err == ECONNABORTED;
  return {gone ? ErrorCode::disconnected : ErrorCode::io, what + ": " + errno_text(err)};
}

Result<uint16_t> parse_port(std::string_view text, std::string_view whole) {
  unsigned value = 0;
  const auto* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || p != end || value > 65535)
    return fail(ErrorCode::invalid_argument,
                "bad port '" + std::string(text) + "' in '" + std::string(whole) + "'");
  return static_cast<uint16_t>(value);
}

// "HOST:PORT", "[V6]:PORT", ":PORT", "HOST" (port_required false).
Result<Endpoint> parse_host_port(std::string_view text, std::string_view whole,
                                 bool port_required) {
  Endpoint e;
  std::string_view host = text, port;
  if (!text.empty() && text.front() == '[') {
    const auto close = text.find(']');
    if (close == std::string_view::npos)
      return fail(ErrorCode::invalid_argument, "missing ']' in '" + std::string(whole) + "'");
    host = text.substr(1, close - 1);
    std::string_view rest = text.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':')
        return fail(ErrorCode::invalid_argument, "bad address '" + std::string(whole) + "'");
      port = rest.substr(1);
      if (port.empty()) return tl::unexpected(parse_port(port, whole).error());
    }
  } else if (const auto colon = text.rfind(':'); colon != std::string_view::npos) {
    if (text.find(':') != colon)
      return fail(ErrorCode::invalid_argument,
                  "IPv6 addresses need brackets, e.g. [::1]:5757: '" + std::string(whole) + "'");
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
    if (port.empty()) return tl::unexpected(parse_port(port, whole).error());
  }
  if (!port.empty()) {
    auto p = parse_port(port, whole);
    if (!p) return tl::unexpected(p.error());
    e.port = *p;
  } else if (port_required) {
    return fail(ErrorCode::invalid_argument,
                "missing port in '" + std::string(whole) + "' (expected tcp://HOST:PORT)");
  }
  if (!host.empty()) e.host = std::string(host);
  return e;
}

Result<Endpoint> parse_unix(std::string_view path, std::string_view whole) {
  if (path.empty())
    return fail(ErrorCode::invalid_argument,
                "empty unix socket path in '" + std::string(whole) + "'");
  if (path.size() >= sizeof(sockaddr_un::sun_path))
    return fail(ErrorCode::invalid_argument, "unix socket path is longer than " +
                                                 std::to_string(sizeof(sockaddr_un::sun_path) - 1) +
                                                 " bytes: " + std::string(path));
  Endpoint e;
  e.kind = Endpoint::Kind::unix_socket;
  e.path = std::string(path);
  return e;
}

struct AddrInfoDeleter {
  void operator()(addrinfo* a) const { freeaddrinfo(a); }
};
using AddrInfo = std::unique_ptr<addrinfo, AddrInfoDeleter>;

Result<AddrInfo> resolve(const Endpoint& e, bool passive) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = passive ? AI_PASSIVE : 0;
  addrinfo* out = nullptr;
  const std::string port = std::to_string(e.port);
  const int rc = getaddrinfo(e.host.c_str(), port.c_str(), &hints, &out);
  if (rc != 0)
    return fail(ErrorCode::not_found, "cannot resolve '" + e.host + "': " + gai_strerror(rc));
  return AddrInfo(out);
}

bool loopback_address(const sockaddr* a) {
  if (a->sa_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(a);
    return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
  }
  if (a->sa_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(a);
    // ::ffff:127.x.y.z is IPv4 loopback written as IPv6.
    if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) return in6->sin6_addr.s6_addr[12] == 127;
    return IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr) != 0;
  }
  return false;
}

void set_nodelay(int fd) {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

sockaddr_un unix_address(const std::string& path) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::memcpy(a.sun_path, path.c_str(), path.size() + 1);  // length checked when parsed
  return a;
}

}  // namespace

std::string Endpoint::to_string() const {
  if (kind == Kind::unix_socket) return "unix:" + path;
  const bool v6 = host.find(':') != std::string::npos;
  return "tcp://" + (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

// USER@ or USER:PASSWORD@ before a TCP host: most likely a token put where a
// URL carries credentials. Refused before any lookup, and without repeating
// the address (what precedes '@' may be a secret).
Result<void> refuse_userinfo(std::string_view host_port) {
  if (host_port.find('@') == std::string_view::npos) return {};
  return fail(ErrorCode::invalid_argument,
              "a tcp:// address cannot carry a user or token before '@' (not repeated here, "
              "in case it is a secret): give the token as tcp://HOST:PORT?token=T or in "
              "RIG_TOKEN");
}

Result<Endpoint> parse_endpoint(std::string_view text) {
  if (text.rfind("unix:", 0) == 0) return parse_unix(text.substr(5), text);
  if (text.rfind("tcp://", 0) == 0) {
    const std::string_view rest = text.substr(6);
    if (auto ok = refuse_userinfo(rest); !ok) return tl::unexpected(ok.error());
    if (rest.empty() || rest.front() == ':' || rest.rfind("[]", 0) == 0)
      return fail(ErrorCode::invalid_argument, "missing host in '" + std::string(text) + "'");
    return parse_host_port(rest, text, true);
  }
  return fail(ErrorCode::invalid_argument,
              "remote device '" + std::string(text) + "': expected tcp://HOST:PORT or unix:PATH");
}

Result<Endpoint> parse_listen_address(std::string_view text) {
  if (text.rfind("unix:", 0) == 0) return parse_unix(text.substr(5), text);
  if (text.rfind("tcp://", 0) == 0) text.remove_prefix(6);
  if (auto ok = refuse_userinfo(text); !ok) return tl::unexpected(ok.error());
  if (text.empty()) return Endpoint{};
  return parse_host_port(text, text, false);
}

Result<bool> is_loopback(const Endpoint& endpoint) {
  if (endpoint.kind == Endpoint::Kind::unix_socket) return true;
  auto info = resolve(endpoint, true);
  if (!info) return tl::unexpected(info.error());
  for (const addrinfo* a = info->get(); a; a = a->ai_next)
    if (!loopback_address(a->ai_addr)) return false;
  return true;
}

Socket& Socket::operator=(Socket&& o) noexcept {
  if (this != &o) {
    close();
    fd_ = std::exchange(o.fd_, -1);
  }
  return *this;
}

void Socket::close() {
  if (fd_ >= 0) ::close(std::exchange(fd_, -1));
}

void Socket::shutdown() {
  if (fd_ >= 0) ::shutdown(fd_, SHUT_RDWR);
}

void Socket::shutdown_write() {
  if (fd_ >= 0) ::shutdown(fd_, SHUT_WR);
}

Result<void> Socket::set_nonblocking(bool on) {
  const int flags = ::fcntl(fd_, F_GETFL);
  if (flags < 0 || ::fcntl(fd_, F_SETFL, on ? flags | O_NONBLOCK : flags & ~O_NONBLOCK) < 0)
    return fail(ErrorCode::io, "fcntl(O_NONBLOCK): " + errno_text(errno));
  return {};
}

Result<IoStatus> read_some(const Socket& socket, std::span<std::byte> into, bool nonblocking) {
  for (;;) {
    const ssize_t n = ::recv(socket.fd(), into.data(), into.size(), nonblocking ? MSG_DONTWAIT : 0);
    if (n > 0) return IoStatus{static_cast<size_t>(n), false, false};
    if (n == 0) return IoStatus{0, true, false};
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return IoStatus{0, false, true};
    return tl::unexpected(socket_error("recv", errno));
  }
}

Result<IoStatus> write_frame_some(const Socket& socket, const OutFrame& frame, uint64_t offset,
                                  bool nonblocking) {
  constexpr size_t kMaxIov = 128;
  iovec iov[kMaxIov];
  size_t count = 0;
  auto add = [&](const void* data, uint64_t size) {
    if (offset >= size) {
      offset -= size;
      return;
    }
    if (count == kMaxIov) return;  // the rest goes in a later call
    iov[count].iov_base = const_cast<std::byte*>(static_cast<const std::byte*>(data) + offset);
    iov[count].iov_len = static_cast<size_t>(size - offset);
    offset = 0;
    ++count;
  };
  add(frame.header.data(), frame.header.size());
  add(frame.body.data(), frame.body.size());
  for (const auto& b : frame.buffers) add(b.data(), b.size());
  if (count == 0) return IoStatus{};
  msghdr msg{};
  msg.msg_iov = iov;
  msg.msg_iovlen = count;
  const int flags = MSG_NOSIGNAL | (nonblocking ? MSG_DONTWAIT : 0);
  for (;;) {
    const ssize_t n = ::sendmsg(socket.fd(), &msg, flags);
    if (n >= 0) return IoStatus{static_cast<size_t>(n), false, false};
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return IoStatus{0, false, true};
    return tl::unexpected(socket_error("send", errno));
  }
}

Result<void> write_frame(const Socket& socket, const OutFrame& frame) {
  const uint64_t total = frame.size();
  uint64_t done = 0;
  while (done < total) {
    auto n = write_frame_some(socket, frame, done, false);
    if (!n) return tl::unexpected(n.error());
    done += n->bytes;
  }
  return {};
}

Result<Socket> connect_to(const Endpoint& endpoint) {
  if (endpoint.kind == Endpoint::Kind::unix_socket) {
    Socket s(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!s.valid()) return fail(ErrorCode::io, "socket: " + errno_text(errno));
    const sockaddr_un a = unix_address(endpoint.path);
    if (::connect(s.fd(), reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0)
      return fail(ErrorCode::disconnected,
                  "cannot connect to " + endpoint.to_string() + ": " + errno_text(errno));
    return s;
  }
  auto info = resolve(endpoint, false);
  if (!info) return tl::unexpected(info.error());
  int last = 0;
  for (const addrinfo* a = info->get(); a; a = a->ai_next) {
    Socket s(::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol));
    if (!s.valid()) {
      last = errno;
      continue;
    }
    if (::connect(s.fd(), a->ai_addr, a->ai_addrlen) == 0) {
      set_nodelay(s.fd());
      return s;
    }
    last = errno;
  }
  return fail(ErrorCode::disconnected,
              "cannot connect to " + endpoint.to_string() + ": " + errno_text(last));
}

Result<std::pair<Socket, Socket>> socket_pair() {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
    return fail(ErrorCode::io, "socketpair: " + errno_text(errno));
  return std::pair<Socket, Socket>(Socket(fds[0]), Socket(fds[1]));
}

Listener::Listener(Listener&& o) noexcept
    : socket_(std::move(o.socket_)),
      wake_read_(std::move(o.wake_read_)),
      wake_write_(std::move(o.wake_write_)),
      bound_(std::move(o.bound_)),
      unlink_on_close_(std::exchange(o.unlink_on_close_, false)) {}

Listener::~Listener() {
  if (unlink_on_close_ && socket_.valid()) ::unlink(bound_.path.c_str());
}

Result<Listener> Listener::listen(const Endpoint& endpoint, std::optional<uint32_t> unix_group) {
  Listener l;
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC | O_NONBLOCK) != 0)
    return fail(ErrorCode::io, "pipe: " + errno_text(errno));
  l.wake_read_ = Socket(pipe_fds[0]);
  l.wake_write_ = Socket(pipe_fds[1]);
  l.bound_ = endpoint;
  if (endpoint.kind == Endpoint::Kind::unix_socket) {
    struct stat st {};
    if (::lstat(endpoint.path.c_str(), &st) == 0) {
      if (!S_ISSOCK(st.st_mode))
        return fail(ErrorCode::io, "cannot listen on " + endpoint.to_string() +
                                       ": the path exists and is not a socket");
      // A socket file: replace it only if no server answers on it.
      if (connect_to(endpoint)) return fail(ErrorCode::io, endpoint.to_string() + " is in use");
      ::unlink(endpoint.path.c_str());
    }
    l.socket_ = Socket(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!l.socket_.valid()) return fail(ErrorCode::io, "socket: " + errno_text(errno));
    const sockaddr_un a = unix_address(endpoint.path);
    if (::bind(l.socket_.fd(), reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0)
      return fail(ErrorCode::io,
                  "cannot listen on " + endpoint.to_string() + ": " + errno_text(errno));
    l.unlink_on_close_ = true;
    // Before listen(): until then a connect() is refused, so the mode the
    // umask gave the file at bind() is never usable.
    if (unix_group && ::chown(endpoint.path.c_str(), static_cast<uid_t>(-1),
                              static_cast<gid_t>(*unix_group)) != 0)
      return fail(ErrorCode::io, "cannot give " + endpoint.to_string() + " to group " +
                                     std::to_string(*unix_group) + ": " + errno_text(errno));
    if (::chmod(endpoint.path.c_str(), unix_group ? 0660 : 0600) != 0)
      return fail(ErrorCode::io,
                  "cannot set the mode of " + endpoint.to_string() + ": " + errno_text(errno));
  } else {
    auto info = resolve(endpoint, true);
    if (!info) return tl::unexpected(info.error());
    int last = 0;
    for (const addrinfo* a = info->get(); a; a = a->ai_next) {
      Socket s(::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol));
      if (!s.valid()) {
        last = errno;
        continue;
      }
      int one = 1;
      ::setsockopt(s.fd(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
      if (::bind(s.fd(), a->ai_addr, a->ai_addrlen) == 0) {
        l.socket_ = std::move(s);
        break;
      }
      last = errno;
    }
    if (!l.socket_.valid())
      return fail(ErrorCode::io,
                  "cannot listen on " + endpoint.to_string() + ": " + errno_text(last));
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    ::getsockname(l.socket_.fd(), reinterpret_cast<sockaddr*>(&ss), &len);
    char host[NI_MAXHOST], port[NI_MAXSERV];
    if (::getnameinfo(reinterpret_cast<sockaddr*>(&ss), len, host, sizeof host, port, sizeof port,
                      NI_NUMERICHOST | NI_NUMERICSERV) == 0) {
      l.bound_.host = host;
      l.bound_.port = static_cast<uint16_t>(std::atoi(port));
    }
  }
  if (::listen(l.socket_.fd(), 64) != 0)
    return fail(ErrorCode::io, "listen on " + endpoint.to_string() + ": " + errno_text(errno));
  return l;
}

Result<Socket> Listener::accept() {
  for (;;) {
    pollfd fds[2] = {{socket_.fd(), POLLIN, 0}, {wake_read_.fd(), POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return fail(ErrorCode::io, "poll: " + errno_text(errno));
    }
    if (fds[1].revents != 0) return fail(ErrorCode::disconnected, "listener shut down");
    if ((fds[0].revents & POLLIN) == 0) continue;
    const int fd = ::accept4(socket_.fd(), nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      // The connection may have gone before we took it; keep listening.
      if (errno == EINTR || errno == ECONNABORTED || errno == EAGAIN || errno == EPROTO) continue;
      return fail(ErrorCode::io, "accept: " + errno_text(errno));
    }
    if (bound_.kind == Endpoint::Kind::tcp) set_nodelay(fd);
    return Socket(fd);
  }
}

bool Listener::wait_for_shutdown(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    const auto left =
        std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    pollfd p{wake_read_.fd(), POLLIN, 0};
    const int r = ::poll(&p, 1, static_cast<int>(std::max<int64_t>(0, left.count())));
    if (r > 0) return true;
    if (r == 0) return false;
    if (errno != EINTR) return false;
  }
}

void Listener::shutdown() {
  if (wake_write_.valid()) {
    const char b = 1;
    [[maybe_unused]] const ssize_t n = ::write(wake_write_.fd(), &b, 1);
  }
}

}  // namespace rig::wire

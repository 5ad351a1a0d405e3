// fake_hailo_device_<suffix>: a fake Hailo-10H, the device side of HailoRT's
// hRPC protocol over TCP, so that tests drive HailoRT's real host library (its
// hRPC client) end to end without hardware. A test double: what it answers
// follows the device side's own server of the HailoRT version it is built for
// (hailort_server/hailort_server.cpp, hrpc/server.cpp, hrpc/rpc_connection.cpp;
// framing.hpp, actions.hpp and script.hpp cite the parts they follow and list
// what they do not model). Test code: never linked with libhailort, which
// exports the same global protobuf types.
//
//   fake_hailo_device_<suffix> --script FILE.json [--listen ADDR|auto] [--record FILE.json]
//
// --listen ADDR   an IPv4 loopback address (127.0.0.0/8) to bind, on HailoRT's
//                 fixed port 12133 (rpc_connection.hpp HAILORT_SERVER_PORT): a
//                 client given ADDR as its device id connects there
//                 (VDevice::create with an IP device id takes VDeviceHrpcClient
//                 over TCP). `auto` (the default) tries random addresses in
//                 127.64.0.0/10 until one binds.
// stdout          once listening, exactly one line, "listening ADDR", flushed.
// --record FILE   the record (script.hpp Record) as JSON, written through
//                 FILE.tmp and a rename after every client disconnect and on exit.
// Exits by itself when lifetime_s has passed, when the last client is gone and
// none came within idle_exit_s (once one came), or on SIGTERM/SIGINT; exit
// status 0, or 2 when its own setup failed (bad arguments or script, no
// address to bind): a message on stderr. Everything a client sent that it
// refused is in the record's "errors" (and on stderr).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "actions.hpp"
#include "framing.hpp"
#include "script.hpp"

#ifndef RIG_HAILORT_VERSION
#error "RIG_HAILORT_VERSION must be defined (targets.cmake)"
#endif

namespace {

constexpr uint16_t kHailortServerPort = 12133;  // rpc_connection.hpp HAILORT_SERVER_PORT

volatile std::sig_atomic_t g_stop = 0;

void on_signal(int) {
  g_stop = 1;
}

int usage(const char* why) {
  std::fprintf(stderr,
               "fake_hailo_device: %s\n"
               "usage: fake_hailo_device --script FILE.json [--listen ADDR|auto] "
               "[--record FILE.json]\n",
               why);
  return 2;
}

// A socket listening on addr:12133, or -1 (errno set).
int listen_on(const in_addr& addr) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(kHailortServerPort);
  sa.sin_addr = addr;
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof sa) != 0 || ::listen(fd, 16) != 0) {
    int e = errno;
    ::close(fd);
    errno = e;
    return -1;
  }
  return fd;
}

std::string to_text(const in_addr& addr) {
  char buf[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, &addr, buf, sizeof buf);
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace rig::test::fake_hailo;
  std::string script_path, listen = "auto", record_path;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if ((a == "--script" || a == "--listen" || a == "--record") && i + 1 < argc) {
      std::string v = argv[++i];
      (a == "--script" ? script_path : a == "--listen" ? listen : record_path) = v;
    } else {
      return usage(("unknown or incomplete argument \"" + a + "\"").c_str());
    }
  }
  if (script_path.empty()) return usage("--script FILE.json is required");

  std::ifstream in(script_path, std::ios::binary);
  if (!in) return usage(("cannot read the script " + script_path).c_str());
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string why;
  auto script = parse_script(text, RIG_HAILORT_VERSION, &why);
  if (!script) return usage(("bad script " + script_path + ": " + why).c_str());

  int listen_fd = -1;
  in_addr addr{};
  if (listen == "auto") {
    std::random_device seed;
    std::mt19937 rng(seed());
    for (int attempt = 0; attempt < 1000 && listen_fd < 0; ++attempt) {
      // 127.64.0.0/10: 127.64.0.0 .. 127.127.255.255; host part never .0 or .255.
      const uint32_t r = static_cast<uint32_t>(rng());
      const uint32_t a = (127u << 24) | ((64u + (r >> 24) % 64u) << 16) |
                         (((r >> 16) & 0xFFu) << 8) | (1u + (r & 0xFFFFu) % 254u);
      addr.s_addr = htonl(a);
      listen_fd = listen_on(addr);
    }
    if (listen_fd < 0) return usage("no free address in 127.64.0.0/10 after 1000 tries");
  } else {
    if (::inet_pton(AF_INET, listen.c_str(), &addr) != 1)
      return usage(("--listen " + listen + ": not an IPv4 address").c_str());
    if ((ntohl(addr.s_addr) >> 24) != 127)
      return usage(("--listen " + listen + ": not a loopback address (127.0.0.0/8)").c_str());
    listen_fd = listen_on(addr);
    if (listen_fd < 0)
      return usage(("cannot listen on " + listen + ":12133: " + std::strerror(errno)).c_str());
  }

  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGTERM, &sa, nullptr);
  ::sigaction(SIGINT, &sa, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  std::printf("listening %s\n", to_text(addr).c_str());
  std::fflush(stdout);

  const Framing framing = RIG_FAKE_HAILO_FIXED_FRAMES ? Framing::fixed_frames : Framing::sized_body;
  Record record;
  std::mutex record_mutex;
  auto write_record = [&] {
    if (record_path.empty()) return;
    std::lock_guard lock(record_mutex);
    if (!record.write_atomic(record_path))
      std::fprintf(stderr, "fake_hailo_device: cannot write %s\n", record_path.c_str());
  };

  using Clock = std::chrono::steady_clock;
  const auto started = Clock::now();
  std::mutex idle_mutex;
  size_t live = 0;
  bool seen_client = false;
  auto last_close = started;
  std::vector<std::thread> threads;
  {
    Server server(*script, framing, RIG_FAKE_HAILO_HAS_THROTTLING != 0, record);
    while (!g_stop) {
      const auto now = Clock::now();
      if (now - started >= script->lifetime) break;
      {
        std::lock_guard lock(idle_mutex);
        if (seen_client && live == 0 && now - last_close >= script->idle_exit) break;
      }
      pollfd p{listen_fd, POLLIN, 0};
      if (::poll(&p, 1, 20) <= 0 || !(p.revents & POLLIN)) continue;
      int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      {
        std::lock_guard lock(idle_mutex);
        ++live;
        seen_client = true;
      }
      threads.emplace_back([&, fd] {
        server.serve(fd, [&] {
          {
            std::lock_guard lock(idle_mutex);
            --live;
            last_close = Clock::now();
          }
          write_record();
        });
      });
    }
    ::close(listen_fd);
    server.stop();
    for (auto& t : threads) t.join();
  }
  write_record();
  return 0;
}

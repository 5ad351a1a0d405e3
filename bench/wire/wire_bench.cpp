// The wire benchmark of issue 3: rig's protocol against raw sockets moving
// the same bytes, in the same run, as ratios.
//
//  1. 4K frames (3840x2160x4 bytes in, a quarter of that out) pipelined over
//     loopback TCP and over a unix socket: rig serve + the remote device vs a
//     raw transfer of the same bytes with the same concurrency (the client
//     writes and reads on separate threads, the server reads and writes on
//     separate threads). Target: rig >= 0.95 x raw MB/s.
//  2. A 64-byte run round trip vs a raw 64-byte ping-pong. Targets: <= 1.15 x
//     over TCP, <= 1.30 x over a unix socket; with the breakdown into the
//     link, rig's framing (the ping action: no device, no protobuf) and the
//     run path.
//     The run is run_compact, the remote device's default; the protobuf run
//     action (compact=0) is printed beside it, and so are the context
//     switches per round trip of rig's run and of the raw echo. Pinned to
//     one CPU (`taskset -c 1`), there are no cross-CPU wake-ups, so the
//     ratio is the CPU work and the switches (docs/benchmarks.md).
//  3. gRPC (issue 12), what a user would pick instead, over loopback TCP in
//     the same run: unary calls and one bidirectional stream (grpc_echo.hpp)
//     against rig, 64-byte round trips and pipelined frames of 64 B ... 33 MB
//     in (a quarter of that out, at least 64 B), depth 4. Targets: rig >= 2x
//     gRPC's round-trip rate at 64 B, >= 1.5x gRPC's MB/s on 4K frames, each
//     against the faster of gRPC's two ways; frames also beside a raw socket
//     moving the same bytes (the most any protocol over a socket reaches).
//     Built only where gRPC was found at configure time; the output says
//     when it was not.
// Exits 1 when a target is missed (not run by CI: it measures wall time), 2
// on an unknown part or a gRPC part asked of a build without gRPC.
// `wire_bench [4k|rt|grpc|grpc-rt|grpc-frames] [PINGS [REPEATS [compact]]]`
// runs one part only (grpc-rt: gRPC's round trips, grpc-frames: its
// pipelined frames); `compact` leaves the protobuf run out of the round
// trips, so that a profile of the client's thread holds run_compact alone.
//
// The hosted device is the fake (tests/server/fake_device.hpp) with its
// test script off: it does no work and takes no lock, so what is measured
// is the protocol and the sockets. Kinds alternate (raw, rig, raw, rig, ...)
// and medians are compared, so drift in the machine affects both alike.
//
// One file (about 700 lines) on purpose: the parts share the raw
// references, the hosted server and the reporting, and each reference sits
// beside the rig measurement it is compared with (the gRPC side is in
// grpc_echo.*).
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "proto/transport.hpp"
#include "rig/device.hpp"
#include "server/fake_device.hpp"
#include "server/server.hpp"

#if RIG_WIRE_BENCH_GRPC
#include "grpc_echo.hpp"
#endif

namespace {

using namespace rig;
using Clock = std::chrono::steady_clock;

constexpr size_t kFrameIn = 3840ull * 2160 * 4;  // 33,177,600 bytes
constexpr size_t kFrameOut = kFrameIn / 4;       // 8,294,400 bytes
constexpr uint32_t kDepth = 4;
constexpr int kFrames = 32;  // per 4K measurement
int kPings = 20000;          // per round-trip measurement (wire_bench rt PINGS REPEATS)
int kRepeats = 7;
bool kProtobufRuns = true;  // round trips: also time the protobuf run action

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

void die(const std::string& what) {
  std::fprintf(stderr, "wire_bench: %s\n", what.c_str());
  std::exit(1);
}

template <class T>
T must(Result<T> r, const char* what) {
  if (!r) die(std::string(what) + ": " + r.error().to_string());
  return std::move(*r);
}

void must(Result<void> r, const char* what) {
  if (!r) die(std::string(what) + ": " + r.error().to_string());
}

// Context switches of the whole process (both ends of a round trip run in
// it): voluntary (a thread blocked, e.g. in recv) and involuntary (a woken
// thread preempted the one running).
struct Switches {
  double voluntary = 0, involuntary = 0;
};

Switches switches_now() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return {static_cast<double>(u.ru_nvcsw), static_cast<double>(u.ru_nivcsw)};
}

// Switches per round trip since `before`, into `out` (one per repeat).
void count_switches(const Switches& before, int round_trips, std::vector<Switches>& out) {
  const Switches after = switches_now();
  out.push_back({(after.voluntary - before.voluntary) / round_trips,
                 (after.involuntary - before.involuntary) / round_trips});
}

Switches median(const std::vector<Switches>& v) {
  std::vector<double> vol, invol;
  for (const auto& s : v) {
    vol.push_back(s.voluntary);
    invol.push_back(s.involuntary);
  }
  return {median(vol), median(invol)};
}

// ---- raw references --------------------------------------------------------

void read_exactly(int fd, std::byte* p, size_t n) {
  while (n > 0) {
    const ssize_t r = ::recv(fd, p, n, 0);
    if (r <= 0) die("raw recv failed");
    p += r;
    n -= static_cast<size_t>(r);
  }
}

void write_exactly(int fd, const std::byte* p, size_t n) {
  while (n > 0) {
    const ssize_t r = ::send(fd, p, n, MSG_NOSIGNAL);
    if (r <= 0) die("raw send failed");
    p += r;
    n -= static_cast<size_t>(r);
  }
}

std::pair<wire::Socket, wire::Socket> raw_pair(const wire::Endpoint& where) {
  auto listener = must(wire::Listener::listen(where), "raw listen");
  auto client = must(wire::connect_to(listener.bound()), "raw connect");
  auto server = must(listener.accept(), "raw accept");
  return {std::move(client), std::move(server)};
}

// `frames` frames of `frame_in` bytes one way and `frame_out` bytes back,
// both directions at once, kDepth frames ahead: MB/s of in + out.
double raw_pipelined(const wire::Endpoint& where, size_t frame_in, size_t frame_out, int frames) {
  auto [client, server] = raw_pair(where);
  std::vector<std::byte> in(frame_in, std::byte{1}), out(frame_out, std::byte{2});
  std::vector<std::byte> server_in(frame_in), client_out(frame_out);
  // The server: one thread reads frames, another writes the replies.
  std::mutex mu;
  std::condition_variable cv;
  int received = 0, acknowledged = 0;
  std::thread server_reader([&] {
    for (int i = 0; i < frames; ++i) {
      read_exactly(server.fd(), server_in.data(), frame_in);
      std::lock_guard lock(mu);
      ++received;
      cv.notify_all();
    }
  });
  std::thread server_writer([&] {
    for (int i = 0; i < frames; ++i) {
      {
        std::unique_lock lock(mu);
        cv.wait(lock, [&] { return received > i; });
      }
      write_exactly(server.fd(), out.data(), frame_out);
    }
  });
  const auto t0 = Clock::now();
  std::thread client_reader([&] {
    for (int i = 0; i < frames; ++i) {
      read_exactly(client.fd(), client_out.data(), frame_out);
      std::lock_guard lock(mu);
      ++acknowledged;
      cv.notify_all();
    }
  });
  for (int i = 0; i < frames; ++i) {
    {
      std::unique_lock lock(mu);
      cv.wait(lock, [&] { return acknowledged + static_cast<int>(kDepth) > i; });
    }
    write_exactly(client.fd(), in.data(), frame_in);
  }
  client_reader.join();
  const double s = seconds_since(t0);
  server_reader.join();
  server_writer.join();
  return static_cast<double>(frames) * static_cast<double>(frame_in + frame_out) / s / 1e6;
}

double raw_4k(const wire::Endpoint& where) {
  return raw_pipelined(where, kFrameIn, kFrameOut, kFrames);
}

// Microseconds per 64-byte round trip; the timed loop's context switches
// per round trip into `switches`.
double raw_ping_pong(const wire::Endpoint& where, std::vector<Switches>* switches = nullptr) {
  auto [client, server] = raw_pair(where);
  std::thread echo([&, fd = server.fd()] {
    std::byte buf[64];
    for (int i = 0; i < kPings; ++i) {
      read_exactly(fd, buf, sizeof buf);
      write_exactly(fd, buf, sizeof buf);
    }
  });
  std::byte buf[64] = {};
  const Switches before = switches_now();
  const auto t0 = Clock::now();
  for (int i = 0; i < kPings; ++i) {
    write_exactly(client.fd(), buf, sizeof buf);
    read_exactly(client.fd(), buf, sizeof buf);
  }
  const double s = seconds_since(t0);
  if (switches) count_switches(before, kPings, *switches);
  echo.join();
  return s / kPings * 1e6;
}

// Bytes of a 64-byte run_compact round trip: header + body + the input out,
// header + body (no device timings) + the output back.
constexpr size_t kFramedOut = wire::kHeaderSize + 12 + 8 + 64;
constexpr size_t kFramedBack = wire::kHeaderSize + 52 + 8 + 64;

// Sends header, body and payload of `total` bytes with one three-part gather
// write, as rig's sender does.
void write_framed(int fd, const std::byte* p, size_t total) {
  iovec iov[3] = {{const_cast<std::byte*>(p), wire::kHeaderSize},
                  {const_cast<std::byte*>(p) + wire::kHeaderSize, total - wire::kHeaderSize - 64},
                  {const_cast<std::byte*>(p) + total - 64, 64}};
  msghdr m{};
  m.msg_iov = iov;
  m.msg_iovlen = 3;
  if (::sendmsg(fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT) != static_cast<ssize_t>(total))
    die("raw framed sendmsg failed");
}

// Receives `total` bytes into a 64 KiB staging buffer, as rig's readers do.
void read_framed(int fd, std::vector<std::byte>& staging, size_t total) {
  for (size_t got = 0; got < total;) {
    const ssize_t r = ::recv(fd, staging.data(), staging.size(), 0);
    if (r <= 0) die("raw framed recv failed");
    got += static_cast<size_t>(r);
  }
}

// raw_ping_pong() moving run_compact's bytes with rig's system calls (a gather
// write out, a recv into a staging buffer): the kernel's share of rig's
// round trip, with none of rig's own work.
double raw_framed_ping_pong(const wire::Endpoint& where) {
  auto [client, server] = raw_pair(where);
  std::thread echo([&, fd = server.fd()] {
    std::vector<std::byte> staging(64 * 1024), reply(kFramedBack);
    for (int i = 0; i < kPings; ++i) {
      read_framed(fd, staging, kFramedOut);
      write_framed(fd, reply.data(), reply.size());
    }
  });
  std::vector<std::byte> staging(64 * 1024), request(kFramedOut);
  const auto t0 = Clock::now();
  for (int i = 0; i < kPings; ++i) {
    write_framed(client.fd(), request.data(), request.size());
    read_framed(client.fd(), staging, kFramedBack);
  }
  const double s = seconds_since(t0);
  echo.join();
  return s / kPings * 1e6;
}

// ---- rig -------------------------------------------------------------------

std::unique_ptr<server::Server> start_server(const std::string& listen) {
  testing::FakeOptions o;
  o.depth = kDepth;
  o.compute = Nanos(1);
  o.touch_data = false;
  o.control = nullptr;  // nothing scripted: the device takes no lock
  server::ServerSettings s;
  s.listen = listen;
  return must(server::Server::start(std::make_unique<testing::FakeDevice>(o), s), "serve");
}

ModelSource fake_model(size_t in, size_t out) {
  const std::string text = "in=" + std::to_string(in) + ",out=" + std::to_string(out);
  ModelSource m;
  m.name = "bench";
  for (char c : text) m.bytes.push_back(static_cast<std::byte>(c));
  return m;
}

struct Slots {
  std::vector<std::vector<std::byte>> in, out;
  std::vector<BindingId> ids;
};

Slots bind_slots(Device& d, uint32_t n, size_t in, size_t out) {
  Slots s;
  for (uint32_t i = 0; i < n; ++i) {
    s.in.emplace_back(in, std::byte{1});
    s.out.emplace_back(out);
  }
  for (uint32_t i = 0; i < n; ++i) {
    Bindings b;
    b.inputs.emplace_back(s.in[i]);
    b.outputs.emplace_back(s.out[i]);
    s.ids.push_back(must(d.bind(b), "bind"));
  }
  return s;
}

// `frames` frames kept `kDepth` in flight through `slots`: MB/s of in + out.
double rig_pipelined(Device& d, const Slots& slots, int frames) {
  const size_t bytes = slots.in[0].size() + slots.out[0].size();
  const auto t0 = Clock::now();
  int submitted = 0, completed = 0;
  for (; submitted < std::min(static_cast<int>(kDepth), frames); ++submitted)
    must(d.submit(slots.ids[static_cast<size_t>(submitted)], static_cast<uint64_t>(submitted)),
         "submit");
  while (completed < frames) {
    auto c = must(d.wait_next(std::chrono::seconds(60)), "wait_next");
    if (c.error) die("run failed: " + c.error->to_string());
    ++completed;
    if (submitted < frames) {
      must(d.submit(slots.ids[c.tag % kDepth], c.tag), "submit");
      ++submitted;
    }
  }
  return static_cast<double>(frames) * static_cast<double>(bytes) / seconds_since(t0) / 1e6;
}

double rig_4k(Device& d, const Slots& slots) {
  return rig_pipelined(d, slots, kFrames);
}

// Microseconds per ping round trip over rig's protocol: what the connection
// costs with no device. The client side is a bare frame loop, not the remote
// device, that does what the remote device's calibration does per ping: a
// ping encoded without protobuf into a reused frame, and its reply taken
// whole from the read buffer (wire::whole_ping) when it arrives in one read.
double rig_ping_round_trip(const std::string& address) {
  auto endpoint = must(wire::parse_endpoint(address), "ping endpoint");
  auto socket = must(wire::connect_to(endpoint), "ping connect");
  wire::FrameParser parser;
  std::vector<std::byte> staging(4096);
  const auto read = [&] {
    auto n = must(wire::read_some(socket, staging, false), "read");
    if (n.eof) die("server closed the ping connection");
    return std::span<const std::byte>(staging).first(n.bytes);
  };
  // The next frame through the parser, which must be an ok reply to `id`.
  const auto reply_to = [&](uint32_t id) {
    for (;;) {
      if (auto f = parser.pop()) {
        if (f->header.status != wire::Status::ok || f->header.message_id != id)
          die("ping connection: message " + std::to_string(id) + " answered with an error");
        return std::move(*f);
      }
      must(parser.feed(read()), "parse");
    }
  };
  wire::pb::Body hello;
  hello.mutable_hello_request()->set_min_version(1);
  hello.mutable_hello_request()->set_max_version(1);
  must(wire::write_frame(socket, must(wire::encode_frame(1, wire::Action::hello, wire::Status::ok,
                                                         hello, {}, wire::Limits{}),
                                      "encode")),
       "write");
  reply_to(1);
  wire::OutFrame ping;
  const wire::Limits limits;
  const auto t0 = Clock::now();
  for (int i = 0; i < kPings; ++i) {
    const auto id = static_cast<uint32_t>(i + 2);
    wire::encode_ping_into(ping, id, false);
    must(wire::write_frame(socket, ping), "write");
    const auto got = read();
    uint32_t replied = 0;
    if (wire::whole_ping(got, true, limits, replied) == got.size() && replied == id) continue;
    must(parser.feed(got), "parse");  // in pieces, or not a ping reply: as any frame
    if (!reply_to(id).body.has_ping_reply()) die("ping answered with another frame");
  }
  return seconds_since(t0) / kPings * 1e6;
}

double rig_round_trip(Device& d, BindingId id, int count = kPings,
                      std::vector<Switches>* switches = nullptr) {
  const Switches before = switches_now();
  const auto t0 = Clock::now();
  for (int i = 0; i < count; ++i) must(d.run(id), "run");
  const double s = seconds_since(t0);
  if (switches) count_switches(before, count, *switches);
  return s / count * 1e6;
}

struct Pair {
  double rig, raw;
  double ping = 0;      // round trips: rig's ping (no device), microseconds, median
  double protobuf = 0;  // round trips: the run action (compact=0), microseconds, median
  double framed = 0;    // round trips: raw_framed_ping_pong(), microseconds, median
  Switches rig_switches, raw_switches;  // round trips: per round trip, median
};

Pair compare_4k(const std::string& listen) {
  auto server = start_server(listen);
  auto device = must(open_device(server->address()), "open remote");
  must(device->load(fake_model(kFrameIn, kFrameOut)), "load");
  const Slots slots = bind_slots(*device, kDepth, kFrameIn, kFrameOut);
  const wire::Endpoint raw_where =
      must(wire::parse_listen_address(listen.rfind("unix:", 0) == 0 ? listen + ".raw" : listen),
           "raw address");
  rig_4k(*device, slots);  // warm-up: buffers touched, server slots allocated
  raw_4k(raw_where);
  std::vector<double> rig, raw;
  for (int r = 0; r < kRepeats; ++r) {
    raw.push_back(raw_4k(raw_where));
    rig.push_back(rig_4k(*device, slots));
  }
  return {median(rig), median(raw), 0, 0, 0, {}, {}};
}

// rig's run is run_compact (the remote device's default); the protobuf run
// action (compact=0) is measured beside it, on a connection of its own.
Pair compare_round_trip(const std::string& listen) {
  auto server = start_server(listen);
  auto device = must(open_device(server->address()), "open remote");
  must(device->load(fake_model(64, 64)), "load");
  const Slots slots = bind_slots(*device, 1, 64, 64);
  std::unique_ptr<Device> pb_device;
  Slots pb_slots;
  if (kProtobufRuns) {
    pb_device = must(open_device(server->address() + "?compact=0"), "open remote compact=0");
    must(pb_device->load(fake_model(64, 64)), "load");
    pb_slots = bind_slots(*pb_device, 1, 64, 64);
  }
  const wire::Endpoint raw_where =
      must(wire::parse_listen_address(listen.rfind("unix:", 0) == 0 ? listen + ".raw" : listen),
           "raw address");
  rig_round_trip(*device, slots.ids[0]);
  if (pb_device) rig_round_trip(*pb_device, pb_slots.ids[0]);
  raw_ping_pong(raw_where);
  raw_framed_ping_pong(raw_where);
  std::vector<double> rig, raw, ping, protobuf, framed;
  std::vector<Switches> rig_switches, raw_switches;
  for (int r = 0; r < kRepeats; ++r) {
    raw.push_back(raw_ping_pong(raw_where, &raw_switches));
    framed.push_back(raw_framed_ping_pong(raw_where));
    rig.push_back(rig_round_trip(*device, slots.ids[0], kPings, &rig_switches));
    ping.push_back(rig_ping_round_trip(server->address()));
    if (pb_device) protobuf.push_back(rig_round_trip(*pb_device, pb_slots.ids[0]));
  }
  return {
      median(rig),    median(raw),          median(ping),        pb_device ? median(protobuf) : 0,
      median(framed), median(rig_switches), median(raw_switches)};
}

#if RIG_WIRE_BENCH_GRPC
// ---- gRPC ------------------------------------------------------------------

// Frame sizes of the gRPC comparison: 64 B (a 64-byte answer), 4 KiB,
// 256 KiB, a 1080p and a 4K frame in; a quarter of that out.
struct Size {
  const char* name;
  size_t in, out;
};
constexpr Size kSizes[] = {{"64 B", 64, 64},
                           {"4 KiB", 4096, 1024},
                           {"256 KiB", 262144, 65536},
                           {"1080p", kFrameIn / 4, kFrameOut / 4},
                           {"4K", kFrameIn, kFrameOut}};

// About as many bytes per measurement as kFrames 4K frames, 32 to 2000 frames.
int frames_for(const Size& s) {
  const double f =
      static_cast<double>(kFrames) * (kFrameIn + kFrameOut) / static_cast<double>(s.in + s.out);
  return static_cast<int>(std::clamp(f, static_cast<double>(kFrames), 2000.0));
}

// Warm-up count per connection: a tenth of a measurement, at least 8.
int warm_up(int count) {
  return std::min(count, std::max(8, count / 10));
}

// "[min-max]" of the repeats, for the spread beside a median.
std::string range(const std::vector<double>& v, int decimals = 2) {
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  char text[64];
  std::snprintf(text, sizeof text, "[%.*f-%.*f]", decimals, *lo, decimals, *hi);
  return text;
}

// Whole MB/s, or tenths below 100 MB/s.
int mbs_decimals(const std::vector<double>& v) {
  return *std::max_element(v.begin(), v.end()) < 100 ? 1 : 0;
}

const char* verdict(bool met) {
  return met ? "target met" : "target missed";
}

// rig and gRPC alternate within each repeat (rig, unary, stream, rig, ...;
// for frames also a raw socket moving the same bytes: the ceiling of rig's
// ratio over a socket),
// each repeat of each on a new connection (so a connection whose threads the
// scheduler placed badly on this shared machine spoils one repeat, not all),
// medians over repeats. Returns whether the targets of the parts run are met.
bool compare_grpc(bool round_trips, bool frames_too) {
  auto echo = bench::GrpcEcho::start();
  std::printf(
      "\ngRPC %s over loopback TCP (sync server and stub, in this process, %s): "
      "rig / gRPC in the same run\n",
      bench::GrpcEcho::version().c_str(), echo->address().c_str());
  bool ok = true;

  if (round_trips) {  // 64 B: rig's run vs a unary call vs a write + read on a stream.
    auto server = start_server("127.0.0.1:0");
    std::vector<double> rig, unary, stream;
    for (int r = 0; r < kRepeats; ++r) {
      {
        auto device = must(open_device(server->address()), "open remote");
        must(device->load(fake_model(64, 64)), "load");
        const Slots slots = bind_slots(*device, 1, 64, 64);
        rig_round_trip(*device, slots.ids[0], warm_up(kPings));
        rig.push_back(rig_round_trip(*device, slots.ids[0], kPings));
      }
      echo->reconnect();
      echo->unary_round_trip_us(64, warm_up(kPings));
      unary.push_back(echo->unary_round_trip_us(64, kPings));
      echo->stream_round_trip_us(64, warm_up(kPings));
      stream.push_back(echo->stream_round_trip_us(64, kPings));
    }
    const double r = median(rig), u = median(unary), st = median(stream);
    const double best = std::min(u, st) / r;  // rig's rate / the faster gRPC's
    ok &= best >= 2.0;
    std::printf(
        "  64-byte round trip, %d x %d repeats (medians [min-max], us; rig x = gRPC time / rig "
        "time)\n",
        kPings, kRepeats);
    std::printf(
        "    rig %7.2f us %s   gRPC unary %7.2f us %s (rig %.2fx)   gRPC stream %7.2f us %s "
        "(rig %.2fx)\n",
        r, range(rig).c_str(), u, range(unary).c_str(), u / r, st, range(stream).c_str(), st / r);
    std::printf("    rig / faster gRPC %.2fx  (target >= 2.00) %s\n", best, verdict(best >= 2.0));
  }

  if (frames_too)
    std::printf(
        "  pipelined frames, depth %u, %d repeats (medians [min-max], MB/s of in + out; rig x = "
        "rig MB/s / gRPC MB/s)\n",
        kDepth, kRepeats);
  for (const Size& size : frames_too ? std::span(kSizes) : std::span<const Size>()) {
    const int frames = frames_for(size);
    auto server = start_server("127.0.0.1:0");
    const wire::Endpoint raw_where = must(wire::parse_listen_address("127.0.0.1:0"), "raw");
    std::vector<double> rig, unary, stream, raw;
    for (int r = 0; r < kRepeats; ++r) {
      raw.push_back(raw_pipelined(raw_where, size.in, size.out, frames));
      {
        auto device = must(open_device(server->address()), "open remote");
        must(device->load(fake_model(size.in, size.out)), "load");
        const Slots slots = bind_slots(*device, kDepth, size.in, size.out);
        rig_pipelined(*device, slots, warm_up(frames));  // buffers touched, server slots made
        rig.push_back(rig_pipelined(*device, slots, frames));
      }
      echo->reconnect();  // then HTTP/2's flow-control windows grow in the warm-ups
      echo->unary_pipelined_mbs(size.in, size.out, kDepth, warm_up(frames));
      unary.push_back(echo->unary_pipelined_mbs(size.in, size.out, kDepth, frames));
      echo->stream_pipelined_mbs(size.in, size.out, kDepth, warm_up(frames));
      stream.push_back(echo->stream_pipelined_mbs(size.in, size.out, kDepth, frames));
    }
    const double r = median(rig), u = median(unary), st = median(stream), w = median(raw);
    const double best = r / std::max(u, st);
    std::printf(
        "    %-7s %8zu in %7zu out x %4d  rig %8.1f %s   gRPC unary %8.1f %s (rig %.2fx)   "
        "gRPC stream %8.1f %s (rig %.2fx)   raw socket %8.1f %s (raw / faster gRPC %.2fx)",
        size.name, size.in, size.out, frames, r, range(rig, mbs_decimals(rig)).c_str(), u,
        range(unary, mbs_decimals(unary)).c_str(), r / u, st,
        range(stream, mbs_decimals(stream)).c_str(), r / st, w,
        range(raw, mbs_decimals(raw)).c_str(), w / std::max(u, st));
    if (size.in == kFrameIn) {
      ok &= best >= 1.5;
      std::printf("\n    4K: rig / faster gRPC %.2fx  (target >= 1.50) %s", best,
                  verdict(best >= 1.5));
    }
    std::printf("\n");
  }
  return ok;
}
#endif

// The 1, 5 and 15-minute load averages (/proc/loadavg): a busy machine
// spoils absolute figures, and the ratios less so.
std::string load_average() {
  std::ifstream f("/proc/loadavg");
  std::string one, five, fifteen;
  if (!(f >> one >> five >> fifteen)) return "unknown";
  return one + " " + five + " " + fifteen;
}

std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  for (std::string line; std::getline(f, line);)
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown cpu";
}

}  // namespace

int main(int argc, char** argv) {
  // `wire_bench 4k`, `rt`, `grpc`, `grpc-rt` or `grpc-frames` runs one part only.
  const std::string only = argc > 1 ? argv[1] : "";
  if (!only.empty() && only != "4k" && only != "rt" && only != "grpc" && only != "grpc-rt" &&
      only != "grpc-frames") {
    std::fprintf(stderr,
                 "wire_bench: unknown part '%s' (use 4k, rt, grpc, grpc-rt or grpc-frames)\n",
                 only.c_str());
    return 2;
  }
  if (argc > 2) kPings = std::max(1, std::atoi(argv[2]));
  if (argc > 3) kRepeats = std::max(1, std::atoi(argv[3]));
  if (argc > 4) {
    if (std::string(argv[4]) != "compact") {
      std::fprintf(stderr, "wire_bench: unknown option '%s' (use compact)\n", argv[4]);
      return 2;
    }
    kProtobufRuns = false;
  }
  const bool run_4k = only.empty() || only == "4k", run_rt = only.empty() || only == "rt",
             run_grpc = only.empty() || only.rfind("grpc", 0) == 0;
  const std::string sock =
      (std::filesystem::temp_directory_path() / ("rig-wire-bench-" + std::to_string(::getpid())))
          .string();
  const std::vector<std::pair<std::string, std::string>> transports = {{"tcp ", "127.0.0.1:0"},
                                                                       {"unix", "unix:" + sock}};
  std::printf("rig wire benchmark: ratios to references measured in the same run\n");
  std::printf("machine: %u cpus, %s, load average %s\n", std::thread::hardware_concurrency(),
              cpu_model().c_str(), load_average().c_str());
  bool ok = true;
  if (run_4k) {
    std::printf("\n4K frames: %zu bytes in, %zu out, depth %u, %d frames x %d repeats (medians)\n",
                kFrameIn, kFrameOut, kDepth, kFrames, kRepeats);
    for (const auto& [name, listen] : transports) {
      const Pair p = compare_4k(listen);
      const double ratio = p.rig / p.raw;
      ok &= ratio >= 0.95;
      std::printf("  %s  rig %8.1f MB/s   raw %8.1f MB/s   rig/raw %.3f  (target >= 0.95) %s\n",
                  name.c_str(), p.rig, p.raw, ratio, ratio >= 0.95 ? "PASS" : "FAIL");
    }
  }
  if (run_rt) {
    std::printf("\n64-byte round trip: %d round trips x %d repeats (medians)\n", kPings, kRepeats);
    for (const auto& [name, listen] : transports) {
      const Pair p = compare_round_trip(listen);
      const double ratio = p.rig / p.raw;
      const double target = name == "tcp " ? 1.15 : 1.30;
      ok &= ratio <= target;
      std::printf("  %s  rig %7.2f us   raw %7.2f us   rig/raw %.3f  (target <= %.2f) %s\n",
                  name.c_str(), p.rig, p.raw, ratio, target, ratio <= target ? "PASS" : "FAIL");
      // Where the difference goes: the socket round trip (raw), rig's framing
      // on the connection (ping - raw: a header written and checked, one read
      // and one write per side, no protobuf), and the run path behind it
      // (run - ping: the compact bodies and the payload, session, device host,
      // slot, the device call, the outputs).
      std::printf(
          "        breakdown: link %.2f us + rig framing (ping - raw) %.2f us + run path "
          "(run - ping) %.2f us\n",
          p.raw, p.ping - p.raw, p.rig - p.ping);
      std::printf(
          "        the kernel's share: a raw echo of run_compact's bytes (%zu out, %zu back) "
          "with rig's system calls %.2f us (%+.2f us over the 64-byte echo)\n",
          kFramedOut, kFramedBack, p.framed, p.framed - p.raw);
      // Both ends block once per round trip in each (2 voluntary); the
      // involuntary ones are the scheduler preempting on a wake-up, which
      // pinned to one CPU costs a switch each (docs/benchmarks.md).
      std::printf(
          "        context switches per round trip: rig %.2f voluntary + %.2f involuntary, "
          "raw %.2f + %.2f\n",
          p.rig_switches.voluntary, p.rig_switches.involuntary, p.raw_switches.voluntary,
          p.raw_switches.involuntary);
      if (kProtobufRuns)
        std::printf("        the protobuf run action (compact=0): %.2f us, rig/raw %.3f\n",
                    p.protobuf, p.protobuf / p.raw);
    }
  }
  if (run_grpc) {
#if RIG_WIRE_BENCH_GRPC
    ok &= compare_grpc(only != "grpc-frames", only != "grpc-rt");
#else
    std::printf(
        "\ngRPC comparison not built: gRPC was not found at configure time "
        "(libgrpc++-dev and protobuf-compiler-grpc; scripts/install-deps.sh --test)\n");
    if (!only.empty()) return 2;  // the part asked for does not exist in this build
#endif
  }
  std::printf("%s\n", ok ? "all targets met" : "some targets missed");
  return ok ? 0 : 1;
}

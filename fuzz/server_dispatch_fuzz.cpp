// libFuzzer target: the server's request dispatch. Each input is a byte
// stream sent by one client over a socketpair to an in-process server hosting
// the scripted fake device, after a fixed preamble (hello, then a model
// loaded as handle 1), so the fuzzer starts where runs, loops, describes and
// releases are reachable.
//
// Checks, beyond "does not crash or hang": every byte the server sends back
// parses as well-formed frames, and the stream ends cleanly. Each input ends
// only once the connection's threads have ended: they free their buffers
// after the client has seen the end of the stream, and libFuzzer's leak
// check after an input counts every thread's allocations. The requests of
// one input arrive in few reads, so the order in which the server places and
// handles frames of one read is exercised too.
//
// RIG_FUZZ_SEEDS=DIR writes a seed corpus (request sequences) to DIR.
#include <dirent.h>
#include <sys/socket.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "proto/transport.hpp"
#include "proto/wire.hpp"
#include "seed_files.hpp"
#include "server/fake_device.hpp"
#include "server/server.hpp"

namespace {

using namespace rig;
using namespace rig::wire;

Limits fuzz_limits() {
  Limits l;
  l.max_body_bytes = 1 << 16;
  l.max_buffer_bytes = 1 << 16;
  l.max_model_bytes = 1 << 12;
  l.max_frame_bytes = 1 << 18;
  l.max_buffers = 8;
  l.max_loop_duration = std::chrono::seconds(1);
  return l;
}

void check(bool ok) {
  if (!ok) __builtin_trap();
}

// Threads of this process now.
size_t threads() {
  size_t n = 0;
  if (DIR* d = ::opendir("/proc/self/task")) {
    while (const dirent* e = ::readdir(d))
      if (e->d_name[0] != '.') ++n;
    ::closedir(d);
  }
  return n;
}

server::Server& the_server() {
  static server::Server* s = [] {
    testing::FakeOptions o;
    o.depth = 2;
    o.sensors = {{"temperature_c", 40.0}};
    server::ServerSettings settings;
    settings.listen.clear();  // connections come through adopt() only
    settings.limits = fuzz_limits();
    settings.depth = 4;
    // Inputs follow each other faster than finished connections are reaped.
    settings.max_connections = 1024;
    settings.max_pending_bytes = 64 << 20;
    auto started = server::Server::start(std::make_unique<testing::FakeDevice>(o), settings);
    check(started.has_value());
    return started->release();
  }();
  return *s;
}

void append(std::vector<std::byte>& out, uint32_t id, Action action, pb::Body body,
            std::vector<std::span<const std::byte>> buffers = {}) {
  auto f = encode_frame(id, action, Status::ok, body, std::move(buffers), fuzz_limits());
  check(f.has_value());
  append_frame(*f, out);
}

const std::vector<std::byte>& preamble() {
  static const std::vector<std::byte> bytes = [] {
    std::vector<std::byte> out;
    pb::Body b;
    b.mutable_hello_request()->set_min_version(1);
    b.mutable_hello_request()->set_max_version(1);
    append(out, 1, Action::hello, b);
    b.Clear();
    b.mutable_load_model_request()->set_name("m");
    static const std::string model = "in=16,out=8";
    append(out, 2, Action::load_model, b,
           {std::span(reinterpret_cast<const std::byte*>(model.data()), model.size())});
    return out;
  }();
  return bytes;
}

void write_seeds(const char* dir) {
  const std::vector<std::byte> input(16, std::byte{3});
  std::vector<std::vector<std::byte>> seeds(4);
  pb::Body b;
  b.mutable_run_request()->set_handle(1);
  append(seeds[0], 10, Action::run, b, {input});
  append(seeds[0], 11, Action::run, b, {input});
  // The same run as run_compact (action 11), twice.
  for (uint32_t id : {17u, 18u}) {
    OutFrame compact;
    compact.buffers = {input};
    CompactRun run;
    run.handle = 1;
    check(encode_compact_into(compact, id, run, fuzz_limits()).has_value());
    append_frame(compact, seeds[0]);
  }
  b.Clear();
  auto* loop = b.mutable_run_for_duration_request();
  loop->set_handle(1);
  loop->set_duration_ns(1'000'000);
  append(seeds[1], 12, Action::run_for_duration, b, {input});
  b.Clear();
  b.mutable_describe_model_request()->set_handle(1);
  append(seeds[2], 13, Action::describe_model, b);
  b.Clear();
  b.mutable_read_sensors_request();
  append(seeds[2], 14, Action::read_sensors, b);
  // Pings: two canonical ones in one read (taken whole), then one the
  // parser takes (its field twice).
  for (uint32_t id : {19u, 20u, 21u}) {
    OutFrame ping;
    encode_ping_into(ping, id, false);
    if (id == 21) {
      const auto body = ping_body(false);
      ping.body.append(reinterpret_cast<const char*>(body.data()), body.size());
      Header h;
      h.message_id = id;
      h.action = Action::ping;
      h.body_size = static_cast<uint32_t>(ping.body.size());
      ping.header = encode_header(h);
    }
    append_frame(ping, seeds[2]);
  }
  b.Clear();
  b.mutable_release_model_request()->set_handle(1);
  append(seeds[3], 15, Action::release_model, b);
  b.Clear();
  b.mutable_load_model_request()->set_name("x");
  b.mutable_load_model_request()->set_by_name(true);
  append(seeds[3], 16, Action::load_model, b);
  rig::fuzz::write_seed_files(dir, seeds);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (const char* dir = std::getenv("RIG_FUZZ_SEEDS")) write_seeds(dir);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto pair = socket_pair();
  check(pair.has_value());
  Socket client = std::move(pair->second);
  server::Server& server = the_server();
  const size_t before = threads();
  server.adopt(std::move(pair->first));
  // Write from another thread so that replies can never back up into a
  // deadlock with a large input.
  std::thread writer([&] {
    auto send_all = [&](const std::byte* p, size_t n) {
      while (n > 0) {
        const ssize_t w = ::send(client.fd(), p, n, MSG_NOSIGNAL);
        if (w <= 0) return;
        p += w;
        n -= static_cast<size_t>(w);
      }
    };
    send_all(preamble().data(), preamble().size());
    send_all(reinterpret_cast<const std::byte*>(data), size);
    client.shutdown_write();
  });
  FrameParser replies(Limits{});
  std::vector<std::byte> staging(64 * 1024);
  for (;;) {
    auto n = read_some(client, staging, false);
    if (!n || n->eof) break;
    check(replies.feed(std::span(staging).first(n->bytes)).has_value());
    while (auto f = replies.pop()) check(f->header.magic == kMagic);
  }
  check(replies.finish().has_value());
  writer.join();
  // The connection's reader (and writer) end just after the end of stream.
  for (int i = 0; i < 100000 && threads() > before; ++i) std::this_thread::yield();
  return 0;
}

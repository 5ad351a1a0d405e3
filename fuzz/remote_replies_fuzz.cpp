// libFuzzer target: the remote device's reply handling. A fake server on a
// unix socket answers the device's hello (taking run_compact) properly. The
// input's first byte chooses what the rest of it answers:
//  * even: the fake answers the model load properly, then the device's run()
//    with the rest of the input;
//  * odd: the device calibrates at open, and the rest answers its first ping.
// Then the fake closes. So the fuzzer drives both ways a reply is taken:
// whole from the read buffer (take_lone_run, take_lone_ping: the rest is one
// run_compact reply to message 3, one canonical ping reply to message 2) and
// through the frame parser (anything else: pieces, several frames, error
// replies, other ids, protobuf bodies).
//
// Checks, beyond "does not crash, leak or hang": open() and run() return (a
// result or an error), and a successful run counted exactly its 16 output
// bytes, and an open that succeeded has a link floor or says why not.
//
// RIG_FUZZ_SEEDS=DIR writes a seed corpus (replies) to DIR.
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "proto/convert.hpp"
#include "proto/transport.hpp"
#include "proto/wire.hpp"
#include "rig/device.hpp"
#include "seed_files.hpp"

namespace {

using namespace rig;
using namespace rig::wire;

constexpr size_t kIn = 64, kOut = 16;

void check(bool ok) {
  if (!ok) __builtin_trap();
}

// A listening unix socket in a directory of its own, for the whole run.
struct UnixListener {
  std::string directory, path;
  int fd = -1;
  UnixListener() {
    char dir[] = "/tmp/rig-fuzz-remote-XXXXXX";
    check(::mkdtemp(dir) != nullptr);
    directory = dir;
    path = directory + "/s";
    fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    check(fd >= 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::strncpy(a.sun_path, path.c_str(), sizeof a.sun_path - 1);
    check(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    check(::listen(fd, 4) == 0);
  }
};

UnixListener& listener() {
  static UnixListener* l = [] {
    auto* made = new UnixListener();
    std::atexit([] {
      ::unlink(listener().path.c_str());
      ::rmdir(listener().directory.c_str());
    });
    return made;
  }();
  return *l;
}

void send_frame(int fd, uint32_t id, Action action, pb::Body& body) {
  auto f = encode_frame(id, action, Status::ok, body, {}, Limits{});
  check(f.has_value());
  std::vector<std::byte> bytes;
  append_frame(*f, bytes);
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

// The fake server's side of one input: answers hello and the load, and
// sends `reply` instead when request number `answer_at` arrives (the run,
// or the first ping), then closes its sending side and reads until the
// device hangs up.
void serve(int fd, std::span<const std::byte> reply, int answer_at) {
  FrameParser parser;
  std::vector<std::byte> buf(64 * 1024);
  int requests = 0;
  for (;;) {
    const ssize_t n = ::recv(fd, buf.data(), buf.size(), 0);
    if (n <= 0) return;
    if (requests >= answer_at) continue;  // drained until the device closes
    if (!parser.feed(std::span(buf).first(static_cast<size_t>(n)))) return;
    while (auto f = parser.pop()) {
      ++requests;
      pb::Body body;
      if (requests < answer_at && f->header.action == Action::hello) {
        auto* h = body.mutable_hello_reply();
        h->set_version(kMaxVersion);
        h->set_queue_depth(2);
        h->set_compact_run(true);
        h->set_device_kind("fake");
        send_frame(fd, f->header.message_id, Action::hello, body);
      } else if (requests < answer_at && f->header.action == Action::load_model) {
        ModelInfo info;
        info.name = "m";
        info.inputs.push_back({"in", ElementType::u8, {static_cast<int64_t>(kIn)}, kIn});
        info.outputs.push_back({"out", ElementType::u8, {static_cast<int64_t>(kOut)}, kOut});
        auto* m = body.mutable_load_model_reply();
        m->set_handle(1);
        to_pb(info, *m->mutable_info());
        send_frame(fd, f->header.message_id, Action::load_model, body);
      } else {
        size_t done = 0;
        while (done < reply.size()) {
          const ssize_t w = ::send(fd, reply.data() + done, reply.size() - done, MSG_NOSIGNAL);
          if (w <= 0) break;
          done += static_cast<size_t>(w);
        }
        ::shutdown(fd, SHUT_WR);
        requests = answer_at;
        break;
      }
    }
  }
}

std::vector<std::byte> compact_reply(uint32_t id, uint32_t device_present, size_t out_bytes) {
  static const std::vector<std::byte> out(1024, std::byte{7});
  OutFrame f;
  f.buffers = {std::span(out).first(out_bytes)};
  CompactRun r;
  r.kind = CompactRun::Kind::reply;
  r.compute_ns = 1000;
  r.device_present = device_present;
  for (uint32_t i = 0; i < 4; ++i) r.device[i] = 100 * (i + 1);
  check(encode_compact_into(f, id, r, Limits{}).has_value());
  std::vector<std::byte> bytes;
  append_frame(f, bytes);
  return bytes;
}

std::vector<std::byte> ping_reply(uint32_t id, bool twice = false) {
  OutFrame f;
  encode_ping_into(f, id, true);
  std::vector<std::byte> bytes;
  append_frame(f, bytes);
  if (twice) append_frame(f, bytes);
  return bytes;
}

// Each seed is the mode byte, then the reply.
void write_seeds(const char* dir) {
  std::vector<std::vector<std::byte>> seeds;
  seeds.push_back(compact_reply(3, 0, kOut));  // the whole lone reply
  seeds.push_back(compact_reply(3, 0b1001, kOut));
  seeds.push_back(compact_reply(4, 0, kOut));      // another id
  seeds.push_back(compact_reply(3, 0, kOut - 1));  // wrong size
  auto two = compact_reply(3, 0, kOut);
  const auto more = compact_reply(9, 0, kOut);
  two.insert(two.end(), more.begin(), more.end());
  seeds.push_back(two);  // a frame behind it
  auto error = encode_error(3, Action::run_compact, Error{ErrorCode::queue_full, "full"});
  seeds.emplace_back();
  append_frame(error, seeds.back());
  for (auto& seed : seeds) seed.insert(seed.begin(), std::byte{0});  // run mode
  for (auto ping : {ping_reply(2), ping_reply(3), ping_reply(2, true)}) {
    ping.insert(ping.begin(), std::byte{1});  // ping mode
    seeds.push_back(std::move(ping));
  }
  rig::fuzz::write_seed_files(dir, seeds);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (const char* dir = std::getenv("RIG_FUZZ_SEEDS")) write_seeds(dir);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  UnixListener& l = listener();
  const bool ping = (data[0] & 1) != 0;
  const std::span<const std::byte> reply(reinterpret_cast<const std::byte*>(data) + 1, size - 1);
  std::thread server([&] {
    const int fd = ::accept4(l.fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) return;
    serve(fd, reply, ping ? 2 : 3);
    ::close(fd);
  });
  if (ping) {
    {
      // An open that succeeds has a floor, or says why it has none (a ping
      // answered unsupported).
      auto device = open_device("unix:" + l.path + "?timeout=5s");
      if (device) {
        const DeviceInfo info = (*device)->info();
        check(info.link_floor.has_value() || info.properties.count("link_floor") == 1);
      }
    }  // the device closes its connection: the server's side ends
    server.join();
    return 0;
  }
  {
    auto device = open_device("unix:" + l.path + "?calibrate=0&timeout=5s");
    check(device.has_value());
    ModelSource model;
    model.name = "m";
    const std::string text = "in=64,out=16";
    for (char c : text) model.bytes.push_back(static_cast<std::byte>(c));
    check((*device)->load(model).has_value());
    std::vector<std::byte> in(kIn, std::byte{1}), out(kOut, std::byte{0});
    auto binding = (*device)->bind(Bindings{{in}, {out}});
    check(binding.has_value());
    const uint64_t before = (*device)->bytes().payload_out;
    auto ran = (*device)->run(*binding);
    if (ran) check((*device)->bytes().payload_out - before == kOut);
  }  // the device closes its connection: the server's side ends
  server.join();
  return 0;
}

// run_compact through rig serve and the remote device: the same outputs and
// timings as a protobuf run with fewer bytes, the client's choice of
// encoding (the hello's compact_run, the spec's compact=0), and the server's
// refusals of compact requests it must not run.
#include <gtest/gtest.h>

#include <thread>

#include "proto/convert.hpp"
#include "rig/device.hpp"
#include "server/fake_device.hpp"
#include "server/raw_client.hpp"
#include "server/server.hpp"

namespace rig::server {
namespace {

using testing::FakeDevice;
using testing::FakeOptions;
using testing::RawClient;
using wire::Action;
using wire::CompactRun;
using wire::Status;
namespace pb = wire::pb;

std::vector<std::byte> pattern(size_t n, uint8_t seed) {
  std::vector<std::byte> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<std::byte>((i * 11 + seed) & 0xff);
  return v;
}

ModelSource fake_model(const std::string& text) {
  ModelSource m;
  for (char c : text) m.bytes.push_back(static_cast<std::byte>(c));
  m.name = "fake";
  return m;
}

std::unique_ptr<Server> start_server(FakeOptions options = {}) {
  ServerSettings s;
  s.listen = "127.0.0.1:0";
  auto server = Server::start(std::make_unique<FakeDevice>(std::move(options)), s);
  EXPECT_TRUE(server) << server.error().to_string();
  return server ? std::move(*server) : nullptr;
}

std::unique_ptr<Device> open(const std::string& spec) {
  auto d = open_device(spec);
  EXPECT_TRUE(d) << d.error().to_string();
  return d ? std::move(*d) : nullptr;
}

// The bytes of a request frame of `in` in either encoding.
uint64_t request_bytes(bool compact, std::span<const std::byte> in) {
  wire::OutFrame f;
  f.buffers = {in};
  if (compact) {
    CompactRun run;
    run.handle = 1;
    EXPECT_TRUE(wire::encode_compact_into(f, 1, run, wire::Limits{}));
  } else {
    pb::Body body;
    body.mutable_run_request()->set_handle(1);
    EXPECT_TRUE(wire::encode_frame_into(f, 1, Action::run, Status::ok, body, wire::Limits{}));
  }
  return f.size();
}

// Both encodings give the same outputs and timings (the device's own
// included); only the bytes on the link differ, by exactly the frames'.
TEST(CompactRunServer, RunsAgreeWithProtobufRunsAndCountTheirOwnBytes) {
  FakeOptions o;
  InferenceTimings reported;
  reported.compute = std::chrono::microseconds(700);
  reported.transfer_in = std::chrono::microseconds(30);
  reported.transfer_out = std::chrono::microseconds(40);
  o.control->timings = reported;
  auto server = start_server(o);
  for (bool compact : {true, false}) {
    SCOPED_TRACE(compact);
    auto d = open(server->address() + (compact ? "" : "?compact=0"));
    ASSERT_TRUE(d);
    EXPECT_EQ(d->info().properties.at("run_encoding"), compact ? "run_compact" : "run (protobuf)");
    EXPECT_EQ(d->info().spec.find("compact=0") != std::string::npos, !compact);
    ASSERT_TRUE(d->load(fake_model("in=64,out=32,out=5")));
    std::vector<std::byte> in = pattern(64, 1), out0(32), out1(5);
    auto id = d->bind(Bindings{{in}, {out0, out1}});
    ASSERT_TRUE(id);
    const ByteCounters before = d->bytes();
    auto t = d->run(*id);
    ASSERT_TRUE(t) << t.error().to_string();
    EXPECT_EQ(out0, testing::fake_expected(in, 0, 32));
    EXPECT_EQ(out1, testing::fake_expected(in, 1, 5));
    ASSERT_TRUE(t->compute && t->transfer_in && t->transfer_out && t->queue_wait);
    EXPECT_EQ(*t->compute, std::chrono::microseconds(700));
    // The device's own transfer times are added to the server's and the
    // client's parts, which are never negative.
    EXPECT_GE(*t->transfer_in, std::chrono::microseconds(30));
    EXPECT_GE(*t->transfer_out, std::chrono::microseconds(40));
    const ByteCounters after = d->bytes();
    EXPECT_EQ(after.payload_in - before.payload_in, 64u);
    EXPECT_EQ(after.payload_out - before.payload_out, 37u);
    EXPECT_EQ(after.link_in - before.link_in, request_bytes(compact, in));
    // The reply: header, the fixed fields (with 3 device timings when
    // compact), two sizes, both outputs.
    if (compact)
      EXPECT_EQ(after.link_out - before.link_out, wire::kHeaderSize + 12 + 40 + 3 * 8 + 16 + 37);
    else
      EXPECT_GT(after.link_out - before.link_out, wire::kHeaderSize + 37);

    // Pipelined: submit/wait_next take the same encoding.
    std::vector<std::vector<std::byte>> ins, outs;
    std::vector<BindingId> ids;
    for (uint8_t k = 0; k < 4; ++k) {
      ins.push_back(pattern(64, static_cast<uint8_t>(10 + k)));
      outs.emplace_back(32);
      outs.emplace_back(5);
    }
    for (size_t k = 0; k < 4; ++k) {
      auto b = d->bind(Bindings{{ins[k]}, {outs[2 * k], outs[2 * k + 1]}});
      ASSERT_TRUE(b);
      ids.push_back(*b);
      ASSERT_TRUE(d->submit(*b, k));
    }
    for (int k = 0; k < 4; ++k) {
      auto c = d->wait_next(std::chrono::seconds(30));
      ASSERT_TRUE(c) << c.error().to_string();
      ASSERT_FALSE(c->error) << c->error->to_string();
      EXPECT_EQ(c->timings.compute, std::chrono::microseconds(700));
      EXPECT_EQ(outs[2 * c->tag], testing::fake_expected(ins[c->tag], 0, 32));
    }
  }
}

TEST(CompactRunServer, TheSpecOptionIsZeroOrOne) {
  auto server = start_server();
  auto both = open(server->address() + "?calibrate=0&compact=0");
  ASSERT_TRUE(both);
  EXPECT_EQ(both->info().spec, server->address() + "?calibrate=0&compact=0");
  auto bad = open_device(server->address() + "?compact=yes");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, ErrorCode::invalid_argument);
  EXPECT_NE(bad.error().message.find("compact must be 0 or 1, got 'yes'"), std::string::npos)
      << bad.error().message;
}

// A server that predates run_compact says nothing of it in hello: the
// client sends protobuf runs (and would get `unsupported` otherwise).
TEST(CompactRunServer, AnOlderServerGetsProtobufRuns) {
  auto listener = wire::Listener::listen(*wire::parse_listen_address("127.0.0.1:0"));
  ASSERT_TRUE(listener);
  Action run_action = Action::hello;
  std::thread old_server([&] {
    auto s = listener->accept();
    ASSERT_TRUE(s);
    RawClient peer(std::move(*s));
    auto hello = peer.read();
    ASSERT_TRUE(hello);
    pb::Body b;
    b.mutable_hello_reply()->set_version(1);
    b.mutable_hello_reply()->set_queue_depth(4);
    peer.send(hello->header.message_id, Action::hello, b);
    auto load = peer.read();
    ASSERT_TRUE(load);
    ModelInfo info = *testing::parse_fake_model("in=8,out=4", "fake");
    pb::Body loaded;
    loaded.mutable_load_model_reply()->set_handle(1);
    wire::to_pb(info, *loaded.mutable_load_model_reply()->mutable_info());
    peer.send(load->header.message_id, Action::load_model, loaded);
    auto run = peer.read();
    ASSERT_TRUE(run);
    run_action = run->header.action;
    const std::vector<std::byte> out(4, std::byte{9});
    pb::Body reply;
    reply.mutable_run_reply()->set_compute_ns(5);
    peer.send(run->header.message_id, Action::run, reply, {std::span<const std::byte>(out)});
    while (peer.read()) {
    }
  });
  auto d = open(listener->bound().to_string() + "?calibrate=0");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->info().properties.at("run_encoding"), "run (protobuf)");
  ASSERT_TRUE(d->load(fake_model("in=8,out=4")));
  std::vector<std::byte> in(8), out(4);
  auto id = d->bind(Bindings{{in}, {out}});
  ASSERT_TRUE(id);
  auto t = d->run(*id);
  ASSERT_TRUE(t) << t.error().to_string();
  EXPECT_EQ(*t->compute, Nanos(5));
  EXPECT_EQ(out, std::vector<std::byte>(4, std::byte{9}));
  d.reset();
  old_server.join();
  EXPECT_EQ(run_action, Action::run);
}

TEST(CompactRunServer, CompactRequestsAreCheckedAsRunsAre) {
  auto server = start_server();
  const auto in = pattern(16, 3);
  {
    // Before hello: a request with buffers breaks framing (a hello has
    // none), answered and closed.
    auto early = RawClient::connect(server->address());
    early.send_compact(1, 1, {in});
    auto f = early.read();
    ASSERT_TRUE(f);
    EXPECT_EQ(f->header.status, Status::limit_exceeded);
    EXPECT_NE(f->body.error_reply().message().find("before hello"), std::string::npos);
  }
  auto c = RawClient::connect(server->address());
  ASSERT_EQ(c.hello().header.status, Status::ok);
  const uint32_t handle = c.load("in=16,out=8");

  c.send_compact(3, handle, {in});
  auto ok = c.read();
  ASSERT_TRUE(ok);
  ASSERT_EQ(ok->header.status, Status::ok) << ok->body.error_reply().message();
  EXPECT_EQ(ok->header.action, Action::run_compact);
  EXPECT_EQ(ok->header.message_id, 3u);
  EXPECT_EQ(ok->compact.kind, CompactRun::Kind::reply);
  EXPECT_EQ(ok->compact.compute_ns, 1'000'000);  // the fake's 1 ms
  ASSERT_EQ(ok->buffers.size(), 1u);
  EXPECT_TRUE(std::ranges::equal(ok->buffers[0], testing::fake_expected(in, 0, 8)));

  const auto refused = [&](uint32_t id, const wire::Frame& f, Status status,
                           const std::string& words) {
    EXPECT_EQ(f.header.message_id, id);
    EXPECT_EQ(f.header.action, Action::run_compact);
    EXPECT_EQ(f.header.status, status);
    EXPECT_NE(f.body.error_reply().message().find(words), std::string::npos)
        << f.body.error_reply().message();
  };
  c.send_compact(4, handle + 100, {in});
  refused(4, *c.read(), Status::not_found, "handle");
  const auto wrong = pattern(15, 3);
  c.send_compact(5, handle, {wrong});
  refused(5, *c.read(), Status::invalid_argument, "expected 16 bytes, got 15");
  c.send_compact(6, handle, {in}, CompactRun::Kind::reply);
  refused(6, *c.read(), Status::protocol, "carries a reply body in a request");
  // The connection is still in step: the next run is answered.
  c.send_compact(7, handle, {in});
  auto again = c.read();
  ASSERT_TRUE(again);
  EXPECT_EQ(again->header.status, Status::ok);
  EXPECT_EQ(again->header.message_id, 7u);
}

// The bytes of a compact run request of `in` on `handle`.
std::vector<std::byte> compact_request(uint32_t id, uint32_t handle,
                                       std::span<const std::byte> in) {
  wire::OutFrame f;
  f.buffers = {in};
  CompactRun run;
  run.handle = handle;
  EXPECT_TRUE(wire::encode_compact_into(f, id, run, wire::Limits{}));
  std::vector<std::byte> bytes;
  wire::append_frame(f, bytes);
  return bytes;
}

void expect_run_reply(const std::optional<wire::Frame>& f, uint32_t id,
                      std::span<const std::byte> in) {
  ASSERT_TRUE(f) << "no reply to message " << id;
  ASSERT_EQ(f->header.status, Status::ok) << f->body.error_reply().message();
  EXPECT_EQ(f->header.message_id, id);
  EXPECT_EQ(f->compact.kind, CompactRun::Kind::reply);
  ASSERT_EQ(f->buffers.size(), 1u);
  EXPECT_TRUE(std::ranges::equal(f->buffers[0], testing::fake_expected(in, 0, 8)));
}

// The server takes a request that is whole in its read buffer without the
// frame parser (Session::take_whole); requests that arrive in pieces, or
// whole ones behind a piece, go through the parser. Both answer alike and
// in order.
TEST(CompactRunServer, WholeRequestsAndRequestsInPiecesAreAnsweredAlikeAndInOrder) {
  auto server = start_server();
  auto c = RawClient::connect(server->address());
  ASSERT_EQ(c.hello().header.status, Status::ok);
  const uint32_t handle = c.load("in=16,out=8");
  std::vector<std::vector<std::byte>> ins;
  for (uint8_t k = 0; k < 6; ++k) ins.push_back(pattern(16, static_cast<uint8_t>(20 + k)));

  // The first run finds the model through the parser; the reader keeps it.
  c.send_bytes(compact_request(9, handle, ins[0]));
  expect_run_reply(c.read(), 9, ins[0]);
  // Three whole requests in one write (the server's slots: twice its depth).
  std::vector<std::byte> three;
  for (uint32_t k = 0; k < 3; ++k) {
    const auto r = compact_request(10 + k, handle, ins[k]);
    three.insert(three.end(), r.begin(), r.end());
  }
  const uint64_t whole_before = server->stats().whole_requests;
  c.send_bytes(three);
  for (uint32_t k = 0; k < 3; ++k) expect_run_reply(c.read(), 10 + k, ins[k]);
  EXPECT_EQ(server->stats().whole_requests - whole_before, 3u);

  // One request in pieces: the header split, the body split, the input
  // split; then the rest of one with a whole one behind it in one write.
  const auto split = compact_request(20, handle, ins[3]);
  for (size_t cut : {size_t{7}, wire::kHeaderSize + 5, split.size() - 3}) {
    SCOPED_TRACE(cut);
    c.send_bytes(std::span(split).first(cut));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // lets the server read the piece
    c.send_bytes(std::span(split).subspan(cut));
    expect_run_reply(c.read(), 20, ins[3]);
  }
  const auto first = compact_request(21, handle, ins[4]);
  std::vector<std::byte> rest(first.begin() + 9, first.end());
  const auto behind = compact_request(22, handle, ins[5]);
  rest.insert(rest.end(), behind.begin(), behind.end());
  c.send_bytes(std::span(first).first(9));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  c.send_bytes(rest);
  expect_run_reply(c.read(), 21, ins[4]);
  expect_run_reply(c.read(), 22, ins[5]);
}

// The reader keeps the model it found last; a release, or a load still
// settling, is seen as by every run: such runs go to the parser.
TEST(CompactRunServer, WholeRunsSeeReleasesAndWaitForLoadsStillSettling) {
  auto server = start_server();
  auto c = RawClient::connect(server->address());
  ASSERT_EQ(c.hello().header.status, Status::ok);
  const uint32_t first = c.load("in=16,out=8");
  const uint32_t second = c.load("in=16,out=8", 3);
  const auto in = pattern(16, 5);
  c.send_bytes(compact_request(4, first, in));
  expect_run_reply(c.read(), 4, in);
  c.send_bytes(compact_request(5, first, in));  // found last: taken whole
  expect_run_reply(c.read(), 5, in);
  EXPECT_EQ(server->stats().whole_requests, 1u);

  // A load and a run on the model found last in one write: the run is not
  // taken whole while the load is pending (whether it still is when the
  // reader gets there is up to the device thread), and its reply follows.
  pb::Body load;
  load.mutable_load_model_request()->set_name("m");
  const std::string text = "in=16,out=8";
  std::span<const std::byte> model(reinterpret_cast<const std::byte*>(text.data()), text.size());
  auto frame = wire::encode_frame(6, Action::load_model, Status::ok, load, {model}, wire::Limits{});
  ASSERT_TRUE(frame);
  std::vector<std::byte> both;
  wire::append_frame(*frame, both);
  const auto run = compact_request(7, first, in);
  both.insert(both.end(), run.begin(), run.end());
  c.send_bytes(both);
  auto loaded = c.read();
  ASSERT_TRUE(loaded);
  EXPECT_EQ(loaded->header.message_id, 6u);
  ASSERT_EQ(loaded->header.status, Status::ok) << loaded->body.error_reply().message();
  expect_run_reply(c.read(), 7, in);

  // Released: the model found last is forgotten, and the run refused.
  pb::Body release;
  release.mutable_release_model_request()->set_handle(first);
  EXPECT_EQ(c.request(8, Action::release_model, release).header.status, Status::ok);
  c.send_bytes(compact_request(9, first, in));
  auto gone = c.read();
  ASSERT_TRUE(gone);
  EXPECT_EQ(gone->header.status, Status::not_found);
  EXPECT_NE(gone->body.error_reply().message().find("unknown model handle"), std::string::npos)
      << gone->body.error_reply().message();
  const uint64_t before = server->stats().whole_requests;
  c.send_bytes(compact_request(10, second, in));  // another model: found, then whole
  expect_run_reply(c.read(), 10, in);
  c.send_bytes(compact_request(11, second, in));
  expect_run_reply(c.read(), 11, in);
  EXPECT_EQ(server->stats().whole_requests - before, 1u);
}

// A reply whose header and last byte arrive in the same read adds no time
// of the client's to transfer_out: the device's own remains. The remote
// device takes a lone run's whole reply straight from its read buffer
// (compact), or through the parser (compact=0): the same figures.
TEST(CompactRunServer, AReplyWholeInOneReadAddsNoClientTransferTime) {
  FakeOptions o;
  InferenceTimings reported;
  reported.compute = std::chrono::microseconds(700);
  reported.transfer_out = std::chrono::microseconds(40);
  o.control->timings = reported;
  auto server = start_server(o);
  for (bool compact : {true, false}) {
    SCOPED_TRACE(compact);
    auto d = open(server->address() + (compact ? "" : "?compact=0"));
    ASSERT_TRUE(d);
    ASSERT_TRUE(d->load(fake_model("in=64,out=32")));
    std::vector<std::byte> in = pattern(64, 9), out(32);
    auto id = d->bind(Bindings{{in}, {out}});
    ASSERT_TRUE(id);
    for (int k = 0; k < 3; ++k) {
      in[0] = static_cast<std::byte>(k);
      const ByteCounters before = d->bytes();
      auto t = d->run(*id);
      ASSERT_TRUE(t) << t.error().to_string();
      EXPECT_EQ(out, testing::fake_expected(in, 0, 32));
      ASSERT_TRUE(t->transfer_out);
      EXPECT_EQ(*t->transfer_out, std::chrono::microseconds(40));
      const ByteCounters after = d->bytes();
      EXPECT_EQ(after.payload_out - before.payload_out, 32u);
      if (compact) {
        EXPECT_EQ(after.link_out - before.link_out, wire::kHeaderSize + 12 + 40 + 2 * 8 + 8 + 32);
      }
    }
  }
}

}  // namespace
}  // namespace rig::server

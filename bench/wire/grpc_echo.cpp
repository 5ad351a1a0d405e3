#include "grpc_echo.hpp"

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

#include "echo.grpc.pb.h"

namespace rig::bench {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kMaxMessageBytes = 64 << 20;  // above the 33,177,600-byte 4K frame

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "wire_bench: gRPC: %s\n", what.c_str());
  std::exit(1);
}

void must(const grpc::Status& s, const char* what) {
  if (!s.ok())
    fail(std::string(what) + ": status " + std::to_string(static_cast<int>(s.error_code())) + ": " +
         s.error_message());
}

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

Payload request(size_t bytes_in, size_t bytes_out) {
  Payload p;
  p.mutable_data()->assign(bytes_in, '\1');
  p.set_reply_bytes(static_cast<uint32_t>(bytes_out));
  return p;
}

// The reply carries `reply_bytes` bytes. A unary reply is a new message per
// call, so its bytes are written per call (the one copy a protobuf reply
// costs beyond its serialization); a stream keeps one reply message.
class EchoService final : public Echo::Service {
 public:
  grpc::Status Unary(grpc::ServerContext*, const Payload* in, Payload* out) override {
    out->mutable_data()->assign(in->reply_bytes(), '\2');
    return grpc::Status::OK;
  }

  grpc::Status Stream(grpc::ServerContext*,
                      grpc::ServerReaderWriter<Payload, Payload>* stream) override {
    Payload in, out;
    while (stream->Read(&in)) {
      if (out.data().size() != in.reply_bytes()) out.mutable_data()->assign(in.reply_bytes(), '\2');
      if (!stream->Write(out)) break;
    }
    return grpc::Status::OK;
  }
};

}  // namespace

struct GrpcEcho::Impl {
  EchoService service;
  std::unique_ptr<grpc::Server> server;
  std::string address;
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<Echo::Stub> stub;
};

GrpcEcho::GrpcEcho(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

GrpcEcho::~GrpcEcho() {
  impl_->stub.reset();
  impl_->channel.reset();
  impl_->server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
}

std::string GrpcEcho::version() {
  return grpc::Version();
}

std::string GrpcEcho::address() const {
  return impl_->address;
}

std::unique_ptr<GrpcEcho> GrpcEcho::start() {
  auto impl = std::make_unique<Impl>();
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  builder.SetMaxReceiveMessageSize(kMaxMessageBytes);
  builder.SetMaxSendMessageSize(kMaxMessageBytes);
  builder.RegisterService(&impl->service);
  impl->server = builder.BuildAndStart();
  if (!impl->server || port == 0) fail("the server did not start on 127.0.0.1");
  impl->address = "127.0.0.1:" + std::to_string(port);
  std::unique_ptr<GrpcEcho> echo(new GrpcEcho(std::move(impl)));
  echo->reconnect();
  return echo;
}

void GrpcEcho::reconnect() {
  impl_->stub.reset();
  impl_->channel.reset();
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(kMaxMessageBytes);
  args.SetMaxSendMessageSize(kMaxMessageBytes);
  args.SetInt(GRPC_ARG_ENABLE_HTTP_PROXY, 0);          // loopback, whatever http_proxy says
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);  // a connection of its own
  impl_->channel =
      grpc::CreateCustomChannel(impl_->address, grpc::InsecureChannelCredentials(), args);
  if (!impl_->channel->WaitForConnected(std::chrono::system_clock::now() +
                                        std::chrono::seconds(10)))
    fail("no connection to " + impl_->address + " within 10 s");
  impl_->stub = Echo::NewStub(impl_->channel);
}

double GrpcEcho::unary_round_trip_us(size_t bytes, int count) {
  const Payload in = request(bytes, bytes);
  Payload out;
  const auto t0 = Clock::now();
  for (int i = 0; i < count; ++i) {
    grpc::ClientContext context;
    must(impl_->stub->Unary(&context, in, &out), "unary call");
  }
  return seconds_since(t0) / count * 1e6;
}

double GrpcEcho::stream_round_trip_us(size_t bytes, int count) {
  const Payload in = request(bytes, bytes);
  Payload out;
  grpc::ClientContext context;
  auto stream = impl_->stub->Stream(&context);
  const auto t0 = Clock::now();
  for (int i = 0; i < count; ++i) {
    if (!stream->Write(in)) fail("stream write failed");
    if (!stream->Read(&out)) fail("stream read failed");
  }
  const double s = seconds_since(t0);
  stream->WritesDone();
  must(stream->Finish(), "stream");
  return s / count * 1e6;
}

double GrpcEcho::unary_pipelined_mbs(size_t bytes_in, size_t bytes_out, uint32_t depth,
                                     int frames) {
  // One request per thread, as a slot: the bytes are not rebuilt per call.
  std::vector<Payload> in(depth, request(bytes_in, bytes_out));
  std::atomic<int> next{0};
  std::vector<std::thread> callers;
  const auto t0 = Clock::now();
  for (uint32_t k = 0; k < depth; ++k)
    callers.emplace_back([&, k] {
      Payload out;
      while (next.fetch_add(1) < frames) {
        grpc::ClientContext context;
        must(impl_->stub->Unary(&context, in[k], &out), "unary call");
      }
    });
  for (auto& t : callers) t.join();
  return static_cast<double>(frames) * static_cast<double>(bytes_in + bytes_out) /
         seconds_since(t0) / 1e6;
}

double GrpcEcho::stream_pipelined_mbs(size_t bytes_in, size_t bytes_out, uint32_t depth,
                                      int frames) {
  const Payload in = request(bytes_in, bytes_out);
  grpc::ClientContext context;
  auto stream = impl_->stub->Stream(&context);
  std::mutex mu;
  std::condition_variable cv;
  int acknowledged = 0;
  const auto t0 = Clock::now();
  std::thread reader([&] {
    Payload out;
    for (int i = 0; i < frames; ++i) {
      if (!stream->Read(&out)) fail("stream read failed");
      std::lock_guard lock(mu);
      ++acknowledged;
      cv.notify_all();
    }
  });
  for (int i = 0; i < frames; ++i) {
    {
      std::unique_lock lock(mu);
      cv.wait(lock, [&] { return acknowledged + static_cast<int>(depth) > i; });
    }
    if (!stream->Write(in)) fail("stream write failed");
  }
  reader.join();
  const double s = seconds_since(t0);
  stream->WritesDone();
  must(stream->Finish(), "stream");
  return static_cast<double>(frames) * static_cast<double>(bytes_in + bytes_out) / s / 1e6;
}

}  // namespace rig::bench

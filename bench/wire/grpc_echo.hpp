// wire_bench's gRPC reference (issue 12): an echo server and a client channel
// to it in this process, over loopback TCP (127.0.0.1, an ephemeral port), as
// a user of gRPC would write them to move frames to a remote accelerator:
// the synchronous server (gRPC's thread pool runs the handlers) and the
// synchronous stub, messages of bench/wire/echo.proto (`bytes` payloads).
// Message size limits are raised to 64 MiB each way, above the 33 MB 4K frame.
//
// Each measurement runs only the calls it times; connections and streams are
// set up before the clock starts. A failed call ends the process with exit
// status 1 and gRPC's status message (a benchmark, not a library).
//
// Not thread-safe: one measurement at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace rig::bench {

class GrpcEcho {
 public:
  // Starts the server and connects to it; exits 1 when either fails.
  static std::unique_ptr<GrpcEcho> start();
  ~GrpcEcho();
  GrpcEcho(const GrpcEcho&) = delete;
  GrpcEcho& operator=(const GrpcEcho&) = delete;

  // gRPC's version (grpc::Version()) and the server's address.
  static std::string version();
  std::string address() const;

  // A new channel to the server, on a new TCP connection, for what follows.
  void reconnect();

  // Microseconds per round trip of `bytes` each way, `count` of them, one at
  // a time: a unary call each, or one write and one read on one stream.
  double unary_round_trip_us(size_t bytes, int count);
  double stream_round_trip_us(size_t bytes, int count);

  // MB/s (bytes in + bytes out over wall time) of `frames` requests of
  // `bytes_in` bytes, each answered by `bytes_out` bytes, `depth` in flight:
  // unary: `depth` client threads each making blocking calls;
  // stream: one stream, one thread writing up to `depth` requests ahead of
  // the replies, another reading the replies.
  double unary_pipelined_mbs(size_t bytes_in, size_t bytes_out, uint32_t depth, int frames);
  double stream_pipelined_mbs(size_t bytes_in, size_t bytes_out, uint32_t depth, int frames);

 private:
  struct Impl;
  explicit GrpcEcho(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace rig::bench

// The remote device: a client of `rig serve`, with the same interface as any
// local device.
//
// Spec: tcp://HOST:PORT[?token=T&timeout=DUR] or unix:PATH[?...]
//   token    presented in hello; defaults to $RIG_TOKEN
//   timeout  how long a request may go unanswered before the connection is
//            declared dead and every pending request fails (default 30s; a
//            run_for_duration gets its duration and sleep on top)
//
// Queue depth: info().queue_depth is what this client may keep in flight (the
// server's per-connection depth, twice the hosted device's by default);
// info().own_queue_depth (displayed as properties["device_queue_depth"]) is
// the hosted device's own queue depth, for comparing a knee in a depth sweep
// with it. The typed facts come from the hello reply: own_queue_depth, clock
// (virtual_time when the hosted device's timings are simulated) and
// memory_bytes (when the server knows it); duplex is unknown, since the
// network has none declared. The other facts of the hosted device are
// display properties named "server.*".
//
// Models: bytes or a file on this host are uploaded, named by
// model_display_name(); a ModelSource with only a server_name is loaded by
// name from the server's --model-dir, and the server names it.
//
// What it measures: the clock is the host's steady clock. Bytes: payload_*
// count tensor bytes; link_* count every byte that crossed the socket
// (headers, bodies, buffers, and the hello and model upload). Timings of a
// run: compute is the server's (the device-reported compute time, else the
// server's submit -> completion), transfer_in the server's receive time of
// the request, queue_wait the server's wait before the device took it,
// transfer_out the client's receive time of the reply; the rest of the
// client-observed latency is the link and the two network stacks.
//
// Concurrency: no threads, so a lone request costs no thread hand-off. Every
// call moves bytes both ways while it waits (writes without blocking, reads
// what has arrived, polls for both; with nothing to write it blocks in recv()
// itself), so requests pipeline up to the queue depth the server advertised,
// replies are matched by message id, and run outputs are received straight
// into the caller's bound output buffers. A request may still be partly
// unwritten when submit() returns; its inputs must stay untouched until its
// completion (the Device contract). Driven by one thread at a time, like
// every Device.
//
// Two parts, as the server's Connection and Session: remote_connection.hpp
// (the socket, framing, hello, calibration, the request pump and its fast
// paths) and remote_device.cpp (the Device adaptor on DeviceBase: what the
// hello reply says of the hosted device, model upload, each call a request).
#pragma once

#include <memory>
#include <string_view>

#include "rig/device.hpp"

namespace rig {

Result<std::unique_ptr<Device>> open_remote_device(std::string_view spec);

}  // namespace rig

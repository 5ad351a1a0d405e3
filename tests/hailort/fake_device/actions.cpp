#include "actions.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <span>
#include <type_traits>

#include "hailort/fake_device/fake_outputs.hpp"
#include "rpc.pb.h"

#if RIG_FAKE_HAILO_HAS_HEF_READER
#include "hailort/hef/synthetic_hef.hpp"
#endif

#ifndef RIG_FAKE_HAILO_HAS_THROTTLING
#error "RIG_FAKE_HAILO_HAS_THROTTLING must be defined (targets.cmake)"
#endif

namespace rig::test::fake_hailo {

namespace {

// hailo_status values (include/hailo/hailort.h, HAILO_STATUS__X; the same in
// 5.1.1 and 5.2.0).
constexpr uint32_t kSuccess = 0;
constexpr uint32_t kInvalidArgument = 2;   // HAILO_INVALID_ARGUMENT
constexpr uint32_t kInvalidOperation = 6;  // HAILO_INVALID_OPERATION
constexpr uint32_t kInternalFailure = 8;   // HAILO_INTERNAL_FAILURE
constexpr uint32_t kOpenFileFailure = 13;  // HAILO_OPEN_FILE_FAILURE
constexpr uint32_t kInvalidHef = 26;       // HAILO_INVALID_HEF
constexpr uint32_t kNotFound = 61;         // HAILO_NOT_FOUND
constexpr uint32_t kNotAvailable = 65;     // HAILO_NOT_AVAILABLE
constexpr uint32_t kRpcFailed = 77;        // HAILO_RPC_FAILED
constexpr uint32_t kNotSupported = 79;     // HAILO_NOT_SUPPORTED
constexpr uint32_t kLatencyMeasure =
    1u << 0;  // HAILO_LATENCY_MEASURE (hailo_latency_measurement_flags_t)
// hailort.h (5.2.0) hailo_notification_id_t HAILO_NOTIFICATION_ID_THROTTLING_STATE_CHANGE_EVENT.
[[maybe_unused]] constexpr uint32_t kThrottlingNotificationId = 14;
// network_group.hpp enum class BufferType { UNINITIALIZED, VIEW, PIX_BUFFER, DMA_BUFFER }.
constexpr uint32_t kBufferTypeView = 1;

// Limits on what a request may make the server allocate.
constexpr uint64_t kMaxHefBytes = 512ull << 20;
constexpr uint64_t kMaxBufferBytes = 256ull << 20;
constexpr uint64_t kMaxFrameInputBytes = 1ull << 30;
constexpr size_t kMaxBufferInfos = 256;

template <class T>
bool parse(const Message& m, T* out) {
  return out->ParseFromArray(m.body.data(), static_cast<int>(m.body.size()));
}

std::string cut(const std::string& s, size_t max) {
  return s.size() > max ? s.substr(0, max) : s;
}

}  // namespace

struct Connection {
  Connection(int fd_in, uint32_t id) : fd(fd_in), client_id(id) {}
  ~Connection() { ::close(fd); }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Ends reads and writes; the descriptor stays open (no reuse) until the
  // last holder (a queued frame, say) lets go.
  void shutdown() {
    closed = true;
    ::shutdown(fd, SHUT_RDWR);
  }

  struct Subscription {
    uint32_t notification_id = 0, callback_id = 0, dispatcher_id = 0, message_id = 0;
  };

  const int fd;
  const uint32_t client_id;
  std::atomic<bool> closed{false};
  std::mutex write_mutex;  // one message (and its buffers) at a time

  std::mutex subs_mutex;
  std::vector<Subscription> subs;

  std::mutex queue_mutex;
  std::condition_variable queue_cv;
  std::deque<std::function<void()>> queue;
  bool queue_stop = false;
  std::thread action_thread;
  std::vector<std::thread> loops;  // RUN_ASYNC_FOR_DURATION, under queue_mutex
};

Server::Server(Script script, Framing framing, bool has_throttling, Record& record)
    : script_(std::move(script)),
      framing_(framing),
      has_throttling_(has_throttling),
      record_(record) {
  if (!has_throttling_ && !script_.throttling.empty())
    error(
        "no throttling notification in this HailoRT version's rpc.proto (5.1.1): "
        "the script's throttling events are ignored");
  device_thread_ = std::thread([this] { device_loop(); });
}

Server::~Server() {
  stop();
  if (device_thread_.joinable()) device_thread_.join();
}

void Server::error(std::string text) {
  std::fprintf(stderr, "fake_hailo_device: %s\n", text.c_str());
  record_.add_error(std::move(text));
}

bool Server::sleep_for(std::chrono::microseconds d) {
  std::unique_lock lock(stop_mutex_);
  if (d.count() <= 0) return !stopping_;
  return !stop_cv_.wait_for(lock, d, [this] { return stopping_.load(); });
}

void Server::stop() {
  {
    std::lock_guard lock(stop_mutex_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  { std::lock_guard lock(device_mutex_); }
  device_cv_.notify_all();
  std::lock_guard lock(conns_mutex_);
  for (auto& w : conns_)
    if (auto c = w.lock()) c->shutdown();
}

size_t Server::live_connections() const {
  std::lock_guard lock(conns_mutex_);
  return conns_.size();
}

void Server::serve(int fd, const std::function<void()>& on_closed) {
  std::shared_ptr<Connection> conn;
  {
    std::lock_guard lock(state_mutex_);
    conn = std::make_shared<Connection>(fd, ++client_count_);
  }
  {
    std::lock_guard lock(conns_mutex_);
    conns_.push_back(conn);
  }
  if (stopping_) conn->shutdown();
  Connection* c = conn.get();
  c->action_thread = std::thread([c] {
    for (;;) {
      std::function<void()> action;
      {
        std::unique_lock lock(c->queue_mutex);
        c->queue_cv.wait(lock, [c] { return c->queue_stop || !c->queue.empty(); });
        if (c->queue_stop) return;
        action = std::move(c->queue.front());
        c->queue.pop_front();
      }
      action();
    }
  });

  for (;;) {
    Message m;
    std::string why;
    ReadStatus st = read_message(c->fd, framing_, &m, &why);
    if (st == ReadStatus::closed) break;
    if (st != ReadStatus::ok) {
      if (!c->closed && !stopping_)
        error("client " + std::to_string(c->client_id) +
              (st == ReadStatus::invalid ? ": refused a message: " + why
                                         : std::string(": connection ended inside a message")) +
              "; connection closed");
      break;
    }
    record_.count_action(m.header.action_id);
    if (!handle_request(conn, m)) break;
  }

  // As hrpc/server.cpp:118-140 does: stop the action thread (pending actions
  // are dropped), release the client's resources, close.
  c->shutdown();
  {
    std::lock_guard lock(c->queue_mutex);
    c->queue_stop = true;
  }
  c->queue_cv.notify_all();
  c->action_thread.join();
  std::vector<std::thread> loops;
  {
    std::lock_guard lock(c->queue_mutex);
    loops.swap(c->loops);
    c->queue.clear();
  }
  for (auto& t : loops) t.join();
  release_client(c->client_id);
  {
    std::lock_guard lock(conns_mutex_);
    conns_.erase(std::remove_if(conns_.begin(), conns_.end(),
                                [c](const std::weak_ptr<Connection>& w) {
                                  auto p = w.lock();
                                  return !p || p.get() == c;
                                }),
                 conns_.end());
  }
  conn.reset();
  on_closed();
}

void Server::release_client(uint32_t client_id) {
  std::lock_guard lock(state_mutex_);
  auto drop = [client_id](auto& map) {
    std::erase_if(map, [client_id](const auto& kv) {
      if constexpr (std::is_same_v<std::decay_t<decltype(kv.second)>, uint32_t>)
        return kv.second == client_id;
      else
        return kv.second.client_id == client_id;
    });
  };
  drop(cims_);
  drop(infer_models_);
  drop(vdevices_);
  drop(devices_);
}

void Server::enqueue(Connection& conn, std::function<void()> action) {
  {
    std::lock_guard lock(conn.queue_mutex);
    if (conn.queue_stop) return;
    conn.queue.push_back(std::move(action));
  }
  conn.queue_cv.notify_one();
}

void Server::send(Connection& conn, Header h, const std::string& body,
                  const std::vector<std::vector<uint8_t>>& buffers,
                  std::optional<uint32_t> script_action) {
  if (script_action) {
    std::lock_guard lock(state_mutex_);
    auto it = script_.drop_reply.find(*script_action);
    if (it != script_.drop_reply.end() && dropped_[*script_action] < it->second) {
      ++dropped_[*script_action];
      return;
    }
  }
  std::span<const uint8_t> body_bytes(reinterpret_cast<const uint8_t*>(body.data()), body.size());
  if (body.size() > kMaxBodyBytes) {
    error(action_name(h.action_id) + ": reply body of " + std::to_string(body.size()) +
          " bytes exceeds " + std::to_string(kMaxBodyBytes) + "; sent HAILO_INTERNAL_FAILURE");
    h.status = kInternalFailure;
    body_bytes = {};
  }
  std::vector<uint8_t> bytes;
  if (script_action && script_.garbage_reply.count(*script_action)) {
    // Bytes of a message's size that are no message: xorshift from the id.
    bytes.resize(message_bytes(framing_, body_bytes.size()));
    uint64_t x = 0x9E3779B97F4A7C15ull ^ h.message_id;
    for (auto& b : bytes) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      b = static_cast<uint8_t>(x >> 24);
    }
    if (bytes[0] == static_cast<uint8_t>(kRpcMagic)) bytes[0] ^= 0xFF;
  } else {
    bytes = encode_message(framing_, h, body_bytes);
    if (h.status == kSuccess)
      for (const auto& b : buffers) bytes.insert(bytes.end(), b.begin(), b.end());
  }
  std::lock_guard lock(conn.write_mutex);
  if (conn.closed) return;
  const size_t chunk = script_.reply_chunk_bytes;
  if (chunk == 0) {
    (void)write_all(conn.fd, bytes);
    return;
  }
  for (size_t off = 0; off < bytes.size(); off += chunk) {
    if (conn.closed) return;
    const size_t n = std::min(chunk, bytes.size() - off);
    if (!write_all(conn.fd, std::span<const uint8_t>(bytes.data() + off, n))) return;
    if (off + n < bytes.size() && !sleep_for(script_.reply_chunk_delay)) return;
  }
}

void Server::reply(Connection& conn, const Header& request, Reply r, bool delayed) {
  if (!r.send) return;
  if (delayed && !sleep_for(script_.reply_delay)) return;
  // hrpc/response_writer.hpp (write): a reply carries its request's header
  // with the status; a failure is the header only, no body, no buffers.
  Header h = request;
  h.magic = kRpcMagic;
  h.status = r.status;
  if (r.status != kSuccess) {
    r.body.clear();
    r.buffers.clear();
  }
  send(conn, h, r.body, r.buffers, request.action_id);
}

bool Server::split_io(uint32_t cim_handle, const std::vector<std::pair<uint32_t, uint32_t>>& infos,
                      Io* io, std::string* why) {
  Cim cim;
  {
    std::lock_guard lock(state_mutex_);
    auto it = cims_.find(cim_handle);
    if (it == cims_.end()) {
      *why = "unknown configured infer model handle " + std::to_string(cim_handle);
      return false;
    }
    cim = it->second;
  }
  if (infos.size() > kMaxBufferInfos) {
    *why = std::to_string(infos.size()) + " buffer infos, more than " +
           std::to_string(kMaxBufferInfos);
    return false;
  }
  // As ConfiguredInferModelRunAsyncHandler::parse_request (hailort_server.cpp)
  // reads them: each input takes buffers until its frame is full (several for
  // a multi-planar input); then one entry per output.
  size_t idx = 0;
  uint64_t total = 0;
  for (size_t i = 0; i < cim.inputs; ++i) {
    const uint64_t want = i < cim.input_frame_bytes.size() ? cim.input_frame_bytes[i] : 0;
    uint64_t got = 0;
    std::vector<uint32_t> chunks;
    do {
      if (idx >= infos.size()) {
        *why = std::to_string(infos.size()) + " buffer infos, too few for " +
               std::to_string(cim.inputs) + " inputs and " + std::to_string(cim.outputs) +
               " outputs";
        return false;
      }
      const auto [size, type] = infos[idx++];
      if (type != kBufferTypeView) io->all_view = false;
      chunks.push_back(size);
      got += size;
      if (want != 0 && got > want) {
        *why = "input " + std::to_string(i) + ": buffers of " + std::to_string(got) +
               " bytes overrun its frame of " + std::to_string(want);
        return false;
      }
    } while (want != 0 && got < want);
    if (got > kMaxBufferBytes) {
      *why = "input " + std::to_string(i) + " of " + std::to_string(got) + " bytes, more than " +
             std::to_string(kMaxBufferBytes);
      return false;
    }
    total += got;
    io->input_chunks.push_back(std::move(chunks));
  }
  if (total > kMaxFrameInputBytes) {
    *why = "inputs of " + std::to_string(total) + " bytes, more than " +
           std::to_string(kMaxFrameInputBytes);
    return false;
  }
  const size_t left = infos.size() - idx;
  if (left < cim.outputs) {
    *why = std::to_string(left) + " output buffer infos for " + std::to_string(cim.outputs) +
           " outputs";
    return false;
  }
  if (left > cim.outputs)
    error(std::to_string(left - cim.outputs) + " buffer infos beyond the model's " +
          std::to_string(cim.outputs) + " outputs ignored");
  for (size_t o = 0; o < cim.outputs; ++o) {
    const auto [size, type] = infos[idx++];
    if (type != kBufferTypeView) io->all_view = false;
    if (size > kMaxBufferBytes) {
      *why = "output " + std::to_string(o) + " of " + std::to_string(size) + " bytes, more than " +
             std::to_string(kMaxBufferBytes);
      return false;
    }
    io->output_sizes.push_back(size);
  }
  return true;
}

bool Server::read_inputs(Connection& conn, const Io& io,
                         std::vector<std::vector<uint8_t>>* inputs) {
  for (const auto& chunks : io.input_chunks) {
    uint64_t size = 0;
    for (uint32_t s : chunks) size += s;
    std::vector<uint8_t> in(static_cast<size_t>(size));
    size_t off = 0;
    for (uint32_t s : chunks) {
      if (read_exact(conn.fd, std::span<uint8_t>(in.data() + off, s)) != ReadStatus::ok)
        return false;
      off += s;
    }
    inputs->push_back(std::move(in));
  }
  return true;
}

namespace {

std::vector<std::vector<uint8_t>> make_outputs(const std::vector<std::vector<uint8_t>>& inputs,
                                               const std::vector<uint32_t>& output_sizes) {
  std::vector<std::span<const uint8_t>> views(inputs.begin(), inputs.end());
  const uint64_t digest = frame_digest(views);
  std::vector<std::vector<uint8_t>> outputs;
  for (size_t i = 0; i < output_sizes.size(); ++i) {
    outputs.emplace_back(output_sizes[i]);
    fill_output(digest, i, outputs.back());
  }
  return outputs;
}

template <class Req>
std::vector<std::pair<uint32_t, uint32_t>> infos_of(const Req& infos) {
  std::vector<std::pair<uint32_t, uint32_t>> out;
  for (const auto& i : infos) out.emplace_back(i.size(), i.type());
  return out;
}

}  // namespace

bool Server::handle_request(const std::shared_ptr<Connection>& conn, const Message& m) {
  Connection& c = *conn;
  const uint32_t id = m.header.action_id;
  const std::string who = "client " + std::to_string(c.client_id) + ": " + action_name(id);
  const Header h = m.header;
  if (id >= action_count() || id == static_cast<uint32_t>(ActionId::notification)) {
    // hrpc/server.cpp: Dispatcher::create_handler fails (HAILO_RPC_FAILED) and
    // serve_client ends the connection without a reply.
    error(who + ": no such action on the device; connection closed");
    return false;
  }
  auto refuse_parse = [&]() {
    error(who + ": could not parse the request; answered HAILO_RPC_FAILED");
    enqueue(c, [this, &c, h] { reply(c, h, Reply{kRpcFailed, {}, {}, true}, true); });
    return true;
  };
  auto scripted = [&]() -> std::optional<uint32_t> {
    auto it = script_.status.find(id);
    if (it == script_.status.end()) return std::nullopt;
    return it->second;
  };
  switch (static_cast<ActionId>(id)) {
    case ActionId::vdevice_create_infer_model: {
      // VDeviceCreateInferModelHandler::parse_request: the HEF follows, hef_size bytes.
      VDevice_CreateInferModel_Request q;
      if (!parse(m, &q)) return refuse_parse();
      if (q.hef_size() > kMaxHefBytes) {
        error(who + ": hef_size " + std::to_string(q.hef_size()) + " exceeds " +
              std::to_string(kMaxHefBytes) + "; connection closed");
        return false;
      }
      std::vector<uint8_t> hef(static_cast<size_t>(q.hef_size()));
      if (read_exact(c.fd, hef) != ReadStatus::ok) {
        if (!c.closed) error(who + ": the HEF ended early; connection closed");
        return false;
      }
      enqueue(c, [this, &c, h, q, hef = std::move(hef), st = scripted()] {
        if (st) return reply(c, h, Reply{*st, {}, {}, true}, true);
        Reply r;
        InferModel im;
        im.client_id = c.client_id;
        im.name = q.name();
#if RIG_FAKE_HAILO_HAS_HEF_READER
        std::string why;
        auto spec = rig::test::hef::read_hef(hef, &why);
        if (!spec || spec->groups.empty()) {
          error("client " + std::to_string(c.client_id) +
                ": VDEVICE__CREATE_INFER_MODEL: HEF not readable (" + why +
                "); answered HAILO_INVALID_HEF");
          return reply(c, h, Reply{kInvalidHef, {}, {}, true}, true);
        }
        // No name: the group this HailoRT version lists first (5.1.1
        // reverses the file's order; synthetic_hef.hpp hailort_group_order).
        const std::string wanted =
            q.name().empty() ? rig::test::hef::hailort_group_order(*spec).front() : q.name();
        const rig::test::hef::NetworkGroup* g = &spec->groups.front();
        for (const auto& group : spec->groups)
          if (group.name == wanted) g = &group;
        im.hef_known = true;
        im.hef_inputs = g->inputs.size();
        for (const auto& in : g->inputs) im.input_frame_bytes.push_back(in.frame_bytes);
        for (const auto& out : g->outputs) im.hef_has_nms = im.hef_has_nms || out.nms;
#else
        (void)hef;
#endif
        std::optional<uint32_t> handle;
        {
          std::lock_guard lock(state_mutex_);
          if (vdevices_.count(q.vdevice_handle().id())) {
            handle = next_infer_model_++;
            infer_models_[*handle] = std::move(im);
          }
        }
        if (!handle) return reply(c, h, Reply{kNotFound, {}, {}, true}, true);
        VDevice_CreateInferModel_Reply out;
        out.mutable_infer_model_handle()->set_id(*handle);
        r.body = out.SerializeAsString();
        reply(c, h, std::move(r), true);
      });
      return true;
    }
    case ActionId::cim_run_async:
    case ActionId::cim_run_async_for_duration: {
      const bool loop = static_cast<ActionId>(id) == ActionId::cim_run_async_for_duration;
      uint32_t cim = 0, duration_ms = 0, sleep_ms = 0;
      std::vector<std::pair<uint32_t, uint32_t>> infos;
      if (loop) {
        ConfiguredInferModel_RunAsyncForDuration_Request q;
        if (!parse(m, &q)) return refuse_parse();
        cim = q.configured_infer_model_handle().id();
        duration_ms = q.duration_ms();
        sleep_ms = q.sleep_between_frames_ms();
        infos = infos_of(q.io_buffer_infos());
      } else {
        ConfiguredInferModel_AsyncInfer_Request q;
        if (!parse(m, &q)) return refuse_parse();
        cim = q.configured_infer_model_handle().id();
        infos = infos_of(q.buffer_infos());
      }
      Io io;
      std::string why;
      if (!split_io(cim, infos, &io, &why)) {
        // The real server cannot read on either (its .at() throws, or its
        // reads lose step with the stream).
        error(who + ": " + why + "; connection closed");
        return false;
      }
      std::vector<std::vector<uint8_t>> inputs;
      if (!read_inputs(c, io, &inputs)) {
        if (!c.closed) error(who + ": the inputs ended early; connection closed");
        return false;
      }
      std::optional<uint32_t> st = scripted();
      if (loop && !st && !io.all_view) {
        // ConfiguredInferModelRunAsyncForDurationHandler::parse_request: "Buffer type must be
        // VIEW".
        error(who + ": a buffer that is not BufferType::VIEW; answered HAILO_INVALID_ARGUMENT");
        st = kInvalidArgument;
      }
      enqueue(c, [this, conn, h, cim, loop, duration_ms, sleep_ms, st, inputs = std::move(inputs),
                  outs = io.output_sizes]() mutable {
        if (st) return reply(*conn, h, Reply{*st, {}, {}, true}, false);
        if (loop) {
          std::lock_guard lock(conn->queue_mutex);
          conn->loops.emplace_back(&Server::run_loop, this, conn, h, duration_ms, sleep_ms,
                                   std::move(inputs), std::move(outs));
          return;
        }
        {
          std::lock_guard lock(device_mutex_);
          frames_.push_back(Frame{conn, h, cim, std::move(inputs), std::move(outs)});
        }
        device_cv_.notify_one();
      });
      return true;
    }
    case ActionId::device_echo_buffer: {
      // DeviceEchoBufferHandler: buffer_size bytes follow; echoed back after the reply.
      Device_EchoBuffer_Request q;
      if (!parse(m, &q)) return refuse_parse();
      if (q.buffer_size() > kMaxBufferBytes) {
        error(who + ": buffer_size " + std::to_string(q.buffer_size()) + " exceeds " +
              std::to_string(kMaxBufferBytes) + "; connection closed");
        return false;
      }
      std::vector<uint8_t> buffer(q.buffer_size());
      if (!buffer.empty() && read_exact(c.fd, buffer) != ReadStatus::ok) {
        if (!c.closed) error(who + ": the buffer ended early; connection closed");
        return false;
      }
      enqueue(c, [this, &c, h, st = scripted(), buffer = std::move(buffer)]() mutable {
        Reply r;
        if (st) r.status = *st;
        if (!buffer.empty()) r.buffers.push_back(std::move(buffer));
        reply(c, h, std::move(r), true);
      });
      return true;
    }
    default:
      enqueue(c, [this, &c, m] {
        Reply r = handle_sync(c, m);
        reply(c, m.header, std::move(r), true);
      });
      return true;
  }
}

Server::Reply Server::handle_sync(Connection& conn, const Message& m) {
  const uint32_t id = m.header.action_id;
  const std::string who = "client " + std::to_string(conn.client_id) + ": " + action_name(id);
  if (auto it = script_.status.find(id); it != script_.status.end())
    return Reply{it->second, {}, {}, true};
  auto bad = [&] {
    error(who + ": could not parse the request; answered HAILO_RPC_FAILED");
    return Reply{kRpcFailed, {}, {}, true};
  };
  auto ok = [](const auto& proto) { return Reply{kSuccess, proto.SerializeAsString(), {}, true}; };
  const Reply done{kSuccess, {}, {}, true};
  const Reply not_found{kNotFound, {}, {}, true};
  // resource_lookup (server_resource_manager.hpp:186-192): HAILO_NOT_FOUND.
  auto cim_known = [this](uint32_t h) {
    std::lock_guard lock(state_mutex_);
    return cims_.count(h) != 0;
  };
  auto device_known = [this](uint32_t h) {
    std::lock_guard lock(state_mutex_);
    return devices_.count(h) != 0;
  };
  auto not_modelled = [&] {
    error(who + ": not modelled by the fake device; answered HAILO_NOT_SUPPORTED");
    return Reply{kNotSupported, {}, {}, true};
  };

  switch (static_cast<ActionId>(id)) {
    case ActionId::vdevice_create: {
      VDevice_Create_Request q;
      if (!parse(m, &q)) return bad();
      VDevice_Create_Reply r;
      std::lock_guard lock(state_mutex_);
      const uint32_t h = next_vdevice_++;
      vdevices_[h] = conn.client_id;
      r.mutable_vdevice_handle()->set_id(h);
      return ok(r);
    }
    case ActionId::vdevice_destroy: {
      // handle_vdevice_destroy: releases what it finds, answers success anyway.
      VDevice_Destroy_Request q;
      if (!parse(m, &q)) return bad();
      std::lock_guard lock(state_mutex_);
      vdevices_.erase(q.vdevice_handle().id());
      return done;
    }
    case ActionId::infer_model_destroy: {
      InferModel_Destroy_Request q;
      if (!parse(m, &q)) return bad();
      std::lock_guard lock(state_mutex_);
      infer_models_.erase(q.infer_model_handle().id());
      return done;
    }
    case ActionId::infer_model_create_configured_infer_model: {
      InferModel_CreateConfiguredInferModel_Request q;
      if (!parse(m, &q)) return bad();
      const bool latency = (q.latency_flag() & kLatencyMeasure) != 0;
      if (latency) record_.set_latency_flags_requested();
      std::lock_guard lock(state_mutex_);
      auto it = infer_models_.find(q.infer_model_handle().id());
      if (it == infer_models_.end()) return not_found;
      const InferModel& im = it->second;
      // libhailort core_op/resource_manager/resource_manager.cpp
      // create_hw_latency_meter: an NMS-on-chip output, or more than one
      // physical input, and configure fails with HAILO_INVALID_OPERATION.
      if (latency && im.hef_known && (im.hef_has_nms || im.hef_inputs > 1)) {
        error(who + ": HW latency measurement asked of a model with " +
              (im.hef_has_nms ? std::string("an NMS output") : std::string("several inputs")) +
              "; answered HAILO_INVALID_OPERATION");
        return Reply{kInvalidOperation, {}, {}, true};
      }
      Cim cim;
      cim.client_id = conn.client_id;
      cim.inputs = static_cast<size_t>(q.input_infer_streams_size());
      cim.outputs = static_cast<size_t>(q.output_infer_streams_size());
      cim.latency_measured = latency;
      if (im.hef_known) {
        if (im.hef_inputs == cim.inputs)
          cim.input_frame_bytes = im.input_frame_bytes;
        else
          error(who + ": the request names " + std::to_string(cim.inputs) +
                " inputs, the HEF has " + std::to_string(im.hef_inputs));
      }
      const uint32_t h = next_cim_++;
      cims_[h] = std::move(cim);
      InferModel_CreateConfiguredInferModel_Reply r;
      r.mutable_configured_infer_model_handle()->set_id(h);
      r.set_async_queue_size(script_.async_queue_size);
      return ok(r);
    }
    case ActionId::cim_destroy: {
      ConfiguredInferModel_Destroy_Request q;
      if (!parse(m, &q)) return bad();
      std::lock_guard lock(state_mutex_);
      cims_.erase(q.configured_infer_model_handle().id());
      return done;
    }
    case ActionId::cim_set_scheduler_timeout: {
      ConfiguredInferModel_SetSchedulerTimeout_Request q;
      if (!parse(m, &q)) return bad();
      return cim_known(q.configured_infer_model_handle().id()) ? done : not_found;
    }
    case ActionId::cim_set_scheduler_threshold: {
      ConfiguredInferModel_SetSchedulerThreshold_Request q;
      if (!parse(m, &q)) return bad();
      return cim_known(q.configured_infer_model_handle().id()) ? done : not_found;
    }
    case ActionId::cim_set_scheduler_priority: {
      ConfiguredInferModel_SetSchedulerPriority_Request q;
      if (!parse(m, &q)) return bad();
      return cim_known(q.configured_infer_model_handle().id()) ? done : not_found;
    }
    case ActionId::cim_get_hw_latency_measurement: {
      ConfiguredInferModel_GetHwLatencyMeasurement_Request q;
      if (!parse(m, &q)) return bad();
      Cim cim;
      {
        std::lock_guard lock(state_mutex_);
        auto it = cims_.find(q.configured_infer_model_handle().id());
        if (it == cims_.end()) return not_found;
        cim = it->second;
      }
      if (script_.hw_latency_status) return Reply{*script_.hw_latency_status, {}, {}, true};
      // core_op.cpp get_latency_measurement: no latency meter (not asked for
      // at configure) or no measurement yet: HAILO_NOT_AVAILABLE, which
      // handle_configured_infer_model_get_hw_latency_measurement passes on.
      if (!cim.latency_measured || cim.frames == 0) return Reply{kNotAvailable, {}, {}, true};
      // The reply is in nanoseconds (GetHwLatencyMeasurementSerializer::deserialize_reply);
      // UINT32_MAX is INVALID_LATENCY_MEASUREMENT.
      const double ns = std::min(script_.hw_latency_ms * 1e6, 4294967294.0);
      ConfiguredInferModel_GetHwLatencyMeasurement_Reply r;
      r.set_avg_hw_latency(static_cast<uint32_t>(std::llround(ns)));
      return ok(r);
    }
    case ActionId::cim_activate: {
      ConfiguredInferModel_Activate_Request q;
      if (!parse(m, &q)) return bad();
      return cim_known(q.configured_infer_model_handle().id()) ? done : not_found;
    }
    case ActionId::cim_deactivate: {
      ConfiguredInferModel_Deactivate_Request q;
      if (!parse(m, &q)) return bad();
      return cim_known(q.configured_infer_model_handle().id()) ? done : not_found;
    }
    case ActionId::cim_shutdown: {
      ConfiguredInferModel_Shutdown_Request q;
      if (!parse(m, &q)) return bad();
      return cim_known(q.configured_infer_model_handle().id()) ? done : not_found;
    }
    case ActionId::device_create: {
      Device_Create_Request q;
      if (!parse(m, &q)) return bad();
      Device_Create_Reply r;
      std::lock_guard lock(state_mutex_);
      const uint32_t h = next_device_++;
      devices_[h] = conn.client_id;
      r.mutable_device_handle()->set_id(h);
      return ok(r);
    }
    case ActionId::device_destroy: {
      Device_Destroy_Request q;
      if (!parse(m, &q)) return bad();
      std::lock_guard lock(state_mutex_);
      devices_.erase(q.device_handle().id());
      return done;
    }
    case ActionId::device_identify: {
      Device_Identify_Request q;
      if (!parse(m, &q)) return bad();
      if (!device_known(q.device_handle().id())) return not_found;
      const Identity& id_in = script_.identity;
      Device_Identify_Reply r;
      DeviceIdentityProto* p = r.mutable_identity();
      p->set_protocol_version(id_in.protocol_version);
      p->mutable_fw_version()->set_major_value(id_in.fw_major);
      p->mutable_fw_version()->set_minor_value(id_in.fw_minor);
      p->mutable_fw_version()->set_revision_value(id_in.fw_revision);
      p->set_logger_version(id_in.logger_version);
      // IdentifyDeviceSerializer::deserialize_reply copies these into
      // hailo_device_identity_t's fixed arrays without a bound: keep within
      // HAILO_MAX_BOARD_NAME_LENGTH (32), HAILO_MAX_PRODUCT_NAME_LENGTH (42),
      // HAILO_MAX_SERIAL_NUMBER_LENGTH and HAILO_MAX_PART_NUMBER_LENGTH (16).
      p->set_board_name(cut(id_in.board_name, 31));
      p->set_product_name(cut(id_in.product_name, 41));
      for (char ch : cut(id_in.serial_number, 16)) p->add_serial_number(static_cast<uint8_t>(ch));
      for (char ch : cut(id_in.part_number, 16)) p->add_part_number(static_cast<uint8_t>(ch));
      p->set_is_release(id_in.is_release);
      if (DeviceArchitectureProto_IsValid(static_cast<int>(script_.architecture)))
        p->set_device_architecture(static_cast<DeviceArchitectureProto>(script_.architecture));
      return ok(r);
    }
    case ActionId::device_extended_info: {
      Device_ExtendedInfo_Request q;
      if (!parse(m, &q)) return bad();
      if (!device_known(q.device_handle().id())) return not_found;
      // ExtendedDeviceInfoSerializer::deserialize_reply asserts these lengths:
      // HAILO_ETH_MAC_LENGTH (6), HAILO_UNIT_LEVEL_TRACKING_BYTES_LENGTH (12),
      // HAILO_SOC_PM_VALUES_BYTES_LENGTH (24); soc_id at most HAILO_SOC_ID_LENGTH (32).
      Device_ExtendedInfo_Reply r;
      r.set_neural_network_core_clock_rate(1000000000u);
      auto* f = r.mutable_supported_features();
      f->set_pcie(true);
      f->set_current_monitoring(script_.power_w.has_value());
      f->set_power_measurement(script_.power_w.has_value());
      r.set_boot_source(BOOT_SOURCE_PCIE);
      for (uint32_t i = 0; i < 32; ++i) r.add_soc_id(0xA0 + i);
      for (uint32_t i = 0; i < 6; ++i) r.add_eth_mac_address(i == 0 ? 0x02 : i);
      for (uint32_t i = 0; i < 12; ++i) r.add_unit_level_tracking_id(i);
      for (uint32_t i = 0; i < 24; ++i) r.add_soc_pm_values(0);
      return ok(r);
    }
    case ActionId::device_get_chip_temperature: {
      Device_GetChipTemperature_Request q;
      if (!parse(m, &q)) return bad();
      if (!device_known(q.device_handle().id())) return not_found;
      if (script_.temperature_status) return Reply{*script_.temperature_status, {}, {}, true};
      Device_GetChipTemperature_Reply r;
      r.set_ts0_temperature(script_.ts0_c);
      r.set_ts1_temperature(script_.ts1_c);
      r.set_sample_count(1);
      return ok(r);
    }
    case ActionId::device_power_measurement: {
      Device_PowerMeasurement_Request q;
      if (!parse(m, &q)) return bad();
      if (!device_known(q.device_handle().id())) return not_found;
      // DeviceHrpcClient::power_measurement takes HAILO_OPEN_FILE_FAILURE as
      // an expected answer (no power sensor).
      if (!script_.power_w) return Reply{kOpenFileFailure, {}, {}, true};
      Device_PowerMeasurement_Reply r;
      r.set_power(*script_.power_w);
      return ok(r);
    }
    case ActionId::device_set_power_measurement: {
      Device_SetPowerMeasurement_Request q;
      if (!parse(m, &q)) return bad();
      if (!device_known(q.device_handle().id())) return not_found;
      return script_.power_w ? done : Reply{kOpenFileFailure, {}, {}, true};
    }
    case ActionId::device_start_power_measurement: {
      Device_StartPowerMeasurement_Request q;
      if (!parse(m, &q)) return bad();
      if (!device_known(q.device_handle().id())) return not_found;
      return script_.power_w ? done : Reply{kOpenFileFailure, {}, {}, true};
    }
    case ActionId::device_stop_power_measurement: {
      Device_StopPowerMeasurement_Request q;
      if (!parse(m, &q)) return bad();
      if (!device_known(q.device_handle().id())) return not_found;
      return script_.power_w ? done : Reply{kOpenFileFailure, {}, {}, true};
    }
    case ActionId::device_get_power_measurement: {
      Device_GetPowerMeasurement_Request q;
      if (!parse(m, &q)) return bad();
      if (!device_known(q.device_handle().id())) return not_found;
      if (!script_.power_w) return Reply{kOpenFileFailure, {}, {}, true};
      Device_GetPowerMeasurement_Reply r;
      auto* d = r.mutable_data();
      d->set_average_value(*script_.power_w);
      d->set_min_value(*script_.power_w);
      d->set_max_value(*script_.power_w);
      d->set_average_time_value_milliseconds(1.0f);
      d->set_total_number_of_samples(1);
      return ok(r);
    }
    case ActionId::device_query_health_stats: {
      Device_QueryHealthStats_Request q;
      if (!parse(m, &q)) return bad();
      if (!device_known(q.device_handle().id())) return not_found;
      Device_QueryHealthStats_Reply r;
      r.set_on_die_temperature(script_.ts0_c);
      return ok(r);
    }
    case ActionId::device_query_performance_stats: {
      Device_QueryPerformanceStats_Request q;
      if (!parse(m, &q)) return bad();
      if (!device_known(q.device_handle().id())) return not_found;
      return ok(Device_QueryPerformanceStats_Reply{});
    }
    case ActionId::device_get_architecture: {
      Device_GetArchitecture_Request q;
      if (!parse(m, &q)) return bad();
      if (!device_known(q.device_handle().id())) return not_found;
      Device_GetArchitecture_Reply r;
      r.set_device_architecture(script_.architecture);
      return ok(r);
    }
    case ActionId::device_set_notification_callback: {
      // handle_device_set_notification_callback: a notification goes out as
      // a CallbackCalled_Reply with the action id NOTIFICATION in the header
      // of this request (its message id), callback_handle {callback, dispatcher_id}.
      Device_SetNotificationCallback_Request q;
      if (!parse(m, &q)) return bad();
      if (!device_known(q.device_handle().id())) return not_found;
      std::lock_guard lock(conn.subs_mutex);
      std::erase_if(conn.subs, [&](const Connection::Subscription& s) {
        return s.notification_id == q.notification_id();
      });
      conn.subs.push_back({q.notification_id(), q.callback().id(), q.callback().dispatcher_id(),
                           m.header.message_id});
      return done;
    }
    case ActionId::device_remove_notification_callback: {
      Device_RemoveNotificationCallback_Request q;
      if (!parse(m, &q)) return bad();
      if (!device_known(q.device_handle().id())) return not_found;
      std::lock_guard lock(conn.subs_mutex);
      std::erase_if(conn.subs, [&](const Connection::Subscription& s) {
        return s.notification_id == q.notification_id();
      });
      return done;
    }
    case ActionId::system_reset:
      // handle_system_reset reboots the device and writes no reply.
      error(who + ": the real device reboots; not modelled, no reply");
      return Reply{kSuccess, {}, {}, false};
    default:
      return not_modelled();
  }
}

void Server::device_loop() {
  const auto latency = std::chrono::microseconds(std::llround(script_.latency_ms * 1000.0));
  for (;;) {
    Frame f;
    {
      std::unique_lock lock(device_mutex_);
      device_cv_.wait(lock, [this] { return stopping_ || !frames_.empty(); });
      if (stopping_) return;
      f = std::move(frames_.front());
      frames_.pop_front();
    }
    if (!sleep_for(latency)) return;
    if (f.conn->closed) continue;
    auto outputs = make_outputs(f.inputs, f.output_sizes);
    uint64_t in_bytes = 0, out_bytes = 0;
    for (const auto& b : f.inputs) in_bytes += b.size();
    for (const auto& b : outputs) out_bytes += b.size();
    // ConfiguredInferModelRunAsyncHandler::do_action: the reply has no body,
    // the outputs follow it.
    Header h = f.request;
    h.status = kSuccess;
    send(*f.conn, h, {}, outputs, h.action_id);
    record_.add_frame(in_bytes, out_bytes);
    uint64_t total = 0;
    {
      std::lock_guard lock(state_mutex_);
      total = ++frames_total_;
      if (auto it = cims_.find(f.cim); it != cims_.end()) ++it->second.frames;
    }
    for (const auto& ev : script_.throttling)
      if (ev.after_frames == total) notify_throttling(ev.state);
    if (script_.disconnect_after_frames && total == *script_.disconnect_after_frames)
      f.conn->shutdown();
  }
}

void Server::run_loop(std::shared_ptr<Connection> conn, Header request, uint32_t duration_ms,
                      uint32_t sleep_ms, std::vector<std::vector<uint8_t>> inputs,
                      std::vector<uint32_t> output_sizes) {
  if (!sleep_for(std::chrono::milliseconds(duration_ms))) return;
  // The real device loops on the frame for duration_ms, sleeping
  // sleep_between_frames_ms after each (infer_model.cpp run_async_for_duration);
  // fps = frames / seconds.
  uint32_t fps = 0;
  if (script_.loop_fps) {
    fps = *script_.loop_fps;
  } else if (script_.latency_ms + sleep_ms > 0) {
    fps = static_cast<uint32_t>(std::floor(1000.0 / (script_.latency_ms + sleep_ms)));
  }
  record_.add_loop({duration_ms, sleep_ms, fps});
  // ConfiguredInferModelRunAsyncForDurationHandler::do_action: the reply body
  // is RunAsyncForDuration_Reply {fps}; the outputs follow it.
  ConfiguredInferModel_RunAsyncForDuration_Reply r;
  r.set_fps(fps);
  Header h = request;
  h.status = kSuccess;
  send(*conn, h, r.SerializeAsString(), make_outputs(inputs, output_sizes), h.action_id);
}

void Server::notify_throttling([[maybe_unused]] uint32_t state) {
#if RIG_FAKE_HAILO_HAS_THROTTLING
  std::vector<std::shared_ptr<Connection>> conns;
  {
    std::lock_guard lock(conns_mutex_);
    for (auto& w : conns_)
      if (auto c = w.lock()) conns.push_back(std::move(c));
  }
  for (auto& c : conns) {
    std::vector<Connection::Subscription> subs;
    {
      std::lock_guard lock(c->subs_mutex);
      subs = c->subs;
    }
    for (const auto& s : subs) {
      if (s.notification_id != kThrottlingNotificationId) continue;
      CallbackCalled_Reply r;
      r.mutable_callback_handle()->set_id(s.callback_id);
      r.mutable_callback_handle()->set_dispatcher_id(s.dispatcher_id);
      auto* n = r.mutable_device_notification();
      n->set_notification_id(kThrottlingNotificationId);
      {
        std::lock_guard lock(state_mutex_);
        n->set_sequence(notification_sequence_++);
      }
      n->mutable_throttling_state_change()->set_state(state);
      Header h;
      h.message_id = s.message_id;
      h.action_id = static_cast<uint32_t>(ActionId::notification);
      h.status = kSuccess;
      send(*c, h, r.SerializeAsString(), {}, std::nullopt);
    }
  }
#endif
}

}  // namespace rig::test::fake_hailo

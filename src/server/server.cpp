#include "server/server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "proto/convert.hpp"
#include "server/device_host.hpp"

namespace rig::server {
namespace {

using wire::Action;
using wire::Status;
namespace pb = wire::pb;

Nanos now() {
  return steady_clock().now();
}

constexpr size_t kStagingBytes = 64 * 1024;
// After an error that breaks framing, input is read and dropped (so that the
// client sees the error reply rather than a reset) up to this much.
constexpr size_t kDrainBytes = 16 << 20;
constexpr int kDrainPollMs = 1000;

bool equal_in_constant_time(const std::string& a, const std::string& b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < b.size(); ++i)
    diff |= static_cast<unsigned char>(b[i] ^ (i < a.size() ? a[i] : 0));
  return diff == 0;
}

uint64_t memory_of(const DeviceInfo& info) {
  if (auto it = info.properties.find("memory_bytes"); it != info.properties.end()) {
    try {
      return std::stoull(it->second);
    } catch (...) {
      return 0;
    }
  }
  if (!info.in_process) return 0;
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : 0;
}

std::string peer_name(const wire::Socket& s) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (::getpeername(s.fd(), reinterpret_cast<sockaddr*>(&ss), &len) != 0) return "local";
  if (ss.ss_family == AF_UNIX) return "unix";
  char host[64] = "?";
  uint16_t port = 0;
  if (ss.ss_family == AF_INET) {
    const auto* a = reinterpret_cast<const sockaddr_in*>(&ss);
    ::inet_ntop(AF_INET, &a->sin_addr, host, sizeof host);
    port = ntohs(a->sin_port);
  } else if (ss.ss_family == AF_INET6) {
    const auto* a = reinterpret_cast<const sockaddr_in6*>(&ss);
    ::inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof host);
    port = ntohs(a->sin6_port);
  }
  return std::string(host) + ":" + std::to_string(port);
}

Error wrong_body(const wire::Header& h, const pb::Body& body) {
  return {ErrorCode::protocol, "message " + std::to_string(h.message_id) + " (" +
                                   wire::to_string(h.action) + ") carries the wrong body (case " +
                                   std::to_string(static_cast<int>(body.message_case())) + ")"};
}

}  // namespace

class Connection;

struct Server::State {
  ServerSettings settings;
  std::unique_ptr<DeviceHost> host;
  std::unique_ptr<wire::Listener> listener;
  std::string address;
  uint32_t depth = 2;
  uint64_t memory_bytes = 0;
  std::filesystem::path model_root;  // canonical; empty: load by name disabled
  std::thread accept_thread;

  std::mutex mu;
  std::vector<std::shared_ptr<Connection>> connections;
  bool stopping = false;
  bool stopped = false;

  std::atomic<uint64_t> next_id{1};
  std::atomic<uint64_t> connections_count{0}, requests{0}, errors_sent{0}, closed_on_error{0};
  std::mutex log_mu;

  void log(const std::string& line) {
    if (!settings.log) return;
    std::lock_guard lock(log_mu);
    settings.log(line);
  }
  void add_connection(wire::Socket socket);
  void accept_loop();
};

// One client. The reader thread owns the parser and the dispatch; replies
// come from the reader (hello, describe, release, errors) and from the device
// driver (load, run, loop, sensors) through send(), which never blocks.
class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(Server::State& state, wire::Socket socket, uint64_t id)
      : state_(state), socket_(std::move(socket)), id_(id), peer_(peer_name(socket_)) {}

  void start() {
    reader_ = std::thread([this] { reader_loop(); });
  }

  // Wakes every thread of this connection; used when the server stops.
  void shutdown() {
    {
      std::lock_guard lock(write_mu_);
      stopping_ = true;
    }
    write_cv_.notify_all();
    socket_.shutdown();
  }

  void join() {
    if (reader_.joinable()) reader_.join();
    {
      std::lock_guard lock(write_mu_);
      writer_exit_ = true;
    }
    write_cv_.notify_all();
    if (writer_.joinable()) writer_.join();
  }

  bool finished() const { return reader_done_.load(); }

 private:
  struct Placed {
    uint32_t message_id = 0;
    Nanos placed_at{0};
    std::shared_ptr<SlotLease> lease;
  };
  struct Outgoing {
    wire::OutFrame frame;
    uint64_t offset = 0;
    Nanos started{0};
  };

  std::string who() const { return "connection " + std::to_string(id_) + " (" + peer_ + ")"; }

  // ---- writing -------------------------------------------------------------

  void send(wire::OutFrame frame) {
    std::unique_lock lock(write_mu_);
    if (dead_) return;
    if (queue_.empty()) {
      const Nanos t0 = now();
      auto n = wire::write_frame_some(socket_, frame, 0, true);
      if (!n) {
        mark_dead_locked();
        return;
      }
      if (n->bytes == frame.size()) {
        last_send_ = now() - t0;
        return;
      }
      queue_.push_back({std::move(frame), n->bytes, t0});
    } else {
      queue_.push_back({std::move(frame), 0, now()});
    }
    if (!writer_started_) {
      writer_started_ = true;
      writer_ = std::thread([this] { writer_loop(); });
    }
    write_cv_.notify_all();
  }

  void writer_loop() {
    std::unique_lock lock(write_mu_);
    for (;;) {
      write_cv_.wait(lock, [&] { return !queue_.empty() || writer_exit_; });
      if (queue_.empty()) return;
      Outgoing& out = queue_.front();  // stays put: others only push_back
      lock.unlock();
      Result<void> ok;
      while (out.offset < out.frame.size()) {
        auto n = wire::write_frame_some(socket_, out.frame, out.offset, false);
        if (!n) {
          ok = tl::unexpected(n.error());
          break;
        }
        out.offset += n->bytes;
      }
      const Nanos took = now() - out.started;
      lock.lock();
      last_send_ = took;
      queue_.pop_front();
      if (!ok) mark_dead_locked();
      write_cv_.notify_all();
    }
  }

  void mark_dead_locked() {
    dead_ = true;
    queue_.clear();
    socket_.shutdown();
    write_cv_.notify_all();
  }

  void reply(uint32_t id, Action action, pb::Body& body,
             std::vector<std::span<const std::byte>> buffers = {},
             std::shared_ptr<void> hold = {}) {
    auto frame = wire::encode_frame(id, action, Status::ok, body, std::move(buffers),
                                    state_.settings.limits);
    if (!frame) return reply_error(id, action, frame.error());
    frame->hold = std::move(hold);
    send(std::move(*frame));
  }

  void reply_error(uint32_t id, Action action, const Error& error) {
    ++state_.errors_sent;
    send(wire::encode_error(id, action, error));
  }

  // ---- reading -------------------------------------------------------------

  // Whether this connection has more to read (the driver then hands the
  // device to the device thread). A read that did not fill its buffer has
  // drained the socket: assume nothing more without a poll() per request; a
  // pipelining client's next frames are seen at the next read.
  bool has_input() {
    if (parser_->has_frames() || !parser_->idle()) return true;
    if (last_read_short_) return false;
    pollfd p{socket_.fd(), POLLIN, 0};
    return ::poll(&p, 1, 0) > 0;
  }

  void reader_loop() {
    parser_ = std::make_unique<wire::FrameParser>(
        state_.settings.limits,
        [this](const wire::Header& h, const pb::Body& body) { return place(h, body); });
    std::vector<std::byte> staging(kStagingBytes);
    bool answer_then_close = false;
    for (;;) {
      auto direct = parser_->direct_target();
      const std::span<std::byte> into = direct.empty() ? std::span(staging) : direct;
      auto n = wire::read_some(socket_, into, false);
      if (!n) {
        state_.log(who() + ": " + n.error().to_string());
        break;
      }
      if (n->eof) {
        if (auto end = parser_->finish(); !end) {
          ++state_.closed_on_error;
          state_.log(who() + ": client went away mid-frame: " + end.error().to_string());
        } else {
          answer_then_close = true;  // the client may have half-closed: answer what it asked
        }
        break;
      }
      last_read_short_ = n->bytes < into.size();
      auto fed = direct.empty() ? parser_->feed(std::span(staging).first(n->bytes))
                                : parser_->commit_direct(n->bytes);
      while (!closing_) {
        auto frame = parser_->pop();
        if (!frame) break;
        Placed placed = std::move(placed_.front());
        placed_.pop_front();
        dispatch(std::move(*frame), std::move(placed));
      }
      if (!fed) {
        // The stream lost its framing: answer, then close.
        ++state_.closed_on_error;
        state_.log(who() + ": closing: " + fed.error().to_string());
        const auto& h = parser_->failed_header();
        const bool trusted = h && h->magic == wire::kMagic;
        reply_error(trusted ? h->message_id : 0, trusted ? h->action : Action::hello, fed.error());
        closing_ = true;
      }
      if (closing_) {
        answer_then_close = true;
        break;
      }
    }
    placed_.clear();
    if (answer_then_close) {
      wait_until_answered();
      if (closing_) drain_input();
    }
    {
      // No new replies from here on; the shutdown below ends any write.
      std::lock_guard lock(write_mu_);
      dead_ = true;
    }
    closed_.store(true);
    {
      std::lock_guard lock(models_mu_);
      models_.clear();
    }
    socket_.shutdown();
    write_cv_.notify_all();
    reader_done_.store(true);
  }

  // Until every job of this connection has answered and every reply is out.
  void wait_until_answered() {
    std::unique_lock lock(write_mu_);
    write_cv_.wait(lock,
                   [&] { return (jobs_pending_ == 0 && queue_.empty()) || dead_ || stopping_; });
  }

  void drain_input() {
    socket_.shutdown_write();
    std::vector<std::byte> sink(kStagingBytes);
    size_t drained = 0;
    while (drained < kDrainBytes) {
      pollfd p{socket_.fd(), POLLIN, 0};
      if (::poll(&p, 1, kDrainPollMs) <= 0) return;
      auto n = wire::read_some(socket_, sink, false);
      if (!n || n->eof) return;
      drained += n->bytes;
    }
  }

  std::shared_ptr<ModelEntry> find_model(uint32_t handle) {
    std::lock_guard lock(models_mu_);
    auto it = models_.find(handle);
    return it == models_.end() ? nullptr : it->second;
  }

  Error unknown_handle(uint32_t handle) {
    std::string loaded;
    {
      std::lock_guard lock(models_mu_);
      for (const auto& [h, e] : models_) loaded += (loaded.empty() ? "" : ", ") + std::to_string(h);
    }
    return {ErrorCode::not_found,
            "unknown model handle " + std::to_string(handle) +
                " on this connection (loaded: " + (loaded.empty() ? "none" : loaded) + ")"};
  }

  Result<void> check_inputs(const ModelEntry& entry, const pb::Body& body) {
    const auto& sizes = body.buffer_sizes();
    const auto& inputs = entry.info.inputs;
    if (static_cast<size_t>(sizes.size()) != inputs.size())
      return fail(ErrorCode::invalid_argument,
                  "model '" + entry.info.name + "' takes " + std::to_string(inputs.size()) +
                      " input buffers, got " + std::to_string(sizes.size()));
    for (size_t i = 0; i < inputs.size(); ++i)
      if (sizes[static_cast<int>(i)] != inputs[i].bytes)
        return fail(ErrorCode::invalid_argument,
                    "input " + std::to_string(i) + " '" + inputs[i].name + "' of model '" +
                        entry.info.name + "': expected " + std::to_string(inputs[i].bytes) +
                        " bytes, got " + std::to_string(sizes[static_cast<int>(i)]));
    return {};
  }

  // Decides where a request's buffers go, before any of them is read: run
  // inputs land straight in a slot the device has bound.
  wire::BufferPlan place(const wire::Header& h, const pb::Body& body) {
    Placed placed{h.message_id, now(), nullptr};
    wire::BufferPlan plan;
    const size_t buffers = static_cast<size_t>(body.buffer_sizes_size());
    auto refuse = [&](Error e) { plan.error = std::move(e); };
    if (!hello_done_ && h.action != Action::hello) {
      refuse({ErrorCode::permission, "hello must be the first request on a connection"});
    } else if (h.action == Action::run || h.action == Action::run_for_duration) {
      const bool run = h.action == Action::run;
      if (run ? !body.has_run_request() : !body.has_run_for_duration_request()) {
        refuse(wrong_body(h, body));
      } else {
        const uint32_t handle =
            run ? body.run_request().handle() : body.run_for_duration_request().handle();
        auto entry = find_model(handle);
        if (!entry) {
          refuse(unknown_handle(handle));
        } else if (auto ok = check_inputs(*entry, body); !ok) {
          refuse(ok.error());
        } else if (auto lease = acquire_slot(entry); !lease) {
          refuse(lease.error());
        } else {
          for (auto& in : (*lease)->slot().inputs) plan.targets.emplace_back(in);
          placed.lease = std::move(*lease);
        }
      }
    } else if (h.action == Action::load_model) {
      if (!body.has_load_model_request())
        refuse(wrong_body(h, body));
      else if (body.load_model_request().by_name() ? buffers != 0 : buffers != 1)
        refuse({ErrorCode::invalid_argument,
                "load_model carries the model as its one buffer, or no buffer when loading by "
                "name; got " +
                    std::to_string(buffers)});
      // Otherwise the parser allocates the model buffer (max_model_bytes checked).
    } else if (!wire::is_known(h.action)) {
      refuse({ErrorCode::unsupported, "unknown " + wire::to_string(h.action) + " (protocol " +
                                          std::to_string(wire::kMaxVersion) +
                                          " has actions 1 to 7)"});
    } else if (buffers != 0) {
      refuse({ErrorCode::invalid_argument,
              wire::to_string(h.action) + " takes no buffers, got " + std::to_string(buffers)});
    }
    placed_.push_back(std::move(placed));
    return plan;
  }

  void dispatch(wire::Frame frame, Placed placed) {
    ++state_.requests;
    const wire::Header& h = frame.header;
    if (frame.error) return reply_error(h.message_id, h.action, *frame.error);
    if (h.status != Status::ok)
      return reply_error(
          h.message_id, h.action,
          {ErrorCode::protocol, "a request must carry status 0, got " +
                                    std::to_string(static_cast<uint32_t>(h.status))});
    switch (h.action) {
      case Action::hello:
        if (!frame.body.has_hello_request()) break;
        return handle_hello(h, frame.body.hello_request());
      case Action::load_model:
        return handle_load(frame);
      case Action::describe_model:
        if (!frame.body.has_describe_model_request()) break;
        return handle_describe(h, frame.body.describe_model_request().handle());
      case Action::run:
        return handle_run(h, std::move(placed));
      case Action::run_for_duration:
        return handle_loop(h, frame.body.run_for_duration_request(), std::move(placed));
      case Action::read_sensors:
        if (!frame.body.has_read_sensors_request()) break;
        return handle_sensors(h);
      case Action::release_model:
        if (!frame.body.has_release_model_request()) break;
        return handle_release(h, frame.body.release_model_request().handle());
    }
    reply_error(h.message_id, h.action, wrong_body(h, frame.body));
  }

  void handle_hello(const wire::Header& h, const pb::HelloRequest& r) {
    const uint32_t lo = std::max(r.min_version(), wire::kMinVersion);
    const uint32_t hi = std::min(r.max_version(), wire::kMaxVersion);
    if (lo > hi)
      return reply_error(
          h.message_id, h.action,
          {ErrorCode::unsupported,
           "no common protocol version: the client speaks " + std::to_string(r.min_version()) +
               " to " + std::to_string(r.max_version()) + ", this server " +
               std::to_string(wire::kMinVersion) + " to " + std::to_string(wire::kMaxVersion)});
    const std::string& token = state_.settings.token;
    if (!token.empty() && !equal_in_constant_time(r.token(), token)) {
      state_.log(who() + ": refused: wrong or missing token");
      reply_error(h.message_id, h.action,
                  {ErrorCode::permission,
                   "this server requires a token: tcp://HOST:PORT?token=T or RIG_TOKEN"});
      closing_ = true;
      return;
    }
    hello_done_ = true;
    const DeviceInfo& info = state_.host->info();
    pb::Body body;
    auto* m = body.mutable_hello_reply();
    m->set_version(hi);
    m->set_server("rig 0.1.0");
    m->set_device_spec(info.spec);
    m->set_device_kind(info.kind);
    m->set_device_description(info.description);
    m->set_queue_depth(state_.depth);
    m->set_device_queue_depth(info.queue_depth);
    m->set_memory_bytes(state_.memory_bytes);
    for (const auto& s : state_.host->sensor_names()) m->add_sensors(s);
    for (const auto& [k, v] : info.properties) {
      auto* p = m->add_properties();
      p->set_key(k);
      p->set_value(v);
    }
    for (const auto& w : info.warnings) m->add_warnings(w);
    wire::to_pb(state_.settings.limits, *m->mutable_limits());
    m->set_virtual_clock(state_.host->virtual_clock());
    reply(h.message_id, h.action, body);
  }

  Result<std::string> resolve_model_name(const std::string& name) {
    namespace fs = std::filesystem;
    if (state_.model_root.empty())
      return fail(ErrorCode::unsupported,
                  "this server was started without --model-dir: send the model's bytes instead");
    const fs::path p(name);
    if (name.empty() || name.find('\0') != std::string::npos || p.is_absolute())
      return fail(ErrorCode::invalid_argument,
                  "model name '" + name + "' must be a relative path under --model-dir");
    for (const auto& part : p)
      if (part == "..")
        return fail(ErrorCode::permission, "model name '" + name + "' escapes --model-dir");
    std::error_code ec;
    const fs::path full = fs::weakly_canonical(state_.model_root / p, ec);
    const std::string root = state_.model_root.string() + "/";
    if (ec || full.string().rfind(root, 0) != 0)  // e.g. a symlink pointing outside
      return fail(ErrorCode::permission, "model name '" + name + "' escapes --model-dir");
    if (!fs::is_regular_file(full, ec))
      return fail(ErrorCode::not_found, "no model '" + name + "' under --model-dir");
    return full.string();
  }

  void job_started() {
    std::lock_guard lock(write_mu_);
    ++jobs_pending_;
  }
  void job_finished() {
    {
      std::lock_guard lock(write_mu_);
      --jobs_pending_;
    }
    write_cv_.notify_all();
  }

  void post(std::shared_ptr<Job> job) {
    job->cancelled = [self = shared_from_this()] { return self->closed_.load(); };
    job_started();
    state_.host->post(std::move(job), [this] { return has_input(); });
  }

  // Every tensor of a model is a buffer on the wire and a slot on the server:
  // a model whose tensors break the limits is refused when it is loaded.
  std::optional<Error> check_model_limits(const ModelInfo& info) const {
    const wire::Limits& limits = state_.settings.limits;
    if (info.inputs.size() > limits.max_buffers || info.outputs.size() > limits.max_buffers)
      return Error{ErrorCode::limit_exceeded,
                   "model '" + info.name + "' has " + std::to_string(info.inputs.size()) +
                       " inputs and " + std::to_string(info.outputs.size()) +
                       " outputs; max_buffers is " + std::to_string(limits.max_buffers)};
    for (const auto* list : {&info.inputs, &info.outputs})
      for (const auto& t : *list)
        if (t.bytes > limits.max_buffer_bytes)
          return Error{ErrorCode::limit_exceeded, "tensor '" + t.name + "' of model '" + info.name +
                                                      "' is " + std::to_string(t.bytes) +
                                                      " bytes; max_buffer_bytes is " +
                                                      std::to_string(limits.max_buffer_bytes)};
    if (info.input_bytes() > limits.max_frame_bytes || info.output_bytes() > limits.max_frame_bytes)
      return Error{ErrorCode::limit_exceeded, "model '" + info.name +
                                                  "' moves more bytes per frame than "
                                                  "max_frame_bytes (" +
                                                  std::to_string(limits.max_frame_bytes) + ")"};
    return std::nullopt;
  }

  void handle_load(wire::Frame& frame) {
    const auto& h = frame.header;
    const auto& r = frame.body.load_model_request();
    auto entry = std::make_shared<ModelEntry>();
    entry->handle = next_handle_++;
    entry->max_slots = 2 * state_.depth;
    if (r.by_name()) {
      auto path = resolve_model_name(r.name());
      if (!path) return reply_error(h.message_id, h.action, path.error());
      entry->source.path = *path;
      entry->source.name = std::filesystem::path(*path).stem().string();
    } else {
      entry->source.bytes = std::move(frame.owned.at(0));
      entry->source.name = r.name().empty() ? "model" : r.name();
    }
    auto job = std::make_shared<Job>();
    job->kind = Job::Kind::load;
    job->entry = entry;
    job->done = [self = shared_from_this(), id = h.message_id](Job& j, JobOutcome o) {
      if (!o.error) o.error = self->check_model_limits(j.entry->info);
      if (o.error) {
        self->reply_error(id, Action::load_model, *o.error);
      } else {
        {
          std::lock_guard lock(self->models_mu_);
          self->models_[j.entry->handle] = j.entry;
        }
        pb::Body body;
        auto* m = body.mutable_load_model_reply();
        m->set_handle(j.entry->handle);
        wire::to_pb(j.entry->info, *m->mutable_info());
        m->set_read_ns(o.load.read.count());
        m->set_parse_ns(o.load.parse.count());
        m->set_compile_ns(o.load.compile.count());
        self->reply(id, Action::load_model, body);
      }
      self->job_finished();
    };
    post(std::move(job));
  }

  void handle_describe(const wire::Header& h, uint32_t handle) {
    auto entry = find_model(handle);
    if (!entry) return reply_error(h.message_id, h.action, unknown_handle(handle));
    pb::Body body;
    wire::to_pb(entry->info, *body.mutable_describe_model_reply()->mutable_info());
    reply(h.message_id, h.action, body);
  }

  void handle_release(const wire::Header& h, uint32_t handle) {
    bool released = false;
    {
      std::lock_guard lock(models_mu_);
      released = models_.erase(handle) > 0;
    }
    if (!released) return reply_error(h.message_id, h.action, unknown_handle(handle));
    pb::Body body;
    body.mutable_release_model_reply();
    reply(h.message_id, h.action, body);
  }

  void handle_sensors(const wire::Header& h) {
    auto job = std::make_shared<Job>();
    job->kind = Job::Kind::sensors;
    job->done = [self = shared_from_this(), id = h.message_id](Job&, JobOutcome o) {
      if (o.error) {
        self->reply_error(id, Action::read_sensors, *o.error);
      } else {
        pb::Body body;
        auto* m = body.mutable_read_sensors_reply();
        for (const auto& [k, v] : o.sensors) {
          auto* r = m->add_readings();
          r->set_name(k);
          r->set_value(v);
        }
        self->reply(id, Action::read_sensors, body);
      }
      self->job_finished();
    };
    post(std::move(job));
  }

  // The outputs of a slot, sent straight from its buffers; the lease travels
  // with the frame and frees the slot once the reply is written.
  static std::vector<std::span<const std::byte>> outputs_of(const SlotLease& lease) {
    std::vector<std::span<const std::byte>> out;
    for (const auto& b : lease.slot().outputs) out.emplace_back(b);
    return out;
  }

  void handle_run(const wire::Header& h, Placed placed) {
    const Nanos received_at = now();
    auto job = std::make_shared<Job>();
    job->kind = Job::Kind::run;
    job->entry = placed.lease->entry();
    job->lease = std::move(placed.lease);
    job->done = [self = shared_from_this(), id = h.message_id, placed_at = placed.placed_at,
                 received_at](Job& j, JobOutcome o) {
      if (o.error) {
        self->reply_error(id, Action::run, *o.error);
      } else {
        pb::Body body;
        auto* m = body.mutable_run_reply();
        m->set_receive_ns((received_at - placed_at).count());
        m->set_queue_wait_ns(std::max(Nanos(0), o.started_at - received_at).count());
        m->set_compute_ns(o.compute.count());
        m->set_reply_wait_ns((now() - o.completed_at).count());
        m->set_previous_send_ns(self->last_send_.load().count());
        auto* d = m->mutable_device();
        if (o.timings.transfer_in) d->set_transfer_in_ns(o.timings.transfer_in->count());
        if (o.timings.queue_wait) d->set_queue_wait_ns(o.timings.queue_wait->count());
        if (o.timings.compute) d->set_compute_ns(o.timings.compute->count());
        if (o.timings.transfer_out) d->set_transfer_out_ns(o.timings.transfer_out->count());
        self->reply(id, Action::run, body, outputs_of(*j.lease), j.lease);
      }
      j.lease.reset();
      self->job_finished();
    };
    post(std::move(job));
  }

  void handle_loop(const wire::Header& h, const pb::RunForDurationRequest& r, Placed placed) {
    const Nanos duration(r.duration_ns()), sleep(r.sleep_between_frames_ns());
    const Nanos max = state_.settings.limits.max_loop_duration;
    if (duration <= Nanos(0) || sleep < Nanos(0))
      return reply_error(
          h.message_id, h.action,
          {ErrorCode::invalid_argument,
           "run_for_duration needs duration_ns > 0 and sleep_between_frames_ns >= "
           "0, got " +
               std::to_string(duration.count()) + " and " + std::to_string(sleep.count())});
    if (duration > max || sleep > max)
      return reply_error(
          h.message_id, h.action,
          {ErrorCode::limit_exceeded, "run_for_duration of " + std::to_string(duration.count()) +
                                          " ns (sleeping " + std::to_string(sleep.count()) +
                                          " ns between frames) exceeds max_loop_duration (" +
                                          std::to_string(max.count()) + " ns)"});
    auto job = std::make_shared<Job>();
    job->kind = Job::Kind::loop;
    job->entry = placed.lease->entry();
    job->lease = std::move(placed.lease);
    job->duration = duration;
    job->sleep_between_frames = sleep;
    job->done = [self = shared_from_this(), id = h.message_id](Job& j, JobOutcome o) {
      if (o.error) {
        self->reply_error(id, Action::run_for_duration, *o.error);
      } else {
        pb::Body body;
        wire::to_pb(o.loop, *body.mutable_run_for_duration_reply());
        self->reply(id, Action::run_for_duration, body, outputs_of(*j.lease), j.lease);
      }
      j.lease.reset();
      self->job_finished();
    };
    post(std::move(job));
  }

  Server::State& state_;
  wire::Socket socket_;
  const uint64_t id_;
  const std::string peer_;
  std::thread reader_, writer_;
  std::atomic<bool> reader_done_{false};
  std::atomic<bool> closed_{false};  // the reader has finished; queued jobs are dropped

  // Reader-thread state.
  std::unique_ptr<wire::FrameParser> parser_;
  std::deque<Placed> placed_;  // one per frame the parser has placed but not yet emitted
  bool hello_done_ = false;
  bool closing_ = false;
  bool last_read_short_ = false;
  uint32_t next_handle_ = 1;

  // Model handles: the reader and load completions (the driver) touch them.
  std::mutex models_mu_;
  std::map<uint32_t, std::shared_ptr<ModelEntry>> models_;

  // Writing; write_cv_ also wakes wait_until_answered().
  std::mutex write_mu_;
  std::condition_variable write_cv_;
  std::deque<Outgoing> queue_;
  bool writer_started_ = false;
  bool writer_exit_ = false;
  bool dead_ = false;
  bool stopping_ = false;
  uint32_t jobs_pending_ = 0;
  std::atomic<Nanos> last_send_{Nanos(0)};
};

void Server::State::add_connection(wire::Socket socket) {
  std::lock_guard lock(mu);
  if (stopping) return;
  // Reap connections that have ended.
  for (auto it = connections.begin(); it != connections.end();) {
    if ((*it)->finished()) {
      (*it)->join();
      it = connections.erase(it);
    } else {
      ++it;
    }
  }
  ++connections_count;
  auto c = std::make_shared<Connection>(*this, std::move(socket), next_id++);
  connections.push_back(c);
  c->start();
}

void Server::State::accept_loop() {
  for (;;) {
    auto socket = listener->accept();
    if (!socket) {
      if (socket.error().code == ErrorCode::disconnected) return;
      log("accept: " + socket.error().to_string());
      std::lock_guard lock(mu);
      if (stopping) return;
      continue;
    }
    add_connection(std::move(*socket));
  }
}

Result<std::unique_ptr<Server>> Server::start(std::unique_ptr<Device> device,
                                              ServerSettings settings) {
  if (!device) return fail(ErrorCode::invalid_argument, "no device to serve");
  auto state = std::make_shared<State>();
  std::optional<wire::Endpoint> endpoint;
  if (!settings.listen.empty()) {
    auto ep = wire::parse_listen_address(settings.listen);
    if (!ep) return tl::unexpected(ep.error());
    auto loopback = wire::is_loopback(*ep);
    if (!loopback) return tl::unexpected(loopback.error());
    if (!*loopback && settings.token.empty())
      return fail(ErrorCode::permission,
                  "listening on " + ep->to_string() + " (not a loopback address) requires --token");
    endpoint = *ep;
  }
  if (!settings.model_dir.empty()) {
    std::error_code ec;
    auto root = std::filesystem::canonical(settings.model_dir, ec);
    if (ec || !std::filesystem::is_directory(root, ec))
      return fail(ErrorCode::not_found,
                  "--model-dir '" + settings.model_dir + "' is not a directory");
    state->model_root = root;
  }
  if (settings.limits.max_body_bytes > (1u << 30))
    return fail(ErrorCode::invalid_argument, "max_body_bytes may be at most 1 GiB");
  state->settings = std::move(settings);
  state->host = std::make_unique<DeviceHost>(std::move(device), state->settings.request_timeout);
  const uint32_t device_depth = state->host->info().queue_depth;
  state->depth =
      state->settings.depth ? state->settings.depth : std::max<uint32_t>(2, 2 * device_depth);
  state->memory_bytes = memory_of(state->host->info());
  if (endpoint) {
    auto listener = wire::Listener::listen(*endpoint);
    if (!listener) return tl::unexpected(listener.error());
    state->listener = std::make_unique<wire::Listener>(std::move(*listener));
    state->address = state->listener->bound().to_string();
    state->accept_thread = std::thread([s = state.get()] { s->accept_loop(); });
  }
  return std::unique_ptr<Server>(new Server(std::move(state)));
}

Server::~Server() {
  stop();
}

std::string Server::address() const {
  return state_->address;
}
const DeviceInfo& Server::device_info() const {
  return state_->host->info();
}
uint32_t Server::depth() const {
  return state_->depth;
}

void Server::adopt(wire::Socket socket) {
  state_->add_connection(std::move(socket));
}

void Server::stop() {
  {
    std::lock_guard lock(state_->mu);
    if (state_->stopped) return;
    state_->stopped = true;
    state_->stopping = true;
  }
  if (state_->listener) state_->listener->shutdown();
  if (state_->accept_thread.joinable()) state_->accept_thread.join();
  std::vector<std::shared_ptr<Connection>> connections;
  {
    std::lock_guard lock(state_->mu);
    connections = state_->connections;
  }
  for (auto& c : connections) c->shutdown();
  for (auto& c : connections) c->join();
  state_->host->stop();
  std::lock_guard lock(state_->mu);
  state_->connections.clear();
  state_->listener.reset();
}

ServerStats Server::stats() const {
  ServerStats s;
  s.connections = state_->connections_count.load();
  s.requests = state_->requests.load();
  s.errors_sent = state_->errors_sent.load();
  s.closed_on_error = state_->closed_on_error.load();
  return s;
}

}  // namespace rig::server

#include "server/server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <condition_variable>
#include <deque>
#include <exception>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <system_error>
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
// After an accept() error that is not about one connection (EMFILE, ENFILE,
// ENOBUFS, ENOMEM), the pending connection stays in the backlog and poll()
// reports it again at once: wait before the next try, doubling up to the max.
constexpr std::chrono::milliseconds kAcceptBackoffMin{10};
constexpr std::chrono::milliseconds kAcceptBackoffMax{1000};
// max_pending_bytes when neither given nor derivable from the physical memory.
constexpr uint64_t kFallbackPendingBytes = 4ull << 30;

bool equal_in_constant_time(const std::string& a, const std::string& b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < b.size(); ++i)
    diff |= static_cast<unsigned char>(b[i] ^ (i < a.size() ? a[i] : 0));
  return diff == 0;
}

uint64_t physical_memory() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : 0;
}

uint64_t memory_of(const DeviceInfo& info) {
  if (auto it = info.properties.find("memory_bytes"); it != info.properties.end()) {
    try {
      return std::stoull(it->second);
    } catch (...) {
      return 0;
    }
  }
  return info.in_process ? physical_memory() : 0;
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
  std::shared_ptr<ByteBudget> budget;  // max_pending_bytes
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
  std::atomic<uint64_t> connections_count{0}, requests{0}, errors_sent{0}, closed_on_error{0},
      refused{0};
  std::mutex log_mu;

  void log(const std::string& line) {
    if (!settings.log) return;
    std::lock_guard lock(log_mu);
    settings.log(line);
  }
  // The host goes first: stopping it may still log (log_mu) and answer jobs
  // of connections that refer to this state.
  ~State() { host.reset(); }

  void add_connection(wire::Socket socket);
  void refuse(wire::Socket socket, size_t live);
  void accept_loop();
};

// One client. The reader thread owns the parser and the dispatch; replies
// come from the reader (hello, describe, release, errors) and from the device
// driver (load, run, loop, sensors) through send(), which never blocks.
class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(Server::State& state, wire::Socket socket, uint64_t id)
      : state_(state), socket_(std::move(socket)), id_(id), peer_(peer_name(socket_)) {}

  // Throws std::system_error when the reader thread cannot start.
  void start() {
    reader_ = std::thread([this] { reader_main(); });
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
    std::shared_ptr<SlotLease> lease;  // run, loop: the slot its inputs go to
    ByteHold upload;                   // load_model: its model bytes
  };
  struct Outgoing {
    wire::OutFrame frame;
    uint64_t offset = 0;
    Nanos started{0};
  };

  std::string who() const { return "connection " + std::to_string(id_) + " (" + peer_ + ")"; }

  // Something failed that the protocol cannot answer (an exception while
  // replying): close this connection, keep the server.
  void abort(const std::string& why) {
    ++state_.closed_on_error;
    state_.log(who() + ": closing: " + why);
    std::lock_guard lock(write_mu_);
    mark_dead_locked();
  }

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
      try {
        writer_ = std::thread([this] { writer_main(); });
        writer_started_ = true;
      } catch (const std::system_error& e) {
        ++state_.closed_on_error;
        state_.log(who() + ": closing: cannot start a writer thread: " + e.what());
        queue_.clear();  // no writer holds any of it
        mark_dead_locked();
        return;
      }
    }
    write_cv_.notify_all();
  }

  void writer_main() {
    try {
      writer_loop();
    } catch (const std::exception& e) {
      ++state_.closed_on_error;
      state_.log(who() + ": closing: writer failed: " + e.what());
      std::lock_guard lock(write_mu_);
      queue_.clear();  // this thread was the only one writing from it
      mark_dead_locked();
    }
  }

  void writer_loop() {
    std::unique_lock lock(write_mu_);
    for (;;) {
      write_cv_.wait(lock, [&] { return !queue_.empty() || writer_exit_; });
      if (dead_) {
        queue_.clear();  // replies of a dead connection go nowhere
        write_cv_.notify_all();
      }
      if (queue_.empty()) {
        if (writer_exit_) return;
        continue;
      }
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

  // No more writes. The queue is left to the writer (which may be writing
  // its front right now) to drop.
  void mark_dead_locked() {
    dead_ = true;
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

  void reader_main() {
    try {
      reader_loop();
    } catch (const std::exception& e) {
      // std::bad_alloc growing a buffer, or anything else unexpected: this
      // connection ends, the server goes on.
      ++state_.closed_on_error;
      state_.log(who() + ": closing after an internal failure: " + e.what());
    }
    close_down();
  }

  void close_down() {
    {
      // No new replies from here on; the shutdown below ends any write.
      std::lock_guard lock(write_mu_);
      dead_ = true;
    }
    closed_.store(true);
    placed_.reset();
    {
      std::lock_guard lock(models_mu_);
      models_.clear();
    }
    socket_.shutdown();
    write_cv_.notify_all();
    reader_done_.store(true);
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
      Result<void> fed;
      if (!direct.empty()) {
        // A direct read stays within one buffer: it completes at most one frame.
        fed = parser_->commit_direct(n->bytes);
        dispatch_ready();
      } else {
        // One frame at a time: each is handled before the next one is placed.
        std::span<const std::byte> rest = std::span(staging).first(n->bytes);
        while (!rest.empty() && !closing_) {
          auto taken = parser_->feed_some(rest);
          if (!taken) {
            fed = tl::unexpected(taken.error());
            break;
          }
          rest = rest.subspan(*taken);
          dispatch_ready();
        }
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
    placed_.reset();
    if (answer_then_close) {
      wait_until_answered();
      if (closing_) drain_input();
    }
  }

  void dispatch_ready() {
    while (!closing_) {
      auto frame = parser_->pop();
      if (!frame) return;
      // The placer ran for this frame when its body was complete.
      Placed placed = placed_ ? std::move(*placed_) : Placed{};
      placed_.reset();
      dispatch(std::move(*frame), std::move(placed));
    }
  }

  // Until every job of this connection has answered and every reply is out.
  void wait_until_answered() {
    std::unique_lock lock(write_mu_);
    write_cv_.wait(lock,
                   [&] { return (jobs_pending_ == 0 && queue_.empty()) || dead_ || stopping_; });
  }

  // A request that names a model handle takes effect after the connection's
  // earlier loads (a client may pipeline load then describe).
  void await_loads() {
    std::unique_lock lock(write_mu_);
    write_cv_.wait(lock, [&] { return loads_pending_ == 0 || dead_ || stopping_; });
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

  // max_models_per_connection, counting the loads still in progress.
  std::optional<Error> models_full() {
    size_t loaded = 0;
    uint32_t loading = 0;
    {
      std::lock_guard write_lock(write_mu_);  // lock order: write_mu_, then models_mu_
      std::lock_guard models_lock(models_mu_);
      loaded = models_.size();
      loading = loads_pending_;
    }
    const uint32_t max = state_.settings.max_models_per_connection;
    if (loaded + loading < max) return std::nullopt;
    return Error{ErrorCode::limit_exceeded,
                 "this connection already holds " + std::to_string(loaded + loading) + " models (" +
                     std::to_string(loading) + " still loading); max_models_per_connection is " +
                     std::to_string(max) +
                     " (rig serve --max-models-per-connection): release one first"};
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
    Placed placed{h.message_id, now(), nullptr, {}};
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
        await_loads();
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
      else if (auto full = models_full())
        refuse(std::move(*full));
      else if (buffers == 1) {
        // The parser allocates the model buffer as its bytes arrive
        // (max_model_bytes checked); the server holds it from now on.
        const uint64_t size = body.buffer_sizes(0);
        auto hold = state_.budget->reserve(size, "message " + std::to_string(h.message_id) +
                                                     " (load_model) with a model of " +
                                                     std::to_string(size) + " bytes");
        if (!hold)
          refuse(hold.error());
        else
          placed.upload = std::move(*hold);
      }
    } else if (!wire::is_known(h.action)) {
      refuse({ErrorCode::unsupported, "unknown " + wire::to_string(h.action) + " (protocol " +
                                          std::to_string(wire::kMaxVersion) +
                                          " has actions 1 to 7)"});
    } else if (buffers != 0) {
      refuse({ErrorCode::invalid_argument,
              wire::to_string(h.action) + " takes no buffers, got " + std::to_string(buffers)});
    }
    placed_ = std::move(placed);
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
        return handle_load(frame, std::move(placed));
      case Action::describe_model:
        if (!frame.body.has_describe_model_request()) break;
        await_loads();
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
        await_loads();
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

  void job_started(bool load) {
    std::lock_guard lock(write_mu_);
    ++jobs_pending_;
    if (load) ++loads_pending_;
  }
  void job_finished() {
    {
      std::lock_guard lock(write_mu_);
      --jobs_pending_;
    }
    write_cv_.notify_all();
  }
  // A load is over (its reply is out): its model, when it loaded, joins the
  // handle table in the same step as it stops counting as loading.
  void load_settled(const std::shared_ptr<ModelEntry>& loaded) {
    {
      std::lock_guard write_lock(write_mu_);
      std::lock_guard models_lock(models_mu_);
      if (loaded) models_[loaded->handle] = loaded;
      --loads_pending_;
    }
    write_cv_.notify_all();
  }

  // Hands a job to the device host. Its completion always counts the job as
  // finished, and an exception while answering closes this connection only.
  void post(std::shared_ptr<Job> job) {
    job_started(job->kind == Job::Kind::load);
    job->done = [self = shared_from_this(), answer = std::move(job->done)](Job& j, JobOutcome o) {
      try {
        answer(j, std::move(o));
      } catch (const std::exception& e) {
        self->abort(std::string("answering a request failed: ") + e.what());
      }
      j.lease.reset();
      self->job_finished();
    };
    job->cancelled = [self = shared_from_this()] { return self->closed_.load(); };
    state_.host->post(std::move(job));
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

  void handle_load(wire::Frame& frame, Placed placed) {
    const auto& h = frame.header;
    const auto& r = frame.body.load_model_request();
    auto entry = std::make_shared<ModelEntry>();
    entry->handle = next_handle_++;
    entry->max_slots = 2 * state_.depth;
    entry->budget = state_.budget;
    if (r.by_name()) {
      auto path = resolve_model_name(r.name());
      if (!path) return reply_error(h.message_id, h.action, path.error());
      entry->source.path = *path;
      entry->source.name = std::filesystem::path(*path).stem().string();
    } else {
      entry->source.bytes = std::move(frame.owned.at(0));
      entry->source_hold = std::move(placed.upload);  // kept to reload the model
      entry->source.name = r.name().empty() ? "model" : r.name();
    }
    auto job = std::make_shared<Job>();
    job->kind = Job::Kind::load;
    job->entry = entry;
    job->done = [self = shared_from_this(), id = h.message_id](Job& j, JobOutcome o) {
      if (!o.error) o.error = self->check_model_limits(j.entry->info);
      if (o.error) {
        self->reply_error(id, Action::load_model, *o.error);
        self->load_settled(nullptr);
        return;
      }
      pb::Body body;
      auto* m = body.mutable_load_model_reply();
      m->set_handle(j.entry->handle);
      wire::to_pb(j.entry->info, *m->mutable_info());
      m->set_read_ns(o.load.read.count());
      m->set_parse_ns(o.load.parse.count());
      m->set_compile_ns(o.load.compile.count());
      // The reply goes out before the handle becomes usable: a request that
      // names it waits for load_settled, and its reply follows this one.
      self->reply(id, Action::load_model, body);
      self->load_settled(j.entry);
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
  std::optional<Placed> placed_;  // the frame the parser placed and has not yet emitted
  bool hello_done_ = false;
  bool closing_ = false;
  uint32_t next_handle_ = 1;

  // Model handles: the reader and load completions (the driver) touch them.
  std::mutex models_mu_;
  std::map<uint32_t, std::shared_ptr<ModelEntry>> models_;

  // Writing; write_cv_ also wakes wait_until_answered() and await_loads().
  std::mutex write_mu_;
  std::condition_variable write_cv_;
  std::deque<Outgoing> queue_;
  bool writer_started_ = false;
  bool writer_exit_ = false;
  bool dead_ = false;
  bool stopping_ = false;
  uint32_t jobs_pending_ = 0;
  uint32_t loads_pending_ = 0;  // loads posted and not yet settled (load_settled)
  std::atomic<Nanos> last_send_{Nanos(0)};
};

void Server::State::add_connection(wire::Socket socket) {
  size_t live = 0;
  {
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
    live = connections.size();
    if (live < settings.max_connections) {
      ++connections_count;
      auto c = std::make_shared<Connection>(*this, std::move(socket), next_id++);
      connections.push_back(c);
      try {
        c->start();
      } catch (const std::system_error& e) {
        connections.pop_back();  // it has no thread to join; its socket closes with it
        log("cannot serve a new connection: cannot start its reader thread: " +
            std::string(e.what()));
      }
      return;
    }
  }
  refuse(std::move(socket), live);
}

// Answers a connection over max_connections with an error (message id 0, as
// before hello there is no request to answer) and closes it.
void Server::State::refuse(wire::Socket socket, size_t live) {
  ++refused;
  const Error error{
      ErrorCode::limit_exceeded,
      "this server already serves " + std::to_string(live) + " connections; max_connections is " +
          std::to_string(settings.max_connections) + " (rig serve --max-connections)"};
  log("refused a connection from " + peer_name(socket) + ": " + error.message);
  // A fresh socket takes these hundred bytes at once; never wait for it.
  (void)wire::write_frame_some(socket, wire::encode_error(0, Action::hello, error), 0, true);
  socket.shutdown_write();
}

void Server::State::accept_loop() {
  std::chrono::milliseconds backoff{0};
  for (;;) {
    try {
      auto socket = listener->accept();
      if (socket) {
        backoff = std::chrono::milliseconds(0);
        add_connection(std::move(*socket));
        continue;
      }
      if (socket.error().code == ErrorCode::disconnected) return;  // shut down
      backoff = std::clamp(2 * backoff, kAcceptBackoffMin, kAcceptBackoffMax);
      log("accept: " + socket.error().to_string() + "; retrying in " +
          std::to_string(backoff.count()) + " ms");
    } catch (const std::exception& e) {
      backoff = std::clamp(2 * backoff, kAcceptBackoffMin, kAcceptBackoffMax);
      log("accept thread: " + std::string(e.what()) + "; retrying in " +
          std::to_string(backoff.count()) + " ms");
    }
    if (listener->wait_for_shutdown(backoff)) return;
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
  if (settings.limits.max_model_bytes > static_cast<uint64_t>(INT_MAX))
    return fail(ErrorCode::invalid_argument, "max_model_bytes may be at most " +
                                                 std::to_string(INT_MAX) +
                                                 " (2 GiB - 1): a larger model cannot be parsed");
  if (settings.max_connections == 0)
    return fail(ErrorCode::invalid_argument, "max_connections must be at least 1");
  if (settings.max_models_per_connection == 0)
    return fail(ErrorCode::invalid_argument, "max_models_per_connection must be at least 1");
  if (settings.request_timeout <= Nanos(0))
    return fail(ErrorCode::invalid_argument, "request_timeout must be > 0");
  if (settings.loop_slice < Nanos(0))
    return fail(ErrorCode::invalid_argument, "loop_slice must be >= 0");
  if (settings.max_pending_bytes == 0) {
    const uint64_t physical = physical_memory();
    settings.max_pending_bytes = physical > 0 ? physical / 2 : kFallbackPendingBytes;
  }
  state->settings = std::move(settings);
  state->budget = std::make_shared<ByteBudget>(state->settings.max_pending_bytes);
  HostSettings host;
  host.request_timeout = state->settings.request_timeout;
  host.loop_slice = state->settings.loop_slice;
  host.log = [s = state.get()](const std::string& line) { s->log(line); };
  try {
    state->host = std::make_unique<DeviceHost>(std::move(device), std::move(host));
  } catch (const std::system_error& e) {
    return fail(ErrorCode::internal, std::string("cannot start the device thread: ") + e.what());
  }
  const uint32_t device_depth = state->host->info().queue_depth;
  state->depth =
      state->settings.depth ? state->settings.depth : std::max<uint32_t>(2, 2 * device_depth);
  state->memory_bytes = memory_of(state->host->info());
  if (endpoint) {
    auto listener = wire::Listener::listen(*endpoint);
    if (!listener) return tl::unexpected(listener.error());
    state->listener = std::make_unique<wire::Listener>(std::move(*listener));
    state->address = state->listener->bound().to_string();
    try {
      state->accept_thread = std::thread([s = state.get()] { s->accept_loop(); });
    } catch (const std::system_error& e) {
      return fail(ErrorCode::internal, std::string("cannot start the accept thread: ") + e.what());
    }
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
const ServerSettings& Server::settings() const {
  return state_->settings;
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
  s.refused = state_->refused.load();
  return s;
}

}  // namespace rig::server

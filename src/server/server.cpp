#include "server/server.hpp"

#include <algorithm>
#include <atomic>
#include <climits>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "server/connection.hpp"
#include "server/context.hpp"
#include "server/policy.hpp"
#include "server/session.hpp"

namespace rig::server {
namespace {

// After an accept() error that is not about one connection (EMFILE, ENFILE,
// ENOBUFS, ENOMEM), the pending connection stays in the backlog and poll()
// reports it again at once: wait before the next try, doubling up to the max.
constexpr std::chrono::milliseconds kAcceptBackoffMin{10};
constexpr std::chrono::milliseconds kAcceptBackoffMax{1000};
// Requests in flight per connection; each model keeps twice as many run slots.
constexpr uint32_t kMaxDepth = 4096;

}  // namespace

// The server: what its connections share (ServerContext), the listener and
// its accept thread, and the connections being served. The accept thread
// and adopt() add connections (under mu); stop() ends them.
struct Server::State : ServerContext {
  std::unique_ptr<wire::Listener> listener;
  std::string address;
  std::thread accept_thread;

  std::mutex mu;
  std::vector<std::shared_ptr<Connection>> connections;
  bool stopping = false;
  bool stopped = false;

  std::atomic<uint64_t> next_id{1};

  // The host goes first: stopping it may still log and answer jobs of
  // connections that refer to this state.
  ~State() { host.reset(); }

  void add_connection(wire::Socket socket);
  void refuse(wire::Socket socket, size_t live);
  bool evict_idle_for(Connection& newcomer);
  void accept_loop();
};

void Server::State::add_connection(wire::Socket socket) {
  size_t live = 0;
  std::shared_ptr<Connection> victim;
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
    ConnectionSlot slot = ConnectionSlot::none;
    if (!enter_handshake(slot)) {
      // Every handshake slot is taken: the connection that has waited
      // longest without completing hello (the list is in arrival order)
      // gives its slot to the newcomer, so that holding sockets open does
      // not lock clients out: an attacker must out-pace their hello.
      for (auto& c : connections)
        if (!c->finished() && take_handshake(c->slot, slot)) {
          victim = c;
          break;
        }
    }
    if (slot == ConnectionSlot::handshake) {
      ++connections_count;
      std::shared_ptr<Connection> c =
          std::make_shared<Session>(*this, std::move(socket), next_id++);
      c->slot = slot;  // not yet shared with any other thread
      connections.push_back(c);
      try {
        c->start();
      } catch (const std::system_error& e) {
        connections.pop_back();  // it has no thread to join; its socket closes with it
        leave(c->slot);
        log("cannot serve a new connection: cannot start its reader thread: " +
            std::string(e.what()));
      }
    }
  }
  if (victim) {
    victim->evict(
        "it had not completed hello and a newer connection needed its slot "
        "(max_handshakes is " +
        std::to_string(settings.max_handshakes) + "; the longest-waiting handshake gives way)");
    return;
  }
  if (socket.valid()) refuse(std::move(socket), live);
}

bool Server::State::evict_idle_for(Connection& newcomer) {
  std::shared_ptr<Connection> victim;
  {
    std::lock_guard lock(mu);
    if (stopping) return false;
    const Nanos now = steady_clock().now();
    Nanos longest{-1};
    for (auto& c : connections) {
      if (c.get() == &newcomer || c->finished()) continue;
      const Nanos idle = c->idle_for(now);
      if (idle >= settings.evict_idle_after && idle > longest) {
        longest = idle;
        victim = c;
      }
    }
    if (!victim || !take_served(victim->slot, newcomer.slot)) return false;
  }
  victim->evict(
      "it was idle with nothing in flight and a new client needed its slot "
      "(max_connections is " +
      std::to_string(settings.max_connections) + "; the connection idle longest gives way)");
  return true;
}

// Answers a connection over max_handshakes with an error (message id 0, as
// before hello there is no request to answer) and closes it.
void Server::State::refuse(wire::Socket socket, size_t live) {
  ++refused;
  const Error error{ErrorCode::limit_exceeded,
                    "this server already has " + std::to_string(live - served()) +
                        " connections that have not completed hello; max_handshakes is " +
                        std::to_string(settings.max_handshakes) + " (rig serve --max-handshakes)"};
  log("refused a connection from " + peer_name(socket) + ": " + error.message);
  // A fresh socket takes these hundred bytes at once; never wait for it.
  (void)wire::write_frame_some(socket, wire::encode_error(0, wire::Action::hello, error), 0, true);
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
    auto root = resolve_model_dir(settings.model_dir);
    if (!root) return tl::unexpected(root.error());
    state->model_root = std::move(*root);
  }
  if (settings.limits.max_body_bytes > (1u << 30))
    return fail(ErrorCode::invalid_argument, "max_body_bytes may be at most 1 GiB");
  if (settings.limits.max_model_bytes > static_cast<uint64_t>(INT_MAX))
    return fail(ErrorCode::invalid_argument, "max_model_bytes may be at most " +
                                                 std::to_string(INT_MAX) +
                                                 " (2 GiB - 1): a larger model cannot be parsed");
  if (settings.depth > kMaxDepth)
    return fail(ErrorCode::invalid_argument,
                "depth " + std::to_string(settings.depth) + " is out of range: at most " +
                    std::to_string(kMaxDepth) + " requests in flight per connection (--depth)");
  if (settings.max_connections == 0)
    return fail(ErrorCode::invalid_argument, "max_connections must be at least 1");
  if (settings.max_handshakes == 0)
    return fail(ErrorCode::invalid_argument, "max_handshakes must be at least 1");
  if (settings.hello_timeout <= Nanos(0))
    return fail(ErrorCode::invalid_argument, "hello_timeout must be > 0");
  if (settings.idle_timeout < Nanos(0) || settings.auth_backoff < Nanos(0) ||
      settings.evict_idle_after < Nanos(0))
    return fail(ErrorCode::invalid_argument,
                "idle_timeout, evict_idle_after and auth_backoff must be >= 0");
  if (settings.max_models_per_connection == 0)
    return fail(ErrorCode::invalid_argument, "max_models_per_connection must be at least 1");
  if (settings.request_timeout <= Nanos(0))
    return fail(ErrorCode::invalid_argument, "request_timeout must be > 0");
  if (settings.loop_slice < Nanos(0))
    return fail(ErrorCode::invalid_argument, "loop_slice must be >= 0");
  settings.max_pending_bytes = resolve_max_pending_bytes(settings.max_pending_bytes);
  state->settings = std::move(settings);
  state->budget = std::make_shared<ByteBudget>(state->settings.max_pending_bytes);
  state->auth = std::make_unique<AuthLimiter>(state->settings.auth_backoff);
  state->ServerContext::make_room = [s = state.get()](Connection& c) {
    return s->evict_idle_for(c);
  };
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
  state->depth = state->settings.depth
                     ? state->settings.depth
                     : std::clamp<uint32_t>(2 * std::min(device_depth, kMaxDepth), 2, kMaxDepth);
  state->memory_bytes = memory_of(state->host->info());
  if (endpoint) {
    auto listener = wire::Listener::listen(*endpoint, state->settings.socket_group);
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
  // A loop in progress is answered while its connection is still open.
  state_->host->cut_loop_for_stop();
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
  s.timed_out = state_->timed_out.load();
  s.auth_failures = state_->auth_failures.load();
  s.evicted = state_->evicted.load();
  s.unsent_bytes = state_->unsent_bytes.load();
  s.held_bytes = state_->budget->held();
  s.peak_unsent_bytes = state_->peak_unsent_bytes.load();
  s.reads_paused = state_->reads_paused.load();
  s.whole_requests = state_->whole_requests.load();
  s.loops_started = state_->host->loops_started();
  s.model_reloads = state_->host->switch_reloads();
  s.device_loads = state_->host->device_loads();
  s.shared_switches = state_->host->shared_switches();
  return s;
}

}  // namespace rig::server

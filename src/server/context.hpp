// ServerContext: what a server shares with its connections: the effective
// settings, the device host, the byte budget, the facts hello advertises, and
// the counters behind ServerStats.
//
// Ownership: Server::State is a ServerContext; it outlives every connection
// (the server joins them before it goes) and destroys the host first.
//
// Thread safety: the fields are set by Server::start before the first
// connection and only read afterwards; the counters are atomic and log() is
// serialised, so every thread may use them.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>

#include "server/budget.hpp"
#include "server/device_host.hpp"
#include "server/policy.hpp"
#include "server/server.hpp"

namespace rig::server {

struct ServerContext {
  ServerSettings settings;             // effective (see policy.hpp)
  std::shared_ptr<ByteBudget> budget;  // max_pending_bytes
  std::unique_ptr<DeviceHost> host;
  uint32_t depth = 2;                // requests in flight per connection
  uint64_t memory_bytes = 0;         // the device's memory, for hello; 0: unknown
  std::filesystem::path model_root;  // canonical; empty: load by name disabled

  std::atomic<uint64_t> connections_count{0}, requests{0}, errors_sent{0}, closed_on_error{0},
      refused{0}, timed_out{0}, auth_failures{0};
  // Back-pressure: the most reply bytes any connection had queued unsent, and
  // how often a reader paused because its connection's share was full.
  std::atomic<uint64_t> peak_unsent_bytes{0}, reads_paused{0};
  // Taken whole from a read buffer (take_whole: lone runs, pings).
  std::atomic<uint64_t> whole_requests{0};

  // Failed authentications, by peer.
  std::unique_ptr<AuthLimiter> auth;

  // Connection slots: those still in their handshake (max_handshakes) and
  // those that completed hello (max_connections). A connection is counted
  // in one of them from add_connection until it closes.
  bool enter_handshake() {
    std::lock_guard lock(slots_mu_);
    if (handshaking >= settings.max_handshakes) return false;
    ++handshaking;
    return true;
  }
  // Moves a connection from its handshake to a served slot; false (and
  // unchanged) when every slot is taken.
  bool establish() {
    std::lock_guard lock(slots_mu_);
    if (established >= settings.max_connections) return false;
    --handshaking;
    ++established;
    return true;
  }
  void leave(bool was_established) {
    std::lock_guard lock(slots_mu_);
    --(was_established ? established : handshaking);
  }
  uint32_t served() {
    std::lock_guard lock(slots_mu_);
    return established;
  }

  void log(const std::string& line) {
    if (!settings.log) return;
    std::lock_guard lock(log_mu_);
    settings.log(line);
  }

 private:
  std::mutex log_mu_;
  std::mutex slots_mu_;
  uint32_t handshaking = 0, established = 0;
};

}  // namespace rig::server

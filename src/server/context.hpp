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
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "server/budget.hpp"
#include "server/device_host.hpp"
#include "server/policy.hpp"
#include "server/server.hpp"

namespace rig::server {

class Connection;

// Which slot a connection holds (ServerContext's slot counts).
enum class ConnectionSlot { none, handshake, served, evicted };

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
  // in one of them from add_connection until it closes; each connection's
  // ConnectionSlot says which, changed only under the slot lock. When a cap is
  // reached, a newcomer may take over the slot of a connection that is then
  // evicted (ConnectionSlot::evicted: its leave() gives nothing back, the newcomer
  // holds the count now): see Server::State::add_connection and make_room.
  bool enter_handshake(ConnectionSlot& slot) {
    std::lock_guard lock(slots_mu_);
    if (handshaking >= settings.max_handshakes) return false;
    ++handshaking;
    slot = ConnectionSlot::handshake;
    return true;
  }
  // The newcomer takes over `victim`'s handshake slot; false when the
  // victim is no longer in its handshake.
  bool take_handshake(ConnectionSlot& victim, ConnectionSlot& newcomer) {
    std::lock_guard lock(slots_mu_);
    if (victim != ConnectionSlot::handshake) return false;
    victim = ConnectionSlot::evicted;
    newcomer = ConnectionSlot::handshake;
    return true;
  }
  // Moves a connection from its handshake to a served slot; false (and
  // unchanged) when every slot is taken or it was evicted meanwhile.
  bool establish(ConnectionSlot& slot) {
    std::lock_guard lock(slots_mu_);
    if (slot != ConnectionSlot::handshake || established >= settings.max_connections) return false;
    --handshaking;
    ++established;
    slot = ConnectionSlot::served;
    return true;
  }
  // The newcomer (in its handshake) takes over `victim`'s served slot.
  bool take_served(ConnectionSlot& victim, ConnectionSlot& newcomer) {
    std::lock_guard lock(slots_mu_);
    if (victim != ConnectionSlot::served || newcomer != ConnectionSlot::handshake) return false;
    victim = ConnectionSlot::evicted;
    --handshaking;
    newcomer = ConnectionSlot::served;
    return true;
  }
  bool in_handshake(const ConnectionSlot& slot) {
    std::lock_guard lock(slots_mu_);
    return slot == ConnectionSlot::handshake;
  }
  bool is_served(const ConnectionSlot& slot) {
    std::lock_guard lock(slots_mu_);
    return slot == ConnectionSlot::served;
  }
  void leave(ConnectionSlot& slot) {
    std::lock_guard lock(slots_mu_);
    if (slot == ConnectionSlot::handshake) --handshaking;
    if (slot == ConnectionSlot::served) --established;
    slot = ConnectionSlot::none;
  }
  uint32_t served() {
    std::lock_guard lock(slots_mu_);
    return established;
  }
  // Served slots are full: evict the served connection idle longest (at
  // least evict_idle_after, nothing in flight) for `newcomer`; false when
  // none is. Set by the server.
  std::function<bool(Connection& newcomer)> make_room;

  // Reply bytes queued unsent, over every connection (each connection's
  // queued bytes, returned when it closes).
  std::atomic<uint64_t> unsent_bytes{0};
  // Bytes read and written on every connection since the server started
  // (ReadSensorsReply.other_link_bytes is these less a connection's own).
  std::atomic<uint64_t> link_bytes{0};
  std::atomic<uint64_t> evicted{0};

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

// Server policy: the decisions rig serve takes from its settings and its host
// rather than from any one request: where a model named in load_model lives
// under --model-dir, how a token is compared, and the memory figures behind
// hello's memory_bytes and the default max_pending_bytes.
//
// Every function is stateless (it reads the file system or the host's
// memory, nothing else) and safe to call from any thread.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "rig/device.hpp"
#include "rig/error.hpp"

namespace rig::server {

// max_pending_bytes when it is neither given nor derivable from the physical
// memory.
inline constexpr uint64_t kFallbackPendingBytes = 4ull << 30;

// The canonical --model-dir; not_found when it is not a directory,
// invalid_argument when it is the root of the file system.
Result<std::filesystem::path> resolve_model_dir(const std::string& model_dir);

// The file a load-by-name names under `model_root` (canonical, from
// resolve_model_dir; empty: load by name is disabled, unsupported). The name
// must be a relative path that stays under the root, symlinks resolved
// (permission otherwise), and name a regular file (not_found otherwise).
Result<std::string> resolve_model_name(const std::filesystem::path& model_root,
                                       const std::string& name);

// The bytes of the model a load-by-name names (resolve_model_name), read
// once: the server keeps these bytes, so the file changing or being swapped
// for a symlink later changes nothing. The file is opened without following
// a symlink, and what was opened is checked to lie under the root (a swap
// between the check and the open is refused with permission); its size is
// checked against `max_bytes` (max_model_bytes; limit_exceeded naming both)
// before it is read.
Result<std::vector<std::byte>> read_model_under(const std::filesystem::path& model_root,
                                                const std::string& name, uint64_t max_bytes);

// Whether `given` equals `expected`, in a time that depends on the length of
// `expected` only, so that a client cannot guess the token byte by byte.
bool equal_in_constant_time(const std::string& given, const std::string& expected);

// Delays the answers to failed authentications by peer (see ServerSettings::
// auth_backoff). It never refuses: a right token is always admitted.
// Thread-safe. Remembers at most kMaxPeers peers (the oldest expired ones are
// forgotten first).
class AuthLimiter {
 public:
  static constexpr size_t kMaxPeers = 4096;
  explicit AuthLimiter(Nanos backoff) : backoff_(backoff) {}
  // Records a failure of `peer` and returns how long its answer waits:
  // backoff, doubling with each failure of the peer within the last wait
  // (up to 64 times); a peer whose last wait has passed starts again.
  Nanos failed(const std::string& peer, Nanos now);

 private:
  struct Entry {
    uint32_t failures = 0;
    Nanos until{0};
  };
  const Nanos backoff_;
  std::mutex mu_;
  std::map<std::string, Entry> peers_;
};

// The physical memory of this host; 0 when unknown.
uint64_t physical_memory();

// The memory a device has for models and buffers, as hello advertises it:
// the device's memory_bytes; when the device does not say, the physical
// memory for an in-process device and 0 (unknown) for one across a link.
uint64_t memory_of(const DeviceInfo& info);

// The effective max_pending_bytes: `requested`, or when 0 half the physical
// memory (kFallbackPendingBytes when that is unknown).
uint64_t resolve_max_pending_bytes(uint64_t requested);

}  // namespace rig::server

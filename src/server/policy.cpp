#include "server/policy.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>

#include <algorithm>
#include <iterator>
#include <system_error>

namespace rig::server {

Result<std::filesystem::path> resolve_model_dir(const std::string& model_dir) {
  std::error_code ec;
  auto root = std::filesystem::canonical(model_dir, ec);
  if (ec || !std::filesystem::is_directory(root, ec))
    return fail(ErrorCode::not_found, "--model-dir '" + model_dir + "' is not a directory");
  if (root == root.root_path())
    return fail(ErrorCode::invalid_argument,
                "--model-dir '" + model_dir +
                    "' is the root of the file system: clients could load any file this user "
                    "can read; give the directory that holds the models");
  return root;
}

Result<std::string> resolve_model_name(const std::filesystem::path& model_root,
                                       const std::string& name) {
  namespace fs = std::filesystem;
  if (model_root.empty())
    return fail(ErrorCode::unsupported,
                "this server was started without --model-dir: send the model's bytes instead");
  const fs::path p(name);
  if (name.empty() || name.find('\0') != std::string::npos || p.is_absolute())
    return fail(ErrorCode::invalid_argument,
                "model name '" + name + "' must be a relative path under --model-dir");
  // Too long for the filesystem: said so (the name is not echoed whole).
  if (name.size() >= PATH_MAX)
    return fail(ErrorCode::invalid_argument, "model name of " + std::to_string(name.size()) +
                                                 " bytes is too long: a path is at most " +
                                                 std::to_string(PATH_MAX - 1) + " bytes");
  for (const auto& part : p) {
    if (part == "..")
      return fail(ErrorCode::permission, "model name '" + name + "' escapes --model-dir");
    if (part.string().size() > NAME_MAX)
      return fail(ErrorCode::invalid_argument,
                  "model name '" + name.substr(0, 64) + "...' has a part of " +
                      std::to_string(part.string().size()) + " bytes: a file name is at most " +
                      std::to_string(NAME_MAX) + " bytes");
  }
  std::error_code ec;
  const fs::path full = fs::weakly_canonical(model_root / p, ec);
  if (ec)
    return fail(ErrorCode::not_found,
                "cannot resolve model name '" + name + "' under --model-dir: " + ec.message());
  const std::string root = model_root.string() + "/";
  if (full.string().rfind(root, 0) != 0)  // e.g. a symlink pointing outside
    return fail(ErrorCode::permission, "model name '" + name + "' escapes --model-dir");
  if (!fs::is_regular_file(full, ec))
    return fail(ErrorCode::not_found, "no model '" + name + "' under --model-dir");
  return full.string();
}

namespace {

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

Result<std::vector<std::byte>> read_model_under(const std::filesystem::path& model_root,
                                                const std::string& name, uint64_t max_bytes) {
  auto path = resolve_model_name(model_root, name);
  if (!path) return tl::unexpected(path.error());
  Fd file{::open(path->c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)};
  if (file.fd < 0) {
    if (errno == ELOOP)
      return fail(ErrorCode::permission, "model name '" + name + "' escapes --model-dir");
    return fail(ErrorCode::not_found, "cannot open model '" + name + "' under --model-dir: " +
                                          std::string(std::strerror(errno)));
  }
  // What was opened, wherever the path points by now.
  std::error_code ec;
  const auto opened =
      std::filesystem::read_symlink("/proc/self/fd/" + std::to_string(file.fd), ec).string();
  if (ec || opened.rfind(model_root.string() + "/", 0) != 0)
    return fail(ErrorCode::permission, "model name '" + name + "' escapes --model-dir");
  struct stat st {};
  if (::fstat(file.fd, &st) != 0 || !S_ISREG(st.st_mode))
    return fail(ErrorCode::not_found, "no model '" + name + "' under --model-dir");
  if (static_cast<uint64_t>(st.st_size) > max_bytes)
    return fail(ErrorCode::limit_exceeded, "model '" + name + "' is " + std::to_string(st.st_size) +
                                               " bytes; max_model_bytes is " +
                                               std::to_string(max_bytes) +
                                               " (rig serve --max-model-bytes)");
  std::vector<std::byte> bytes(static_cast<size_t>(st.st_size));
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::read(file.fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0)
      return fail(ErrorCode::io, "cannot read model '" + name + "': " + std::strerror(errno));
    if (n == 0) break;  // it shrank meanwhile: what is there is the model
    done += static_cast<size_t>(n);
  }
  bytes.resize(done);
  return bytes;
}

bool equal_in_constant_time(const std::string& given, const std::string& expected) {
  unsigned char diff = given.size() == expected.size() ? 0 : 1;
  for (size_t i = 0; i < expected.size(); ++i)
    diff |= static_cast<unsigned char>(expected[i] ^ (i < given.size() ? given[i] : 0));
  return diff == 0;
}

Nanos AuthLimiter::failed(const std::string& peer, Nanos now) {
  std::lock_guard lock(mu_);
  if (peers_.size() >= kMaxPeers && !peers_.count(peer)) {
    for (auto it = peers_.begin(); it != peers_.end();)
      it = it->second.until <= now ? peers_.erase(it) : std::next(it);
    if (peers_.size() >= kMaxPeers) peers_.erase(peers_.begin());
  }
  Entry& e = peers_[peer];
  if (e.until <= now) e.failures = 0;                  // its last wait has passed: start again
  e.failures = std::min<uint32_t>(e.failures + 1, 7);  // 1x .. 64x
  const int64_t factor = int64_t{1} << (e.failures - 1);
  const Nanos wait =
      backoff_.count() > Nanos::max().count() / factor ? Nanos::max() / 2 : backoff_ * factor;
  e.until = std::max(e.until, now + wait);
  return wait;
}

uint64_t physical_memory() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : 0;
}

uint64_t memory_of(const DeviceInfo& info) {
  if (info.memory_bytes) return *info.memory_bytes;
  return info.in_process ? physical_memory() : 0;
}

uint64_t resolve_max_pending_bytes(uint64_t requested) {
  if (requested != 0) return requested;
  const uint64_t physical = physical_memory();
  return physical > 0 ? physical / 2 : kFallbackPendingBytes;
}

}  // namespace rig::server

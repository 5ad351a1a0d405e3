// The identity of a model for the record: the SHA-256 (rig/sha256.hpp) of its
// bytes or of its file, read in chunks.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>
#include <vector>

#include "rig/device.hpp"
#include "rig/model_graph.hpp"

namespace rig {

Result<std::string> file_sha256(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT) return fail(ErrorCode::not_found, "file not found: " + path);
    return fail(ErrorCode::io, "cannot open " + path + ": " + std::generic_category().message(err));
  }
  Sha256 s;
  std::vector<std::byte> chunk(1 << 20);
  while (true) {
    const ssize_t n = ::read(fd, chunk.data(), chunk.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      return fail(ErrorCode::io,
                  "cannot read " + path + ": " + std::generic_category().message(err));
    }
    if (n == 0) break;
    s.update(std::span<const std::byte>(chunk.data(), static_cast<size_t>(n)));
  }
  ::close(fd);
  return s.hex();
}

std::string model_sha256(const ModelSource& source) {
  if (!source.bytes.empty()) return sha256_hex(source.bytes);
  if (!source.path.empty()) {
    auto h = file_sha256(source.path);
    return h ? *h : std::string();
  }
  return {};
}

}  // namespace rig

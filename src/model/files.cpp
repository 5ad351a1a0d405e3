// Files: whole-file reads, atomic writes, and the demo model cache.
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <system_error>

#include "rig/model.hpp"
#include "rig/output_file.hpp"

namespace rig {
namespace {

std::string errno_text(int err) {
  return std::generic_category().message(err);
}

// Closes a file descriptor on scope exit.
struct FdGuard {
  int fd = -1;
  ~FdGuard() {
    if (fd >= 0) ::close(fd);
  }
};

std::string env_or_empty(const char* name) {
  const char* value = std::getenv(name);
  return value ? std::string(value) : std::string();
}

}  // namespace

Result<std::vector<std::byte>> read_file(const std::string& path, uint64_t max_bytes) {
  if (path.empty())
    return fail(ErrorCode::invalid_argument, "no file name given (the path is empty)");
  // Non-blocking: opening a FIFO that no process writes would wait for ever.
  FdGuard file{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)};
  if (file.fd < 0) {
    int err = errno;
    if (err == ENOENT) return fail(ErrorCode::not_found, "file not found: " + path);
    return fail(ErrorCode::io, "cannot open " + path + ": " + errno_text(err));
  }
  struct stat st {};
  if (::fstat(file.fd, &st) != 0)
    return fail(ErrorCode::io, "cannot stat " + path + ": " + errno_text(errno));
  if (S_ISDIR(st.st_mode)) return fail(ErrorCode::io, "cannot read " + path + ": is a directory");
  auto too_large = [&](const std::string& size) {
    return fail(ErrorCode::limit_exceeded, "cannot read " + path + ": it is " + size +
                                               " bytes, over the limit of " +
                                               std::to_string(max_bytes) + " bytes");
  };
  // Checked before reading anything: a 3 GB file is refused, not read.
  if (S_ISREG(st.st_mode) && static_cast<uint64_t>(st.st_size) > max_bytes)
    return too_large(std::to_string(st.st_size));

  std::vector<std::byte> bytes;
  bytes.reserve(S_ISREG(st.st_mode) ? static_cast<size_t>(st.st_size) : 0);
  std::byte chunk[65536];
  const bool fifo = S_ISFIFO(st.st_mode);
  while (true) {
    // A stream (a pipe, /dev/zero) is read up to one byte past the limit,
    // never a chunk more: that byte is what tells it is too large.
    const uint64_t left = max_bytes - std::min<uint64_t>(max_bytes, bytes.size());
    const size_t want = left >= sizeof chunk ? sizeof chunk : static_cast<size_t>(left) + 1;
    ssize_t n = ::read(file.fd, chunk, want);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) {  // a FIFO or device with its writer, nothing yet
        pollfd p{file.fd, POLLIN, 0};
        if (::poll(&p, 1, -1) < 0 && errno != EINTR)
          return fail(ErrorCode::io, "cannot read " + path + ": " + errno_text(errno));
        continue;
      }
      return fail(ErrorCode::io, "cannot read " + path + ": " + errno_text(errno));
    }
    if (n == 0) {
      // Opened without a writer, a FIFO reads as its end at once.
      if (fifo && bytes.empty())
        return fail(ErrorCode::io, "cannot read " + path +
                                       ": it is a FIFO that no process has open for writing "
                                       "(start the writer first)");
      break;
    }
    if (bytes.size() + static_cast<uint64_t>(n) > max_bytes) return too_large("more than that");
    bytes.insert(bytes.end(), chunk, chunk + n);
  }
  return bytes;
}

Result<void> write_file_atomic(const std::string& path, std::span<const std::byte> bytes) {
  return write_output_file(path, bytes);
}

Result<void> write_file_atomic(const std::string& path, std::string_view text) {
  return write_file_atomic(path, std::as_bytes(std::span(text.data(), text.size())));
}

std::string default_cache_dir() {
  if (auto dir = env_or_empty("RIG_CACHE_DIR"); !dir.empty()) return dir;
  if (auto dir = env_or_empty("XDG_CACHE_HOME"); !dir.empty()) return dir + "/rig";
  if (auto home = env_or_empty("HOME"); !home.empty()) return home + "/.cache/rig";
  std::error_code ec;
  auto tmp = std::filesystem::temp_directory_path(ec);
  return (ec ? std::filesystem::path("/tmp") : tmp).string() + "/rig-cache";
}

Result<std::string> ensure_demo_model(const std::string& dir) {
  const CnnSpec spec;
  auto model = build_cnn_model(spec);
  if (!model) return tl::unexpected(model.error());

  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return fail(ErrorCode::io, "cannot create cache directory " + dir + ": " + ec.message());

  // The name spells out the spec, so changed defaults never reuse a stale file.
  const std::string path =
      dir + "/demo-cnn-" + std::to_string(spec.frame.width) + "x" +
      std::to_string(spec.frame.height) + "-in" + std::to_string(spec.input_channels) + "-c" +
      std::to_string(spec.channels) + "-l" + std::to_string(spec.layers) + "-k" +
      std::to_string(spec.classes) + "-s" + std::to_string(spec.seed) + ".onnx";
  // Building is deterministic and cheap, so compare rather than trust the file:
  // a truncated or foreign file is replaced.
  if (auto existing = read_file(path); existing && *existing == *model) return path;
  if (auto written = write_file_atomic(path, *model); !written)
    return tl::unexpected(written.error());
  return path;
}

Result<ModelSource> resolve_model_source(const std::string& text) {
  ModelSource source;
  if (text.empty()) {
    auto demo = ensure_demo_model(default_cache_dir());
    if (!demo) return tl::unexpected(demo.error());
    source.path = *demo;
    source.name = "demo-cnn";
    return source;
  }
  if (text.rfind("server:", 0) == 0) {  // loaded by name under the server's --model-dir
    source.server_name = text.substr(7);
    return source;
  }
  std::error_code ec;
  if (!std::filesystem::exists(text, ec))
    return fail(ErrorCode::not_found, "model file '" + text + "' does not exist");
  source.path = text;
  return source;
}

}  // namespace rig

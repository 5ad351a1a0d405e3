#include "rig/output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <thread>
#include <utility>

namespace rig {
namespace {

namespace fs = std::filesystem;

// Symlinks followed before giving up (as the kernel's own ELOOP limit).
constexpr int kMaxSymlinks = 40;

std::string errno_text(int e) {
  return std::strerror(e);
}

Error io_error(const std::string& path, const std::string& why) {
  return {ErrorCode::io, "cannot write " + path + ": " + why};
}

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISBLK(mode)) return "a block device";
  return "not a regular file, FIFO or character device";
}

// What the path finally names once symlinks are followed: the path to
// write (the last link's target, so that renaming replaces the target and
// not the link) and its status, or exists == false for a new file.
struct Target {
  std::string path;
  bool exists = false;
  struct stat st {};
};

// The kernel's fs.protected_symlinks rule, which never applies here since
// rig follows links itself: in a sticky, world-writable directory (/tmp), a
// link is followed only when it belongs to the caller, to root, or to the
// directory's owner; another user's link there may point anywhere the
// caller can write.
Result<void> check_link_owner(const std::string& given, const std::string& link,
                              const struct stat& link_st) {
  fs::path dir = fs::path(link).parent_path();
  if (dir.empty()) dir = ".";
  struct stat dir_st {};
  if (::stat(dir.c_str(), &dir_st) != 0) return {};  // the lstat above saw the link: races only
  const bool sticky_world_writable = (dir_st.st_mode & S_ISVTX) && (dir_st.st_mode & S_IWOTH);
  const uid_t owner = link_st.st_uid;
  if (!sticky_world_writable || owner == ::geteuid() || owner == 0 || owner == dir_st.st_uid)
    return {};
  return fail(ErrorCode::permission,
              "cannot write " + given + ": refusing to follow the symbolic link " + link +
                  ", owned by uid " + std::to_string(owner) +
                  " (neither you, nor root, nor the directory's owner), in the sticky "
                  "world-writable directory " +
                  dir.string() +
                  " (the kernel's fs.protected_symlinks rule): remove the link or write elsewhere");
}

Result<Target> resolve(const std::string& given) {
  Target t;
  t.path = given;
  for (int hops = 0;; ++hops) {
    if (::lstat(t.path.c_str(), &t.st) != 0) {
      if (errno == ENOENT) return t;  // a new file (perhaps a dangling link's target)
      return tl::unexpected(io_error(given, errno_text(errno)));
    }
    if (!S_ISLNK(t.st.st_mode)) {
      t.exists = true;
      return t;
    }
    if (hops == kMaxSymlinks)
      return tl::unexpected(io_error(given, "too many levels of symbolic links"));
    if (auto ok = check_link_owner(given, t.path, t.st); !ok) return tl::unexpected(ok.error());
    std::error_code ec;
    const fs::path link = fs::read_symlink(t.path, ec);
    if (ec) return tl::unexpected(io_error(given, ec.message()));
    t.path = link.is_absolute() ? link.string() : (fs::path(t.path).parent_path() / link).string();
  }
}

Result<void> check_directory(const std::string& given, const std::string& path) {
  fs::path dir = fs::path(path).parent_path();
  if (dir.empty()) dir = ".";
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return tl::unexpected(io_error(given, "directory '" + dir.string() + "' does not exist"));
  if (::access(dir.c_str(), W_OK) != 0)
    return tl::unexpected(io_error(given, "directory '" + dir.string() + "' is not writable"));
  if (fs::path(path).filename().empty()) return tl::unexpected(io_error(given, "not a file name"));
  return {};
}

Result<void> write_all(int fd, std::span<const std::byte> bytes, const std::string& given) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return tl::unexpected(io_error(given, errno_text(errno)));
    }
    done += static_cast<size_t>(n);
  }
  return {};
}

Result<void> write_through(const std::string& given, const std::string& path,
                           std::span<const std::byte> bytes) {
  // Non-blocking, so that a FIFO nobody reads is an error after a while
  // rather than a wait for ever (ENXIO until a reader opens it); then
  // blocking again for the writes.
  constexpr auto kReaderWait = std::chrono::seconds(10);
  const auto give_up = std::chrono::steady_clock::now() + kReaderWait;
  Fd file{::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)};
  while (file.fd < 0 && errno == ENXIO && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    file.fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  }
  if (file.fd < 0 && errno == ENXIO)
    return tl::unexpected(io_error(given,
                                   "it is a FIFO that no process opened for reading "
                                   "within 10 s (start the reader first)"));
  if (file.fd < 0) return tl::unexpected(io_error(given, errno_text(errno)));
  if (const int flags = ::fcntl(file.fd, F_GETFL); flags >= 0)
    (void)::fcntl(file.fd, F_SETFL, flags & ~O_NONBLOCK);
  auto ok = write_all(file.fd, bytes, given);
  if (ok && ::close(std::exchange(file.fd, -1)) != 0)
    return tl::unexpected(io_error(given, errno_text(errno)));
  return ok;
}

Result<void> replace_atomically(const std::string& given, const Target& target,
                                std::span<const std::byte> bytes) {
  static std::atomic<uint64_t> counter{0};
  const fs::path final_path(target.path);
  // Appended piece by piece: GCC 12 at -O3 misreads the chain of operator+
  // as overlapping copies (-Werror=restrict), which breaks a Release build.
  std::string name = ".";
  name += final_path.filename().string();
  name += ".tmp.";
  name += std::to_string(::getpid());
  name += ".";
  name += std::to_string(counter.fetch_add(1));
  const fs::path temp = final_path.parent_path() / name;
  Fd file{::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666)};
  if (file.fd < 0) return tl::unexpected(io_error(given, errno_text(errno)));
  Result<void> ok;
  if (target.exists) {
    // The replacement is the same file to its readers: same mode, and the
    // same owner where this process may give it (as root).
    if (::fchmod(file.fd, target.st.st_mode & 07777) != 0)
      ok = tl::unexpected(io_error(given, errno_text(errno)));
    if (ok) (void)::fchown(file.fd, target.st.st_uid, target.st.st_gid);
  }
  if (ok) ok = write_all(file.fd, bytes, given);
  if (ok && ::fsync(file.fd) != 0) ok = tl::unexpected(io_error(given, errno_text(errno)));
  if (ok && ::close(std::exchange(file.fd, -1)) != 0)
    ok = tl::unexpected(io_error(given, errno_text(errno)));
  if (ok && ::rename(temp.c_str(), final_path.c_str()) != 0)
    ok = tl::unexpected(io_error(given, errno_text(errno)));
  if (!ok) ::unlink(temp.c_str());
  return ok;
}

}  // namespace

bool writes_to_stdout(std::string_view path) {
  return path == "-" || path == "/dev/stdout";
}

Result<void> check_output_path(const std::string& path) {
  if (path.empty()) return fail(ErrorCode::invalid_argument, "no output path given");
  if (writes_to_stdout(path)) return {};
  auto target = resolve(path);
  if (!target) return tl::unexpected(target.error());
  if (!target->exists) return check_directory(path, target->path);
  const mode_t mode = target->st.st_mode;
  if (S_ISFIFO(mode) || S_ISCHR(mode)) return {};
  if (!S_ISREG(mode))
    return fail(ErrorCode::io, "cannot write " + path + ": it is " + kind_of(mode));
  return check_directory(path, target->path);
}

Result<void> write_output_file(const std::string& path, std::span<const std::byte> bytes) {
  if (path.empty()) return fail(ErrorCode::invalid_argument, "no output path given");
  if (writes_to_stdout(path)) {
    std::fflush(stdout);  // whatever the process printed before goes first
    return write_all(STDOUT_FILENO, bytes, path);
  }
  auto target = resolve(path);
  if (!target) return tl::unexpected(target.error());
  if (!target->exists) {
    if (auto ok = check_directory(path, target->path); !ok) return ok;
    return replace_atomically(path, *target, bytes);
  }
  const mode_t mode = target->st.st_mode;
  if (S_ISFIFO(mode) || S_ISCHR(mode)) return write_through(path, target->path, bytes);
  if (!S_ISREG(mode))
    return fail(ErrorCode::io, "cannot write " + path + ": it is " + kind_of(mode));
  return replace_atomically(path, *target, bytes);
}

Result<void> write_output_file(const std::string& path, std::string_view text) {
  return write_output_file(path, std::as_bytes(std::span(text.data(), text.size())));
}

}  // namespace rig

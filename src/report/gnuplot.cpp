#include "report/gnuplot.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace rig::report {
namespace {

bool executable(const std::string& path) {
  return !path.empty() && ::access(path.c_str(), X_OK) == 0;
}

class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() { reset(); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

}  // namespace

std::string find_program(const std::string& program) {
  if (program.find('/') != std::string::npos) return executable(program) ? program : "";
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    const size_t colon = std::min(dirs.find(':', start), dirs.size());
    const std::string dir = dirs.substr(start, colon - start);
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + program;
    if (executable(candidate)) return candidate;
    start = colon + 1;
  }
  return "";
}

Result<std::string> run_gnuplot(const std::string& program, const std::string& script,
                                std::chrono::milliseconds timeout) {
  // stdin is a socket so that a write after gnuplot exits fails with EPIPE
  // (MSG_NOSIGNAL) instead of killing the caller with SIGPIPE.
  int in_pair[2], out_pipe[2], err_pipe[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in_pair) != 0)
    return fail(ErrorCode::io, std::string("socketpair: ") + std::strerror(errno));
  Fd in_parent(in_pair[0]), in_child(in_pair[1]);
  if (::pipe2(out_pipe, O_CLOEXEC) != 0)
    return fail(ErrorCode::io, std::string("pipe: ") + std::strerror(errno));
  Fd out_parent(out_pipe[0]), out_child(out_pipe[1]);
  if (::pipe2(err_pipe, O_CLOEXEC) != 0)
    return fail(ErrorCode::io, std::string("pipe: ") + std::strerror(errno));
  Fd err_parent(err_pipe[0]), err_child(err_pipe[1]);

  const pid_t pid = ::fork();
  if (pid < 0) return fail(ErrorCode::io, std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::dup2(in_child.get(), 0);
    ::dup2(out_child.get(), 1);
    ::dup2(err_child.get(), 2);
    ::execl(program.c_str(), program.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  in_child.reset();
  out_child.reset();
  err_child.reset();
  for (int fd : {in_parent.get(), out_parent.get(), err_parent.get()})
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);

  std::string out, err;
  size_t written = 0;
  if (script.empty()) in_parent.reset();
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  bool timed_out = false;
  while (out_parent.get() >= 0 || err_parent.get() >= 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd fds[3];
    int n = 0;
    int in_i = -1, out_i = -1, err_i = -1;
    if (in_parent.get() >= 0) fds[in_i = n++] = {in_parent.get(), POLLOUT, 0};
    if (out_parent.get() >= 0) fds[out_i = n++] = {out_parent.get(), POLLIN, 0};
    if (err_parent.get() >= 0) fds[err_i = n++] = {err_parent.get(), POLLIN, 0};
    const int ready = ::poll(fds, static_cast<nfds_t>(n), static_cast<int>(left.count()));
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    if (in_i >= 0 && fds[in_i].revents) {
      const ssize_t k =
          ::send(in_parent.get(), script.data() + written, script.size() - written, MSG_NOSIGNAL);
      if (k > 0) written += static_cast<size_t>(k);
      if ((k < 0 && errno != EAGAIN && errno != EINTR) || written == script.size())
        in_parent.reset();  // done, or gnuplot stopped reading
    }
    auto drain = [](Fd& fd, std::string& into) {
      char buf[65536];
      const ssize_t k = ::read(fd.get(), buf, sizeof buf);
      if (k > 0)
        into.append(buf, static_cast<size_t>(k));
      else if (k == 0 || (errno != EAGAIN && errno != EINTR))
        fd.reset();
    };
    if (out_i >= 0 && fds[out_i].revents) drain(out_parent, out);
    if (err_i >= 0 && fds[err_i].revents) drain(err_parent, err);
  }
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out)
    return fail(ErrorCode::timeout, "gnuplot ran past its timeout of " +
                                        std::to_string(timeout.count()) + " ms and was killed");
  if (WIFSIGNALED(status))
    return fail(ErrorCode::internal, "gnuplot died of signal " + std::to_string(WTERMSIG(status)));
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (code == 127)
    return fail(ErrorCode::not_found, "gnuplot could not be started (" + program + ")");
  if (code != 0) {
    const std::string first = err.substr(0, err.find('\n', err.find_first_not_of(" \n")));
    return fail(ErrorCode::internal,
                "gnuplot exited with status " + std::to_string(code) + ": " + first);
  }
  return out;
}

}  // namespace rig::report

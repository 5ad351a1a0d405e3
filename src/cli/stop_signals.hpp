// Ctrl-C during a measurement: the first SIGINT or SIGTERM asks the engine to
// stop (rig::request_stop); the phase running ends at its next completion,
// later phases do not run, and the command prints and writes what was
// measured with a verdict that says it was cut short (not_cut_short),
// records it in the history, and exits 130. A second signal exits at once
// (130), writing nothing more.
#pragma once

#include <errno.h>
#include <signal.h>
#include <unistd.h>

#include "rig/engine.hpp"

namespace rig::cli {

namespace detail {
extern "C" inline void on_stop_signal(int) {
  if (stop_requested()) _exit(130);
  const int saved = errno;  // write() may change it under the interrupted code
  request_stop();
  static const char kMessage[] =
      "\nrig: stopping: what was measured is kept (a second Ctrl-C quits at once)\n";
  const ssize_t written = write(STDERR_FILENO, kMessage, sizeof kMessage - 1);
  (void)written;
  errno = saved;
}
}  // namespace detail

// Installs the handlers for SIGINT and SIGTERM (before measuring).
inline void install_stop_signals() {
  clear_stop_request();
  struct sigaction a = {};
  a.sa_handler = detail::on_stop_signal;
  a.sa_flags = SA_RESTART;  // blocking calls go on; the engine reads the request
  sigemptyset(&a.sa_mask);
  sigaction(SIGINT, &a, nullptr);
  sigaction(SIGTERM, &a, nullptr);
}

// The exit status of a command whose measurement may have been stopped: 130
// (128 + SIGINT, as a shell reports Ctrl-C) when it was, else `status`.
inline int stopped_status(int status) {
  return stop_requested() ? 130 : status;
}

}  // namespace rig::cli

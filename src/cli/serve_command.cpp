// rig serve --device SPEC --listen ADDR [--model-dir DIR] [--token T] [--depth N]
// Hosts a local device for remote clients (tcp://HOST:PORT, unix:PATH) until
// SIGINT or SIGTERM.
#include <grp.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "cli/command.hpp"
#include "cli/options.hpp"
#include "proto/wire.hpp"
#include "rig/device.hpp"
#include "rig/model.hpp"
#include "rig/scenario/settings.hpp"
#include "rig/units.hpp"
#include "server/server.hpp"

namespace rig::cli {
namespace {

struct ServeOptions {
  std::string device = kDefaultDeviceSpec;
  std::string listen = "127.0.0.1:" + std::to_string(wire::kDefaultPort);
  std::string model_dir;
  std::string token;
  std::string token_file;
  std::string hello_timeout = "5s";
  std::string idle_timeout = "2min";
  uint32_t max_handshakes = server::ServerSettings{}.max_handshakes;
  uint32_t depth = 0;
  std::string max_buffer = "1GiB";
  // 2 GiB - 1: the largest model the ONNX parser reads (its size is an int).
  std::string max_model = std::to_string(INT_MAX);
  std::string max_loop = "1h";
  uint32_t max_connections = server::ServerSettings{}.max_connections;
  uint32_t max_models = server::ServerSettings{}.max_models_per_connection;
  std::string max_pending;   // empty: half the physical memory
  std::string socket_group;  // a unix socket's group (0660); empty: 0600, the owner only
  bool quiet = false;
};

// A group name or number, as chown(1) takes it.
Result<uint32_t> group_option(const std::string& text) {
  if (const ::group* g = ::getgrnam(text.c_str())) return static_cast<uint32_t>(g->gr_gid);
  if (!text.empty() && text.find_first_not_of("0123456789") == std::string::npos &&
      text.size() < 10)
    return static_cast<uint32_t>(std::stoul(text));
  return fail(ErrorCode::invalid_argument, "--socket-group: no group '" + text + "'");
}

// A byte count in [1, max]; checked as a double before the conversion, so an
// out-of-range value (1e30GB) is an error, not undefined behaviour.
Result<uint64_t> size_option(const std::string& option, const std::string& text, uint64_t max,
                             const std::string& why) {
  auto b = parse_bytes(text);
  if (!b) return fail(ErrorCode::invalid_argument, option + ": " + b.error().message);
  if (*b < 1) return fail(ErrorCode::invalid_argument, option + " must be at least 1 byte");
  if (!(*b <= static_cast<double>(max)))
    return fail(ErrorCode::invalid_argument, option + ": '" + text + "' is more than " +
                                                 std::to_string(max) + " bytes (" + why + ")");
  // double(max) may round up past max: clamp after converting in range.
  const double capped = std::min(*b, static_cast<double>(max));
  return std::min<uint64_t>(static_cast<uint64_t>(capped), max);
}

// The shortest token rig serve accepts: guessing one online is hopeless.
constexpr size_t kMinTokenChars = 16;

// --token-file: the token on the file's first line, from a file that only its
// owner may read (it is a secret; --token would show in /proc/PID/cmdline).
Result<std::string> read_token_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return fail(ErrorCode::not_found, "--token-file '" + path + "': " + std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    return fail(ErrorCode::invalid_argument, "--token-file '" + path + "' is not a regular file");
  if ((st.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return fail(ErrorCode::permission, "--token-file '" + path + "' may be read by others (mode " +
                                           mode + "): chmod 600 it");
  }
  auto bytes = read_file(path, 64 * 1024);
  if (!bytes) return tl::unexpected(bytes.error());
  std::string token(reinterpret_cast<const char*>(bytes->data()), bytes->size());
  token = token.substr(0, token.find_first_of("\r\n"));
  return token;
}

Result<std::string> token_option(const ServeOptions& o) {
  if (!o.token.empty() && !o.token_file.empty())
    return fail(ErrorCode::invalid_argument, "give --token or --token-file, not both");
  std::string token = o.token;
  if (!o.token_file.empty()) {
    auto read = read_token_file(o.token_file);
    if (!read) return read;
    token = *read;
    if (token.empty())
      return fail(ErrorCode::invalid_argument, "--token-file '" + o.token_file + "' is empty");
  }
  if (token.empty())
    if (const char* env = std::getenv("RIG_TOKEN")) token = env;
  if (!token.empty() && token.size() < kMinTokenChars)
    return fail(ErrorCode::invalid_argument, "the token is " + std::to_string(token.size()) +
                                                 " characters; rig serve needs " +
                                                 std::to_string(kMinTokenChars) + " or more");
  return token;
}

int run_serve_command(const ServeOptions& o) {
  server::ServerSettings s;
  s.listen = o.listen;
  s.model_dir = o.model_dir;
  if (!o.socket_group.empty()) {
    if (o.listen.rfind("unix:", 0) != 0)
      return report_error({ErrorCode::invalid_argument,
                           "--socket-group applies to a unix socket (--listen unix:PATH)"});
    auto group = group_option(o.socket_group);
    if (!group) return report_error(group.error());
    s.socket_group = *group;
  }
  auto token = token_option(o);
  if (!token) return report_error(token.error());
  s.token = *token;
  auto hello_timeout = parse_duration(o.hello_timeout);
  if (!hello_timeout || *hello_timeout <= Nanos(0))
    return report_error(
        {ErrorCode::invalid_argument,
         "--hello-timeout must be a positive duration, got '" + o.hello_timeout + "'"});
  auto idle_timeout =
      o.idle_timeout == "0" ? Result<Nanos>(Nanos(0)) : parse_duration(o.idle_timeout);
  if (!idle_timeout || *idle_timeout < Nanos(0))
    return report_error(
        {ErrorCode::invalid_argument,
         "--idle-timeout must be a duration (0: never), got '" + o.idle_timeout + "'"});
  if (o.max_handshakes == 0)
    return report_error({ErrorCode::invalid_argument, "--max-handshakes must be at least 1"});
  s.hello_timeout = *hello_timeout;
  s.idle_timeout = *idle_timeout;
  s.max_handshakes = o.max_handshakes;
  s.depth = o.depth;
  const wire::Limits defaults;
  auto max_buffer = size_option("--max-buffer-bytes", o.max_buffer, defaults.max_frame_bytes,
                                "max_frame_bytes: no buffer can be larger than its frame");
  if (!max_buffer) return report_error(max_buffer.error());
  auto max_model = size_option("--max-model-bytes", o.max_model, INT_MAX,
                               "2 GiB - 1, the largest model the ONNX parser reads");
  if (!max_model) return report_error(max_model.error());
  uint64_t max_pending = 0;  // the server's default
  if (!o.max_pending.empty()) {
    auto pending = size_option("--max-pending-bytes", o.max_pending, uint64_t{1} << 62, "2^62");
    if (!pending) return report_error(pending.error());
    max_pending = *pending;
  }
  if (o.max_connections == 0)
    return report_error({ErrorCode::invalid_argument, "--max-connections must be at least 1"});
  if (o.max_models == 0)
    return report_error(
        {ErrorCode::invalid_argument, "--max-models-per-connection must be at least 1"});
  auto max_loop = parse_duration(o.max_loop);
  if (!max_loop || *max_loop <= Nanos(0))
    return report_error({ErrorCode::invalid_argument,
                         "--max-loop-duration must be a positive "
                         "duration, got '" +
                             o.max_loop + "'"});
  s.limits.max_buffer_bytes = *max_buffer;
  s.limits.max_model_bytes = *max_model;
  s.limits.max_loop_duration = *max_loop;
  s.max_connections = o.max_connections;
  s.max_models_per_connection = o.max_models;
  s.max_pending_bytes = max_pending;
  if (!o.quiet)
    s.log = [](const std::string& line) { std::fprintf(stderr, "rig serve: %s\n", line.c_str()); };

  auto device = open_device(o.device);
  if (!device) return report_error(device.error());

  // Block the stop signals before any thread starts, so that every thread
  // inherits the mask and only sigwait() below sees them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  auto server = server::Server::start(std::move(*device), s);
  if (!server) return report_error(server.error());
  const DeviceInfo& info = (*server)->device_info();
  std::printf("rig serve: %s (%s)\n", info.spec.c_str(), info.description.c_str());
  std::printf("rig serve: listening on %s, protocol %u, %u requests in flight per connection%s\n",
              (*server)->address().c_str(), wire::kMaxVersion, (*server)->depth(),
              s.token.empty() ? "" : ", token required");
  const server::ServerSettings& effective = (*server)->settings();
  std::printf(
      "rig serve: limits: %u connections, %u models per connection, %s held for clients, "
      "%s per buffer, %s per model\n",
      effective.max_connections, effective.max_models_per_connection,
      format_bytes(static_cast<double>(effective.max_pending_bytes)).c_str(),
      format_bytes(static_cast<double>(effective.limits.max_buffer_bytes)).c_str(),
      format_bytes(static_cast<double>(effective.limits.max_model_bytes)).c_str());
  std::printf("rig serve: clients use -d %s; Ctrl-C stops\n", (*server)->address().c_str());
  std::fflush(stdout);

  int signal_number = 0;
  sigwait(&stop_signals, &signal_number);
  if (!o.quiet) std::fprintf(stderr, "rig serve: stopping (signal %d)\n", signal_number);
  (*server)->stop();
  const auto stats = (*server)->stats();
  if (!o.quiet)
    std::fprintf(stderr, "rig serve: served %llu connections, %llu requests, %llu error replies\n",
                 static_cast<unsigned long long>(stats.connections),
                 static_cast<unsigned long long>(stats.requests),
                 static_cast<unsigned long long>(stats.errors_sent));
  return 0;
}

}  // namespace

Command add_serve_command(CLI::App& app) {
  auto o = std::make_shared<ServeOptions>();
  CLI::App* sub = app.add_subcommand("serve", "Host a local device for remote clients (rig serve)");
  add_device_option(sub, o->device, "device to host");
  sub->add_option("--listen", o->listen,
                  "HOST:PORT, :PORT or unix:PATH; port 0 picks a free one; a non-loopback "
                  "address requires --token")
      ->capture_default_str();
  sub->add_option("--model-dir", o->model_dir,
                  "directory clients may load models from by name (-d ... MODEL as server:NAME)");
  sub->add_option("--token", o->token,
                  "token clients must present, 16 characters or more (default: $RIG_TOKEN)");
  sub->add_option("--token-file", o->token_file,
                  "read the token from this file (mode 600), so it is not on the command line");
  sub->add_option("--hello-timeout", o->hello_timeout,
                  "a connection must complete hello within this time")
      ->capture_default_str();
  sub->add_option("--idle-timeout", o->idle_timeout,
                  "close a connection idle (nothing in flight) this long; 0: never")
      ->capture_default_str();
  sub->add_option("--max-handshakes", o->max_handshakes,
                  "connections still before hello at once (they do not count against "
                  "--max-connections)")
      ->capture_default_str();
  sub->add_option("--socket-group", o->socket_group,
                  "give a unix socket to this group, mode 0660 (default: 0600, the owner only)");
  sub->add_option("--depth", o->depth,
                  "requests in flight per connection (default: twice the device's queue depth)");
  sub->add_option("--max-buffer-bytes", o->max_buffer,
                  "largest tensor buffer accepted (at most 4GiB, max_frame_bytes)")
      ->capture_default_str();
  sub->add_option("--max-model-bytes", o->max_model,
                  "largest model accepted (at most 2147483647 bytes, 2 GiB - 1)")
      ->capture_default_str();
  sub->add_option("--max-connections", o->max_connections,
                  "connections served at once; more are refused with an error")
      ->capture_default_str();
  sub->add_option("--max-models-per-connection", o->max_models,
                  "models one connection may hold loaded at once")
      ->capture_default_str();
  sub->add_option("--max-pending-bytes", o->max_pending,
                  "bytes held for all clients together: uploads, kept models, run slots "
                  "(default: half the physical memory)");
  sub->add_option("--max-loop-duration", o->max_loop, "longest run-for-duration accepted")
      ->capture_default_str();
  sub->add_flag("-q,--quiet", o->quiet, "no connection log on stderr");
  return {sub, [o] { return run_serve_command(*o); }};
}

}  // namespace rig::cli

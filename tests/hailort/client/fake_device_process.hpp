// The fake Hailo-10H device server (tests/hailort/fake_device) as a child
// process of a test: started with a script, it binds a free loopback address
// of its own choosing on HailoRT's hRPC port and says which; the test hands
// that address to the real client as the device id. The server stops by
// itself (its lifetime and idle limits); the destructor stops it sooner.
// It is a separate process because it links code generated from HailoRT's
// rpc.proto and hef.proto, whose global types libhailort exports too.
#pragma once

#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

extern char** environ;

namespace rig::test {

class FakeDeviceProcess {
 public:
  // Starts `server` with `script` (JSON text) written into `dir`; address()
  // is empty when it did not come up within 10 s, and why() says why.
  FakeDeviceProcess(const std::string& server, const std::filesystem::path& dir,
                    const nlohmann::json& script) {
    std::filesystem::create_directories(dir);
    script_path_ = dir / "script.json";
    record_path_ = dir / "record.json";
    std::ofstream(script_path_) << script.dump(2);
    int out[2];
    if (::pipe(out) != 0) {
      why_ = "pipe failed";
      return;
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, out[0]);
    std::vector<std::string> args = {server, "--script", script_path_.string(), "--record",
                                     record_path_.string()};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const int rc = posix_spawn(&pid_, server.c_str(), &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(out[1]);
    if (rc != 0) {
      ::close(out[0]);
      pid_ = -1;
      why_ = "cannot start " + server;
      return;
    }
    std::string line;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
      pollfd p{out[0], POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      char c;
      if (::read(out[0], &c, 1) != 1) break;
      if (c == '\n') break;
      line += c;
    }
    ::close(out[0]);
    const std::string prefix = "listening ";
    if (line.rfind(prefix, 0) == 0)
      address_ = line.substr(prefix.size());
    else
      why_ = "the fake device said '" + line + "' instead of 'listening ADDR'";
  }
  ~FakeDeviceProcess() { stop(); }
  FakeDeviceProcess(const FakeDeviceProcess&) = delete;
  FakeDeviceProcess& operator=(const FakeDeviceProcess&) = delete;

  const std::string& address() const { return address_; }
  const std::string& why() const { return why_; }

  // Stops the server (SIGTERM) and waits for it; it writes its record first.
  void stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
  }

  // What the server saw (its --record file), after stop() or a disconnect.
  std::optional<nlohmann::json> record() const {
    std::ifstream in(record_path_);
    if (!in) return std::nullopt;
    auto j = nlohmann::json::parse(in, nullptr, false);
    if (j.is_discarded()) return std::nullopt;
    return j;
  }

 private:
  pid_t pid_ = -1;
  std::filesystem::path script_path_, record_path_;
  std::string address_, why_;
};

}  // namespace rig::test

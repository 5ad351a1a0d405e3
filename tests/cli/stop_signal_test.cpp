// Ctrl-C during a measurement (issue 26 item 10): the first SIGINT or
// SIGTERM stops it where it is; rig prints and writes what was measured with
// a verdict that says it was cut short, records it in the history, and exits
// 130. Runs a sim paced to the wall clock (realtime=1) so that the signal
// lands inside the measurement, whatever phase it reaches.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <fstream>
#include <string>
#include <vector>

#include "cli_support.hpp"

namespace rig::test {
namespace {

class StopSignal : public CliFixture {
 protected:
  // Starts `rig ARGS...` with stderr on a pipe; waits until it printed the
  // line that says it is measuring, sends `sig`, and returns its exit status
  // and everything it printed on stderr.
  std::pair<int, std::string> run_and_signal(const std::vector<std::string>& args, int sig) {
    int err[2];
    EXPECT_EQ(::pipe(err), 0);
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::dup2(err[1], STDERR_FILENO);
      const int null = ::open("/dev/null", O_WRONLY);
      ::dup2(null, STDOUT_FILENO);
      ::close(err[0]);
      ::setenv("RIG_HISTORY", path("history.sqlite").c_str(), 1);
      std::vector<char*> argv;
      std::string binary = RIG_BINARY;
      argv.push_back(binary.data());
      std::vector<std::string> copy = args;
      for (auto& a : copy) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execv(RIG_BINARY, argv.data());
      ::_exit(127);
    }
    ::close(err[1]);
    std::string text;
    char buf[4096];
    bool signalled = false;
    for (ssize_t n; (n = ::read(err[0], buf, sizeof buf)) > 0;) {
      text.append(buf, static_cast<size_t>(n));
      if (!signalled && (text.find("rig: measuring") != std::string::npos ||
                         text.find("rig: soaking") != std::string::npos)) {
        ::kill(pid, sig);
        signalled = true;
      }
    }
    ::close(err[0]);
    int raw = 0;
    ::waitpid(pid, &raw, 0);
    EXPECT_TRUE(signalled) << text;
    return {WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw), text};
  }
};

TEST_F(StopSignal, SigintDuringBenchKeepsWhatWasMeasuredAndExits130) {
  const std::string json = path("bench.json");
  auto [status, err] = run_and_signal(
      {"bench", model_, "-d", "sim:compute=5ms,realtime=1", "--duration", "30s", "--json", json},
      SIGINT);
  EXPECT_EQ(status, 130) << err;
  EXPECT_NE(err.find("rig: stopping"), std::string::npos) << err;
  EXPECT_NE(err.find("rig: history: run"), std::string::npos) << err;
  std::ifstream in(json);
  ASSERT_TRUE(in.good()) << "no JSON written\n" << err;
  const auto doc = nlohmann::json::parse(in);
  EXPECT_FALSE(doc["verdict"]["valid"].get<bool>());
  bool rule = false;
  for (const auto& r : doc["verdict"]["rules"])
    if (r["rule"] == "not_cut_short") {
      rule = true;
      EXPECT_FALSE(r["met"].get<bool>());
    }
  EXPECT_TRUE(rule);
}

TEST_F(StopSignal, SigtermDuringSoakKeepsWhatWasMeasuredAndExits130) {
  const std::string json = path("soak.json");
  auto [status, err] =
      run_and_signal({"soak", model_, "-d", "sim:compute=5ms,realtime=1", "--duration", "30s",
                      "--short", "2s", "--long", "4s", "--json", json},
                     SIGTERM);
  EXPECT_EQ(status, 130) << err;
  std::ifstream in(json);
  ASSERT_TRUE(in.good()) << "no JSON written\n" << err;
  const auto doc = nlohmann::json::parse(in);
  EXPECT_FALSE(doc["verdict"]["valid"].get<bool>());
  EXPECT_NE(doc.dump().find("cut short by a signal"), std::string::npos);
}

}  // namespace
}  // namespace rig::test

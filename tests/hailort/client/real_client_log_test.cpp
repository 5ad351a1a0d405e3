// Which HailoRT log file rig reads, through the real library, as a user
// HailoRT's access(W_OK) checks apply to (root passes them). HailoRT makes a
// null sink, silently, for an existing hailort.log the user cannot write
// (utils/hailort_logger.cpp create_file_sink, 5.1.1 and 5.2.0): rig must not
// read that file and see nothing. Run only by run_unprivileged.sh, which lays
// out HOME and the working folder and sets RIG_LOG_CASE; the ctest entries
// are in targets.cmake (not listed from this file with the other tests).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "client/fake_device_process.hpp"
#include "devices/hailo/hailo_device.hpp"
#include "rig/device.hpp"

namespace rig {
namespace {

namespace fs = std::filesystem;

std::string log_case() {
  const char* c = std::getenv("RIG_LOG_CASE");
  return c ? c : "";
}

fs::path main_log() {
  return fs::path(std::getenv("HOME")) / ".hailo" / "hailort" / "hailort.log";
}

struct Fake {
  fs::path dir = fs::path(::testing::TempDir()) /
                 ("hailort_log_" RIG_HAILORT_VERSION "_" + std::to_string(::getpid()));
  test::FakeDeviceProcess process;
  explicit Fake(const nlohmann::json& script) : process(RIG_FAKE_DEVICE, dir, script) {}
  ~Fake() {
    process.stop();
    std::error_code ignored;
    fs::remove_all(dir, ignored);
  }
};

TEST(RealClientLog, AMainLogFileThisUserCannotWriteIsNotTheOneRead) {
  if (log_case() != "readonly_main") GTEST_SKIP() << "run by run_unprivileged.sh readonly_main";
  ASSERT_TRUE(fs::exists(main_log()));
  ASSERT_NE(::access(main_log().c_str(), W_OK), 0) << "the main log file is writable: as root?";
  // A lost reply to identify: HailoRT logs the timeout, rig retries once.
  Fake fake(nlohmann::json{{"reply_delay_ms", 20}, {"drop_reply", {{"DEVICE__IDENTIFY", 1}}}});
  ASSERT_FALSE(fake.process.address().empty()) << fake.process.why();
  auto d = open_hailo_device({{"device_id", fake.process.address()}}, steady_clock());
  ASSERT_TRUE(d) << d.error().to_string();
  const auto info = (*d)->info();
  const std::string log = info.properties.at("hailort_log");
  const std::string local = (fs::current_path() / "hailort.log").string();
  EXPECT_EQ(log.rfind(local, 0), 0u) << log;
  EXPECT_NE(log.find("exists and this user cannot write it"), std::string::npos) << log;
  // HailoRT's own timeout line came through the local file.
  bool from_log = false;
  for (const auto& w : (*d)->take_warnings())
    from_log |= w.find("HAILO_TIMEOUT(4)") != std::string::npos &&
                w.find("retried once") == std::string::npos;
  EXPECT_TRUE(from_log) << "no HailoRT line read from " << local;
}

TEST(RealClientLog, NoLogFileThisUserCanWriteIsSaidAtOpen) {
  if (log_case() != "no_log") GTEST_SKIP() << "run by run_unprivileged.sh no_log";
  ASSERT_NE(::access(".", W_OK), 0) << "the working folder is writable: as root?";
  Fake fake(nlohmann::json{{"reply_delay_ms", 20}});
  ASSERT_FALSE(fake.process.address().empty()) << fake.process.why();
  auto d = open_hailo_device({{"device_id", fake.process.address()}}, steady_clock());
  ASSERT_TRUE(d) << d.error().to_string();
  const auto info = (*d)->info();
  const std::string log = info.properties.at("hailort_log");
  EXPECT_EQ(log.rfind("unavailable: HailoRT writes neither log file", 0), 0u) << log;
  EXPECT_NE(log.find("exists and this user cannot write it"), std::string::npos) << log;
  EXPECT_NE(log.find("this user cannot write the folder"), std::string::npos) << log;
  bool said = false;
  for (const auto& w : info.warnings) said |= w.find("rig cannot read HailoRT's warnings") == 0;
  EXPECT_TRUE(said);
}

}  // namespace
}  // namespace rig

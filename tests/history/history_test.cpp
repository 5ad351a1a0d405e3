// The run history: round trip, filters, migration from schema version 1, two
// processes appending at once, a corrupt file, and redaction.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "rig/history.hpp"

namespace rig {
namespace {

class HistoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("rig-history-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    path_ = (dir_ / "sub" / "history.sqlite").string();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::filesystem::path dir_;
  std::string path_;
};

std::string doc(const std::string& model, const std::string& device, const std::string& status) {
  return R"({"schema_version": 3, "tool": "rig bench", "model": {"name": ")" + model +
         R"(", "sha256": ")" + model +
         R"(00ff"}, "environment": {"kernel": "Linux 6.1", "device": {"spec": ")" + device +
         R"("}}, "verdict": {"status": ")" + status + R"("}})";
}

HistoryFilter by_model(std::string m) {
  HistoryFilter f;
  f.model = std::move(m);
  return f;
}
HistoryFilter by_device(std::string d) {
  HistoryFilter f;
  f.device = std::move(d);
  return f;
}
HistoryFilter since(int64_t ms) {
  HistoryFilter f;
  f.since_unix_ms = ms;
  return f;
}

// Issue 26, item 6: what would make an append fail after a measurement is
// found before it: a runs table without the columns an append writes, and
// a write lock another process holds.
TEST_F(HistoryTest, CheckAppendFindsWrongColumnsAndAHeldLockBeforehand) {
  std::filesystem::create_directories(dir_ / "sub");
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "CREATE TABLE runs(id INTEGER PRIMARY KEY, document TEXT); "
                         "PRAGMA user_version = 2",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  auto wrong = History::open(path_);
  ASSERT_TRUE(wrong) << wrong.error().message;
  auto checked = wrong->check_append(std::chrono::milliseconds(0));
  ASSERT_FALSE(checked);
  EXPECT_NE(checked.error().message.find("time_utc"), std::string::npos) << checked.error().message;
  std::filesystem::remove_all(dir_);

  auto h = History::open(path_);
  ASSERT_TRUE(h) << h.error().message;
  EXPECT_TRUE(h->check_append(std::chrono::milliseconds(0)));
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
  auto locked = h->check_append(std::chrono::milliseconds(0));
  ASSERT_FALSE(locked);
  EXPECT_NE(locked.error().message.find("another process holds it"), std::string::npos)
      << locked.error().message;
  sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(db);
  EXPECT_TRUE(h->check_append(std::chrono::milliseconds(0)));
  EXPECT_TRUE(h->append(doc("cnn", "cpu", "VALID"), 1764587000000));
}

// Issue 26, item 11: a model filter is a substring or a sha256 prefix, not
// a LIKE pattern: '%' and '_' match only themselves.
TEST_F(HistoryTest, AModelFilterHasNoWildcards) {
  auto h = History::open(path_);
  ASSERT_TRUE(h) << h.error().message;
  ASSERT_TRUE(h->append(doc("cnn", "cpu", "VALID"), 1764587000000));
  for (const char* pattern : {"%", "_", "c%"}) {
    auto runs = h->list(by_model(pattern));
    ASSERT_TRUE(runs) << runs.error().message;
    EXPECT_TRUE(runs->empty()) << pattern;
  }
  auto prefix = h->list(by_model("cnn0"));  // the sha256 "cnn00ff" by its prefix
  ASSERT_TRUE(prefix);
  EXPECT_EQ(prefix->size(), 1u);
}

TEST_F(HistoryTest, RoundTripAndFilters) {
  auto h = History::open(path_);  // creates the missing directory
  ASSERT_TRUE(h.has_value()) << h.error().message;
  EXPECT_EQ(h->schema_version(), kHistorySchemaVersion);
  auto id1 = h->append(doc("cnn", "sim:compute=2ms", "VALID"), 1764587000000);
  auto id2 = h->append(doc("det", "cpu:threads=2", "INVALID"), 1764590000000);
  ASSERT_TRUE(id1.has_value() && id2.has_value());
  auto run = h->get(*id2);
  ASSERT_TRUE(run.has_value());
  EXPECT_EQ(run->document, doc("det", "cpu:threads=2", "INVALID"));
  EXPECT_EQ(run->tool, "rig bench");
  EXPECT_EQ(run->model_sha256, "det00ff");
  EXPECT_EQ(run->device_spec, "cpu:threads=2");
  EXPECT_EQ(run->verdict, "INVALID");
  EXPECT_EQ(run->time_utc, format_utc(1764590000000));
  EXPECT_NE(run->environment.find("Linux 6.1"), std::string::npos);
  EXPECT_EQ(h->list({})->size(), 2u);
  EXPECT_EQ(h->list(by_model("cnn"))->size(), 1u);
  EXPECT_EQ(h->list(by_model("det00"))->size(), 1u);  // a sha256 prefix
  EXPECT_EQ(h->list(by_device("sim:"))->size(), 1u);
  EXPECT_EQ(h->list(since(1764588000000))->at(0).id, *id2);
  EXPECT_EQ(h->get(99).error().code, ErrorCode::not_found);
  // A second open of the same file sees the runs.
  auto again = History::open(path_);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->list({})->size(), 2u);
}

TEST_F(HistoryTest, MigratesFromVersion1) {
  std::filesystem::create_directories(dir_ / "sub");
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  const std::string d = doc("old", "sim:x=1", "VALID");
  const std::string sql =
      "CREATE TABLE runs(id INTEGER PRIMARY KEY, time_utc TEXT NOT NULL, tool TEXT NOT NULL, "
      "document TEXT NOT NULL); PRAGMA user_version = 1; INSERT INTO runs(time_utc, tool, "
      "document) VALUES('2026-11-30T10:00:00Z', 'rig bench', '" +
      d + "');";
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);

  auto h = History::open(path_);
  ASSERT_TRUE(h.has_value()) << h.error().message;
  EXPECT_EQ(h->schema_version(), 2);
  auto runs = h->list(by_model("old"));
  ASSERT_TRUE(runs.has_value());
  ASSERT_EQ(runs->size(), 1u);
  EXPECT_EQ(runs->at(0).device_spec, "sim:x=1");
  EXPECT_EQ(runs->at(0).verdict, "VALID");
  EXPECT_EQ(runs->at(0).time_unix_ms, *parse_since("2026-11-30T10:00:00Z", 0));
  EXPECT_TRUE(h->append(doc("new", "cpu", "VALID"), 1).has_value());
  EXPECT_EQ(h->list({})->size(), 2u);
}

TEST_F(HistoryTest, RefusesANewerSchema) {
  std::filesystem::create_directories(dir_ / "sub");
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "PRAGMA user_version = 9", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  auto h = History::open(path_);
  ASSERT_FALSE(h.has_value());
  EXPECT_NE(h.error().message.find("schema version 9"), std::string::npos) << h.error().message;
}

TEST_F(HistoryTest, TwoProcessesAppendAtOnce) {
  constexpr int kEach = 40;
  pid_t children[2];
  for (int c = 0; c < 2; ++c) {
    children[c] = ::fork();
    ASSERT_GE(children[c], 0);
    if (children[c] == 0) {
      auto h = History::open(path_);
      if (!h) ::_exit(10);
      for (int i = 0; i < kEach; ++i)
        if (!h->append(doc("p" + std::to_string(c), "sim", "VALID"), i)) ::_exit(11);
      ::_exit(0);
    }
  }
  for (pid_t child : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
  }
  auto h = History::open(path_);
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(h->list({})->size(), 2u * kEach);
  EXPECT_EQ(h->list(by_model("p0"))->size(), static_cast<size_t>(kEach));
}

TEST_F(HistoryTest, CorruptFileIsANamedError) {
  std::filesystem::create_directories(dir_ / "sub");
  std::ofstream(path_) << std::string(8192, 'z');
  auto h = History::open(path_);
  ASSERT_FALSE(h.has_value());
  EXPECT_EQ(h.error().code, ErrorCode::io);
  EXPECT_NE(h.error().message.find("file is not a database"), std::string::npos)
      << h.error().message;
  EXPECT_NE(h.error().message.find(path_), std::string::npos);
}

TEST_F(HistoryTest, StoredResultsCarryNoToken) {
  auto h = History::open(path_);
  ASSERT_TRUE(h.has_value());
  ::setenv("RIG_TOKEN", "hunter2-secret-value", 1);
  const std::string d =
      R"({"tool": "rig bench", "settings": {"requested": {"device": "tcp://h:1?token=s3cr3t&x=1"}}, "note": "hunter2-secret-value"})";
  auto id = h->append(d, 0);
  ::unsetenv("RIG_TOKEN");
  ASSERT_TRUE(id.has_value());
  const std::string stored = h->get(*id)->document;
  EXPECT_EQ(stored.find("s3cr3t"), std::string::npos) << stored;
  EXPECT_EQ(stored.find("hunter2"), std::string::npos) << stored;
  EXPECT_NE(stored.find("token=***&x=1"), std::string::npos) << stored;
}

TEST(HistoryTime, SinceAcceptsDatesAndDurations) {
  EXPECT_EQ(*parse_since("1970-01-02", 0), 86400000);
  EXPECT_EQ(*parse_since("1970-01-01T01:00", 0), 3600000);
  EXPECT_EQ(*parse_since("1970-01-01T00:00:10Z", 0), 10000);
  EXPECT_EQ(*parse_since("2h", 10 * 3600000), 8 * 3600000);
  EXPECT_EQ(*parse_since("1d", 2 * 86400000), 86400000);
  EXPECT_FALSE(parse_since("yesterday", 0).has_value());
  EXPECT_FALSE(parse_since("2026-13-01", 0).has_value());
  EXPECT_EQ(format_utc(0), "1970-01-01T00:00:00Z");
}

}  // namespace
}  // namespace rig

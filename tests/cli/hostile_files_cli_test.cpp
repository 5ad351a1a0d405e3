// Issue 37's hostile inputs through the executable and the libraries that
// read them: deeply nested documents, CSV formula injection, interval units,
// a reader of stdout that goes away, a failing history append, links planted
// in sticky directories, terminal escapes from files and histories.
#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "cli_support.hpp"
#include "rig/history.hpp"
#include "rig/json_depth.hpp"
#include "rig/output_file.hpp"
#include "rig/report/document.hpp"

namespace rig {
namespace {

using test::CliRun;

constexpr const char* kSim = "-d sim:compute=1ms,bw=1GB/s,depth=4 --duration 1s -q";

void write_text(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A 40 KB bench document whose "steady" nests 20,000 arrays deep.
std::string deep_document(int depth = 20000) {
  return R"({"schema_version": 6, "tool": "rig bench", "steady": )" + std::string(depth, '[') +
         std::string(depth, ']') + "}";
}

class HostileFiles : public test::CliFixture {};

TEST_F(HostileFiles, EveryReaderRefusesADeeplyNestedDocumentByName) {
  const std::string deep = path("deep.json");
  write_text(deep, deep_document());
  const std::string out = path("out");
  for (const std::string& args :
       {"report " + deep + " -o " + out + ".html", "export --csv " + deep,
        "export --csv-windows " + deep, "diff " + deep + " " + deep,
        "predict " + deep + " --link usb3-gen2", "place " + deep + " --workload fps=30",
        "fit " + model_ + " --device-memory 1MB --ladder " + deep}) {
    const CliRun r = test::rig("--no-history " + args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.output;
    EXPECT_NE(r.output.find("nested deeper than 64 levels"), std::string::npos) << args << "\n"
                                                                                << r.output;
  }
  // The history's reader too (a hostile database's documents).
  auto rec = record_of_document(deep_document());
  ASSERT_FALSE(rec.has_value());
  EXPECT_NE(rec.error().message.find("nested deeper than 64"), std::string::npos);
}

TEST_F(HostileFiles, TheDepthBoundCountsBracketsOutsideStringsOnly) {
  EXPECT_TRUE(check_json_depth(deep_document(kMaxJsonDepth - 1), "d").has_value());
  EXPECT_FALSE(check_json_depth(deep_document(kMaxJsonDepth), "d").has_value());
  // Brackets and escaped quotes inside a string are text.
  const std::string in_string = "{\"k\": \"\\\"" + std::string(1000, '[') + "\"}";
  EXPECT_TRUE(check_json_depth(in_string, "s").has_value());
}

TEST_F(HostileFiles, CsvCellsThatASpreadsheetWouldRunAreNeutralisedNumbersStayNumbers) {
  const std::string doc = path("inj.json");
  write_text(doc, R"J({"schema_version": 6, "tool": "=cmd|' /C calc'!A0",
    "environment": {"device": {"properties": {"vendor": "=HYPERLINK(\"http://x\")",
      "+plus": "+1+2", "at": "@SUM(A1)", "tab": "\tx", "cr": "\rx", "dash": "-2+3"}}},
    "figures": {"=sum_ms": 2, "offset_ms": -3.5, "text_number": "-4", "plain": "fine"}})J");
  const CliRun r = test::rig("export --csv " + doc);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find(",\"'=HYPERLINK(\"\"http://x\"\")\","), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("'=cmd|' /C calc'!A0"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(",device.properties.+plus,'+1+2,"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(",figures,'=sum_ms,2,ms"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(",'@SUM(A1),"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(",'\tx,"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(",\"'\rx\","), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(",'-2+3,"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(",offset_ms,-3.5,ms"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(",text_number,-4,"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(",plain,fine,"), std::string::npos) << r.output;
}

TEST_F(HostileFiles, IntervalBoundsTakeTheUnitOfTheFigureTheyBound) {
  const std::string json = path("b.json");
  const CliRun bench = test::rig("--no-history bench " + model_ + " " + kSim + " --json " + json);
  ASSERT_EQ(bench.status, 0) << bench.output;
  const CliRun r = test::rig("export --csv " + json);
  ASSERT_EQ(r.status, 0) << r.output;
  size_t bounds = 0;
  std::istringstream rows(r.output);
  for (std::string row; std::getline(rows, row);) {
    if (row.find("overall_ms.intervals.p99.lower,") == std::string::npos &&
        row.find("overall_ms.intervals.p99.upper,") == std::string::npos)
      continue;
    ++bounds;
    EXPECT_EQ(row.substr(row.rfind(',')), ",ms\r") << row;
  }
  EXPECT_GT(bounds, 0u) << r.output;
  // Ranks are counts, not milliseconds.
  EXPECT_NE(r.output.find("overall_ms.intervals.p99.lower_rank,"), std::string::npos);
  EXPECT_EQ(r.output.find("overall_ms.intervals.p99.lower_rank,ms"), std::string::npos);
}

// `rig ARGS` with stdout a pipe whose reader is already gone; stderr to a
// file. Returns the exit status (128 + signal when killed).
int rig_with_closed_stdout(const std::string& args, const std::string& stderr_path) {
  int fds[2];
  if (::pipe(fds) != 0) return -1;
  ::close(fds[0]);
  const std::string cmd = "exec " + std::string(RIG_BINARY) + " " + args + " 2>" + stderr_path;
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::signal(SIGPIPE, SIG_DFL);  // as a shell would give it
    ::dup2(fds[1], STDOUT_FILENO);
    ::execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(fds[1]);
  int raw = 0;
  ::waitpid(pid, &raw, 0);
  return WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
}

TEST_F(HostileFiles, AReaderOfStdoutThatGoesAwayCostsTheReportNotTheResult) {
  const std::string history = path("h.sqlite"), json = path("a.json");
  const int status = rig_with_closed_stdout(
      "--history " + history + " bench " + model_ + " " + kSim + " --json " + json,
      path("err.txt"));
  EXPECT_EQ(status, 0) << read_text(path("err.txt"));
  EXPECT_NE(read_text(json).find("\"tool\": \"rig bench\""), std::string::npos);
  const CliRun listed = test::rig("--history " + history + " history");
  EXPECT_EQ(listed.status, 0) << listed.output;
  EXPECT_NE(listed.output.find("rig bench"), std::string::npos) << listed.output;
}

TEST_F(HostileFiles, AFailedHistoryAppendAfterTheRunIsAnIoFaultNamingTheResult) {
  const std::string history = path("h.sqlite"), json = path("a.json");
  {
    auto h = History::open(history);
    ASSERT_TRUE(h.has_value()) << h.error().to_string();
  }
  // The checks before the run pass (the table, the write lock); the INSERT
  // after it fails.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(history.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "CREATE TRIGGER full BEFORE INSERT ON runs BEGIN SELECT "
                         "RAISE(ABORT, 'the disk is full'); END",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  const CliRun r =
      test::rig("--history " + history + " bench " + model_ + " " + kSim + " --json " + json);
  EXPECT_EQ(r.status, 3) << r.output;
  EXPECT_NE(r.output.find("the result is kept in " + json), std::string::npos) << r.output;
  EXPECT_NE(read_text(json).find("\"tool\": \"rig bench\""), std::string::npos);
}

TEST_F(HostileFiles, ALinkPlantedByAnotherUserInAStickyDirectoryIsNotFollowed) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root: a link is given to uid 65534 with lchown";
  const std::string shared = path("shared");
  std::filesystem::create_directories(shared);
  ASSERT_EQ(::chmod(shared.c_str(), 01777), 0);
  const std::string victim = path("victim");
  write_text(victim, "precious\n");
  const std::string link = shared + "/result.json";
  std::filesystem::create_symlink(victim, link);
  ASSERT_EQ(::lchown(link.c_str(), 65534, 65534), 0);
  auto checked = check_output_path(link);
  ASSERT_FALSE(checked.has_value());
  EXPECT_EQ(checked.error().code, ErrorCode::permission);
  EXPECT_NE(checked.error().message.find("fs.protected_symlinks"), std::string::npos);
  auto written = write_output_file(link, std::string_view("replaced\n"));
  ASSERT_FALSE(written.has_value());
  EXPECT_NE(written.error().message.find("owned by uid 65534"), std::string::npos)
      << written.error().message;
  EXPECT_EQ(read_text(victim), "precious\n");
  // Through the command: refused before anything is measured.
  const CliRun r = test::rig("--no-history bench " + model_ + " " + kSim + " --json " + link);
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("refusing to follow the symbolic link"), std::string::npos) << r.output;
  EXPECT_EQ(read_text(victim), "precious\n");
  // The caller's own link there is followed, as the kernel would.
  ASSERT_EQ(::lchown(link.c_str(), 0, 0), 0);
  EXPECT_TRUE(write_output_file(link, std::string_view("mine\n")).has_value());
  EXPECT_EQ(read_text(victim), "mine\n");
  // Outside a sticky directory another user's link is followed.
  const std::string plain = path("plain.json");
  std::filesystem::create_symlink(victim, plain);
  ASSERT_EQ(::lchown(plain.c_str(), 65534, 65534), 0);
  EXPECT_TRUE(write_output_file(plain, std::string_view("plain\n")).has_value());
}

TEST_F(HostileFiles, ControlCharactersFromOutsideRigPrintAsVisibleEscapes) {
  EXPECT_EQ(terminal_safe("ok\tline\n"), "ok\tline\n");
  EXPECT_EQ(terminal_safe("\x1b[2Jverdict: VALID\r\a"), "\\x1b[2Jverdict: VALID\\x0d\\x07");
  EXPECT_EQ(terminal_safe("\x7f"), "\\x7f");
  EXPECT_EQ(terminal_safe("\xc2\x9b"
                          "31m"),
            "\\u009b31m");
  EXPECT_EQ(terminal_safe("caf\xc3\xa9 \xe2\x82\xac"), "caf\xc3\xa9 \xe2\x82\xac");
  // A history label (a model name) and a diff line through the executable.
  const std::string history = path("h.sqlite");
  const std::string doc = R"({"schema_version": 6, "tool": "rig bench",
      "model": {"name": "m\u001b]0;owned\u0007\r\u001b[2Kverdict: VALID"}})";
  {
    auto h = History::open(history);
    ASSERT_TRUE(h.has_value());
    ASSERT_TRUE(h->append(doc, 0).has_value());
  }
  const CliRun listed = test::rig("--history " + history + " history");
  EXPECT_EQ(listed.status, 0) << listed.output;
  EXPECT_EQ(listed.output.find_first_of("\x1b\x07\r"), std::string::npos) << listed.output;
  EXPECT_NE(listed.output.find("\\x1b]0;owned\\x07"), std::string::npos) << listed.output;
  const CliRun shown = test::rig("--history " + history + " history --show 1");
  EXPECT_EQ(shown.output.find_first_of("\x1b\x07\r"), std::string::npos) << shown.output;
  const std::string a = path("a.json"), b = path("b.json");
  write_text(a, R"({"schema_version": 6, "tool": "rig bench",
      "steady": {"\u001b[2Kfake_ms": 1.0}})");
  write_text(b, R"({"schema_version": 6, "tool": "rig bench",
      "steady": {"\u001b[2Kfake_ms": 2.0}})");
  const CliRun diff = test::rig("--no-history diff " + a + " " + b);
  EXPECT_EQ(diff.output.find('\x1b'), std::string::npos) << diff.output;
  EXPECT_NE(diff.output.find("\\x1b[2Kfake_ms"), std::string::npos) << diff.output;
}

}  // namespace
}  // namespace rig

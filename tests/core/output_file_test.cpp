// write_output_file: what it does to each kind of path. FIFOs, device nodes
// and sockets are made in a temporary folder; nothing here writes to a
// system path.
#include "rig/output_file.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace rig {
namespace {

namespace fs = std::filesystem;

class OutputFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("rig-output-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  static std::string read(const std::string& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  size_t entries() const {
    return static_cast<size_t>(std::distance(fs::directory_iterator(dir_), {}));
  }
  fs::path dir_;
};

TEST_F(OutputFile, ANewPathIsCreated) {
  ASSERT_TRUE(write_output_file(path("a.json"), std::string_view("{}")));
  EXPECT_EQ(read(path("a.json")), "{}");
  EXPECT_EQ(entries(), 1u);
}

TEST_F(OutputFile, ARegularFileIsReplacedKeepingItsMode) {
  const std::string p = path("secret.json");
  ASSERT_TRUE(write_output_file(p, std::string_view("old")));
  ASSERT_EQ(::chmod(p.c_str(), 0600), 0);
  struct stat before {};
  ASSERT_EQ(::stat(p.c_str(), &before), 0);
  ASSERT_TRUE(write_output_file(p, std::string_view("new")));
  struct stat after {};
  ASSERT_EQ(::stat(p.c_str(), &after), 0);
  EXPECT_EQ(read(p), "new");
  EXPECT_EQ(after.st_mode & 07777, 0600u);
  EXPECT_NE(after.st_ino, before.st_ino);  // replaced, not rewritten in place
  EXPECT_EQ(entries(), 1u);                // no temporary file left
}

TEST_F(OutputFile, ASymlinkIsFollowedAndStaysALink) {
  const std::string target = path("target.json"), link = path("link.json");
  ASSERT_TRUE(write_output_file(target, std::string_view("old")));
  ASSERT_EQ(::chmod(target.c_str(), 0640), 0);
  fs::create_symlink("target.json", link);  // relative, as ln -s makes it
  ASSERT_TRUE(write_output_file(link, std::string_view("new")));
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(read(target), "new");
  EXPECT_EQ(fs::status(target).permissions() & fs::perms::mask,
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  // A dangling link: its target is created.
  const std::string dangling = path("dangling.json");
  fs::create_symlink(path("made.json"), dangling);
  ASSERT_TRUE(write_output_file(dangling, std::string_view("made")));
  EXPECT_TRUE(fs::is_symlink(dangling));
  EXPECT_EQ(read(path("made.json")), "made");
}

TEST_F(OutputFile, AFifoIsWrittenThrough) {
  const std::string p = path("fifo");
  ASSERT_EQ(::mkfifo(p.c_str(), 0600), 0);
  std::string got;
  std::thread reader([&] { got = read(p); });  // opening blocks until the writer opens
  ASSERT_TRUE(check_output_path(p));
  ASSERT_TRUE(write_output_file(p, std::string_view("through the pipe")));
  reader.join();
  EXPECT_EQ(got, "through the pipe");
  struct stat st {};
  ASSERT_EQ(::lstat(p.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
}

TEST_F(OutputFile, ACharacterDeviceIsWrittenThrough) {
  const std::string p = path("null");
  if (::mknod(p.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0)  // a null device of our own
    GTEST_SKIP() << "cannot make a device node here: " << std::strerror(errno);
  ASSERT_TRUE(check_output_path(p));
  ASSERT_TRUE(write_output_file(p, std::string_view("discarded")));
  struct stat st {};
  ASSERT_EQ(::lstat(p.c_str(), &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  EXPECT_EQ(st.st_rdev, makedev(1, 3));
}

TEST_F(OutputFile, DirectoriesAndSocketsAreRefusedByName) {
  auto dir = write_output_file(dir_.string(), std::string_view("x"));
  ASSERT_FALSE(dir);
  EXPECT_EQ(dir.error().code, ErrorCode::io);
  EXPECT_NE(dir.error().message.find("a directory"), std::string::npos) << dir.error().message;

  const std::string sock = path("sock");
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  ASSERT_LT(sock.size(), sizeof addr.sun_path);
  std::memcpy(addr.sun_path, sock.c_str(), sock.size() + 1);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  for (const auto& r : {check_output_path(sock), write_output_file(sock, std::string_view("x"))}) {
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("a socket"), std::string::npos) << r.error().message;
    EXPECT_NE(r.error().message.find(sock), std::string::npos) << r.error().message;
  }
  ::close(fd);
  struct stat st {};
  ASSERT_EQ(::lstat(sock.c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));

  auto missing = check_output_path(path("no/such/dir/x.json"));
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("does not exist"), std::string::npos);
}

TEST_F(OutputFile, DashAndDevStdoutAreStandardOutput) {
  EXPECT_TRUE(writes_to_stdout("-"));
  EXPECT_TRUE(writes_to_stdout("/dev/stdout"));
  EXPECT_FALSE(writes_to_stdout("./-x"));
  // Standard output redirected to a pipe: the bytes arrive there.
  int pipefd[2];
  ASSERT_EQ(::pipe(pipefd), 0);
  std::fflush(stdout);
  const int saved = ::dup(STDOUT_FILENO);
  ASSERT_GE(::dup2(pipefd[1], STDOUT_FILENO), 0);
  auto ok = write_output_file("-", std::string_view("to stdout"));
  ::dup2(saved, STDOUT_FILENO);
  ::close(saved);
  ::close(pipefd[1]);
  ASSERT_TRUE(ok);
  char buf[64] = {};
  const ssize_t n = ::read(pipefd[0], buf, sizeof buf - 1);
  ::close(pipefd[0]);
  EXPECT_EQ(std::string(buf, n > 0 ? static_cast<size_t>(n) : 0), "to stdout");
}

}  // namespace
}  // namespace rig

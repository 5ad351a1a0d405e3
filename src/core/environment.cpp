#include "rig/environment.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <thread>

#include "rig/version.hpp"

namespace rig {
namespace {

std::string read_first_line(const std::string& path) {
  std::ifstream f(path);
  std::string line;
  std::getline(f, line);
  return line;
}

std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  return {};
}

std::optional<uint64_t> mem_total_bytes() {
  std::ifstream f("/proc/meminfo");
  std::string key;
  uint64_t kib = 0;
  while (f >> key >> kib) {
    if (key == "MemTotal:") return kib * 1024;
    f.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
  }
  return std::nullopt;
}

}  // namespace

Environment collect_environment() {
  Environment env;
  auto& f = env.facts;
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0) f["host"] = host;
  struct utsname u {};
  if (uname(&u) == 0) {
    f["kernel"] = std::string(u.sysname) + " " + u.release;
    f["machine"] = u.machine;
  }
  if (auto m = cpu_model(); !m.empty()) f["cpu_model"] = m;
  f["cpu_count"] = std::to_string(std::thread::hardware_concurrency());
  if (auto os = read_first_line("/etc/debian_version"); !os.empty()) f["debian_version"] = os;
#if defined(__clang__)
  f["compiler"] = "clang " __clang_version__;
#elif defined(__GNUC__)
  f["compiler"] = "gcc " __VERSION__;
#endif
#if defined(NDEBUG)
  f["build_type"] = "release";
#else
  f["build_type"] = "debug";  // the debug_build confound rule reads it
#endif
  f["git_revision"] = std::string(kGitRevision);
  if (auto mem = mem_total_bytes()) f["memory_bytes"] = std::to_string(*mem);
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  if (online > 0) f["cpu_online"] = std::to_string(online);
#if defined(__SANITIZE_ADDRESS__)
  env.warnings.push_back("built with AddressSanitizer: figures are not representative");
#endif
  if (auto load = read_first_line("/proc/loadavg"); !load.empty()) {
    f["load_average"] = load.substr(0, load.find(' ', load.find(' ', load.find(' ') + 1) + 1));
    std::istringstream in(load);
    double one_minute = 0;
    in >> one_minute;
    const unsigned cores = std::thread::hardware_concurrency();
    if (cores > 0 && one_minute > 0.5 * cores)
      env.warnings.push_back("host busy before the run: 1-minute load average " +
                             std::to_string(one_minute).substr(0, 4) + " on " +
                             std::to_string(cores) + " cores (contention skews figures)");
  }
  const auto governor = read_first_line("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
  // The cpu_governor confound rule reads it (absent: no cpufreq on this host).
  if (!governor.empty()) f["cpu_governor"] = governor;
  return env;
}

}  // namespace rig

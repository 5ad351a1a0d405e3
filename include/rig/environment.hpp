// The context that spoils numbers, recorded beside every result: host, CPU,
// kernel, build, compiler, load, frequency scaling. Collected once per run.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace rig {

struct Environment {
  std::map<std::string, std::string> facts;  // e.g. host, cpu_model, kernel, build_type
  std::vector<std::string> warnings;         // e.g. "debug build", "CPU scaling enabled"
};

// Reads /proc, /sys and uname; never fails (missing facts are left out).
Environment collect_environment();

}  // namespace rig

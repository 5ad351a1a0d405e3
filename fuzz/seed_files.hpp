// Writes a fuzz target's seed corpus (RIG_FUZZ_SEEDS=DIR): one file per seed,
// DIR/seed0, DIR/seed1, ...
#pragma once

#include <cstddef>
#include <fstream>
#include <string>
#include <vector>

namespace rig::fuzz {

inline void write_seed_files(const char* dir, const std::vector<std::vector<std::byte>>& seeds) {
  for (size_t i = 0; i < seeds.size(); ++i)
    std::ofstream(std::string(dir) + "/seed" + std::to_string(i), std::ios::binary)
        .write(reinterpret_cast<const char*>(seeds[i].data()),
               static_cast<std::streamsize>(seeds[i].size()));
}

}  // namespace rig::fuzz

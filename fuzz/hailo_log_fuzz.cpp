// libFuzzer target: the hailo device's reader of HailoRT's log
// (src/devices/hailo/hailo_log.hpp), bytes another program writes.
// RIG_FUZZ_SEEDS=DIR writes a seed corpus (records in HailoRT's patterns).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <string_view>

#include "devices/hailo/hailo_log.hpp"

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  const char* dir = std::getenv("RIG_FUZZ_SEEDS");
  if (!dir) return 0;
  std::ofstream(std::string(dir) + "/file.log")
      << "[2026-08-29 10:00:00.123] [77] [HailoRT] [warning] [usb.cpp:12] [check] USB-C source "
         "electrical current advertised: 1.5A.\nThe module may run in reduced-performance "
         "mode.\n";
  std::ofstream(std::string(dir) + "/console.log")
      << "[HailoRT] [error] CHECK failed - Failed to de-serialize 'RunAsyncForDuration'\n";
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto records = rig::hailo::parse_log(text);
  // Every record has a level; no message is longer than the input.
  for (const auto& r : records)
    if (r.level.empty() || r.message.size() > size) __builtin_trap();
  if (rig::hailo::warning_lines(records).size() > records.size()) __builtin_trap();
  return 0;
}

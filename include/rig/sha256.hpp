// SHA-256 (FIPS 180-4) of byte strings, for the record: a tensor's or an
// artifact's digest in rig run, rig check and rig compare. Not for security.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace rig {

// Incremental: update() any number of times, then hex() once.
class Sha256 {
 public:
  Sha256();
  void update(std::span<const std::byte> bytes);
  // The digest as 64 lowercase hex digits. Finalises: call once.
  std::string hex();

 private:
  void block(const uint8_t* p);

  std::array<uint32_t, 8> h_;
  std::array<uint8_t, 64> buffer_{};
  size_t buffered_ = 0;
  uint64_t length_ = 0;  // bytes
};

std::string sha256_hex(std::span<const std::byte> bytes);

}  // namespace rig

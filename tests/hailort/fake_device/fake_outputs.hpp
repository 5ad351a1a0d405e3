// The fake Hailo-10H device server's outputs: a deterministic function of a
// frame's input bytes, so that tests (which do not link the server) can
// compute what `rig run` must write and `rig check` must see. Header-only,
// no dependencies.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace rig::test::fake_hailo {

// FNV-1a over every input buffer of the frame, in the order the client sends
// them (the model's input order).
inline uint64_t frame_digest(const std::vector<std::span<const uint8_t>>& inputs) {
  uint64_t h = 1469598103934665603ull;
  for (const auto& in : inputs)
    for (uint8_t b : in) {
      h ^= b;
      h *= 1099511628211ull;
    }
  return h;
}

// Output `index` (model order), `size` bytes: byte i is the low byte of
// digest + 31 * i + 7 * index.
inline void fill_output(uint64_t digest, size_t index, std::span<uint8_t> out) {
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = static_cast<uint8_t>(digest + 31u * i + 7u * index);
}

}  // namespace rig::test::fake_hailo

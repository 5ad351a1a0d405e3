// Little-endian words and the checks on declared buffers that the frame
// codecs share: wire.cpp (headers, protobuf bodies, the parser) and
// compact_run.cpp (run_compact bodies). Internal to src/proto.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "proto/wire.hpp"

namespace rig::wire::detail {

inline uint32_t load_u32(const std::byte* p) {
  if constexpr (std::endian::native == std::endian::little) {
    uint32_t v;  // the wire's order: one load
    std::memcpy(&v, p, sizeof v);
    return v;
  }
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}

inline void store_u32(std::byte* p, uint32_t v) {
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(p, &v, sizeof v);
    return;
  }
  p[0] = static_cast<std::byte>(v & 0xff);
  p[1] = static_cast<std::byte>((v >> 8) & 0xff);
  p[2] = static_cast<std::byte>((v >> 16) & 0xff);
  p[3] = static_cast<std::byte>((v >> 24) & 0xff);
}

inline void store_u64(std::byte* p, uint64_t v) {
  store_u32(p, static_cast<uint32_t>(v));
  store_u32(p + 4, static_cast<uint32_t>(v >> 32));
}

inline uint64_t load_u64(const std::byte* p) {
  return load_u32(p) | static_cast<uint64_t>(load_u32(p + 4)) << 32;
}

inline std::string describe(const Header& h) {
  return "message " + std::to_string(h.message_id) + " (" + to_string(h.action) + ")";
}

inline uint64_t buffer_limit(Action action, const Limits& limits) {
  return action == Action::load_model ? limits.max_model_bytes : limits.max_buffer_bytes;
}
inline const char* buffer_limit_name(Action action) {
  return action == Action::load_model ? "max_model_bytes" : "max_buffer_bytes";
}

// check_buffers()' refusals, built out of line so that the check itself,
// run for every frame sent and received, stays a few compares.
[[gnu::cold, gnu::noinline]] inline Error too_many_buffers(const Header& h, size_t count,
                                                           const Limits& limits) {
  return {ErrorCode::limit_exceeded, describe(h) + " declares " + std::to_string(count) +
                                         " buffers; max_buffers is " +
                                         std::to_string(limits.max_buffers)};
}
[[gnu::cold, gnu::noinline]] inline Error buffer_too_large(const Header& h, size_t i, uint64_t size,
                                                           const Limits& limits) {
  return {ErrorCode::limit_exceeded, describe(h) + " buffer " + std::to_string(i) + " is " +
                                         std::to_string(size) + " bytes; " +
                                         buffer_limit_name(h.action) + " is " +
                                         std::to_string(buffer_limit(h.action, limits))};
}
[[gnu::cold, gnu::noinline]] inline Error frame_too_large(const Header& h, const Limits& limits) {
  return {ErrorCode::limit_exceeded,
          describe(h) + " declares more than " + std::to_string(limits.max_frame_bytes) +
              " buffer bytes; max_frame_bytes is " + std::to_string(limits.max_frame_bytes)};
}

// Checks declared buffer sizes against the limits; shared by sender and
// receiver. `Sizes` has size() and operator[] giving a buffer's byte count.
template <class Sizes>
Result<void> check_buffers(const Header& h, const Sizes& sizes, const Limits& limits) {
  if (sizes.size() > limits.max_buffers)
    return tl::unexpected(too_many_buffers(h, sizes.size(), limits));
  const uint64_t limit = buffer_limit(h.action, limits);
  uint64_t total = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] > limit) return tl::unexpected(buffer_too_large(h, i, sizes[i], limits));
    total += sizes[i];  // each <= 2^63 / max_buffers: cannot overflow
    if (total > limits.max_frame_bytes) return tl::unexpected(frame_too_large(h, limits));
  }
  return {};
}

// The sizes of the buffers a frame sends, for check_buffers().
struct BufferSizes {
  const std::vector<std::span<const std::byte>>& buffers;
  size_t size() const { return buffers.size(); }
  uint64_t operator[](size_t i) const { return buffers[i].size(); }
};

}  // namespace rig::wire::detail

// Seeded streams. The seeded generators of measurements (the open loop's
// Poisson schedule, the sim's jitter) start from stream_seed(seed, stream): splitmix64 of the
// user's seed mixed with a stream id, so that two different seeds never share a sample path (the
// state of seed S + 1 is not that of seed S one draw on) and two streams of one seed are
// independent. docs/methodology.md
// ("Seeds") lists the streams.
#pragma once

#include <cstdint>

namespace rig {

// splitmix64's finaliser (Steele, Lea and Flood, 2014): a bijection of
// 64-bit words that mixes every input bit into every output bit.
constexpr uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// The next value of a splitmix64 sequence whose state is `state`.
constexpr uint64_t splitmix64_next(uint64_t& state) {
  return mix64(state += 0x9E3779B97F4A7C15ull);
}

// The streams rig draws from (the ids are part of the documented mapping).
enum class Stream : uint64_t {
  arrivals = 1,    // the open loop's Poisson gaps
  sim_jitter = 2,  // the sim's compute-time jitter
};

// The first state of stream `stream` of seed `seed`.
constexpr uint64_t stream_seed(uint64_t seed, Stream stream, uint64_t index = 0) {
  return mix64(mix64(seed) ^ mix64(static_cast<uint64_t>(stream) * 0xD1B54A32D192ED03ull + index));
}

// A uniform double in (0, 1] from the sequence (53 bits).
inline double unit_open_closed(uint64_t& state) {
  return (static_cast<double>(splitmix64_next(state) >> 11) + 1) / 9007199254740992.0;
}

// A uniform double in [0, 1) from the sequence (53 bits).
inline double unit_closed_open(uint64_t& state) {
  return static_cast<double>(splitmix64_next(state) >> 11) / 9007199254740992.0;
}

}  // namespace rig

#include "rig/input_data.hpp"

#include <cstring>

namespace rig {
namespace {

uint64_t splitmix(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// One element type's loop: the switch stays outside the per-element work.
template <class T, class Make>
void fill_as(std::span<std::byte> out, Make make) {
  const size_t n = out.size() / sizeof(T);
  for (size_t i = 0; i < n; ++i) {
    const T v = make();
    std::memcpy(out.data() + i * sizeof(T), &v, sizeof(T));
  }
}

}  // namespace

void fill_generated(std::span<std::byte> out, ElementType type, uint64_t seed) {
  uint64_t state = seed * 0x2545F4914F6CDD1Dull + 0x1234567ull;
  const auto unit = [&] { return static_cast<double>(splitmix(state) >> 11) / 9007199254740992.0; };
  const auto low = [&](uint64_t mask) { return splitmix(state) & mask; };
  switch (type) {
    case ElementType::f32:
      return fill_as<float>(out, [&] { return static_cast<float>(unit()); });
    case ElementType::f64:
      return fill_as<double>(out, unit);
    case ElementType::f16:
      return fill_as<uint16_t>(out,
                               [&] { return static_cast<uint16_t>((14u << 10) | low(0x3ff)); });
    case ElementType::u16:
      return fill_as<uint16_t>(out, [&] { return static_cast<uint16_t>(low(0xff)); });
    case ElementType::i16:
      return fill_as<int16_t>(out, [&] { return static_cast<int16_t>(low(0xff)); });
    case ElementType::i32:
      return fill_as<int32_t>(out, [&] { return static_cast<int32_t>(low(0xff)); });
    case ElementType::i64:
      return fill_as<int64_t>(out, [&] { return static_cast<int64_t>(low(0xff)); });
    case ElementType::boolean:
      return fill_as<uint8_t>(out, [&] { return static_cast<uint8_t>(low(1)); });
    case ElementType::u8:
    case ElementType::i8:
      return fill_as<uint8_t>(out, [&] { return static_cast<uint8_t>(low(0xff)); });
  }
}

std::vector<std::byte> generated_input(const TensorInfo& tensor, uint64_t seed) {
  std::vector<std::byte> out(tensor.bytes);
  fill_generated(out, tensor.type, seed);
  return out;
}

uint64_t slot_input_seed(uint64_t seed, uint64_t slot, uint64_t input) {
  if (slot == 0) return seed + input;
  // Other slots: far from seed + small offsets (another run's slot 0).
  uint64_t s = seed ^ (slot * 0xD1B54A32D192ED03ull);
  return splitmix(s) + input;
}

}  // namespace rig

#include "rig/device.hpp"

namespace rig {

std::string_view to_string(ElementType t) {
  switch (t) {
    case ElementType::f32:
      return "float32";
    case ElementType::f16:
      return "float16";
    case ElementType::f64:
      return "float64";
    case ElementType::u8:
      return "uint8";
    case ElementType::i8:
      return "int8";
    case ElementType::u16:
      return "uint16";
    case ElementType::i16:
      return "int16";
    case ElementType::i32:
      return "int32";
    case ElementType::i64:
      return "int64";
    case ElementType::boolean:
      return "bool";
  }
  return "unknown";
}

size_t element_size(ElementType t) {
  switch (t) {
    case ElementType::f64:
    case ElementType::i64:
      return 8;
    case ElementType::f32:
    case ElementType::i32:
      return 4;
    case ElementType::f16:
    case ElementType::u16:
    case ElementType::i16:
      return 2;
    case ElementType::u8:
    case ElementType::i8:
    case ElementType::boolean:
      return 1;
  }
  return 1;
}

size_t ModelInfo::input_bytes() const {
  size_t n = 0;
  for (const auto& t : inputs) n += t.bytes;
  return n;
}

size_t ModelInfo::output_bytes() const {
  size_t n = 0;
  for (const auto& t : outputs) n += t.bytes;
  return n;
}

}  // namespace rig

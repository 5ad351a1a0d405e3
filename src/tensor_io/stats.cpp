// Figures of tensors: element values, statistics, digests and comparisons.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "rig/sha256.hpp"
#include "rig/tensor_io.hpp"

namespace rig {
namespace {

template <class T>
T load(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

double half_to_double(uint16_t h) {
  const int exponent = (h >> 10) & 0x1f;
  const int mantissa = h & 0x3ff;
  const double sign = (h & 0x8000) ? -1.0 : 1.0;
  if (exponent == 0) return sign * std::ldexp(mantissa, -24);
  if (exponent == 31)
    return mantissa ? std::numeric_limits<double>::quiet_NaN()
                    : sign * std::numeric_limits<double>::infinity();
  return sign * std::ldexp(mantissa + 1024, exponent - 25);
}

}  // namespace

double element_value(ElementType type, const std::byte* p) {
  switch (type) {
    case ElementType::f32:
      return load<float>(p);
    case ElementType::f16:
      return half_to_double(load<uint16_t>(p));
    case ElementType::f64:
      return load<double>(p);
    case ElementType::u8:
      return load<uint8_t>(p);
    case ElementType::i8:
      return load<int8_t>(p);
    case ElementType::u16:
      return load<uint16_t>(p);
    case ElementType::i16:
      return load<int16_t>(p);
    case ElementType::i32:
      return load<int32_t>(p);
    case ElementType::i64:
      return static_cast<double>(load<int64_t>(p));
    case ElementType::boolean:
      return load<uint8_t>(p) != 0 ? 1.0 : 0.0;
  }
  return 0;
}

TensorStats tensor_stats(ElementType type, std::span<const std::byte> data) {
  TensorStats s;
  const size_t item = element_size(type);
  s.elements = data.size() / item;
  double sum = 0, lo = 0, hi = 0;
  uint64_t finite = 0;
  for (size_t i = 0; i < s.elements; ++i) {
    const double v = element_value(type, data.data() + i * item);
    if (!std::isfinite(v)) {
      ++s.nonfinite;
      continue;
    }
    lo = finite == 0 ? v : std::min(lo, v);
    hi = finite == 0 ? v : std::max(hi, v);
    sum += v;
    ++finite;
  }
  if (finite > 0) {
    s.mean = sum / static_cast<double>(finite);
    s.min = lo;
    s.max = hi;
  }
  s.sha256 = sha256_hex(data);
  return s;
}

uint64_t bytes_differing(std::span<const std::byte> a, std::span<const std::byte> b) {
  const size_t n = std::min(a.size(), b.size());
  uint64_t count = 0;
  for (size_t i = 0; i < n; ++i) count += a[i] != b[i];
  return count;
}

Result<TensorComparison> compare_tensors(ElementType type, std::span<const std::byte> actual,
                                         std::span<const std::byte> reference, double atol,
                                         double rtol) {
  if (actual.size() != reference.size())
    return fail(ErrorCode::invalid_argument, "the output has " + std::to_string(actual.size()) +
                                                 " bytes, the reference " +
                                                 std::to_string(reference.size()));
  TensorComparison c;
  const size_t item = element_size(type);
  c.elements = actual.size() / item;
  c.bytes_differing = bytes_differing(actual, reference);
  double diff2 = 0, ref2 = 0, act2 = 0, dot = 0;
  for (size_t i = 0; i < c.elements; ++i) {
    const double a = element_value(type, actual.data() + i * item);
    const double r = element_value(type, reference.data() + i * item);
    if (std::isnan(a) || std::isnan(r)) {
      if (!(std::isnan(a) && std::isnan(r))) ++c.outside;
      continue;
    }
    if (std::isinf(a) || std::isinf(r)) {
      if (a != r) ++c.outside;
      continue;
    }
    const double err = std::fabs(a - r);
    c.max_abs_error = std::max(c.max_abs_error, err);
    if (r != 0) c.max_rel_error = std::max(c.max_rel_error, err / std::fabs(r));
    if (err > atol + rtol * std::fabs(r)) ++c.outside;
    diff2 += err * err;
    ref2 += r * r;
    act2 += a * a;
    dot += a * r;
  }
  if (ref2 > 0) c.l2_rel_error = std::sqrt(diff2) / std::sqrt(ref2);
  if (ref2 > 0 && act2 > 0) c.cosine = dot / (std::sqrt(act2) * std::sqrt(ref2));
  return c;
}

}  // namespace rig

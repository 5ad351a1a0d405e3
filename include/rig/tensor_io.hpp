// Tensors as bytes on disk and as figures: the NumPy .npy format (read and
// written), per-tensor statistics and digests, and the comparison of an
// output with a reference output. The .npy reader parses untrusted bytes:
// every size is checked before use, and errors name what is wrong.
//
// The .npy format (numpy.lib.format, versions 1.0, 2.0 and 3.0):
//   magic "\x93NUMPY", major, minor (one byte each),
//   header length: u16 little-endian (1.0) or u32 little-endian (2.0, 3.0),
//   header: a Python dict literal {'descr': '<f4', 'fortran_order': False,
//   'shape': (1, 3, 224, 224), } padded with spaces and ending in '\n' so
//   that the data starts at a multiple of 64 bytes (numpy writes 64; the
//   reader accepts any padding),
//   data: product(shape) elements of descr, C order, nothing after them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "rig/device.hpp"
#include "rig/error.hpp"

namespace rig {

// Limits of the reader, checked before anything is allocated.
inline constexpr size_t kNpyMaxHeaderBytes = 65536;
inline constexpr size_t kNpyMaxRank = 32;

// A parsed .npy file; `data` views the bytes given to parse_npy.
struct NpyView {
  ElementType type = ElementType::f32;
  std::vector<int64_t> shape;  // () for a scalar
  std::span<const std::byte> data;
  std::string descr;  // as written in the file, e.g. "<f4"
};

// Parses .npy bytes. Fails with invalid_argument naming the problem: a bad
// magic, a version other than 1.0/2.0/3.0, a header that is not the dict
// above, big-endian or unsupported dtypes (only the element types of
// rig/device.hpp are read), Fortran order, or a data size that is not
// product(shape) x itemsize.
Result<NpyView> parse_npy(std::span<const std::byte> bytes);

// Serializes a C-order array as .npy version 1.0 (2.0 when the header needs
// it). `data` must hold product(shape) elements of `type`.
std::vector<std::byte> encode_npy(ElementType type, std::span<const int64_t> shape,
                                  std::span<const std::byte> data);

// The little-endian .npy descr of an element type: "<f4", "|u1", "|b1", ...
std::string npy_descr(ElementType type);

// "[1, 3, 224, 224]" — how shapes appear in messages.
std::string shape_text(std::span<const int64_t> shape);

// One element as a double (float16 converted exactly). `p` points at it.
double element_value(ElementType type, const std::byte* p);

// Figures of one tensor's bytes. Non-finite values are counted and left out
// of mean/min/max; with no finite value those are nullopt.
struct TensorStats {
  uint64_t elements = 0;
  uint64_t nonfinite = 0;
  std::optional<double> mean, min, max;
  std::string sha256;  // of the raw bytes
};

TensorStats tensor_stats(ElementType type, std::span<const std::byte> data);

// An output against a reference of the same type and size, numpy.allclose's
// rule per element: |a - r| <= atol + rtol * |r|; NaN matches only NaN.
struct TensorComparison {
  uint64_t elements = 0;
  uint64_t outside = 0;  // elements breaking the rule
  double max_abs_error = 0;
  double max_rel_error = 0;            // max |a - r| / |r| over elements with r != 0
  std::optional<double> l2_rel_error;  // ||a - r|| / ||r||; nullopt when ||r|| = 0
  std::optional<double> cosine;        // a.r / (||a|| ||r||); nullopt when either is 0
  uint64_t bytes_differing = 0;        // bitwise
};

// Fails with invalid_argument when the sizes differ.
Result<TensorComparison> compare_tensors(ElementType type, std::span<const std::byte> actual,
                                         std::span<const std::byte> reference, double atol,
                                         double rtol);

// Count of positions where two byte strings differ (the shorter's length).
uint64_t bytes_differing(std::span<const std::byte> a, std::span<const std::byte> b);

}  // namespace rig

// The .npy reader against bytes as numpy writes them and against broken
// files (each error names its problem); the writer round-trips; figures,
// comparisons and sha256 against known values.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "rig/sha256.hpp"
#include "rig/tensor_io.hpp"

namespace rig {
namespace {

std::vector<std::byte> bytes_of(const std::string& s) {
  std::vector<std::byte> out(s.size());
  if (!s.empty()) std::memcpy(out.data(), s.data(), s.size());
  return out;
}

// A version 1.0 file with `header` padded as numpy pads it, then `data`.
std::vector<std::byte> npy_file(const std::string& header, const std::string& data, int major = 1) {
  std::string h = header;
  const size_t prefix = major == 1 ? 10 : 12;
  while ((prefix + h.size() + 1) % 64 != 0) h += ' ';
  h += '\n';
  std::string file = "\x93NUMPY";
  file += static_cast<char>(major);
  file += '\0';
  const size_t n = h.size();
  file += static_cast<char>(n & 0xff);
  file += static_cast<char>((n >> 8) & 0xff);
  if (major != 1) file += std::string(2, '\0');
  return bytes_of(file + h + data);
}

std::string floats(std::initializer_list<float> values) {
  std::string out;
  for (float v : values) out.append(reinterpret_cast<const char*>(&v), sizeof v);
  return out;
}

void expect_error(const Result<NpyView>& r, const std::string& needle) {
  ASSERT_FALSE(r.has_value()) << "expected an error containing: " << needle;
  EXPECT_EQ(r.error().code, ErrorCode::invalid_argument);
  EXPECT_NE(r.error().message.find(needle), std::string::npos) << r.error().message;
}

TEST(Npy, ReadsWhatNumpyWrites) {
  // numpy.save(f, numpy.arange(6, dtype=numpy.float32).reshape(2, 3))
  auto file = npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
                       floats({0, 1, 2, 3, 4, 5}));
  ASSERT_EQ(file.size() % 64, 24u);  // header to 64, then 24 data bytes
  auto v = parse_npy(file);
  ASSERT_TRUE(v) << v.error().to_string();
  EXPECT_EQ(v->type, ElementType::f32);
  EXPECT_EQ(v->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(v->data.size(), 24u);
  EXPECT_EQ(element_value(v->type, v->data.data() + 4 * 5), 5.0);
  EXPECT_EQ(v->descr, "<f4");

  auto scalar =
      parse_npy(npy_file("{'descr': '|u1', 'fortran_order': False, 'shape': (), }", "\x07"));
  ASSERT_TRUE(scalar) << scalar.error().to_string();
  EXPECT_TRUE(scalar->shape.empty());
  auto vec = parse_npy(npy_file("{\"shape\": (3,), \"fortran_order\": False, \"descr\": \"|b1\"}",
                                std::string("\x01\x00\x01", 3)));
  ASSERT_TRUE(vec) << vec.error().to_string();
  EXPECT_EQ(vec->type, ElementType::boolean);
  auto v2 = parse_npy(npy_file("{'descr': '<i8', 'fortran_order': False, 'shape': (1,), }",
                               std::string(8, '\0'), 2));
  ASSERT_TRUE(v2) << v2.error().to_string();
  EXPECT_EQ(v2->type, ElementType::i64);
}

TEST(Npy, RoundTripsEveryElementType) {
  for (ElementType t : {ElementType::f32, ElementType::f16, ElementType::f64, ElementType::u8,
                        ElementType::i8, ElementType::u16, ElementType::i16, ElementType::i32,
                        ElementType::i64, ElementType::boolean}) {
    const std::vector<int64_t> shape = {1, 3, 5};
    std::vector<std::byte> data(15 * element_size(t));
    for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::byte>(i % 2);
    const auto file = encode_npy(t, shape, data);
    EXPECT_EQ((file.size() - data.size()) % 64, 0u);
    auto v = parse_npy(file);
    ASSERT_TRUE(v) << to_string(t) << ": " << v.error().to_string();
    EXPECT_EQ(v->type, t);
    EXPECT_EQ(v->shape, shape);
    EXPECT_TRUE(std::equal(v->data.begin(), v->data.end(), data.begin(), data.end()));
  }
}

TEST(Npy, RefusesBrokenFilesByName) {
  const std::string ok_header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  const std::string data = floats({1, 2});
  expect_error(parse_npy(bytes_of("PK\x03\x04 not numpy")), "magic");
  expect_error(parse_npy(bytes_of("")), "magic");
  auto v9 = npy_file(ok_header, data);
  v9[6] = std::byte{9};
  expect_error(parse_npy(v9), "format version 9.0");
  expect_error(
      parse_npy(npy_file("{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", data)),
      "Fortran order");
  expect_error(
      parse_npy(npy_file("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", data)),
      "big-endian");
  expect_error(
      parse_npy(npy_file("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", data)),
      "dtype '<c8' is not one rig reads");
  expect_error(parse_npy(npy_file(
                   "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }", data)),
               "structured");
  expect_error(parse_npy(npy_file(ok_header, data + "x")), "needs 8 data bytes, the file has 9");
  expect_error(parse_npy(npy_file(ok_header, data.substr(0, 7))), "the file has 7");
  expect_error(parse_npy(npy_file("{'descr': '<f4', 'shape': (2,), }", data)),
               "lacks 'fortran_order'");
  expect_error(
      parse_npy(npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", data)),
      "unknown key 'x'");
  expect_error(
      parse_npy(npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }", data)),
      "non-negative integer");
  expect_error(parse_npy(npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, "
                                  "4294967296, 4294967296), }",
                                  data)),
               "overflows");
  auto truncated = npy_file(ok_header, data);
  truncated.resize(20);
  expect_error(parse_npy(truncated), "ends inside the header");
  // A header length over the limit is refused before anything is read.
  auto huge = npy_file(ok_header, data, 2);
  huge[8] = std::byte{0};
  huge[9] = std::byte{0};
  huge[10] = std::byte{0x10};  // 1 MiB
  huge[11] = std::byte{0};
  expect_error(parse_npy(huge), "over the limit of 65536");
}

TEST(TensorFigures, StatsCountNonFiniteAndHashTheBytes) {
  const std::string data = floats({1, -3, NAN, 6, INFINITY});
  const auto bytes = bytes_of(data);
  const TensorStats s = tensor_stats(ElementType::f32, bytes);
  EXPECT_EQ(s.elements, 5u);
  EXPECT_EQ(s.nonfinite, 2u);
  EXPECT_DOUBLE_EQ(*s.mean, 4.0 / 3.0);
  EXPECT_EQ(*s.min, -3);
  EXPECT_EQ(*s.max, 6);
  EXPECT_EQ(s.sha256, sha256_hex(bytes));
  const TensorStats none = tensor_stats(ElementType::f32, {});
  EXPECT_FALSE(none.mean);
  // float16: 1.0 = 0x3c00, -2.0 = 0xc000, the smallest subnormal 0x0001.
  const uint16_t halves[] = {0x3c00, 0xc000, 0x0001};
  EXPECT_EQ(element_value(ElementType::f16, reinterpret_cast<const std::byte*>(&halves[0])), 1.0);
  EXPECT_EQ(element_value(ElementType::f16, reinterpret_cast<const std::byte*>(&halves[1])), -2.0);
  EXPECT_EQ(element_value(ElementType::f16, reinterpret_cast<const std::byte*>(&halves[2])),
            std::ldexp(1.0, -24));
}

TEST(TensorFigures, ComparisonFollowsAllclose) {
  const auto ref = bytes_of(floats({1, 2, 0, -4}));
  const auto same = compare_tensors(ElementType::f32, ref, ref, 0, 0);
  ASSERT_TRUE(same);
  EXPECT_EQ(same->outside, 0u);
  EXPECT_EQ(same->max_abs_error, 0);
  EXPECT_DOUBLE_EQ(*same->cosine, 1.0);
  EXPECT_EQ(*same->l2_rel_error, 0);
  const auto off = bytes_of(floats({1.5f, 2, 0.001f, -4}));
  const auto c = compare_tensors(ElementType::f32, off, ref, 0.01, 0.1);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->outside, 1u);  // 0.5 > 0.01 + 0.1 * 1; 0.001 <= 0.01
  EXPECT_NEAR(c->max_abs_error, 0.5, 1e-9);
  EXPECT_NEAR(c->max_rel_error, 0.5, 1e-9);
  EXPECT_NEAR(*c->l2_rel_error, std::sqrt(0.25 + 1e-6) / std::sqrt(21.0), 1e-6);
  EXPECT_EQ(c->bytes_differing > 0, true);
  EXPECT_FALSE(compare_tensors(ElementType::f32, off, bytes_of(floats({1})), 0, 0));
  const auto nan =
      compare_tensors(ElementType::f32, bytes_of(floats({NAN})), bytes_of(floats({NAN})), 0, 0);
  EXPECT_EQ(nan->outside, 0u);
}

TEST(Sha256, KnownDigests) {
  EXPECT_EQ(sha256_hex({}), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex(bytes_of("abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex(bytes_of("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  // Fed in pieces of every size up to 130, the digest is the same.
  std::string text(1000, 'a');
  for (size_t i = 0; i < text.size(); ++i) text[i] = static_cast<char>('a' + i % 26);
  const std::string whole = sha256_hex(bytes_of(text));
  for (size_t piece = 1; piece <= 130; ++piece) {
    Sha256 h;
    const auto b = bytes_of(text);
    for (size_t at = 0; at < b.size(); at += piece)
      h.update(std::span(b).subspan(at, std::min(piece, b.size() - at)));
    ASSERT_EQ(h.hex(), whole) << "pieces of " << piece;
  }
}

}  // namespace
}  // namespace rig

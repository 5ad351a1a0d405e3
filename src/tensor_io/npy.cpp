// The .npy reader and writer (the format is described in rig/tensor_io.hpp).
#include <cctype>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <utility>

#include "rig/tensor_io.hpp"

namespace rig {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;

tl::unexpected<Error> bad(const std::string& why) {
  return fail(ErrorCode::invalid_argument, "not a readable .npy file: " + why);
}

struct DescrEntry {
  const char* code;  // without the byte-order character
  ElementType type;
};
constexpr DescrEntry kDescrs[] = {{"f4", ElementType::f32}, {"f2", ElementType::f16},
                                  {"f8", ElementType::f64}, {"u1", ElementType::u8},
                                  {"i1", ElementType::i8},  {"u2", ElementType::u16},
                                  {"i2", ElementType::i16}, {"i4", ElementType::i32},
                                  {"i8", ElementType::i64}, {"b1", ElementType::boolean}};

// The header dict: a tiny reader of the Python literals numpy writes.
class HeaderReader {
 public:
  explicit HeaderReader(std::string_view text) : text_(text) {}

  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool eat(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool at_end() {
    skip_space();
    return pos_ == text_.size();
  }
  std::optional<std::string> string() {
    skip_space();
    if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"')) return std::nullopt;
    const char quote = text_[pos_++];
    const size_t end = text_.find(quote, pos_);
    if (end == std::string_view::npos) return std::nullopt;
    std::string out(text_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return out;
  }
  std::optional<bool> boolean() {
    skip_space();
    for (auto [word, value] : {std::pair{"True", true}, std::pair{"False", false}}) {
      const size_t n = std::strlen(word);
      if (text_.substr(pos_, n) == word) {
        pos_ += n;
        return value;
      }
    }
    return std::nullopt;
  }
  std::optional<int64_t> integer() {
    skip_space();
    const size_t start = pos_;
    int64_t v = 0;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      const int digit = text_[pos_] - '0';
      if (v > (std::numeric_limits<int64_t>::max() - digit) / 10) return std::nullopt;
      v = v * 10 + digit;
      ++pos_;
    }
    // numpy writes Python ints; "3L" from Python 2 writers is accepted too.
    if (pos_ > start && pos_ < text_.size() && text_[pos_] == 'L') ++pos_;
    if (pos_ == start) return std::nullopt;
    return v;
  }
  // (), (3,), (1, 2, 3)
  Result<std::vector<int64_t>> tuple() {
    if (!eat('(')) return bad("'shape' is not a tuple");
    std::vector<int64_t> dims;
    if (eat(')')) return dims;
    while (true) {
      auto d = integer();
      if (!d) return bad("'shape' holds something other than a non-negative integer");
      if (dims.size() == kNpyMaxRank)
        return bad("'shape' has more than " + std::to_string(kNpyMaxRank) + " dimensions");
      dims.push_back(*d);
      if (eat(')')) return dims;
      if (!eat(',')) return bad("'shape' is not a tuple of integers");
      if (eat(')')) return dims;
    }
  }

 private:
  std::string_view text_;
  size_t pos_ = 0;
};

uint32_t read_le(const uint8_t* p, size_t n) {
  uint32_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= uint32_t{p[i]} << (8 * i);
  return v;
}

}  // namespace

std::string npy_descr(ElementType type) {
  for (const auto& d : kDescrs)
    if (d.type == type) return std::string(element_size(type) == 1 ? "|" : "<") + d.code;
  return "|u1";
}

std::string shape_text(std::span<const int64_t> shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

Result<NpyView> parse_npy(std::span<const std::byte> bytes) {
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
  if (bytes.size() < kMagicSize + 2 || std::memcmp(p, kMagic, kMagicSize) != 0)
    return bad("it does not start with the magic \\x93NUMPY");
  const int major = p[6], minor = p[7];
  if (minor != 0 || major < 1 || major > 3)
    return bad("format version " + std::to_string(major) + "." + std::to_string(minor) +
               " (this reader reads 1.0, 2.0 and 3.0)");
  const size_t length_size = major == 1 ? 2 : 4;
  const size_t prefix = kMagicSize + 2 + length_size;
  if (bytes.size() < prefix) return bad("it ends inside the header length");
  const size_t header_size = read_le(p + kMagicSize + 2, length_size);
  if (header_size > kNpyMaxHeaderBytes)
    return bad("its header is " + std::to_string(header_size) + " bytes, over the limit of " +
               std::to_string(kNpyMaxHeaderBytes));
  if (bytes.size() - prefix < header_size)
    return bad("it ends inside the header (" + std::to_string(header_size) + " bytes declared, " +
               std::to_string(bytes.size() - prefix) + " present)");
  const std::string_view header(reinterpret_cast<const char*>(p + prefix), header_size);

  HeaderReader in(header);
  std::optional<std::string> descr;
  std::optional<bool> fortran;
  std::optional<std::vector<int64_t>> shape;
  if (!in.eat('{')) return bad("its header is not a dict");
  while (!in.eat('}')) {
    auto key = in.string();
    if (!key) return bad("its header dict has a key that is not a string");
    if (!in.eat(':')) return bad("its header dict lacks ':' after '" + *key + "'");
    if (*key == "descr") {
      descr = in.string();
      if (!descr) return bad("'descr' is not a string (structured dtypes are not read)");
    } else if (*key == "fortran_order") {
      fortran = in.boolean();
      if (!fortran) return bad("'fortran_order' is not True or False");
    } else if (*key == "shape") {
      auto dims = in.tuple();
      if (!dims) return tl::unexpected(dims.error());
      shape = std::move(*dims);
    } else {
      return bad("its header has the unknown key '" + *key + "'");
    }
    if (!in.eat(',')) {
      if (!in.eat('}')) return bad("its header dict is not closed");
      break;
    }
  }
  if (!in.at_end()) return bad("its header has text after the dict");
  if (!descr || !fortran || !shape)
    return bad(std::string("its header lacks '") +
               (!descr     ? "descr"
                : !fortran ? "fortran_order"
                           : "shape") +
               "'");
  if (*fortran)
    return bad("it is in Fortran order; rig reads C-order arrays (numpy.ascontiguousarray)");

  NpyView view;
  view.descr = *descr;
  const std::string& d = *descr;
  bool known = false;
  if (d.size() == 3 && (d[0] == '<' || d[0] == '|' || d[0] == '=' || d[0] == '>')) {
    for (const auto& e : kDescrs) {
      if (d.compare(1, 2, e.code) != 0) continue;
      if (d[0] == '>' && element_size(e.type) > 1)
        return bad("dtype '" + d + "' is big-endian; rig reads little-endian arrays");
      view.type = e.type;
      known = true;
    }
  }
  if (!known)
    return bad("dtype '" + d +
               "' is not one rig reads (float16/32/64, int8/16/32/64, uint8/16, bool)");

  uint64_t elements = 1;
  for (int64_t dim : *shape) {
    if (dim != 0 && elements > std::numeric_limits<uint64_t>::max() / static_cast<uint64_t>(dim))
      return bad("its shape " + shape_text(*shape) + " overflows");
    elements *= static_cast<uint64_t>(dim);
  }
  const size_t item = element_size(view.type);
  if (elements > std::numeric_limits<uint64_t>::max() / item)
    return bad("its shape " + shape_text(*shape) + " overflows");
  const uint64_t data_size = elements * item;
  const size_t data_start = prefix + header_size;
  const size_t present = bytes.size() - data_start;
  if (data_size != present)
    return bad("shape " + shape_text(*shape) + " of " + to_string(view.type).data() + " needs " +
               std::to_string(data_size) + " data bytes, the file has " + std::to_string(present));
  view.shape = std::move(*shape);
  view.data = bytes.subspan(data_start);
  return view;
}

std::vector<std::byte> encode_npy(ElementType type, std::span<const int64_t> shape,
                                  std::span<const std::byte> data) {
  std::string dims = "(";
  for (size_t i = 0; i < shape.size(); ++i) dims += (i ? ", " : "") + std::to_string(shape[i]);
  if (shape.size() == 1) dims += ",";
  dims += ")";
  std::string header =
      "{'descr': '" + npy_descr(type) + "', 'fortran_order': False, 'shape': " + dims + ", }";
  const bool v2 = header.size() + 1 + kMagicSize + 4 > 65535;
  const size_t prefix = kMagicSize + 2 + (v2 ? 4 : 2);
  const size_t total = ((prefix + header.size() + 1 + 63) / 64) * 64;
  header.append(total - prefix - header.size() - 1, ' ');
  header += '\n';
  std::vector<std::byte> out;
  out.reserve(total + data.size());
  auto put = [&](uint8_t b) { out.push_back(static_cast<std::byte>(b)); };
  for (size_t i = 0; i < kMagicSize; ++i) put(static_cast<uint8_t>(kMagic[i]));
  put(v2 ? 2 : 1);
  put(0);
  const size_t n = header.size();
  for (size_t i = 0; i < (v2 ? 4u : 2u); ++i) put(static_cast<uint8_t>(n >> (8 * i)));
  for (char c : header) put(static_cast<uint8_t>(c));
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

}  // namespace rig

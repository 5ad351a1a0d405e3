// read_graph_weights: the protobuf wire format of an ONNX model walked by
// hand (the field numbers are in rig/model_graph.hpp), so tensor data is
// skipped by seeking rather than read, and no message is held whole.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>
#include <set>
#include <system_error>

#include "rig/model_graph.hpp"

namespace rig {
namespace {

// Where the bytes come from: a file read at offsets, or memory.
class Source {
 public:
  virtual ~Source() = default;
  virtual uint64_t size() const = 0;
  // Reads up to `n` bytes at `offset` into `out`; returns how many (0 at the end).
  virtual Result<size_t> read_at(uint64_t offset, std::byte* out, size_t n) = 0;
};

class MemorySource final : public Source {
 public:
  explicit MemorySource(std::span<const std::byte> bytes) : bytes_(bytes) {}
  uint64_t size() const override { return bytes_.size(); }
  Result<size_t> read_at(uint64_t offset, std::byte* out, size_t n) override {
    if (offset >= bytes_.size()) return size_t{0};
    n = std::min<uint64_t>(n, bytes_.size() - offset);
    std::memcpy(out, bytes_.data() + offset, n);
    return n;
  }

 private:
  std::span<const std::byte> bytes_;
};

class FileSource final : public Source {
 public:
  FileSource(int fd, uint64_t size, std::string path) : fd_(fd), size_(size), path_(path) {}
  ~FileSource() override { ::close(fd_); }
  FileSource(const FileSource&) = delete;
  FileSource& operator=(const FileSource&) = delete;
  uint64_t size() const override { return size_; }
  Result<size_t> read_at(uint64_t offset, std::byte* out, size_t n) override {
    while (true) {
      const ssize_t got = ::pread(fd_, out, n, static_cast<off_t>(offset));
      if (got >= 0) return static_cast<size_t>(got);
      if (errno != EINTR)
        return fail(ErrorCode::io,
                    "cannot read " + path_ + ": " + std::generic_category().message(errno));
    }
  }

 private:
  int fd_;
  uint64_t size_;
  std::string path_;
};

// A buffered cursor over a Source. Every read is bounded by `end`, the end of
// the message being walked; reading past it is a truncation error.
class Cursor {
 public:
  explicit Cursor(Source& source) : source_(source) {}

  uint64_t pos() const { return pos_; }
  void seek(uint64_t pos) { pos_ = pos; }

  Result<uint8_t> byte(uint64_t end) {
    if (pos_ >= end) return truncated();
    if (pos_ < buf_start_ || pos_ >= buf_start_ + buf_len_) {
      buf_start_ = pos_;
      auto n = source_.read_at(pos_, buf_, sizeof buf_);
      if (!n) return tl::unexpected(n.error());
      buf_len_ = *n;
      if (buf_len_ == 0) return truncated();
    }
    return static_cast<uint8_t>(buf_[pos_++ - buf_start_]);
  }

  Result<uint64_t> varint(uint64_t end) {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      auto b = byte(end);
      if (!b) return tl::unexpected(b.error());
      v |= static_cast<uint64_t>(*b & 0x7f) << shift;
      if ((*b & 0x80) == 0) return v;
    }
    return malformed("a varint longer than 10 bytes");
  }

  Result<std::string> string(uint64_t length, uint64_t end, size_t limit) {
    if (length > end - pos_) return truncated();
    if (length > limit) return malformed("a name of " + std::to_string(length) + " bytes");
    std::string s;
    s.reserve(length);
    for (uint64_t i = 0; i < length; ++i) {
      auto b = byte(end);
      if (!b) return tl::unexpected(b.error());
      s.push_back(static_cast<char>(*b));
    }
    return s;
  }

  tl::unexpected<Error> truncated() const {
    return fail(ErrorCode::invalid_argument, "the model ends inside a field at byte " +
                                                 std::to_string(pos_) +
                                                 " (truncated or not an ONNX model)");
  }
  tl::unexpected<Error> malformed(const std::string& what) const {
    return fail(ErrorCode::invalid_argument,
                "not an ONNX model: " + what + " at byte " + std::to_string(pos_));
  }

 private:
  Source& source_;
  uint64_t pos_ = 0;
  std::byte buf_[65536];
  uint64_t buf_start_ = 0;
  size_t buf_len_ = 0;
};

enum class Wire : uint8_t { varint = 0, fixed64 = 1, length = 2, fixed32 = 5 };

struct Field {
  uint32_t number = 0;
  Wire wire = Wire::varint;
  uint64_t value = 0;  // the varint, or the length of a length-delimited field
  uint64_t start = 0;  // where a length-delimited field's payload starts
};

// Reads one field's key and its varint or length; positions the cursor after
// a fixed field, at the payload of a length-delimited one.
Result<Field> next_field(Cursor& c, uint64_t end) {
  auto key = c.varint(end);
  if (!key) return tl::unexpected(key.error());
  Field f;
  f.number = static_cast<uint32_t>(*key >> 3);
  const auto wire = static_cast<uint8_t>(*key & 7);
  if (f.number == 0) return c.malformed("field number 0");
  switch (wire) {
    case 0: {
      f.wire = Wire::varint;
      auto v = c.varint(end);
      if (!v) return tl::unexpected(v.error());
      f.value = *v;
      return f;
    }
    case 1:
    case 5: {
      f.wire = wire == 1 ? Wire::fixed64 : Wire::fixed32;
      const uint64_t n = wire == 1 ? 8 : 4;
      if (n > end - c.pos()) return c.truncated();
      c.seek(c.pos() + n);
      return f;
    }
    case 2: {
      f.wire = Wire::length;
      auto n = c.varint(end);
      if (!n) return tl::unexpected(n.error());
      if (*n > end - c.pos()) return c.truncated();
      f.value = *n;
      f.start = c.pos();
      return f;
    }
    default:
      return c.malformed("wire type " + std::to_string(wire));
  }
}

// Walks the fields of the message [c.pos(), end), calling `visit` for each;
// visit may read a length-delimited payload or not: the cursor moves past it
// either way.
Result<void> walk(Cursor& c, uint64_t end, const std::function<Result<void>(Field&)>& visit) {
  while (c.pos() < end) {
    auto f = next_field(c, end);
    if (!f) return tl::unexpected(f.error());
    if (auto ok = visit(*f); !ok) return ok;
    if (f->wire == Wire::length) c.seek(f->start + f->value);
  }
  return {};
}

// ONNX TensorProto.DataType: name, bits per element, floating.
struct TypeFacts {
  const char* name;
  unsigned bits;
  bool floating;
};

TypeFacts type_facts(uint64_t data_type) {
  switch (data_type) {
    case 1:
      return {"float32", 32, true};
    case 2:
      return {"uint8", 8, false};
    case 3:
      return {"int8", 8, false};
    case 4:
      return {"uint16", 16, false};
    case 5:
      return {"int16", 16, false};
    case 6:
      return {"int32", 32, false};
    case 7:
      return {"int64", 64, false};
    case 8:
      return {"string", 0, false};
    case 9:
      return {"bool", 8, false};
    case 10:
      return {"float16", 16, true};
    case 11:
      return {"float64", 64, true};
    case 12:
      return {"uint32", 32, false};
    case 13:
      return {"uint64", 64, false};
    case 14:
      return {"complex64", 64, true};
    case 15:
      return {"complex128", 128, true};
    case 16:
      return {"bfloat16", 16, true};
    case 17:
    case 18:
    case 19:
    case 20:
      return {"float8", 8, true};
    case 21:
      return {"uint4", 4, false};
    case 22:
      return {"int4", 4, false};
    default:
      return {"undefined", 0, false};
  }
}

constexpr uint64_t kMaxElements = uint64_t{1} << 56;  // far above any model; keeps products exact

struct TensorMeta {
  std::string name;
  uint64_t elements = 1;
  uint64_t data_type = 0;
  bool external = false;
};

Result<TensorMeta> read_tensor(Cursor& c, uint64_t end) {
  TensorMeta t;
  auto dim = [&](uint64_t d) -> Result<void> {
    if (d != 0 && t.elements > kMaxElements / d)
      return c.malformed("a tensor of more than 2^56 elements");
    t.elements *= d;
    return {};
  };
  auto ok = walk(c, end, [&](Field& f) -> Result<void> {
    if (f.number == 1 && f.wire == Wire::varint) return dim(f.value);
    if (f.number == 1 && f.wire == Wire::length) {  // packed dims
      const uint64_t stop = f.start + f.value;
      while (c.pos() < stop) {
        auto d = c.varint(stop);
        if (!d) return tl::unexpected(d.error());
        if (auto k = dim(*d); !k) return k;
      }
      return {};
    }
    if (f.number == 2 && f.wire == Wire::varint) t.data_type = f.value;
    if (f.number == 14 && f.wire == Wire::varint) t.external = f.value == 1;
    if (f.number == 8 && f.wire == Wire::length) {
      auto s = c.string(f.value, f.start + f.value, 1 << 16);
      if (!s) return tl::unexpected(s.error());
      t.name = *s;
    }
    return {};  // raw_data and the typed data fields are skipped, never read
  });
  if (!ok) return tl::unexpected(ok.error());
  return t;
}

// ValueInfoProto: name = 1, type = 2 -> TypeProto.tensor_type = 1 ->
// elem_type = 1, shape = 2 -> TensorShapeProto.dim = 1 -> dim_value = 1,
// dim_param = 2.
Result<GraphTensor> read_value_info(Cursor& c, uint64_t end) {
  GraphTensor g;
  bool tensor = false, known = true;
  uint64_t elements = 1, elem_type = 0;
  auto ok = walk(c, end, [&](Field& f) -> Result<void> {
    if (f.number == 1 && f.wire == Wire::length) {
      auto s = c.string(f.value, f.start + f.value, 1 << 16);
      if (!s) return tl::unexpected(s.error());
      g.name = *s;
      return {};
    }
    if (f.number != 2 || f.wire != Wire::length) return {};
    return walk(c, f.start + f.value, [&](Field& type) -> Result<void> {
      if (type.number != 1 || type.wire != Wire::length) return {};
      tensor = true;
      return walk(c, type.start + type.value, [&](Field& tt) -> Result<void> {
        if (tt.number == 1 && tt.wire == Wire::varint) elem_type = tt.value;
        if (tt.number != 2 || tt.wire != Wire::length) return {};
        return walk(c, tt.start + tt.value, [&](Field& dim) -> Result<void> {
          if (dim.number != 1 || dim.wire != Wire::length) return {};
          bool has_value = false;
          auto d = walk(c, dim.start + dim.value, [&](Field& dv) -> Result<void> {
            if (dv.number == 1 && dv.wire == Wire::varint) {
              has_value = true;
              const uint64_t n = dv.value;
              if (n != 0 && elements > kMaxElements / n)
                known = false;
              else
                elements *= n;
            }
            return {};
          });
          if (!has_value) known = false;
          return d;
        });
      });
    });
  });
  if (!ok) return tl::unexpected(ok.error());
  const TypeFacts facts = type_facts(elem_type);
  if (tensor && known && facts.bits > 0) g.bytes = (elements * facts.bits + 7) / 8;
  return g;
}

void count(GraphWeights& w, const TensorMeta& t, bool constant) {
  const TypeFacts facts = type_facts(t.data_type);
  const uint64_t bytes = (t.elements * facts.bits + 7) / 8;
  WeightGroup& g = w.by_type[facts.name];
  g.tensors += 1;
  g.elements += t.elements;
  g.bytes += bytes;
  g.floating = facts.floating;
  w.tensors += 1;
  w.parameters += t.elements;
  w.stored_bytes += bytes;
  if (facts.floating)
    w.float_parameters += t.elements;
  else
    w.non_float_bytes += bytes;
  if (t.external) w.external_tensors += 1;
  if (constant) w.constant_tensors += 1;
}

Result<void> read_node(Cursor& c, uint64_t end, GraphWeights& w) {
  std::string op;
  std::vector<TensorMeta> tensors;
  auto ok = walk(c, end, [&](Field& f) -> Result<void> {
    if (f.number == 4 && f.wire == Wire::length) {
      auto s = c.string(f.value, f.start + f.value, 1 << 12);
      if (!s) return tl::unexpected(s.error());
      op = *s;
    }
    if (f.number == 5 && f.wire == Wire::length)
      return walk(c, f.start + f.value, [&](Field& a) -> Result<void> {
        if (a.number != 5 || a.wire != Wire::length) return {};
        auto t = read_tensor(c, a.start + a.value);
        if (!t) return tl::unexpected(t.error());
        tensors.push_back(*t);
        return {};
      });
    return {};
  });
  if (!ok) return ok;
  if (op == "Constant")
    for (const auto& t : tensors) count(w, t, true);
  return {};
}

Result<GraphWeights> read_weights(Source& source) {
  Cursor c(source);
  GraphWeights w;
  bool graph_seen = false;
  std::set<std::string> initializer_names;
  std::vector<GraphTensor> inputs;
  auto ok = walk(c, source.size(), [&](Field& f) -> Result<void> {
    if (f.number != 7 || f.wire != Wire::length) return {};
    graph_seen = true;
    return walk(c, f.start + f.value, [&](Field& g) -> Result<void> {
      if (g.wire != Wire::length) return {};
      const uint64_t stop = g.start + g.value;
      if (g.number == 1) return read_node(c, stop, w);
      if (g.number == 5) {
        auto t = read_tensor(c, stop);
        if (!t) return tl::unexpected(t.error());
        initializer_names.insert(t->name);
        count(w, *t, false);
        return {};
      }
      if (g.number == 11 || g.number == 12) {
        auto v = read_value_info(c, stop);
        if (!v) return tl::unexpected(v.error());
        (g.number == 11 ? inputs : w.outputs).push_back(std::move(*v));
      }
      return {};
    });
  });
  if (!ok) return tl::unexpected(ok.error());
  if (!graph_seen)
    return fail(ErrorCode::invalid_argument, "not an ONNX model: it has no graph (field 7)");
  for (auto& in : inputs)
    if (!initializer_names.count(in.name)) w.inputs.push_back(std::move(in));
  return w;
}

}  // namespace

Result<GraphWeights> read_graph_weights(std::span<const std::byte> bytes) {
  MemorySource source(bytes);
  return read_weights(source);
}

Result<GraphWeights> read_graph_weights(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT)
      return fail(ErrorCode::not_found, "model file '" + path + "' does not exist");
    return fail(ErrorCode::io, "cannot open " + path + ": " + std::generic_category().message(err));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return fail(ErrorCode::io, "cannot read " + path + ": not a regular file");
  }
  FileSource source(fd, static_cast<uint64_t>(st.st_size), path);
  auto w = read_weights(source);
  if (!w) return fail(w.error().code, path + ": " + w.error().message);
  return w;
}

}  // namespace rig

// inspect_onnx and the ONNX helpers shared with the builders.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include <google/protobuf/io/coded_stream.h>
#include <onnx/shape_inference/implementation.h>

#include "model/onnx_util.hpp"
#include "rig/model.hpp"
#include "rig/units.hpp"

namespace rig {
namespace onnx_util {

int32_t to_onnx(ElementType t) {
  switch (t) {
    case ElementType::f32:
      return onnx::TensorProto::FLOAT;
    case ElementType::f16:
      return onnx::TensorProto::FLOAT16;
    case ElementType::f64:
      return onnx::TensorProto::DOUBLE;
    case ElementType::u8:
      return onnx::TensorProto::UINT8;
    case ElementType::i8:
      return onnx::TensorProto::INT8;
    case ElementType::u16:
      return onnx::TensorProto::UINT16;
    case ElementType::i16:
      return onnx::TensorProto::INT16;
    case ElementType::i32:
      return onnx::TensorProto::INT32;
    case ElementType::i64:
      return onnx::TensorProto::INT64;
    case ElementType::boolean:
      return onnx::TensorProto::BOOL;
  }
  return onnx::TensorProto::UNDEFINED;
}

std::optional<ElementType> from_onnx(int32_t data_type) {
  switch (data_type) {
    case onnx::TensorProto::FLOAT:
      return ElementType::f32;
    case onnx::TensorProto::FLOAT16:
      return ElementType::f16;
    case onnx::TensorProto::DOUBLE:
      return ElementType::f64;
    case onnx::TensorProto::UINT8:
      return ElementType::u8;
    case onnx::TensorProto::INT8:
      return ElementType::i8;
    case onnx::TensorProto::UINT16:
      return ElementType::u16;
    case onnx::TensorProto::INT16:
      return ElementType::i16;
    case onnx::TensorProto::INT32:
      return ElementType::i32;
    case onnx::TensorProto::INT64:
      return ElementType::i64;
    case onnx::TensorProto::BOOL:
      return ElementType::boolean;
    default:
      return std::nullopt;
  }
}

Result<onnx::ModelProto> parse_model(std::span<const std::byte> bytes) {
  if (bytes.empty()) return fail(ErrorCode::invalid_argument, "the model is empty (0 bytes)");
  if (bytes.size() > static_cast<size_t>(INT_MAX))
    return fail(ErrorCode::unsupported, "models over 2 GiB are not supported");
  onnx::ModelProto model;
  google::protobuf::io::CodedInputStream stream(reinterpret_cast<const uint8_t*>(bytes.data()),
                                                static_cast<int>(bytes.size()));
  stream.SetRecursionLimit(kMaxMessageNesting);
  if (!model.ParseFromCodedStream(&stream) || !stream.ConsumedEntireMessage())
    return fail(ErrorCode::invalid_argument,
                "not an ONNX model: " + std::to_string(bytes.size()) +
                    " bytes that do not parse as onnx.ModelProto (or that nest messages deeper "
                    "than " +
                    std::to_string(kMaxMessageNesting) + " levels)");
  // Protobuf accepts many byte strings (unknown fields are skipped); a model
  // worth measuring has a graph with at least one node and one output.
  if (!model.has_graph() || model.graph().node_size() == 0 || model.graph().output_size() == 0)
    return fail(ErrorCode::invalid_argument,
                "not an ONNX model: " + std::to_string(bytes.size()) +
                    " bytes parse, but hold no graph with nodes and outputs");
  if (auto ok = check_tensor_data(model.graph()); !ok) return tl::unexpected(ok.error());
  return model;
}

std::vector<std::byte> serialize(const onnx::ModelProto& model) {
  std::string text = model.SerializeAsString();
  std::vector<std::byte> bytes(text.size());
  std::memcpy(bytes.data(), text.data(), text.size());
  return bytes;
}

// Attribute values that ONNX's own shape inference and OpenCV's importer
// divide by or index with. A crafted model with a zero stride crashes libonnx
// (SIGFPE in convPoolShapeInference, found by fuzz/model_inspect_fuzz.cpp), so
// these are checked here, in every node of every (sub)graph, first.
Result<void> check_attributes(const onnx::GraphProto& graph, int depth) {
  if (depth > kMaxSubgraphDepth)
    return fail(ErrorCode::unsupported, "subgraphs (If, Loop, Scan bodies) nest deeper than " +
                                            std::to_string(kMaxSubgraphDepth) +
                                            " levels, rig's limit");
  static const std::set<std::string> positive = {"strides", "dilations", "kernel_shape",
                                                 "group",   "blocksize", "block_size"};
  static const std::set<std::string> non_negative = {"pads", "output_padding"};
  constexpr int64_t kMaxValue = int64_t{1} << 31;
  for (const auto& node : graph.node()) {
    for (const auto& attr : node.attribute()) {
      const bool must_be_positive = positive.count(attr.name()) > 0;
      if (must_be_positive || non_negative.count(attr.name())) {
        std::vector<int64_t> values(attr.ints().begin(), attr.ints().end());
        if (attr.has_i()) values.push_back(attr.i());
        for (int64_t v : values)
          if (v < (must_be_positive ? 1 : 0) || v > kMaxValue)
            return fail(ErrorCode::invalid_argument,
                        "node '" + node.name() + "' (" + node.op_type() + "): attribute " +
                            attr.name() + " = " + std::to_string(v) + " is out of range");
      }
      if (attr.has_g())
        if (auto ok = check_attributes(attr.g(), depth + 1); !ok) return ok;
      for (const auto& g : attr.graphs())
        if (auto ok = check_attributes(g, depth + 1); !ok) return ok;
    }
  }
  return {};
}

static bool write_all(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

namespace {

std::atomic<int64_t> configured_timeout_ns{0};  // 0: not set

Nanos timeout_from_environment() {
  constexpr Nanos kDefault = std::chrono::seconds(30);
  const char* text = std::getenv("RIG_SHAPE_INFERENCE_TIMEOUT");
  if (!text || !*text) return kDefault;
  auto d = parse_duration(text);
  return d && *d > Nanos(0) ? *d : kDefault;
}

}  // namespace

Nanos shape_inference_timeout() {
  if (const int64_t ns = configured_timeout_ns.load(); ns > 0) return Nanos(ns);
  static const Nanos from_environment = timeout_from_environment();
  return from_environment;
}

void set_shape_inference_timeout(Nanos timeout) {
  configured_timeout_ns.store(std::max<int64_t>(1, timeout.count()));
}

Result<std::string> run_in_child(const std::function<std::string()>& body, Nanos timeout,
                                 const std::string& what) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    return fail(ErrorCode::io, what + ": pipe: " + std::strerror(errno));
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return fail(ErrorCode::io, what + ": fork: " + std::strerror(errno));
  }
  if (pid == 0) {
    ::close(fds[0]);
    // A crash here is the parent's to report: the default action kills the
    // child, whatever handler the parent installed (libFuzzer's writes a
    // crash-* artifact for a crash rig contains).
    for (const int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS})
      ::signal(sig, SIG_DFL);
    if (const int null = ::open("/dev/null", O_WRONLY); null >= 0) ::dup2(null, STDERR_FILENO);
    const std::string out = body();
    ::_exit(write_all(fds[1], out) ? 0 : 1);
  }
  ::close(fds[1]);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto left_ms = [&] {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    return static_cast<int>(std::clamp<int64_t>(left.count() + 1, 0, INT_MAX));
  };
  std::string in;
  char buf[65536];
  bool expired = false;
  for (;;) {
    pollfd p{fds[0], POLLIN, 0};
    const int ready = ::poll(&p, 1, left_ms());
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0 || std::chrono::steady_clock::now() >= deadline) {
      expired = true;
      break;
    }
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    in.append(buf, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  // After the end of its output the child is exiting; it is killed if not
  // gone by the deadline (or at once when the deadline already passed).
  for (;;) {
    if (expired) ::kill(pid, SIGKILL);
    const pid_t r = ::waitpid(pid, &status, expired ? 0 : WNOHANG);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) return fail(ErrorCode::internal, what + ": waitpid failed");
    if (r == 0) {
      if (std::chrono::steady_clock::now() >= deadline)
        expired = true;
      else
        ::poll(nullptr, 0, 1);
    }
  }
  if (expired)
    return fail(ErrorCode::timeout, what + " did not finish within " + format_duration(timeout) +
                                        " and was stopped (RIG_SHAPE_INFERENCE_TIMEOUT sets "
                                        "the deadline; declaring the graph's output shapes "
                                        "avoids the inference)");
  if (WIFSIGNALED(status))
    return fail(ErrorCode::unsupported, what + " crashed on this model (signal " +
                                            std::to_string(WTERMSIG(status)) +
                                            "): declare the graph's output shapes");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || in.empty())
    return fail(ErrorCode::unsupported, what + " did not complete");
  return in;
}

// Runs ONNX shape inference in a child process (run_in_child). libonnx 1.12
// crashes (SIGFPE, SIGSEGV in convPoolShapeInference) on some malformed
// graphs, and a model file is untrusted input: a crash there must be an
// error, not rig's death, and a loop must not hang inspect or a server's
// device thread. The child sends back "1" + the inferred model, or "0" +
// the error text.
Result<void> infer_shapes_isolated(onnx::ModelProto& model, bool data_propagation) {
  auto in = run_in_child(
      [&]() -> std::string {
        try {
          onnx::ShapeInferenceOptions options(false, 0, data_propagation);
          onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), options);
          return "1" + model.SerializeAsString();
        } catch (const std::exception& e) {
          return std::string("0") + e.what();
        }
      },
      shape_inference_timeout(), "ONNX shape inference");
  if (!in) return tl::unexpected(in.error());
  if ((*in)[0] == '0')
    return fail(ErrorCode::unsupported, "shape inference failed: " + in->substr(1));
  onnx::ModelProto inferred;
  if (!inferred.ParseFromArray(in->data() + 1, static_cast<int>(in->size() - 1)))
    return fail(ErrorCode::internal, "shape inference returned an unreadable model");
  model = std::move(inferred);
  return {};
}

}  // namespace onnx_util

namespace {

bool fully_static(const onnx::TypeProto& type) {
  if (!type.has_tensor_type() || !type.tensor_type().has_shape()) return false;
  for (const auto& dim : type.tensor_type().shape().dim())
    if (!dim.has_dim_value() || dim.dim_value() < 1) return false;
  return true;
}

// Dynamic dimensions (symbolic, missing or 0) are fixed to 1. A negative
// one is left for tensor_info to refuse: it is no size, not a free one.
void fix_dynamic_dims(onnx::TypeProto* type) {
  if (!type->has_tensor_type() || !type->tensor_type().has_shape()) return;
  for (auto& dim : *type->mutable_tensor_type()->mutable_shape()->mutable_dim())
    if (!dim.has_dim_value() || dim.dim_value() == 0) dim.set_dim_value(1);
}

Result<TensorInfo> tensor_info(const onnx::ValueInfoProto& value, std::string_view role) {
  const std::string what = std::string(role) + " '" + value.name() + "'";
  if (!value.type().has_tensor_type())
    return fail(ErrorCode::unsupported,
                what + " is not a tensor (sequences and maps are not supported)");
  const auto& tensor = value.type().tensor_type();
  auto type = onnx_util::from_onnx(tensor.elem_type());
  if (!type)
    return fail(ErrorCode::unsupported,
                what + " has element type " +
                    onnx::TensorProto::DataType_Name(
                        static_cast<onnx::TensorProto::DataType>(tensor.elem_type())) +
                    ", which rig cannot size");
  if (!tensor.has_shape())
    return fail(ErrorCode::unsupported, what + " has no shape, even after shape inference");
  TensorInfo info;
  info.name = value.name();
  info.type = *type;
  // Sizes are checked, not wrapped: a crafted model cannot claim a small size.
  // OpenCV indexes dimensions with int, so larger dimensions are refused too.
  constexpr uint64_t kMaxTensorBytes = uint64_t{1} << 40;
  uint64_t bytes = element_size(*type);
  for (int i = 0; i < tensor.shape().dim_size(); ++i) {
    const auto& dim = tensor.shape().dim(i);
    if (dim.has_dim_value() && dim.dim_value() < 0)
      return fail(ErrorCode::invalid_argument,
                  what + " dimension " + std::to_string(i) + " is " +
                      std::to_string(dim.dim_value()) +
                      ": a dimension cannot be negative (fix the model, or give the input's "
                      "shape with --shape)");
    int64_t d = dim.has_dim_value() && dim.dim_value() >= 1 ? dim.dim_value() : 1;
    if (d > std::numeric_limits<int32_t>::max() ||
        __builtin_mul_overflow(bytes, static_cast<uint64_t>(d), &bytes) || bytes > kMaxTensorBytes)
      return fail(ErrorCode::limit_exceeded, what + " is larger than rig handles (over " +
                                                 std::to_string(kMaxTensorBytes) + " bytes)");
    info.shape.push_back(d);
  }
  info.bytes = static_cast<size_t>(bytes);
  return info;
}

}  // namespace

Result<ModelInfo> inspect_onnx(std::span<const std::byte> bytes, std::string name) {
  auto parsed = onnx_util::parse_model(bytes);
  if (!parsed) return tl::unexpected(parsed.error());
  onnx::ModelProto& model = *parsed;
  auto* graph = model.mutable_graph();
  if (auto ok = onnx_util::check_attributes(*graph); !ok) {
    Error e = ok.error();
    e.message = "model '" + name + "': " + e.message;
    return tl::unexpected(e);
  }

  std::set<std::string> initializers;
  for (const auto& init : graph->initializer()) initializers.insert(init.name());

  bool outputs_static = true;
  for (auto& input : *graph->mutable_input()) fix_dynamic_dims(input.mutable_type());
  for (const auto& output : graph->output())
    outputs_static = outputs_static && fully_static(output.type());

  if (!outputs_static) {
    // Drop the declared shapes that are not fully static and let shape
    // inference recompute them from the (now static) inputs.
    for (auto& output : *graph->mutable_output())
      if (!fully_static(output.type()) && output.type().has_tensor_type())
        output.mutable_type()->mutable_tensor_type()->clear_shape();
    if (auto ok = onnx_util::infer_shapes_isolated(model); !ok) {
      Error e = ok.error();
      e.message = "model '" + name + "': output shapes are not declared and " + e.message;
      return tl::unexpected(e);
    }
    graph = model.mutable_graph();  // the inferred model replaced the old one
  }

  ModelInfo info;
  info.name = std::move(name);
  for (const auto& input : graph->input()) {
    if (initializers.count(input.name())) continue;
    auto tensor = tensor_info(input, "input");
    if (!tensor) return tl::unexpected(tensor.error());
    info.inputs.push_back(std::move(*tensor));
  }
  for (const auto& output : graph->output()) {
    auto tensor = tensor_info(output, "output");
    if (!tensor) return tl::unexpected(tensor.error());
    info.outputs.push_back(std::move(*tensor));
  }
  if (info.inputs.empty())
    return fail(ErrorCode::unsupported, "model '" + info.name + "' has no inputs");
  return info;
}

}  // namespace rig

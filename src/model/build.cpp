// Builders for the rig's own ONNX models: transport ladder rungs and a small
// CNN. Every model is checked with onnx::checker before it is returned.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include <onnx/checker.h>

#include "model/onnx_util.hpp"
#include "rig/model.hpp"

namespace rig {
namespace {

// The IR version that shipped with opset 13; accepted by onnx >= 1.8 and OpenCV 4.6.
constexpr int64_t kIrVersion = 7;
constexpr int64_t kOpset = 13;

void set_tensor_type(onnx::ValueInfoProto* value, const std::string& name, int32_t elem_type,
                     const std::vector<int64_t>& shape) {
  value->set_name(name);
  auto* tensor = value->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(elem_type);
  auto* dims = tensor->mutable_shape();
  for (int64_t d : shape) dims->add_dim()->set_dim_value(d);
}

void add_initializer(onnx::GraphProto* graph, const std::string& name,
                     const std::vector<int64_t>& dims, const std::vector<float>& values) {
  auto* tensor = graph->add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) tensor->add_dims(d);
  std::string raw(values.size() * sizeof(float), '\0');
  std::memcpy(raw.data(), values.data(), raw.size());
  tensor->set_raw_data(std::move(raw));
}

void add_ints(onnx::NodeProto* node, const std::string& name, const std::vector<int64_t>& values) {
  auto* attr = node->add_attribute();
  attr->set_name(name);
  attr->set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) attr->add_ints(v);
}

void add_int(onnx::NodeProto* node, const std::string& name, int64_t value) {
  auto* attr = node->add_attribute();
  attr->set_name(name);
  attr->set_type(onnx::AttributeProto::INT);
  attr->set_i(value);
}

onnx::NodeProto* add_node(onnx::GraphProto* graph, const std::string& op, const std::string& name,
                          const std::vector<std::string>& inputs,
                          const std::vector<std::string>& outputs) {
  auto* node = graph->add_node();
  node->set_op_type(op);
  node->set_name(name);
  for (const auto& in : inputs) node->add_input(in);
  for (const auto& out : outputs) node->add_output(out);
  return node;
}

onnx::ModelProto new_model(const std::string& graph_name) {
  onnx::ModelProto model;
  model.set_ir_version(kIrVersion);
  model.set_producer_name("rig");
  auto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(kOpset);
  model.mutable_graph()->set_name(graph_name);
  return model;
}

Result<std::vector<std::byte>> checked(const onnx::ModelProto& model) {
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception& e) {
    return fail(ErrorCode::internal,
                "built model '" + model.graph().name() + "' fails onnx::checker: " + e.what());
  }
  return onnx_util::serialize(model);
}

// Deterministic across platforms (std::*_distribution is not).
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [-limit, limit).
  float uniform(double limit) {
    double unit = static_cast<double>(next() >> 11) * 0x1.0p-53;
    return static_cast<float>((2.0 * unit - 1.0) * limit);
  }

 private:
  uint64_t state_;
};

// He (Kaiming) uniform initialisation: variance 2 / fan_in, so activations
// neither vanish nor explode through the ReLU stack.
std::vector<float> he_uniform(SplitMix64& rng, size_t count, int64_t fan_in) {
  double limit = std::sqrt(6.0 / static_cast<double>(fan_in));
  std::vector<float> values(count);
  for (auto& v : values) v = rng.uniform(limit);
  return values;
}

std::string frame_text(const FrameSize& f) {
  return std::to_string(f.width) + "x" + std::to_string(f.height);
}

// Generous caps that keep every size computation far from overflow: a 16k
// frame with 4096 channels of f32 is 4.4 TB, still representable.
constexpr int64_t kMaxSide = 16384;
constexpr int64_t kMaxChannels = 4096;

Result<void> check_frame(const FrameSize& f) {
  if (f.width < 1 || f.height < 1)
    return fail(ErrorCode::invalid_argument, "frame " + frame_text(f) + " must be at least 1x1");
  if (f.width > kMaxSide || f.height > kMaxSide)
    return fail(ErrorCode::invalid_argument, "frame " + frame_text(f) + " exceeds " +
                                                 std::to_string(kMaxSide) + " pixels a side");
  return {};
}

// Copies of the weights held at once while a model is built, serialized and
// checked: the values, the tensor, the serialized bytes, the checker's parse.
constexpr double kBuildCopies = 4;

uint64_t half_the_memory() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) / 2
                               : UINT64_MAX;
}

// A model of `weight_bytes` may be built: under kMaxModelBytes and the
// memory its building takes.
Result<void> check_model_size(const std::string& what, double weight_bytes) {
  auto text = [](double b) { return std::to_string(static_cast<uint64_t>(std::min(b, 1.8e19))); };
  if (weight_bytes > static_cast<double>(kMaxModelBytes))
    return fail(ErrorCode::limit_exceeded,
                what + " would be " + text(weight_bytes) + " bytes of weights, over the " +
                    std::to_string(kMaxModelBytes) + " bytes (2 GiB - 1) an ONNX file can hold");
  const uint64_t memory = half_the_memory();
  if (kBuildCopies * weight_bytes > static_cast<double>(memory))
    return fail(ErrorCode::limit_exceeded,
                what + " would be " + text(weight_bytes) + " bytes of weights; building it takes " +
                    text(kBuildCopies * weight_bytes) + " bytes, over the memory budget of " +
                    std::to_string(memory) + " bytes (half the physical memory)");
  return {};
}

double cnn_weight_bytes_exact(const CnnSpec& spec) {
  const double c = static_cast<double>(spec.channels);
  const double first = static_cast<double>(spec.input_channels) * c * 9 + c;
  const double rest = static_cast<double>(spec.layers - 1) * (c * c * 9 + c);
  const double fc = static_cast<double>(spec.classes) * c + static_cast<double>(spec.classes);
  return 4 * (first + rest + fc);
}

}  // namespace

uint64_t cnn_weight_bytes(const CnnSpec& spec) {
  const double b = cnn_weight_bytes_exact(spec);
  return b >= 1.8e19 ? UINT64_MAX : static_cast<uint64_t>(b);
}

Result<std::vector<std::byte>> build_transport_model(const TransportSpec& spec) {
  if (auto ok = check_frame(spec.frame); !ok) return tl::unexpected(ok.error());
  if (spec.channels < 1 || spec.channels > kMaxChannels)
    return fail(ErrorCode::invalid_argument,
                "transport channels must be in 1.." + std::to_string(kMaxChannels));
  if (spec.input_type != ElementType::u8 && spec.input_type != ElementType::f32)
    return fail(ErrorCode::invalid_argument, "transport input type must be u8 or f32, not " +
                                                 std::string(to_string(spec.input_type)));
  if (!(spec.output_fraction > 0) || !std::isfinite(spec.output_fraction))
    return fail(ErrorCode::invalid_argument, "transport output fraction must be > 0");

  const int64_t h = spec.frame.height, w = spec.frame.width, c = spec.channels;
  const double input_bytes =
      static_cast<double>(c * h * w) * static_cast<double>(element_size(spec.input_type));
  const double wanted_bytes = spec.output_fraction * input_bytes;
  const double rounded = std::round(wanted_bytes);
  auto cannot = [&](const std::string& why) {
    return fail(ErrorCode::invalid_argument,
                "transport " + frame_text(spec.frame) + "x" + std::to_string(c) + " " +
                    std::string(to_string(spec.input_type)) + ": output fraction " +
                    std::to_string(spec.output_fraction) + " cannot be met exactly (" + why + ")");
  };
  if (std::abs(wanted_bytes - rounded) > 1e-9 * std::max(1.0, wanted_bytes) || rounded < 4 ||
      rounded > 0x1p52)
    return cannot(std::to_string(wanted_bytes) + " output bytes is not a whole number");
  const auto out_bytes = static_cast<int64_t>(rounded);
  if (out_bytes % 4 != 0)
    return cannot(std::to_string(out_bytes) + " output bytes is not a whole number of f32");
  const int64_t out_elems = out_bytes / 4;

  // A 1x1 convolution with stride s yields ceil(h/s) x ceil(w/s) per output
  // channel; take the smallest stride that divides the output exactly.
  int64_t stride = 0, out_channels = 0, out_h = 0, out_w = 0;
  for (int64_t s = 1; s <= std::max(h, w); ++s) {
    int64_t oh = (h + s - 1) / s, ow = (w + s - 1) / s;
    if (out_elems % (oh * ow) == 0) {
      stride = s, out_h = oh, out_w = ow, out_channels = out_elems / (oh * ow);
      break;
    }
  }
  if (stride == 0) return cannot("no 1x1 convolution stride divides the output");
  if (auto ok =
          check_model_size("transport model " + frame_text(spec.frame),
                           4.0 * static_cast<double>(out_channels) * static_cast<double>(c + 1));
      !ok)
    return tl::unexpected(ok.error());

  auto model = new_model("transport_" + frame_text(spec.frame) + "_" +
                         std::string(to_string(spec.input_type)));
  auto* graph = model.mutable_graph();
  set_tensor_type(graph->add_input(), "input", onnx_util::to_onnx(spec.input_type), {1, c, h, w});
  set_tensor_type(graph->add_output(), "output", onnx::TensorProto::FLOAT,
                  {1, out_channels, out_h, out_w});

  // Each output channel averages the input channels (scaled to [0, 1] for u8).
  const double scale = spec.input_type == ElementType::u8 ? 255.0 : 1.0;
  add_initializer(graph, "weight", {out_channels, c, 1, 1},
                  std::vector<float>(static_cast<size_t>(out_channels * c),
                                     static_cast<float>(1.0 / (scale * static_cast<double>(c)))));
  add_initializer(graph, "bias", {out_channels},
                  std::vector<float>(static_cast<size_t>(out_channels), 0.0f));

  std::string conv_in = "input";
  if (spec.input_type != ElementType::f32) {
    // OpenCV feeds a u8 blob as float; the Cast keeps the graph valid ONNX.
    conv_in = "input_f32";
    add_int(add_node(graph, "Cast", "cast", {"input"}, {conv_in}), "to", onnx::TensorProto::FLOAT);
  }
  auto* conv = add_node(graph, "Conv", "conv", {conv_in, "weight", "bias"}, {"output"});
  add_ints(conv, "kernel_shape", {1, 1});
  add_ints(conv, "strides", {stride, stride});
  add_ints(conv, "pads", {0, 0, 0, 0});
  add_ints(conv, "dilations", {1, 1});
  add_int(conv, "group", 1);
  return checked(model);
}

Result<std::vector<std::byte>> build_cnn_model(const CnnSpec& spec) {
  if (auto ok = check_frame(spec.frame); !ok) return tl::unexpected(ok.error());
  if (spec.input_channels < 1 || spec.channels < 1 || spec.layers < 1 || spec.classes < 1)
    return fail(ErrorCode::invalid_argument,
                "cnn input_channels, channels, layers and classes must all be >= 1");
  if (auto ok = check_model_size("cnn of " + std::to_string(spec.layers) + " layers x " +
                                     std::to_string(spec.channels) + " channels, " +
                                     std::to_string(spec.classes) + " classes",
                                 cnn_weight_bytes_exact(spec));
      !ok)
    return tl::unexpected(ok.error());

  const int64_t h = spec.frame.height, w = spec.frame.width;
  auto model = new_model("cnn_" + frame_text(spec.frame) + "_c" + std::to_string(spec.channels) +
                         "_l" + std::to_string(spec.layers));
  auto* graph = model.mutable_graph();
  set_tensor_type(graph->add_input(), "input", onnx::TensorProto::FLOAT,
                  {1, spec.input_channels, h, w});
  set_tensor_type(graph->add_output(), "logits", onnx::TensorProto::FLOAT, {1, spec.classes});

  SplitMix64 rng(spec.seed);
  std::string x = "input";
  int64_t in_channels = spec.input_channels;
  for (int64_t i = 0; i < spec.layers; ++i) {
    const std::string n = std::to_string(i);
    const int64_t fan_in = in_channels * 9;
    add_initializer(graph, "conv" + n + ".weight", {spec.channels, in_channels, 3, 3},
                    he_uniform(rng, static_cast<size_t>(spec.channels * fan_in), fan_in));
    add_initializer(graph, "conv" + n + ".bias", {spec.channels},
                    std::vector<float>(static_cast<size_t>(spec.channels), 0.0f));
    auto* conv = add_node(graph, "Conv", "conv" + n,
                          {x, "conv" + n + ".weight", "conv" + n + ".bias"}, {"conv" + n + ".out"});
    add_ints(conv, "kernel_shape", {3, 3});
    add_ints(conv, "strides", {1, 1});
    add_ints(conv, "pads", {1, 1, 1, 1});
    add_ints(conv, "dilations", {1, 1});
    add_int(conv, "group", 1);
    add_node(graph, "Relu", "relu" + n, {"conv" + n + ".out"}, {"relu" + n + ".out"});
    x = "relu" + n + ".out";
    in_channels = spec.channels;
  }
  add_node(graph, "GlobalAveragePool", "pool", {x}, {"pool.out"});
  add_int(add_node(graph, "Flatten", "flatten", {"pool.out"}, {"flatten.out"}), "axis", 1);
  add_initializer(
      graph, "fc.weight", {spec.classes, spec.channels},
      he_uniform(rng, static_cast<size_t>(spec.classes * spec.channels), spec.channels));
  add_initializer(graph, "fc.bias", {spec.classes},
                  std::vector<float>(static_cast<size_t>(spec.classes), 0.0f));
  auto* gemm = add_node(graph, "Gemm", "fc", {"flatten.out", "fc.weight", "fc.bias"}, {"logits"});
  add_int(gemm, "transB", 1);
  return checked(model);
}

}  // namespace rig

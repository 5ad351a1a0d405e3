// The cpu device's OpenCV DNN runtime: one cv::dnn::Net per worker.
//
// Timing of one inference:
//   transfer_in   Net::setInput from the caller's buffer (OpenCV copies it)
//   compute       Net::forward
//   transfer_out  copying the outputs into the caller's buffers
//
// load(): parse = rig's normalisation pass (with its checks and inspection)
// plus one cv::dnn::readNetFromONNX per worker, compile = configuring the
// Nets. OpenCV allocates layers on the first forward, so the first inference
// stays cold. OpenCV throws cv::Exception (and protobuf may throw from the
// importer); every OpenCV call is wrapped so that failures leave as Error
// values. The import itself is opencv_import.cpp's.
#include <cstring>
#include <map>

#include <opencv2/core.hpp>
#include <opencv2/dnn.hpp>

#include "devices/cpu/cpu_runtime.hpp"
#include "devices/cpu/opencv_import.hpp"
#include "rig/units.hpp"

namespace rig::cpu {
namespace {

// cv::Mat depth holding `t` unchanged; -1 when OpenCV has none (i64).
int cv_depth(ElementType t) {
  switch (t) {
    case ElementType::f32:
      return CV_32F;
    case ElementType::f16:
      return CV_16F;
    case ElementType::f64:
      return CV_64F;
    case ElementType::u8:
      return CV_8U;
    case ElementType::boolean:
      return CV_8U;
    case ElementType::i8:
      return CV_8S;
    case ElementType::u16:
      return CV_16U;
    case ElementType::i16:
      return CV_16S;
    case ElementType::i32:
      return CV_32S;
    case ElementType::i64:
      return -1;
  }
  return -1;
}

class OpenCvSession final : public Session {
 public:
  OpenCvSession(cv::dnn::Net net, const ModelInfo& model,
                std::shared_ptr<const std::vector<std::string>> output_names)
      : net_(std::move(net)), model_(model), output_names_(std::move(output_names)) {
    inputs_.resize(model_.inputs.size());
  }

  Result<InferenceTimings> infer(BoundBuffers& bound) override {
    InferenceTimings timings;
    try {
      const Nanos t0 = steady_clock().now();
      if (auto ok = set_inputs(bound.buffers); !ok) return tl::unexpected(ok.error());
      const Nanos t1 = steady_clock().now();
      net_.forward(outputs_, *output_names_);
      const Nanos t2 = steady_clock().now();
      if (auto ok = copy_outputs(bound.buffers); !ok) return tl::unexpected(ok.error());
      const Nanos t3 = steady_clock().now();
      timings.transfer_in = t1 - t0;
      timings.compute = t2 - t1;
      timings.transfer_out = t3 - t2;
    } catch (const std::exception& e) {
      return fail(ErrorCode::device, "OpenCV inference failed: " + short_reason(e.what()));
    }
    return timings;
  }

  Result<void> loop_begin(BoundBuffers& bound) override {
    return guarded([&] { return set_inputs(bound.buffers); });
  }
  Result<void> loop_forward() override {
    return guarded([&]() -> Result<void> {
      net_.forward(outputs_, *output_names_);
      return {};
    });
  }
  Result<void> loop_end(BoundBuffers& bound) override {
    return guarded([&] { return copy_outputs(bound.buffers); });
  }

  // Net::getPerfProfile after each forward: per-layer ticks of that run,
  // indexed as getLayerNames (layer ids 1..N). A layer fused into another
  // reports 0 and is not counted as a call.
  Result<LayerProfile> profile(BoundBuffers& bound, uint32_t runs) override {
    LayerProfile profile;
    profile.profiler = "opencv getPerfProfile";
    try {
      if (auto ok = set_inputs(bound.buffers); !ok) return tl::unexpected(ok.error());
      const std::vector<std::string> names = net_.getLayerNames();
      profile.layers.resize(names.size());
      for (size_t i = 0; i < names.size(); ++i) {
        profile.layers[i].name = names[i];
        auto layer = net_.getLayer(static_cast<int>(i + 1));
        if (layer) profile.layers[i].op_type = layer->type;
      }
      const double ns_per_tick = 1e9 / cv::getTickFrequency();
      std::vector<double> ticks;
      const Nanos t0 = steady_clock().now();
      for (uint32_t run = 0; run < runs; ++run) {
        net_.forward(outputs_, *output_names_);
        net_.getPerfProfile(ticks);
        for (size_t i = 0; i < ticks.size() && i < profile.layers.size(); ++i) {
          if (ticks[i] <= 0) continue;
          profile.layers[i].total += Nanos(static_cast<int64_t>(ticks[i] * ns_per_tick));
          ++profile.layers[i].calls;
        }
      }
      profile.wall = steady_clock().now() - t0;
      if (auto ok = copy_outputs(bound.buffers); !ok) return tl::unexpected(ok.error());
    } catch (const std::exception& e) {
      return fail(ErrorCode::device, "OpenCV inference failed: " + short_reason(e.what()));
    }
    return profile;
  }

 private:
  template <class F>
  Result<void> guarded(F&& f) {
    try {
      return f();
    } catch (const std::exception& e) {
      return fail(ErrorCode::device, "OpenCV inference failed: " + short_reason(e.what()));
    }
  }

  // Hands the caller's inputs to the Net. u8, bool and f32 go in as they are
  // (OpenCV copies them); other types are converted to f32 first.
  Result<void> set_inputs(const Bindings& buffers) {
    for (size_t i = 0; i < model_.inputs.size(); ++i) {
      const TensorInfo& tensor = model_.inputs[i];
      std::vector<int> dims(tensor.shape.begin(), tensor.shape.end());
      if (dims.empty()) dims.push_back(1);
      void* data = const_cast<std::byte*>(buffers.inputs[i].data());  // OpenCV only reads it
      const int depth = cv_depth(tensor.type);
      if (tensor.type == ElementType::f32 || tensor.type == ElementType::u8 ||
          tensor.type == ElementType::boolean) {
        net_.setInput(cv::Mat(static_cast<int>(dims.size()), dims.data(), depth, data),
                      tensor.name);
        continue;
      }
      cv::Mat& converted = inputs_[i];
      converted.create(static_cast<int>(dims.size()), dims.data(), CV_32F);
      if (depth >= 0) {
        cv::Mat(static_cast<int>(dims.size()), dims.data(), depth, data)
            .convertTo(converted, CV_32F);
      } else {  // i64
        const auto* src = static_cast<const int64_t*>(data);
        auto* dst = converted.ptr<float>();
        for (size_t k = 0; k < converted.total(); ++k) dst[k] = static_cast<float>(src[k]);
      }
      net_.setInput(converted, tensor.name);
    }
    return {};
  }

  Result<void> copy_outputs(const Bindings& buffers) {
    for (size_t i = 0; i < model_.outputs.size(); ++i) {
      const TensorInfo& tensor = model_.outputs[i];
      cv::Mat out = outputs_[i].isContinuous() ? outputs_[i] : outputs_[i].clone();
      const size_t elements = tensor.bytes / element_size(tensor.type);
      if (out.total() != elements)
        return fail(ErrorCode::device,
                    "output '" + tensor.name + "': OpenCV produced " + std::to_string(out.total()) +
                        " elements, the model declares " + std::to_string(elements));
      std::byte* dst = buffers.outputs[i].data();
      const int depth = cv_depth(tensor.type);
      if (out.depth() == depth) {
        std::memcpy(dst, out.data, tensor.bytes);
      } else if (depth >= 0) {
        cv::Mat target(out.dims, out.size.p, CV_MAKETYPE(depth, out.channels()), dst);
        out.convertTo(target, depth);
      } else {  // i64 from OpenCV's float
        cv::Mat values;
        out.convertTo(values, CV_64F);
        const auto* src = values.ptr<double>();
        for (size_t k = 0; k < elements; ++k) {
          const int64_t v = static_cast<int64_t>(src[k]);
          std::memcpy(dst + k * sizeof v, &v, sizeof v);
        }
      }
    }
    return {};
  }

  cv::dnn::Net net_;
  const ModelInfo& model_;  // the device's, set before the sessions start, outlives them
  std::shared_ptr<const std::vector<std::string>> output_names_;  // OpenCV's, model order
  std::vector<cv::Mat> inputs_;   // scratch for inputs OpenCV cannot take as they are
  std::vector<cv::Mat> outputs_;  // what forward() returned last
};

class OpenCvRuntime final : public Runtime {
 public:
  explicit OpenCvRuntime(const CpuConfig& config) : config_(config) {
    // OpenCV's thread count is process-wide: the last cpu device opened sets it.
    cv::setNumThreads(static_cast<int>(config_.threads));
  }

  void describe(DeviceInfo& info) const override {
    info.description = "OpenCV " + std::string(CV_VERSION) + " DNN on the host CPU (" +
                       std::to_string(config_.threads) + " threads, " +
                       std::to_string(config_.workers) + " workers)";
    info.properties["opencv_version"] = CV_VERSION;
    info.properties["backend"] = "opencv";
  }

  Result<LoadedModel> load(ModelBytes read, const std::string& name,
                           const std::vector<InputShape>& shapes, LoadTimings& timings) override {
    const Nanos t1 = steady_clock().now();
    auto normalized = prepare_onnx_model(std::move(read), name, shapes);
    if (!normalized) return tl::unexpected(normalized.error());
    // The sessions keep a reference to the info: it lives in model_, which
    // the pool sets from LoadedModel before starting them.
    info_ = std::move(normalized->info);
    const std::span<const std::byte> bytes = normalized->model.bytes;
    const OpenCvModel prepared = prepare_for_opencv(bytes, info_);
    auto nets = import_nets(bytes, prepared, config_.workers);
    if (!nets) return tl::unexpected(nets.error());
    const Nanos t2 = steady_clock().now();
    timings.parse = t2 - t1;
    auto names = configure_nets(*nets, info_, prepared.op_types);
    if (!names) return tl::unexpected(names.error());
    auto output_names = std::make_shared<const std::vector<std::string>>(std::move(*names));
    LoadedModel loaded;
    loaded.info = info_;
    for (auto& net : *nets)
      loaded.sessions.push_back(
          std::make_unique<OpenCvSession>(std::move(net), info_, output_names));
    timings.compile = steady_clock().now() - t2;
    return loaded;
  }

  Result<std::unique_ptr<BoundBuffers>> bind(const ModelInfo&, const Bindings& buffers) override {
    return std::make_unique<BoundBuffers>(buffers);
  }

 private:
  const CpuConfig config_;
  ModelInfo info_;  // the loaded model's, read by the sessions
};

}  // namespace

std::unique_ptr<Runtime> make_opencv_runtime(const CpuConfig& config) {
  return std::make_unique<OpenCvRuntime>(config);
}

}  // namespace rig::cpu

#include "devices/cpu/opencv_import.hpp"

#include <map>

#include <onnx/onnx_pb.h>
#include <opencv2/core.hpp>
#include <opencv2/core/utils/logger.hpp>

namespace rig::cpu {
namespace {

// Maps an OpenCV import failure to an Error. OpenCV names the failing node as
// "Node [TopK@ai.onnx]:(onnx_node!topk0) parse error: ..."; without that, the
// model's op types are listed so the user can see what OpenCV was given.
Error import_error_alone(const std::string& what, const std::set<std::string>& op_types);

// The listed nodes OpenCV has no parser for, then the importer's own (first)
// refusal: it stops at the first problem, the list names every one.
Error import_error(const std::string& what, const OpenCvModel& model) {
  Error first = import_error_alone(what, model.op_types);
  if (model.unparsed.empty()) return first;
  std::string list;
  for (const auto& node : model.unparsed) list += (list.empty() ? "" : "; ") + node;
  return Error{ErrorCode::unsupported,
               std::string("the cpu device (OpenCV ") + CV_VERSION + ") has no importer for " +
                   std::to_string(model.unparsed.size()) +
                   (model.unparsed.size() == 1 ? " node: " : " nodes: ") + list +
                   ". The importer's first refusal: " + first.message};
}

Error import_error_alone(const std::string& what, const std::set<std::string>& op_types) {
  const std::string prefix = std::string("the cpu device (OpenCV ") + CV_VERSION + ") ";
  size_t node = what.find("Node [");
  if (node != std::string::npos) {
    size_t start = node + 6;
    size_t end = what.find_first_of("@]", start);
    std::string op = what.substr(start, end == std::string::npos ? 0 : end - start);
    std::string name;
    if (size_t open = what.find("]:(", start); open != std::string::npos) {
      name = what.substr(open + 3, what.find(')', open) - open - 3);
      if (name.rfind("onnx_node!", 0) == 0) name = name.substr(10);
    }
    if (what.find("Can't create layer") != std::string::npos)
      return Error{ErrorCode::unsupported,
                   prefix + "does not support ONNX op '" + op + "' (node '" + name + "')"};
    return Error{ErrorCode::unsupported, prefix + "cannot import ONNX op '" + op + "' (node '" +
                                             name + "'): " + short_reason(what)};
  }
  std::string ops;
  for (const auto& op : op_types) ops += (ops.empty() ? "" : ", ") + op;
  return Error{ErrorCode::unsupported,
               prefix + "cannot import the model: " + short_reason(what) + " (ops: " + ops + ")"};
}

// Silences OpenCV's own log while importing: its errors reach the user as
// Error values, and the duplicate on stderr would only confuse. The level is
// process-wide; devices are loaded from one thread.
class QuietOpenCvLog {
 public:
  QuietOpenCvLog()
      : previous_(cv::utils::logging::setLogLevel(cv::utils::logging::LOG_LEVEL_SILENT)) {}
  ~QuietOpenCvLog() { cv::utils::logging::setLogLevel(previous_); }
  QuietOpenCvLog(const QuietOpenCvLog&) = delete;
  QuietOpenCvLog& operator=(const QuietOpenCvLog&) = delete;

 private:
  cv::utils::logging::LogLevel previous_;
};

}  // namespace

// The first line of an OpenCV message without its "OpenCV(4.6.0) file:line:
// error: (-2:Unspecified error)" prefix.
std::string short_reason(const std::string& what) {
  std::string text = what;
  size_t pos = text.rfind("error: (");
  if (pos != std::string::npos) {
    size_t close = text.find(") ", pos);
    if (close != std::string::npos) text = text.substr(close + 2);
  }
  text = text.substr(0, text.find('\n'));
  if (size_t in_function = text.find(" in function "); in_function != std::string::npos)
    text = text.substr(0, in_function);
  return text;
}

OpenCvModel prepare_for_opencv(std::span<const std::byte> bytes, const ModelInfo& info) {
  OpenCvModel model;
  onnx::ModelProto proto;
  if (!proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) return model;
  for (const auto& node : proto.graph().node()) model.op_types.insert(node.op_type());
  {
    std::map<std::string, std::string> shapes;  // tensor -> "1x3x8x8"
    auto text = [](const auto& dims) {
      std::string s;
      for (const auto& d : dims) s += (s.empty() ? "" : "x") + d;
      return s.empty() ? std::string("scalar") : s;
    };
    auto from_type = [&](const onnx::ValueInfoProto& v) {
      if (!v.type().has_tensor_type() || !v.type().tensor_type().has_shape()) return;
      std::vector<std::string> dims;
      for (const auto& d : v.type().tensor_type().shape().dim())
        dims.push_back(d.has_dim_value() ? std::to_string(d.dim_value())
                                         : (d.dim_param().empty() ? "?" : d.dim_param()));
      shapes[v.name()] = text(dims);
    };
    for (const auto& v : proto.graph().input()) from_type(v);
    for (const auto& v : proto.graph().value_info()) from_type(v);
    for (const auto& v : proto.graph().output()) from_type(v);
    for (const auto& t : proto.graph().initializer()) {
      std::vector<std::string> dims;
      for (int64_t d : t.dims()) dims.push_back(std::to_string(d));
      shapes[t.name()] = text(dims);
    }
    std::map<std::string, int64_t> opsets;
    for (const auto& o : proto.opset_import())
      opsets[o.domain() == "ai.onnx" ? "" : o.domain()] = o.version();
    for (const auto& node : proto.graph().node()) {
      const std::string domain = node.domain() == "ai.onnx" ? "" : node.domain();
      if (opencv_has_parser(domain, node.op_type())) continue;
      std::string inputs;
      for (const auto& in : node.input()) {
        if (in.empty()) continue;
        auto it = shapes.find(in);
        inputs += (inputs.empty() ? "" : ", ") + (it == shapes.end() ? "?" : it->second);
      }
      auto opset = opsets.find(domain);
      model.unparsed.push_back((domain.empty() ? "" : domain + "::") + node.op_type() + " '" +
                               node.name() + "' (opset " +
                               (opset == opsets.end() ? "?" : std::to_string(opset->second)) +
                               ", inputs " + (inputs.empty() ? "none" : inputs) + ")");
    }
  }
  bool changed = false;
  for (int i = 0; i < proto.graph().output_size(); ++i) {
    auto* type = proto.mutable_graph()->mutable_output(i)->mutable_type();
    if (!type->has_tensor_type() || type->tensor_type().has_shape()) continue;
    auto* shape = type->mutable_tensor_type()->mutable_shape();
    for (int64_t d : info.outputs[static_cast<size_t>(i)].shape) shape->add_dim()->set_dim_value(d);
    changed = true;
  }
  if (changed) model.patched = proto.SerializeAsString();
  return model;
}

Result<std::vector<cv::dnn::Net>> import_nets(std::span<const std::byte> bytes,
                                              const OpenCvModel& model, uint32_t count) {
  const bool patched = !model.patched.empty();
  const char* data = patched ? model.patched.data() : reinterpret_cast<const char*>(bytes.data());
  const size_t size = patched ? model.patched.size() : bytes.size();
  std::vector<cv::dnn::Net> nets;
  try {
    QuietOpenCvLog quiet;
    for (uint32_t i = 0; i < count; ++i) nets.push_back(cv::dnn::readNetFromONNX(data, size));
  } catch (const std::exception& e) {
    return tl::unexpected(import_error(e.what(), model));
  } catch (...) {
    return tl::unexpected(import_error("unknown exception", model));
  }
  return nets;
}

Result<std::vector<std::string>> configure_nets(std::vector<cv::dnn::Net>& nets,
                                                const ModelInfo& info,
                                                const std::set<std::string>& op_types) {
  std::vector<std::string> names;
  try {
    auto& net = nets.front();
    bool all_found = true;
    for (const auto& output : info.outputs) {
      names.push_back(output.name);
      all_found = all_found && net.getLayerId(output.name) >= 0;
    }
    if (!all_found) {
      // Fall back to OpenCV's own output names when they line up one to one.
      auto unconnected = net.getUnconnectedOutLayersNames();
      if (unconnected.size() != info.outputs.size())
        return fail(ErrorCode::unsupported,
                    "the cpu device cannot map the model's " + std::to_string(info.outputs.size()) +
                        " outputs to OpenCV's " + std::to_string(unconnected.size()));
      names.assign(unconnected.begin(), unconnected.end());
    }
    for (auto& n : nets) {
      n.setPreferableBackend(cv::dnn::DNN_BACKEND_OPENCV);
      n.setPreferableTarget(cv::dnn::DNN_TARGET_CPU);
    }
  } catch (const std::exception& e) {
    return tl::unexpected(import_error_alone(e.what(), op_types));
  }
  return names;
}

}  // namespace rig::cpu

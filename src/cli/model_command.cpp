// rig model transport|cnn|inspect|normalize: build the rig's own ONNX models,
// show what a model holds and whether the cpu device runs it, or write it as
// the load-time normalisation pass rewrites it.
#include <cstdio>
#include <memory>

#include "cli/command.hpp"
#include "cli/options.hpp"
#include "rig/model.hpp"
#include "rig/output_file.hpp"
#include "rig/report/document.hpp"
#include "rig/report/model_report.hpp"
#include "rig/scenario/run.hpp"
#include "rig/units.hpp"

namespace rig::cli {
namespace {

struct ModelOptions {
  std::string output;
  std::string frame = "512p";
  std::string input_type = "u8";
  double output_fraction = 0.25;
  int64_t channels = 4;
  // cnn
  std::string cnn_frame = "224x224";
  int64_t layers = 4, width = 16, classes = 10;
  uint64_t seed = 1;
  std::string inspect_path;
  std::vector<std::string> shapes;  // --shape (inspect, normalize)
  bool json = false;                // inspect --json
  std::string normalize_input;
  bool cpu_forms = false;  // normalize --cpu-forms
};

Result<std::vector<InputShape>> parse_shapes(const std::vector<std::string>& texts) {
  std::vector<InputShape> shapes;
  for (const auto& text : texts) {
    auto shape = parse_input_shape(text);
    if (!shape) return tl::unexpected(shape.error());
    shapes.push_back(std::move(*shape));
  }
  return shapes;
}

int write_model(const std::string& path, const Result<std::vector<std::byte>>& bytes) {
  if (!bytes) return report_error(bytes.error());
  if (auto ok = write_output_file(path, *bytes); !ok) return report_error(ok.error());
  auto info = inspect_onnx(*bytes, path);
  if (!info) return report_error(info.error());
  // With the model on stdout, stdout carries it alone.
  std::fputs(format_model_written_text(path, bytes->size(), *info).c_str(),
             writes_to_stdout(path) ? stderr : stdout);
  return 0;
}

int run_transport(const ModelOptions& o) {
  if (auto ok = check_writable("-o", o.output); !ok) return report_error(ok.error());
  auto frame = parse_frame_size(o.frame);
  if (!frame) return report_error(frame.error());
  TransportSpec spec;
  spec.frame = *frame;
  spec.channels = o.channels;
  if (o.input_type == "u8" || o.input_type == "uint8")
    spec.input_type = ElementType::u8;
  else if (o.input_type == "f32" || o.input_type == "float")
    spec.input_type = ElementType::f32;
  else
    return report_error(
        {ErrorCode::invalid_argument, "--input must be u8 or f32, got '" + o.input_type + "'"});
  spec.output_fraction = o.output_fraction;
  return write_model(o.output, build_transport_model(spec));
}

int run_cnn(const ModelOptions& o) {
  if (auto ok = check_writable("-o", o.output); !ok) return report_error(ok.error());
  auto frame = parse_frame_size(o.cnn_frame);
  if (!frame) return report_error(frame.error());
  CnnSpec spec;
  spec.frame = *frame;
  spec.layers = o.layers;
  spec.channels = o.width;
  spec.classes = o.classes;
  spec.seed = o.seed;
  return write_model(o.output, build_cnn_model(spec));
}

int run_inspect(const ModelOptions& o) {
  auto shapes = parse_shapes(o.shapes);
  if (!shapes) return report_error(shapes.error());
  auto bytes = read_file(o.inspect_path);
  if (!bytes) return report_error(bytes.error());
  auto facts = onnx_facts(*bytes);
  if (!facts) return report_error(facts.error());
  ModelInspection m;
  m.path = o.inspect_path;
  m.facts = std::move(*facts);
  ModelSource source;
  source.path = o.inspect_path;
  source.shapes = *shapes;
  auto prepared = prepare_onnx_model(source);
  if (prepared) {
    m.info = std::move(prepared->info);
  } else {
    m.pass_error = prepared.error();
    m.cpu_reasons.push_back(prepared.error().message);
  }
  if (m.info) {
    // The cpu device's own answer: it loads the model, as bench would, and
    // runs one inference on generated inputs (some models import, then fail
    // at their first forward).
    auto device = open_spec(parse_device_option("cpu:workers=1"));
    if (!device) return report_error(device.error());
    RunSettings once;
    once.device = "cpu:workers=1";
    auto ran = run_model(**device, source, once);
    m.runs_on_cpu = ran.has_value();
    if (!ran) m.cpu_reasons.push_back(ran.error().message);
  }
  if (o.json)
    std::fputs((model_inspection_to_json(m) + "\n").c_str(), stdout);
  else
    std::fputs(terminal_safe(format_model_inspection_text(m)).c_str(), stdout);
  // A wrong --shape is bad input; a model that cannot run is what inspect reports.
  if (m.pass_error && m.pass_error->message.find("--shape") != std::string::npos &&
      !o.shapes.empty())
    return exit_code_for(m.pass_error->code);
  return 0;
}

int run_normalize(const ModelOptions& o) {
  if (auto ok = check_writable("-o", o.output); !ok) return report_error(ok.error());
  auto shapes = parse_shapes(o.shapes);
  if (!shapes) return report_error(shapes.error());
  auto bytes = read_file(o.normalize_input);
  if (!bytes) return report_error(bytes.error());
  NormalizeOptions options;
  options.shapes = *shapes;
  options.opencv_forms = o.cpu_forms;
  auto normalized = normalize_onnx(*bytes, options, o.normalize_input);
  if (!normalized) {
    Error e = normalized.error();
    e.message = "model '" + o.normalize_input + "': " + e.message;
    return report_error(e);
  }
  const std::span<const std::byte> out =
      normalized->changed() ? std::span<const std::byte>(normalized->bytes) : *bytes;
  auto info = inspect_onnx(out, o.output);
  if (!info) return report_error(info.error());
  if (auto ok = write_file_atomic(o.output, out); !ok) return report_error(ok.error());
  const ModelRewrites& n = normalized->report;
  const std::string rewrites = format_rewrites(n);
  std::printf("wrote %s: nodes %llu -> %llu, %s\n", o.output.c_str(),
              static_cast<unsigned long long>(n.nodes_before),
              static_cast<unsigned long long>(n.nodes_after),
              rewrites.empty() ? "no rewrites" : ("rewrites: " + rewrites).c_str());
  for (const auto& note : n.notes) std::printf("  note: %s\n", note.c_str());
  return 0;
}

}  // namespace

Command add_model_command(CLI::App& app) {
  auto o = std::make_shared<ModelOptions>();
  CLI::App* sub = app.add_subcommand("model", "Build the rig's own ONNX models, or inspect one");
  sub->require_subcommand(1);
  CLI::App* transport = sub->add_subcommand(
      "transport", "1x1 convolution with negligible compute: a model that measures the link");
  transport->add_option("-o,--output", o->output, "output .onnx file")->required();
  transport->add_option("--frame", o->frame, "512p, 720p, 1080p, 4k or WxH")->capture_default_str();
  transport->add_option("--input", o->input_type, "input element type: u8 or f32")
      ->capture_default_str();
  transport->add_option("--channels", o->channels, "input channels")
      ->capture_default_str()
      ->check(positive());
  transport->add_option("--out-fraction", o->output_fraction, "output bytes / input bytes")
      ->capture_default_str();
  CLI::App* cnn = sub->add_subcommand("cnn", "N x (conv3x3 + ReLU), global average pool, Gemm");
  cnn->add_option("-o,--output", o->output, "output .onnx file")->required();
  cnn->add_option("--frame", o->cnn_frame, "input frame, WxH or a name")->capture_default_str();
  cnn->add_option("--layers", o->layers, "conv layers")
      ->capture_default_str()
      ->check(in_range(1, 256));
  cnn->add_option("--width", o->width, "channels per conv layer")
      ->capture_default_str()
      ->check(in_range(1, 4096));
  cnn->add_option("--classes", o->classes, "outputs of the final Gemm")
      ->capture_default_str()
      ->check(in_range(1, 1000000));
  cnn->add_option("--seed", o->seed, "seed of the random weights")->capture_default_str();
  CLI::App* inspect =
      sub->add_subcommand("inspect",
                          "Show a model's inputs, outputs, ops, weights, the rewrites the "
                          "normalisation pass applies, and whether the cpu device runs it");
  inspect->add_option("model", o->inspect_path, "ONNX file")->required();
  add_shape_option(inspect, o->shapes);
  inspect->add_flag("--json", o->json, "print the inspection as JSON");
  CLI::App* normalize = sub->add_subcommand(
      "normalize", "Write the model as the load-time normalisation pass rewrites it");
  normalize->add_option("model", o->normalize_input, "ONNX file")->required();
  normalize->add_option("-o,--output", o->output, "output .onnx file")->required();
  add_shape_option(normalize, o->shapes);
  normalize->add_flag("--cpu-forms", o->cpu_forms,
                      "also apply the rewrites only the cpu device's runtime (OpenCV 4.6) needs: "
                      "Clip bounds as attributes, which ONNX opset >= 11 does not define (the "
                      "output is then for OpenCV, not a valid ONNX model)");
  return {sub, [o, transport, cnn, inspect, normalize] {
            if (transport->parsed()) return run_transport(*o);
            if (cnn->parsed()) return run_cnn(*o);
            if (inspect->parsed()) return run_inspect(*o);
            if (normalize->parsed()) return run_normalize(*o);
            return 2;
          }};
}

}  // namespace rig::cli

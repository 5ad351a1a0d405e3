// rig run MODEL -d DEVICE [--input FILE[,FILE...]|NAME=FILE] [--output DIR [--bin]]
//         [--reference OUT.npy[,...] [--atol A --rtol R]] [--json FILE]
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <set>
#include <system_error>

#include "cli/command.hpp"
#include "cli/options.hpp"
#include "rig/model.hpp"
#include "rig/report/run_report.hpp"
#include "rig/scenario/run.hpp"
#include "rig/tensor_io.hpp"

namespace rig::cli {
namespace {

struct RunOptions {
  std::string model;
  std::vector<std::string> shapes;
  std::string device = "cpu";
  std::vector<std::string> inputs;
  std::string output_dir;
  bool bin = false;
  std::vector<std::string> references;
  double atol = 1e-5, rtol = 1e-3;
  uint64_t seed = 1;
  std::string json;
  bool quiet = false;
};

// A tensor name as a file name: anything but [A-Za-z0-9._-] becomes '_'.
std::string file_stem(const std::string& name, size_t index) {
  std::string out;
  for (char c : name)
    out +=
        (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-') ? c : '_';
  if (out.empty() || out == "." || out == "..") out = "output" + std::to_string(index);
  return out;
}

Result<void> write_outputs(const RunResult& r, const std::string& dir, bool bin, bool quiet) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return fail(ErrorCode::io, "--output: cannot create " + dir + ": " + ec.message());
  std::set<std::string> used;
  for (size_t i = 0; i < r.outputs.size(); ++i) {
    const auto& o = r.outputs[i];
    std::string name = file_stem(o.info.name, i);
    // Two names that map to one file name ("a/b", "a_b") keep apart by index.
    if (!used.insert(name).second) used.insert(name += "." + std::to_string(i));
    const std::string stem = (std::filesystem::path(dir) / name).string();
    if (auto ok = write_file_atomic(stem + ".npy", encode_npy(o.info.type, o.info.shape, o.bytes));
        !ok)
      return ok;
    if (bin)
      if (auto ok = write_file_atomic(stem + ".bin", o.bytes); !ok) return ok;
    if (!quiet) std::fprintf(stderr, "rig: wrote %s.npy%s\n", stem.c_str(), bin ? " and .bin" : "");
  }
  return {};
}

int run_run_command(const RunOptions& o) {
  RunSettings s;
  const DeviceOption device_option = parse_device_option(o.device);
  s.device = device_option.display;
  s.inputs = o.inputs;
  s.references = o.references;
  s.atol = o.atol;
  s.rtol = o.rtol;
  s.seed = o.seed;
  if (auto ok = validate(s); !ok) return report_error(ok.error());
  auto opened = open_model_on_device(o.json, o.model, o.shapes, device_option);
  if (!opened) return report_error(opened.error());
  auto& model = opened->model;
  auto& device = opened->device;
  s.model = model_origin(model);
  auto result = run_model(*device, model, s);
  if (!result) return report_error(result.error());
  if (!o.output_dir.empty())
    if (auto ok = write_outputs(*result, o.output_dir, o.bin, o.quiet); !ok)
      return report_error(ok.error());
  const int status =
      finish(format_run_text(*result), run_to_json(*result), o.json, o.quiet, Verdict{}, false);
  if (status != 0) return status;
  return result->references_passed ? 0 : 1;
}

}  // namespace

Command add_run_command(CLI::App& app) {
  auto o = std::make_shared<RunOptions>();
  CLI::App* sub = app.add_subcommand(
      "run", "Run a model once on exact input bytes; write and describe its outputs");
  sub->add_option("model", o->model, "ONNX model (or server:NAME)")->required();
  add_shape_option(sub, o->shapes);
  add_device_option(sub, o->device);
  sub->add_option("--input", o->inputs,
                  "input files in the model's input order, or NAME=FILE: raw .bin of the "
                  "input's byte size, or .npy (dtype and shape checked); default: generated")
      ->delimiter(',');
  sub->add_option("--output", o->output_dir, "write each output as DIR/NAME.npy");
  sub->add_flag("--bin", o->bin, "with --output: also write each output as raw NAME.bin");
  sub->add_option("--reference", o->references,
                  "reference outputs (.npy, in the model's output order); exit 1 when outside "
                  "tolerance")
      ->delimiter(',');
  sub->add_option("--atol", o->atol, "absolute tolerance: |a - r| <= atol + rtol |r|")
      ->capture_default_str();
  sub->add_option("--rtol", o->rtol, "relative tolerance")->capture_default_str();
  sub->add_option("--seed", o->seed, "seed of generated inputs")->capture_default_str();
  sub->add_option("--json", o->json, "also write the result as JSON to this file");
  sub->add_flag("-q,--quiet", o->quiet, "no messages on stderr");
  return {sub, [o] { return run_run_command(*o); }};
}

}  // namespace rig::cli

// rig run MODEL -d DEVICE [--input FILE[,FILE...]|NAME=FILE] [--output DIR [--bin]]
//         [--reference OUT.npy[,...] [--atol A --rtol R]] [--json FILE]
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <set>
#include <system_error>

#include "cli/command.hpp"
#include "cli/measure.hpp"
#include "cli/options.hpp"
#include "cli/point_options.hpp"
#include "rig/model.hpp"
#include "rig/report/run_report.hpp"
#include "rig/scenario/run.hpp"
#include "rig/tensor_io.hpp"

namespace rig::cli {
namespace {

struct RunCommand {
  RunSettings s;  // the options' defaults are its own
  std::string output_dir;
  bool bin = false;
  MeasureOptions o;
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

int run_run_command(RunCommand& c) {
  MeasureSteps<RunSettings, RunResult> steps{
      .run = run_model,
      .text = format_run_text,
      .json = run_to_json,
      .after = [&c](const RunResult& r) -> Result<void> {
        if (c.output_dir.empty()) return {};
        return write_outputs(r, c.output_dir, c.bin, c.o.quiet);
      },
      .passed = [](const RunResult& r) { return r.references_passed; },
      .library_versions = false,
  };
  return run_command(c.s, c.o, steps);
}

}  // namespace

Command add_run_command(CLI::App& app) {
  auto c = std::make_shared<RunCommand>();
  RunSettings& s = c->s;
  MeasureOptions& o = c->o;
  CLI::App* sub = app.add_subcommand(
      "run", "Run a model once on exact input bytes; write and describe its outputs");
  add_model_argument(sub, s.model, "ONNX model (or server:NAME)")->required();
  add_shape_option(sub, o.shapes);
  add_device_option(sub, s.device);
  sub->add_option("--input", s.inputs,
                  "input files in the model's input order, or NAME=FILE: raw .bin of the "
                  "input's byte size, or .npy (dtype and shape checked); default: generated")
      ->delimiter(',');
  sub->add_option("--output", c->output_dir, "write each output as DIR/NAME.npy");
  sub->add_flag("--bin", c->bin, "with --output: also write each output as raw NAME.bin");
  sub->add_option("--reference", s.references,
                  "reference outputs (.npy, in the model's output order); exit 1 when outside "
                  "tolerance")
      ->delimiter(',');
  sub->add_option("--atol", s.atol, "absolute tolerance: |a - r| <= atol + rtol |r|")
      ->capture_default_str();
  sub->add_option("--rtol", s.rtol, "relative tolerance")->capture_default_str();
  add_seed_option(sub, s.seed, "seed of generated inputs");
  add_json_option(sub, o.json);
  add_quiet_option(sub, o.quiet, "no messages on stderr");
  return {sub, [c] { return run_run_command(*c); }};
}

}  // namespace rig::cli

#include "cli/options.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>

#include <CLI/CLI.hpp>

#include "cli/command.hpp"
#include "rig/device_registry.hpp"
#include "rig/device_spec.hpp"
#include "rig/history.hpp"
#include "rig/output_file.hpp"
#include "rig/report/document.hpp"
#include "rig/scenario/run.hpp"
#include "rig/units.hpp"

namespace rig::cli {

namespace {

// The word where the subcommand belongs: the first argument that is not an
// option of the app itself (--history takes a value).
std::optional<std::string> command_word(int argc, const char* const* argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--history") {
      ++i;
      continue;
    }
    if (!arg.empty() && arg[0] == '-') continue;
    return arg;
  }
  return std::nullopt;
}

}  // namespace

std::optional<Error> argument_error(const CLI::App& app) {
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (!sub->parsed()) continue;
    for (const CLI::Option* o : sub->get_options()) {
      // Seeds are unsigned: CLI11 would wrap -1 to 18446744073709551615.
      if (o->get_name() == "--seed")
        for (const std::string& r : o->results())
          if (!r.empty() && r.front() == '-')
            return Error{
                ErrorCode::invalid_argument,
                "rig " + sub->get_name() + ": --seed must be a whole number >= 0, got '" + r + "'"};
      if (!o->get_positional() || (o->get_name() != "model" && o->get_name() != "models")) continue;
      for (const std::string& r : o->results())
        if (r.empty())
          return Error{ErrorCode::invalid_argument,
                       "rig " + sub->get_name() +
                           ": the model path is empty (''): give an ONNX file, or leave the "
                           "argument out for the built-in demo model"};
    }
    if (auto e = argument_error(*sub)) return e;
  }
  return std::nullopt;
}

int report_parse_error(const CLI::App& app, const CLI::ParseError& error, int argc,
                       const char* const* argv) {
  std::vector<std::string> names;
  bool chosen = false;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    names.push_back(sub->get_name());
    chosen = chosen || sub->parsed();
  }
  std::string message = error.what();
  if (!chosen) {
    const auto word = command_word(argc, argv);
    if (word && std::find(names.begin(), names.end(), *word) == names.end()) {
      const std::string nearest = nearest_word(*word, names);
      message = "unknown command '" + *word + "'";
      if (!nearest.empty()) message += " (did you mean '" + nearest + "'?)";
      message += "; rig --help lists the commands";
    } else if (!word && dynamic_cast<const CLI::RequiredError*>(&error)) {
      message = "a command is required; rig --help lists them";
    }
  }
  std::fprintf(stderr, "rig: error: %s\n", message.c_str());
  return 2;
}

Result<Nanos> positive_duration(const std::string& option, const std::string& text) {
  auto d = parse_duration(text);
  if (!d) return fail(ErrorCode::invalid_argument, option + ": " + d.error().message);
  if (*d <= Nanos(0))
    return fail(ErrorCode::invalid_argument, option + " must be positive, got '" + text + "'");
  return *d;
}

Result<uint32_t> depth_option(const std::optional<uint32_t>& depth) {
  if (depth && *depth == 0) return fail(ErrorCode::invalid_argument, "--depth must be >= 1, got 0");
  return depth.value_or(0);
}

Result<void> check_writable(const std::string& option, const std::string& path) {
  if (auto ok = check_output_path(path); !ok)
    return fail(ok.error().code, option + ": " + ok.error().message);
  return {};
}

CLI::Option* add_device_option(CLI::App* sub, std::string& device, std::string_view role) {
  return sub->add_option("-d,--device", device, device_option_help(role))->capture_default_str();
}

DeviceOption parse_device_option(const std::string& text) {
  DeviceOption device{parse_device_spec(text), {}};
  device.display = device.spec ? device.spec->given_text() : redact_secrets(text);
  return device;
}

namespace {

// The history a measuring command appends to, opened and checked before it
// measures (once per process): a run that cannot be recorded is refused at
// once, naming the way out, instead of after the measurement.
Result<void> check_history_before_measuring() {
  static std::optional<Result<void>> checked;
  if (checked) return *checked;
  const std::string path = history_path();
  checked = Result<void>{};
  if (path.empty()) return *checked;
  auto history = History::open(path);
  Result<void> ok = history ? history->check_append(std::chrono::seconds(2))
                            : Result<void>(tl::unexpected(history.error()));
  if (!ok)
    checked = fail(ok.error().code, ok.error().message +
                                        "; nothing was measured: fix or move it, or give "
                                        "--history PATH or --no-history");
  return *checked;
}

}  // namespace

Result<ModelSource> resolve_model(const std::string& path, const std::vector<std::string>& shapes) {
  if (auto ok = check_history_before_measuring(); !ok) return tl::unexpected(ok.error());
  std::vector<InputShape> parsed;
  for (const auto& text : shapes) {
    auto shape = parse_input_shape(text);
    if (!shape) return tl::unexpected(shape.error());
    parsed.push_back(std::move(*shape));
  }
  auto source = resolve_model_source(path);
  if (!source) return source;
  source->shapes = std::move(parsed);
  return source;
}

void add_shape_option(CLI::App* sub, std::vector<std::string>& shapes) {
  sub->add_option("--shape", shapes,
                  "fix a dynamic input's shape, NAME=1x3x224x224 (repeatable, one per input)")
      ->take_all()
      ->allow_extra_args(false);
}

void add_input_option(CLI::App* sub, std::vector<std::string>& inputs) {
  sub->add_option("--input", inputs,
                  "measure on these files' data instead of generated data: .npy (dtype and "
                  "shape checked) or raw .bin, in the model's input order or NAME=FILE; several "
                  "files per input are frames, each bound to its own request slot(s)")
      ->take_all()
      ->allow_extra_args(false);
}

Result<std::shared_ptr<const InputFiles>> input_files_option(
    const std::vector<std::string>& inputs) {
  return read_input_files(inputs);
}

Result<std::unique_ptr<Device>> open_spec(const DeviceOption& device) {
  if (auto ok = check_history_before_measuring(); !ok) return tl::unexpected(ok.error());
  if (!device.spec) return tl::unexpected(device.spec.error());
  auto opened = open_device(*device.spec);
  // At the hello, before anything is measured: a served device on a virtual
  // clock that is not paced to the wall clock makes every figure INVALID.
  if (opened && *opened) {
    const DeviceInfo info = (*opened)->info();
    if (info.kind == "remote" && info.clock == ClockKind::virtual_time && !info.paced_clock)
      std::fprintf(stderr,
                   "rig: warning: the server's device runs on a virtual clock not paced to the "
                   "wall clock: what is timed here across the link is INVALID; serve the sim "
                   "with realtime=1 (rig serve -d 'sim:...,realtime=1')\n");
  }
  return opened;
}

Result<ModelOnDevice> open_model_on_device(const std::string& json, const std::string& model,
                                           const std::vector<std::string>& shapes,
                                           const DeviceOption& device) {
  if (!json.empty())
    if (auto ok = check_writable("--json", json); !ok) return tl::unexpected(ok.error());
  auto source = resolve_model(model, shapes);
  if (!source) return tl::unexpected(source.error());
  auto opened = open_spec(device);
  if (!opened) return tl::unexpected(opened.error());
  return ModelOnDevice{std::move(*source), std::move(*opened)};
}

namespace {

HistoryOptions& mutable_history_options() {
  static HistoryOptions options;
  return options;
}

}  // namespace

void add_history_options(CLI::App& app) {
  auto& o = mutable_history_options();
  app.fallthrough();  // inherited by the subcommands added after this
  app.add_option("--history", o.path,
                 "the run history database (default: $RIG_HISTORY, else "
                 "$XDG_DATA_HOME/rig/history.sqlite)");
  app.add_flag("--no-history", o.disabled, "do not append this run to the history");
}

const HistoryOptions& history_options() {
  return mutable_history_options();
}

std::string history_path() {
  const auto& o = history_options();
  if (o.disabled) return {};
  return o.path.empty() ? default_history_path() : o.path;
}

int finish(const std::string& text, const std::string& json_document, const std::string& json_path,
           bool quiet, const Verdict& verdict, bool strict) {
  // The result and the history first, the report after: a reader of stdout
  // that goes away (`| head`, EPIPE) ends the report, never the run.
  const bool json_on_stdout = writes_to_stdout(json_path);
  std::optional<int> status;
  std::string messages;  // printed after the report, as before
  if (!json_path.empty()) {
    if (auto ok = write_json_file(json_path, json_document); !ok) {
      status = report_error(ok.error());
    } else if (!quiet && !json_on_stdout) {
      messages += "rig: wrote " + json_path + "\n";
    }
  }
  // The history comes after the result: a broken history never costs it. A
  // failed append is an I/O fault of rig's own store (exit 3), after the
  // measurement: the message says where the result is.
  if (const std::string path = history_path(); !path.empty()) {
    auto history = History::open(path);
    Result<int64_t> id = history ? history->append(json_document, now_unix_ms())
                                 : Result<int64_t>(tl::unexpected(history.error()));
    if (!id) {
      const std::string kept = json_path.empty()
                                   ? std::string("the result was not written to a file (no --json)")
                                   : "the result is kept in " + json_path;
      if (status) {
        std::fprintf(stderr, "rig: error: history: %s\n",
                     terminal_safe(id.error().to_string()).c_str());
      } else {
        std::fprintf(stderr, "rig: error: history: %s; the run is not recorded; %s\n",
                     terminal_safe(id.error().to_string()).c_str(), terminal_safe(kept).c_str());
        status = 3;
      }
    } else if (!quiet) {
      messages += "rig: history: run " + std::to_string(*id) + " in " + path + "\n";
    }
  }
  // With the JSON on stdout, stdout carries it alone. A failed write here
  // (EPIPE: SIGPIPE is ignored, main.cpp) loses only the printed report.
  std::fputs(terminal_safe(text).c_str(), json_on_stdout ? stderr : stdout);
  std::fflush(json_on_stdout ? stderr : stdout);
  std::fputs(terminal_safe(messages).c_str(), stderr);
  if (verdict.failure)
    std::fprintf(stderr, "rig: error: the device or its link failed during the run: %s\n",
                 terminal_safe(verdict.failure->to_string()).c_str());
  return status ? *status : strict_exit_status(verdict, strict);
}

int64_t now_unix_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace rig::cli

// Helpers shared by subcommands: turning option text into checked values.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <memory>
#include <vector>

namespace CLI {
class App;
class Option;
}  // namespace CLI

#include "rig/clock.hpp"
#include "rig/device.hpp"
#include "rig/device_spec.hpp"
#include "rig/error.hpp"
#include "rig/input_data.hpp"
#include "rig/model.hpp"
#include "rig/scenario/verdict.hpp"

namespace rig::cli {

// A duration option that must be > 0; the error names the option.
Result<Nanos> positive_duration(const std::string& option, const std::string& text);

// --depth: the value when given (>= 1, else invalid_argument naming the
// option), 0 ("the device's queue depth") when not.
Result<uint32_t> depth_option(const std::optional<uint32_t>& depth);

// check_output_path (rig/output_file.hpp) with the option named: io when
// `path` cannot be written (a directory, a socket, a missing or unwritable
// directory), before any measurement starts.
Result<void> check_writable(const std::string& option, const std::string& path);

// The model to use (resolve_model_source, rig/model.hpp: `path` if given,
// which must exist; "server:NAME"; else the built-in demo) with its --shape
// NAME=DIMS texts (parse_input_shape), applied where the model is loaded.
// The history is checked first: a run it could not record is not measured.
Result<ModelSource> resolve_model(const std::string& path, const std::vector<std::string>& shapes);

// --shape NAME=DIMS, repeatable: on every command that loads a model.
void add_shape_option(CLI::App* sub, std::vector<std::string>& shapes);

// --input FILE|NAME=FILE, repeatable: the measuring commands (bench, loop,
// sweep, ab, soak) bind these files' data (rig run's reader and mapping;
// several files per input: one frame each) in place of generated data.
void add_input_option(CLI::App* sub, std::vector<std::string>& inputs);
// Reads them (read_input_files); nullptr when none were given. Errors name
// the file (a missing file, a FIFO without a writer).
Result<std::shared_ptr<const InputFiles>> input_files_option(
    const std::vector<std::string>& inputs);

// -d,--device bound to `device`, its default shown, its help the registry's
// (device_option_help: `role`, the kinds built into this binary).
CLI::Option* add_device_option(CLI::App* sub, std::string& device,
                               std::string_view role = "device spec");

// A -d spec, parsed once per command. `display` is the spec as every output
// and result shows it: the parsed spec's display form (DeviceSpec::given_text),
// secrets redacted; the text with its secrets redacted when it does not parse.
// A parse error is reported where the command opens the device (open_spec),
// so the settings' own checks come first.
struct DeviceOption {
  Result<DeviceSpec> spec;
  std::string display;
};
DeviceOption parse_device_option(const std::string& text);

// Opens the device a parsed -d spec names, or returns its parse error.
Result<std::unique_ptr<Device>> open_spec(const DeviceOption& device);

// What a command that runs one model on one device opens once its settings
// are valid, in this order: the --json file's check (when `json` is given),
// the model with its --shape texts, the device. The first failure is returned.
struct ModelOnDevice {
  ModelSource model;
  std::unique_ptr<Device> device;
};
Result<ModelOnDevice> open_model_on_device(const std::string& json, const std::string& model,
                                           const std::vector<std::string>& shapes,
                                           const DeviceOption& device);

// The end of every measuring subcommand: writes the JSON document to
// `json_path` when one was given (write_output_file; "rig: wrote PATH" on
// stderr unless quiet; with "-" or /dev/stdout the text goes to stderr so
// that stdout is the JSON alone), appends the same document to the history
// unless --no-history (rig/history.hpp; "rig: history: run N" on stderr
// unless quiet), then prints the text on stdout (a reader that went away
// loses only the text), and returns the exit status: the write's error,
// else 3 when the history append failed (naming where the result is), else 3 when
// the device or link failed during the run, else 1 when `strict` and the
// verdict is INVALID, else 0.
int finish(const std::string& text, const std::string& json_document, const std::string& json_path,
           bool quiet, const Verdict& verdict, bool strict);

// The wall clock, for the history's record of when a run ended.
int64_t now_unix_ms();

}  // namespace rig::cli

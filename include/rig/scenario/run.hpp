// rig run: one inference on exact input bytes, its outputs with their
// figures, and optionally a comparison with reference outputs. Also the
// pieces rig check and rig compare share: mapping input files onto a model's
// inputs, deterministic generated inputs, and one inference on given bytes.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "rig/device.hpp"
#include "rig/environment.hpp"
#include "rig/input_data.hpp"
#include "rig/scenario/settings.hpp"
#include "rig/tensor_io.hpp"

namespace rig {

// One --input item: "FILE" (the next input in the model's order not named
// otherwise) or "NAME=FILE" where NAME is one of the model's inputs.
// A file ending in .npy is read as .npy (dtype and shape must match the
// input); any other file is raw bytes of exactly the input's byte size.
using InputItem = std::string;

struct RunSettings {
  std::string model;                        // where the model came from (model_origin)
  std::string device = kDefaultDeviceSpec;  // device spec, as given
  std::vector<InputItem> inputs;            // empty: generated inputs from `seed`
  std::vector<std::string> references;      // .npy per output, in the model's order
  double atol = 1e-5;                       // reference rule: |a - r| <= atol + rtol |r|
  double rtol = 1e-3;
  uint64_t seed = 1;  // of generated inputs
};

// Names the bad setting (negative tolerances).
Result<void> validate(const RunSettings& settings);

// The bytes of one input taken from a file's bytes (`path` names it in
// errors). A .npy mismatch is an invalid_argument error listing both: "x.npy:
// input 'data' expects float32 [1, 3, 8, 8], the file holds uint8 [1, 3, 8, 8]".
Result<std::vector<std::byte>> input_from_file(const TensorInfo& tensor, const std::string& path,
                                               std::span<const std::byte> file);

// Generated inputs come from rig/input_data.hpp (generated_input), the one
// generator every scenario shares.

// The inputs a run feeds: the files of `items` mapped onto the model's
// inputs, or generated ones (seed + input index) when `items` is empty.
// `sources` receives, per input, its file or "generated (seed N)".
Result<std::vector<std::vector<std::byte>>> prepare_inputs(const ModelInfo& model,
                                                           const std::vector<InputItem>& items,
                                                           uint64_t seed,
                                                           std::vector<std::string>* sources);

// --input of the measuring commands (bench, loop, sweep, ab, soak): the
// items read now (a missing file, a FIFO without a writer: read_file's
// errors, named), each file's sha256 kept for the record, and mapped onto
// the model's inputs once it is loaded (InputFiles::map, by
// input_from_file: dtype and shape checked). The rule: NAME=FILE items go to
// the input NAME, in order; the positional ones go to the other inputs in
// turn (the first to the first unnamed input, the next to the next, ...).
// Every input must receive the same number of files F: the run has F
// frames, frame k made of each input's k-th file. An empty `items` gives
// nullptr (generated data).
Result<std::shared_ptr<const InputFiles>> read_input_files(const std::vector<InputItem>& items);

// One inference on a loaded device: binds the inputs and fresh output
// buffers, runs, and returns the outputs (one per ModelInfo::outputs).
struct Inference {
  std::vector<std::vector<std::byte>> outputs;
  InferenceTimings timings;
};
Result<Inference> infer(Device& device, std::span<const std::vector<std::byte>> inputs);

struct InputRecord {
  TensorInfo info;
  std::string source;  // a file, or "generated (seed N)"
  TensorStats stats;
};

struct OutputRecord {
  TensorInfo info;
  TensorStats stats;
  std::vector<std::byte> bytes;
};

struct ReferenceRecord {
  std::string path;
  TensorComparison comparison;
  bool passed = false;  // no element outside the tolerance
};

struct RunResult {
  RunSettings settings;
  DeviceInfo device;
  ModelInfo model;
  Environment environment;
  bool virtual_clock = false;
  InferenceTimings timings;  // of the run, as the device reports them
  std::vector<InputRecord> inputs;
  std::vector<OutputRecord> outputs;
  std::vector<ReferenceRecord> references;  // empty when none were given
  bool references_passed = true;
};

// Loads the model, feeds the inputs, runs once and compares with the
// references. Bad files (inputs or references) fail with invalid_argument;
// device failures keep their code.
Result<RunResult> run_model(Device& device, const ModelSource& model, const RunSettings& settings);

}  // namespace rig

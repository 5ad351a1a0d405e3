// The one generator of input data: the bytes `rig run --seed` feeds and
// every measuring scenario binds (bench, sweep, loop, ...). Deterministic in
// the seed and the tensor's type, in the range real inputs have.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "rig/device.hpp"
#include "rig/error.hpp"

namespace rig {

// Fills `out` with elements of `type` from `seed`: [0, 1) for floating types
// (f16: exponent 14 with a random mantissa, [0.5, 1), always normal), [0, 255]
// for wider integers, 0/1 for bool, any byte for 8-bit types. A tail shorter
// than one element is left as it is. Different seeds give different bytes.
void fill_generated(std::span<std::byte> out, ElementType type, uint64_t seed);

// A tensor's bytes from fill_generated (tensor.bytes long).
std::vector<std::byte> generated_input(const TensorInfo& tensor, uint64_t seed);

// The seed of input `input` in request slot `slot` of a measurement seeded
// `seed`: slot 0 takes seed + input, as `rig run --seed` does, so a
// measurement's first frame is the input `rig run` reproduces; the other
// slots hold other data (a device that caches by content sees distinct
// frames).
uint64_t slot_input_seed(uint64_t seed, uint64_t slot, uint64_t input);

// Input data given as files (--input of the measuring commands), read before
// the run: `files` for the record, `map` to turn them into frames once the
// model is loaded and its inputs are known (rig/scenario/run.hpp,
// read_input_files). A frame is one byte vector per model input, each
// exactly its tensor's bytes; map's errors (a dtype, shape or count that
// does not match) are invalid_argument naming the file.
using InputFrame = std::vector<std::vector<std::byte>>;
struct InputFiles {
  struct File {
    std::string path;
    std::string sha256;  // of the file's bytes, as read
    uint64_t bytes = 0;
  };
  std::vector<File> files;  // in the order given
  std::function<Result<std::vector<InputFrame>>(const ModelInfo&)> map;
};

}  // namespace rig

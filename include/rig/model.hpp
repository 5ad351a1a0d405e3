// ONNX models: building the rig's own (transport ladder rungs, a small CNN)
// and inspecting any model's inputs and outputs. Built models use opset 13,
// explicit kernel_shape, and pass onnx::checker; OpenCV 4.6 loads them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "rig/device.hpp"
#include "rig/error.hpp"

namespace rig {

struct FrameSize {
  int64_t width = 0;
  int64_t height = 0;
};

// "512p" (512x512), "720p" (1280x720), "1080p" (1920x1080), "4k" (3840x2160),
// or "WxH". Fails with invalid_argument naming the text.
Result<FrameSize> parse_frame_size(std::string_view text);

// A transport model: a 1x1 convolution with negligible compute, so a run
// measures the link. Input NCHW [1, channels, height, width] of `input_type`
// (u8 or f32). Output: f32, with channel count and stride chosen so that the
// output is `output_fraction` of the input bytes (1/4 by default, as in the
// seed note's ladder), exactly when the frame allows it.
struct TransportSpec {
  FrameSize frame{512, 512};
  int64_t channels = 4;
  ElementType input_type = ElementType::u8;
  double output_fraction = 0.25;
};

// A small CNN: `layers` x (conv3x3 + ReLU) at `channels` wide, global average
// pool, Gemm to `classes`. Random weights from `seed` (deterministic, He-scaled).
// The defaults (about 0.2 GFLOP) take about 3 ms per inference with OpenCV on
// 2 cores; they are the demo model's spec.
struct CnnSpec {
  FrameSize frame{224, 224};
  int64_t input_channels = 3;
  int64_t channels = 8;
  int64_t layers = 4;
  int64_t classes = 10;
  uint64_t seed = 1;
};

// The bytes of a CNN's weights (f32), computed from the spec without building
// it; saturates at UINT64_MAX.
uint64_t cnn_weight_bytes(const CnnSpec& spec);

// The builders compute a model's size first and refuse (limit_exceeded,
// naming the size and the limit) one over kMaxModelBytes, or one whose
// building would need more than half the physical memory (about four copies
// of its weights are held while it is built and serialized).
Result<std::vector<std::byte>> build_transport_model(const TransportSpec& spec);
Result<std::vector<std::byte>> build_cnn_model(const CnnSpec& spec);

// Parses serialized ONNX and returns its real inputs (initializers excluded)
// and outputs with exact byte sizes (dynamic dimensions fixed to 1; output
// shapes from the graph or from ONNX shape inference). Corrupt bytes fail with
// invalid_argument.
Result<ModelInfo> inspect_onnx(std::span<const std::byte> bytes, std::string name);

// --shape NAME=1x3x224x224: NAME is everything before the last '=', the
// dimensions are positive integers joined by 'x'. Errors name the text.
Result<InputShape> parse_input_shape(std::string_view text);

// The load-time normalisation pass over an ONNX graph, run before any device
// sees the model. With the inputs' shapes fixed (`shapes`, else a free leading
// batch dimension set to 1 and noted; any other free dimension is an error
// naming the input, the dimension's name and index) it drops Identity nodes,
// moves constant Clip bounds into attributes, folds constant subgraphs (shape
// arithmetic included, from ONNX shape inference run in a child process) into
// initializers, sets defaulted attributes (Conv kernel_shape, Resize modes),
// removes Expand nodes that change nothing, and removes what became dead. It
// is a fixed-point pass with a cap on work; it never changes what the graph
// computes, and a second run rewrites nothing. Refuses, naming the problem:
// external data, an opset newer than the installed ONNX library knows, an
// unknown input in `shapes`, a wrong rank or a zero dimension.
struct NormalizeOptions {
  std::vector<InputShape> shapes;
  uint64_t max_rounds = 64;                          // fixed-point rounds over the graph
  uint64_t max_folded_elements = uint64_t{1} << 26;  // all folded tensors together
  // Also rewrite into forms that only the cpu device's runtime (OpenCV 4.6's
  // importer) reads and ONNX does not define: Clip's min/max as attributes at
  // opset >= 11 (clip_bounds_to_attributes). For the copy a device loads
  // (prepare_onnx_model); a model written out or uploaded stays valid ONNX.
  bool opencv_forms = false;
};

struct NormalizedModel {
  std::vector<std::byte> bytes;  // the rewritten model; empty: the input as it was
  ModelRewrites report;
  bool changed() const { return !bytes.empty(); }
};

Result<NormalizedModel> normalize_onnx(std::span<const std::byte> bytes,
                                       const NormalizeOptions& options, const std::string& name);

// Facts about an ONNX model for `rig model inspect`: what it holds, before
// any rewriting.
struct OnnxFacts {
  uint64_t nodes = 0;
  uint64_t parameters = 0;                       // elements of every initializer
  std::map<std::string, uint64_t> weight_bytes;  // by element type name ("FLOAT", ...)
  std::map<std::string, uint64_t> op_histogram;  // "domain::Op" or "Op" -> count
  std::map<std::string, int64_t> opsets;         // domain ("" = ai.onnx) -> version
  std::vector<std::string> dynamic_dimensions;   // "input 'x' dimension 0 ('batch')"
};
Result<OnnxFacts> onnx_facts(std::span<const std::byte> bytes);

// A model's bytes as read from a ModelSource: its own bytes (not copied) or
// the file's (owned here). `bytes` views one of them; moving a ModelBytes
// keeps the view valid.
struct ModelBytes {
  std::vector<std::byte> owned;
  std::span<const std::byte> bytes;

  ModelBytes() = default;
  ModelBytes(ModelBytes&&) = default;
  ModelBytes& operator=(ModelBytes&&) = default;
  // A copy's view would still point at the original's buffer.
  ModelBytes(const ModelBytes&) = delete;
  ModelBytes& operator=(const ModelBytes&) = delete;
};

// The one reader of a ModelSource for every device: bytes if given, else the
// file at path. Fails with invalid_argument for a server_name (only a remote
// device can load one; it sends the name) or a source with nothing in it, and
// with not_found / io naming the path.
Result<ModelBytes> read_model_source(const ModelSource& source);

// What every device that runs ONNX loads: the source read, normalised with
// source.shapes (normalize_onnx), then inspected; info.normalization says
// what the pass did. `model.bytes` views the normalised bytes.
struct PreparedModel {
  ModelBytes model;
  ModelInfo info;
};
Result<PreparedModel> prepare_onnx_model(const ModelSource& source);
// The same for bytes already read (`read` is kept when nothing changes).
Result<PreparedModel> prepare_onnx_model(ModelBytes read, const std::string& name,
                                         const std::vector<InputShape>& shapes);

// Whether bytes parse as an ONNX model (a device's own format does not).
bool parses_as_onnx(std::span<const std::byte> bytes);

// The one display-name rule: `name` when set, else the stem of the path (or
// of server_name), else "model".
std::string model_display_name(const ModelSource& source);

// Where a model came from, for the record (a result's settings.model): its
// path, "server:NAME" for a model on the server, or "" for bytes in memory.
std::string model_origin(const ModelSource& source);

// The largest model ONNX can serialize and parse (protobuf's 2 GiB - 1).
inline constexpr uint64_t kMaxModelBytes = 0x7fffffff;

// Reads a whole file; not_found / io errors name the path, an empty path is
// invalid_argument. A file over `max_bytes` fails with limit_exceeded naming
// its size and the limit, checked before anything is read.
Result<std::vector<std::byte>> read_file(const std::string& path,
                                         uint64_t max_bytes = kMaxModelBytes);

// write_output_file (rig/output_file.hpp): a regular or new file is written
// through a temporary file in the same directory and renamed, so a reader
// never sees a half-written file; symlinks, FIFOs and devices as it says.
Result<void> write_file_atomic(const std::string& path, std::span<const std::byte> bytes);
Result<void> write_file_atomic(const std::string& path, std::string_view text);

// The built-in demo model for `rig bench` with no arguments: a CnnSpec with
// defaults. Generated on first use into `dir` (created if missing) and reused;
// returns its path.
Result<std::string> ensure_demo_model(const std::string& dir);
std::string default_cache_dir();  // $RIG_CACHE_DIR, else $XDG_CACHE_HOME/rig, else ~/.cache/rig

// The model a command or rig_bench names: "" is the built-in demo
// (ensure_demo_model in default_cache_dir(), named "demo-cnn"); "server:NAME"
// a model under the remote server's --model-dir, loaded by name; anything
// else a file, which must exist (not_found: "model file 'X' does not exist").
Result<ModelSource> resolve_model_source(const std::string& text);

}  // namespace rig

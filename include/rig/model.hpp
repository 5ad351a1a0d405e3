// ONNX models: building the rig's own (transport ladder rungs, a small CNN)
// and inspecting any model's inputs and outputs. Built models use opset 13,
// explicit kernel_shape, and pass onnx::checker; OpenCV 4.6 loads them.
#pragma once

#include <cstddef>
#include <cstdint>
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

}  // namespace rig

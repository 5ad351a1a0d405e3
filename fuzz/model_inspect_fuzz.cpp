// libFuzzer target: model files are untrusted bytes. inspect_onnx and the
// load-time normalisation pass (normalize_onnx, with and without --shape)
// must return a value or an Error for any input, never crash or hang,
// on the fuzzed bytes and on the pass's own output.
// RIG_FUZZ_SEEDS=DIR writes a seed corpus (the rig's own models and the
// crafted-tensor family of tests/model/crafted_models.hpp) to DIR.
// Findings are crashes of rig itself: a crash or a hang of libonnx inside
// rig's shape-inference child is contained (an Error), not a finding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string>

#include "model/crafted_models.hpp"
#include "rig/model.hpp"

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  // Shape inference runs in a child (rig's containment of libonnx): a crash
  // there kills the child with the signal's default action, so libFuzzer's
  // handlers never run in it and write no crash-* artifact for what rig
  // contains; a child that loops is killed at this deadline, under the
  // -timeout=10 of fuzz/run-smoke.sh, so it is no timeout-* finding either.
  ::setenv("RIG_SHAPE_INFERENCE_TIMEOUT", "5s", 0);
  const char* dir = std::getenv("RIG_FUZZ_SEEDS");
  if (!dir) return 0;
  rig::TransportSpec transport;
  transport.frame = {8, 8};
  rig::CnnSpec cnn;
  cnn.frame = {8, 8};
  cnn.layers = 2;
  cnn.channels = 2;
  if (auto t = rig::build_transport_model(transport))
    (void)rig::write_file_atomic(std::string(dir) + "/transport.onnx", *t);
  if (auto c = rig::build_cnn_model(cnn))
    (void)rig::write_file_atomic(std::string(dir) + "/cnn.onnx", *c);
  // The crafted-tensor family (data short of, or other than, the declared
  // shape and type: issue 26), its valid control, and nested subgraphs.
  for (const auto& m : rig::crafted::crafted_models())
    (void)rig::write_file_atomic(std::string(dir) + "/crafted_" + m.name + ".onnx", m.bytes);
  (void)rig::write_file_atomic(std::string(dir) + "/crafted_valid.onnx", rig::crafted::valid_add());
  (void)rig::write_file_atomic(std::string(dir) + "/nested_if_17.onnx",
                               rig::crafted::nested_if_model(17));
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  auto info = rig::inspect_onnx(bytes, "fuzz");
  if (info) {
    // A model that parses must describe sizes consistently.
    size_t total = 0;
    for (const auto& t : info->inputs) total += t.bytes;
    if (total != info->input_bytes()) __builtin_trap();
  }
  rig::NormalizeOptions options;
  options.max_rounds = 8;
  options.max_folded_elements = uint64_t{1} << 16;
  for (int with_shape = 0; with_shape < 2; ++with_shape) {
    if (with_shape) options.shapes = {{"input", {1, 3, 8, 8}}};
    // The written form, and the form a device loads (Clip bounds as attributes).
    options.opencv_forms = with_shape == 1;
    auto normalized = rig::normalize_onnx(bytes, options, "fuzz");
    if (!normalized || !normalized->changed()) continue;
    // The pass's own output is input too (what a server receives from a client).
    (void)rig::normalize_onnx(normalized->bytes, options, "fuzz");
    (void)rig::inspect_onnx(normalized->bytes, "fuzz");
  }
  return 0;
}

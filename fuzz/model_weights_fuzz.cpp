// libFuzzer target: the ONNX graph-weights reader (a hand-written protobuf
// wire walker over untrusted bytes, rig/model_weights.hpp) must return a value
// or an Error for any input, never crash, hang or read out of bounds.
// RIG_FUZZ_SEEDS=DIR writes a seed corpus (the rig's own models) to DIR.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string>

#include "rig/model.hpp"
#include "rig/model_graph.hpp"

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  const char* dir = std::getenv("RIG_FUZZ_SEEDS");
  if (!dir) return 0;
  rig::CnnSpec cnn;
  cnn.frame = {8, 8};
  cnn.layers = 2;
  cnn.channels = 2;
  if (auto c = rig::build_cnn_model(cnn))
    (void)rig::write_file_atomic(std::string(dir) + "/cnn.onnx", *c);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto w = rig::read_graph_weights(
      std::span<const std::byte>(reinterpret_cast<const std::byte*>(data), size));
  if (w && w->float_parameters > w->parameters) __builtin_trap();
  return 0;
}

// libFuzzer target: .npy bytes handed to rig run (--input, --reference).
// parse_npy returns a view or an Error for any input; a view's figures and
// its re-encoding must round-trip.
// RIG_FUZZ_SEEDS=DIR writes a seed corpus (arrays of every dtype) to DIR.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>
#include <vector>

#include "rig/tensor_io.hpp"

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  const char* dir = std::getenv("RIG_FUZZ_SEEDS");
  if (!dir) return 0;
  const rig::ElementType types[] = {rig::ElementType::f32, rig::ElementType::f16,
                                    rig::ElementType::u8, rig::ElementType::i64,
                                    rig::ElementType::boolean};
  const std::vector<std::vector<int64_t>> shapes = {{}, {3}, {2, 3}, {1, 2, 2, 2}, {0, 4}};
  int n = 0;
  for (auto type : types)
    for (const auto& shape : shapes) {
      size_t count = 1;
      for (int64_t d : shape) count *= static_cast<size_t>(d);
      std::vector<std::byte> data(count * rig::element_size(type), std::byte{1});
      const auto file = rig::encode_npy(type, shape, data);
      const std::string path = std::string(dir) + "/seed" + std::to_string(n++) + ".npy";
      if (FILE* f = std::fopen(path.c_str(), "wb")) {
        std::fwrite(file.data(), 1, file.size(), f);
        std::fclose(f);
      }
    }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  auto view = rig::parse_npy(bytes);
  if (!view) return 0;
  (void)rig::tensor_stats(view->type, view->data);
  const auto again = rig::encode_npy(view->type, view->shape, view->data);
  auto reread = rig::parse_npy(again);
  if (!reread || reread->shape != view->shape || reread->type != view->type ||
      reread->data.size() != view->data.size())
    std::abort();
  return 0;
}

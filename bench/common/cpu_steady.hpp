// What the paired cpu benchmarks (overhead, monitor) share: the demo model
// unless one is given, a cpu device with it cold-started (by default
// runtime=opencv,workers=1,depth=1; `spec` names another), and the steady
// settings of one side of a pair (one inference at a time, `seconds` long,
// no adaptive extension). Header-only; benchmarks only.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "rig/engine.hpp"
#include "rig/model.hpp"

namespace rig::bench {

struct CpuSteadyRig {
  std::string model_path;
  std::unique_ptr<Device> device;
  ColdStart cold;
  SteadySettings steady;
};

// `model_path` empty: the demo CNN from the cache (built there if absent).
inline Result<CpuSteadyRig> cpu_steady_rig(
    std::string model_path, double seconds, uint32_t windows = 0,
    const std::string& spec = "cpu:runtime=opencv,workers=1,depth=1") {
  if (model_path.empty()) {
    auto demo = ensure_demo_model(default_cache_dir());
    if (!demo) return tl::unexpected(demo.error());
    model_path = *demo;
  }
  auto device = open_device(spec);
  if (!device) return tl::unexpected(device.error());
  ModelSource source;
  source.path = model_path;
  auto cold = cold_start(**device, source, 1, 1);
  if (!cold) return tl::unexpected(cold.error());
  SteadySettings s;
  s.depth = 1;
  s.min_duration = std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
  if (windows > 0) s.windows = windows;
  s.min_inferences = 10;
  s.max_duration_factor = 1.0;
  s.warmup_max = std::chrono::milliseconds(500);
  s.warmup_window = std::chrono::milliseconds(250);
  return CpuSteadyRig{model_path, std::move(*device), std::move(*cold), s};
}

}  // namespace rig::bench

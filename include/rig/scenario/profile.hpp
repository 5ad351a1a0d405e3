// rig profile: where the time of one inference goes, layer by layer, as the
// device's runtime measures it (Device::profile_layers: ONNX Runtime's
// profiler, OpenCV's per-layer timings). After a cold start (kept, as every
// result keeps one), `runs` inferences run under the profiler on one binding;
// the layers are ranked by their time summed over those runs. A device that
// offers no profile (sim, null, a remote device) is refused by name
// (unsupported, exit 2) before anything is written. Drives the device from
// the calling thread only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "rig/device.hpp"
#include "rig/engine.hpp"
#include "rig/environment.hpp"
#include "rig/scenario/settings.hpp"
#include "rig/scenario/verdict.hpp"

namespace rig {

struct ProfileSettings {
  std::string model;  // where the model came from, for the record (model_origin)
  std::string device = kDefaultDeviceSpec;  // device spec, as given
  uint32_t runs = 20;                       // inferences profiled, 1..100000
  uint32_t top = 10;  // layers the text lists (the HTML report: ten); JSON keeps all
  uint64_t seed = 1;  // of the input data
};

// Names the bad setting; independent of NDEBUG.
Result<void> validate(const ProfileSettings& settings);

struct ProfiledLayer {
  std::string name;
  std::string op_type;
  uint64_t calls = 0;
  double total_ms = 0;    // summed over the runs
  double per_run_ms = 0;  // total_ms / runs
  double share = 0;       // of all the layers' time, 0..1
};

struct ProfileResult {
  ProfileSettings requested;
  ProfileSettings effective;
  Environment environment;
  DeviceInfo device;
  ModelInfo model;
  bool virtual_clock = false;
  TtfoResult ttfo;
  std::string profiler;               // LayerProfile::profiler
  uint32_t runs = 0;                  // inferences profiled
  double wall_per_run_ms = 0;         // elapsed per profiled run, profiler included
  double layers_per_run_ms = 0;       // the layers' time per run
  std::vector<ProfiledLayer> layers;  // slowest first; layers that never ran are left out
  Verdict verdict;                    // no rules: a profile is a breakdown, not a measurement
};

Result<ProfileResult> run_profile(Device& device, const ModelSource& model,
                                  const ProfileSettings& settings);

}  // namespace rig

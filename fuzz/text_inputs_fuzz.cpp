// libFuzzer target: text a user or a result file hands to rig — device specs
// (with link profiles), durations, sizes, bandwidths, frame sizes, depth
// ranges, and a bench result JSON read by `rig predict`. Each parser returns a
// value or an Error for any input.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "rig/device_spec.hpp"
#include "rig/link_profile.hpp"
#include "rig/model.hpp"
#include "rig/report/bench_report.hpp"
#include "rig/scenario/predict.hpp"
#include "rig/scenario/sweep.hpp"
#include "rig/units.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)rig::parse_spec(text);
  (void)rig::expand_link_profiles(text);
  (void)rig::parse_duration(text);
  (void)rig::parse_bytes(text);
  (void)rig::parse_bandwidth(text);
  (void)rig::parse_count(text);
  (void)rig::parse_frame_size(text);
  (void)rig::parse_depth_range(text);
  (void)rig::parse_device_spec(text);
  if (auto bench = rig::read_bench_json(text, "fuzz")) (void)rig::predict_source(*bench, "fuzz");
  return 0;
}

// rig profile: the cold start, then Device::profile_layers, ranked.
#include "rig/scenario/profile.hpp"

#include <algorithm>

#include "rig/model.hpp"
#include "rig/model_graph.hpp"
#include "rig/scenario/settings.hpp"

namespace rig {

Result<void> validate(const ProfileSettings& s) {
  if (s.runs < 1 || s.runs > 100000)
    return fail(ErrorCode::invalid_argument,
                "--runs: must be in 1..100000, got " + std::to_string(s.runs));
  if (s.top < 1) return fail(ErrorCode::invalid_argument, "--top: must be >= 1");
  return {};
}

Result<ProfileResult> run_profile(Device& device, const ModelSource& model,
                                  const ProfileSettings& settings) {
  if (auto ok = validate(settings); !ok) return tl::unexpected(ok.error());
  ProfileResult r;
  start_result(r, device, settings);
  auto cold = cold_start(device, model, 1, settings.seed);
  if (!cold) return tl::unexpected(cold.error());
  r.ttfo = cold->ttfo;
  r.model = device.model_info();
  r.model.sha256 = model_sha256(model);
  auto profile = device.profile_layers(cold->workspace.bindings.at(0), settings.runs);
  if (!profile) return tl::unexpected(profile.error());
  r.profiler = profile->profiler;
  r.runs = profile->runs;
  const double runs = std::max<uint32_t>(1, profile->runs);
  r.wall_per_run_ms = to_ms(profile->wall) / runs;
  double total_ms = 0;
  for (const LayerTime& layer : profile->layers) {
    if (layer.calls == 0) continue;  // fused away or never run
    ProfiledLayer p;
    p.name = layer.name;
    p.op_type = layer.op_type;
    p.calls = layer.calls;
    p.total_ms = to_ms(layer.total);
    p.per_run_ms = p.total_ms / runs;
    total_ms += p.total_ms;
    r.layers.push_back(std::move(p));
  }
  for (auto& p : r.layers) p.share = total_ms > 0 ? p.total_ms / total_ms : 0;
  std::stable_sort(
      r.layers.begin(), r.layers.end(),
      [](const ProfiledLayer& a, const ProfiledLayer& b) { return a.total_ms > b.total_ms; });
  r.layers_per_run_ms = total_ms / runs;
  return r;
}

}  // namespace rig

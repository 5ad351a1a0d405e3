// rig loop [MODEL] -d DEVICE --duration 3s [--sleep-between-frames MS] [--depth N] [--json FILE]
// The device's own rate (run_for_duration: one frame, looped on the device,
// no per-frame transfers) beside the host-observed pipelined rate of the same
// model (measure_steady: every frame crosses the link); the difference is
// what the per-frame transfers cost.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/command.hpp"
#include "cli/environment_info.hpp"
#include "cli/options.hpp"
#include "rig/engine.hpp"
#include "rig/environment.hpp"
#include "rig/report.hpp"
#include "rig/units.hpp"

namespace rig::cli {
namespace {

using nlohmann::json;

struct LoopOptions {
  std::string model;
  std::string device = "cpu";
  std::string duration = "3s";
  std::string sleep = "0";
  std::optional<uint32_t> depth;
  std::string timeout = "30s";
  uint64_t seed = 1;
  std::string json_path;
  bool quiet = false;
};

double seconds(Nanos d) {
  return static_cast<double>(d.count()) / 1e9;
}

// A duration with a unit, or a bare number of milliseconds.
Result<Nanos> sleep_option(const std::string& text) {
  if (auto d = parse_duration(text); d) {
    if (*d < Nanos(0))
      return fail(ErrorCode::invalid_argument, "--sleep-between-frames must be >= 0");
    return *d;
  }
  auto ms = parse_number(text);
  if (!ms || *ms < 0)
    return fail(ErrorCode::invalid_argument,
                "--sleep-between-frames: expected milliseconds or a duration such as 5ms, got '" +
                    text + "'");
  // Checked before the conversion: out of range it would be undefined. The
  // bound is parse_duration's (1e18 ns, about 31 years).
  const double ns = *ms * 1e6;
  if (!(ns <= 1e18))
    return fail(ErrorCode::invalid_argument,
                "--sleep-between-frames: '" + text + "' ms is too large (at most 1e12 ms)");
  return Nanos(static_cast<int64_t>(ns));
}

json error_json(const std::optional<Error>& e) {
  if (!e) return nullptr;
  return {{"code", std::string(to_string(e->code))}, {"message", e->message}};
}

int run_loop_command(const LoopOptions& o) {
  auto duration = positive_duration("--duration", o.duration);
  if (!duration) return report_error(duration.error());
  auto sleep = sleep_option(o.sleep);
  if (!sleep) return report_error(sleep.error());
  auto timeout = positive_duration("--timeout", o.timeout);
  if (!timeout) return report_error(timeout.error());
  if (o.depth && *o.depth == 0)
    return report_error({ErrorCode::invalid_argument, "--depth must be >= 1, got 0"});
  if (!o.json_path.empty())
    if (auto ok = check_writable("--json", o.json_path); !ok) return report_error(ok.error());
  auto model = resolve_model(o.model);
  if (!model) return report_error(model.error());
  auto device = open_device(o.device);
  if (!device) return report_error(device.error());
  Device& d = **device;
  const DeviceInfo info = d.info();
  // As rig bench: more than the device takes would only fail with queue_full.
  const uint32_t device_depth = std::max<uint32_t>(1, info.queue_depth);
  uint32_t depth = o.depth.value_or(device_depth);
  std::vector<std::string> warnings;
  if (depth > device_depth) {
    warnings.push_back("depth " + std::to_string(depth) + " exceeds the device's queue depth " +
                       std::to_string(device_depth) + "; clamped to " +
                       std::to_string(device_depth));
    depth = device_depth;
  }
  for (const auto& w : warnings) std::fprintf(stderr, "rig: warning: %s\n", w.c_str());

  if (!o.quiet)
    std::fprintf(stderr, "rig: looping %s on %s for %s, then pipelining it at depth %u...\n",
                 model->path.empty() ? model->name.c_str() : model->path.c_str(), info.spec.c_str(),
                 format_duration(*duration).c_str(), depth);
  auto cold = cold_start(d, *model, depth, o.seed);
  if (!cold) return report_error(cold.error());

  // 1. The device's own rate.
  auto loop = d.run_for_duration(cold->workspace.bindings[0], *duration, *sleep);
  if (!loop) return report_error(loop.error());

  // 2. The host-observed pipelined rate of the same model.
  SteadySettings s;
  s.depth = depth;
  s.min_duration = *duration;
  s.request_timeout = *timeout;
  s.seed = o.seed;
  const SteadyRepeat steady = measure_steady(d, cold->workspace, s);

  const double device_rate = loop->frames_per_second;
  const double host_rate = steady.rate;
  // A remote device serving a sim: the loop rate is simulated, the host rate real.
  const auto clock_it = info.properties.find("server.clock");
  const bool mixed_clocks =
      !d.clock().is_virtual() && clock_it != info.properties.end() && clock_it->second == "virtual";
  const bool comparable = device_rate > 0 && host_rate > 0 && !steady.aborted && !mixed_clocks;
  std::optional<double> cost_ms, cost_share;
  if (comparable) {
    cost_ms = 1e3 / host_rate - 1e3 / device_rate;
    cost_share = *cost_ms / (1e3 / host_rate);
  }

  std::printf("rig loop: %s on %s\n",
              cold->workspace.bindings.empty() ? "" : d.model_info().name.c_str(),
              info.spec.c_str());
  for (const auto& w : warnings) std::printf("  warning: %s\n", w.c_str());
  std::printf("  device loop (run_for_duration on one frame, no per-frame transfers)\n");
  std::printf("    frames completed      %llu\n",
              static_cast<unsigned long long>(loop->frames_completed));
  std::printf("    frames aborted        %llu (cut off by the end of the loop%s; not counted)\n",
              static_cast<unsigned long long>(loop->frames_aborted),
              info.in_process ? "" : ", or of a slice of it on the server");
  std::printf("    elapsed               %s\n", format_duration(loop->elapsed).c_str());
  std::printf("    sleep between frames  %s\n", format_duration(*sleep).c_str());
  std::printf("    device rate           %s frames/s", format_fixed(device_rate, 2).c_str());
  if (device_rate > 0) std::printf(" (%s per frame)", format_ms(1e3 / device_rate).c_str());
  std::printf("\n  host-observed pipelined rate (depth %u, every frame crosses the link)\n",
              steady.depth);
  if (steady.aborted) {
    std::printf("    INVALID: %s\n",
                steady.first_error ? steady.first_error->to_string().c_str() : "aborted");
  } else {
    std::printf("    host rate             %s frames/s (%s per frame, %llu frames in %s, %s)\n",
                format_fixed(host_rate, 2).c_str(),
                host_rate > 0 ? format_ms(1e3 / host_rate).c_str() : "-",
                static_cast<unsigned long long>(steady.inferences),
                format_duration(steady.elapsed).c_str(), steady.stable ? "stable" : "unstable");
    std::printf("    bytes per frame       %s in, %s out (payload); %s in, %s out (link)\n",
                format_bytes(steady.payload_in_per_inference).c_str(),
                format_bytes(steady.payload_out_per_inference).c_str(),
                format_bytes(steady.link_in_per_inference).c_str(),
                format_bytes(steady.link_out_per_inference).c_str());
  }
  if (cost_ms) {
    std::printf(
        "  cost of per-frame transfers: %s per frame (%s%% of the host-observed frame time)\n",
        format_ms(*cost_ms).c_str(), format_fixed(*cost_share * 100, 1).c_str());
    if (*sleep > Nanos(0))
      std::printf(
          "  note: the device rate includes the sleeps between frames, so the difference "
          "is not the transfer cost alone\n");
    else if (*cost_ms < 0)
      std::printf(
          "  note: the host pipeline was faster than the device loop; the difference is "
          "noise or the loop runs one frame at a time where the pipeline overlaps\n");
  }
  if (mixed_clocks)
    std::printf(
        "  note: the server's device runs on a virtual clock while the host's is real: the "
        "two rates are not comparable, so no transfer cost is given\n");
  if (d.clock().is_virtual())
    std::printf("  note: %s runs on a virtual clock; both rates are simulated\n",
                info.kind.c_str());

  if (!o.json_path.empty()) {
    json doc;
    doc["schema_version"] = kJsonSchemaVersion;
    doc["tool"] = "rig loop";
    doc["settings"] = {{"model", model->path.empty() ? model->name : model->path},
                       {"device", o.device},
                       {"duration_s", seconds(*duration)},
                       {"sleep_between_frames_ms", static_cast<double>(sleep->count()) / 1e6},
                       {"depth", depth},
                       {"request_timeout_s", seconds(*timeout)},
                       {"seed", o.seed}};
    Environment env = collect_environment();
    add_library_versions(env);
    doc["environment"] = {{"facts", env.facts}, {"warnings", env.warnings}};
    doc["device"] = {{"spec", info.spec},
                     {"kind", info.kind},
                     {"description", info.description},
                     {"queue_depth", info.queue_depth},
                     {"properties", info.properties},
                     {"warnings", info.warnings}};
    doc["loop"] = {{"frames_completed", loop->frames_completed},
                   {"frames_aborted", loop->frames_aborted},
                   {"elapsed_s", seconds(loop->elapsed)},
                   {"frames_per_second", json_number(device_rate)}};
    doc["steady"] = {
        {"depth", steady.depth},
        {"inferences", steady.inferences},
        {"elapsed_s", seconds(steady.elapsed)},
        {"rate", json_number(steady.aborted ? std::nullopt : std::optional<double>(host_rate))},
        {"stable", steady.stable},
        {"aborted", steady.aborted},
        {"errors", steady.errors},
        {"first_error", error_json(steady.first_error)},
        {"payload_in_per_inference", steady.payload_in_per_inference},
        {"payload_out_per_inference", steady.payload_out_per_inference},
        {"link_in_per_inference", steady.link_in_per_inference},
        {"link_out_per_inference", steady.link_out_per_inference}};
    doc["transfer_cost"] = {{"per_frame_ms", json_number(cost_ms)},
                            {"share_of_host_frame_time", json_number(cost_share)}};
    doc["warnings"] = warnings;
    doc["verdict"] = {{"valid", !steady.aborted}};
    if (auto ok = write_json_file(o.json_path, doc); !ok) return report_error(ok.error());
    if (!o.quiet) std::fprintf(stderr, "rig: wrote %s\n", o.json_path.c_str());
  }
  if (steady.aborted && steady.first_error) return exit_code_for(steady.first_error->code);
  return steady.aborted ? 3 : 0;
}

}  // namespace

Command add_loop_command(CLI::App& app) {
  auto o = std::make_shared<LoopOptions>();
  CLI::App* sub = app.add_subcommand(
      "loop", "The device's own rate (on-device loop) beside the host-observed pipelined rate");
  sub->add_option("model", o->model, "ONNX model (default: the built-in demo CNN)");
  sub->add_option("-d,--device", o->device, "device spec: cpu[:...], sim:..., tcp://HOST:PORT")
      ->capture_default_str();
  sub->add_option("--duration", o->duration, "length of the loop and of the pipelined run")
      ->capture_default_str();
  sub->add_option("--sleep-between-frames", o->sleep,
                  "sleep between looped frames: milliseconds, or a duration such as 5ms")
      ->capture_default_str();
  sub->add_option("--depth", o->depth,
                  "requests in flight for the pipelined rate (default and most: the device's "
                  "queue depth)");
  sub->add_option("--timeout", o->timeout, "per-request timeout")->capture_default_str();
  sub->add_option("--seed", o->seed, "seed of the input data")->capture_default_str();
  sub->add_option("--json", o->json_path, "also write the result as JSON to this file");
  sub->add_flag("-q,--quiet", o->quiet, "no progress messages on stderr");
  return {sub, [o] { return run_loop_command(*o); }};
}

}  // namespace rig::cli

// rig loop [MODEL] -d DEVICE --duration 3s [--sleep-between-frames MS] [--depth N] [--json FILE]
// The device's own rate (run_for_duration: one frame, looped on the device,
// no per-frame transfers) beside the host-observed pipelined rate of the same
// model (measure_steady: every frame crosses the link); the difference is
// what the per-frame transfers cost.
#include <cstdio>
#include <memory>
#include <string>

#include "cli/bind.hpp"
#include "cli/command.hpp"
#include "cli/measure.hpp"
#include "cli/monitor_options.hpp"
#include "cli/point_options.hpp"
#include "rig/report/loop_report.hpp"
#include "rig/scenario/loop.hpp"
#include "rig/units.hpp"

namespace rig::cli {
namespace {

struct LoopCommand {
  LoopSettings s;  // the options' defaults are its own
  MeasureOptions o;
};

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
  // bound is parse_duration's (kMaxDuration, 1e6 s).
  const double ns = *ms * 1e6;
  if (!(ns <= static_cast<double>(kMaxDuration.count())))
    return fail(ErrorCode::invalid_argument,
                "--sleep-between-frames: '" + text + "' ms is out of range (at most 1e9 ms)");
  return Nanos(static_cast<int64_t>(ns));
}

int run_loop_command(LoopCommand& c) {
  MeasureSteps<LoopSettings, LoopResult> steps{
      .label = "rig loop",
      .announce =
          [](const LoopSettings& s, const ModelSource& model, const std::string& device) {
            std::fprintf(stderr, "rig: looping %s on %s for %s, then pipelining it...\n",
                         model_display_name(model).c_str(), device.c_str(),
                         format_duration(s.point.duration).c_str());
          },
      .runs = 1,
      .run = run_loop,
      .text = format_loop_text,
      .json = loop_to_json,
      .after = [](const LoopResult& r) -> Result<void> {
        if (r.depth_note) std::fprintf(stderr, "rig: warning: %s\n", r.depth_note->c_str());
        return {};
      },
      // An aborted pipelined run is a device failure, whatever --strict says.
      .status =
          [](const LoopResult& r, int status) {
            if (r.steady.aborted)
              return r.steady.first_error ? exit_code_for(r.steady.first_error->code) : 3;
            return status;
          },
  };
  return run_command(c.s, c.o, steps);
}

}  // namespace

Command add_loop_command(CLI::App& app) {
  auto c = std::make_shared<LoopCommand>();
  LoopSettings& s = c->s;
  MeasureOptions& o = c->o;
  CLI::App* sub = app.add_subcommand(
      "loop", "The device's own rate (on-device loop) beside the host-observed pipelined rate");
  add_model_on_device_options(sub, s, o);
  add_duration_option(sub, "--duration", s.point.duration,
                      "length of the loop and of the pipelined run");
  add_parsed_option(sub, "--sleep-between-frames", s.sleep_between_frames,
                    "sleep between looped frames: milliseconds, or a duration such as 5ms",
                    sleep_option)
      ->default_str(
          s.sleep_between_frames == Nanos(0) ? "0" : duration_option_text(s.sleep_between_frames));
  add_depth_option(sub, s.depth,
                   "requests in flight for the pipelined rate (default and most: the device's "
                   "queue depth)");
  add_timeout_option(sub, s.point.request_timeout);
  add_seed_option(sub, s.point.seed);
  add_measured_run_options(sub, o, s.monitor, s.confounds);
  return {sub, [c] { return run_loop_command(*c); }};
}

}  // namespace rig::cli

// Options every measuring subcommand shares: how long and how often each
// measurement point runs, and --strict; one mapping of them onto
// PointSettings. Header-only so the subcommands need no extra source.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/command.hpp"
#include "cli/options.hpp"
#include "rig/scenario/settings.hpp"
#include "rig/units.hpp"

namespace rig::cli {

struct PointOptions {
  std::string duration = "2s";
  uint32_t repeats = 3;
  uint32_t windows = 10;
  uint64_t min_inferences = 20;
  double tolerance = 0.05;
  double rate_tolerance = 0.02;
  double max_factor = 2.0;
  std::string warmup_max = "5s";
  std::string timeout = "30s";
  uint64_t seed = 1;
  bool strict = false;                   // --strict: exit 1 when the verdict is INVALID
  std::vector<std::string> shapes = {};  // --shape NAME=DIMS (add_shape_option; not ladder)
  std::vector<std::string> inputs = {};  // --input FILE|NAME=FILE (add_input_option; not ladder)
};

// The adaptive stop's options (rig bench adds them too).
inline void add_stop_options(CLI::App* sub, PointOptions& o) {
  sub->add_option("--rate-tolerance", o.rate_tolerance,
                  "a run goes on until its rate's 95% interval is within this share of the rate")
      ->capture_default_str()
      ->check(in_range(1e-6, 10.0));
  sub->add_option("--max-duration-factor", o.max_factor,
                  "a run stops at --duration x this even when its stop rule is unmet")
      ->capture_default_str()
      ->check(in_range(1.0, 1000.0));
}

inline void add_point_options(CLI::App* sub, PointOptions& o, bool with_repeats) {
  sub->add_option("--duration", o.duration, "measured time per run, e.g. 2s")
      ->capture_default_str();
  if (with_repeats)
    sub->add_option("--repeats", o.repeats, "repeats per point (reproducibility)")
        ->capture_default_str()
        ->check(in_range(1u, 1000u));
  sub->add_option("--windows", o.windows, "windows per run (stability compares the last 3)")
      ->capture_default_str()
      ->check(in_range(3u, 100000u));
  sub->add_option("--min-inferences", o.min_inferences, "inferences per run, at least")
      ->capture_default_str()
      ->check(in_range(uint64_t{1}, uint64_t{1} << 40));
  sub->add_option("--tolerance", o.tolerance, "stability tolerance of the last 3 windows")
      ->capture_default_str()
      ->check(in_range(1e-6, 10.0));
  sub->add_option("--warmup-max", o.warmup_max, "cap on the warm-up")->capture_default_str();
  add_stop_options(sub, o);
  sub->add_option("--timeout", o.timeout, "per-request timeout")->capture_default_str();
  sub->add_option("--seed", o.seed, "seed of the input data")->capture_default_str();
  sub->add_flag("--strict", o.strict, "exit 1 when the verdict is INVALID");
}

inline Result<PointSettings> to_point_settings(const PointOptions& o) {
  PointSettings s;
  auto duration = positive_duration("--duration", o.duration);
  if (!duration) return tl::unexpected(duration.error());
  s.duration = *duration;
  auto warm = parse_duration(o.warmup_max);
  if (!warm) return fail(ErrorCode::invalid_argument, "--warmup-max: " + warm.error().message);
  if (*warm < Nanos(0))
    return fail(ErrorCode::invalid_argument, "--warmup-max must not be negative");
  s.warmup_max = *warm;
  auto timeout = positive_duration("--timeout", o.timeout);
  if (!timeout) return tl::unexpected(timeout.error());
  s.request_timeout = *timeout;
  s.repeats = o.repeats;
  s.windows = o.windows;
  s.min_inferences = o.min_inferences;
  s.stability_tolerance = o.tolerance;
  s.rate_tolerance = o.rate_tolerance;
  s.max_duration_factor = o.max_factor;
  s.seed = o.seed;
  if (auto ok = validate(s); !ok) return tl::unexpected(ok.error());
  // Read now: a missing file fails before the device is opened.
  auto inputs = input_files_option(o.inputs);
  if (!inputs) return tl::unexpected(inputs.error());
  s.inputs = *inputs;
  return s;
}

}  // namespace rig::cli

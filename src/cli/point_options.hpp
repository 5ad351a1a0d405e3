// Options every measuring subcommand shares, bound to a scenario's
// PointSettings: how long and how often each measurement point runs. The
// defaults shown are the settings' own (rig bench's point has its own
// initializers). Header-only so the subcommands need no extra source.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/bind.hpp"
#include "cli/command.hpp"
#include "rig/scenario/settings.hpp"

namespace rig::cli {

// The adaptive stop's options (rig bench adds them too).
inline void add_stop_options(CLI::App* sub, PointSettings& p) {
  sub->add_option("--rate-tolerance", p.rate_tolerance,
                  "a run goes on until its rate's 95% interval is within this share of the rate")
      ->capture_default_str()
      ->check(in_range(1e-6, 10.0));
  sub->add_option("--max-duration-factor", p.max_duration_factor,
                  "a run stops at --duration x this even when its stop rule is unmet")
      ->capture_default_str()
      ->check(in_range(1.0, 1000.0));
}

inline void add_timeout_option(CLI::App* sub, Nanos& timeout) {
  add_duration_option(sub, "--timeout", timeout, "per-request timeout");
}

inline void add_seed_option(CLI::App* sub, uint64_t& seed,
                            const std::string& help = "seed of the input data") {
  sub->add_option("--seed", seed, help)->capture_default_str();
}

// The offered load's knobs (rig bench --rate, rig sweep --rate), `mode`
// naming it in their help ("offered load: ..."). Returns them by name.
inline std::vector<std::pair<std::string, CLI::Option*>> add_offered_options(
    CLI::App* sub, Arrival& arrival, QueueFull& on_full, Nanos& late_threshold,
    const std::string& mode) {
  auto late = [](const std::string& text) -> Result<Nanos> {
    auto d = parse_duration(text);
    if (!d || *d < Nanos(0))
      return fail(ErrorCode::invalid_argument,
                  "--late-threshold: '" + text + "' is not a non-negative duration (e.g. 1ms)");
    return *d;
  };
  return {
      {"--arrival",
       add_choice_option(sub, "--arrival", arrival, mode + ": arrivals constant or poisson",
                         {{"constant", Arrival::constant}, {"poisson", Arrival::poisson}})},
      {"--on-full",
       add_choice_option(sub, "--on-full", on_full,
                         mode + ": a frame arriving with every slot busy waits or is dropped",
                         {{"wait", QueueFull::wait}, {"drop", QueueFull::drop}})},
      {"--late-threshold",
       add_parsed_option(sub, "--late-threshold", late_threshold,
                         mode + ": a frame submitted later than this after its arrival is late",
                         late)
           ->default_str(duration_option_text(late_threshold))},
  };
}

inline void add_point_options(CLI::App* sub, PointSettings& p, bool with_repeats) {
  add_duration_option(sub, "--duration", p.duration, "measured time per run, e.g. 2s");
  if (with_repeats)
    sub->add_option("--repeats", p.repeats, "repeats per point (reproducibility)")
        ->capture_default_str()
        ->check(in_range(1u, 1000u));
  sub->add_option("--windows", p.windows, "windows per run (stability compares the last 3)")
      ->capture_default_str()
      ->check(in_range(3u, 100000u));
  sub->add_option("--min-inferences", p.min_inferences, "inferences per run, at least")
      ->capture_default_str()
      ->check(in_range(uint64_t{1}, uint64_t{1} << 40));
  sub->add_option("--tolerance", p.stability_tolerance, "stability tolerance of the last 3 windows")
      ->capture_default_str()
      ->check(in_range(1e-6, 10.0));
  add_duration_option(sub, "--warmup-max", p.warmup_max, "cap on the warm-up",
                      DurationRule::nonnegative);
  add_stop_options(sub, p);
  add_timeout_option(sub, p.request_timeout);
  add_seed_option(sub, p.seed);
}

}  // namespace rig::cli

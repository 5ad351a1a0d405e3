// Property (ladder): rig ladder recovers each link direction's bandwidth
// within 2% and the per-transfer latency within 5%, and names the duplex, on
// symmetric and asymmetric, half- and full-duplex sim links.
//
// Tolerances. The sim's link is exactly the model the ladder fits (a
// transfer occupies its channel for bytes / bandwidth, then lands `lat`
// later), so on the virtual clock the only errors are the sim rounding each
// transfer to the nanosecond and a rung entering the pipelined fit while a
// little slower than its bytes need (up to latency_bound_margin, 3%, shared
// by every rung in the fit: the slope moves far less). 2% on a bandwidth is
// the bound and a figure a user can size a link with; 5% on the
// latency, whose intercept is the difference of larger numbers. A latency
// under 10 us is held to 0.5 us instead: the intercept sums the nanosecond
// roundings of the rungs' transfers.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "fidelity/sim_case.hpp"
#include "rig/report/ladder_report.hpp"
#include "rig/scenario/ladder.hpp"

namespace rig::fidelity {
namespace {

constexpr double kBandwidthTolerance = 0.02;
constexpr double kLatencyTolerance = 0.05;
constexpr double kLatencyFloorMs = 0.5e-3;

// Four sizes whose largest in-heavy frame takes about 2 ms on the link (both
// crossings), halving in area: link-bound when the depth can hide the
// latency, and a few thousand completions per repeat; frames (1.25x the
// input's bytes in all, out-heavy ones mirrored) x depth stay under 256 MB.
std::vector<std::string> ladder_sizes(const SimCase& c) {
  const double want_in = 2e-3 / (1 / c.bw_in + 0.25 / c.bw_out);
  const double max_in = 256e6 / (1.25 * c.depth) * 0.99;
  const double in = std::min(want_in, max_in);
  std::vector<std::string> sizes;
  for (double share : {0.125, 0.25, 0.5, 1.0}) {
    // Even sides: an in-heavy output of W x H bytes is then whole f32s.
    const auto side = std::max<int64_t>(4, 2 * std::llround(std::sqrt(in * share / 4) / 2));
    const std::string s = std::to_string(side) + "x" + std::to_string(side);
    if (sizes.empty() || sizes.back() != s) sizes.push_back(s);
  }
  return sizes;
}

LadderSettings ladder_settings(const SimCase& c) {
  LadderSettings s;
  s.sizes = ladder_sizes(c);
  s.depth = c.depth;
  s.point.duration = std::chrono::milliseconds(100);
  s.point.repeats = 2;
  s.latency_samples = 5;
  s.monitor.enabled = false;
  return s;
}

TEST(LadderFidelity, RecoversEachDirectionAndTheLatency) {
  CaseRanges ranges;
  ranges.compute_lo_s = ranges.compute_hi_s = 1e-6;  // transport: the link alone
  // The sim touches every 64th byte of a frame as it lands, so a run costs
  // in proportion to the bytes it moves: up to 2 GB/s keeps the property
  // within its share of the suite's time (the arithmetic does not change
  // with the bandwidth).
  ranges.bw_hi = 2e9;
  int asymmetric = 0, full = 0, pipelined = 0;
  for (uint64_t seed : case_seeds(20, 2)) {
    Drawn d = draw_case(seed, ranges);
    SCOPED_TRACE(d.c.describe());
    auto dev = open_device(d.c.spec());
    ASSERT_TRUE(dev) << dev.error().to_string();
    const LadderSettings s = ladder_settings(d.c);
    if (s.sizes.size() < 2) continue;
    auto r = run_ladder(**dev, s);
    ASSERT_TRUE(r) << r.error().to_string();
    const std::string text = format_ladder_text(*r);
    ASSERT_TRUE(r->bw_in_bytes_per_s && r->bw_out_bytes_per_s && r->per_transfer_ms) << text;
    EXPECT_NEAR(*r->bw_in_bytes_per_s / d.c.bw_in, 1.0, kBandwidthTolerance) << text;
    EXPECT_NEAR(*r->bw_out_bytes_per_s / d.c.bw_out, 1.0, kBandwidthTolerance) << text;
    const double lat_ms = d.c.lat_s() * 1e3;
    EXPECT_NEAR(*r->per_transfer_ms, lat_ms, std::max(kLatencyTolerance * lat_ms, kLatencyFloorMs))
        << text;
    EXPECT_EQ(r->duplex, d.c.full_duplex ? Duplex::full : Duplex::half) << text;
    asymmetric += d.c.bw_in != d.c.bw_out;
    full += d.c.full_duplex;
    pipelined +=
        r->bw_in_from == DirectionSource::pipelined && r->bw_out_from == DirectionSource::pipelined;
  }
  // The draw covers the space the property names.
  EXPECT_GE(asymmetric, 5);
  EXPECT_GE(full, 5);
  EXPECT_LE(full, 15);
  EXPECT_GE(pipelined, 5) << "most cases should be fitted from pipelined rungs";
}

}  // namespace
}  // namespace rig::fidelity

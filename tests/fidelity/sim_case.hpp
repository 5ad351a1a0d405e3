// The fidelity suite's random cases: sim parameters drawn from a fixed seed
// list, and the ground truth a sim with those parameters obeys, worked out
// from the sim's documented model (docs/methodology.md, "The sim device"),
// never from rig's own derived figures.
//
// A case is a transport model (a 1x1 convolution: its compute is the sim's
// `compute`, its bytes the frame's) on a sim link. Ranges cover compute- and
// link-bound, half and full duplex, symmetric and asymmetric links, depths
// 1..64, frames from tens of bytes to tens of MB, latencies short and long
// against the run; frame x depth stays under 256 MB so that the suite runs
// under AddressSanitizer.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "rig/device.hpp"
#include "rig/model.hpp"
#include "rig/units.hpp"

namespace rig::fidelity {

// The seeds every property draws its cases from: fixed, so a failure is
// reproducible by its seed (printed with the case).
inline std::vector<uint64_t> case_seeds(size_t count, uint64_t salt) {
  std::vector<uint64_t> seeds;
  for (uint64_t i = 0; i < count; ++i) seeds.push_back(salt * 1000003ull + i);
  return seeds;
}

// A small deterministic generator (splitmix64), independent of rig's.
class CaseRandom {
 public:
  explicit CaseRandom(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double unit() { return static_cast<double>(next() >> 11) / 9007199254740992.0; }
  // Log-uniform in [lo, hi].
  double log_uniform(double lo, double hi) {
    return std::exp(std::log(lo) + unit() * (std::log(hi) - std::log(lo)));
  }
  uint64_t below(uint64_t n) { return next() % n; }
  bool coin() { return (next() & 1) != 0; }

 private:
  uint64_t state_;
};

struct SimCase {
  uint64_t seed = 0;
  Nanos compute{0};
  double bw_in = 0, bw_out = 0;  // bytes per second
  Nanos lat{0};                  // per transfer
  bool full_duplex = false;
  uint32_t depth = 1;  // the sim's queue depth (and the depth measured at)
  TransportSpec model;
  uint64_t in_bytes = 0, out_bytes = 0;  // the model's frame sizes (set by make_case)

  std::string spec() const {
    auto ns = [](Nanos d) { return std::to_string(d.count()) + "ns"; };
    auto bw = [](double b) { return std::to_string(static_cast<uint64_t>(b)) + "B/s"; };
    return "sim:compute=" + ns(compute) + ",bw_in=" + bw(bw_in) + ",bw_out=" + bw(bw_out) +
           ",lat=" + ns(lat) + ",duplex=" + (full_duplex ? "full" : "half") +
           ",depth=" + std::to_string(depth);
  }
  double in_s() const { return static_cast<double>(in_bytes) / bw_in; }
  double out_s() const { return static_cast<double>(out_bytes) / bw_out; }
  double compute_s() const { return to_seconds(compute); }
  double lat_s() const { return to_seconds(lat); }
  // One frame alone: in, lat, compute, out, lat.
  double lone_s() const { return in_s() + lat_s() + compute_s() + out_s() + lat_s(); }
  // The busiest resource's time per frame: the shared channel (half duplex)
  // or each direction (full), or compute.
  double bottleneck_s() const {
    const double link = full_duplex ? std::max(in_s(), out_s()) : in_s() + out_s();
    return std::max(link, compute_s());
  }
  // The physical cap of a closed loop at depth d: no more than d frames in
  // flight, each at least a lone frame long (Little's law), and no faster
  // than the busiest resource.
  double cap_rate(uint32_t d) const {
    return std::min(static_cast<double>(d) / lone_s(), 1.0 / bottleneck_s());
  }
  std::string describe() const {
    return "seed " + std::to_string(seed) + ": " + spec() + " frame " +
           std::to_string(model.frame.width) + "x" + std::to_string(model.frame.height) + "x" +
           std::to_string(model.channels) + " in " + std::to_string(in_bytes) + " B, out " +
           std::to_string(out_bytes) + " B";
  }
};

// Ranges of a random case; the defaults cover the whole space the issue names.
struct CaseRanges {
  double compute_lo_s = 20e-6, compute_hi_s = 20e-3;
  double bw_lo = 20e6, bw_hi = 20e9;
  double lat_lo_s = 1e-6, lat_hi_s = 20e-3;  // a quarter of the cases get lat = 0
  uint32_t depth_lo = 1, depth_hi = 64;
  double asymmetric_share = 0.5;        // cases whose directions differ (up to 8:1)
  double full_duplex_share = 0.5;       // the rest half duplex
  int64_t side_lo = 4, side_hi = 2048;  // frame sides (square-ish), channels 1..4
  double max_frame_x_depth = 256e6;
  // Frames whose lone time or bottleneck exceed this are redrawn (keeps the
  // virtual runs' completion counts in the thousands).
  double max_lone_s = 0.25;
};

inline TransportSpec random_transport(CaseRandom& r, const CaseRanges& g) {
  TransportSpec t;
  const auto side = [&] {
    return static_cast<int64_t>(std::llround(
        r.log_uniform(static_cast<double>(g.side_lo), static_cast<double>(g.side_hi))));
  };
  t.frame = FrameSize{side(), side()};
  t.channels = 1 + static_cast<int64_t>(r.below(4));
  t.input_type = r.coin() ? ElementType::u8 : ElementType::f32;
  // In-heavy (1/4, the ladder's) or out-heavy outputs: f32 outputs of up to
  // 4 x the input.
  static constexpr double kFractions[] = {0.25, 0.5, 1.0, 2.0, 4.0};
  t.output_fraction = kFractions[r.below(5)];
  return t;
}

// Builds the case's model; fills in_bytes / out_bytes from what was built.
// Returns nullopt (and the caller draws again) when the builder refuses the
// combination (an output fraction the frame cannot meet exactly).
inline std::optional<ModelSource> build_case_model(SimCase& c) {
  auto bytes = build_transport_model(c.model);
  if (!bytes) return std::nullopt;
  ModelSource m;
  m.bytes = std::move(*bytes);
  m.name = "fidelity-" + std::to_string(c.seed);
  auto info = inspect_onnx(m.bytes, m.name);
  if (!info) return std::nullopt;
  c.in_bytes = info->input_bytes();
  c.out_bytes = info->output_bytes();
  return m;
}

struct Drawn {
  SimCase c;
  ModelSource model;
};

inline Drawn draw_case(uint64_t seed, const CaseRanges& g = {}) {
  CaseRandom r(seed);
  for (int attempt = 0;; ++attempt) {
    SimCase c;
    c.seed = seed;
    c.compute = Nanos(static_cast<int64_t>(r.log_uniform(g.compute_lo_s, g.compute_hi_s) * 1e9));
    c.bw_in = std::floor(r.log_uniform(g.bw_lo, g.bw_hi));
    c.bw_out =
        r.unit() < g.asymmetric_share ? std::floor(c.bw_in * r.log_uniform(1.0 / 8, 8.0)) : c.bw_in;
    c.bw_out = std::max(1.0, c.bw_out);
    c.lat = r.unit() < 0.25
                ? Nanos(0)
                : Nanos(static_cast<int64_t>(r.log_uniform(g.lat_lo_s, g.lat_hi_s) * 1e9));
    c.full_duplex = r.unit() < g.full_duplex_share;
    c.depth = static_cast<uint32_t>(std::llround(r.log_uniform(g.depth_lo, g.depth_hi)));
    c.model = random_transport(r, g);
    auto m = build_case_model(c);
    if (!m) {
      if (attempt >= 1000) ADD_FAILURE() << "seed " << seed << ": no buildable case in 1000 draws";
      if (attempt >= 1000) return Drawn{c, ModelSource{}};
      continue;
    }
    const double frame = static_cast<double>(c.in_bytes + c.out_bytes);
    if (frame * c.depth > g.max_frame_x_depth || c.lone_s() > g.max_lone_s ||
        c.bottleneck_s() > g.max_lone_s / 4) {
      if (attempt < 1000) continue;
    }
    return Drawn{c, std::move(*m)};
  }
}

}  // namespace rig::fidelity

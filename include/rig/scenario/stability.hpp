// Whether a repeat's rate settled, judged on enough data: its last three
// windows against the stability tolerance and against the spread that the
// frame-time noise alone gives windows of that many frames
// (docs/methodology.md, "Stability judged on enough data").
//
// A window's rate is its frames over their summed frame times, so a window of
// n frames whose frame times vary by c (sd / mean) carries a relative noise
// of c / sqrt(n). The range of three such windows exceeds q x c / sqrt(n)
// with probability 0.1 %, q = kStabilityRangeQuantile. A spread above the
// tolerance that this noise allows is not a change rig can tell from chance:
// the repeat is `unresolved` (too few frames per window), not `unstable`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "rig/engine.hpp"

namespace rig {

// The 99.9 % point of the range of three independent standard normals
// (the studentized range q(0.999; 3, infinity)).
inline constexpr double kStabilityRangeQuantile = 5.063;

enum class Stability {
  stable,      // the last 3 windows within the tolerance
  unresolved,  // fewer than 3 windows, or a spread the frame-time noise explains
  unstable,    // a spread beyond both the tolerance and the noise
};

struct StabilityJudgement {
  Stability state = Stability::unresolved;
  size_t windows = 0;
  // The fewest frames in one of the last 3 windows (in any window below 3;
  // the repeat's count with no window).
  uint64_t frames_per_window = 0;
  std::optional<double> spread;  // the last 3 windows' (max - min) / median
  // The frame-time noise c (sd / mean of one frame's time), from the
  // pipelined latencies less the windows' own variation; nullopt without
  // latencies.
  std::optional<double> frame_cv;
  // q x c / sqrt(frames_per_window): the spread chance alone reaches with
  // probability 0.1 %; nullopt with frame_cv.
  std::optional<double> noise_spread;
  // Frames per window for the tolerance to lie above the noise:
  // (q x c / tolerance)^2; 0 when any count does.
  uint64_t frames_needed = 0;
};

StabilityJudgement judge_stability(const SteadyRepeat& repeat, double tolerance);

// "too few frames per window (40) to tell a 5.0% change from the frame-time
// noise (...): raise --duration": the finding of an unresolved repeat, with
// `who` ("repeat 1: ", a point's name) in front.
std::string unresolved_stability_text(const StabilityJudgement& j, double tolerance,
                                      const std::string& who);

}  // namespace rig

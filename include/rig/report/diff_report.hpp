// rig diff: two result documents of one tool, figure by figure.
//
// The figures: every summary block (an object with count, min, median, max)
// and every other number, outside settings, environment, model and verdict;
// arrays of objects are entered when each element names itself by a unique
// "size" or "depth" (ladder rungs, sweep points), and skipped otherwise
// (bench's per-repeat records are summarised in steady.rate_per_s).
//
// Whether a change is outside the noise: two runs have no interleaved pairs,
// so the rule is that the two runs' ranges do not overlap. A summary's range
// is its confidence interval where the document gives one (ci_low / ci_high
// keys, or a "ci" object with low / high), else its min..max (for a rate
// across repeats, the repeat range). A bare number has no range: its change is
// shown, never judged.
//
// The environments are compared fact by fact (every string, number and bool
// under `environment`, the devices included, warnings as a set), except
// load_average, which differs between any two runs.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "rig/error.hpp"

namespace rig {

struct DiffSide {
  std::string label;     // "run 12" or the file's path
  std::string document;  // the result document
};

enum class Noise { outside, within, unknown };
std::string_view to_string(Noise n);

struct FigureChange {
  std::string path;  // "steady.rate_per_s", "results.rungs[1080p].mb_per_s"
  std::optional<double> a, b;
  std::optional<double> change;  // (b - a) / |a|; nullopt when a is 0 or absent
  std::optional<double> a_low, a_high, b_low, b_high;  // the ranges compared
  std::string range_kind;  // "confidence interval", "min..max", "" (none)
  Noise noise = Noise::unknown;
};

struct EnvironmentChange {
  std::string key;                  // "kernel", "device.spec", "warnings"
  std::optional<std::string> a, b;  // nullopt: absent on that side
};

struct DiffResult {
  DiffSide a, b;  // documents not kept: labels only
  std::string tool;
  std::string model_a, model_b;  // model.sha256 (else model.name) of each
  std::vector<FigureChange> figures;
  std::vector<EnvironmentChange> environment;
  std::vector<std::string> notes;  // "3 figures only in run 12", "different models"
  int outside = 0;                 // figures outside the noise
};

// invalid_argument naming the side when a document is not a readable result,
// or when the two are of different tools.
Result<DiffResult> diff_documents(const DiffSide& a, const DiffSide& b);

std::string format_diff_text(const DiffResult& result);
// schema_version, tool "rig diff", kind "diff", results (docs/results-schema.md).
std::string diff_to_json(const DiffResult& result);

}  // namespace rig

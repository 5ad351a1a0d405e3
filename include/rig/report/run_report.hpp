// Reporters of rig run, rig check and rig compare: a text table each and a
// JSON document each (tools "rig run", "rig check", "rig compare";
// docs/results-schema.md, version 3). Tensor bytes are never in the JSON:
// their sha256 is.
#pragma once

#include <string>

#include "rig/scenario/check.hpp"
#include "rig/scenario/compare.hpp"
#include "rig/scenario/run.hpp"

namespace rig {

// Per output: shape, dtype, mean, min, max, sha256; per reference: max abs /
// max rel error, L2 relative error, cosine similarity, count outside.
std::string format_run_text(const RunResult& result);
std::string run_to_json(const RunResult& result);

// One line per check: PASS/FAIL, its name and its evidence; then the total.
std::string format_check_text(const CheckResult& result);
std::string check_to_json(const CheckResult& result);

// One table, a row per variant.
std::string format_compare_text(const CompareResult& result);
std::string compare_to_json(const CompareResult& result);

}  // namespace rig

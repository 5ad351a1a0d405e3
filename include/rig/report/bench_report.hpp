// rig bench's reporters: the text table, and the JSON document written and
// read through one table of keys (src/report/bench_report.cpp), so the
// reader cannot drift from the writer. docs/results-schema.md lists the keys.
#pragma once

#include <string>
#include <string_view>

#include "rig/report/progress.hpp"
#include "rig/scenario/bench.hpp"

namespace rig {

// The wall time rig bench plans with these settings (rig/report/progress.hpp):
// lone frames up to latency_max; each repeat's warm-up up to warmup_max and
// its measured part from duration to duration x max_duration_factor; an
// offered-load run: one warm-up window and exactly duration.
WallPlan bench_wall_plan(const BenchSettings& settings);

// Human table: every figure with its unit; the rate also as time per frame.
std::string format_bench_text(const BenchResult& result);

// The JSON document, serialized. Top-level sections: schema_version, tool,
// settings (requested, effective), environment (device nested), model, ttfo,
// steady, latency, bytes, overhead, verdict. Never NaN: missing figures are
// null.
std::string bench_to_json(const BenchResult& result);

// Reads a rig bench JSON document back into a result, for every schema
// version readable_schema_versions() lists (keys added later are left at
// their defaults when absent). `what` names the document in errors (its
// path); `reader` names the command that wants a bench result ("predict").
// Errors are invalid_argument naming the field: "r.json: field
// 'ttfo.load_ms' is missing", "... schema_version 99 ...", "... a 'rig
// ladder' result; predict reads a rig bench --json result".
Result<BenchResult> read_bench_json(std::string_view text, std::string_view what,
                                    std::string_view reader = "this command");

// Reads bench settings from a JSON object whose keys are those of a result's
// settings.effective (docs/results-schema.md); absent keys keep BenchSettings'
// defaults, unknown keys are refused by name. Does not validate() the
// ranges. Used by the C ABI's rig_bench.
Result<BenchSettings> read_bench_settings_json(std::string_view text, std::string_view what);

}  // namespace rig

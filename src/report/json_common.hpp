// The blocks every result document shares, written once: the header
// (schema_version, tool), numbers that are never NaN, summaries, errors, the
// environment with its device, the verdict. Private to the reporters: public
// headers hand back serialized text, never nlohmann::json.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "rig/device.hpp"
#include "rig/engine.hpp"
#include "rig/environment.hpp"
#include "rig/scenario/input_verdict.hpp"
#include "rig/scenario/point.hpp"
#include "rig/scenario/settings.hpp"
#include "rig/scenario/verdict.hpp"
#include "rig/stats.hpp"

namespace rig::report {

using nlohmann::json;

std::optional<double> optional_ms(const std::optional<Nanos>& d);

// A finite number, or null for nullopt / NaN / infinity (JSON has no NaN).
json json_number(std::optional<double> value);
// A percentile's interval: p, confidence, enough, needs, lower, upper and
// their 1-based ranks (null when there are not enough samples).
json json_interval(const PercentileInterval& ci);
json json_summary(const Summary& s);
json error_json(const std::optional<Error>& e);
json tensor_json(const TensorInfo& t);
json model_json(const ModelInfo& m);  // name, inputs, outputs (every tensor), normalization
json normalization_json(const ModelRewrites& n);  // ran, nodes_before/after, rewrites, notes
json timings_json(const InferenceTimings& t);
json ttfo_json(const TtfoResult& t);
json point_settings_json(const PointSettings& s);
json point_json(const PointResult& p);
json model_summary_json(const ModelInfo& m);  // name, input_bytes, output_bytes
json device_json(const DeviceInfo& d);
// The environment's facts and warnings, whether the clock is virtual, and
// each device under its key ("device", or "device_a"/"device_b").
json environment_json(const Environment& env, bool virtual_clock,
                      const std::vector<std::pair<std::string, const DeviceInfo*>>& devices);
// status, valid, reasons, warnings, and every rule checked.
json verdict_json(const Verdict& v);
// The inputs a command read, each with its verdict:
// [{source, tool, status, reasons}] (rig predict, fit, place; version 6).
json inputs_json(const JudgedInputs& judged);
// The data a measurement bound (version 6): {"source": "generated", "seed":
// N, "files": []} or {"source": "files", "seed": null, "files": [{path,
// sha256, bytes}]} (--input, in the order given).
json input_data_json(const InputFiles* files, uint64_t seed);
// {"schema_version": kJsonSchemaVersion, "tool": tool}
json document(std::string_view tool);

// Every reader of a document parses it here: the nesting bounded first
// (rig/json_depth.hpp), then nlohmann's parser. Errors are invalid_argument
// naming `what`: "... nested deeper than 64 levels ...", "not JSON
// (expected EXPECTED)".
Result<json> parse_json(std::string_view text, std::string_view what, std::string_view expected);

// A document read back: parsed (parse_json), an object with a readable schema_version and
// the `tool` a reader wants ("" accepts any tool). Errors are
// invalid_argument naming `what`: "L.json: not JSON (expected a rig ladder
// --json result)", "... schema_version 9 is not one this rig reads (1, 2,
// 3)", "... a 'rig bench' result; fit --ladder reads a rig ladder --json
// result". Returns the document and its version.
Result<std::pair<json, int>> read_document(std::string_view text, std::string_view what,
                                           std::string_view tool, std::string_view reader);

// Serializes a document: two-space indent; invalid UTF-8 in device strings is
// replaced, never thrown.
std::string dump(const json& doc);

}  // namespace rig::report

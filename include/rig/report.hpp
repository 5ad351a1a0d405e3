// Reporters: turn results into text and JSON. They know nothing of devices or
// measurement; they only format what a result holds.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "rig/bench.hpp"

namespace rig {

// Version of the JSON layout (not the rig version). Bump on breaking changes.
inline constexpr int kJsonSchemaVersion = 1;

// A finite number, or null for nullopt / NaN / infinity (JSON has no NaN).
nlohmann::json json_number(std::optional<double> value);
nlohmann::json json_summary(const Summary& s);

// Human table: every figure with its unit; the rate also as time per frame.
std::string format_bench_text(const BenchResult& result);

// Top-level sections: schema_version, settings, environment, device, model,
// ttfo, steady, latency, bytes, overhead, verdict.
nlohmann::json bench_to_json(const BenchResult& result);

// Serializes JSON (never NaN) and writes it atomically.
Result<void> write_json_file(const std::string& path, const nlohmann::json& document);

}  // namespace rig

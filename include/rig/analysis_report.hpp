// Reporters for the characterization scenarios: text with units and JSON
// (schema_version, settings, environment, device, results; never NaN). They
// only format what a result holds.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "rig/analysis.hpp"
#include "rig/bench.hpp"

namespace rig {

std::string format_ladder_text(const LadderResult& result);
nlohmann::json ladder_to_json(const LadderResult& result);

std::string format_sweep_text(const SweepResult& result);
nlohmann::json sweep_to_json(const SweepResult& result);

std::string format_ab_text(const AbResult& result);
nlohmann::json ab_to_json(const AbResult& result);

// Reads what prediction needs from a `rig bench --json` document. `what`
// names the document in errors (its path); a missing or null field is
// invalid_argument naming it ("latency.hardware_ms.median").
Result<PredictSource> predict_source_from_json(const nlohmann::json& bench, std::string_view what);

std::string format_prediction_text(const PredictSource& source, const Prediction& prediction);
nlohmann::json prediction_to_json(const std::string& result_path, const PredictSource& source,
                                  const Prediction& prediction);

}  // namespace rig

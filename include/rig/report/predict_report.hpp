// rig predict's reporters: text with every figure's unit, and the JSON
// document (schema_version, tool, settings with the link, results with the
// source figures and the prediction). docs/results-schema.md lists the keys.
#pragma once

#include <string>

#include "rig/scenario/predict.hpp"

namespace rig {

// The named link profiles as a table (rig predict --list-links).
std::string format_link_profiles_text();

std::string format_prediction_text(const PredictSource& source, const Prediction& prediction);
// `result_path` names the bench result the prediction came from.
std::string prediction_to_json(const std::string& result_path, const PredictSource& source,
                               const Prediction& prediction);

}  // namespace rig

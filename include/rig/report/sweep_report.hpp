// rig sweep's reporters: text with every figure's unit, and the JSON document
// (schema_version, tool, settings, environment with the device, results,
// notes, verdict; never NaN). docs/results-schema.md lists the keys.
#pragma once

#include <string>

#include "rig/scenario/rate_search.hpp"
#include "rig/scenario/sweep.hpp"

namespace rig {

std::string format_sweep_text(const SweepResult& result);
std::string sweep_to_json(const SweepResult& result);  // the document, serialized

// rig sweep --rate: tool "rig sweep" with "kind": "rate" beside it; the
// probes, the best rate meeting the bound and the first failing rate.
std::string format_rate_sweep_text(const RateSweepResult& result);
std::string rate_sweep_to_json(const RateSweepResult& result);

}  // namespace rig

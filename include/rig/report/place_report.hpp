// rig place's reporters and its reader of candidates: a rig bench or rig
// predict document turned into a PlaceCandidate (rig/scenario/place.hpp).
// docs/results-schema.md lists the keys of the place document.
#pragma once

#include <string>
#include <string_view>

#include "rig/scenario/place.hpp"

namespace rig {

// From a bench result: the steady median rate, latency.hardware_ms.median
// as compute (else the lone median, with a caveat), the link from a sim
// device's properties (none in process; unknown for other devices, with a
// caveat), monitor.energy.joules_per_inference where the monitor measured it; INVALID reasons
// and verdict warnings as caveats. From a predict result: the predicted rate,
// lone latency and compute, the target link, and a caveat that it is
// predicted. invalid_argument naming `what` otherwise.
Result<PlaceCandidate> read_place_candidate(std::string_view text, std::string_view what);

std::string format_place_text(const PlaceResult& result);
// schema_version, tool "rig place", kind "place", settings, results.
std::string place_to_json(const PlaceResult& result);

}  // namespace rig

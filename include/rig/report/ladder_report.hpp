// rig ladder's reporters: text with every figure's unit, and the JSON document
// (schema_version, tool, settings, environment with the device, results,
// notes, verdict; never NaN). docs/results-schema.md lists the keys.
#pragma once

#include <string>
#include <string_view>

#include "rig/link_profile.hpp"

#include "rig/scenario/ladder.hpp"

namespace rig {

std::string format_ladder_text(const LadderResult& result);
std::string ladder_to_json(const LadderResult& result);  // the document, serialized

// The link a rig ladder document measured, as a profile for rig fit and rig
// place: bw_in = bw_out = results.direction_bandwidth_bytes_per_s (one
// direction's), else results.bandwidth_bytes_per_s (in + out over one
// channel); latency = results.per_transfer_ms (0 when not fitted); duplex and
// the device's queue depth from the document; name "measured", source naming
// `what` and the device. invalid_argument naming the field when the document
// has no fitted bandwidth, or is not a ladder result.
Result<LinkProfile> read_ladder_link(std::string_view text, std::string_view what,
                                     std::string_view reader = "this command");

}  // namespace rig

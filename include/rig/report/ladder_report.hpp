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

// The link a rig ladder document measured, as a profile for rig predict, fit
// and place: bw_in and bw_out = results.bw_in_bytes_per_s and
// results.bw_out_bytes_per_s (version 5); from an older document, or one
// whose directions were not identified, both = the one bandwidth it has
// (direction_bandwidth_bytes_per_s, else bandwidth_bytes_per_s);
// latency = results.per_transfer_ms (0 when not fitted); duplex and the
// device's queue depth from the document; name "measured", source naming
// `what`, the device and the keys read. invalid_argument naming the field
// when the document has no fitted bandwidth, or is not a ladder result.
Result<LinkProfile> read_ladder_link(std::string_view text, std::string_view what,
                                     std::string_view reader = "this command");

}  // namespace rig

// The bound on how deeply a JSON document rig reads may nest, checked on the
// text before anything parses or walks it: every reader of a document that
// came from a file, a history database or a peer goes through
// check_json_depth(), so that a small file nested 20,000 deep is refused by
// name instead of overflowing the stack of a recursive walk or dump.
#pragma once

#include <string_view>

#include "rig/error.hpp"

namespace rig {

// Arrays and objects nested deeper than this are refused. A result rig
// writes nests under 10 deep (7 in a rate-searching sweep).
inline constexpr int kMaxJsonDepth = 64;

// invalid_argument "WHAT: nested deeper than 64 levels (at byte N; rig's
// own results nest under 10): ..." when the text opens more than kMaxJsonDepth
// arrays or objects at once; otherwise nothing. Brackets inside strings are
// not counted; the text need not be valid JSON (the parser judges that).
// One pass, no allocation.
Result<void> check_json_depth(std::string_view text, std::string_view what);

}  // namespace rig

#include "rig/json_depth.hpp"

#include <string>

namespace rig {

Result<void> check_json_depth(std::string_view text, std::string_view what) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;  // the escaped character is never a quote that ends the string
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth)
        return fail(ErrorCode::invalid_argument,
                    std::string(what) + ": nested deeper than " + std::to_string(kMaxJsonDepth) +
                        " levels (at byte " + std::to_string(i) +
                        "; rig's own results nest under 10): not a document rig reads");
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return {};
}

}  // namespace rig

// parse_frame_size: named frames and WxH.
#include <charconv>
#include <string>

#include "rig/model.hpp"

namespace rig {
namespace {

// Frames larger than this on a side are a typo, not a camera; it is also the
// model builder's cap (build.cpp), so a frame this accepts can be built.
constexpr int64_t kMaxSide = 16384;

bool parse_side(std::string_view text, int64_t& out) {
  if (text.empty() || text.front() < '0' || text.front() > '9') return false;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && ptr == text.data() + text.size() && out >= 1 && out <= kMaxSide;
}

}  // namespace

Result<FrameSize> parse_frame_size(std::string_view text) {
  static const std::pair<std::string_view, FrameSize> named[] = {
      {"512p", {512, 512}}, {"720p", {1280, 720}}, {"1080p", {1920, 1080}},
      {"4k", {3840, 2160}}, {"4K", {3840, 2160}},
  };
  for (const auto& [name, size] : named)
    if (text == name) return size;

  auto bad = [&] {
    return fail(ErrorCode::invalid_argument,
                "frame size '" + std::string(text) +
                    "' is not one of 512p, 720p, 1080p, 4k or WxH (e.g. 640x480, sides 1.." +
                    std::to_string(kMaxSide) + ")");
  };
  size_t x = text.find('x');
  if (x == std::string_view::npos) return bad();
  FrameSize size;
  if (!parse_side(text.substr(0, x), size.width) || !parse_side(text.substr(x + 1), size.height))
    return bad();
  return size;
}

}  // namespace rig

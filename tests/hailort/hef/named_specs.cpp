// The named test HEFs and HailoRT's host frame size; no protobuf here, so
// check_hef links this next to libhailort.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "synthetic_hef.hpp"

#ifndef RIG_HAILORT_MAJOR
#error "RIG_HAILORT_MAJOR and _MINOR name the HailoRT these specs are checked against"
#endif

namespace rig::test::hef {

namespace {

uint64_t element_bytes(Format format) {
  switch (format) {
    case Format::uint8:
      return 1;
    case Format::uint16:
      return 2;
    case Format::float32:
      return 4;
  }
  return 0;
}

// a * b, or UINT64_MAX where that does not fit.
uint64_t saturating_mul(uint64_t a, uint64_t b) {
  uint64_t product = 0;
  return __builtin_mul_overflow(a, b, &product) ? std::numeric_limits<uint64_t>::max() : product;
}

uint64_t saturating_add(uint64_t a, uint64_t b) {
  uint64_t sum = 0;
  return __builtin_add_overflow(a, b, &sum) ? std::numeric_limits<uint64_t>::max() : sum;
}

Stream image(std::string name, uint32_t height, uint32_t width, uint32_t features,
             Format format = Format::uint8) {
  Stream s;
  s.name = std::move(name);
  s.height = height;
  s.width = width;
  s.features = features;
  s.format = format;
  s.frame_bytes = host_frame_bytes(s);
  return s;
}

Stream nms_output(std::string name, uint32_t classes, uint32_t boxes_per_class) {
  Stream s;
  s.name = std::move(name);
  s.height = classes;
  s.width = kNmsBoxParams;
  s.features = boxes_per_class;
  s.format = Format::float32;
  s.nms = true;
  s.frame_bytes = host_frame_bytes(s);
  return s;
}

}  // namespace

uint64_t host_frame_bytes(const Stream& stream) {
  if (stream.nms) {
    // hailort_common.hpp get_nms_by_class_host_shape_size: per class a box
    // count then BBOX_PARAMS values per box, all float32.
    const uint64_t per_class =
        saturating_add(1, saturating_mul(kNmsBoxParams, uint64_t{stream.features}));
    return saturating_mul(saturating_mul(per_class, stream.height), element_bytes(Format::float32));
  }
  const uint64_t elements =
      saturating_mul(saturating_mul(stream.height, stream.width), uint64_t{stream.features});
  return saturating_mul(elements, element_bytes(stream.format));
}

std::vector<std::string> hailort_group_order(const Spec& spec) {
  std::vector<std::string> names;
  for (const auto& group : spec.groups) names.push_back(group.name);
  // Before 5.2 the parser popped the groups off the message's end.
  if (RIG_HAILORT_MAJOR < 5 || (RIG_HAILORT_MAJOR == 5 && RIG_HAILORT_MINOR < 2))
    std::reverse(names.begin(), names.end());
  return names;
}

std::vector<std::string> named_spec_kinds() {
  return {"single_u8", "multi_input", "nms", "two_groups"};
}

std::optional<Spec> named_spec(const std::string& kind) {
  Spec spec;
  if (kind == "single_u8") {
    spec.groups.push_back({"single_u8",
                           {image("single_u8/input_layer1", 16, 16, 3)},
                           {image("single_u8/output_layer1", 1, 1, 10)}});
  } else if (kind == "multi_input") {
    // A uint16 output too, so a reader that assumes one byte per element shows.
    spec.groups.push_back(
        {"multi_input",
         {image("multi_input/input_layer1", 8, 8, 3), image("multi_input/input_layer2", 4, 4, 1)},
         {image("multi_input/output_layer1", 1, 1, 10),
          image("multi_input/output_layer2", 2, 2, 4, Format::uint16)}});
  } else if (kind == "nms") {
    spec.groups.push_back(
        {"nms", {image("nms/input_layer1", 16, 16, 3)}, {nms_output("nms/nms_output", 4, 10)}});
  } else if (kind == "two_groups") {
    spec.groups.push_back({"group_a",
                           {image("group_a/input_layer1", 8, 8, 3)},
                           {image("group_a/output_layer1", 1, 1, 4)}});
    spec.groups.push_back({"group_b",
                           {image("group_b/input_layer1", 4, 4, 3)},
                           {image("group_b/output_layer1", 1, 1, 2)}});
  } else {
    return std::nullopt;
  }
  return spec;
}

}  // namespace rig::test::hef

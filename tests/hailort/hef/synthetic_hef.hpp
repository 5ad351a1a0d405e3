// Synthetic HEF files that HailoRT's own parser accepts (hef.proto of the
// HailoRT tree given at configure; hef/hef.cpp and hef_internal.hpp of that
// tree say what it checks), and the reader the fake device server uses to
// learn the streams of the HEF a client sends it. Test-only.
//
// Two libraries (tests/hailort/hef/targets.cmake):
//   synthetic_hef_spec_<ver>  named_spec, host_frame_bytes: plain C++, safe to
//                             link next to libhailort (check_hef does).
//   synthetic_hef_<ver>       write_hef, read_hef: links the code generated
//                             from hef.proto, so it never shares a process
//                             with libhailort (which exports the same global
//                             protobuf types).
//
// What write_hef writes (the file layout, all header integers big-endian, as
// hef.cpp's parse_hef_header_before_distinct and fill_v3_hef_header read):
//   version 0: magic 0x01484546, version, proto size, 4 reserved bytes, the
//              MD5 of the proto bytes (16 raw bytes), the proto.       32 + proto
//   version 3: magic, version, proto size, xxh3 of the proto, ccws size 0,
//              padding 0 (u32), additional info 0, xxh3 of the proto,
//              8 reserved bytes, the proto.                            56 + proto
// The proto (ProtoHEFHef) describes a Hailo-10H model: hw_arch HAILO1XH,
// proto header version 1, the extensions PERIPH_CALCULATION_IN_HAILORT,
// HAILO_NET_FLOW and NMS_OUTPUT_BURST; each network group holds one core op
// with an empty preliminary config and one dynamic context whose boundary
// edge layers are the spec's streams (one buffer_indices entry each), in the
// order given; outputs are also listed, in order, as the sorted outputs.
// No configuration words: there is nothing to load on a chip.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rig::test::hef {

enum class Format { uint8, uint16, float32 };

// The number of values per box in HailoRT's NMS shape (hailort_common.hpp:
// BBOX_PARAMS = sizeof(hailo_bbox_t) / sizeof(uint16_t)).
inline constexpr uint32_t kNmsBoxParams = 5;

struct Stream {
  std::string name;  // the vstream name HailoRT reports (e.g. "net/input_layer1")
  // An image stream: its NHWC shape. An NMS stream (nms): height = the number
  // of classes, width = kNmsBoxParams, features = the most boxes per class,
  // which is how hef.cpp's parse_layer_shape shapes an on-chip NMS layer.
  uint32_t height = 1, width = 1, features = 1;
  // The host-side element type HailoRT reports: the device's uint8 or uint16
  // for image streams, float32 for NMS streams (HAILO_NMS_BY_CLASS boxes).
  Format format = Format::uint8;
  bool nms = false;  // an output decoded on chip (HailoRT's NMS shape and frame size)
  // The frame size HailoRT reports for the stream (host-side, after
  // transformation): height*width*features*element size, or the NMS frame.
  uint64_t frame_bytes = 0;  // filled by read_hef and by named_spec
};

struct NetworkGroup {
  std::string name;
  std::vector<Stream> inputs, outputs;
};

struct Spec {
  std::vector<NetworkGroup> groups;
  // The file header's version: 0 (MD5 of the proto) for the inference tests,
  // 3 (xxh3) for GenAI's Hef::hash (which refuses below 3).
  uint32_t header_version = 0;
};

// The HEFs the tests use, by name: "single_u8" (one uint8 input, one output),
// "multi_input" (two inputs of different sizes, two outputs), "nms" (an
// output with on-chip NMS), "two_groups" (two network groups). nullopt for
// any other name. Frames are a few bytes to under 1 KiB.
std::optional<Spec> named_spec(const std::string& kind);
// The names named_spec knows, in a fixed order.
std::vector<std::string> named_spec_kinds();

// The group names in the order this HailoRT version's Hef::
// get_network_groups_names lists them; the first is the group it addresses
// when given no name (get_input_vstream_infos(""), create_infer_model
// without a name). 5.2.0 keeps the file's order (hef.cpp
// capture_protobuf_references); 5.1.1 reverses it (hef.cpp
// transfer_protobuf_field_ownership moves the groups out with ReleaseLast).
// The version is the one this library was built for (RIG_HAILORT_MAJOR,
// RIG_HAILORT_MINOR).
std::vector<std::string> hailort_group_order(const Spec& spec);

// The host frame size HailoRT reports for `stream` (HailoRTCommon::
// get_frame_size of its vstream info with the default format): for NMS
// streams classes * (1 + kNmsBoxParams * boxes) float32 values. Saturates
// at UINT64_MAX rather than wrapping.
uint64_t host_frame_bytes(const Stream& stream);

// The file bytes for `spec`. A spec HailoRT could not describe is a bug of
// the caller and throws std::invalid_argument: a header_version other than
// 0 or 3, no groups, a group without inputs or outputs, a float32 image
// stream, an NMS input, an NMS stream whose width is not kNmsBoxParams, an
// empty or repeated stream name, a name of 128 bytes or more.
std::vector<uint8_t> write_hef(const Spec& spec);

// Reads a HEF this writer made (or any HEF whose proto it can parse): the
// groups and their streams. nullopt with *why set on bytes it cannot read.
// Checks what HailoRT checks before trusting the bytes: the magic, the
// sizes in the header against the file's, the MD5 (version 0) or xxh3
// (versions 2 and 3) digest; version 1's CRC is not checked. It refuses what
// HailoRT's parser would refuse or crash on among what it reads: a group
// without a core op or a context, an edge layer without exactly one
// buffer_indices entry, a repeated stream name. Bounded work and memory on
// any input; throws nothing but std::bad_alloc.
std::optional<Spec> read_hef(const std::vector<uint8_t>& bytes, std::string* why);

}  // namespace rig::test::hef

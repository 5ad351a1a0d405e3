// write_hef and read_hef: the file header and the ProtoHEFHef message (the
// layout is at the top of synthetic_hef.hpp). Citations name HailoRT's files
// under libhailort/ of 5.1.1 and 5.2.0, which agree on all of this.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "synthetic_hef.hpp"

// Header-only, as HailoRT itself uses it (common/utils.hpp): nothing to link.
#define XXH_INLINE_ALL 1
#include <xxhash.h>

#include "hef.pb.h"

#ifndef RIG_HAILORT_MAJOR
#error "RIG_HAILORT_MAJOR, _MINOR and _REVISION name the HailoRT whose hef.proto this builds with"
#endif

namespace rig::test::hef {

namespace {

// src/hef/hef_internal.hpp: HEADER_MAGIC, HEADER_VERSION_0..3 and the packed
// hef__header_t (common part, then one of the distinct parts).
constexpr uint32_t kMagic = 0x01484546;
constexpr size_t kCommonHeaderBytes = 12;  // magic, version, hef_proto_size
constexpr size_t kHeaderBytesV0 = 32;      // + reserved u32, MD5 (16 bytes)
constexpr size_t kHeaderBytesV1 = 28;      // + crc u32, ccws_size u64, reserved u32
constexpr size_t kHeaderBytesV2 = 44;      // + xxh3 u64, ccws_size u64, 2 reserved u64
// + xxh3 u64, ccws_size_with_padding u64, hef_padding_size u32,
//   additional_info_size u64, proto_xxh3 u64, reserved u64
constexpr size_t kHeaderBytesV3 = 56;

// Edge-layer formats as the compiler numbers them (src/hailort_defaults.cpp,
// get_device_format_order); any other number is refused by HailoRT.
constexpr uint32_t kCompilerFormatNhwc = 0;
constexpr uint32_t kCompilerFormatNc =
    2;  // never transposed (hef.cpp fill_layer_info_with_base_info)
constexpr uint32_t kCompilerFormatNms = 6;  // HAILO_FORMAT_ORDER_HAILO_NMS_ON_CHIP
constexpr std::array<uint32_t, 14> kCompilerFormats = {0, 1, 2,  3,  4,  5,  6,
                                                       7, 8, 11, 13, 14, 15, 16};

// src/stream_common/nms_stream.cpp: boxes read in burst mode are 8 bytes.
constexpr uint32_t kNmsBoxBytes = 8;
// include/hailo/hailort.h: HAILO_MAX_STREAM_NAME_SIZE, the terminator included.
constexpr size_t kMaxStreamNameBytes = 127;
// A MUX edge layer's predecessors may be MUXes; deeper than this is refused.
constexpr int kMaxMuxDepth = 8;

// ---- digests ----------------------------------------------------------------

// MD5 (RFC 1321), for the version 0 header.
std::array<uint8_t, 16> md5(const uint8_t* data, size_t size) {
  static constexpr uint32_t kSine[64] = {
      0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613,
      0xfd469501, 0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193,
      0xa679438e, 0x49b40821, 0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d,
      0x02441453, 0xd8a1e681, 0xe7d3fbc8, 0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed,
      0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a, 0xfffa3942, 0x8771f681, 0x6d9d6122,
      0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70, 0x289b7ec6, 0xeaa127fa,
      0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665, 0xf4292244,
      0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
      0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb,
      0xeb86d391};
  static constexpr uint32_t kShift[16] = {7, 12, 17, 22, 5, 9,  14, 20,
                                          4, 11, 16, 23, 6, 10, 15, 21};
  uint32_t state[4] = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476};

  const auto process = [&state](const uint8_t* block) {
    uint32_t words[16];
    for (int i = 0; i < 16; ++i)
      words[i] = uint32_t{block[4 * i]} | uint32_t{block[4 * i + 1]} << 8 |
                 uint32_t{block[4 * i + 2]} << 16 | uint32_t{block[4 * i + 3]} << 24;
    uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
    for (int i = 0; i < 64; ++i) {
      uint32_t f = 0;
      int word = 0;
      if (i < 16) {
        f = (b & c) | (~b & d);
        word = i;
      } else if (i < 32) {
        f = (d & b) | (~d & c);
        word = (5 * i + 1) % 16;
      } else if (i < 48) {
        f = b ^ c ^ d;
        word = (3 * i + 5) % 16;
      } else {
        f = c ^ (b | ~d);
        word = (7 * i) % 16;
      }
      f += a + kSine[i] + words[word];
      const uint32_t shift = kShift[(i / 16) * 4 + i % 4];
      a = d;
      d = c;
      c = b;
      b += (f << shift) | (f >> (32 - shift));
    }
    state[0] += a;
    state[1] += b;
    state[2] += c;
    state[3] += d;
  };

  size_t offset = 0;
  for (; size - offset >= 64; offset += 64) process(data + offset);
  // The tail, a 1 bit, zeros, and the length in bits (little-endian) fill one
  // or two last blocks.
  uint8_t tail[128] = {};
  const size_t rest = size - offset;
  if (rest > 0) std::memcpy(tail, data + offset, rest);
  tail[rest] = 0x80;
  const size_t tail_bytes = rest < 56 ? 64 : 128;
  const uint64_t bits = uint64_t{size} * 8;
  for (int i = 0; i < 8; ++i) tail[tail_bytes - 8 + i] = static_cast<uint8_t>(bits >> (8 * i));
  process(tail);
  if (tail_bytes == 128) process(tail + 64);

  std::array<uint8_t, 16> digest{};
  for (int i = 0; i < 16; ++i) digest[i] = static_cast<uint8_t>(state[i / 4] >> (8 * (i % 4)));
  return digest;
}

uint64_t xxh3(const uint8_t* data, size_t size) {
  return XXH3_64bits(data, size);
}

// ---- big-endian fields --------------------------------------------------------

void put_be32(std::vector<uint8_t>& out, uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<uint8_t>(value >> shift));
}

void put_be64(std::vector<uint8_t>& out, uint64_t value) {
  for (int shift = 56; shift >= 0; shift -= 8) out.push_back(static_cast<uint8_t>(value >> shift));
}

// The caller has checked that [at, at + 4) (or + 8) lies inside `bytes`.
uint32_t be32(const std::vector<uint8_t>& bytes, size_t at) {
  uint32_t value = 0;
  for (size_t i = 0; i < 4; ++i) value = value << 8 | bytes[at + i];
  return value;
}

uint64_t be64(const std::vector<uint8_t>& bytes, size_t at) {
  return uint64_t{be32(bytes, at)} << 32 | be32(bytes, at + 4);
}

// ---- writer ---------------------------------------------------------------------

void require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument("write_hef: " + what);
}

uint32_t device_data_bytes(const Stream& stream) {
  if (stream.nms) return 2;  // on-chip NMS boxes are uint16 values
  require(stream.format != Format::float32,
          "stream '" + stream.name + "': float32 image streams are not what a device sends");
  return stream.format == Format::uint16 ? 2 : 1;
}

void fill_metadata(ProtoHEFNetworkGroupMetadata* metadata, const std::string& name,
                   uint32_t index) {
  metadata->set_network_group_name(name);
  metadata->set_network_group_index(index);
  // One config channel on DMA engine 0, as parse_config_channels_info
  // (hef.cpp) assumes for HEFs that name none.
  metadata->set_cfg_channels_count(1);
  auto* channel = metadata->add_cfg_channels_config();
  channel->set_cfg_channel_index(0);
  channel->set_engine_id(0);
}

// One boundary edge layer. HailoRT reads the host shape from height, width
// and features (or, for NMS, from nms_info) and the hardware shape from the
// padded fields, which are the same here (no padding).
void fill_edge_layer(ProtoHEFEdgeLayer* layer, const Stream& stream, bool input,
                     uint32_t stream_index, const std::string& context_name) {
  layer->set_direction(input ? PROTO__EDGE_LAYER_DIRECTION__HOST_TO_DEVICE
                             : PROTO__EDGE_LAYER_DIRECTION__DEVICE_TO_HOST);
  layer->set_edge_layer_type(PROTO__EDGE_LAYER_TYPE__INFO);
  layer->set_network_index(0);
  auto* switch_info = layer->mutable_context_switch_info();
  switch_info->set_context_index(0);
  switch_info->set_context_name(context_name);
  switch_info->set_edge_connection_type(PROTO__EDGE_CONNECTION_TYPE__BOUNDARY);

  auto* info = layer->mutable_layer_info();
  info->set_name(stream.name);
  const auto slash = stream.name.rfind('/');
  info->add_original_names(slash == std::string::npos ? stream.name
                                                      : stream.name.substr(slash + 1));
  const uint32_t data_bytes = device_data_bytes(stream);
  auto* numeric = info->mutable_numeric_info();
  numeric->set_qp_zp(0);
  numeric->set_qp_scale(1);
  numeric->set_limvals_min(0);
  numeric->set_limvals_max(data_bytes == 1 ? 255.0f : 65535.0f);

  auto* base = info->mutable_edge_layer_base();
  base->set_height(stream.height);
  base->set_padded_height(stream.height);
  base->set_width(stream.width);
  base->set_padded_width(stream.width);
  base->set_features(stream.features);
  base->set_padded_features(stream.features);
  base->set_data_bytes(data_bytes);
  base->set_sys_index(stream_index);
  base->set_engine_id(0);
  // hef.cpp fill_layer_info reads buffer_indices(0) without looking: a layer
  // without one crashes the parser.
  auto* buffer = base->add_buffer_indices();
  buffer->set_index(stream_index);
  buffer->set_cluster_index(0);

  if (!stream.nms) {
    base->set_format(kCompilerFormatNhwc);
    // One row per buffer; parse_nn_stream_config needs both in 16 bits.
    const uint64_t row_bytes = uint64_t{stream.width} * stream.features * data_bytes;
    require(row_bytes <= std::numeric_limits<uint16_t>::max() &&
                stream.height <= std::numeric_limits<uint16_t>::max(),
            "stream '" + stream.name + "': rows of " + std::to_string(row_bytes) + " bytes or " +
                std::to_string(stream.height) + " rows do not fit HailoRT's 16-bit fields");
    base->set_core_bytes_per_buffer(static_cast<uint32_t>(row_bytes));
    base->set_core_buffers_per_frame(stream.height);
    return;
  }
  base->set_format(kCompilerFormatNms);
  // Hailo-10H's NMS (hef.cpp get_nms_burst_mode: HAILO1XH reads the
  // H15 burst types), one burst per class: burst_size >= boxes + 2 lets the
  // device raise one interrupt per frame (layer_info.hpp
  // get_nms_layer_transfer_size).
  const uint32_t burst_size = stream.features + 2;
  require(uint64_t{burst_size} * kNmsBoxBytes <= 65536,
          "stream '" + stream.name + "': too many boxes per class for one NMS burst");
  base->set_core_bytes_per_buffer(burst_size * kNmsBoxBytes);
  base->set_core_buffers_per_frame(stream.height);
  auto* nms = base->mutable_additional_info()->mutable_nms_info();
  nms->set_number_of_classes(stream.height);
  nms->set_max_output_size(stream.features);
  nms->set_bbox_size(kNmsBoxBytes);
  nms->set_input_division_factor(1);
  nms->set_is_defused(false);
  nms->set_burst_size(burst_size);
  nms->set_burst_type(PROTO__NMS_BURST_TYPE__H15_PER_CLASS);
}

void check_stream(const Stream& stream, bool input, std::set<std::string>& names) {
  require(!stream.name.empty(), "a stream without a name");
  require(stream.name.size() <= kMaxStreamNameBytes,
          "stream '" + stream.name + "': names are at most 127 bytes (HAILO_MAX_STREAM_NAME_SIZE)");
  require(names.insert(stream.name).second, "stream name '" + stream.name + "' appears twice");
  require(stream.height > 0 && stream.width > 0 && stream.features > 0,
          "stream '" + stream.name + "': a zero dimension");
  if (stream.nms) {
    require(!input, "stream '" + stream.name + "': NMS is an output");
    require(stream.width == kNmsBoxParams,
            "stream '" + stream.name + "': an NMS stream's width is kNmsBoxParams (5)");
  }
}

void add_network_group(ProtoHEFHef& hef, const NetworkGroup& spec_group, uint32_t index) {
  require(!spec_group.name.empty(), "a network group without a name");
  require(!spec_group.inputs.empty() && !spec_group.outputs.empty(),
          "network group '" + spec_group.name + "' needs an input and an output");
  std::set<std::string> names;
  for (const auto& s : spec_group.inputs) check_stream(s, true, names);
  for (const auto& s : spec_group.outputs) check_stream(s, false, names);

  // With HAILO_NET_FLOW the streams live in the group's core op; the group
  // keeps its name and sorted outputs (hef.cpp fill_core_ops,
  // fill_networks_metadata, get_network_groups_names).
  auto* group = hef.add_network_groups();
  fill_metadata(group->mutable_network_group_metadata(), spec_group.name, index);
  group->set_network_group_name(spec_group.name);
  group->set_network_group_index(index);
  auto* op = group->add_ops();
  op->set_name(spec_group.name);
  auto* core_op = op->mutable_core_op();
  fill_metadata(core_op->mutable_network_group_metadata(), spec_group.name, index);
  core_op->mutable_preliminary_config();
  // create_metadata_per_arch (hef.cpp) reads the first dynamic context.
  auto* context = core_op->add_contexts();
  context->set_context_index(0);
  auto* context_metadata = context->mutable_metadata();
  const std::string context_name = spec_group.name + "_context_0";
  context_metadata->set_name(context_name);

  uint32_t stream_index = 0;
  for (const auto& s : spec_group.inputs)
    fill_edge_layer(context_metadata->add_edge_layers(), s, true, stream_index++, context_name);
  for (const auto& s : spec_group.outputs) {
    fill_edge_layer(context_metadata->add_edge_layers(), s, false, stream_index++, context_name);
    // The vstream order (core_op_metadata.cpp get_output_vstream_infos sorts
    // by it, and fails on a name it lacks); the fused-layers copy is what
    // HailoRT reads with post-processing disabled (HAILO_DISABLE_PP).
    group->add_sorted_outputs_order(s.name);
    group->mutable_fused_layers_metadata()->add_updated_sorted_output_names(s.name);
    core_op->add_sorted_outputs_order(s.name);
    core_op->mutable_fused_layers_metadata()->add_updated_sorted_output_names(s.name);
    context_metadata->add_sorted_outputs_order(s.name);
  }
}

void add_extension(ProtoHEFHef& hef, ProtoHEFExtensionType type, const char* name) {
  auto* extension = hef.add_extensions();
  extension->set_type_index(static_cast<uint32_t>(type));
  extension->set_name(name);
}

// ---- reader -----------------------------------------------------------------------

// Sets *why (when given) and converts to any empty optional.
std::nullopt_t refuse(std::string* why, std::string reason) {
  if (why) *why = std::move(reason);
  return std::nullopt;
}

// Where the proto lies in the file, once the header has been checked.
struct ProtoSpan {
  size_t offset = 0;
  size_t size = 0;
};

std::optional<ProtoSpan> check_header(const std::vector<uint8_t>& bytes, uint32_t version,
                                      std::string* why) {
  const auto fail = [why](std::string reason) { return refuse(why, std::move(reason)); };
  const size_t header_bytes = version == 0   ? kHeaderBytesV0
                              : version == 1 ? kHeaderBytesV1
                              : version == 2 ? kHeaderBytesV2
                              : version == 3 ? kHeaderBytesV3
                                             : 0;
  if (header_bytes == 0)
    return fail("HEF header version " + std::to_string(version) +
                ": HailoRT reads versions 0 to 3");
  if (bytes.size() < header_bytes)
    return fail("HEF of " + std::to_string(bytes.size()) + " bytes: shorter than its version " +
                std::to_string(version) + " header (" + std::to_string(header_bytes) + " bytes)");
  const uint64_t proto_bytes = be32(bytes, 8);
  const uint64_t residue = bytes.size() - header_bytes;
  const auto size_mismatch = [&](uint64_t others) -> std::nullopt_t {
    return fail("HEF header says " + std::to_string(proto_bytes) + " proto bytes and " +
                std::to_string(others) + " more; the file has " + std::to_string(residue) +
                " after its header (truncated or corrupted)");
  };
  const uint8_t* after_header = bytes.data() + header_bytes;
  switch (version) {
    case 0: {
      if (residue != proto_bytes) return size_mismatch(0);
      const auto digest = md5(after_header, residue);
      if (std::memcmp(digest.data(), bytes.data() + 16, digest.size()) != 0)
        return fail("HEF's MD5 does not match its proto bytes (corrupted)");
      break;
    }
    case 1: {
      // The CRC is not checked: HailoRT's own CRC32 flavour is not needed to
      // read the streams.
      const uint64_t ccws = be64(bytes, 16);
      if (residue < proto_bytes || residue - proto_bytes != ccws) return size_mismatch(ccws);
      break;
    }
    case 2: {
      const uint64_t ccws = be64(bytes, 20);
      if (residue < proto_bytes || residue - proto_bytes != ccws) return size_mismatch(ccws);
      if (xxh3(after_header, residue) != be64(bytes, 12))
        return fail("HEF's xxh3 does not match its bytes (corrupted)");
      break;
    }
    case 3: {
      const uint64_t ccws_with_padding = be64(bytes, 20);
      const uint64_t padding = be32(bytes, 28);
      const uint64_t additional = be64(bytes, 32);
      const uint64_t proto_digest = be64(bytes, 40);
      if (ccws_with_padding < padding)
        return fail("HEF header's CCW size " + std::to_string(ccws_with_padding) +
                    " is below its padding " + std::to_string(padding) + " (corrupted)");
      if (proto_bytes > residue) return size_mismatch(0);
      // hef.cpp parse_hef_file: a non-zero proto digest is all HailoRT checks
      // at load; otherwise the whole rest of the file is hashed.
      if (proto_digest != 0) {
        if (xxh3(after_header, proto_bytes) != proto_digest)
          return fail("HEF's proto xxh3 does not match its proto bytes (corrupted)");
      } else {
        uint64_t others = 0;
        if (__builtin_add_overflow(ccws_with_padding, additional, &others) ||
            residue - proto_bytes != others)
          return size_mismatch(others);
        if (xxh3(after_header, residue) != be64(bytes, 12))
          return fail("HEF's xxh3 does not match its bytes (corrupted)");
      }
      break;
    }
  }
  if (proto_bytes > static_cast<uint64_t>(std::numeric_limits<int>::max()))
    return fail("HEF proto of " + std::to_string(proto_bytes) + " bytes: too large to parse");
  return ProtoSpan{header_bytes, static_cast<size_t>(proto_bytes)};
}

bool has_extension(const ProtoHEFHef& hef, ProtoHEFExtensionType type) {
  // hef.cpp check_hef_extension: proto header version 0 predates the list.
  if (hef.header().version() == 0) return false;
  return std::any_of(hef.extensions().begin(), hef.extensions().end(), [type](const auto& e) {
    return e.type_index() == static_cast<uint32_t>(type);
  });
}

// hef.cpp is_multi_layout: these archs keep their streams in partial groups.
bool is_multi_layout(ProtoHEFHwArch arch) {
  return arch == PROTO__HW_ARCH__HAILO8L || arch == PROTO__HW_ARCH__HAILO15M;
}

struct LayerContext {
  bool transposed_net = false;
  std::string group;
};

// Appends the vstreams of one boundary edge: an INFO layer is one, a MUX is
// its predecessors' (layer_info.hpp get_vstream_infos_from_layer_info).
bool add_info_stream(const ProtoHEFEdgeLayerInfo& info, const LayerContext& where,
                     std::vector<Stream>& out, std::string* why) {
  const auto fail = [why](std::string reason) {
    if (why) *why = std::move(reason);
    return false;
  };
  const auto& base = info.edge_layer_base();
  const std::string layer = "group '" + where.group + "', edge layer '" + info.name() + "'";
  if (info.name().empty()) return fail("group '" + where.group + "': an edge layer without a name");
  if (info.name().size() > kMaxStreamNameBytes)
    return fail(layer + ": the name is over 127 bytes (HAILO_MAX_STREAM_NAME_SIZE)");
  if (base.buffer_indices_size() != 1)
    return fail(
        layer + ": " + std::to_string(base.buffer_indices_size()) +
        " buffer_indices entries; HailoRT's parser reads exactly one (and crashes on none)");
  if (std::find(kCompilerFormats.begin(), kCompilerFormats.end(), base.format()) ==
      kCompilerFormats.end())
    return fail(layer + ": format " + std::to_string(base.format()) + " is not one HailoRT knows");
  if (base.data_bytes() != 1 && base.data_bytes() != 2)
    return fail(layer + ": data_bytes " + std::to_string(base.data_bytes()) +
                "; HailoRT reads 1 (uint8) or 2 (uint16)");

  Stream stream;
  stream.name = info.name();
  if (base.format() == kCompilerFormatNms) {
    const auto& nms = base.additional_info().nms_info();
    // hef.cpp parse_proto_nms_info: a division factor of 0 means 1.
    const uint64_t chunks = nms.input_division_factor() == 0 ? 1 : nms.input_division_factor();
    const uint64_t classes = nms.number_of_classes();
    const uint64_t boxes = nms.max_output_size();
    if (classes > std::numeric_limits<uint32_t>::max() ||
        boxes > std::numeric_limits<uint32_t>::max() / chunks)
      return fail(layer + ": NMS classes or boxes do not fit 32 bits");
    stream.nms = true;
    stream.format = Format::float32;
    stream.height = static_cast<uint32_t>(classes);
    stream.width = kNmsBoxParams;
    stream.features = static_cast<uint32_t>(boxes * chunks);
  } else {
    stream.format = base.data_bytes() == 1 ? Format::uint8 : Format::uint16;
    stream.height = base.height();
    stream.width = base.width();
    stream.features = base.features();
    if ((where.transposed_net || info.transposed()) && base.format() != kCompilerFormatNc)
      std::swap(stream.height, stream.width);
  }
  stream.frame_bytes = host_frame_bytes(stream);
  if (stream.frame_bytes > std::numeric_limits<uint32_t>::max())
    return fail(layer + ": a frame of " + std::to_string(stream.frame_bytes) +
                " bytes; HailoRT's frame sizes are 32-bit");
  out.push_back(std::move(stream));
  return true;
}

bool add_mux_streams(const ProtoHEFEdgeLayerMux& mux, const LayerContext& where, int depth,
                     std::vector<Stream>& out, std::string* why) {
  if (depth > kMaxMuxDepth) {
    if (why)
      *why = "group '" + where.group + "', mux '" + mux.name() + "': nested deeper than " +
             std::to_string(kMaxMuxDepth);
    return false;
  }
  for (const auto& edge : mux.predecessors()) {
    bool ok = true;
    if (edge.has_layer_info()) {
      ok = add_info_stream(edge.layer_info(), where, out, why);
    } else if (edge.has_layer_mux()) {
      ok = add_mux_streams(edge.layer_mux(), where, depth + 1, out, why);
    } else {
      if (why)
        *why = "group '" + where.group + "', mux '" + mux.name() +
               "': a predecessor that is neither a layer nor a mux";
      ok = false;
    }
    if (!ok) return false;
  }
  return true;
}

// Orders outputs as HailoRT sorts its output vstreams, where every output is
// in `sorted`; otherwise keeps the edge-layer order.
void sort_outputs(std::vector<Stream>& outputs,
                  const google::protobuf::RepeatedPtrField<std::string>& sorted) {
  const auto rank = [&sorted](const Stream& s) {
    return static_cast<size_t>(std::find(sorted.begin(), sorted.end(), s.name) - sorted.begin());
  };
  const bool all_listed = std::all_of(outputs.begin(), outputs.end(), [&](const Stream& s) {
    return rank(s) < static_cast<size_t>(sorted.size());
  });
  if (!all_listed) return;
  std::stable_sort(outputs.begin(), outputs.end(),
                   [&](const Stream& a, const Stream& b) { return rank(a) < rank(b); });
}

std::optional<NetworkGroup> read_group(const ProtoHEFHef& hef, const ProtoHEFNetworkGroup& group,
                                       std::string* why) {
  const bool net_flow = has_extension(hef, HAILO_NET_FLOW);
  const bool multi_layout = is_multi_layout(hef.header().hw_arch());
  NetworkGroup result;
  // hef.cpp HefUtils::get_network_group_name.
  result.name = group.partial_network_groups().empty()
                    ? group.network_group_metadata().network_group_name()
                    : group.partial_network_groups(0)
                          .network_group()
                          .network_group_metadata()
                          .network_group_name();
  const std::string label = "group '" + result.name + "'";

  // Where the contexts are: hef.cpp fill_core_ops and fill_networks_metadata.
  const google::protobuf::RepeatedPtrField<ProtoHEFContext>* contexts = nullptr;
  const google::protobuf::RepeatedPtrField<std::string>* sorted = &group.sorted_outputs_order();
  LayerContext where{false, result.name};
  if (net_flow) {
    const auto core = std::find_if(group.ops().begin(), group.ops().end(),
                                   [](const ProtoHEFOp& op) { return op.has_core_op(); });
    if (core == group.ops().end())
      return refuse(why, label + ": no core op (a HAILO_NET_FLOW HEF keeps its streams in one)");
    const ProtoHEFCoreOp* core_op = &core->core_op();
    if (multi_layout && !core_op->partial_core_ops().empty())
      core_op = &core_op->partial_core_ops(0).core_op();
    contexts = &core_op->contexts();
    where.transposed_net = core_op->network_group_metadata().transposed_net();
    if (core_op->fused_layers_metadata().network_has_fused_layers())
      sorted = &core_op->fused_layers_metadata().updated_sorted_output_names();
  } else {
    const ProtoHEFNetworkGroup* source = &group;
    if (multi_layout && !group.partial_network_groups().empty())
      source = &group.partial_network_groups(0).network_group();
    contexts = &source->contexts();
    where.transposed_net = source->network_group_metadata().transposed_net();
    if (source->fused_layers_metadata().network_has_fused_layers())
      sorted = &source->fused_layers_metadata().updated_sorted_output_names();
    else if (!group.partial_network_groups().empty() &&
             group.partial_network_groups(0).network_group().sorted_outputs_order_size() > 0)
      sorted = &group.partial_network_groups(0).network_group().sorted_outputs_order();
  }
  if (contexts->empty())
    return refuse(why, label + ": no context (HailoRT's parser reads the first)");
  if (sorted->empty())
    sorted = &(*contexts)[contexts->size() - 1].metadata().sorted_outputs_order();

  for (const auto& context : *contexts) {
    for (const auto& layer : context.metadata().edge_layers()) {
      if (layer.context_switch_info().edge_connection_type() !=
          PROTO__EDGE_CONNECTION_TYPE__BOUNDARY)
        continue;
      auto& out = layer.direction() == PROTO__EDGE_LAYER_DIRECTION__DEVICE_TO_HOST ? result.outputs
                                                                                   : result.inputs;
      bool ok = false;
      if (layer.has_layer_info()) {
        ok = add_info_stream(layer.layer_info(), where, out, why);
      } else if (layer.has_layer_mux()) {
        ok = add_mux_streams(layer.layer_mux(), where, 0, out, why);
      } else if (layer.has_layer_planes()) {
        ok = false;
        if (why)
          *why = label + ", edge layer '" + layer.layer_planes().name() +
                 "': multi-planar (YUV) inputs are not read";
      } else {
        ok = false;
        if (why) *why = label + ": a boundary edge layer with no layer in it";
      }
      if (!ok) return std::nullopt;
    }
  }

  // hef.cpp validate_unique_boundary_names.
  std::set<std::string> names;
  for (const auto* list : {&result.inputs, &result.outputs})
    for (const auto& s : *list)
      if (!names.insert(s.name).second)
        return refuse(why, label + ": stream name '" + s.name + "' appears twice");
  sort_outputs(result.outputs, *sorted);
  return result;
}

}  // namespace

std::vector<uint8_t> write_hef(const Spec& spec) {
  require(spec.header_version == 0 || spec.header_version == 3,
          "header_version " + std::to_string(spec.header_version) + ": 0 or 3");
  require(!spec.groups.empty(), "a HEF needs a network group");

  ProtoHEFHef hef;
  auto* header = hef.mutable_header();
  // hef.cpp Hef::get_compatible_device_archs: HAILO1XH serves Hailo-15H and
  // Hailo-10H (device_internal.cpp hef_arch_to_device_compatible_archs).
  header->set_hw_arch(PROTO__HW_ARCH__HAILO1XH);
  header->set_timestamp(0);  // the same bytes on every build
  header->set_sdk_version_str(std::to_string(RIG_HAILORT_MAJOR) + "." +
                              std::to_string(RIG_HAILORT_MINOR) + "." +
                              std::to_string(RIG_HAILORT_REVISION));
  header->mutable_sdk_version()->set_sdk_version_major(RIG_HAILORT_MAJOR);
  header->mutable_sdk_version()->set_sdk_version_minor(RIG_HAILORT_MINOR);
  header->mutable_sdk_version()->set_sdk_version_revision(RIG_HAILORT_REVISION);
  // Version 1: features come from `extensions` (hef.cpp check_hef_extension).
  header->set_version(1);
  // validate_hef_extensions refuses a HEF without PERIPH_CALCULATION_IN_HAILORT;
  // HAILO_NET_FLOW is the ops layout of current compilers; NMS_OUTPUT_BURST
  // makes parse_proto_nms_info read the burst fields.
  add_extension(hef, PERIPH_CALCULATION_IN_HAILORT, "PERIPH_CALCULATION_IN_HAILORT");
  add_extension(hef, HAILO_NET_FLOW, "HAILO_NET_FLOW");
  add_extension(hef, NMS_OUTPUT_BURST, "NMS_OUTPUT_BURST");

  std::set<std::string> group_names;
  for (size_t i = 0; i < spec.groups.size(); ++i) {
    require(group_names.insert(spec.groups[i].name).second,
            "network group '" + spec.groups[i].name + "' appears twice");
    add_network_group(hef, spec.groups[i], static_cast<uint32_t>(i));
  }

  std::string proto;
  if (!hef.SerializeToString(&proto)) throw std::runtime_error("write_hef: proto serialization");
  require(proto.size() <= std::numeric_limits<uint32_t>::max(), "a proto over 4 GiB");
  const auto* proto_bytes = reinterpret_cast<const uint8_t*>(proto.data());

  std::vector<uint8_t> out;
  out.reserve(kHeaderBytesV3 + proto.size());
  put_be32(out, kMagic);
  put_be32(out, spec.header_version);
  put_be32(out, static_cast<uint32_t>(proto.size()));
  if (spec.header_version == 0) {
    put_be32(out, 0);  // reserved
    const auto digest = md5(proto_bytes, proto.size());
    out.insert(out.end(), digest.begin(), digest.end());
  } else {
    // No CCWs, padding or additional info: the whole digest is the proto's,
    // so both fields agree and either check in parse_hef_file passes.
    const uint64_t digest = xxh3(proto_bytes, proto.size());
    put_be64(out, digest);  // xxh3_64bits (what Hef::hash reports)
    put_be64(out, 0);       // ccws_size_with_padding
    put_be32(out, 0);       // hef_padding_size
    put_be64(out, 0);       // additional_info_size
    put_be64(out, digest);  // proto_xxh3_64bits
    put_be64(out, 0);       // reserved1
  }
  out.insert(out.end(), proto_bytes, proto_bytes + proto.size());
  return out;
}

std::optional<Spec> read_hef(const std::vector<uint8_t>& bytes, std::string* why) {
  if (bytes.size() < kCommonHeaderBytes)
    return refuse(why, "HEF of " + std::to_string(bytes.size()) +
                           " bytes: shorter than the 12-byte header start");
  const uint32_t magic = be32(bytes, 0);
  if (magic != kMagic) {
    char hex[11];
    std::snprintf(hex, sizeof hex, "0x%08x", magic);
    return refuse(why, std::string("not a HEF: magic ") + hex + ", not 0x01484546");
  }
  const uint32_t version = be32(bytes, 4);
  const auto span = check_header(bytes, version, why);
  if (!span) return std::nullopt;

  ProtoHEFHef hef;
  if (!hef.ParseFromArray(bytes.data() + span->offset, static_cast<int>(span->size)))
    return refuse(
        why, "HEF proto (" + std::to_string(span->size) + " bytes) does not parse as ProtoHEFHef");
  if (hef.network_groups().empty()) return refuse(why, "HEF without a network group");

  Spec spec;
  spec.header_version = version;
  std::set<std::string> group_names;
  for (const auto& group : hef.network_groups()) {
    auto read = read_group(hef, group, why);
    if (!read) return std::nullopt;
    if (!group_names.insert(read->name).second)
      return refuse(why, "network group '" + read->name + "' appears twice");
    spec.groups.push_back(std::move(*read));
  }
  return spec;
}

}  // namespace rig::test::hef

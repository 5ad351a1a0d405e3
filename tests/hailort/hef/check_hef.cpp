// The synthetic HEFs (made at build time by make_test_hef into
// RIG_TEST_HEF_DIR, header version 0 there and 3 under v3/) through HailoRT's
// real parser: what libhailort reports for each must be what the spec says.
// Links libhailort and the protobuf-free spec library only, never the
// writer (both define the global ProtoHEF* types).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <hailo/hailort.hpp>

#include "synthetic_hef.hpp"

namespace {

using rig::test::hef::Format;
using rig::test::hef::named_spec;
using rig::test::hef::named_spec_kinds;
using rig::test::hef::Spec;
using rig::test::hef::Stream;

std::string hef_path(const std::string& kind, uint32_t header_version) {
  const std::string dir = RIG_TEST_HEF_DIR;
  return header_version == 0 ? dir + "/" + kind + ".hef" : dir + "/v3/" + kind + ".hef";
}

std::vector<uint8_t> file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

hailo_format_type_t hailo_type(Format format) {
  switch (format) {
    case Format::uint8:
      return HAILO_FORMAT_TYPE_UINT8;
    case Format::uint16:
      return HAILO_FORMAT_TYPE_UINT16;
    case Format::float32:
      return HAILO_FORMAT_TYPE_FLOAT32;
  }
  return HAILO_FORMAT_TYPE_AUTO;
}

void expect_stream(const hailo_vstream_info_t& info, const Stream& expected,
                   hailo_stream_direction_t direction, const std::string& group) {
  SCOPED_TRACE("stream " + expected.name);
  EXPECT_EQ(std::string(info.name), expected.name);
  // No networks named: HailoRT's default network of a group is GROUP/GROUP.
  EXPECT_EQ(std::string(info.network_name), group + "/" + group);
  EXPECT_EQ(info.direction, direction);
  EXPECT_EQ(info.format.type, hailo_type(expected.format));
  if (expected.nms) {
    // An on-chip NMS output reaches the host as boxes by class.
    EXPECT_TRUE(hailort::HailoRTCommon::is_nms(info));
    EXPECT_EQ(info.format.order, HAILO_FORMAT_ORDER_HAILO_NMS_BY_CLASS);
    EXPECT_EQ(info.nms_shape.number_of_classes, expected.height);
    EXPECT_EQ(info.nms_shape.max_bboxes_per_class, expected.features);
    EXPECT_EQ(info.nms_shape.max_bboxes_total, expected.height * expected.features);
  } else {
    EXPECT_FALSE(hailort::HailoRTCommon::is_nms(info));
    EXPECT_EQ(info.format.order, HAILO_FORMAT_ORDER_NHWC);
    EXPECT_EQ(info.shape.height, expected.height);
    EXPECT_EQ(info.shape.width, expected.width);
    EXPECT_EQ(info.shape.features, expected.features);
  }
  // What InferModel::InferStream::get_frame_size reports (infer_model.cpp).
  EXPECT_EQ(uint64_t{hailort::HailoRTCommon::get_frame_size(info, info.format)},
            expected.frame_bytes);
}

void expect_matches(hailort::Hef& hef, const Spec& spec) {
  const auto listed = rig::test::hef::hailort_group_order(spec);
  EXPECT_EQ(hef.get_network_groups_names(), listed);

  // Hailo-10H is among the devices the HEF is for (what a device checks at
  // configure: device_internal.cpp).
  auto archs = hef.get_compatible_device_archs();
  ASSERT_TRUE(archs) << "get_compatible_device_archs: " << archs.status();
  EXPECT_NE(std::find(archs->begin(), archs->end(), HAILO_ARCH_HAILO10H), archs->end());

  for (const auto& group : spec.groups) {
    SCOPED_TRACE("group " + group.name);
    auto inputs = hef.get_input_vstream_infos(group.name);
    ASSERT_TRUE(inputs) << "get_input_vstream_infos: " << inputs.status();
    ASSERT_EQ(inputs->size(), group.inputs.size());
    for (size_t i = 0; i < group.inputs.size(); ++i)
      expect_stream((*inputs)[i], group.inputs[i], HAILO_H2D_STREAM, group.name);

    // The stream-level view (what a device configures) parses too: one
    // stream per vstream, none of them muxed.
    auto streams = hef.get_all_stream_infos(group.name);
    ASSERT_TRUE(streams) << "get_all_stream_infos: " << streams.status();
    EXPECT_EQ(streams->size(), group.inputs.size() + group.outputs.size());
    for (const auto& stream : *streams) EXPECT_FALSE(stream.is_mux) << stream.name;
    auto networks = hef.get_network_infos(group.name);
    ASSERT_TRUE(networks) << "get_network_infos: " << networks.status();
    ASSERT_EQ(networks->size(), 1u);
    EXPECT_EQ(std::string((*networks)[0].name), group.name + "/" + group.name);

    auto outputs = hef.get_output_vstream_infos(group.name);
    ASSERT_TRUE(outputs) << "get_output_vstream_infos: " << outputs.status();
    ASSERT_EQ(outputs->size(), group.outputs.size());
    for (size_t i = 0; i < group.outputs.size(); ++i)
      expect_stream((*outputs)[i], group.outputs[i], HAILO_D2H_STREAM, group.name);
  }
  // No name addresses the first group listed, as create_infer_model(hef) does.
  auto default_inputs = hef.get_input_vstream_infos();
  ASSERT_TRUE(default_inputs) << "get_input_vstream_infos(): " << default_inputs.status();
  ASSERT_FALSE(default_inputs->empty());
  EXPECT_EQ(std::string((*default_inputs)[0].network_name), listed.front() + "/" + listed.front());
}

// Loads KIND's file both ways the client does: from its path, and from
// memory (VDeviceHrpcClient::create_infer_model parses the buffer it sent).
void check_kind(const std::string& kind, uint32_t header_version) {
  SCOPED_TRACE(kind + " with header version " + std::to_string(header_version));
  const auto spec = named_spec(kind);
  ASSERT_TRUE(spec);
  const std::string path = hef_path(kind, header_version);

  auto from_path = hailort::Hef::create(path);
  ASSERT_TRUE(from_path) << "Hef::create(" << path << "): " << from_path.status();
  expect_matches(*from_path, *spec);

  const auto bytes = file_bytes(path);
  ASSERT_FALSE(bytes.empty()) << path;
  auto from_memory =
      hailort::Hef::create(hailort::MemoryView::create_const(bytes.data(), bytes.size()));
  ASSERT_TRUE(from_memory) << "Hef::create(MemoryView): " << from_memory.status();
  expect_matches(*from_memory, *spec);
}

TEST(RealParser, single_u8) {
  check_kind("single_u8", 0);
  check_kind("single_u8", 3);
}

TEST(RealParser, multi_input) {
  check_kind("multi_input", 0);
  check_kind("multi_input", 3);
}

TEST(RealParser, nms) {
  check_kind("nms", 0);
  check_kind("nms", 3);
}

TEST(RealParser, two_groups) {
  check_kind("two_groups", 0);
  check_kind("two_groups", 3);
}

TEST(RealParser, every_named_spec_has_a_file) {
  for (const auto& kind : named_spec_kinds())
    for (uint32_t version : {0u, 3u})
      EXPECT_FALSE(file_bytes(hef_path(kind, version)).empty()) << hef_path(kind, version);
}

// Hef::hash (hef.cpp) reads the version 3 header's xxh3 and refuses older
// headers: the same value the loaded Hef reports.
TEST(RealParser, hash_reads_the_version_3_digest) {
  for (const auto& kind : named_spec_kinds()) {
    SCOPED_TRACE(kind);
    const std::string path = hef_path(kind, 3);
    auto hash = hailort::Hef::hash(path);
    ASSERT_TRUE(hash) << "Hef::hash(" << path << "): " << hash.status();

    // The digest's bytes as the host stores the integer (little-endian here),
    // in lower-case hex (common/utils.cpp StringUtils::to_hex_string).
    const auto bytes = file_bytes(path);
    ASSERT_GE(bytes.size(), 20u);
    uint64_t digest = 0;
    for (size_t i = 12; i < 20; ++i) digest = digest << 8 | bytes[i];
    std::string expected;
    for (int i = 0; i < 8; ++i) {
      char hex[3];
      std::snprintf(hex, sizeof hex, "%02x", static_cast<unsigned>((digest >> (8 * i)) & 0xff));
      expected += hex;
    }
    EXPECT_EQ(*hash, expected);

    auto hef = hailort::Hef::create(path);
    ASSERT_TRUE(hef) << hef.status();
    EXPECT_EQ(hef->hash(), *hash);
  }
  auto refused = hailort::Hef::hash(hef_path("single_u8", 0));
  EXPECT_FALSE(refused);
  EXPECT_EQ(refused.status(), HAILO_HEF_NOT_SUPPORTED);
}

// The digests are really checked: one changed proto byte is refused, so the
// files above pass on their MD5 and xxh3, not by luck.
TEST(RealParser, refuses_a_changed_proto_byte) {
  for (uint32_t version : {0u, 3u}) {
    SCOPED_TRACE("header version " + std::to_string(version));
    auto bytes = file_bytes(hef_path("single_u8", version));
    ASSERT_GT(bytes.size(), 64u);
    bytes[bytes.size() - 1] ^= 0x01;
    auto hef = hailort::Hef::create(hailort::MemoryView::create_const(bytes.data(), bytes.size()));
    ASSERT_FALSE(hef);
    EXPECT_EQ(hef.status(), HAILO_HEF_FILE_CORRUPTED);
  }
}

}  // namespace

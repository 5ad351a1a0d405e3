// write_hef and read_hef in one process, without libhailort (check_hef is
// where HailoRT's own parser reads the files): round trips of every named
// spec, the header layout, and hostile bytes the reader refuses with a
// reason instead of crashing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "hef.pb.h"
#include "synthetic_hef.hpp"

namespace {

using namespace rig::test::hef;

constexpr size_t kHeaderBytesV0 = 32;
constexpr size_t kHeaderBytesV1 = 28;
constexpr size_t kHeaderBytesV3 = 56;

uint32_t be32(const std::vector<uint8_t>& bytes, size_t at) {
  return uint32_t{bytes[at]} << 24 | uint32_t{bytes[at + 1]} << 16 | uint32_t{bytes[at + 2]} << 8 |
         bytes[at + 3];
}

std::vector<uint8_t> written(const std::string& kind, uint32_t header_version) {
  auto spec = named_spec(kind);
  EXPECT_TRUE(spec) << kind;
  spec->header_version = header_version;
  return write_hef(*spec);
}

// A version 1 header (its CRC is not checked by read_hef) around `proto`:
// how these tests reach the proto walker with bytes of their choosing.
std::vector<uint8_t> wrap_v1(const std::string& proto) {
  std::vector<uint8_t> out = {0x01, 0x48, 0x45, 0x46, 0, 0, 0, 1};
  for (int shift = 24; shift >= 0; shift -= 8)
    out.push_back(static_cast<uint8_t>(proto.size() >> shift));
  out.resize(kHeaderBytesV1, 0);  // crc, ccws_size 0, reserved
  out.insert(out.end(), proto.begin(), proto.end());
  return out;
}

ProtoHEFHef proto_of(const std::vector<uint8_t>& hef_v0) {
  ProtoHEFHef hef;
  EXPECT_TRUE(hef.ParseFromArray(hef_v0.data() + kHeaderBytesV0,
                                 static_cast<int>(hef_v0.size() - kHeaderBytesV0)));
  return hef;
}

void expect_same(const Spec& read, const Spec& expected) {
  ASSERT_EQ(read.groups.size(), expected.groups.size());
  EXPECT_EQ(read.header_version, expected.header_version);
  for (size_t g = 0; g < expected.groups.size(); ++g) {
    const auto& a = read.groups[g];
    const auto& b = expected.groups[g];
    EXPECT_EQ(a.name, b.name);
    for (const auto& [got, want] :
         {std::pair{&a.inputs, &b.inputs}, std::pair{&a.outputs, &b.outputs}}) {
      ASSERT_EQ(got->size(), want->size()) << b.name;
      for (size_t i = 0; i < want->size(); ++i) {
        const auto& x = (*got)[i];
        const auto& y = (*want)[i];
        SCOPED_TRACE(y.name);
        EXPECT_EQ(x.name, y.name);
        EXPECT_EQ(x.height, y.height);
        EXPECT_EQ(x.width, y.width);
        EXPECT_EQ(x.features, y.features);
        EXPECT_EQ(x.format, y.format);
        EXPECT_EQ(x.nms, y.nms);
        EXPECT_EQ(x.frame_bytes, y.frame_bytes);
      }
    }
  }
}

TEST(NamedSpec, frames_are_small_and_sized_as_hailort_sizes_them) {
  for (const auto& kind : named_spec_kinds()) {
    const auto spec = named_spec(kind);
    ASSERT_TRUE(spec) << kind;
    for (const auto& group : spec->groups)
      for (const auto* list : {&group.inputs, &group.outputs})
        for (const auto& s : *list) {
          EXPECT_EQ(s.frame_bytes, host_frame_bytes(s)) << s.name;
          EXPECT_GT(s.frame_bytes, 0u) << s.name;
          EXPECT_LE(s.frame_bytes, 4096u) << s.name;
        }
  }
  EXPECT_FALSE(named_spec("resnet"));
  // 4 classes of up to 10 boxes: per class a count and 5 floats per box.
  EXPECT_EQ(named_spec("nms")->groups[0].outputs[0].frame_bytes, 4u * (1 + 5 * 10) * 4);
}

TEST(WriteHef, header_layout) {
  const auto v0 = written("single_u8", 0);
  ASSERT_GT(v0.size(), kHeaderBytesV0);
  EXPECT_EQ(be32(v0, 0), 0x01484546u);
  EXPECT_EQ(be32(v0, 4), 0u);
  EXPECT_EQ(be32(v0, 8), v0.size() - kHeaderBytesV0);

  const auto v3 = written("single_u8", 3);
  ASSERT_GT(v3.size(), kHeaderBytesV3);
  EXPECT_EQ(be32(v3, 4), 3u);
  EXPECT_EQ(be32(v3, 8), v3.size() - kHeaderBytesV3);
  // The same proto under either header.
  EXPECT_EQ(std::vector<uint8_t>(v0.begin() + kHeaderBytesV0, v0.end()),
            std::vector<uint8_t>(v3.begin() + kHeaderBytesV3, v3.end()));
  // Deterministic: the build makes the same files every time.
  EXPECT_EQ(written("nms", 0), written("nms", 0));
}

TEST(WriteHef, describes_a_hailo10h_net_flow_model) {
  const auto hef = proto_of(written("nms", 0));
  EXPECT_EQ(hef.header().hw_arch(), PROTO__HW_ARCH__HAILO1XH);
  EXPECT_EQ(hef.header().version(), 1u);
  std::vector<uint32_t> extensions;
  for (const auto& e : hef.extensions()) extensions.push_back(e.type_index());
  EXPECT_NE(std::find(extensions.begin(), extensions.end(), PERIPH_CALCULATION_IN_HAILORT),
            extensions.end());
  EXPECT_NE(std::find(extensions.begin(), extensions.end(), HAILO_NET_FLOW), extensions.end());
  ASSERT_EQ(hef.network_groups_size(), 1);
  const auto& group = hef.network_groups(0);
  ASSERT_EQ(group.ops_size(), 1);
  ASSERT_TRUE(group.ops(0).has_core_op());
  const auto& context = group.ops(0).core_op().contexts(0);
  for (const auto& layer : context.metadata().edge_layers())
    EXPECT_EQ(layer.layer_info().edge_layer_base().buffer_indices_size(), 1);
  const auto& nms_layer = context.metadata().edge_layers(1).layer_info().edge_layer_base();
  EXPECT_EQ(nms_layer.format(), 6u);
  EXPECT_EQ(nms_layer.additional_info().nms_info().burst_type(),
            PROTO__NMS_BURST_TYPE__H15_PER_CLASS);
}

TEST(WriteHef, refuses_specs_hailort_cannot_describe) {
  auto spec = *named_spec("single_u8");
  spec.header_version = 2;
  EXPECT_THROW(write_hef(spec), std::invalid_argument);

  spec = *named_spec("single_u8");
  spec.groups[0].inputs[0].format = Format::float32;
  EXPECT_THROW(write_hef(spec), std::invalid_argument);

  spec = *named_spec("single_u8");
  spec.groups[0].outputs[0].name = spec.groups[0].inputs[0].name;
  EXPECT_THROW(write_hef(spec), std::invalid_argument);

  spec = *named_spec("single_u8");
  spec.groups[0].inputs.clear();
  EXPECT_THROW(write_hef(spec), std::invalid_argument);

  spec = *named_spec("nms");
  spec.groups[0].outputs[0].width = 4;
  EXPECT_THROW(write_hef(spec), std::invalid_argument);

  EXPECT_THROW(write_hef(Spec{}), std::invalid_argument);
}

TEST(ReadHef, round_trips_every_named_spec) {
  for (const auto& kind : named_spec_kinds())
    for (uint32_t version : {0u, 3u}) {
      SCOPED_TRACE(kind + " v" + std::to_string(version));
      auto expected = *named_spec(kind);
      expected.header_version = version;
      std::string why;
      const auto read = read_hef(write_hef(expected), &why);
      ASSERT_TRUE(read) << why;
      expect_same(*read, expected);
    }
}

TEST(ReadHef, refuses_every_truncation) {
  for (uint32_t version : {0u, 3u}) {
    const auto bytes = written("multi_input", version);
    for (size_t size = 0; size < bytes.size(); ++size) {
      std::string why;
      EXPECT_FALSE(read_hef(std::vector<uint8_t>(bytes.begin(), bytes.begin() + size), &why))
          << size;
      EXPECT_FALSE(why.empty()) << size;
    }
  }
  EXPECT_FALSE(read_hef({}, nullptr));  // no reason wanted: still no crash
}

TEST(ReadHef, refuses_a_changed_byte_by_its_digest) {
  for (uint32_t version : {0u, 3u}) {
    const auto bytes = written("nms", version);
    const size_t header = version == 0 ? kHeaderBytesV0 : kHeaderBytesV3;
    for (size_t at = header; at < bytes.size(); ++at) {
      auto changed = bytes;
      changed[at] ^= 0x5a;
      std::string why;
      ASSERT_FALSE(read_hef(changed, &why)) << at;
      EXPECT_NE(why.find("does not match"), std::string::npos) << why;
    }
  }
}

TEST(ReadHef, survives_changed_proto_bytes) {
  // Under a header that does not check them, every single-byte change of
  // the proto reaches the parser and the walker: read or refused, no crash.
  const auto bytes = written("multi_input", 0);
  const std::string proto(bytes.begin() + kHeaderBytesV0, bytes.end());
  ASSERT_TRUE(read_hef(wrap_v1(proto), nullptr));
  for (size_t at = 0; at < proto.size(); ++at)
    for (uint8_t flip : {uint8_t{0x01}, uint8_t{0x80}, uint8_t{0xff}}) {
      std::string changed = proto;
      changed[at] = static_cast<char>(changed[at] ^ flip);
      std::string why;
      const auto read = read_hef(wrap_v1(changed), &why);
      if (!read) {
        EXPECT_FALSE(why.empty()) << at;
      }
    }
}

TEST(ReadHef, refuses_what_crashes_hailorts_parser) {
  auto hef = proto_of(written("single_u8", 0));
  auto* base = hef.mutable_network_groups(0)
                   ->mutable_ops(0)
                   ->mutable_core_op()
                   ->mutable_contexts(0)
                   ->mutable_metadata()
                   ->mutable_edge_layers(0)
                   ->mutable_layer_info()
                   ->mutable_edge_layer_base();
  base->clear_buffer_indices();
  std::string why;
  EXPECT_FALSE(read_hef(wrap_v1(hef.SerializeAsString()), &why));
  EXPECT_NE(why.find("buffer_indices"), std::string::npos) << why;

  hef = proto_of(written("single_u8", 0));
  hef.mutable_network_groups(0)->mutable_ops(0)->mutable_core_op()->clear_contexts();
  EXPECT_FALSE(read_hef(wrap_v1(hef.SerializeAsString()), &why));
  EXPECT_NE(why.find("no context"), std::string::npos) << why;

  hef = proto_of(written("single_u8", 0));
  hef.mutable_network_groups(0)->clear_ops();
  EXPECT_FALSE(read_hef(wrap_v1(hef.SerializeAsString()), &why));
  EXPECT_NE(why.find("no core op"), std::string::npos) << why;
}

TEST(ReadHef, names_what_is_wrong_with_the_header) {
  std::string why;
  auto bytes = written("single_u8", 0);
  bytes[0] = 0;
  EXPECT_FALSE(read_hef(bytes, &why));
  EXPECT_NE(why.find("magic"), std::string::npos) << why;

  bytes = written("single_u8", 0);
  bytes[7] = 9;  // header version 9
  EXPECT_FALSE(read_hef(bytes, &why));
  EXPECT_NE(why.find("version 9"), std::string::npos) << why;

  bytes = written("single_u8", 0);
  bytes.push_back(0);  // one byte more than the header says
  EXPECT_FALSE(read_hef(bytes, &why));
  EXPECT_NE(why.find("truncated or corrupted"), std::string::npos) << why;
}

}  // namespace

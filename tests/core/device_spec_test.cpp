// DeviceSpec as a value: its edits, its texts and the link expansion (rig_core).
// Parsing spec text is the registry's: tests/devices/registry_test.cpp.
#include "rig/device_spec.hpp"

#include <gtest/gtest.h>

#include "rig/link_profile.hpp"

namespace rig {
namespace {

using Params = std::map<std::string, std::string>;

DeviceSpec sim(Params given) {
  DeviceSpec spec;
  spec.kind = "sim";
  spec.given = given;
  auto params = expand_link_profile(given);
  EXPECT_TRUE(params) << params.error().to_string();
  spec.params = params.value_or(Params{});
  return spec;
}

TEST(ExpandLinkProfile, FillsWhatTheSpecLacks) {
  auto params = expand_link_profile({{"link", "usb3-gen2"}, {"compute", "2ms"}, {"depth", "8"}});
  ASSERT_TRUE(params) << params.error().to_string();
  EXPECT_EQ(*params, (Params{{"bw_in", "290MB/s"},
                             {"bw_out", "290MB/s"},
                             {"compute", "2ms"},
                             {"depth", "8"},
                             {"duplex", "half"},
                             {"lat", "0.45ms"}}));
}

TEST(ExpandLinkProfile, AnExplicitBwReplacesBothDirections) {
  auto params = expand_link_profile({{"link", "pcie-gen3-x4"}, {"bw", "1GB/s"}});
  ASSERT_TRUE(params) << params.error().to_string();
  EXPECT_EQ(params->at("bw"), "1GB/s");
  EXPECT_EQ(params->count("bw_in"), 0u);
  EXPECT_EQ(params->count("bw_out"), 0u);
  EXPECT_EQ(params->at("duplex"), "full");
}

TEST(ExpandLinkProfile, WithoutLinkTheMapComesBackUnchanged) {
  const Params given{{"compute", "1ms"}, {"bw", "1GB/s"}};
  EXPECT_EQ(*expand_link_profile(given), given);
  EXPECT_EQ(*expand_link_profile({}), Params{});
}

TEST(ExpandLinkProfile, RefusesUnknownAndCustomProfiles) {
  auto unknown = expand_link_profile({{"link", "usb9"}});
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().code, ErrorCode::invalid_argument);
  EXPECT_NE(unknown.error().message.find("sim parameter link: unknown link profile 'usb9'"),
            std::string::npos)
      << unknown.error().message;
  auto custom = expand_link_profile({{"link", "bw=1GB/s"}});
  ASSERT_FALSE(custom);
  EXPECT_NE(custom.error().message.find("takes a profile name"), std::string::npos);
}

TEST(ExpandLinkProfiles, TheTextFormAgreesWithTheMapForm) {
  auto text = expand_link_profiles("sim:link=usb3-gen2,compute=2ms");
  ASSERT_TRUE(text) << text.error().to_string();
  EXPECT_EQ(*text, sim({{"link", "usb3-gen2"}, {"compute", "2ms"}}).text());
  auto custom = expand_link_profiles("sim:link=bw=1GB/s");
  ASSERT_FALSE(custom);
  EXPECT_NE(custom.error().message.find("takes a profile name"), std::string::npos);
}

TEST(DeviceSpec, TextsSpellKindAndParametersInKeyOrder) {
  const DeviceSpec spec = sim({{"link", "usb3-gen2"}, {"compute", "2ms"}});
  EXPECT_EQ(spec.given_text(), "sim:compute=2ms,link=usb3-gen2");
  EXPECT_EQ(spec.text(),
            "sim:bw_in=290MB/s,bw_out=290MB/s,compute=2ms,depth=32,duplex=half,lat=0.45ms");
  DeviceSpec bare;
  bare.kind = "cpu";
  EXPECT_EQ(bare.given_text(), "cpu");
  EXPECT_EQ(bare.text(), "cpu");
  DeviceSpec remote;
  remote.kind = "remote";
  remote.endpoint = "tcp://127.0.0.1:9000?timeout=5s";
  EXPECT_TRUE(remote.remote());
  EXPECT_EQ(remote.given_text(), remote.endpoint);
  EXPECT_EQ(remote.text(), remote.endpoint);
}

TEST(DeviceSpec, SetExpandsTheLinkAgainWhenItChanges) {
  DeviceSpec spec = sim({{"link", "usb3-gen2"}, {"compute", "2ms"}});
  ASSERT_TRUE(spec.set("link", "pcie-gen3-x4"));
  EXPECT_EQ(spec.given.at("link"), "pcie-gen3-x4");
  EXPECT_EQ(spec.params.count("link"), 0u);
  EXPECT_EQ(spec.params.at("bw_in"), "3300MB/s");
  EXPECT_EQ(spec.params.at("lat"), "0.02ms");
  EXPECT_EQ(spec.params.at("duplex"), "full");
  EXPECT_EQ(spec.params.at("compute"), "2ms");
  EXPECT_EQ(spec, sim({{"link", "pcie-gen3-x4"}, {"compute", "2ms"}}));
}

TEST(DeviceSpec, SetAnExplicitParameterWinsOverTheProfile) {
  DeviceSpec spec = sim({{"link", "usb3-gen2"}});
  ASSERT_TRUE(spec.set("depth", "4"));
  EXPECT_EQ(spec.params.at("depth"), "4");
  ASSERT_TRUE(spec.set("bw", "1GB/s"));
  EXPECT_EQ(spec.params.at("bw"), "1GB/s");
  EXPECT_EQ(spec.params.count("bw_in"), 0u);
  EXPECT_EQ(spec.params.count("bw_out"), 0u);
  // Changing the profile keeps what was given explicitly.
  ASSERT_TRUE(spec.set("link", "pcie-gen2-x1"));
  EXPECT_EQ(spec.params.at("depth"), "4");
  EXPECT_EQ(spec.params.at("duplex"), "full");
}

TEST(DeviceSpec, SetOnOtherKindsLeavesLinkAlone) {
  DeviceSpec spec;
  spec.kind = "cpu";
  ASSERT_TRUE(spec.set("threads", "2"));
  ASSERT_TRUE(spec.set("link", "usb3-gen2"));  // the cpu device refuses it when opened
  EXPECT_EQ(spec.params, spec.given);
  EXPECT_EQ(spec.text(), "cpu:link=usb3-gen2,threads=2");
}

TEST(DeviceSpec, SetRefusesRemoteSpecsAndBadValuesAndChangesNothing) {
  DeviceSpec remote;
  remote.kind = "remote";
  remote.endpoint = "unix:/tmp/rig.sock";
  auto refused = remote.set("depth", "4");
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::invalid_argument);
  EXPECT_NE(refused.error().message.find("remote"), std::string::npos);
  EXPECT_TRUE(remote.given.empty());

  const DeviceSpec before = sim({{"link", "usb3-gen2"}, {"compute", "2ms"}});
  for (auto [key, value] : std::vector<std::pair<std::string, std::string>>{{"", "1"},
                                                                            {"depth", ""},
                                                                            {"depth", "4,lat=1ms"},
                                                                            {"link", "bw=1GB/s"},
                                                                            {"de=pth", "4"},
                                                                            {"a,b", "4"},
                                                                            {"link", "usb9"}}) {
    DeviceSpec spec = before;
    auto r = spec.set(key, value);
    ASSERT_FALSE(r) << key << "=" << value;
    EXPECT_EQ(r.error().code, ErrorCode::invalid_argument) << key << "=" << value;
    EXPECT_EQ(spec, before) << key << "=" << value;
  }
  DeviceSpec spec = before;
  auto unknown = spec.set("link", "usb9");
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message.find("sim parameter link"), std::string::npos);
}

}  // namespace
}  // namespace rig

namespace rig {
namespace {

// The display forms of a remote spec never carry its token; the endpoint
// that opens the device keeps it.
TEST(DeviceSpecRedaction, TheTokenIsRedactedInEveryDisplayForm) {
  DeviceSpec remote;
  remote.kind = "remote";
  remote.endpoint = "tcp://127.0.0.1:9?timeout=2s&token=hunter2hunter2xx";
  const DeviceSpec* spec = &remote;
  for (const auto& text : {spec->text(), spec->given_text()}) {
    EXPECT_EQ(text.find("hunter2"), std::string::npos) << text;
    EXPECT_EQ(text, "tcp://127.0.0.1:9?timeout=2s&token=REDACTED");
  }
  EXPECT_NE(spec->endpoint.find("hunter2"), std::string::npos);
  EXPECT_EQ(redact_secrets("unix:/tmp/s?token=abc"), "unix:/tmp/s?token=REDACTED");
  EXPECT_EQ(redact_secrets("tcp://h:1"), "tcp://h:1");
}

}  // namespace
}  // namespace rig

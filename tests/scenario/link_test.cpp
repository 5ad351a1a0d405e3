// The analyses' pure parts: link profiles and their expansion into sim specs,
// the link fit, the plateau, knobs and depth ranges.
#include <gtest/gtest.h>

#include <cmath>

#include "rig/device_spec.hpp"
#include "rig/link_profile.hpp"
#include "rig/scenario/ab.hpp"
#include "rig/scenario/point.hpp"
#include "rig/scenario/sweep.hpp"
#include "rig/units.hpp"

namespace rig {
namespace {

using namespace std::chrono_literals;

TEST(LinkProfiles, NamedProfilesCarryTheirNumbers) {
  auto usb = parse_link_profile("usb3-gen2");
  ASSERT_TRUE(usb.has_value());
  // seeds/002: plateau ~285-300 MB/s, ~0.9 ms round trip, async queue 32.
  EXPECT_GE(usb->bw_in, 285e6);
  EXPECT_LE(usb->bw_in, 300e6);
  EXPECT_EQ(usb->round_trip(), 900us);
  EXPECT_EQ(usb->queue_depth, 32u);
  EXPECT_FALSE(usb->full_duplex);
  for (const char* name : {"pcie-gen2-x1", "pcie-gen3-x4"}) {
    auto p = parse_link_profile(name);
    ASSERT_TRUE(p.has_value()) << name;
    EXPECT_TRUE(p->full_duplex);
    EXPECT_FALSE(p->source.empty());
  }
  EXPECT_LT(parse_link_profile("pcie-gen2-x1")->bw_in, parse_link_profile("pcie-gen3-x4")->bw_in);
  EXPECT_EQ(link_profiles().size(), 3u);
}

TEST(LinkProfiles, CustomProfile) {
  auto p = parse_link_profile("bw=1.2GB/s,lat=0.2ms,depth=16");
  ASSERT_TRUE(p.has_value()) << p.error().to_string();
  EXPECT_EQ(p->name, "custom");
  EXPECT_DOUBLE_EQ(p->bw_in, 1.2e9);
  EXPECT_DOUBLE_EQ(p->bw_out, 1.2e9);
  EXPECT_EQ(p->latency, 200us);
  EXPECT_EQ(p->queue_depth, 16u);
  auto q = parse_link_profile("custom:bw_in=1GB/s,bw_out=500MB/s,lat=0ms,depth=1,duplex=full");
  ASSERT_TRUE(q.has_value()) << q.error().to_string();
  EXPECT_DOUBLE_EQ(q->bw_out, 500e6);
  EXPECT_TRUE(q->full_duplex);
}

TEST(LinkProfiles, BadProfilesAreNamed) {
  auto expect = [](const char* text, const char* needle) {
    auto p = parse_link_profile(text);
    ASSERT_FALSE(p.has_value()) << text;
    EXPECT_EQ(p.error().code, ErrorCode::invalid_argument);
    EXPECT_NE(p.error().message.find(needle), std::string::npos) << p.error().message;
  };
  expect("usb9", "known: usb3-gen2, pcie-gen2-x1, pcie-gen3-x4");
  expect("bw=1GB/s,lat=1ms", "needs depth=");
  expect("bw=1GB/s,depth=4", "needs lat=");
  expect("lat=1ms,depth=4", "needs bw=");
  expect("bw=fast,lat=1ms,depth=4", "bw");
  expect("bw=1GB/s,lat=1ms,depth=0", "depth");
  expect("bw=1GB/s,lat=1ms,depth=4,color=red", "unknown custom link parameter 'color'");
  expect("bw=1GB/s,bw_in=1GB/s,bw_out=1GB/s,lat=1ms,depth=4", "not both");
}

TEST(LinkProfiles, ExpandsSimSpecsOnly) {
  auto e = expand_link_profiles("sim:link=usb3-gen2,compute=2ms");
  ASSERT_TRUE(e.has_value()) << e.error().to_string();
  auto spec = parse_spec(*e);
  ASSERT_TRUE(spec.has_value());
  EXPECT_EQ(spec->params.count("link"), 0u);
  EXPECT_EQ(spec->params.at("compute"), "2ms");
  EXPECT_EQ(spec->params.at("bw_in"), "290MB/s");
  EXPECT_EQ(spec->params.at("lat"), "0.45ms");
  EXPECT_EQ(spec->params.at("depth"), "32");
  EXPECT_EQ(spec->params.at("duplex"), "half");
  // Explicit parameters win over the profile's.
  auto d = parse_spec(*expand_link_profiles("sim:link=usb3-gen2,depth=8,bw=1GB/s"));
  EXPECT_EQ(d->params.at("depth"), "8");
  EXPECT_EQ(d->params.at("bw"), "1GB/s");
  EXPECT_EQ(d->params.count("bw_in"), 0u);
  // Everything else passes through untouched.
  for (const char* s : {"cpu:threads=2", "sim:compute=1ms", "tcp://127.0.0.1:9000",
                        "unix:/tmp/rig.sock", "sim:bad", "cpu:link=usb3-gen2"})
    EXPECT_EQ(*expand_link_profiles(s), s);
  auto bad = expand_link_profiles("sim:link=usb9");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message.find("sim parameter link"), std::string::npos);
}

TEST(LinkFit, RecoversALineAndReportsResiduals) {
  const double bytes[] = {1e6, 2e6, 4e6, 8e6};
  double ms[4];
  for (int i = 0; i < 4; ++i) ms[i] = 0.9 + bytes[i] / 290e6 * 1e3;
  LinkFit f = fit_link(bytes, ms);
  ASSERT_TRUE(f.fixed_ms && f.bandwidth_bytes_per_s);
  EXPECT_NEAR(*f.fixed_ms, 0.9, 1e-9);
  EXPECT_NEAR(*f.bandwidth_bytes_per_s / 290e6, 1.0, 1e-9);
  EXPECT_NEAR(*f.rms_relative_residual, 0, 1e-9);
  EXPECT_NEAR(*f.r_squared, 1, 1e-12);
  // A bump on one point shows in its residual.
  ms[2] *= 1.1;
  f = fit_link(bytes, ms);
  EXPECT_GT(*f.max_relative_residual, 0.01);
  EXPECT_EQ(f.residuals_ms.size(), 4u);
}

TEST(LinkFit, TheSeedNotesLadder) {
  // seeds/002 at depth 4: in + out MB against ms per frame. Least squares puts
  // the link at 285.5 MB/s; the 512p rung sits 22% off the line (272 MB/s,
  // below the plateau).
  const double bytes[] = {1.31e6, 4.61e6, 10.36e6, 41.47e6};
  const double ms[] = {4.83, 15.75, 33.59, 144.80};
  const LinkFit f = fit_link(bytes, ms);
  EXPECT_NEAR(*f.bandwidth_bytes_per_s / 1e6, 285.5, 0.1);
  EXPECT_NEAR(*f.fixed_ms, -0.82, 0.01);
  EXPECT_NEAR(f.relative_residuals[0], 0.22, 0.005);
  EXPECT_NEAR(*f.max_relative_residual, 0.22, 0.005);
}

TEST(LinkFit, DegenerateInputsGiveNoFigures) {
  const double one_x[] = {1e6}, one_y[] = {1.0};
  EXPECT_FALSE(fit_link(one_x, one_y).fixed_ms);
  const double same_x[] = {1e6, 1e6}, ys[] = {1.0, 2.0};
  EXPECT_FALSE(fit_link(same_x, ys).fixed_ms);
  const double xs[] = {1e6, 2e6}, falling[] = {2.0, 1.0};
  LinkFit f = fit_link(xs, falling);
  EXPECT_TRUE(f.fixed_ms);
  EXPECT_FALSE(f.bandwidth_bytes_per_s);  // time falls with bytes: no bandwidth
}

TEST(Plateau, LongestAgreeingRunOverTheLargestFrames) {
  // The seed note's ladder: 272, 293, 302, 286 MB/s "plateaus at ~285-300".
  const std::vector<std::optional<double>> seed = {272, 293, 302, 286};
  Plateau p = find_plateau(seed, 0.10);
  ASSERT_TRUE(p.found);
  EXPECT_EQ(p.first, 1u);
  EXPECT_EQ(p.last, 3u);
  EXPECT_NEAR(*p.median_mb_per_s, 293, 1e-9);
  EXPECT_NEAR(*p.min_mb_per_s, 286, 1e-9);
  p = find_plateau(seed, 0.05);
  EXPECT_EQ(p.first, 1u);
  EXPECT_EQ(p.last, 2u);
  p = find_plateau(seed, 0.11);
  EXPECT_EQ(p.first, 0u);
  EXPECT_EQ(p.last, 3u);
  // Still rising: no two sizes agree.
  const std::vector<std::optional<double>> rising = {50, 100, 200, 400};
  EXPECT_FALSE(find_plateau(rising, 0.10).found);
  // A failed rung breaks a run.
  const std::vector<std::optional<double>> gap = {290, std::nullopt, 291, 290};
  p = find_plateau(gap, 0.10);
  EXPECT_EQ(p.first, 2u);
}

TEST(Knobs, DepthAndDeviceParameters) {
  AbConfig base;
  base.spec = *parse_device_spec("sim:compute=1ms,bw=1GB/s");
  const std::string knobs[] = {"depth=4", "compute=2ms", "link=usb3-gen2"};
  auto c = apply_knobs(base, knobs);
  ASSERT_TRUE(c.has_value()) << c.error().to_string();
  EXPECT_EQ(c->depth, 4u);
  auto spec = parse_spec(c->spec.given_text());  // the knobs edit the parameters as given
  EXPECT_EQ(spec->params.at("compute"), "2ms");
  EXPECT_EQ(spec->params.at("link"), "usb3-gen2");
  EXPECT_EQ(c->knobs.size(), 3u);

  auto bad = [&](const std::string& spec_text, const std::string& knob, const char* needle) {
    AbConfig b;
    auto parsed = parse_device_spec(spec_text);
    ASSERT_TRUE(parsed.has_value()) << spec_text;
    b.spec = *parsed;
    const std::string k[] = {knob};
    auto r = apply_knobs(b, k);
    ASSERT_FALSE(r.has_value()) << knob;
    EXPECT_NE(r.error().message.find(needle), std::string::npos) << r.error().message;
  };
  bad("sim", "depth", "not KNOB=VALUE");
  bad("sim", "=4", "not KNOB=VALUE");
  bad("sim", "depth=0", "1..65536");
  bad("sim", "depth=many", "1..65536");
  bad("tcp://127.0.0.1:9000", "threads=2", "only depth applies to a remote device");
  bad("sim", "bw=1GB/s,lat=1ms", "must not contain ','");
}

TEST(DepthRange, Forms) {
  EXPECT_EQ(*parse_depth_range("64"), (std::pair<uint32_t, uint32_t>{1, 64}));
  EXPECT_EQ(*parse_depth_range("4..32"), (std::pair<uint32_t, uint32_t>{4, 32}));
  for (const char* bad : {"", "0", "..8", "8..", "8..2", "a..b", "1..100000", "-1..4"}) {
    auto r = parse_depth_range(bad);
    EXPECT_FALSE(r.has_value()) << bad;
  }
}

}  // namespace
}  // namespace rig

namespace rig {
namespace {

TEST(Knobs, ACustomLinkAsAKnobSaysWhatToGive) {
  AbConfig base;
  base.spec = *parse_device_spec("sim:compute=1ms");
  const std::string knob[] = {"link=bw=1GB/s"};
  auto r = apply_knobs(base, knob);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message.find("link takes a profile name"), std::string::npos)
      << r.error().message;
  EXPECT_NE(r.error().message.find("knob 'link=bw=1GB/s'"), std::string::npos);
}

}  // namespace
}  // namespace rig

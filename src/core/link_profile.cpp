// Named link profiles, and the expansion of link= in sim spec text.
// docs/link-profiles.md derives every number in the table below.
#include "rig/link_profile.hpp"

#include <cstdio>
#include <string>

#include "rig/device_spec.hpp"
#include "rig/units.hpp"

namespace rig {
namespace {

using namespace std::chrono_literals;

const LinkProfile kProfiles[] = {
    {"usb3-gen2", 290e6, 290e6, 450us, 32, false,
     "seeds/002: UGen300 ladder plateau 285-300 MB/s (in+out), ~0.9 ms round trip, async "
     "queue 32"},
    {"pcie-gen2-x1", 420e6, 420e6, 20us, 32, true,
     "PCIe 2.0 x1: 500 MB/s after 8b/10b, x 128/152 TLP efficiency; latency and queue assumed"},
    {"pcie-gen3-x4", 3.3e9, 3.3e9, 20us, 32, true,
     "PCIe 3.0 x4: 3.94 GB/s after 128b/130b, x 128/152 TLP efficiency; latency and queue "
     "assumed"},
};

std::string compact(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

Result<LinkProfile> parse_custom(std::string_view text) {
  std::string spec_text(text);
  if (spec_text.rfind("custom:", 0) != 0) spec_text = "custom:" + spec_text;
  auto spec = parse_spec(spec_text);
  if (!spec) return tl::unexpected(spec.error());
  LinkProfile p;
  p.name = "custom";
  p.source = "given on the command line: " + std::string(text);
  bool has_bw = false, has_in = false, has_out = false, has_lat = false, has_depth = false;
  for (const auto& param : spec->params) {
    const std::string& key = param.first;
    const std::string& value = param.second;
    auto bad = [&](const std::string& why) {
      return fail(ErrorCode::invalid_argument, "custom link parameter " + key + ": " + why);
    };
    if (key == "bw" || key == "bw_in" || key == "bw_out") {
      auto b = parse_bandwidth(value);
      if (!b) return bad(b.error().message);
      if (!(*b >= 1)) return bad("must be at least 1 B/s");
      if (key == "bw") {
        p.bw_in = p.bw_out = *b;
        has_bw = true;
      } else if (key == "bw_in") {
        p.bw_in = *b;
        has_in = true;
      } else {
        p.bw_out = *b;
        has_out = true;
      }
    } else if (key == "lat") {
      auto d = parse_duration(value);
      if (!d) return bad(d.error().message);
      if (*d < Nanos(0)) return bad("must be >= 0");
      p.latency = *d;
      has_lat = true;
    } else if (key == "depth") {
      auto n = parse_count(value);
      if (!n) return bad(n.error().message);
      if (*n == 0 || *n > 65536) return bad("must be in 1..65536");
      p.queue_depth = static_cast<uint32_t>(*n);
      has_depth = true;
    } else if (key == "duplex") {
      if (value != "half" && value != "full") return bad("must be half or full");
      p.full_duplex = value == "full";
    } else {
      return fail(ErrorCode::invalid_argument,
                  "unknown custom link parameter '" + key +
                      "' (known: bw, bw_in, bw_out, lat, depth, duplex)");
    }
  }
  if (has_bw && (has_in || has_out))
    return fail(ErrorCode::invalid_argument, "custom link: give bw, or bw_in and bw_out, not both");
  if (!has_bw && !(has_in && has_out))
    return fail(ErrorCode::invalid_argument,
                "custom link '" + std::string(text) + "' needs bw= (or bw_in= and bw_out=)");
  if (!has_lat)
    return fail(ErrorCode::invalid_argument, "custom link '" + std::string(text) + "' needs lat=");
  if (!has_depth)
    return fail(ErrorCode::invalid_argument,
                "custom link '" + std::string(text) + "' needs depth=");
  return p;
}

}  // namespace

std::span<const LinkProfile> link_profiles() {
  return kProfiles;
}

std::string link_profile_names() {
  std::string s;
  for (const auto& p : kProfiles) s += (s.empty() ? "" : ", ") + p.name;
  return s;
}

Result<LinkProfile> parse_link_profile(std::string_view text) {
  for (const auto& p : kProfiles)
    if (text == p.name) return p;
  if (text.find('=') != std::string_view::npos) return parse_custom(text);
  return fail(ErrorCode::invalid_argument, "unknown link profile '" + std::string(text) +
                                               "' (known: " + link_profile_names() +
                                               ", or custom bw=BW,lat=DUR,depth=N)");
}

std::string to_sim_params(const LinkProfile& p) {
  return "bw_in=" + compact(p.bw_in / 1e6) + "MB/s,bw_out=" + compact(p.bw_out / 1e6) +
         "MB/s,lat=" + compact(to_ms(p.latency)) + "ms,depth=" + std::to_string(p.queue_depth) +
         ",duplex=" + (p.full_duplex ? "full" : "half");
}

Result<std::string> expand_link_profiles(std::string_view spec_text) {
  auto parsed = parse_spec(spec_text);
  // A malformed spec is open_device's to report, with its own message; remote
  // specs parse as kind "tcp" or "unix", or not at all.
  if (!parsed || parsed->kind != "sim" || parsed->params.count("link") == 0)
    return std::string(spec_text);
  DeviceSpec spec;
  spec.kind = parsed->kind;
  spec.given = std::move(parsed->params);
  auto params = expand_link_profile(spec.given);
  if (!params) return tl::unexpected(params.error());
  spec.params = std::move(*params);
  return spec.text();
}

}  // namespace rig

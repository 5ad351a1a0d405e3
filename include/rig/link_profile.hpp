// Link profiles: a link between a host and an accelerator reduced to the four
// numbers the sim device and `rig predict` use. Where each named profile's
// numbers come from is in docs/link-profiles.md.
//
// The link model (the same one the sim device implements):
//   a transfer of B bytes occupies its channel for B / bandwidth, then lands
//   `latency` later; the latency overlaps other transfers, so pipelining hides
//   it. A lone frame pays it twice (in and out): its round trip is 2 x latency.
//   Half duplex: one channel carries both directions. Full duplex: one each.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "rig/clock.hpp"
#include "rig/error.hpp"

namespace rig {

struct LinkProfile {
  std::string name;          // "usb3-gen2", ..., or "custom"
  double bw_in = 0;          // host -> device, bytes per second
  double bw_out = 0;         // device -> host, bytes per second
  Nanos latency{0};          // fixed latency per transfer (one way)
  uint32_t queue_depth = 1;  // requests the device accepts in flight
  bool full_duplex = false;
  std::string source;  // one line: where the numbers come from

  Nanos round_trip() const { return latency * 2; }
};

// The named profiles, in a stable order.
std::span<const LinkProfile> link_profiles();
// Their names, "usb3-gen2, pcie-gen2-x1, ...", for error messages.
std::string link_profile_names();

// A named profile ("usb3-gen2", "pcie-gen2-x1", "pcie-gen3-x4") or a custom
// one "bw=BW,lat=DUR,depth=N" (optionally "custom:" first; bw_in=/bw_out= in
// place of bw, duplex=half|full, default half). Errors are invalid_argument
// and name the known profiles or the bad parameter.
Result<LinkProfile> parse_link_profile(std::string_view text);

// The profile as sim parameters: "bw_in=...,bw_out=...,lat=...,depth=N,duplex=...".
std::string to_sim_params(const LinkProfile& profile);

// Expands `link=NAME` in a sim spec text into the profile's sim parameters,
// through expand_link_profile (rig/device_spec.hpp); parameters given
// explicitly in the spec win over the profile's ("sim:link=usb3-gen2,depth=8"
// keeps depth 8; an explicit bw replaces both directions). Other specs,
// malformed ones, and sim specs without link=, come back unchanged. An unknown
// profile name is invalid_argument.
Result<std::string> expand_link_profiles(std::string_view spec);

}  // namespace rig

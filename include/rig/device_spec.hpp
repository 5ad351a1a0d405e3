// A device spec, parsed once into a value: which device, with which
// parameters, or where a remote one is served. The CLI parses the text the
// user typed (parse_device_spec, in the device registry); scenarios edit the
// value (A/B knobs) and hand it to open_device. Nothing else parses device
// spec text (parse_spec in rig/units.hpp is the key=value splitter it uses).
//
// Grammar:
//   KIND[:KEY=VALUE,...]   (cpu, sim, null, hailo; keys unique, values non-empty)
//   tcp://HOST:PORT[?OPTION=VALUE&...]   unix:PATH[?...]   (kind "remote")
// Each kind's parameters are listed in the registry's table
// (rig/device_registry.hpp; `rig devices`). A sim's link=PROFILE names a link
// profile (rig/link_profile.hpp); its parameters fill in every link parameter
// the spec does not give itself.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "rig/error.hpp"

namespace rig {

struct DeviceSpec {
  std::string kind;  // a row of the registry's table: "cpu", "sim", "null", "hailo", "remote"
  // The parameters as given (a sim's link=NAME stays a name): what A/B knobs
  // edit. Empty for a remote device.
  std::map<std::string, std::string> given;
  // What the device is opened with: `given` with the link profile expanded
  // (link= removed, the profile's bw_in, bw_out, lat, depth and duplex added
  // where `given` lacks them; an explicit bw replaces both directions).
  std::map<std::string, std::string> params;
  std::string endpoint;  // remote: the spec text, "tcp://HOST:PORT..." or "unix:PATH..."

  bool remote() const { return kind == "remote"; }

  // A cpu or sim spec from its parameters as given: `params` is `given` with
  // a sim's link profile expanded. The registry builds every parsed spec
  // with it; errors are the expansion's (an unknown profile).
  static Result<DeviceSpec> from_params(std::string kind, std::map<std::string, std::string> given);

  // Sets one parameter as if given, and expands the link profile again (a
  // sim's only: other kinds have params == given). Fails with
  // invalid_argument for a remote device (it has no parameters), an empty key
  // or value, a key or value with ',' or '=', or an unknown profile; on
  // failure the spec is unchanged.
  Result<void> set(const std::string& key, const std::string& value);

  // "kind:key=value,..." in key order, of `given` ("kind" alone without
  // parameters); the endpoint when remote, its token replaced by
  // kRedacted. These display forms are what every output and every stored
  // result shows of a spec: a secret never appears in them (open_device
  // uses `endpoint` itself).
  std::string given_text() const;
  // The same of `params`: what the device is opened with.
  std::string text() const;

  bool operator==(const DeviceSpec&) const = default;
};

// What a redacted secret reads as.
inline constexpr std::string_view kRedacted = "REDACTED";

// A remote endpoint with the value of every token= query parameter
// replaced by kRedacted.
std::string redact_secrets(std::string_view endpoint);

// Parses spec text. Errors are invalid_argument and name the problem: an
// empty spec, a malformed or duplicate parameter, an unknown device kind
// (with the nearest known one, listing them all), an unknown link profile. Parameters a kind does
// not know are the device's to refuse when it is opened.
Result<DeviceSpec> parse_device_spec(std::string_view text);

// The link expansion DeviceSpec uses, on a parameter map of a sim: `link=`
// replaced by the profile's parameters where `given` lacks them. Maps
// without link= come back unchanged.
Result<std::map<std::string, std::string>> expand_link_profile(
    const std::map<std::string, std::string>& given);

}  // namespace rig

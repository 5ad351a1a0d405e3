// DeviceSpec's edits and texts, and the one expansion of a sim's link=PROFILE.
// Parsing spec text is the device registry's (src/devices/registry.cpp).
#include "rig/device_spec.hpp"

#include <string>

#include "rig/link_profile.hpp"
#include "rig/units.hpp"

namespace rig {
namespace {

std::string join(const std::string& kind, const std::map<std::string, std::string>& params) {
  std::string out = kind;
  char sep = ':';
  for (const auto& [key, value] : params) {
    out += sep + key + "=" + value;
    sep = ',';
  }
  return out;
}

// Only a sim knows link=; any other kind refuses it when opened.
Result<std::map<std::string, std::string>> effective_params(
    const std::string& kind, const std::map<std::string, std::string>& given) {
  if (kind != "sim") return given;
  return expand_link_profile(given);
}

}  // namespace

Result<std::map<std::string, std::string>> expand_link_profile(
    const std::map<std::string, std::string>& given) {
  auto link = given.find("link");
  if (link == given.end()) return given;
  const std::string& name = link->second;
  if (name.find('=') != std::string::npos)
    return fail(ErrorCode::invalid_argument,
                "sim parameter link takes a profile name (" + link_profile_names() +
                    "); give a custom link as the sim's own bw=, lat=, depth=");
  auto profile = parse_link_profile(name);
  if (!profile) {
    Error e = profile.error();
    e.message = "sim parameter link: " + e.message;
    return tl::unexpected(e);
  }
  // The profile's parameters in the sim's own spelling, one formatting rule.
  auto from_profile = parse_spec("sim:" + to_sim_params(*profile));
  if (!from_profile) return tl::unexpected(from_profile.error());
  std::map<std::string, std::string> params = given;
  params.erase("link");
  const bool explicit_bw = params.count("bw") != 0;
  for (auto& [key, value] : from_profile->params) {
    if (explicit_bw && (key == "bw_in" || key == "bw_out")) continue;
    params.emplace(key, std::move(value));  // an explicit parameter wins
  }
  return params;
}

Result<DeviceSpec> DeviceSpec::from_params(std::string kind,
                                           std::map<std::string, std::string> given) {
  auto params = effective_params(kind, given);
  if (!params) return tl::unexpected(params.error());
  DeviceSpec spec;
  spec.kind = std::move(kind);
  spec.given = std::move(given);
  spec.params = std::move(*params);
  return spec;
}

Result<void> DeviceSpec::set(const std::string& key, const std::string& value) {
  const std::string what = "device spec '" + given_text() + "': ";
  if (remote())
    return fail(ErrorCode::invalid_argument,
                what + "a remote device has no parameters (cannot set " + key + ")");
  if (key.empty() || value.empty())
    return fail(ErrorCode::invalid_argument,
                what + "parameter '" + key + "=" + value + "' needs a key and a value");
  // A custom link in a link= value: the expansion's error says what to give.
  if (kind == "sim" && key == "link" && value.find('=') != std::string::npos &&
      value.find(',') == std::string::npos)
    return tl::unexpected(expand_link_profile({{"link", value}}).error());
  for (const std::string* part : {&key, &value})
    if (part->find_first_of(",=") != std::string::npos)
      return fail(ErrorCode::invalid_argument, what + "parameter '" + key + "=" + value +
                                                   "': a key or value may not hold ',' or '='");
  auto edited = given;
  edited[key] = value;
  auto effective = effective_params(kind, edited);
  if (!effective) return tl::unexpected(effective.error());
  given = std::move(edited);
  params = std::move(*effective);
  return {};
}

std::string redact_secrets(std::string_view endpoint) {
  const size_t q = endpoint.find('?');
  if (q == std::string_view::npos) return std::string(endpoint);
  std::string out(endpoint.substr(0, q + 1));
  std::string_view query = endpoint.substr(q + 1);
  bool first = true;
  while (true) {
    const size_t amp = query.find('&');
    const std::string_view item = query.substr(0, amp);
    if (!first) out += '&';
    first = false;
    if (item.substr(0, item.find('=')) == "token")
      out += "token=" + std::string(kRedacted);
    else
      out += item;
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return out;
}

std::string DeviceSpec::given_text() const {
  return remote() ? redact_secrets(endpoint) : join(kind, given);
}

std::string DeviceSpec::text() const {
  return remote() ? redact_secrets(endpoint) : join(kind, params);
}

}  // namespace rig

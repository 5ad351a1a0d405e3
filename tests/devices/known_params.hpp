// What a device's refusal of an unknown parameter lists as known, for the
// registry tests that hold the registry's table to each device.
#pragma once

#include <set>
#include <sstream>
#include <string>

namespace rig::test {

// "(known: a, b; with runtime=ort also c, d)" -> {a, b, c, d}; {} when the
// message lists none.
inline std::set<std::string> known_in(const std::string& message) {
  const size_t at = message.find("(known: ");
  if (at == std::string::npos) return {};
  std::string list = message.substr(at + 8, message.find(')', at) - at - 8);
  for (char& c : list)
    if (c == ',' || c == ';') c = ' ';
  std::set<std::string> names;
  std::istringstream words(list);
  for (std::string w; words >> w;)
    if (w != "with" && w != "also" && w.find('=') == std::string::npos) names.insert(w);
  return names;
}

}  // namespace rig::test

// make_test_hef KIND OUT.hef [--header-version N]: writes one of the named
// synthetic HEFs (synthetic_hef.hpp). Exit 0 on success, 1 when OUT cannot
// be written, 2 on bad arguments (the message says which and lists KINDs).
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "synthetic_hef.hpp"

namespace {

int usage(const std::string& problem) {
  std::string kinds;
  for (const auto& kind : rig::test::hef::named_spec_kinds())
    kinds += (kinds.empty() ? "" : ", ") + kind;
  std::cerr << "make_test_hef: " << problem << "\n"
            << "usage: make_test_hef KIND OUT.hef [--header-version N]\n"
            << "  KIND: " << kinds << "\n"
            << "  N: 0 (MD5 header, the default) or 3 (xxh3 header, what Hef::hash needs)\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  std::vector<std::string> positional;
  uint32_t header_version = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--header-version") {
      if (i + 1 == args.size()) return usage("--header-version needs a value");
      const std::string& value = args[++i];
      if (value == "0") {
        header_version = 0;
      } else if (value == "3") {
        header_version = 3;
      } else {
        return usage("--header-version " + value + ": 0 or 3");
      }
    } else if (args[i].rfind("--", 0) == 0) {
      return usage("unknown option " + args[i]);
    } else {
      positional.push_back(args[i]);
    }
  }
  if (positional.size() != 2)
    return usage("expected KIND and OUT.hef, got " + std::to_string(positional.size()) +
                 " arguments");

  auto spec = rig::test::hef::named_spec(positional[0]);
  if (!spec) return usage("unknown KIND '" + positional[0] + "'");
  spec->header_version = header_version;
  const auto bytes = rig::test::hef::write_hef(*spec);

  const std::string& path = positional[1];
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) {
    std::cerr << "make_test_hef: cannot write " << path << "\n";
    std::remove(path.c_str());
    return 1;
  }
  return 0;
}

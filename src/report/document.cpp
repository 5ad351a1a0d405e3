#include "rig/report/document.hpp"

#include "rig/output_file.hpp"

namespace rig {
namespace {

// Every version docs/results-schema.md lists.
constexpr int kReadableVersions[] = {1, 2, 3, 4, 5, 6, 7};

}  // namespace

std::span<const int> readable_schema_versions() {
  return kReadableVersions;
}

Result<void> write_json_file(const std::string& path, std::string_view document) {
  return write_output_file(path, document);
}

}  // namespace rig

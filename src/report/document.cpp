#include "rig/report/document.hpp"

#include "rig/model.hpp"

namespace rig {
namespace {

// Every version docs/results-schema.md lists.
constexpr int kReadableVersions[] = {1, 2, 3};

}  // namespace

std::span<const int> readable_schema_versions() {
  return kReadableVersions;
}

Result<void> write_json_file(const std::string& path, std::string_view document) {
  return write_file_atomic(path, document);
}

}  // namespace rig

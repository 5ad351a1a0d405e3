// A result document parsed generically (any tool, any readable version), its
// figures flattened with units. Shared by the CSV export and the HTML
// report; private to the reporters.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "report/json_common.hpp"
#include "rig/report/result_files.hpp"

namespace rig::report {

struct ResultDoc {
  std::string path;
  std::string tool;  // "rig bench", or whatever an unknown tool wrote
  int version = 0;
  json doc;
};

// A JSON object with a readable schema_version and a string tool; errors
// name the file: "r.json: schema_version 9 is not one this rig reads (1, 2)".
Result<ResultDoc> parse_result(const ResultFile& file);

// One leaf of a document.
struct Figure {
  std::string section;  // top-level key, "header" for top-level scalars
  std::string name;     // dotted path below the section; [i] for elements
  const json* value = nullptr;
  std::string unit;
};

// Every scalar leaf (numbers, booleans, strings, null), depth first in key
// order. `skip_sections` are left out.
std::vector<Figure> flatten(const json& doc, const std::vector<std::string>& skip_sections = {});

// The unit a key's suffix names ("" when none): `parent` is the key of the
// object or array holding it (a summary's median takes its parent's unit).
std::string unit_of(std::string_view key, std::string_view parent);

// A value for display: numbers with up to 6 significant digits, "null",
// true/false, strings as they are.
std::string display(const json& v);

// A value for CSV: the shortest text that reads back as the same double
// (std::to_chars), empty for null.
std::string exact(const json& v);

// Every array named "windows" whose first element is an object: a per-window
// series. `path` is its place in the document (steady.repeats[0].windows);
// `repeat` the index of the innermost array holding it, if any.
struct WindowSeries {
  std::string path;
  std::optional<size_t> repeat;
  const json* windows = nullptr;
};
std::vector<WindowSeries> window_series(const json& doc);

}  // namespace rig::report

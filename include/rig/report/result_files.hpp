// Reading result documents of any kind for the reporters that combine them
// (rig report, rig export): every tool's document, every readable schema
// version, and tools this rig does not know (shown generically from their
// JSON). Figures are read from the document's keys, so a key a later version
// adds shows up without a change here.
#pragma once

#include <string>
#include <vector>

#include "rig/error.hpp"

namespace rig {

// One result document: where it came from (named in errors and in the
// report) and its text.
struct ResultFile {
  std::string path;
  std::string text;
};

// Reads each path (io error naming it when unreadable).
Result<std::vector<ResultFile>> read_result_files(const std::vector<std::string>& paths);

// rig export --csv: one row per figure, "result,section,name,value,unit":
// result = the file's path, section = the top-level key ("header" for
// schema_version and tool), name = the dotted path below it (array elements
// as [i]), value = the JSON value (numbers with 17 significant digits,
// true/false, strings as they are, empty for null), unit from the key's
// suffix (docs/results-schema.md: ms, s, ns, /s, B, B/s, MB/s, fraction).
// RFC 4180 quoting. Fails (invalid_argument naming the file) on a document
// that is not a JSON object with a readable schema_version and a tool.
Result<std::string> figures_csv(const std::vector<ResultFile>& files);

// rig export --csv-windows: the per-window series, one row per window:
// "result,series,repeat,window,start_s,duration_s,inferences,rate_per_s"
// plus any other numeric key the windows hold (sorted). series = the JSON
// path of the array (steady.repeats[0].windows); every array named
// "windows" whose elements are objects is a series.
Result<std::string> windows_csv(const std::vector<ResultFile>& files);

}  // namespace rig

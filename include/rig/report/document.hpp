// Result documents: the JSON layout's version and writing a document to a
// file. Every scenario's reporter (rig/report/*_report.hpp) turns its result
// into one document; docs/results-schema.md lists every key of every
// version.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "rig/error.hpp"
#include "rig/scenario/input_verdict.hpp"

namespace rig {

// Version of the JSON layout (not the rig version). Bumped whenever a key
// moves; docs/results-schema.md has the history.
inline constexpr int kJsonSchemaVersion = 7;

// The versions readers of results accept: every version the schema document
// still lists. Others are refused by name.
std::span<const int> readable_schema_versions();

// The verdict a result document records, for a command that reads it
// (rig/scenario/input_verdict.hpp): its tool, verdict.valid and
// verdict.reasons; valid is nullopt when the document has no verdict. The
// errors are read_document's, naming `what` and `reader`.
Result<InputVerdict> read_input_verdict(std::string_view text, std::string_view what,
                                        std::string_view reader);

// Text that came from outside rig (a served device's warnings and
// properties, file names, history labels, documents) made safe to print on
// a terminal: C0 control characters other than newline and tab, DEL, and
// the C1 controls U+0080-U+009F (as UTF-8) become visible escapes ("\x1b",
// "\u009b"), so that no peer or file can move the cursor, rewrite a line
// (CR), ring the bell or send an escape sequence. Everything else is kept.
std::string terminal_safe(std::string_view text);

// Writes a serialized document with write_output_file (rig/output_file.hpp):
// atomically for a file, through for a FIFO, a device or "-".
Result<void> write_json_file(const std::string& path, std::string_view document);

}  // namespace rig

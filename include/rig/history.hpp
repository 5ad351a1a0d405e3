// The history: every measuring run's result document appended to a SQLite
// database, with its environment and a few indexed columns, so later runs can
// be listed and compared (rig history, rig diff).
//
// Layout (schema version kHistorySchemaVersion, kept in PRAGMA user_version):
//   runs(id INTEGER PRIMARY KEY, time_utc TEXT, time_unix_ms INTEGER,
//        tool TEXT, model_name TEXT, model_sha256 TEXT, device_spec TEXT,
//        verdict TEXT, environment TEXT, document TEXT)
//   indexes on time_unix_ms, model_sha256, device_spec.
// Version 1 had runs(id, time_utc, tool, document) only; opening a version 1
// database migrates it in place (the new columns filled from each stored
// document). A database of a newer version is refused by name.
//
// Concurrency: WAL journal and a busy timeout, so several rig processes may
// append at once; each append is one INSERT, each migration one IMMEDIATE
// transaction that re-reads the version inside it. A History object is not
// thread-safe; open one per thread.
//
// Secrets: the document is stored as written, after a last redaction of any
// `token=VALUE` in it (and of $RIG_TOKEN's value), so a stored result never
// carries a token even where an output path missed one.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rig/error.hpp"

struct sqlite3;

namespace rig {

inline constexpr int kHistorySchemaVersion = 2;

struct RunRecord {
  int64_t id = 0;
  std::string time_utc;  // ISO 8601, "2026-12-01T11:20:00Z"
  int64_t time_unix_ms = 0;
  std::string tool;  // "rig bench", ...
  std::string model_name, model_sha256;
  std::string device_spec;  // environment.device.spec; ab: "A | B"
  std::string verdict;      // "VALID", "INVALID", or "" when the tool has none
  std::string environment;  // the document's environment object, serialized
  std::string document;     // the whole result document (empty in list())
};

struct HistoryFilter {
  std::string model;                     // substring of the model name or sha256 prefix
  std::string device;                    // substring of the device spec
  std::optional<int64_t> since_unix_ms;  // runs at or after
  std::string tool;                      // exact, e.g. "rig bench"
};

// The columns a document fills, and its redacted form. Errors:
// invalid_argument when it is not a JSON object with a "tool".
Result<RunRecord> record_of_document(std::string_view document);

// Replaces the value of every token=VALUE (up to &, comma, quote, whitespace)
// and every occurrence of `secret` (when not empty) with "***".
std::string redact_secrets(std::string_view text, std::string_view secret);

class History {
 public:
  // Opens (creating it and its directory when missing) and migrates. Errors
  // are io naming the path and SQLite's reason ("file is not a database").
  static Result<History> open(const std::string& path);

  History(History&&) noexcept;
  History& operator=(History&&) noexcept;
  ~History();

  // Appends a document; returns its id. `unix_ms` is the run's time.
  Result<int64_t> append(std::string_view document, int64_t unix_ms);
  // Whether append() can work, checked before a measurement rather than
  // after it: the runs table has the columns an append writes, and the
  // write lock can be taken within `wait` (another process holding it longer
  // is named). io naming the path and the reason; changes nothing.
  Result<void> check_append(std::chrono::milliseconds wait);
  // Matching runs, oldest first, without their documents.
  Result<std::vector<RunRecord>> list(const HistoryFilter& filter);
  // One run with its document; not_found naming the id.
  Result<RunRecord> get(int64_t id);

  const std::string& path() const { return path_; }
  int schema_version() const { return version_; }

 private:
  History(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  Result<void> migrate();
  Error sql_error(const std::string& doing) const;

  sqlite3* db_ = nullptr;
  std::string path_;
  int version_ = 0;
};

// $RIG_HISTORY, else $XDG_DATA_HOME/rig/history.sqlite, else
// ~/.local/share/rig/history.sqlite ("" when none of them is set).
std::string default_history_path();

// A listing (rig history --json): {"kind": "history", "runs": [{id, time_utc,
// tool, model_name, model_sha256, device_spec, verdict}]}; not a result, so
// no schema_version. Documents are left out (rig history --show ID).
std::string runs_to_json(const std::vector<RunRecord>& runs);

// "2026-12-01T11:20:00Z" for a Unix time in milliseconds.
std::string format_utc(int64_t unix_ms);
// "2026-12-01", "2026-12-01T11:20", "2026-12-01T11:20:00Z", or a duration
// back from `now_unix_ms` ("2h", "3d"; d = 24 h). invalid_argument naming the text.
Result<int64_t> parse_since(std::string_view text, int64_t now_unix_ms);

}  // namespace rig

#include "rig/history.hpp"

#include <sqlite3.h>

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <functional>
#include <thread>

#include <nlohmann/json.hpp>

#include "rig/json_depth.hpp"
#include "rig/units.hpp"

namespace rig {
namespace {

using nlohmann::json;

constexpr int kBusyTimeoutMs = 10000;
constexpr const char* kInsert =
    "INSERT INTO runs(time_utc, time_unix_ms, tool, model_name, model_sha256, device_spec, "
    "verdict, environment, document) VALUES(?,?,?,?,?,?,?,?,?)";

// A prepared statement, finalized on scope exit.
struct Statement {
  sqlite3_stmt* s = nullptr;
  ~Statement() { sqlite3_finalize(s); }
};

std::string text_column(sqlite3_stmt* s, int i) {
  const unsigned char* t = sqlite3_column_text(s, i);
  return t ? reinterpret_cast<const char*>(t) : "";
}

std::string string_at(const json& doc, std::initializer_list<const char*> path) {
  const json* node = &doc;
  for (const char* key : path) {
    if (!node->is_object()) return {};
    auto it = node->find(key);
    if (it == node->end()) return {};
    node = &*it;
  }
  return node->is_string() ? node->get<std::string>() : std::string();
}

}  // namespace

std::string redact_secrets(std::string_view text, std::string_view secret) {
  std::string out;
  out.reserve(text.size());
  constexpr std::string_view key = "token=";
  size_t i = 0;
  while (i < text.size()) {
    if (!secret.empty() && text.compare(i, secret.size(), secret) == 0) {
      out += "***";
      i += secret.size();
      continue;
    }
    if (text.compare(i, key.size(), key) == 0) {
      out += key;
      i += key.size();
      const size_t start = i;
      while (i < text.size() && text[i] != '&' && text[i] != ',' && text[i] != '"' &&
             text[i] != '\\' && !std::isspace(static_cast<unsigned char>(text[i])))
        ++i;
      if (i > start) out += "***";
      continue;
    }
    out += text[i++];
  }
  return out;
}

Result<RunRecord> record_of_document(std::string_view document) {
  // Bounded before parsing: the environment is serialized again below.
  if (auto ok = check_json_depth(document, "history: the result"); !ok)
    return tl::unexpected(ok.error());
  const json doc = json::parse(document, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object())
    return fail(ErrorCode::invalid_argument, "history: the result is not a JSON object");
  RunRecord r;
  r.tool = string_at(doc, {"tool"});
  if (r.tool.empty()) return fail(ErrorCode::invalid_argument, "history: the result has no 'tool'");
  r.model_name = string_at(doc, {"model", "name"});
  r.model_sha256 = string_at(doc, {"model", "sha256"});
  r.device_spec = string_at(doc, {"environment", "device", "spec"});
  if (r.device_spec.empty()) {
    const std::string a = string_at(doc, {"environment", "device_a", "spec"});
    const std::string b = string_at(doc, {"environment", "device_b", "spec"});
    if (!a.empty() || !b.empty()) r.device_spec = a + " | " + b;
  }
  if (r.device_spec.empty()) r.device_spec = string_at(doc, {"settings", "effective", "device"});
  r.verdict = string_at(doc, {"verdict", "status"});
  if (auto env = doc.find("environment"); env != doc.end()) r.environment = env->dump();
  r.document = std::string(document);
  return r;
}

History::History(History&& o) noexcept
    : db_(std::exchange(o.db_, nullptr)), path_(std::move(o.path_)), version_(o.version_) {}
History& History::operator=(History&& o) noexcept {
  if (this != &o) {
    sqlite3_close(db_);
    db_ = std::exchange(o.db_, nullptr);
    path_ = std::move(o.path_);
    version_ = o.version_;
  }
  return *this;
}
History::~History() {
  sqlite3_close(db_);
}

Error History::sql_error(const std::string& doing) const {
  const char* why = db_ ? sqlite3_errmsg(db_) : "out of memory";
  std::string hint;
  const int code = db_ ? sqlite3_errcode(db_) : SQLITE_NOMEM;
  if (code == SQLITE_NOTADB || code == SQLITE_CORRUPT)
    hint = " (move it aside, or give --history PATH or --no-history)";
  return {ErrorCode::io, "history '" + path_ + "': " + doing + ": " + why + hint};
}

Result<History> History::open(const std::string& path) {
  if (path.empty()) return fail(ErrorCode::invalid_argument, "history: no path");
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path dir = fs::path(path).parent_path();
  if (!dir.empty() && !fs::is_directory(dir, ec)) {
    fs::create_directories(dir, ec);
    if (ec)
      return fail(ErrorCode::io, "history '" + path + "': cannot create directory '" +
                                     dir.string() + "': " + ec.message());
  }
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(
      path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  History h(db, path);
  if (rc != SQLITE_OK) return tl::unexpected(h.sql_error("open"));
  sqlite3_busy_timeout(db, kBusyTimeoutMs);
  // WAL lets readers and one writer proceed together; the busy timeout makes
  // concurrent writers wait their turn rather than fail. Switching the
  // journal to WAL takes an exclusive lock without calling the busy handler
  // (SQLite answers "database is locked" at once while another process opens
  // or switches the same file), so it is retried here within the same bound.
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::milliseconds(kBusyTimeoutMs);
  for (auto pause = std::chrono::milliseconds(1);;
       pause = std::min(2 * pause, std::chrono::milliseconds(50))) {
    const int wal = sqlite3_exec(db, "PRAGMA journal_mode=WAL", nullptr, nullptr, nullptr);
    if (wal == SQLITE_OK) break;
    if ((wal != SQLITE_BUSY && wal != SQLITE_LOCKED) || std::chrono::steady_clock::now() > give_up)
      return tl::unexpected(h.sql_error("set the WAL journal"));
    std::this_thread::sleep_for(pause);
  }
  if (auto ok = h.migrate(); !ok) return tl::unexpected(ok.error());
  return h;
}

Result<void> History::migrate() {
  auto exec = [&](const char* sql, const std::string& doing) -> Result<void> {
    if (sqlite3_exec(db_, sql, nullptr, nullptr, nullptr) != SQLITE_OK)
      return tl::unexpected(sql_error(doing));
    return {};
  };
  auto read_version = [&]() -> Result<int> {
    Statement st;
    if (sqlite3_prepare_v2(db_, "PRAGMA user_version", -1, &st.s, nullptr) != SQLITE_OK ||
        sqlite3_step(st.s) != SQLITE_ROW)
      return tl::unexpected(sql_error("read the schema version"));
    return sqlite3_column_int(st.s, 0);
  };
  auto first = read_version();
  if (!first) return tl::unexpected(first.error());
  if (*first == kHistorySchemaVersion) {
    version_ = *first;
    return {};
  }
  if (auto ok = exec("BEGIN IMMEDIATE", "begin the migration"); !ok) return ok;
  auto fail_and_rollback = [&](Error e) -> Result<void> {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    return tl::unexpected(std::move(e));
  };
  auto now = read_version();  // another process may have migrated meanwhile
  if (!now) return fail_and_rollback(now.error());
  int v = *now;
  if (v > kHistorySchemaVersion)
    return fail_and_rollback({ErrorCode::io, "history '" + path_ + "' has schema version " +
                                                 std::to_string(v) + "; this rig reads up to " +
                                                 std::to_string(kHistorySchemaVersion)});
  if (v == 0) {
    if (auto ok = exec("CREATE TABLE runs(id INTEGER PRIMARY KEY, time_utc TEXT NOT NULL, "
                       "time_unix_ms INTEGER NOT NULL, tool TEXT NOT NULL, model_name TEXT, "
                       "model_sha256 TEXT, device_spec TEXT, verdict TEXT, environment TEXT, "
                       "document TEXT NOT NULL)",
                       "create the runs table");
        !ok)
      return fail_and_rollback(ok.error());
  } else if (v == 1) {
    // Version 1: runs(id, time_utc, tool, document). Add the indexed columns
    // and fill them from each stored document.
    for (const char* sql : {"ALTER TABLE runs ADD COLUMN time_unix_ms INTEGER NOT NULL DEFAULT 0",
                            "ALTER TABLE runs ADD COLUMN model_name TEXT",
                            "ALTER TABLE runs ADD COLUMN model_sha256 TEXT",
                            "ALTER TABLE runs ADD COLUMN device_spec TEXT",
                            "ALTER TABLE runs ADD COLUMN verdict TEXT",
                            "ALTER TABLE runs ADD COLUMN environment TEXT"})
      if (auto ok = exec(sql, "migrate from version 1"); !ok) return fail_and_rollback(ok.error());
    Statement read, write;
    if (sqlite3_prepare_v2(db_, "SELECT id, time_utc, document FROM runs", -1, &read.s, nullptr) !=
            SQLITE_OK ||
        sqlite3_prepare_v2(db_,
                           "UPDATE runs SET time_unix_ms=?, model_name=?, model_sha256=?, "
                           "device_spec=?, verdict=?, environment=? WHERE id=?",
                           -1, &write.s, nullptr) != SQLITE_OK)
      return fail_and_rollback(sql_error("migrate from version 1"));
    while (sqlite3_step(read.s) == SQLITE_ROW) {
      const int64_t id = sqlite3_column_int64(read.s, 0);
      const std::string time = text_column(read.s, 1);
      auto rec = record_of_document(text_column(read.s, 2));
      if (!rec) continue;  // kept as it was; it lists with empty columns
      auto ms = parse_since(time, 0);
      sqlite3_bind_int64(write.s, 1, ms ? *ms : 0);
      sqlite3_bind_text(write.s, 2, rec->model_name.c_str(), -1, SQLITE_TRANSIENT);
      sqlite3_bind_text(write.s, 3, rec->model_sha256.c_str(), -1, SQLITE_TRANSIENT);
      sqlite3_bind_text(write.s, 4, rec->device_spec.c_str(), -1, SQLITE_TRANSIENT);
      sqlite3_bind_text(write.s, 5, rec->verdict.c_str(), -1, SQLITE_TRANSIENT);
      sqlite3_bind_text(write.s, 6, rec->environment.c_str(), -1, SQLITE_TRANSIENT);
      sqlite3_bind_int64(write.s, 7, id);
      if (sqlite3_step(write.s) != SQLITE_DONE)
        return fail_and_rollback(sql_error("migrate from version 1"));
      sqlite3_reset(write.s);
    }
  }
  for (const char* sql :
       {"CREATE INDEX IF NOT EXISTS runs_time ON runs(time_unix_ms)",
        "CREATE INDEX IF NOT EXISTS runs_model ON runs(model_sha256)",
        "CREATE INDEX IF NOT EXISTS runs_device ON runs(device_spec)", "PRAGMA user_version = 2"})
    if (auto ok = exec(sql, "create the indexes"); !ok) return fail_and_rollback(ok.error());
  if (auto ok = exec("COMMIT", "commit the migration"); !ok) return fail_and_rollback(ok.error());
  version_ = kHistorySchemaVersion;
  return {};
}

Result<void> History::check_append(std::chrono::milliseconds wait) {
  {
    Statement st;  // prepared, never run: SQLite checks the table and columns
    if (sqlite3_prepare_v2(db_, kInsert, -1, &st.s, nullptr) != SQLITE_OK)
      return tl::unexpected(sql_error("check that a run can be appended"));
  }
  sqlite3_busy_timeout(db_, static_cast<int>(wait.count()));
  const int begun = sqlite3_exec(db_, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr);
  Error e;
  if (begun != SQLITE_OK)
    e = sql_error("take the write lock (another process holds it; waited " +
                  std::to_string(wait.count()) + " ms)");
  sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_busy_timeout(db_, kBusyTimeoutMs);
  if (begun != SQLITE_OK) return tl::unexpected(e);
  return {};
}

Result<int64_t> History::append(std::string_view document, int64_t unix_ms) {
  const char* token = std::getenv("RIG_TOKEN");
  const std::string redacted = redact_secrets(document, token ? token : "");
  auto rec = record_of_document(redacted);
  if (!rec) return tl::unexpected(rec.error());
  Statement st;
  if (sqlite3_prepare_v2(db_, kInsert, -1, &st.s, nullptr) != SQLITE_OK)
    return tl::unexpected(sql_error("append"));
  const std::string time = format_utc(unix_ms);
  sqlite3_bind_text(st.s, 1, time.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_int64(st.s, 2, unix_ms);
  sqlite3_bind_text(st.s, 3, rec->tool.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st.s, 4, rec->model_name.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st.s, 5, rec->model_sha256.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st.s, 6, rec->device_spec.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st.s, 7, rec->verdict.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st.s, 8, rec->environment.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st.s, 9, redacted.c_str(), static_cast<int>(redacted.size()), SQLITE_TRANSIENT);
  if (sqlite3_step(st.s) != SQLITE_DONE) return tl::unexpected(sql_error("append"));
  return sqlite3_last_insert_rowid(db_);
}

Result<std::vector<RunRecord>> History::list(const HistoryFilter& f) {
  std::string sql =
      "SELECT id, time_utc, time_unix_ms, tool, model_name, model_sha256, device_spec, verdict, "
      "environment FROM runs WHERE 1=1";
  if (!f.model.empty())
    sql += " AND (instr(model_name, ?1) > 0 OR substr(model_sha256, 1, length(?1)) = ?1)";
  if (!f.device.empty()) sql += " AND instr(device_spec, ?2) > 0";
  if (f.since_unix_ms) sql += " AND time_unix_ms >= ?3";
  if (!f.tool.empty()) sql += " AND tool = ?4";
  sql += " ORDER BY id";
  Statement st;
  if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &st.s, nullptr) != SQLITE_OK)
    return tl::unexpected(sql_error("list"));
  if (!f.model.empty()) sqlite3_bind_text(st.s, 1, f.model.c_str(), -1, SQLITE_TRANSIENT);
  if (!f.device.empty()) sqlite3_bind_text(st.s, 2, f.device.c_str(), -1, SQLITE_TRANSIENT);
  if (f.since_unix_ms) sqlite3_bind_int64(st.s, 3, *f.since_unix_ms);
  if (!f.tool.empty()) sqlite3_bind_text(st.s, 4, f.tool.c_str(), -1, SQLITE_TRANSIENT);
  std::vector<RunRecord> out;
  int rc;
  while ((rc = sqlite3_step(st.s)) == SQLITE_ROW) {
    RunRecord r;
    r.id = sqlite3_column_int64(st.s, 0);
    r.time_utc = text_column(st.s, 1);
    r.time_unix_ms = sqlite3_column_int64(st.s, 2);
    r.tool = text_column(st.s, 3);
    r.model_name = text_column(st.s, 4);
    r.model_sha256 = text_column(st.s, 5);
    r.device_spec = text_column(st.s, 6);
    r.verdict = text_column(st.s, 7);
    r.environment = text_column(st.s, 8);
    out.push_back(std::move(r));
  }
  if (rc != SQLITE_DONE) return tl::unexpected(sql_error("list"));
  return out;
}

Result<RunRecord> History::get(int64_t id) {
  Statement st;
  if (sqlite3_prepare_v2(db_,
                         "SELECT id, time_utc, time_unix_ms, tool, model_name, model_sha256, "
                         "device_spec, verdict, environment, document FROM runs WHERE id = ?",
                         -1, &st.s, nullptr) != SQLITE_OK)
    return tl::unexpected(sql_error("read run"));
  sqlite3_bind_int64(st.s, 1, id);
  const int rc = sqlite3_step(st.s);
  if (rc == SQLITE_DONE)
    return fail(ErrorCode::not_found, "history '" + path_ + "' has no run " + std::to_string(id) +
                                          " (rig history lists them)");
  if (rc != SQLITE_ROW) return tl::unexpected(sql_error("read run"));
  RunRecord r;
  r.id = sqlite3_column_int64(st.s, 0);
  r.time_utc = text_column(st.s, 1);
  r.time_unix_ms = sqlite3_column_int64(st.s, 2);
  r.tool = text_column(st.s, 3);
  r.model_name = text_column(st.s, 4);
  r.model_sha256 = text_column(st.s, 5);
  r.device_spec = text_column(st.s, 6);
  r.verdict = text_column(st.s, 7);
  r.environment = text_column(st.s, 8);
  r.document = text_column(st.s, 9);
  return r;
}

std::string runs_to_json(const std::vector<RunRecord>& runs) {
  json list = json::array();
  for (const auto& r : runs)
    list.push_back({{"id", r.id},
                    {"time_utc", r.time_utc},
                    {"tool", r.tool},
                    {"model_name", r.model_name},
                    {"model_sha256", r.model_sha256},
                    {"device_spec", r.device_spec},
                    {"verdict", r.verdict}});
  json doc = {{"kind", "history"}, {"runs", list}};
  return doc.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

std::string default_history_path() {
  if (const char* p = std::getenv("RIG_HISTORY"); p && *p) return p;
  if (const char* x = std::getenv("XDG_DATA_HOME"); x && *x)
    return std::string(x) + "/rig/history.sqlite";
  if (const char* h = std::getenv("HOME"); h && *h)
    return std::string(h) + "/.local/share/rig/history.sqlite";
  return {};
}

std::string format_utc(int64_t unix_ms) {
  const std::time_t t = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

Result<int64_t> parse_since(std::string_view text, int64_t now_unix_ms) {
  const std::string t(text);
  auto bad = [&] {
    return fail(ErrorCode::invalid_argument,
                "--since '" + t +
                    "': expected a date (2026-12-01, 2026-12-01T11:20[:00][Z]) or a time back "
                    "from now (90m, 2h, 3d)");
  };
  if (t.empty()) return bad();
  if (!t.empty() && (t.back() == 'd')) {
    auto n = parse_number(t.substr(0, t.size() - 1));
    if (!n || *n < 0) return bad();
    return now_unix_ms - static_cast<int64_t>(*n * 86400e3);
  }
  if (auto d = parse_duration(t); d) {
    if (d->count() < 0) return bad();
    return now_unix_ms - std::chrono::duration_cast<std::chrono::milliseconds>(*d).count();
  }
  std::tm tm{};
  int y = 0, mo = 0, da = 0, h = 0, mi = 0, s = 0;
  char tail[8] = {0};
  const int got =
      std::sscanf(t.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%7s", &y, &mo, &da, &h, &mi, &s, tail);
  if (got < 3 || got == 4 || mo < 1 || mo > 12 || da < 1 || da > 31 || h > 23 || mi > 59 || s > 60)
    return bad();
  if (got == 7 && std::string(tail) != "Z") return bad();
  if (got == 5 && t.size() > 16 && t.substr(16) != "Z") return bad();
  if (got == 3 && t.size() != 10) return bad();
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = da;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = s;
  return static_cast<int64_t>(::timegm(&tm)) * 1000;
}

}  // namespace rig

#include "report/result_doc.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <string_view>
#include <system_error>

#include "report/schema_fields.hpp"
#include "report/text_common.hpp"
#include "rig/model.hpp"
#include "rig/report/document.hpp"

namespace rig::report {
namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool is_summary_stat(std::string_view key) {
  return key == "min" || key == "median" || key == "mean" || key == "p90" || key == "p95" ||
         key == "p99" || key == "max" || key == "stddev";
}

// `bound_unit`: inside a summary's "intervals", the unit of the figure the
// intervals bound (latency.overall_ms.intervals.p99.lower is in ms).
void walk(const json& node, const std::string& section, const std::string& name,
          std::string_view key, std::string_view parent, const std::string& bound_unit,
          std::vector<Figure>& out) {
  if (node.is_object()) {
    const std::string bound = key == "intervals" ? unit_of(parent, "") : bound_unit;
    for (const auto& [k, v] : node.items())
      walk(v, section, name.empty() ? k : name + "." + k, k, key, bound, out);
  } else if (node.is_array()) {
    for (size_t i = 0; i < node.size(); ++i)
      walk(node[i], section, name + "[" + std::to_string(i) + "]", key, parent, bound_unit, out);
  } else if (!bound_unit.empty() && (key == "lower" || key == "upper")) {
    out.push_back({section, name, &node, bound_unit});
  } else {
    out.push_back({section, name, &node, unit_of(key, parent)});
  }
}

void find_windows(const json& node, const std::string& path, std::optional<size_t> repeat,
                  std::vector<WindowSeries>& out) {
  if (node.is_object()) {
    for (const auto& [k, v] : node.items()) {
      const std::string p = path.empty() ? k : path + "." + k;
      if (k == "windows" && v.is_array() && !v.empty() && v[0].is_object())
        out.push_back({p, repeat, &v});
      else
        find_windows(v, p, repeat, out);
    }
  } else if (node.is_array()) {
    for (size_t i = 0; i < node.size(); ++i)
      find_windows(node[i], path + "[" + std::to_string(i) + "]", i, out);
  }
}

}  // namespace

std::vector<WindowSeries> window_series(const json& doc) {
  std::vector<WindowSeries> out;
  find_windows(doc, "", std::nullopt, out);
  return out;
}

Result<ResultDoc> parse_result(const ResultFile& file) {
  auto bad = [&](const std::string& m) {
    return fail(ErrorCode::invalid_argument, file.path + ": " + m);
  };
  ResultDoc r;
  r.path = file.path;
  auto parsed = parse_json(file.text, file.path, "a rig --json result");
  if (!parsed) return tl::unexpected(parsed.error());
  r.doc = std::move(*parsed);
  if (!r.doc.is_object()) return bad("not a JSON object (expected a rig --json result)");
  const DocHeaderNodes header = header_nodes(r.doc);
  const json* v = header.schema_version;
  if (!v) return bad("field 'schema_version' is missing (expected a rig --json result)");
  if (!v->is_number()) return bad("field 'schema_version' is not a number");
  const double version = v->get<double>();
  std::string readable;
  for (int ok : readable_schema_versions()) {
    if (version == ok) r.version = ok;
    readable += (readable.empty() ? "" : ", ") + std::to_string(ok);
  }
  if (r.version == 0)
    return bad("schema_version " + line("%.17g", version) + " is not one this rig reads (" +
               readable + ")");
  const json* tool = header.tool;
  if (!tool || !tool->is_string()) return bad("field 'tool' is missing or not a string");
  r.tool = tool->get<std::string>();
  return r;
}

std::vector<Figure> flatten(const json& doc, const std::vector<std::string>& skip) {
  std::vector<Figure> out;
  for (const auto& [k, v] : doc.items()) {
    bool skipped = false;
    for (const auto& s : skip) skipped = skipped || s == k;
    if (skipped) continue;
    if (v.is_object() || v.is_array())
      walk(v, k, "", k, "", "", out);
    else
      out.push_back({"header", k, &v, unit_of(k, "")});
  }
  return out;
}

std::string unit_of(std::string_view key, std::string_view parent) {
  // Longest suffixes first: "_mb_per_s" before "_per_s" before "_s".
  static const std::pair<std::string_view, std::string_view> kSuffixes[] = {
      {"_ns_per_inference", "ns"},
      {"joules_per_inference", "J"},
      {"_mb_per_s", "MB/s"},
      {"_bytes_per_s", "B/s"},
      {"_per_inference", "B"},
      {"frames_per_second", "/s"},
      {"_per_s", "/s"},
      {"_bytes", "B"},
      {"_ms", "ms"},
      {"_ns", "ns"},
      {"_power_w", "W"},
      {"_s", "s"},
      {"_tolerance", "fraction"},
      {"_share", "fraction"},
      {"_fraction", "fraction"},
      {"_margin", "fraction"},
      {"_residual", "fraction"},
      {"_residuals", "fraction"},
      {"_spread", "fraction"}};
  static const std::set<std::string_view> kFractions = {
      "spread",   "mdape",           "ratio",     "difference",       "noise",          "bus_share",
      "bus_idle", "bus_utilization", "tolerance", "fraction_of_best", "output_fraction"};
  static const std::set<std::string_view> kBytes = {"model_in", "model_out", "bytes_in",
                                                    "bytes_out", "bytes"};
  if (key == "count") return "";
  if (is_summary_stat(key)) {
    // A summary's statistics take the unit of the key that holds them.
    return parent.empty() ? "" : unit_of(parent, "");
  }
  if (kFractions.count(key)) return "fraction";
  if (kBytes.count(key)) return "B";
  if (key == "ratio") return "fraction";
  for (const auto& [suffix, unit] : kSuffixes)
    if (ends_with(key, suffix)) return std::string(unit);
  return "";
}

std::string display(const json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer() || v.is_number_unsigned()) return v.dump();
  if (v.is_number()) {
    const double d = v.get<double>();
    if (d == std::floor(d) && std::fabs(d) < 1e15) return line("%.0f", d);
    return line("%.6g", d);
  }
  return v.dump();
}

std::string exact(const json& v) {
  if (v.is_null()) return "";
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer() || v.is_number_unsigned()) return v.dump();
  if (v.is_number()) {
    // The shortest text that reads back as the same double: exact, without
    // the float noise of %.17g (0.95, not 0.94999999999999996).
    char text[64];
    const auto end = std::to_chars(text, text + sizeof text, v.get<double>());
    return std::string(text, end.ptr);
  }
  return v.dump();
}

}  // namespace rig::report

namespace rig {
namespace {

using report::json;

// Whether the whole text is a finite number as std::to_chars writes one
// ("-3.5", "1e-05"): a spreadsheet reads it as a number, never a formula.
bool is_number_text(const std::string& s) {
  double value = 0;
  const auto end = std::from_chars(s.data(), s.data() + s.size(), value);
  return end.ec == std::errc() && end.ptr == s.data() + s.size() && std::isfinite(value);
}

// RFC 4180: quoted when it holds a comma, a quote or a line break. A cell
// that a spreadsheet would run as a formula (it begins with =, +, -, @, a
// tab or a carriage return, and is not a number) gets a leading ' (OWASP's
// advice against CSV injection): a device property "=HYPERLINK(...)" reads
// as the text it is.
std::string csv_field(const std::string& s) {
  std::string cell = s;
  if (!cell.empty() && std::string_view("=+-@\t\r").find(cell.front()) != std::string_view::npos &&
      !is_number_text(cell))
    cell.insert(0, 1, '\'');
  if (cell.find_first_of(",\"\r\n") == std::string::npos) return cell;
  std::string out = "\"";
  for (char c : cell) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

}  // namespace

Result<std::vector<ResultFile>> read_result_files(const std::vector<std::string>& paths) {
  std::vector<ResultFile> files;
  for (const auto& p : paths) {
    auto bytes = read_file(p);
    if (!bytes) return tl::unexpected(bytes.error());
    files.push_back({p, std::string(reinterpret_cast<const char*>(bytes->data()), bytes->size())});
  }
  return files;
}

Result<std::string> figures_csv(const std::vector<ResultFile>& files) {
  std::string out = "result,section,name,value,unit\r\n";
  for (const auto& f : files) {
    auto doc = report::parse_result(f);
    if (!doc) return tl::unexpected(doc.error());
    for (const auto& fig : report::flatten(doc->doc))
      out += csv_field(f.path) + "," + csv_field(fig.section) + "," + csv_field(fig.name) + "," +
             csv_field(report::exact(*fig.value)) + "," + csv_field(fig.unit) + "\r\n";
  }
  return out;
}

Result<std::string> windows_csv(const std::vector<ResultFile>& files) {
  struct Series {
    std::string result;
    report::WindowSeries s;
  };
  std::vector<report::ResultDoc> docs;
  for (const auto& f : files) {
    auto doc = report::parse_result(f);
    if (!doc) return tl::unexpected(doc.error());
    docs.push_back(std::move(*doc));
  }
  std::vector<Series> series;
  std::set<std::string> extra;
  // The columns every window has: the keys of the window's table.
  static const std::vector<std::string> kFixed =
      report::keys_of<WindowFigure>(report::window_fields<report::KeyLister>);
  for (const auto& d : docs) {
    for (auto& ws : report::window_series(d.doc)) {
      for (const auto& w : *ws.windows)
        if (w.is_object())
          for (const auto& [k, v] : w.items())
            if (v.is_number() && std::find(kFixed.begin(), kFixed.end(), k) == kFixed.end())
              extra.insert(k);
      series.push_back({d.path, std::move(ws)});
    }
  }
  std::vector<std::string> columns = kFixed;
  columns.insert(columns.end(), extra.begin(), extra.end());
  std::string out = "result,series,repeat,window";
  for (const auto& c : columns) out += "," + csv_field(c);
  out += "\r\n";
  for (const auto& [result, s] : series) {
    for (size_t i = 0; i < s.windows->size(); ++i) {
      const json& w = (*s.windows)[i];
      out += csv_field(result) + "," + csv_field(s.path) + "," +
             (s.repeat ? std::to_string(*s.repeat + 1) : "") + "," + std::to_string(i + 1);
      // Each column's value by a walk over the window's keys.
      std::map<std::string, const json*> cells;
      if (w.is_object())
        for (const auto& item : w.items()) cells[item.key()] = &item.value();
      for (const auto& c : columns) {
        auto it = cells.find(c);
        out += "," + (it != cells.end() ? csv_field(report::exact(*it->second)) : "");
      }
      out += "\r\n";
    }
  }
  return out;
}

}  // namespace rig

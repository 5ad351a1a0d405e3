#include "rig/report/diff_report.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "report/diff_fields.hpp"
#include "report/json_common.hpp"
#include "report/schema_fields.hpp"
#include "report/text_common.hpp"
#include "rig/units.hpp"

namespace rig {
namespace {

using report::json;
using namespace report;

struct Figure {
  double value = 0;
  bool has_value = false;
  std::optional<double> low, high;
  std::string range_kind;
};

// An element's name within its array: its unique "size" or "depth".
std::optional<std::string> element_key(const json& element, std::string_view key) {
  for (const auto& item : element.items()) {
    if (item.key() != key) continue;
    const json& v = item.value();
    if (v.is_string()) return v.get<std::string>();
    if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  }
  return std::nullopt;
}

// A summary's figures are numbers, or null when not measured; anything else
// ("NaN" as a string) is recorded in `bad` rather than read as no figure.
void check_summary(const json& node, const std::string& path, std::vector<std::string>& bad) {
  for (const auto& [k, v] : node.items())
    if (!v.is_number() && !v.is_null() && !v.is_object() && !v.is_array())
      bad.push_back(path + "." + k + " is " + v.dump());
}

void collect(const json& node, const std::string& path, std::map<std::string, Figure>& out,
             std::vector<std::string>& bad) {
  if (is_summary(node)) {
    check_summary(node, path, bad);
    // Read through the summary's table of keys (json_walkers.hpp).
    const SummaryRange range = summary_range(node);
    Figure f;
    if (range.median) {
      f.value = *range.median;
      f.has_value = true;
    }
    f.low = range.low;
    f.high = range.high;
    f.range_kind = range.kind;
    out[path] = f;
    return;
  }
  if (node.is_object()) {
    for (const auto& [k, v] : node.items()) collect(v, path.empty() ? k : path + "." + k, out, bad);
    return;
  }
  if (node.is_array()) {
    for (const char* key : {"size", "depth"}) {
      std::set<std::string> seen;
      bool unique = !node.empty();
      for (const auto& e : node) {
        auto name = e.is_object() ? element_key(e, key) : std::nullopt;
        if (!name || !seen.insert(*name).second) {
          unique = false;
          break;
        }
      }
      if (!unique) continue;
      for (const auto& e : node) collect(e, path + "[" + *element_key(e, key) + "]", out, bad);
      return;
    }
    return;
  }
  // JSON has no NaN or infinity: written as a string, it is a figure gone
  // wrong, not text.
  if (node.is_string()) {
    std::string t = node.get<std::string>();
    std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return std::tolower(c); });
    if (!t.empty() && (t[0] == '-' || t[0] == '+')) t.erase(0, 1);
    if (t == "nan" || t == "inf" || t == "infinity") bad.push_back(path + " is " + node.dump());
    return;
  }
  if (node.is_number()) {
    Figure f;
    const double v = node.get<double>();
    if (std::isfinite(v)) {
      f.value = v;
      f.has_value = true;
    }
    out[path] = f;
  }
}

// The figures of a result; invalid_argument naming the first value that is
// not a number where a summary's number belongs.
Result<std::map<std::string, Figure>> figures_of(const json& doc, const std::string& label) {
  static const std::set<std::string> skipped = {"schema_version", "tool",    "kind",  "settings",
                                                "environment",    "verdict", "notes", "model"};
  std::map<std::string, Figure> out;
  std::vector<std::string> bad;
  for (const auto& [k, v] : doc.items())
    if (!skipped.count(k)) collect(v, k, out, bad);
  if (!bad.empty())
    return fail(ErrorCode::invalid_argument,
                label + ": " + bad.front() + " where a number belongs (null when not measured)" +
                    (bad.size() > 1 ? ", and " + std::to_string(bad.size() - 1) + " more" : ""));
  return out;
}

void flatten_env(const json& node, const std::string& path,
                 std::map<std::string, std::string>& out) {
  if (node.is_object()) {
    for (const auto& [k, v] : node.items()) {
      if (k == "load_average") continue;
      flatten_env(v, path.empty() ? k : path + "." + k, out);
    }
  } else if (node.is_array()) {
    std::set<std::string> items;
    for (const auto& e : node) items.insert(e.is_string() ? e.get<std::string>() : e.dump());
    std::string joined;
    for (const auto& i : items) joined += (joined.empty() ? "" : "; ") + i;
    out[path] = joined;
  } else if (node.is_string()) {
    out[path] = node.get<std::string>();
  } else if (!node.is_null()) {
    out[path] = node.dump();
  }
}

std::string model_identity(const DocHeader& h) {
  if (!h.model_sha256.empty()) return h.model_sha256;
  if (!h.model_name.empty()) return "name " + h.model_name;
  return {};
}

std::string figure_text(std::optional<double> v) {
  if (!v) return "n/a";
  const double a = std::fabs(*v);
  return format_fixed(*v, a >= 1000 ? 1 : a >= 1 ? 3 : 6);
}

}  // namespace

std::string_view to_string(Noise n) {
  switch (n) {
    case Noise::outside:
      return "outside";
    case Noise::within:
      return "within";
    case Noise::unknown:
      return "unknown";
  }
  return "?";
}

Result<DiffResult> diff_documents(const DiffSide& a, const DiffSide& b) {
  auto da = read_document(a.document, a.label, "", "diff");
  if (!da) return tl::unexpected(da.error());
  auto db = read_document(b.document, b.label, "", "diff");
  if (!db) return tl::unexpected(db.error());
  const json& ja = da->first;
  const json& jb = db->first;
  DiffResult r;
  r.a.label = a.label;
  r.b.label = b.label;
  const DocHeader ha = read_header(ja), hb = read_header(jb);
  const std::string ta = ha.tool, tb = hb.tool;
  if (ta != tb)
    return fail(ErrorCode::invalid_argument, a.label + " is a '" + ta + "' result and " + b.label +
                                                 " a '" + tb +
                                                 "' one: diff compares two results of one tool");
  // One tool, two kinds of result (rig sweep: the depth sweep, or kind "rate"
  // for the rate search) have no figures in common.
  if (ha.kind != hb.kind)
    return fail(ErrorCode::invalid_argument,
                a.label + " is a '" + ta + "' result of kind '" + ha.kind + "' and " + b.label +
                    " one of kind '" + hb.kind + "': diff compares two results of one kind");
  r.tool = ta;
  r.model_a = model_identity(ha);
  r.model_b = model_identity(hb);
  if (r.model_a != r.model_b)
    r.notes.push_back("the two runs measured different models (" +
                      (r.model_a.empty() ? std::string("unknown") : r.model_a.substr(0, 16)) +
                      " vs " +
                      (r.model_b.empty() ? std::string("unknown") : r.model_b.substr(0, 16)) + ")");

  const auto figures_a = figures_of(ja, a.label);
  if (!figures_a) return tl::unexpected(figures_a.error());
  const auto figures_b = figures_of(jb, b.label);
  if (!figures_b) return tl::unexpected(figures_b.error());
  const auto& fa = *figures_a;
  const auto& fb = *figures_b;
  int only_a = 0, only_b = 0;
  for (const auto& [path, x] : fa) {
    auto it = fb.find(path);
    if (it == fb.end()) {
      ++only_a;
      continue;
    }
    const Figure& y = it->second;
    FigureChange c;
    c.path = path;
    if (x.has_value) c.a = x.value;
    if (y.has_value) c.b = y.value;
    if (c.a && c.b && *c.a != 0) c.change = (*c.b - *c.a) / std::fabs(*c.a);
    if (c.a && c.b && *c.a == *c.b) c.change = 0.0;
    if (x.low && y.low) {
      c.a_low = x.low;
      c.a_high = x.high;
      c.b_low = y.low;
      c.b_high = y.high;
      c.range_kind = x.range_kind == y.range_kind ? x.range_kind : "min..max";
      if (x.range_kind != y.range_kind) {
        // One side has a confidence interval, the other not: compare like with like.
        c.range_kind = x.range_kind + " vs " + y.range_kind;
      }
      c.noise = (*x.high < *y.low || *y.high < *x.low) ? Noise::outside : Noise::within;
    }
    if (c.noise == Noise::outside) ++r.outside;
    r.figures.push_back(std::move(c));
  }
  for (const auto& [path, y] : fb)
    if (!fa.count(path)) ++only_b;
  if (only_a) r.notes.push_back(std::to_string(only_a) + " figures only in " + a.label);
  if (only_b) r.notes.push_back(std::to_string(only_b) + " figures only in " + b.label);

  std::map<std::string, std::string> ea, eb;
  if (ha.environment) flatten_env(*ha.environment, "", ea);
  if (hb.environment) flatten_env(*hb.environment, "", eb);
  std::set<std::string> keys;
  for (const auto& [k, v] : ea) keys.insert(k);
  for (const auto& [k, v] : eb) keys.insert(k);
  for (const auto& k : keys) {
    auto ia = ea.find(k), ib = eb.find(k);
    EnvironmentChange c;
    c.key = k;
    if (ia != ea.end()) c.a = ia->second;
    if (ib != eb.end()) c.b = ib->second;
    if (c.a != c.b) r.environment.push_back(std::move(c));
  }
  if (ha.schema_version != hb.schema_version)
    r.notes.push_back(
        "the documents are of different schema versions: a figure renamed between "
        "them shows as only in one");
  return r;
}

std::string format_diff_text(const DiffResult& r) {
  std::ostringstream out;
  out << "rig diff: " << r.tool << ", A = " << r.a.label << ", B = " << r.b.label << "\n";
  out << "a change is outside the noise when the two runs' ranges do not overlap (no interleaved "
         "pairs)\n\n";
  size_t unchanged = 0;
  out << line("%-44s %14s %14s %9s  %s\n", "figure", "A", "B", "change", "noise");
  for (const auto& f : r.figures) {
    if (f.change && *f.change == 0 && f.noise != Noise::outside) {
      ++unchanged;
      continue;
    }
    std::string noise;
    if (f.noise == Noise::unknown)
      noise = "no range: not judged";
    else
      noise = std::string(f.noise == Noise::outside ? "OUTSIDE" : "within") + " (" + f.range_kind +
              " " + figure_text(f.a_low) + ".." + figure_text(f.a_high) + " vs " +
              figure_text(f.b_low) + ".." + figure_text(f.b_high) + ")";
    const std::string change =
        f.change ? (*f.change >= 0 ? "+" : "") + format_fixed(*f.change * 100, 1) + "%" : "n/a";
    out << line("%-44s %14s %14s %9s  ", f.path.c_str(), figure_text(f.a).c_str(),
                figure_text(f.b).c_str(), change.c_str())
        << noise << "\n";
  }
  if (unchanged) out << "(" << unchanged << " figures unchanged)\n";
  out << "\n"
      << r.outside << " figure" << (r.outside == 1 ? "" : "s") << " changed outside the noise\n";
  if (r.environment.empty()) {
    out << "environments: the same (load average aside)\n";
  } else {
    out << "environments differ:\n";
    for (const auto& e : r.environment)
      out << "  " << e.key << ": " << (e.a ? *e.a : "(absent)") << "  ->  "
          << (e.b ? *e.b : "(absent)") << "\n";
  }
  std::string notes;
  append_notes(notes, r.notes);
  out << notes;
  return out.str();
}

std::string diff_to_json(const DiffResult& r) {
  return write_document("rig diff", r, diff_fields<JsonWriter>);
}

}  // namespace rig

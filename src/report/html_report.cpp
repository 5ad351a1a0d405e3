// rig report's page. One function per kind of result (kKinds below) writes
// its dedicated tables and plots; everything else (the verdict and confound
// summary, the three quantities side by side, every figure, settings and
// environment) is generic over the document's JSON, so a new kind is one
// function and one row of kKinds, and an unknown kind still shows every
// figure (and its per-window series, if it has any).
// Over 600 lines: one function per kind in one file, until each scenario owns
// its section (issue 29 registers a section per scenario, beside it).
#include "rig/report/html_report.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "report/gnuplot.hpp"
#include "report/result_doc.hpp"
#include "report/text_common.hpp"
#include "rig/units.hpp"
#include "rig/version.hpp"

namespace rig {
namespace {

using report::json;
using report::number_at;
using report::ResultDoc;
using report::string_at;
using Opt = std::optional<double>;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string esc(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        // Control characters other than tab and newline are not allowed in HTML text.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n')
          out += "\xEF\xBF\xBD";
        else
          out += c;
    }
  }
  return out;
}

// A string for a gnuplot double-quoted literal.
std::string gp_quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) >= 0x20) out += c;
  }
  return out + "\"";
}

std::string num(Opt v, const char* unit = "") {
  if (!v || !std::isfinite(*v)) return "n/a";
  if (std::string_view(unit) == "B") return format_bytes(*v);
  std::string s = report::line("%.4g", *v);
  if (*unit) s += std::string(" ") + unit;
  return s;
}

// ---------------------------------------------------------------------------
// Plots

struct DataBlock {
  std::string name;                       // $name in the script
  std::vector<std::vector<double>> rows;  // NaN: a missing value
};

struct PlotSpec {
  std::string title;
  std::string xlabel, ylabel, y2label;  // with units
  std::vector<DataBlock> data;
  std::string setup;  // extra "set ..." lines
  std::string plot;   // the plot command's arguments
};

class Plotter {
 public:
  explicit Plotter(const HtmlReportSettings& s) : settings_(s) {
    program_ = report::find_program(s.gnuplot);
    if (program_.empty())
      unavailable_ = s.gnuplot.find('/') != std::string::npos
                         ? "gnuplot not found at " + s.gnuplot + " (--gnuplot)"
                         : "gnuplot is not installed (Debian package gnuplot-nox)";
  }

  // A <figure> with the SVG, or a paragraph saying why it was skipped.
  std::string draw(PlotSpec spec) {
    const std::string id = "p" + std::to_string(++count_);
    auto skip = [&](const std::string& why) {
      skipped_.push_back(spec.title + ": " + why);
      return "<p class=\"skipped\">Plot skipped (" + esc(spec.title) + "): " + esc(why) + "</p>\n";
    };
    if (!unavailable_.empty()) return skip(unavailable_);
    // noenhanced: titles hold key names ("temperature_c"), not markup.
    std::string script =
        "set terminal svg size 720,400 noenhanced font \"sans,11\" background \"#ffffff\"\n";
    script += "set output\nset encoding utf8\nset grid\nset key outside top center horizontal\n";
    script += "set title " + gp_quote(spec.title) + "\n";
    script +=
        "set xlabel " + gp_quote(spec.xlabel) + "\nset ylabel " + gp_quote(spec.ylabel) + "\n";
    if (!spec.y2label.empty())
      script += "set y2label " + gp_quote(spec.y2label) + "\nset y2tics\nset ytics nomirror\n";
    for (auto& block : spec.data) {
      thin(block.rows);
      script += "$" + block.name + " << EOD\n";
      for (const auto& row : block.rows) {
        for (size_t i = 0; i < row.size(); ++i)
          script += (i ? " " : "") +
                    (std::isfinite(row[i]) ? report::line("%.9g", row[i]) : std::string("NaN"));
        script += "\n";
      }
      script += "EOD\n";
    }
    script += spec.setup;
    script += "plot " + spec.plot + "\n";
    auto svg = report::run_gnuplot(program_, script, settings_.gnuplot_timeout);
    if (!svg) return skip(svg.error().message);
    const size_t start = svg->find("<svg");
    if (start == std::string::npos) return skip("gnuplot wrote no SVG");
    if (svg->find("<script") != std::string::npos) return skip("gnuplot's SVG holds a script");
    ++drawn_;
    return "<figure>\n" + prefix_ids(svg->substr(start), id) + "<figcaption>" + esc(spec.title) +
           "</figcaption>\n</figure>\n";
  }

  size_t drawn() const { return drawn_; }
  const std::vector<std::string>& skipped() const { return skipped_; }

 private:
  // Long series (a long soak's windows) are thinned to max_plot_points for
  // the plot, keeping the first and the last.
  void thin(std::vector<std::vector<double>>& rows) const {
    const size_t max = std::max<size_t>(2, settings_.max_plot_points);
    if (rows.size() <= max) return;
    std::vector<std::vector<double>> out;
    out.reserve(max);
    for (size_t i = 0; i < max; ++i) out.push_back(rows[i * (rows.size() - 1) / (max - 1)]);
    rows = std::move(out);
  }

  // Every SVG of the page defines the same ids (gnuplot_canvas, gpPt0, ...):
  // give each plot its own.
  static std::string prefix_ids(const std::string& svg, const std::string& p) {
    std::string out;
    out.reserve(svg.size() + 1024);
    for (size_t i = 0; i < svg.size();) {
      auto starts = [&](std::string_view s) { return svg.compare(i, s.size(), s) == 0; };
      if (starts("id='") || starts("id=\"")) {
        out.append(svg, i, 4);
        out += p + "-";
        i += 4;
      } else if (starts("href='#") || starts("href=\"#")) {
        out.append(svg, i, 7);
        out += p + "-";
        i += 7;
      } else if (starts("url(#")) {
        out += "url(#" + p + "-";
        i += 5;
      } else {
        out += svg[i++];
      }
    }
    return out;
  }

  const HtmlReportSettings& settings_;
  std::string program_, unavailable_;
  size_t count_ = 0, drawn_ = 0;
  std::vector<std::string> skipped_;
};

// ---------------------------------------------------------------------------
// The page

struct Context {
  std::string& out;
  Plotter& plots;
};

void table_head(std::string& out, std::initializer_list<std::string_view> columns,
                std::string_view cls = "") {
  out += cls.empty() ? "<table>\n<thead><tr>"
                     : "<table class=\"" + std::string(cls) + "\">\n<thead><tr>";
  for (auto c : columns) out += "<th>" + esc(c) + "</th>";
  out += "</tr></thead>\n<tbody>\n";
}
void table_row(std::string& out, const std::vector<std::string>& cells) {
  out += "<tr>";
  for (const auto& c : cells) out += "<td>" + esc(c) + "</td>";
  out += "</tr>\n";
}
void table_end(std::string& out) {
  out += "</tbody>\n</table>\n";
}

// A table of every leaf under `node` (a section), name / value / unit.
void figures_table(std::string& out, const json& node, const std::string& section) {
  json wrapper = json::object();
  wrapper[section] = node;
  table_head(out, {"figure", "value", "unit"}, "figures");
  for (const auto& f : report::flatten(wrapper))
    table_row(out, {f.name.empty() ? f.section : f.name, report::display(*f.value), f.unit});
  table_end(out);
}

std::vector<std::string> strings_in(const json* node) {
  std::vector<std::string> out;
  if (node && node->is_array())
    for (const auto& s : *node)
      if (s.is_string()) out.push_back(s.get<std::string>());
  return out;
}

// Every confound flag a document holds: warnings anywhere (environment,
// devices, verdict, a monitor), and the flags that qualify the figures.
std::vector<std::string> confounds(const ResultDoc& r) {
  // One line per message, naming every key that holds it.
  std::vector<std::pair<std::string, std::string>> found;
  auto add = [&](const std::string& s) {
    const size_t open = s.rfind(" (");
    const std::string message = s.substr(0, open), where = s.substr(open + 2, s.size() - open - 3);
    for (auto& [m, w] : found)
      if (m == message) {
        w += ", " + where;
        return;
      }
    found.emplace_back(message, where);
  };
  std::function<void(const json&, const std::string&)> walk = [&](const json& n,
                                                                  const std::string& where) {
    if (!n.is_object()) return;
    for (const auto& [k, v] : n.items()) {
      const std::string path = where.empty() ? k : where + "." + k;
      if ((k == "warnings" || k == "confounds" || k == "flags") && v.is_array()) {
        for (const auto& s : strings_in(&v)) add(s + " (" + path + ")");
      } else if ((k == "virtual_clock" || k == "mixed_clocks" || k == "limiting") &&
                 v.is_boolean() && v.get<bool>()) {
        add(k == "virtual_clock" ? "virtual clock: the figures are simulated (" + path + ")"
            : k == "mixed_clocks"
                ? "mixed clocks: the device's timings are simulated, the host's real (" + path + ")"
                : "the rig may be setting the rate (" + path + ")");
      } else if (v.is_object()) {
        walk(v, path);
      }
    }
  };
  walk(r.doc, "");
  std::vector<std::string> out;
  for (const auto& [m, w] : found) out.push_back(m + " (" + w + ")");
  return out;
}

std::string verdict_of(const ResultDoc& r) {
  std::string s = string_at(r.doc, "verdict.status");
  if (!s.empty()) return s;
  const json* v = report::at_path(r.doc, "verdict.valid");
  if (v && v->is_boolean()) return v->get<bool>() ? "VALID" : "INVALID";
  return "no verdict";
}

std::string device_of(const ResultDoc& r) {
  for (const char* p : {"environment.device.spec", "device.spec", "results.source.device_spec"}) {
    const std::string s = string_at(r.doc, p);
    if (!s.empty()) return s;
  }
  const std::string a = string_at(r.doc, "environment.device_a.spec");
  if (!a.empty()) return "A " + a + ", B " + string_at(r.doc, "environment.device_b.spec");
  return string_at(r.doc, "settings.effective.device");
}

std::string model_of(const ResultDoc& r) {
  std::string m = string_at(r.doc, "model.name");
  return m.empty() ? string_at(r.doc, "results.source.model") : m;
}

// The three quantities of one column of the side-by-side table.
struct Quantities {
  std::string label;
  Opt ttfo, load, allocate, first;
  std::string ttfo_note;
  Opt rate, spread, time_per_frame, device_rate;
  std::string rate_note;
  Opt in, out, link_in, link_out, mb_per_s, link_mb_per_s;
};

Opt first_of(const json& d, std::initializer_list<const char*> paths) {
  for (const char* p : paths)
    if (auto v = number_at(d, p)) return v;
  return std::nullopt;
}

void fill_bytes_rate(Quantities& q) {
  if (q.rate && *q.rate > 0 && !q.time_per_frame) q.time_per_frame = 1000.0 / *q.rate;
  if (!q.mb_per_s && q.rate && q.in && q.out) q.mb_per_s = (*q.in + *q.out) * *q.rate / 1e6;
  if (!q.link_mb_per_s && q.rate && q.link_in && q.link_out && *q.link_in + *q.link_out > 0)
    q.link_mb_per_s = (*q.link_in + *q.link_out) * *q.rate / 1e6;
}

std::vector<Quantities> quantities_of(const ResultDoc& r) {
  const json& d = r.doc;
  std::vector<Quantities> cols;
  Quantities q;
  q.label = r.path + " (" + r.tool + ")\n" + device_of(r);
  q.ttfo = first_of(d, {"ttfo.total_ms", "results.ttfo_ms"});
  q.load = number_at(d, "ttfo.load_ms");
  q.allocate = number_at(d, "ttfo.allocate_ms");
  q.first = number_at(d, "ttfo.first_inference_ms");
  if (r.tool == "rig bench") {
    q.rate = number_at(d, "steady.rate_per_s.median");
    q.spread = number_at(d, "steady.rate_per_s.spread");
    q.time_per_frame = number_at(d, "steady.time_per_frame_ms");
    q.rate_note = "median of the repeats";
    q.in = number_at(d, "bytes.payload_in_per_inference");
    q.out = number_at(d, "bytes.payload_out_per_inference");
    q.link_in = number_at(d, "bytes.link_in_per_inference");
    q.link_out = number_at(d, "bytes.link_out_per_inference");
    q.mb_per_s = number_at(d, "bytes.payload_mb_per_s");
    q.link_mb_per_s = number_at(d, "bytes.link_mb_per_s");
  } else if (r.tool == "rig loop") {
    q.rate = first_of(d, {"steady.rate_per_s", "steady.rate"});
    // v5: the interval's midpoint; before, frames completed / duration.
    q.device_rate = first_of(d, {"loop.rate_per_s", "loop.frames_per_second"});
    q.rate_note = "host-observed pipelined run";
    q.in = number_at(d, "steady.payload_in_per_inference");
    q.out = number_at(d, "steady.payload_out_per_inference");
    q.link_in = number_at(d, "steady.link_in_per_inference");
    q.link_out = number_at(d, "steady.link_out_per_inference");
  } else if (r.tool == "rig sweep" && string_at(d, "kind") == "rate") {
    q.ttfo = number_at(d, "results.ttfo_ms");
    q.rate = number_at(d, "results.best_rate_per_s");
    q.rate_note = "highest offered rate with p99 <= " +
                  report::display(report::at_path(d, "results.latency_bound_ms")
                                      ? *report::at_path(d, "results.latency_bound_ms")
                                      : json(nullptr)) +
                  " ms";
    q.in = number_at(d, "model.input_bytes");
    q.out = number_at(d, "model.output_bytes");
  } else if (r.tool == "rig sweep") {
    q.rate = number_at(d, "results.best_rate_per_s");
    q.rate_note = "best depth " + report::display(report::at_path(d, "results.best_depth")
                                                      ? *report::at_path(d, "results.best_depth")
                                                      : json(nullptr));
    q.in = number_at(d, "model.input_bytes");
    q.out = number_at(d, "model.output_bytes");
  } else if (r.tool == "rig predict") {
    q.ttfo = number_at(d, "results.prediction.ttfo_ms");
    q.load = number_at(d, "results.prediction.ttfo.load_ms");
    q.allocate = number_at(d, "results.prediction.ttfo.allocate_ms");
    q.first = number_at(d, "results.prediction.ttfo.first_inference_ms");
    q.ttfo_note = "predicted";
    q.rate = number_at(d, "results.prediction.rate_per_s");
    q.rate_note = "predicted on " + string_at(d, "settings.link.name");
    q.in = number_at(d, "results.source.bytes_in");
    q.out = number_at(d, "results.source.bytes_out");
    q.mb_per_s = number_at(d, "results.prediction.traffic_mb_per_s");
  } else if (r.tool == "rig ab") {
    for (const char side : {'a', 'b'}) {
      Quantities s;
      const std::string S(1, static_cast<char>(side - 'a' + 'A'));
      s.label = r.path + " (rig ab, side " + S + ")\n" +
                string_at(d, std::string("settings.") + side + ".spec");
      s.rate = number_at(d, std::string("results.") + side + "_rate_per_s.median");
      s.spread = number_at(d, std::string("results.") + side + "_rate_per_s.spread");
      s.rate_note = "median of the pairs";
      s.in = number_at(d, "model.input_bytes");
      s.out = number_at(d, "model.output_bytes");
      fill_bytes_rate(s);
      cols.push_back(s);
    }
    return cols;
  } else if (!q.ttfo) {
    // An unknown kind: a column only when it holds the usual keys.
    q.rate = first_of(d, {"steady.rate_per_s.median", "steady.rate_per_s", "results.rate_per_s"});
    if (!q.rate) return cols;
  }
  fill_bytes_rate(q);
  cols.push_back(q);
  return cols;
}

void summary_section(std::string& out, const std::vector<ResultDoc>& docs) {
  out += "<section id=\"summary\">\n<h2>Verdicts and confounds</h2>\n";
  table_head(out, {"#", "result", "kind", "device", "model", "verdict", "confound flags"});
  for (size_t i = 0; i < docs.size(); ++i) {
    const auto& r = docs[i];
    const auto flags = confounds(r);
    const std::string verdict = verdict_of(r);
    out += "<tr><td><a href=\"#result-" + std::to_string(i + 1) + "\">" + std::to_string(i + 1) +
           "</a></td><td class=\"long\">" + esc(r.path) + "</td><td>" + esc(r.tool) +
           "</td><td class=\"long\">" + esc(device_of(r)) + "</td><td>" + esc(model_of(r)) +
           "</td><td class=\"" +
           (verdict == "VALID"     ? "valid"
            : verdict == "INVALID" ? "invalid"
                                   : "none") +
           "\">" + esc(verdict) + "</td><td class=\"flags\">";
    if (flags.empty()) {
      out += "none";
    } else {
      out += "<ul>";
      for (const auto& f : flags) out += "<li>" + esc(f) + "</li>";
      out += "</ul>";
    }
    out += "</td></tr>\n";
  }
  table_end(out);

  std::vector<Quantities> cols;
  for (const auto& r : docs)
    for (auto& q : quantities_of(r)) cols.push_back(std::move(q));
  out += "<h2>The three quantities, side by side</h2>\n";
  if (cols.empty()) {
    out += "<p>None of these results measures them.</p>\n</section>\n";
    return;
  }
  out += "<table class=\"quantities\">\n<thead><tr><th>quantity</th>";
  for (const auto& c : cols) {
    std::string label = esc(c.label);
    const size_t nl = label.find('\n');
    if (nl != std::string::npos) label.replace(nl, 1, "<br>");
    out += "<th>" + label + "</th>";
  }
  out += "</tr></thead>\n<tbody>\n";
  auto row = [&](const std::string& name, const std::function<std::string(const Quantities&)>& f,
                 const char* cls = nullptr) {
    out += cls ? "<tr class=\"" + std::string(cls) + "\">" : std::string("<tr>");
    out += "<th>" + esc(name) + "</th>";
    for (const auto& c : cols) out += "<td>" + esc(f(c)) + "</td>";
    out += "</tr>\n";
  };
  row(
      "time to first output (TTFO)",
      [](const Quantities& q) {
        return num(q.ttfo, "ms") + (q.ttfo_note.empty() ? "" : " (" + q.ttfo_note + ")");
      },
      "lead");
  row("  load (read + parse + compile)", [](const Quantities& q) { return num(q.load, "ms"); });
  row("  allocate + bind", [](const Quantities& q) { return num(q.allocate, "ms"); });
  row("  first inference", [](const Quantities& q) { return num(q.first, "ms"); });
  row(
      "steady-state rate",
      [](const Quantities& q) {
        return num(q.rate, "/s") + (q.rate_note.empty() ? "" : " (" + q.rate_note + ")");
      },
      "lead");
  row("  spread", [](const Quantities& q) {
    return q.spread ? num(*q.spread * 100, "%") : std::string("n/a");
  });
  row("  time per frame", [](const Quantities& q) { return num(q.time_per_frame, "ms"); });
  row("  device's own rate (on-device loop)",
      [](const Quantities& q) { return num(q.device_rate, "/s"); });
  row(
      "bytes per inference in / out",
      [](const Quantities& q) { return num(q.in, "B") + " / " + num(q.out, "B"); }, "lead");
  row("  on the link in / out",
      [](const Quantities& q) { return num(q.link_in, "B") + " / " + num(q.link_out, "B"); });
  row("  payload traffic at that rate",
      [](const Quantities& q) { return num(q.mb_per_s, "MB/s"); });
  row("  link traffic at that rate",
      [](const Quantities& q) { return num(q.link_mb_per_s, "MB/s"); });
  table_end(out);
  out += "</section>\n";
}

// ---------------------------------------------------------------------------
// Kind sections

// The lone-frame latency distribution as a CDF through its quantiles (the
// document keeps the summary, not every sample).
void latency_cdf(Context& c, const json& d,
                 std::initializer_list<std::pair<const char*, const char*>> series,
                 const std::string& title) {
  PlotSpec p;
  p.title = title;
  p.xlabel = "latency (ms)";
  p.ylabel = "fraction of frames at or below";
  std::string plot;
  int n = 0;
  for (const auto& [path, name] : series) {
    const json* s = report::at_path(d, path);
    if (!s || !s->is_object() || number_at(*s, "count").value_or(0) <= 0) continue;
    DataBlock b{"cdf" + std::to_string(n), {}};
    for (auto [k, f] : {std::pair{"min", 0.0}, std::pair{"median", 0.5}, std::pair{"p90", 0.9},
                        std::pair{"p95", 0.95}, std::pair{"p99", 0.99}, std::pair{"max", 1.0}})
      if (auto v = number_at(*s, k)) b.rows.push_back({*v, f});
    if (b.rows.empty()) continue;
    plot += std::string(n ? ", " : "") + "$" + b.name + " using 1:2 with linespoints title " +
            gp_quote(name);
    p.data.push_back(std::move(b));
    ++n;
  }
  if (n == 0) return;
  p.setup = "set yrange [0:1.02]\n";
  p.plot = plot;
  c.out += c.plots.draw(std::move(p));
}

// Rate per window over time, one series per windows array; other numeric
// window keys (a monitor's temperature or load) on the second axis.
void window_plot(Context& c, const json& d, const std::string& title) {
  const auto series = report::window_series(d);
  if (series.empty()) return;
  PlotSpec p;
  p.title = title;
  p.xlabel = "time since the start of the measured span (s)";
  p.ylabel = "rate (inferences/s)";
  // Other numeric keys of the windows (a monitor's sensors), a few at most.
  std::set<std::string> extra;
  static const std::set<std::string> kFixed = {"start_s", "duration_s", "inferences", "rate_per_s"};
  for (const auto& s : series)
    for (const auto& w : *s.windows)
      if (w.is_object())
        for (const auto& [k, v] : w.items())
          if (v.is_number() && !kFixed.count(k) && extra.size() < 4) extra.insert(k);
  std::string plot;
  size_t n = 0;
  for (const auto& s : series) {
    DataBlock b{"w" + std::to_string(n), {}};
    for (const auto& w : *s.windows) {
      std::vector<double> row = {
          number_at(w, "start_s").value_or(kNaN) + number_at(w, "duration_s").value_or(0),
          number_at(w, "rate_per_s").value_or(kNaN)};
      for (const auto& k : extra) row.push_back(number_at(w, k).value_or(kNaN));
      b.rows.push_back(std::move(row));
    }
    const std::string label =
        series.size() > 1 && s.repeat ? "repeat " + std::to_string(*s.repeat + 1) : s.path;
    plot += std::string(n ? ", " : "") + "$" + b.name + " using 1:2 with linespoints title " +
            gp_quote(label + " rate");
    size_t col = 3;
    for (const auto& k : extra) {
      if (series.size() == 1 || n == 0)
        plot += ", $" + b.name + " using 1:" + std::to_string(col) +
                " axes x1y2 with lines dashtype 2 title " + gp_quote(k);
      ++col;
    }
    p.data.push_back(std::move(b));
    ++n;
  }
  if (!extra.empty()) {
    std::string units;
    for (const auto& k : extra) units += (units.empty() ? "" : ", ") + k;
    p.y2label = units;
  }
  p.plot = plot;
  c.out += c.plots.draw(std::move(p));
}

void bench_section(Context& c, const ResultDoc& r) {
  const json& d = r.doc;
  std::string& out = c.out;
  out += "<h3>Time to first output</h3>\n";
  table_head(out, {"phase", "time", "note"});
  table_row(out, {"total", num(number_at(d, "ttfo.total_ms"), "ms"), "load + allocate + first"});
  table_row(out, {"load", num(number_at(d, "ttfo.load_ms"), "ms"),
                  "read " + num(number_at(d, "ttfo.load_breakdown.read_ms"), "ms") + ", parse " +
                      num(number_at(d, "ttfo.load_breakdown.parse_ms"), "ms") + ", compile " +
                      num(number_at(d, "ttfo.load_breakdown.compile_ms"), "ms")});
  table_row(out, {"allocate + bind", num(number_at(d, "ttfo.allocate_ms"), "ms"), ""});
  table_row(
      out, {"first inference", num(number_at(d, "ttfo.first_inference_ms"), "ms"),
            "device compute " + num(number_at(d, "ttfo.first_inference_device.compute_ms"), "ms")});
  table_end(out);
  out += "<h3>Steady state</h3>\n";
  table_head(out, {"repeat", "rate", "inferences", "elapsed", "stable", "last 3 windows spread",
                   "warm-up"});
  const json* reps = report::at_path(d, "steady.repeats");
  if (reps && reps->is_array())
    for (size_t i = 0; i < reps->size(); ++i) {
      const json& rep = (*reps)[i];
      const json* stable = report::at_path(rep, "stable");
      table_row(out, {std::to_string(i + 1), num(number_at(rep, "rate_per_s"), "/s"),
                      num(number_at(rep, "inferences")), num(number_at(rep, "elapsed_s"), "s"),
                      stable ? report::display(*stable) : "n/a",
                      number_at(rep, "last_windows_spread")
                          ? num(*number_at(rep, "last_windows_spread") * 100, "%")
                          : "n/a",
                      num(number_at(rep, "warmup_s"), "s")});
    }
  table_end(out);
  window_plot(c, d, "Rate per window, every repeat");
  out += "<h3>Lone-frame latency</h3>\n";
  // The interval's confidence is the run's (--confidence), read from the
  // overall series; 95% where the document has none (version 5).
  const auto confidence = number_at(d, "latency.overall_ms.intervals.p95.confidence");
  table_head(out,
             {"series", "p50", "p90", "p95",
              "p95 interval (" + format_fixed((confidence ? *confidence : 0.95) * 100, 0) + "%)",
              "p99", "max", "samples"});
  for (auto [path, name] : {std::pair{"latency.overall_ms", "overall (client-observed)"},
                            std::pair{"latency.hardware_ms", "device compute"},
                            std::pair{"latency.transfer_in_ms", "transfer in"},
                            std::pair{"latency.transfer_out_ms", "transfer out"}}) {
    const json* s = report::at_path(d, path);
    if (!s) continue;
    const auto p95_lower = number_at(*s, "intervals.p95.lower");
    const auto p95_upper = number_at(*s, "intervals.p95.upper");
    // A version-5 document has no p95; an interval needs enough samples.
    const std::string p95_interval = p95_lower && p95_upper
                                         ? num(p95_lower, "ms") + " .. " + num(p95_upper, "ms")
                                     : number_at(*s, "p95") ? std::string("not enough samples")
                                                            : std::string("n/a");
    table_row(out, {name, num(number_at(*s, "median"), "ms"), num(number_at(*s, "p90"), "ms"),
                    num(number_at(*s, "p95"), "ms"), p95_interval, num(number_at(*s, "p99"), "ms"),
                    num(number_at(*s, "max"), "ms"), num(number_at(*s, "count"))});
  }
  table_end(out);
  latency_cdf(c, d,
              {{"latency.overall_ms", "overall"}, {"latency.hardware_ms", "device-side compute"}},
              "Lone-frame latency CDF (through min, p50, p90, p95, p99, max)");
}

void loop_section(Context& c, const ResultDoc& r) {
  const json& d = r.doc;
  table_head(c.out, {"figure", "value", "note"});
  table_row(c.out, {"device loop rate", num(number_at(d, "loop.frames_per_second"), "/s"),
                    num(number_at(d, "loop.frames_completed")) + " frames in " +
                        num(number_at(d, "loop.elapsed_s"), "s") + ", no per-frame transfers"});
  table_row(c.out,
            {"host-observed pipelined rate",
             num(report::number_at(d, "steady.rate_per_s") ? number_at(d, "steady.rate_per_s")
                                                           : number_at(d, "steady.rate"),
                 "/s"),
             "depth " + num(number_at(d, "steady.depth"))});
  table_row(c.out,
            {"transfer cost per frame", num(number_at(d, "transfer_cost.per_frame_ms"), "ms"),
             "share of the host frame time " +
                 (number_at(d, "transfer_cost.share_of_host_frame_time")
                      ? num(*number_at(d, "transfer_cost.share_of_host_frame_time") * 100, "%")
                      : std::string("n/a"))});
  table_end(c.out);
  PlotSpec p;
  const auto device = number_at(d, "loop.frames_per_second");
  const auto host = number_at(d, "steady.rate_per_s");
  if (device && host) {
    p.title = "Device loop rate beside the host-observed rate";
    p.xlabel = "";
    p.ylabel = "rate (frames/s)";
    p.data.push_back({"r", {{0, *device}, {1, *host}}});
    p.setup =
        "set style fill solid 0.6\nset boxwidth 0.5\nset xtics (\"device loop\" 0, \"host "
        "pipelined\" 1)\nset xrange [-0.75:1.75]\nset yrange [0:*]\n";
    p.plot = "$r using 1:2 with boxes notitle";
    c.out += c.plots.draw(std::move(p));
  }
}

void ladder_section(Context& c, const ResultDoc& r) {
  const json& d = r.doc;
  const json* rungs = report::at_path(d, "results.rungs");
  table_head(c.out, {"size", "bytes in + out", "MB/s", "lone p50", "compute", "link", "bound"});
  DataBlock pts{"rungs", {}};
  if (rungs && rungs->is_array())
    for (const auto& g : *rungs) {
      const double bytes =
          number_at(g, "bytes_in").value_or(kNaN) + number_at(g, "bytes_out").value_or(kNaN);
      // Version 5 measures each size out-heavy too; the plot and its fit are
      // the in-heavy rungs'.
      const bool out_heavy = string_at(g, "shape") == "out_heavy";
      table_row(c.out,
                {string_at(g, "size") + (out_heavy ? " out-heavy" : ""), num(bytes, "B"),
                 num(number_at(g, "mb_per_s"), "MB/s"), num(number_at(g, "lone_ms.median"), "ms"),
                 num(number_at(g, "compute_ms"), "ms"), num(number_at(g, "link_ms"), "ms"),
                 string_at(g, "bound")});
      if (!out_heavy) pts.rows.push_back({bytes, number_at(g, "mb_per_s").value_or(kNaN)});
    }
  table_end(c.out);
  table_head(c.out, {"fit", "fixed", "bandwidth", "r²", "points"});
  for (auto [path, name] : {std::pair{"results.pipelined_fit", "pipelined (time per frame)"},
                            std::pair{"results.lone_fit", "lone frames (link time)"}}) {
    const json* f = report::at_path(d, path);
    if (!f) continue;
    table_row(c.out, {name, num(number_at(*f, "fixed_ms"), "ms"),
                      num(number_at(*f, "bandwidth_mb_per_s"), "MB/s"),
                      num(number_at(*f, "r_squared")), num(number_at(*f, "points"))});
  }
  table_end(c.out);
  if (pts.rows.empty()) return;
  PlotSpec p;
  p.title = "Link ladder: MB/s against frame size, with the fitted link model";
  p.xlabel = "bytes per frame, in + out (B)";
  p.ylabel = "throughput (MB/s, 10^6 B/s)";
  p.setup = "set logscale x\nset yrange [0:*]\n";
  p.plot = "$rungs using 1:2 with points pointtype 7 pointsize 1.2 title \"measured rungs\"";
  const auto fixed = number_at(d, "results.pipelined_fit.fixed_ms");
  const auto bw = number_at(d, "results.pipelined_fit.bandwidth_bytes_per_s");
  if (fixed && bw && *bw > 0) {
    // time_ms = fixed_ms + bytes / bw  ->  MB/s = bytes / time / 1e6
    p.setup += report::line("fit_mbps(x) = x / (%.9g/1000.0 + x/%.9g) / 1e6\n", *fixed, *bw);
    p.setup += "set samples 200\n";
    p.plot += report::line(", fit_mbps(x) with lines title \"fit: %.4g ms fixed + %.4g MB/s\"",
                           *fixed, *bw / 1e6);
  }
  p.data.push_back(std::move(pts));
  c.out += c.plots.draw(std::move(p));
}

// rig sweep --rate (kind "rate"): the probes, and p99 from arrival against
// the offered rate with the bound marked.
void rate_sweep_section(Context& c, const ResultDoc& r) {
  const json& d = r.doc;
  const json* probes = report::at_path(d, "results.probes");
  table_head(c.out, {"offered rate", "achieved rate", "p99 from arrival", "p99 interval",
                     "late share", "keeps up", "meets the bound"});
  DataBlock meets{"meets", {}}, fails{"fails", {}}, ci{"ci", {}};
  if (probes && probes->is_array())
    for (const auto& g : *probes) {
      const auto rate = number_at(g, "offered_rate_per_s");
      const auto p99 = number_at(g, "p99_ms");
      const auto lo = number_at(g, "latency_from_arrival_ms.intervals.p99.lower");
      const auto hi = number_at(g, "latency_from_arrival_ms.intervals.p99.upper");
      const json* keeps = report::at_path(g, "keeps_up");
      const json* met = report::at_path(g, "meets");
      const bool ok = met && met->is_boolean() && met->get<bool>();
      table_row(c.out,
                {num(rate, "/s"), num(number_at(g, "achieved_rate_per_s"), "/s"), num(p99, "ms"),
                 lo && hi ? num(lo, "ms") + " .. " + num(hi, "ms") : "not enough samples",
                 number_at(g, "late_share") ? num(*number_at(g, "late_share") * 100, "%") : "n/a",
                 keeps ? report::display(*keeps) : "n/a", met ? report::display(*met) : "n/a"});
      if (!rate || !p99) continue;
      (ok ? meets : fails).rows.push_back({*rate, *p99});
      if (lo && hi) ci.rows.push_back({*rate, *p99, *lo, *hi});
    }
  table_end(c.out);
  const auto bound = number_at(d, "results.latency_bound_ms");
  table_head(c.out, {"figure", "value"});
  table_row(c.out, {"latency bound (p99 from arrival)", num(bound, "ms")});
  table_row(c.out,
            {"best rate meeting the bound", num(number_at(d, "results.best_rate_per_s"), "/s")});
  table_row(c.out,
            {"first failing rate", num(number_at(d, "results.first_failing_rate_per_s"), "/s")});
  table_row(c.out, {"search stopped", string_at(d, "results.search_end")});
  table_row(c.out, {"lone frame (median)", num(number_at(d, "results.lone_ms.median"), "ms")});
  table_end(c.out);
  if (meets.rows.empty() && fails.rows.empty()) return;
  PlotSpec p;
  p.title = "Rate search: p99 latency from arrival against the offered rate";
  p.xlabel = "offered rate (frames/s)";
  p.ylabel = "p99 latency from arrival (ms)";
  p.setup = "set logscale x\nset logscale y\nset offsets graph 0.05, graph 0.05, 0, 0\n";
  std::string plot;
  auto add = [&](const std::string& part) { plot += (plot.empty() ? "" : ", ") + part; };
  if (!ci.rows.empty())
    add("$ci using 1:2:3:4 with yerrorbars pointtype 0 linecolor rgb \"#7f7f7f\" "
        "title \"p99 interval\"");
  if (!meets.rows.empty())
    add("$meets using 1:2 with points pointtype 7 pointsize 1.3 linecolor rgb \"#2ca02c\" "
        "title \"meets the bound\"");
  if (!fails.rows.empty())
    add("$fails using 1:2 with points pointtype 5 pointsize 1.3 linecolor rgb \"#d62728\" "
        "title \"does not\"");
  if (bound)
    add(
        report::line("%.9g with lines dashtype 2 linewidth 2 linecolor rgb \"#1f77b4\" "
                     "title \"bound %.4g ms\"",
                     *bound, *bound));
  p.plot = plot;
  for (auto* b : {&ci, &meets, &fails})
    if (!b->rows.empty()) p.data.push_back(std::move(*b));
  c.out += c.plots.draw(std::move(p));
}

void sweep_section(Context& c, const ResultDoc& r) {
  const json& d = r.doc;
  if (string_at(d, "kind") == "rate") return rate_sweep_section(c, r);
  const json* points = report::at_path(d, "results.points");
  table_head(c.out,
             {"depth", "median rate", "min", "max", "fraction of best", "stable", "refined"});
  DataBlock pts{"pts", {}};
  if (points && points->is_array())
    for (const auto& g : *points) {
      const json* stable = report::at_path(g, "stable");
      const json* refined = report::at_path(g, "refined");
      table_row(
          c.out,
          {num(number_at(g, "depth")), num(number_at(g, "rate_per_s.median"), "/s"),
           num(number_at(g, "rate_per_s.min"), "/s"), num(number_at(g, "rate_per_s.max"), "/s"),
           number_at(g, "fraction_of_best") ? num(*number_at(g, "fraction_of_best") * 100, "%")
                                            : "n/a",
           stable ? report::display(*stable) : "n/a", refined ? report::display(*refined) : "n/a"});
      pts.rows.push_back({number_at(g, "depth").value_or(kNaN),
                          number_at(g, "rate_per_s.median").value_or(kNaN),
                          number_at(g, "rate_per_s.min").value_or(kNaN),
                          number_at(g, "rate_per_s.max").value_or(kNaN)});
    }
  table_end(c.out);
  const auto knee = number_at(d, "results.knee");
  const auto queue = number_at(d, "results.queue_depth");
  table_head(c.out, {"figure", "value"});
  table_row(c.out, {"knee", num(knee)});
  table_row(c.out, {"knee against the queue depth", string_at(d, "results.knee_vs_queue")});
  table_row(c.out, {"device queue depth", num(queue)});
  table_row(c.out, {"single shot", num(number_at(d, "results.single_shot_ms"), "ms")});
  table_row(c.out, {"pipelined time per frame", num(number_at(d, "results.pipelined_ms"), "ms")});
  table_row(c.out,
            {"round trip hidden by pipelining", num(number_at(d, "results.round_trip_ms"), "ms")});
  table_end(c.out);
  if (pts.rows.empty()) return;
  PlotSpec p;
  p.title = "Depth sweep: rate against requests in flight";
  p.xlabel = "depth (requests in flight)";
  p.ylabel = "rate (inferences/s)";
  p.setup = "set yrange [0:*]\nset offsets 0.5, 0.5, 0, 0\n";
  p.plot = "$pts using 1:2:3:4 with yerrorlines title \"median rate (bars: min..max)\"";
  if (knee)
    p.setup += report::line(
        "set arrow from %.9g, graph 0 to %.9g, graph 1 nohead dashtype 2 linewidth 2 linecolor "
        "rgb \"#d62728\"\nset label \"knee %.0f\" at %.9g, graph 0.95 offset 0.5,0 textcolor rgb "
        "\"#d62728\"\n",
        *knee, *knee, *knee, *knee);
  if (queue)
    p.setup += report::line(
        "set arrow from %.9g, graph 0 to %.9g, graph 1 nohead dashtype 3 linewidth 2 linecolor "
        "rgb \"#2ca02c\"\nset label \"queue depth %.0f\" at %.9g, graph 0.85 offset 0.5,0 "
        "textcolor rgb \"#2ca02c\"\n",
        *queue, *queue, *queue, *queue);
  p.data.push_back(std::move(pts));
  c.out += c.plots.draw(std::move(p));
}

void ab_section(Context& c, const ResultDoc& r) {
  const json& d = r.doc;
  table_head(c.out, {"pair", "A rate", "B rate", "B / A"});
  DataBlock pts{"pairs", {}};
  const json* pairs = report::at_path(d, "results.pairs");
  if (pairs && pairs->is_array())
    for (const auto& g : *pairs) {
      table_row(c.out, {num(number_at(g, "pair")), num(number_at(g, "a_rate_per_s"), "/s"),
                        num(number_at(g, "b_rate_per_s"), "/s"), num(number_at(g, "ratio"))});
      pts.rows.push_back({number_at(g, "pair").value_or(kNaN), number_at(g, "ratio").value_or(kNaN),
                          number_at(g, "a_rate_per_s").value_or(kNaN),
                          number_at(g, "b_rate_per_s").value_or(kNaN)});
    }
  table_end(c.out);
  const auto noise = number_at(d, "results.noise");
  const auto diff = number_at(d, "results.difference");
  c.out += "<p class=\"verdict-text\">" + esc(string_at(d, "results.verdict_text")) + "</p>\n";
  table_head(c.out, {"figure", "value"});
  table_row(c.out, {"difference (median B/A - 1)", diff ? num(*diff * 100, "%") : "n/a"});
  table_row(c.out, {"noise (the runs' own spread)", noise ? num(*noise * 100, "%") : "n/a"});
  table_row(c.out, {"verdict", string_at(d, "results.verdict")});
  table_end(c.out);
  if (pts.rows.empty()) return;
  PlotSpec p;
  p.title = "A/B pairs: B / A per pair, with the noise band";
  p.xlabel = "pair";
  p.ylabel = "B / A (ratio)";
  p.y2label = "rate (inferences/s)";
  const double n = noise.value_or(0);
  p.setup =
      "set xtics 1\nset offsets 0.5, 0.5, 0, 0\nset style fill transparent solid 0.15 noborder\n";
  p.plot = report::line(
               "(1-%.9g) with filledcurves y1=%.9g linecolor rgb \"#1f77b4\" title "
               "\"noise band 1 ± %.3g\", ",
               n, 1 + n, n) +
           "1 with lines dashtype 2 linecolor rgb \"#1f77b4\" notitle, "
           "$pairs using 1:2 with linespoints pointtype 7 title \"B / A\", "
           "$pairs using 1:3 axes x1y2 with points pointtype 4 title \"A rate\", "
           "$pairs using 1:4 axes x1y2 with points pointtype 6 title \"B rate\"";
  p.data.push_back(std::move(pts));
  c.out += c.plots.draw(std::move(p));
}

void predict_section(Context& c, const ResultDoc& r) {
  const json& d = r.doc;
  table_head(c.out, {"figure", "measured", "predicted"});
  table_row(c.out, {"rate", num(number_at(d, "results.source.measured_rate_per_s"), "/s"),
                    num(number_at(d, "results.prediction.rate_per_s"), "/s")});
  table_row(c.out, {"lone frame", num(number_at(d, "results.source.measured_lone_ms"), "ms"),
                    num(number_at(d, "results.prediction.lone_ms"), "ms")});
  table_row(c.out, {"bound", "", string_at(d, "results.prediction.bound")});
  table_row(c.out, {"bus utilization", "",
                    number_at(d, "results.prediction.bus_utilization")
                        ? num(*number_at(d, "results.prediction.bus_utilization") * 100, "%")
                        : "n/a"});
  table_end(c.out);
}

// Any kind without its own function: its per-window series, if any (a soak's
// drift over time, a monitor's series on the second axis).
void generic_section(Context& c, const ResultDoc& r) {
  c.out += "<p>No dedicated section for '" + esc(r.tool) +
           "' in this rig: every figure of the document is shown below.</p>\n";
  window_plot(c, r.doc, "Rate per window over time");
}

// rig profile: the top layers by time with their share (the document keeps
// every layer; the page lists the first ten).
void profile_section(Context& c, const ResultDoc& r) {
  const json& d = r.doc;
  c.out += "<p>" + esc(string_at(d, "profile.profiler")) + ", " +
           num(number_at(d, "profile.runs")) +
           " runs: " + num(number_at(d, "profile.layers_per_run_ms"), "ms") +
           " per run in the layers, " + num(number_at(d, "profile.wall_per_run_ms"), "ms") +
           " elapsed</p>\n";
  table_head(c.out, {"#", "layer", "op", "ms/run", "share"});
  const json* layers = report::at_path(d, "profile.layers");
  if (layers && layers->is_array())
    for (size_t i = 0; i < layers->size() && i < 10; ++i) {
      const json& l = (*layers)[i];
      table_row(c.out, {std::to_string(i + 1), string_at(l, "name"), string_at(l, "op_type"),
                        num(number_at(l, "per_run_ms"), "ms"),
                        number_at(l, "share") ? num(*number_at(l, "share") * 100, "%")
                                              : std::string("n/a")});
    }
  table_end(c.out);
}

struct Kind {
  std::string_view tool;
  void (*section)(Context&, const ResultDoc&);
};
constexpr Kind kKinds[] = {
    {"rig bench", bench_section},     {"rig loop", loop_section}, {"rig ladder", ladder_section},
    {"rig sweep", sweep_section},     {"rig ab", ab_section},     {"rig predict", predict_section},
    {"rig profile", profile_section},
};

void result_section(Context& c, const ResultDoc& r, size_t index) {
  std::string& out = c.out;
  const std::string id = "result-" + std::to_string(index);
  out += "<section class=\"result\" id=\"" + id + "\">\n<h2>" + std::to_string(index) + ". " +
         esc(r.tool) + ": " + esc(model_of(r)) + " on " + esc(device_of(r)) + "</h2>\n";
  out += "<p class=\"source\">" + esc(r.path) + ", schema version " + std::to_string(r.version) +
         "</p>\n";
  const std::string verdict = verdict_of(r);
  out += "<p class=\"verdict " +
         std::string(verdict == "VALID"     ? "valid"
                     : verdict == "INVALID" ? "invalid"
                                            : "none") +
         "\">verdict: " + esc(verdict) + "</p>\n";
  const auto reasons = strings_in(report::at_path(r.doc, "verdict.reasons"));
  const auto notes = strings_in(report::at_path(r.doc, "notes"));
  for (const auto& [title, items] : {std::pair{"reasons", reasons}, std::pair{"notes", notes}}) {
    if (items.empty()) continue;
    out += "<h3>" + std::string(title) + "</h3>\n<ul>";
    for (const auto& s : items) out += "<li>" + esc(s) + "</li>";
    out += "</ul>\n";
  }
  bool known = false;
  for (const auto& k : kKinds)
    if (k.tool == r.tool) {
      k.section(c, r);
      known = true;
    }
  if (!known) generic_section(c, r);

  out += "<h3>Every figure</h3>\n";
  // Top-level scalars (schema_version, tool, and any a later tool adds).
  table_head(out, {"figure", "value", "unit"}, "figures");
  for (const auto& f : report::flatten(r.doc))
    if (f.section == "header") table_row(out, {f.name, report::display(*f.value), f.unit});
  table_end(out);
  for (const auto& [k, v] : r.doc.items()) {
    if (k == "settings" || k == "environment" || !(v.is_object() || v.is_array())) continue;
    out += "<details class=\"figures\" open><summary>" + esc(k) + "</summary>\n";
    figures_table(out, v, k);
    out += "</details>\n";
  }
  for (const char* folded : {"settings", "environment"}) {
    const json* v = report::at_path(r.doc, folded);
    if (!v) continue;
    out += std::string("<details class=\"folded\"><summary>") +
           (std::string_view(folded) == "settings" ? "Settings (requested and effective)"
                                                   : "Environment") +
           "</summary>\n";
    figures_table(out, *v, folded);
    out += "</details>\n";
  }
  out += "</section>\n";
}

constexpr const char* kStyle = R"(
body { font-family: sans-serif; margin: 1.5em auto; max-width: 78em; color: #222; background: #fff; padding: 0 1em; }
h1 { font-size: 1.6em; } h2 { font-size: 1.3em; border-bottom: 1px solid #ccc; padding-bottom: .2em; }
h3 { font-size: 1.05em; margin-top: 1.2em; }
table { border-collapse: collapse; margin: .5em 0 1em; font-size: .9em; }
th, td { border: 1px solid #ccc; padding: .2em .5em; text-align: left; vertical-align: top; }
td.long, table.figures td { overflow-wrap: anywhere; }
td.flags { min-width: 24em; }
thead th { background: #f0f0f0; }
table.quantities thead th { word-break: break-all; min-width: 12em; }
table.quantities tr.lead th, table.quantities tr.lead td { font-weight: bold; background: #f7f7ff; }
table.figures td:nth-child(2) { font-family: monospace; }
.valid { color: #1a7f37; font-weight: bold; } .invalid { color: #c62828; font-weight: bold; }
p.verdict { font-size: 1.1em; } p.skipped { color: #8a5a00; background: #fff7e0; padding: .3em .6em; }
figure { margin: 1em 0; } figure svg { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { font-size: .85em; color: #555; }
details { margin: .4em 0; } summary { cursor: pointer; font-weight: bold; }
ul { margin: .2em 0; padding-left: 1.2em; }
)";

}  // namespace

Result<HtmlReport> html_report(const std::vector<ResultFile>& files,
                               const HtmlReportSettings& settings) {
  if (files.empty()) return fail(ErrorCode::invalid_argument, "no result files given");
  std::vector<ResultDoc> docs;
  for (const auto& f : files) {
    auto doc = report::parse_result(f);
    if (!doc) return tl::unexpected(doc.error());
    docs.push_back(std::move(*doc));
  }
  Plotter plots(settings);
  std::string body;
  Context c{body, plots};
  for (size_t i = 0; i < docs.size(); ++i) result_section(c, docs[i], i + 1);

  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += "<meta name=\"generator\" content=\"rig " + esc(kVersion) + "\">\n";
  out += "<title>" + esc(settings.title) + "</title>\n<style>" + kStyle +
         "</style>\n</head>\n<body>\n";
  out += "<h1>" + esc(settings.title) + "</h1>\n<p>" + std::to_string(docs.size()) + " result" +
         (docs.size() == 1 ? "" : "s") + ", written by rig " + esc(kVersion) +
         ". Units: ms milliseconds, s seconds, /s per second, B bytes, MB = 10^6 bytes.</p>\n";
  summary_section(out, docs);
  if (!plots.skipped().empty()) {
    out += "<section id=\"skipped-plots\">\n<h2>Plots skipped</h2>\n<ul>";
    for (const auto& s : plots.skipped()) out += "<li>" + esc(s) + "</li>";
    out += "</ul>\n<p>Every table is complete without them.</p>\n</section>\n";
  }
  out += body;
  out += "</body>\n</html>\n";
  HtmlReport report;
  report.html = std::move(out);
  report.plots = plots.drawn();
  report.skipped = plots.skipped();
  return report;
}

}  // namespace rig

// rig report's page. Each document is read into its typed result through its
// tool's table of keys (the *_fields.hpp beside this file: the same tables
// the writers use), never by a path of keys; one function per kind of result
// (kKinds below) writes its dedicated tables and plots from it. The verdict
// and confound summary and the three quantities side by side come from the
// typed results; every figure, the settings and the environment are a
// generic walk over the document's tree, so an unknown kind still shows
// every figure (and its per-window series, if it has any).
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
#include <variant>

#include "report/ab_fields.hpp"
#include "report/bench_fields.hpp"
#include "report/gnuplot.hpp"
#include "report/ladder_fields.hpp"
#include "report/loop_fields.hpp"
#include "report/predict_fields.hpp"
#include "report/profile_fields.hpp"
#include "report/result_doc.hpp"
#include "report/sweep_fields.hpp"
#include "report/text_common.hpp"
#include "rig/units.hpp"
#include "rig/version.hpp"

namespace rig {
namespace {

using report::json;
using report::ResultDoc;
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

// A document read into its typed result through its tool's table of keys
// (leniently: a hand-trimmed or older document is shown, not refused), and
// the keys every document shares.
struct Typed {
  const ResultDoc* doc = nullptr;
  report::CommonDoc common;
  std::variant<std::monostate, BenchResult, LoopResult, LadderResult, SweepResult, RateSweepResult,
               AbResult, report::PredictDoc, ProfileResult>
      result;
};

Typed read_typed(const ResultDoc& r) {
  using report::read_leniently;
  Typed t;
  t.doc = &r;
  t.common = read_leniently<report::CommonDoc>(r.doc, r.version,
                                               report::common_fields<report::JsonReader>);
  const int v = r.version;
  if (r.tool == "rig bench")
    t.result = read_leniently<BenchResult>(r.doc, v, report::bench_fields<report::JsonReader>);
  else if (r.tool == "rig loop")
    t.result = read_leniently<LoopResult>(r.doc, v, report::loop_fields<report::JsonReader>);
  else if (r.tool == "rig ladder")
    t.result = read_leniently<LadderResult>(r.doc, v, report::ladder_fields<report::JsonReader>);
  else if (r.tool == "rig sweep" && t.common.kind == "rate")
    t.result =
        read_leniently<RateSweepResult>(r.doc, v, report::rate_sweep_fields<report::JsonReader>);
  else if (r.tool == "rig sweep")
    t.result = read_leniently<SweepResult>(r.doc, v, report::sweep_fields<report::JsonReader>);
  else if (r.tool == "rig ab")
    t.result = read_leniently<AbResult>(r.doc, v, report::ab_fields<report::JsonReader>);
  else if (r.tool == "rig predict")
    t.result =
        read_leniently<report::PredictDoc>(r.doc, v, report::predict_fields<report::JsonReader>);
  else if (r.tool == "rig profile")
    t.result = read_leniently<ProfileResult>(r.doc, v, report::profile_fields<report::JsonReader>);
  return t;
}

template <class T>
const T* as(const Typed& t) {
  return std::get_if<T>(&t.result);
}

// Every confound flag a document holds: warnings anywhere (environment,
// devices, verdict, a monitor), and the flags that qualify the figures. A
// generic walk over the document's tree: any block may carry warnings.
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
        for (const auto& s : v)
          if (s.is_string()) add(s.get<std::string>() + " (" + path + ")");
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

std::string verdict_of(const Typed& t) {
  if (!t.common.verdict) return "no verdict";
  return t.common.verdict->valid ? "VALID" : "INVALID";
}

std::string device_of(const Typed& t) {
  const auto& c = t.common;
  for (const std::string* s : {&c.device, &c.device_v1, &c.source_device})
    if (!s->empty()) return *s;
  if (!c.device_a.empty()) return "A " + c.device_a + ", B " + c.device_b;
  return c.settings_device;
}

std::string model_of(const Typed& t) {
  return t.common.model.empty() ? t.common.source_model : t.common.model;
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

void fill_bytes_rate(Quantities& q) {
  if (q.rate && *q.rate > 0 && !q.time_per_frame) q.time_per_frame = 1000.0 / *q.rate;
  if (!q.mb_per_s && q.rate && q.in && q.out) q.mb_per_s = (*q.in + *q.out) * *q.rate / 1e6;
  if (!q.link_mb_per_s && q.rate && q.link_in && q.link_out && *q.link_in + *q.link_out > 0)
    q.link_mb_per_s = (*q.link_in + *q.link_out) * *q.rate / 1e6;
}

void ttfo_quantities(Quantities& q, const TtfoResult& t) {
  q.ttfo = to_ms(t.total);
  q.load = to_ms(t.load);
  q.allocate = to_ms(t.allocate);
  q.first = to_ms(t.first_inference);
}

Opt finite(double v) {
  return std::isfinite(v) ? Opt(v) : std::nullopt;
}

std::vector<Quantities> quantities_of(const Typed& t) {
  const ResultDoc& r = *t.doc;
  std::vector<Quantities> cols;
  Quantities q;
  q.label = r.path + " (" + r.tool + ")\n" + device_of(t);
  if (const auto* b = as<BenchResult>(t)) {
    ttfo_quantities(q, b->ttfo);
    q.rate = b->steady.rate.median;
    q.spread = b->steady.rate.spread;
    q.time_per_frame = b->steady.time_per_frame_ms;
    q.rate_note = "median of the repeats";
    q.in = finite(b->bytes.payload_in);
    q.out = finite(b->bytes.payload_out);
    q.link_in = finite(b->bytes.link_in);
    q.link_out = finite(b->bytes.link_out);
    q.mb_per_s = b->bytes.payload_mb_per_s;
    q.link_mb_per_s = b->bytes.link_mb_per_s;
  } else if (const auto* l = as<LoopResult>(t)) {
    if (r.version >= 2) ttfo_quantities(q, l->ttfo);
    q.rate = l->host_rate;
    // v5: the interval's midpoint; before, frames completed / duration.
    q.device_rate = l->device_rate ? l->device_rate : finite(l->loop.frames_per_second);
    q.rate_note = "host-observed pipelined run";
    q.in = finite(l->steady.payload_in_per_inference);
    q.out = finite(l->steady.payload_out_per_inference);
    q.link_in = finite(l->steady.link_in_per_inference);
    q.link_out = finite(l->steady.link_out_per_inference);
  } else if (const auto* rs = as<RateSweepResult>(t)) {
    q.ttfo = to_ms(rs->ttfo.total);
    q.rate = rs->search.best_rate;
    q.rate_note =
        "highest offered rate with p99 <= " + num(to_ms(rs->effective.latency_bound), "ms");
    q.in = static_cast<double>(rs->model.input_bytes());
    q.out = static_cast<double>(rs->model.output_bytes());
  } else if (const auto* w = as<SweepResult>(t)) {
    q.ttfo = to_ms(w->ttfo.total);
    q.rate = w->best_rate;
    q.rate_note =
        "best depth " + (w->best_depth ? std::to_string(*w->best_depth) : std::string("null"));
    q.in = static_cast<double>(w->model.input_bytes());
    q.out = static_cast<double>(w->model.output_bytes());
  } else if (const auto* p = as<report::PredictDoc>(t)) {
    const Prediction& x = p->prediction;
    q.ttfo = finite(x.ttfo_ms);
    q.load = finite(p->source.load_ms);
    q.allocate = finite(p->source.allocate_ms);
    q.first = finite(p->source.first_inference_ms);
    q.ttfo_note = "predicted";
    q.rate = finite(x.rate);
    q.rate_note = "predicted on " + x.link.name;
    q.in = finite(p->source.bytes_in);
    q.out = finite(p->source.bytes_out);
    q.mb_per_s = finite((x.traffic_in_bytes_per_s + x.traffic_out_bytes_per_s) / 1e6);
  } else if (const auto* a = as<AbResult>(t)) {
    for (const auto* side : {&a->a, &a->b}) {
      const bool is_a = side == &a->a;
      Quantities s;
      s.label = r.path + " (rig ab, side " + (is_a ? "A" : "B") + ")\n" + side->spec.given_text();
      const Summary& rate = is_a ? a->rate_a : a->rate_b;
      s.rate = rate.median;
      s.spread = rate.spread;
      s.rate_note = "median of the pairs";
      s.in = static_cast<double>(a->model.input_bytes());
      s.out = static_cast<double>(a->model.output_bytes());
      fill_bytes_rate(s);
      cols.push_back(s);
    }
    return cols;
  } else if (const auto* f = as<ProfileResult>(t)) {
    ttfo_quantities(q, f->ttfo);
  } else {
    return cols;  // a kind without a table of keys measures none of them here
  }
  fill_bytes_rate(q);
  cols.push_back(q);
  return cols;
}

void summary_section(std::string& out, const std::vector<Typed>& docs) {
  out += "<section id=\"summary\">\n<h2>Verdicts and confounds</h2>\n";
  table_head(out, {"#", "result", "kind", "device", "model", "verdict", "confound flags"});
  for (size_t i = 0; i < docs.size(); ++i) {
    const Typed& t = docs[i];
    const auto flags = confounds(*t.doc);
    const std::string verdict = verdict_of(t);
    out += "<tr><td><a href=\"#result-" + std::to_string(i + 1) + "\">" + std::to_string(i + 1) +
           "</a></td><td class=\"long\">" + esc(t.doc->path) + "</td><td>" + esc(t.doc->tool) +
           "</td><td class=\"long\">" + esc(device_of(t)) + "</td><td>" + esc(model_of(t)) +
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
  for (const auto& t : docs)
    for (auto& q : quantities_of(t)) cols.push_back(std::move(q));
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

// A latency series (a summary) with its name.
struct Series {
  const Summary* summary;
  const char* name;
};

// The lone-frame latency distribution as a CDF through its quantiles (the
// document keeps the summary, not every sample).
void latency_cdf(Context& c, std::initializer_list<Series> series, const std::string& title) {
  PlotSpec p;
  p.title = title;
  p.xlabel = "latency (ms)";
  p.ylabel = "fraction of frames at or below";
  std::string plot;
  int n = 0;
  for (const auto& [s, name] : series) {
    if (s->count == 0) continue;
    DataBlock b{"cdf" + std::to_string(n), {}};
    for (auto [v, f] : {std::pair{s->min, 0.0}, std::pair{s->median, 0.5}, std::pair{s->p90, 0.9},
                        std::pair{s->p95, 0.95}, std::pair{s->p99, 0.99}, std::pair{s->max, 1.0}})
      if (v) b.rows.push_back({*v, f});
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

// Rate per window over time, one series per windows array of the document
// (found by a generic walk: any block may hold one); other numeric window
// keys (a monitor's temperature or load) on the second axis.
void window_plot(Context& c, const json& d, int version, const std::string& title) {
  const auto series = report::window_series(d);
  if (series.empty()) return;
  PlotSpec p;
  p.title = title;
  p.xlabel = "time since the start of the measured span (s)";
  p.ylabel = "rate (inferences/s)";
  // Other numeric keys of the windows (a monitor's sensors), a few at most.
  static const auto kFixed =
      report::keys_of<WindowFigure>(report::window_fields<report::KeyLister>);
  const auto fixed = [](const std::string& k) {
    return std::find(kFixed.begin(), kFixed.end(), k) != kFixed.end();
  };
  std::vector<std::string> extra;
  for (const auto& s : series)
    for (const auto& w : *s.windows)
      if (w.is_object())
        for (const auto& [k, v] : w.items())
          if (v.is_number() && !fixed(k) && extra.size() < 4 &&
              std::find(extra.begin(), extra.end(), k) == extra.end())
            extra.push_back(k);
  std::sort(extra.begin(), extra.end());
  std::string plot;
  size_t n = 0;
  for (const auto& s : series) {
    DataBlock b{"w" + std::to_string(n), {}};
    for (const auto& w : *s.windows) {
      const WindowFigure f = w.is_object()
                                 ? report::read_leniently<WindowFigure>(
                                       w, version, report::window_fields<report::JsonReader>)
                                 : WindowFigure{kNaN, kNaN, 0, kNaN};
      std::vector<double> row = {f.start_s + (std::isfinite(f.duration_s) ? f.duration_s : 0),
                                 f.rate};
      for (const auto& k : extra) {
        const json* v = nullptr;
        if (w.is_object())
          for (const auto& item : w.items())
            if (item.key() == k) v = &item.value();
        row.push_back(v && v->is_number() ? v->get<double>() : kNaN);
      }
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

std::string yes_no(bool v) {
  return v ? "true" : "false";
}

std::string share(Opt v) {
  return v ? num(*v * 100, "%") : std::string("n/a");
}

std::string ms(Nanos d) {
  return num(to_ms(d), "ms");
}

std::string ms(const std::optional<Nanos>& d) {
  return d ? ms(*d) : std::string("n/a");
}

void bench_section(Context& c, const Typed& t) {
  const BenchResult& b = *as<BenchResult>(t);
  std::string& out = c.out;
  out += "<h3>Time to first output</h3>\n";
  table_head(out, {"phase", "time", "note"});
  table_row(out, {"total", ms(b.ttfo.total), "load + allocate + first"});
  table_row(out, {"load", ms(b.ttfo.load),
                  "read " + ms(b.ttfo.load_breakdown.read) + ", parse " +
                      ms(b.ttfo.load_breakdown.parse) + ", compile " +
                      ms(b.ttfo.load_breakdown.compile)});
  table_row(out, {"allocate + bind", ms(b.ttfo.allocate), ""});
  table_row(out, {"first inference", ms(b.ttfo.first_inference),
                  "device compute " + ms(b.ttfo.first_timings.compute)});
  table_end(out);
  out += "<h3>Steady state</h3>\n";
  table_head(out, {"repeat", "rate", "inferences", "elapsed", "stable", "last 3 windows spread",
                   "warm-up"});
  for (size_t i = 0; i < b.steady.repeats.size(); ++i) {
    const SteadyRepeat& rep = b.steady.repeats[i];
    table_row(out, {std::to_string(i + 1), num(rep.rate, "/s"), std::to_string(rep.inferences),
                    num(to_seconds(rep.elapsed), "s"), yes_no(rep.stable),
                    share(rep.last_windows_spread), num(to_seconds(rep.warmup), "s")});
  }
  table_end(out);
  window_plot(c, t.doc->doc, t.doc->version, "Rate per window, every repeat");
  out += "<h3>Lone-frame latency</h3>\n";
  // The interval's confidence is the run's (--confidence), read from the
  // overall series; 95% where the document has none (version 5).
  const double confidence = b.latency.overall_ms.p95_ci.confidence;
  table_head(out,
             {"series", "p50", "p90", "p95",
              "p95 interval (" + format_fixed((confidence > 0 ? confidence : 0.95) * 100, 0) + "%)",
              "p99", "max", "samples"});
  for (const auto& [s, name] : {Series{&b.latency.overall_ms, "overall (client-observed)"},
                                Series{&b.latency.hardware_ms, "device compute"},
                                Series{&b.latency.transfer_in_ms, "transfer in"},
                                Series{&b.latency.transfer_out_ms, "transfer out"}}) {
    // A version-5 document has no p95; an interval needs enough samples, and
    // a percentile without one is not printed as a number.
    const auto pct = [&](const Opt& v, const PercentileInterval& ci) {
      return v && ci.lower && ci.upper ? num(v, "ms")
             : v                       ? std::string("not enough samples")
                                       : std::string("n/a");
    };
    const std::string p95_interval =
        s->p95_ci.lower && s->p95_ci.upper
            ? num(s->p95_ci.lower, "ms") + " .. " + num(s->p95_ci.upper, "ms")
        : s->p95 ? std::string("not enough samples")
                 : std::string("n/a");
    table_row(out, {name, num(s->median, "ms"),
                    s->p90_ci.p > 0 ? pct(s->p90, s->p90_ci) : num(s->p90, "ms"),
                    s->p95_ci.p > 0 ? pct(s->p95, s->p95_ci) : num(s->p95, "ms"), p95_interval,
                    s->p99_ci.p > 0 ? pct(s->p99, s->p99_ci) : num(s->p99, "ms"), num(s->max, "ms"),
                    std::to_string(s->count)});
  }
  table_end(out);
  latency_cdf(c,
              {Series{&b.latency.overall_ms, "overall"},
               Series{&b.latency.hardware_ms, "device-side compute"}},
              "Lone-frame latency CDF (through min, p50, p90, p95, p99, max)");
}

void loop_section(Context& c, const Typed& t) {
  const LoopResult& l = *as<LoopResult>(t);
  const Opt device = finite(l.loop.frames_per_second);
  table_head(c.out, {"figure", "value", "note"});
  table_row(
      c.out,
      {"device loop rate", num(device, "/s"),
       (l.loop.frames_completed ? std::to_string(*l.loop.frames_completed) : std::string("n/a")) +
           " frames in " + num(to_seconds(l.loop.elapsed), "s") + ", no per-frame transfers"});
  table_row(c.out, {"host-observed pipelined rate", num(l.host_rate, "/s"),
                    "depth " + std::to_string(l.steady.depth)});
  table_row(c.out, {"transfer cost per frame", num(l.transfer_cost_ms, "ms"),
                    "share of the host frame time " + share(l.transfer_cost_share)});
  table_end(c.out);
  PlotSpec p;
  if (device && l.host_rate) {
    p.title = "Device loop rate beside the host-observed rate";
    p.xlabel = "";
    p.ylabel = "rate (frames/s)";
    p.data.push_back({"r", {{0, *device}, {1, *l.host_rate}}});
    p.setup =
        "set style fill solid 0.6\nset boxwidth 0.5\nset xtics (\"device loop\" 0, \"host "
        "pipelined\" 1)\nset xrange [-0.75:1.75]\nset yrange [0:*]\n";
    p.plot = "$r using 1:2 with boxes notitle";
    c.out += c.plots.draw(std::move(p));
  }
}

void ladder_section(Context& c, const Typed& t) {
  const LadderResult& l = *as<LadderResult>(t);
  table_head(c.out, {"size", "bytes in + out", "MB/s", "lone p50", "compute", "link", "bound"});
  DataBlock pts{"rungs", {}};
  for (const LadderRung& g : l.rungs) {
    const double bytes = g.bytes_in + g.bytes_out;
    // Version 5 measures each size out-heavy too; the plot and its fit are
    // the in-heavy rungs'.
    const bool out_heavy = g.shape == RungShape::out_heavy;
    table_row(c.out, {g.size + (out_heavy ? " out-heavy" : ""), num(bytes, "B"),
                      num(g.mb_per_s, "MB/s"), num(g.lone_ms.median, "ms"), num(g.compute_ms, "ms"),
                      num(g.link_ms, "ms"), std::string(to_string(g.bound))});
    if (!out_heavy) pts.rows.push_back({bytes, g.mb_per_s.value_or(kNaN)});
  }
  table_end(c.out);
  table_head(c.out, {"fit", "fixed", "bandwidth", "r²", "points"});
  for (const auto& [f, name] : {std::pair{&l.pipelined_fit, "pipelined (time per frame)"},
                                std::pair{&l.lone_fit, "lone frames (link time)"}}) {
    Opt mb;
    if (f->bandwidth_bytes_per_s) mb = *f->bandwidth_bytes_per_s / 1e6;
    table_row(c.out, {name, num(f->fixed_ms, "ms"), num(mb, "MB/s"), num(f->r_squared),
                      std::to_string(f->points)});
  }
  table_end(c.out);
  if (pts.rows.empty()) return;
  PlotSpec p;
  p.title = "Link ladder: MB/s against frame size, with the fitted link model";
  p.xlabel = "bytes per frame, in + out (B)";
  p.ylabel = "throughput (MB/s, 10^6 B/s)";
  p.setup = "set logscale x\nset yrange [0:*]\n";
  p.plot = "$rungs using 1:2 with points pointtype 7 pointsize 1.2 title \"measured rungs\"";
  const auto fixed = l.pipelined_fit.fixed_ms;
  const auto bw = l.pipelined_fit.bandwidth_bytes_per_s;
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
void rate_sweep_section(Context& c, const Typed& t) {
  const RateSweepResult& s = *as<RateSweepResult>(t);
  table_head(c.out, {"offered rate", "achieved rate", "p99 from arrival", "p99 interval",
                     "late share", "keeps up", "meets the bound"});
  DataBlock meets{"meets", {}}, fails{"fails", {}}, ci{"ci", {}};
  for (const RateProbe& g : s.search.probes) {
    const auto& iv = g.run.latency_ms.p99_ci;
    const bool interval = iv.lower && iv.upper;
    table_row(c.out,
              {num(g.rate, "/s"), num(g.run.achieved_rate, "/s"),
               interval || !g.p99_ms ? num(g.p99_ms, "ms") : "not enough samples",
               interval ? num(iv.lower, "ms") + " .. " + num(iv.upper, "ms") : "not enough samples",
               share(g.run.late_share), yes_no(g.keeps_up), yes_no(g.meets)});
    if (!g.p99_ms) continue;
    (g.meets ? meets : fails).rows.push_back({g.rate, *g.p99_ms});
    if (interval) ci.rows.push_back({g.rate, *g.p99_ms, *iv.lower, *iv.upper});
  }
  table_end(c.out);
  const double bound = to_ms(s.effective.latency_bound);
  table_head(c.out, {"figure", "value"});
  table_row(c.out, {"latency bound (p99 from arrival)", num(bound, "ms")});
  table_row(c.out, {"best rate meeting the bound", num(s.search.best_rate, "/s")});
  table_row(c.out, {"first failing rate", num(s.search.first_failing_rate, "/s")});
  table_row(c.out, {"search stopped", std::string(to_string(s.search.end))});
  table_row(c.out, {"lone frame (median)", num(s.lone.overall_ms.median, "ms")});
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
  if (bound > 0)
    add(
        report::line("%.9g with lines dashtype 2 linewidth 2 linecolor rgb \"#1f77b4\" "
                     "title \"bound %.4g ms\"",
                     bound, bound));
  p.plot = plot;
  for (auto* b : {&ci, &meets, &fails})
    if (!b->rows.empty()) p.data.push_back(std::move(*b));
  c.out += c.plots.draw(std::move(p));
}

void sweep_section(Context& c, const Typed& t) {
  if (as<RateSweepResult>(t)) return rate_sweep_section(c, t);
  const SweepResult& s = *as<SweepResult>(t);
  table_head(c.out,
             {"depth", "median rate", "min", "max", "fraction of best", "stable", "refined"});
  DataBlock pts{"pts", {}};
  for (const SweepPoint& g : s.points) {
    const Summary& rate = g.result.rate;
    table_row(c.out, {std::to_string(g.result.depth), num(rate.median, "/s"), num(rate.min, "/s"),
                      num(rate.max, "/s"), share(g.fraction_of_best), yes_no(g.result.stable),
                      yes_no(g.refined)});
    pts.rows.push_back({static_cast<double>(g.result.depth), rate.median.value_or(kNaN),
                        rate.min.value_or(kNaN), rate.max.value_or(kNaN)});
  }
  table_end(c.out);
  const Opt knee = s.knee ? Opt(*s.knee) : std::nullopt;
  const Opt queue = s.queue_depth ? Opt(s.queue_depth) : std::nullopt;
  table_head(c.out, {"figure", "value"});
  table_row(c.out, {"knee", num(knee)});
  table_row(c.out, {"knee against the queue depth", std::string(to_string(s.knee_vs_queue))});
  table_row(c.out, {"device queue depth", num(queue)});
  table_row(c.out, {"single shot", num(s.single_shot_ms, "ms")});
  table_row(c.out, {"pipelined time per frame", num(s.pipelined_ms, "ms")});
  table_row(c.out, {"round trip hidden by pipelining", num(s.round_trip_ms, "ms")});
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

// The knobs that differ between the sides: each side's knobs the other
// does not have, and the depth and device when they differ.
std::string knob_difference(const AbResult& a) {
  std::string out;
  const auto add = [&](const std::string& s) { out += (out.empty() ? "" : "; ") + s; };
  if (a.a.spec.given_text() != a.b.spec.given_text())
    add("device " + a.a.spec.given_text() + " vs " + a.b.spec.given_text());
  if (a.depth_a != a.depth_b)
    add("depth " + std::to_string(a.depth_a) + " vs " + std::to_string(a.depth_b));
  const auto only = [](const std::vector<std::string>& x, const std::vector<std::string>& y) {
    std::string s;
    for (const auto& k : x)
      if (std::find(y.begin(), y.end(), k) == y.end()) s += (s.empty() ? "" : ", ") + k;
    return s;
  };
  const std::string in_a = only(a.a.knobs, a.b.knobs), in_b = only(a.b.knobs, a.a.knobs);
  if (!in_a.empty() || !in_b.empty())
    add("A " + (in_a.empty() ? std::string("(none)") : in_a) + " vs B " +
        (in_b.empty() ? std::string("(none)") : in_b));
  return out.empty() ? "none: A and B are the same configuration" : out;
}

void ab_section(Context& c, const Typed& t) {
  const AbResult& a = *as<AbResult>(t);
  c.out += "<p class=\"answer\">What differs: " + esc(knob_difference(a)) + "</p>\n";
  table_head(c.out, {"pair", "A rate", "B rate", "B / A"});
  DataBlock pts{"pairs", {}};
  for (size_t i = 0; i < a.ratios.size(); ++i) {
    const double ra = i < a.rates_a.size() ? a.rates_a[i] : kNaN;
    const double rb = i < a.rates_b.size() ? a.rates_b[i] : kNaN;
    table_row(c.out, {std::to_string(i + 1), num(ra, "/s"), num(rb, "/s"), num(a.ratios[i])});
    pts.rows.push_back({static_cast<double>(i + 1), a.ratios[i], ra, rb});
  }
  table_end(c.out);
  Opt diff, noise;
  if (a.ratio.median) diff = *a.ratio.median - 1;
  noise = a.ratio.spread;
  c.out += "<p class=\"verdict-text\">" + esc(a.verdict_text) + "</p>\n";
  table_head(c.out, {"figure", "value"});
  table_row(c.out, {"difference (median B/A - 1)", share(diff)});
  table_row(c.out,
            {"B / A interval", a.test.ratio_lower && a.test.ratio_upper
                                   ? num(a.test.ratio_lower) + " .. " + num(a.test.ratio_upper)
                                   : std::string("not enough pairs")});
  table_row(c.out, {"p-value", num(a.test.p_value)});
  table_row(c.out, {"verdict", std::string(to_string(a.verdict))});
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

void predict_section(Context& c, const Typed& t) {
  const report::PredictDoc& d = *as<report::PredictDoc>(t);
  const Prediction& p = d.prediction;
  table_head(c.out, {"figure", "measured", "predicted"});
  table_row(c.out, {"rate", num(d.source.measured_rate, "/s"), num(p.rate, "/s")});
  table_row(c.out, {"lone frame", num(d.source.measured_lone_ms, "ms"), num(p.lone_ms, "ms")});
  table_row(c.out, {"bound", "", std::string(to_string(p.bound))});
  table_row(c.out, {"bus utilization", "", share(finite(p.bus_utilization))});
  table_end(c.out);
}

// Any kind without its own function: its per-window series, if any (a soak's
// drift over time, a monitor's series on the second axis).
void generic_section(Context& c, const Typed& t) {
  c.out += "<p>No dedicated section for '" + esc(t.doc->tool) +
           "' in this rig: every figure of the document is shown below.</p>\n";
  window_plot(c, t.doc->doc, t.doc->version, "Rate per window over time");
}

// rig profile: the top layers by time with their share (the document keeps
// every layer; the page lists the first ten).
void profile_section(Context& c, const Typed& t) {
  const ProfileResult& r = *as<ProfileResult>(t);
  c.out += "<p>" + esc(r.profiler) + ", " + std::to_string(r.runs) +
           " runs: " + num(r.layers_per_run_ms, "ms") + " per run in the layers, " +
           num(r.wall_per_run_ms, "ms") + " elapsed</p>\n";
  table_head(c.out, {"#", "layer", "op", "ms/run", "share"});
  for (size_t i = 0; i < r.layers.size() && i < 10; ++i) {
    const ProfiledLayer& l = r.layers[i];
    table_row(c.out, {std::to_string(i + 1), l.name, l.op_type, num(l.per_run_ms, "ms"),
                      share(finite(l.share))});
  }
  table_end(c.out);
}

struct Kind {
  std::string_view tool;
  void (*section)(Context&, const Typed&);
};
constexpr Kind kKinds[] = {
    {"rig bench", bench_section},     {"rig loop", loop_section}, {"rig ladder", ladder_section},
    {"rig sweep", sweep_section},     {"rig ab", ab_section},     {"rig predict", predict_section},
    {"rig profile", profile_section},
};

void result_section(Context& c, const Typed& t, size_t index) {
  const ResultDoc& r = *t.doc;
  std::string& out = c.out;
  const std::string id = "result-" + std::to_string(index);
  out += "<section class=\"result\" id=\"" + id + "\">\n<h2>" + std::to_string(index) + ". " +
         esc(r.tool) + ": " + esc(model_of(t)) + " on <span class=\"long\">" + esc(device_of(t)) +
         "</span></h2>\n";
  out += "<p class=\"source\">" + esc(r.path) + ", schema version " + std::to_string(r.version) +
         "</p>\n";
  const std::string verdict = verdict_of(t);
  out += "<p class=\"verdict " +
         std::string(verdict == "VALID"     ? "valid"
                     : verdict == "INVALID" ? "invalid"
                                            : "none") +
         "\">verdict: " + esc(verdict) + "</p>\n";
  const std::vector<std::string> reasons =
      t.common.verdict ? t.common.verdict->reasons : std::vector<std::string>();
  for (const auto& [title, items] :
       {std::pair{"reasons", reasons}, std::pair{"notes", t.common.notes}}) {
    if (items.empty()) continue;
    out += "<h3>" + std::string(title) + "</h3>\n<ul>";
    for (const auto& s : items) out += "<li>" + esc(s) + "</li>";
    out += "</ul>\n";
  }
  bool known = false;
  for (const auto& k : kKinds)
    if (k.tool == r.tool && !std::holds_alternative<std::monostate>(t.result)) {
      k.section(c, t);
      known = true;
    }
  if (!known) generic_section(c, t);

  out += "<h3>Every figure</h3>\n";
  // Top-level scalars (schema_version, tool, and any a later tool adds).
  table_head(out, {"figure", "value", "unit"}, "figures");
  for (const auto& f : report::flatten(r.doc))
    if (f.section == "header") table_row(out, {f.name, report::display(*f.value), f.unit});
  table_end(out);
  // Every block, folded: settings and environment last, under their titles.
  for (const bool last : {false, true})
    for (const auto& [k, v] : r.doc.items()) {
      const bool folded_last = k == "settings" || k == "environment";
      if (folded_last != last || !(v.is_object() || v.is_array())) continue;
      const std::string title = !last             ? k
                                : k == "settings" ? "Settings (requested and effective)"
                                                  : "Environment";
      out += "<details class=\"figures\"><summary>" + esc(title) + "</summary>\n";
      figures_table(out, v, k);
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
.long, td.long, table.figures td { overflow-wrap: anywhere; }
p.answer { font-size: 1.05em; font-weight: bold; }
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
  std::vector<Typed> typed;
  for (const auto& d : docs) typed.push_back(read_typed(d));
  Plotter plots(settings);
  std::string body;
  Context c{body, plots};
  for (size_t i = 0; i < typed.size(); ++i) result_section(c, typed[i], i + 1);

  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += "<meta name=\"generator\" content=\"rig " + esc(kVersion) + "\">\n";
  out += "<title>" + esc(settings.title) + "</title>\n<style>" + kStyle +
         "</style>\n</head>\n<body>\n";
  out += "<h1>" + esc(settings.title) + "</h1>\n<p>" + std::to_string(docs.size()) + " result" +
         (docs.size() == 1 ? "" : "s") + ", written by rig " + esc(kVersion) +
         ". Units: ms milliseconds, s seconds, /s per second, B bytes, MB = 10^6 bytes.</p>\n";
  summary_section(out, typed);
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

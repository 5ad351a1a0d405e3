// The parts of rig report's page every section shares (html_report.cpp
// writes the page; html/*_sections.cpp one section per kind of result): HTML
// escaping, numbers with units, tables, the gnuplot plotter, and a document
// read into its typed result with the fields it did not hold (Typed).
// Private to the reporters.
#pragma once

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "report/gnuplot.hpp"
#include "report/json_walkers.hpp"
#include "report/predict_fields.hpp"
#include "report/result_doc.hpp"
#include "rig/report/diff_report.hpp"
#include "rig/report/html_report.hpp"
#include "rig/scenario/ab.hpp"
#include "rig/scenario/bench.hpp"
#include "rig/scenario/check.hpp"
#include "rig/scenario/compare.hpp"
#include "rig/scenario/fit.hpp"
#include "rig/scenario/ladder.hpp"
#include "rig/scenario/loop.hpp"
#include "rig/scenario/place.hpp"
#include "rig/scenario/profile.hpp"
#include "rig/scenario/rate_search.hpp"
#include "rig/scenario/run.hpp"
#include "rig/scenario/soak.hpp"
#include "rig/scenario/sweep.hpp"
#include "rig/units.hpp"

namespace rig::report::html {

using Opt = std::optional<double>;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string esc(std::string_view s);
// A string for gnuplot: single-quoted with a quote doubled, the only
// quoting in which gnuplot runs nothing (it runs `...` inside double quotes).
// Every string of a plot's script goes through it; data (numbers only) goes
// in data blocks.
std::string gp_quote(std::string_view s);
// Why a plot's script is not safe to give gnuplot, or "" when it is: each
// string single-quoted on its line, no double quote, backquote or macro
// outside one, and only numbers in its data blocks. Checked before every
// run: a result file is data and reading one must never run anything.
std::string gp_script_fault(std::string_view script);
// A number at 4 significant digits with its unit ("B": bytes, scaled); "n/a"
// when absent or not finite.
std::string num(Opt v, const char* unit = "");

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
        "set terminal svg size 720,400 noenhanced font 'sans,11' background '#ffffff'\n";
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
    if (const std::string fault = gp_script_fault(script); !fault.empty())
      return skip("its gnuplot script failed rig's quoting check (" + fault + "; a bug in rig)");
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

// A plot of `title` with its axes' labels (units in them).
inline PlotSpec plot_spec(std::string title, std::string xlabel, std::string ylabel) {
  PlotSpec p;
  p.title = std::move(title);
  p.xlabel = std::move(xlabel);
  p.ylabel = std::move(ylabel);
  return p;
}

struct Context {
  std::string& out;
  Plotter& plots;
};

void table_head(std::string& out, std::initializer_list<std::string_view> columns,
                std::string_view cls = "");
void table_row(std::string& out, const std::vector<std::string>& cells);
void table_end(std::string& out);
// A list under a heading; nothing when `items` is empty.
void list(std::string& out, std::string_view title, const std::vector<std::string>& items);

// A document read into its typed result through its tool's table of keys
// (leniently: a hand-trimmed or older document is shown, not refused), and
// the keys every document shares.
// Each field the document does not hold is in `absent`: shown as absent
// (n/a), never as its struct default. The result is read in place and a
// Typed never moves (the page keeps them in a deque).
struct Typed {
  const ResultDoc* doc = nullptr;
  report::CommonDoc common;
  std::variant<std::monostate, BenchResult, LoopResult, LadderResult, SweepResult, RateSweepResult,
               AbResult, PredictDoc, ProfileResult, SoakResult, FitResult, PlaceResult, RunResult,
               CheckResult, CompareResult, DiffResult>
      result;
  report::Absent absent;
};

// A figure of t's result as a number: absent when the document does not hold
// it or it is not finite. Nanos read as ms.
template <class T>
Opt fig(const Typed& t, const T& v) {
  if (t.absent(v)) return std::nullopt;
  if constexpr (std::is_same_v<T, Nanos>) {
    return to_ms(v);
  } else if constexpr (std::is_same_v<T, Opt>) {
    return v && std::isfinite(*v) ? v : std::nullopt;
  } else {
    const double d = static_cast<double>(v);
    return std::isfinite(d) ? Opt(d) : std::nullopt;
  }
}

template <class T>
const T* as(const Typed& t) {
  return std::get_if<T>(&t.result);
}

std::string yes_no(bool v);
// A flag, a count, a time of t's result: "n/a" when the document does not
// hold it.
std::string yes_no(const Typed& t, const bool& v);

template <class E>
std::string name_of(const Typed& t, const E& e) {
  return t.absent(e) ? "n/a" : std::string(to_string(e));
}

template <class T>
std::string count(const Typed& t, const T& n) {
  return t.absent(n) ? "n/a" : std::to_string(n);
}

std::string ms(const Typed& t, const Nanos& d);
std::string seconds(const Typed& t, const Nanos& d);
// A fraction as a percentage.
std::string share(Opt v);

// A latency series (a summary) with its name.
struct Series {
  const Summary* summary;
  const char* name;
};

// The lone-frame latency distribution as a CDF through its quantiles (the
// document keeps the summary, not every sample).
void latency_cdf(Context& c, std::initializer_list<Series> series, const std::string& title);
// Rate per window over time, one series per windows array of the document
// (found by a generic walk: any block may hold one); other numeric window
// keys (a monitor's temperature or load) on the second axis.
void window_plot(Context& c, const json& d, int version, const std::string& title);

// One kind's section: its answer (one line, first), then its tables and
// plots (after the verdict's reasons and the caveats, which the page
// writes). Each in html/<family>_sections.cpp.
struct Section {
  std::string (*answer)(const Typed&);
  void (*body)(Context&, const Typed&);
  // Caveats the kind adds to the verdict's warnings (said once per result).
  std::vector<std::string> (*caveats)(const Typed&) = nullptr;
};

extern const Section kBenchSection, kLoopSection, kSoakSection, kProfileSection;
extern const Section kLadderSection, kSweepSection, kAbSection, kPredictSection;
extern const Section kFitSection, kPlaceSection, kDiffSection;
extern const Section kRunSection, kCheckSection, kCompareSection;

}  // namespace rig::report::html

// rig report: one self-contained HTML page for any mix of result documents
// (every tool, every readable schema version; a tool this rig does not know
// is shown generically from its JSON).
//
// The page: per result its verdict and every confound flag; the three
// quantities (TTFO with its breakdown, steady rate with spread and time per
// frame, bytes per inference with the MB/s they imply) side by side per
// result; then one section per result with its kind's tables and plots,
// every figure with its unit, and the settings and environment folded.
// No network: no external scripts, styles, fonts or images; the plots are
// gnuplot SVGs inlined (ids prefixed per plot). Series longer than
// max_plot_points are thinned for the plot only; tables hold every value.
//
// Plots need gnuplot: without it (or when it fails or times out) every table
// is still written and the page lists which plots were skipped and why.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "rig/error.hpp"
#include "rig/report/result_files.hpp"

namespace rig {

struct HtmlReportSettings {
  std::string gnuplot = "gnuplot";                   // a name searched on PATH, or a path
  std::chrono::milliseconds gnuplot_timeout{20000};  // per plot
  size_t max_plot_points = 2000;                     // per series, in a plot
  std::string title = "rig report";
};

struct HtmlReport {
  std::string html;
  size_t plots = 0;                  // plots drawn
  std::vector<std::string> skipped;  // "title: why", one per plot skipped
};

// Fails (invalid_argument naming the file) when a document is not a result
// (not JSON, no readable schema_version, no tool), or when given none.
Result<HtmlReport> html_report(const std::vector<ResultFile>& files,
                               const HtmlReportSettings& settings = {});

}  // namespace rig

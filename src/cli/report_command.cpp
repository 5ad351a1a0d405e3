// rig report RESULT.json... -o report.html [--gnuplot PATH] [--gnuplot-timeout T]
// rig export RESULT.json... (--csv | --csv-windows) [-o FILE]
#include <chrono>
#include <cstdio>
#include <memory>

#include "cli/command.hpp"
#include "cli/options.hpp"
#include "rig/model.hpp"
#include "rig/report/html_report.hpp"
#include "rig/report/result_files.hpp"
#include "rig/units.hpp"

namespace rig::cli {
namespace {

struct ReportOptions {
  std::vector<std::string> results;
  std::string output = "report.html";
  std::string gnuplot = "gnuplot";
  std::string gnuplot_timeout = "20s";
  size_t max_plot_points = 2000;
  std::string title = "rig report";
  bool quiet = false;
};

int run_report_command(const ReportOptions& o) {
  HtmlReportSettings s;
  s.gnuplot = o.gnuplot;
  auto timeout = positive_duration("--gnuplot-timeout", o.gnuplot_timeout);
  if (!timeout) return report_error(timeout.error());
  s.gnuplot_timeout = std::chrono::duration_cast<std::chrono::milliseconds>(*timeout);
  if (s.gnuplot_timeout.count() < 1) s.gnuplot_timeout = std::chrono::milliseconds(1);
  s.max_plot_points = o.max_plot_points;
  s.title = o.title;
  if (auto ok = check_writable("-o", o.output); !ok) return report_error(ok.error());
  auto files = read_result_files(o.results);
  if (!files) return report_error(files.error());
  auto report = html_report(*files, s);
  if (!report) return report_error(report.error());
  if (auto ok = write_file_atomic(o.output, report->html); !ok) return report_error(ok.error());
  if (!o.quiet) {
    std::fprintf(stderr, "rig: wrote %s (%zu results, %zu plots", o.output.c_str(), files->size(),
                 report->plots);
    if (!report->skipped.empty())
      std::fprintf(stderr, ", %zu skipped: %s", report->skipped.size(),
                   report->skipped.front().c_str());
    std::fprintf(stderr, ")\n");
  }
  return 0;
}

struct ExportOptions {
  std::vector<std::string> results;
  std::string output;  // empty: stdout
  bool csv = false;
  bool csv_windows = false;
  bool quiet = false;
};

int run_export_command(const ExportOptions& o) {
  if (o.csv == o.csv_windows)
    return report_error(
        Error{ErrorCode::invalid_argument, "give one of --csv (every figure) or --csv-windows"});
  if (!o.output.empty())
    if (auto ok = check_writable("-o", o.output); !ok) return report_error(ok.error());
  auto files = read_result_files(o.results);
  if (!files) return report_error(files.error());
  auto csv = o.csv ? figures_csv(*files) : windows_csv(*files);
  if (!csv) return report_error(csv.error());
  if (o.output.empty() || o.output == "-") {
    std::fwrite(csv->data(), 1, csv->size(), stdout);
    return std::fflush(stdout) == 0 ? 0 : 2;
  }
  if (auto ok = write_file_atomic(o.output, *csv); !ok) return report_error(ok.error());
  if (!o.quiet) std::fprintf(stderr, "rig: wrote %s\n", o.output.c_str());
  return 0;
}

}  // namespace

Command add_report_command(CLI::App& app) {
  auto o = std::make_shared<ReportOptions>();
  CLI::App* sub = app.add_subcommand(
      "report", "One self-contained HTML page (tables and gnuplot plots) for result JSON files");
  sub->add_option("results", o->results, "result documents written with --json (any tool)")
      ->required();
  sub->add_option("-o,--output", o->output, "the HTML file to write")->capture_default_str();
  sub->add_option("--gnuplot", o->gnuplot, "gnuplot to run for the plots (name or path)")
      ->capture_default_str();
  sub->add_option("--gnuplot-timeout", o->gnuplot_timeout, "per plot; a slower gnuplot is killed")
      ->capture_default_str();
  sub->add_option("--max-plot-points", o->max_plot_points,
                  "points per plotted series (longer series are thinned; tables keep all)")
      ->capture_default_str()
      ->check(in_range(size_t{2}, size_t{1} << 24));
  sub->add_option("--title", o->title, "the page's title")->capture_default_str();
  sub->add_flag("-q,--quiet", o->quiet, "no message on stderr");
  return {sub, [o] { return run_report_command(*o); }};
}

Command add_export_command(CLI::App& app) {
  auto o = std::make_shared<ExportOptions>();
  CLI::App* sub =
      app.add_subcommand("export", "Result JSON files as CSV: every figure, or the window series");
  sub->add_option("results", o->results, "result documents written with --json (any tool)")
      ->required();
  sub->add_flag("--csv", o->csv, "one row per figure: result, section, name, value, unit");
  sub->add_flag("--csv-windows", o->csv_windows, "one row per measured window");
  sub->add_option("-o,--output", o->output, "the CSV file to write (default: stdout)");
  sub->add_flag("-q,--quiet", o->quiet, "no message on stderr");
  return {sub, [o] { return run_export_command(*o); }};
}

}  // namespace rig::cli

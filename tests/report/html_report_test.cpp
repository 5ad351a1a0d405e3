// rig report and rig export from fixture results of every kind and every
// readable schema version (tests/report/fixtures: bench, loop, ladder,
// sweep, ab, predict written by this rig on the sim; bench and loop in the
// version 1 layout; soak, fit, place, run, check, compare and diff at
// version 6; a kind this rig does not know).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <tuple>

#include <nlohmann/json.hpp>

#include "report/gnuplot.hpp"
#include "report/html/page.hpp"
#include "report/result_doc.hpp"
#include "rig/model.hpp"
#include "rig/report/html_report.hpp"
#include "rig/report/place_report.hpp"
#include "rig/report/result_files.hpp"

#ifndef RIG_TEST_DIR
#error "RIG_TEST_DIR: tests/report, defined by tests/report/CMakeLists.txt"
#endif

namespace rig {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::vector<std::string> kFixtures = {
    "bench-v2.json",   "bench-v1.json", "loop-v2.json",    "loop-v1.json",    "ladder-v2.json",
    "sweep-v2.json",   "ab-v2.json",    "predict-v2.json", "unknown-v2.json", "sweep-rate-v3.json",
    "soak-v6.json",    "fit-v6.json",   "place-v6.json",   "run-v6.json",     "check-v6.json",
    "compare-v6.json", "diff-v6.json"};

std::string fixture(const std::string& name) {
  return std::string(RIG_TEST_DIR) + "/fixtures/" + name;
}

std::vector<ResultFile> all_fixtures() {
  std::vector<std::string> paths;
  for (const auto& f : kFixtures) paths.push_back(fixture(f));
  auto files = read_result_files(paths);
  EXPECT_TRUE(files.has_value());
  return files ? *files : std::vector<ResultFile>{};
}

// The HTML escape the page uses, for finding text in it.
std::string esc(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '&')
      out += "&amp;";
    else if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '"')
      out += "&quot;";
    else if (c == '\'')
      out += "&#39;";
    else
      out += c;
  }
  return out;
}

class Scratch : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("rig-report-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

// Runs a command, returns its exit status and output.
std::pair<int, std::string> run(const std::string& cmd) {
  std::string out;
  FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return {-1, ""};
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int raw = ::pclose(p);
  return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, out};
}

// The strict HTML5 parse and self-containment check (check_html.py).
void expect_valid_html(const std::string& page_path, size_t results, size_t min_svgs) {
  auto [status, out] =
      run("/usr/bin/python3 " + std::string(RIG_TEST_DIR) + "/check_html.py " + page_path + " " +
          std::to_string(results) + " --svgs " + std::to_string(min_svgs));
  if (status == 77) GTEST_SKIP() << out;
  EXPECT_EQ(status, 0) << out;
}

bool have_gnuplot() {
  return !report::find_program("gnuplot").empty();
}

TEST_F(Scratch, EveryKindAndVersionIsValidHtmlWithEverySectionAndFigure) {
  const auto files = all_fixtures();
  ASSERT_EQ(files.size(), kFixtures.size());
  auto page = html_report(files);
  ASSERT_TRUE(page.has_value()) << page.error().to_string();
  const std::string& html = page->html;
  ASSERT_TRUE(write_file_atomic(path("report.html"), html).has_value());

  // bench x2 (windows, CDF), loop x2 (rates: version 1's steady.rate is read as today's
  // steady.rate_per_s), ladder, sweep, ab, the unknown kind's windows, the rate search, the
  // soak's windows.
  const size_t expected_plots = 2 + 2 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1;
  if (have_gnuplot()) {
    EXPECT_EQ(page->plots, expected_plots);
    EXPECT_TRUE(page->skipped.empty()) << page->skipped.front();
    EXPECT_EQ(html.find("Plots skipped"), std::string::npos);
  } else {
    EXPECT_EQ(page->plots, 0u);
    EXPECT_EQ(page->skipped.size(), expected_plots);
    EXPECT_NE(html.find("Plots skipped"), std::string::npos);
  }
  expect_valid_html(path("report.html"), files.size(), page->plots);
  if (have_gnuplot()) {  // the rate search's plot marks its bound
    EXPECT_NE(html.find("bound 10 ms"), std::string::npos);
  }

  // The summary, then one section per result with its kind's own parts.
  EXPECT_NE(html.find("<section id=\"summary\">"), std::string::npos);
  EXPECT_NE(html.find("The three quantities, side by side"), std::string::npos);
  for (size_t i = 1; i <= files.size(); ++i)
    EXPECT_NE(html.find("id=\"result-" + std::to_string(i) + "\""), std::string::npos) << i;
  for (const char* part :
       {"Time to first output", "Steady state", "Lone-frame latency", "Rate per window",
        "Lone-frame latency CDF", "Device loop rate beside the host-observed rate",
        "Link ladder: MB/s against frame size", "Depth sweep: rate against requests in flight",
        "A/B pairs: B / A per pair, with the noise band", "No dedicated section for 'rig future'",
        "Rate search: p99 latency from arrival against the offered rate",
        "best rate meeting the bound", "not enough samples", "Settings (requested and effective)",
        "Environment"})
    EXPECT_NE(html.find(part), std::string::npos) << part;

  // Every figure of every document is in the page: its name, and its value
  // as the page shows it.
  for (const auto& f : files) {
    auto doc = report::parse_result(f);
    ASSERT_TRUE(doc.has_value());
    for (const auto& fig : report::flatten(doc->doc)) {
      EXPECT_NE(html.find("<td>" + esc(fig.name) + "</td><td>" + esc(report::display(*fig.value)) +
                          "</td><td>" + esc(fig.unit) + "</td>"),
                std::string::npos)
          << f.path << ": " << fig.section << "." << fig.name;
    }
  }
  // Verdicts and every confound flag at the top.
  EXPECT_NE(html.find("virtual clock: the figures are simulated"), std::string::npos);
  // The clock's flag and the verdict's warning of it are one caveat in the
  // summary: said in the flag's words, naming both keys.
  const size_t summary = html.find("<section id=\"summary\">");
  const std::string flags = html.substr(summary, html.find("</section>", summary) - summary);
  EXPECT_EQ(flags.find("figures are the sim device's model"), std::string::npos);
  EXPECT_NE(flags.find("virtual clock: the figures are simulated (environment.virtual_clock, "
                       "verdict.warnings)"),
            std::string::npos);
  EXPECT_NE(html.find("drift of 1.2% over the run"), std::string::npos);
  EXPECT_NE(html.find("cpu frequency scaling is on"), std::string::npos);
  EXPECT_NE(html.find(">INVALID<"), std::string::npos);
  EXPECT_NE(html.find(">VALID<"), std::string::npos);
  // Self-contained: nothing fetched.
  EXPECT_EQ(html.find("http://www.w3.org/1999/xhtml"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
}

TEST_F(Scratch, WithoutGnuplotEveryTableIsWrittenAndThePageSaysWhichPlotsWereSkipped) {
  HtmlReportSettings s;
  s.gnuplot = path("no-such-gnuplot");
  auto page = html_report(all_fixtures(), s);
  ASSERT_TRUE(page.has_value());
  EXPECT_EQ(page->plots, 0u);
  ASSERT_FALSE(page->skipped.empty());
  EXPECT_NE(page->html.find("Plots skipped"), std::string::npos);
  EXPECT_NE(page->html.find("gnuplot not found at " + s.gnuplot), std::string::npos);
  EXPECT_NE(page->html.find("Depth sweep: rate against requests in flight"), std::string::npos);
  EXPECT_NE(page->html.find("Steady state"), std::string::npos);
  EXPECT_EQ(page->html.find("<svg"), std::string::npos);
  ASSERT_TRUE(write_file_atomic(path("report.html"), page->html).has_value());
  expect_valid_html(path("report.html"), kFixtures.size(), 0);
}

TEST_F(Scratch, AGnuplotThatHangsIsKilledAtItsTimeoutAndTheTablesStillCome) {
  const std::string fake = path("gnuplot");
  {
    std::ofstream f(fake);
    f << "#!/bin/sh\nexec sleep 30\n";
  }
  fs::permissions(fake, fs::perms::owner_all);
  HtmlReportSettings s;
  s.gnuplot = fake;
  s.gnuplot_timeout = std::chrono::milliseconds(100);
  auto page = html_report({all_fixtures()[5]}, s);  // sweep: one plot
  ASSERT_TRUE(page.has_value());
  ASSERT_EQ(page->skipped.size(), 1u);
  EXPECT_NE(page->skipped[0].find("timeout"), std::string::npos) << page->skipped[0];
  EXPECT_NE(page->html.find("fraction of best"), std::string::npos);
}

TEST_F(Scratch, AFailingGnuplotIsNamedWithItsError) {
  const std::string fake = path("gnuplot");
  {
    std::ofstream f(fake);
    f << "#!/bin/sh\ncat > /dev/null\necho 'line 3: broken' >&2\nexit 1\n";
  }
  fs::permissions(fake, fs::perms::owner_all);
  HtmlReportSettings s;
  s.gnuplot = fake;
  auto page = html_report({all_fixtures()[5]}, s);  // sweep
  ASSERT_TRUE(page.has_value());
  ASSERT_EQ(page->skipped.size(), 1u);
  EXPECT_NE(page->skipped[0].find("exited with status 1: line 3: broken"), std::string::npos)
      << page->skipped[0];
}

// Issue 37 item 1: a result file is data, and reading one runs nothing. Each
// hostile text is put in every string of a result that reaches a plot: the
// tool's name, the keys on the path to a windows array (the series' title),
// a window's own numeric key (a curve's title and the second axis' label),
// in a kind rig does not know and in a soak's monitor windows. The real
// gnuplot draws each page; each text would touch its own marker file if
// gnuplot ran it (before: "`...`" inside the double quotes of gp_quote ran).
TEST_F(Scratch, AResultFileRunsNothingThroughGnuplot) {
  if (!have_gnuplot()) GTEST_SKIP() << "gnuplot-nox is not installed";
  std::vector<std::string> markers;
  const auto marker = [&] {
    markers.push_back(path("ran-" + std::to_string(markers.size())));
    return markers.back();
  };
  std::vector<std::string> hostile;
  for (const char* form :
       {"`touch %s`", "system(\"touch %s\")", "system('touch %s')", "$(touch %s)",
        "x\nsystem(\"touch %s\")\nplot 1", "a; system('touch %s'); b", "' . system('touch %s') . '",
        "\" . system(\"touch %s\") . \"", "'`touch %s`'", "\"`touch %s`\"", "\\\"`touch %s`",
        "''x''''`touch %s`"}) {
    char text[512];
    std::snprintf(text, sizeof text, form, marker().c_str());
    hostile.push_back(text);
  }
  // A data block's end marker, then a command, in a key: never in a block.
  hostile.push_back("EOD\nsystem('touch " + marker() + "')");

  std::vector<ResultFile> files;
  json soak = json::parse(std::ifstream(fixture("soak-v6.json")));
  for (size_t i = 0; i < hostile.size(); ++i) {
    const std::string& h = hostile[i];
    json windows = json::array();
    for (int w = 0; w < 3; ++w)
      windows.push_back({{"start_s", w}, {"duration_s", 1}, {"rate_per_s", 10 + w}, {h, 40 + w}});
    json doc = {{"schema_version", 6}, {"tool", "rig " + h}};
    doc[h][h]["windows"] = windows;
    files.push_back({"unknown-" + std::to_string(i) + ".json", doc.dump()});
    for (auto& w : soak["soak"]["windows"]) w[h] = 1.5;  // four at most reach the plot
    if (i % 4 == 3 || i + 1 == hostile.size()) {
      files.push_back({"soak-" + std::to_string(i) + ".json", soak.dump()});
      soak = json::parse(std::ifstream(fixture("soak-v6.json")));
    }
  }
  auto page = html_report(files, {});
  ASSERT_TRUE(page.has_value()) << page.error().to_string();
  for (const auto& s : page->skipped) ADD_FAILURE() << "a plot was skipped: " << s;
  EXPECT_GE(page->plots, files.size());  // gnuplot read every script through
  for (const auto& m : markers) EXPECT_FALSE(fs::exists(m)) << "gnuplot ran a command: " << m;
  // The texts are drawn as text: each is in an SVG (gnuplot escapes < and &).
  const std::string& html = page->html;
  const size_t svg = html.find("<svg");
  ASSERT_NE(svg, std::string::npos);
  for (const auto& m : markers)
    EXPECT_NE(html.find("touch " + m, svg), std::string::npos) << m << " is not in the plots";
}

// The check every script passes before gnuplot sees it catches what a
// section could get wrong.
TEST(HtmlReport, AGnuplotScriptWithAStringGnuplotCouldRunIsRefused) {
  using report::html::gp_quote;
  using report::html::gp_script_fault;
  EXPECT_EQ(gp_quote("it's `x`\n;"), "'it''s `x` ;'");
  // gnuplot misreads ''' and '''': a zero-width space before such a quote.
  EXPECT_EQ(gp_quote("'a''"), "'\u200b''a''\u200b'''");
  EXPECT_EQ(gp_quote(""), "''");
  EXPECT_EQ(gp_script_fault("set title " + gp_quote("a'`b`'\"c\"") + "\nplot 1\n"), "");
  EXPECT_EQ(gp_script_fault("$d << EOD\n1 2.5e-3 NaN -4\nEOD\nplot $d using 1:2\n"), "");
  EXPECT_NE(gp_script_fault("set title \"x\"\nplot 1\n"), "");
  EXPECT_NE(gp_script_fault("plot 1 title `touch m`\n"), "");
  EXPECT_NE(gp_script_fault("plot 1 title 'open\n"), "");
  EXPECT_NE(gp_script_fault("$d << EOD\n1 label\nEOD\n"), "");
  EXPECT_NE(gp_script_fault("$d << EOD\n1 2\n"), "");
  EXPECT_NE(gp_script_fault("x = @macro\n"), "");
}

TEST(HtmlReport, LongSeriesAreThinnedForThePlotOnlyNeverForTheTables) {
  if (!have_gnuplot()) GTEST_SKIP() << "gnuplot-nox is not installed";
  json doc = {{"schema_version", 2}, {"tool", "rig future"}};
  json windows = json::array();
  for (int i = 0; i < 3000; ++i)
    windows.push_back(
        {{"start_s", i}, {"duration_s", 1.0}, {"inferences", 10}, {"rate_per_s", 10.0 + i % 3}});
  doc["results"]["windows"] = windows;
  HtmlReportSettings s;
  s.max_plot_points = 50;
  auto page = html_report({{"long.json", doc.dump()}}, s);
  ASSERT_TRUE(page.has_value());
  ASSERT_EQ(page->plots, 1u);
  // Points of "with linespoints" are <use> elements: about 50, not 3000.
  const std::string& h = page->html;
  size_t uses = 0;
  for (size_t at = h.find("<use"); at != std::string::npos; at = h.find("<use", at + 1)) ++uses;
  EXPECT_LT(uses, 50u + 40u);  // + the point shapes gnuplot defines
  EXPECT_GE(uses, 50u);
  // The table keeps every window.
  EXPECT_NE(h.find("<td>windows[2999].rate_per_s</td>"), std::string::npos);
}

// Issue 27: the lone-frame table has p95 beside p50, p90 and p99, with its
// interval; a document before version 6 shows it as n/a.
TEST(HtmlReport, LoneFrameTableHasP95AndItsInterval) {
  std::ifstream in(fixture("bench-v2.json"));
  json doc = json::parse(in);
  const auto old_page = html_report({{"v2.json", doc.dump()}});
  ASSERT_TRUE(old_page.has_value()) << old_page.error().to_string();
  EXPECT_NE(old_page->html.find("<th>p95</th>"), std::string::npos);
  doc["schema_version"] = 6;
  doc["latency"]["overall_ms"]["p95"] = 4.25;
  doc["latency"]["overall_ms"]["intervals"]["p95"] = {
      {"p", 95},        {"confidence", 0.95}, {"enough", true},    {"needs", 72},
      {"lower", 4.125}, {"upper", 4.5},       {"lower_rank", 180}, {"upper_rank", 196}};
  // A median without enough samples for its interval is said so, not printed.
  doc["latency"]["hardware_ms"]["intervals"]["p50"] = {
      {"p", 50},          {"confidence", 0.95}, {"enough", false},       {"needs", 6},
      {"lower", nullptr}, {"upper", nullptr},   {"lower_rank", nullptr}, {"upper_rank", nullptr}};
  const auto page = html_report({{"v6.json", doc.dump()}});
  ASSERT_TRUE(page.has_value()) << page.error().to_string();
  EXPECT_NE(page->html.find("<td>4.25 ms</td><td>4.125 ms .. 4.5 ms</td>"), std::string::npos)
      << page->html.substr(page->html.find("Lone-frame latency"), 2000);
  EXPECT_NE(page->html.find("<td>device compute</td><td>not enough samples</td>"),
            std::string::npos)
      << page->html.substr(page->html.find("Lone-frame latency"), 2000);
}

// A figure the document does not hold (a key an older version lacks, or one
// deleted by hand) reads as absent, never as the 0 its field starts at.
TEST(HtmlReport, AFigureTheDocumentDoesNotHoldIsShownAsAbsentNotAsZero) {
  HtmlReportSettings s;
  s.gnuplot = "/nonexistent/gnuplot";
  std::ifstream in(fixture("bench-v2.json"));
  json doc = json::parse(in);
  const auto full = html_report({{"b.json", doc.dump()}}, s);
  ASSERT_TRUE(full.has_value()) << full.error().to_string();
  // The figures the trimmed page must show as absent are numbers here
  // (allocate_ms is 0 in the fixture: a real 0 stays 0).
  for (const char* cell :
       {"<td>total</td><td>108.2 ms</td>", "<td>allocate + bind</td><td>0 ms</td>",
        "<tr><td>1</td><td>166.1 /s</td><td>344</td>",
        "<th>bytes per inference in / out</th><td>602.1 kB / 40 B</td>",
        "<td>8.222 ms</td><td>200</td></tr>"})
    EXPECT_NE(full->html.find(cell), std::string::npos) << cell;
  doc["ttfo"].erase("total_ms");
  doc["ttfo"].erase("allocate_ms");
  doc["steady"]["repeats"][0].erase("inferences");
  doc["bytes"].erase("payload_in_per_inference");
  doc["latency"]["overall_ms"].erase("count");
  const auto page = html_report({{"b.json", doc.dump()}}, s);
  ASSERT_TRUE(page.has_value()) << page.error().to_string();
  const std::string& h = page->html;
  for (const char* cell : {"<td>total</td><td>n/a</td>", "<td>allocate + bind</td><td>n/a</td>",
                           "<tr><td>1</td><td>166.1 /s</td><td>n/a</td>",
                           "<th>time to first output (TTFO)</th><td>n/a</td>",
                           "<th>bytes per inference in / out</th><td>n/a / 40 B</td>",
                           "<td>8.222 ms</td><td>n/a</td></tr>"})
    EXPECT_NE(h.find(cell), std::string::npos) << cell;
  for (const char* zero : {"<td>total</td><td>0 ms</td>", "<td>allocate + bind</td><td>0 ms</td>",
                           "<tr><td>1</td><td>166.1 /s</td><td>0</td>", "<td>0 B / 40 B</td>",
                           "<td>8.222 ms</td><td>0</td></tr>"})
    EXPECT_EQ(h.find(zero), std::string::npos) << zero;

  // A model summary without its bytes (sweep): absent, not 0 B.
  std::ifstream sin(fixture("sweep-v2.json"));
  json sweep = json::parse(sin);
  sweep["model"].erase("input_bytes");
  const auto sweep_page = html_report({{"s.json", sweep.dump()}}, s);
  ASSERT_TRUE(sweep_page.has_value());
  EXPECT_NE(sweep_page->html.find("<th>bytes per inference in / out</th><td>n/a / "),
            std::string::npos);
}

// An answer never states a figure its document lacks: fit's precision and
// compare's determinism read as not recorded, not as 0-bit or as a verdict.
TEST(HtmlReport, AnAnswerDoesNotStateAFigureTheDocumentLacks) {
  HtmlReportSettings s;
  s.gnuplot = "/nonexistent/gnuplot";
  std::ifstream fin(fixture("fit-v6.json"));
  json fit = json::parse(fin);
  json& rows = fit["results"]["rows"];
  ASSERT_FALSE(rows.empty());
  for (auto& row : rows) row.erase("bits");
  const auto fit_page = html_report({{"f.json", fit.dump()}}, s);
  ASSERT_TRUE(fit_page.has_value()) << fit_page.error().to_string();
  EXPECT_EQ(fit_page->html.find("0-bit"), std::string::npos);
  EXPECT_NE(fit_page->html.find("n/a-bit"), std::string::npos);

  std::ifstream cin(fixture("compare-v6.json"));
  json compare = json::parse(cin);
  ASSERT_FALSE(compare["variants"].empty());
  for (auto& v : compare["variants"]) v.erase("deterministic");
  const auto compare_page = html_report({{"c.json", compare.dump()}}, s);
  ASSERT_TRUE(compare_page.has_value()) << compare_page.error().to_string();
  const std::string& h = compare_page->html;
  EXPECT_EQ(h.find("deterministic on a rerun"), std::string::npos);
  EXPECT_NE(h.find("determinism not recorded for " + std::to_string(compare["variants"].size())),
            std::string::npos);
}

// Every kind has its own section: it leads with its answer, then the
// verdict and its reasons and the caveats (each once), then its own tables;
// none falls back to the generic page.
TEST(HtmlReport, EveryKindHasItsOwnSectionLeadingWithItsAnswer) {
  HtmlReportSettings s;
  s.gnuplot = "/nonexistent/gnuplot";
  const std::vector<std::pair<std::string, std::vector<std::string>>> kinds = {
      {"soak-v6.json",
       {"<p class=\"answer\">long-run rate ", "<td>short-run rate</td>", "<td>long-run rate</td>",
        "<td>drift (long / short - 1)</td>", "Rate per window over time"}},
      {"fit-v6.json",
       {"<p class=\"answer\">32-bit weights (", "<th>placement</th>",
        "<th>streamed per inference</th>", "<td>resident</td>"}},
      {"place-v6.json",
       {"<p class=\"answer\">choice: ", "<h3>Assignments, best first</h3>", "<h3>Candidates</h3>",
        "<h3>caveats</h3>"}},
      {"run-v6.json",
       {"<p class=\"answer\">1 output from 1 input", "<h3>Outputs</h3>", "<th>device timing</th>"}},
      {"check-v6.json", {"<p class=\"answer\">PASS: all ", "<td>PASS</td>", "<th>evidence</th>"}},
      {"compare-v6.json",
       {"<p class=\"answer\">2 variants: every output identical to the first&#39;s",
        "<th>bytes != #1</th>", "<td>identical</td>"}},
      {"diff-v6.json",
       {"changed outside the noise (A = b1.json, B = b2.json)", "<th>change</th>",
        "<td>latency.overall_ms</td>", "OUTSIDE (confidence interval)"}},
  };
  for (const auto& [name, parts] : kinds) {
    auto files = read_result_files({fixture(name)});
    ASSERT_TRUE(files.has_value()) << name;
    auto page = html_report(*files, s);
    ASSERT_TRUE(page.has_value()) << name << ": " << page.error().to_string();
    const std::string& h = page->html;
    EXPECT_EQ(h.find("No dedicated section"), std::string::npos) << name;
    // The answer comes before the verdict line, the raw figures after both.
    const size_t answer = h.find("<p class=\"answer\">"), verdict = h.find("<p class=\"verdict ");
    EXPECT_LT(answer, verdict) << name;
    EXPECT_LT(verdict, h.find("<h3>Every figure</h3>")) << name;
    for (const auto& part : parts)
      EXPECT_NE(h.find(part), std::string::npos) << name << ": " << part;
    // The raw table of every figure is folded away.
    EXPECT_NE(h.find("<details class=\"figures\"><summary>Settings (requested and effective)"),
              std::string::npos)
        << name;
  }
  // rig place: a caveat that its candidate and every assignment built from it
  // carry is said once.
  auto files = read_result_files({fixture("place-v6.json")});
  ASSERT_TRUE(files.has_value());
  auto page = html_report(*files, s);
  ASSERT_TRUE(page.has_value());
  const std::string caveat =
      "<li>" +
      esc("predict.json: predicted for usb3-gen2 from b1.json, not measured (its verdict is "
          "in that result)") +
      "</li>";
  const size_t first = page->html.find(caveat);
  ASSERT_NE(first, std::string::npos);
  EXPECT_EQ(page->html.find(caveat, first + 1), std::string::npos);
}

// rig place reads a predict result leniently: a figure it does not need may
// be absent; one it needs is named, never read as 0.
TEST(PlaceReader, APredictResultWithoutAFigureItNeedsIsRefusedByName) {
  std::ifstream in(fixture("predict-v2.json"));
  const json doc = json::parse(in);
  json trimmed = doc;
  trimmed["results"]["prediction"].erase("bus_utilization");
  trimmed["results"]["prediction"].erase("ttfo");
  auto ok = read_place_candidate(trimmed.dump(), "p.json");
  ASSERT_TRUE(ok.has_value()) << ok.error().to_string();
  EXPECT_TRUE(ok->predicted);
  EXPECT_GT(ok->rate_per_s, 0);
  for (const auto& [block, key, name] :
       {std::tuple{"link", "latency_ms", "settings.link.latency_ms"},
        std::tuple{"link", "bw_in_bytes_per_s", "settings.link.bw_in_bytes_per_s"},
        std::tuple{"source", "bytes_in", "results.source.bytes_in"},
        std::tuple{"prediction", "lone_ms", "results.prediction.lone_ms"}}) {
    json missing = doc;
    if (std::string(block) == "link")
      missing["settings"]["link"].erase(key);
    else
      missing["results"][block].erase(key);
    auto r = read_place_candidate(missing.dump(), "p.json");
    ASSERT_FALSE(r.has_value()) << name;
    EXPECT_EQ(r.error().message, std::string("p.json: field '") + name + "' is missing or null");
  }
}

TEST(HtmlReport, BadInputIsRefusedNamingTheFile) {
  auto r = html_report({{"x.json", "not json"}});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().message, "x.json: not JSON (expected a rig --json result)");
  r = html_report({{"v.json", R"({"schema_version": 99, "tool": "rig bench"})"}});
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message.find("v.json: schema_version 99 is not one this rig reads (1, 2"),
            std::string::npos)
      << r.error().message;
  r = html_report({{"t.json", R"({"schema_version": 2})"}});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().message, "t.json: field 'tool' is missing or not a string");
  r = html_report({});
  ASSERT_FALSE(r.has_value());
}

TEST(HtmlReport, OddButValidDocumentsAreShownNotTrippedOver) {
  // Keys with dots or digits, windows that are not all objects, nested arrays.
  const std::string text = R"({"schema_version": 2, "tool": "rig odd",
    "a.b": {"windows": [{"rate_per_s": 1}, 3, [1, 2], {"start_s": "x"}]},
    "123456789012345678901234567890": {"windows": [{"rate_per_s": 2, "x": null}]},
    "deep": [[{"windows": [{"rate_per_s": 1e308, "start_s": -1e308}]}]],
    "text": "<script>alert(1)</script>\u0001"})";
  HtmlReportSettings s;
  s.gnuplot = "/nonexistent/gnuplot";
  auto page = html_report({{"odd.json", text}}, s);
  ASSERT_TRUE(page.has_value()) << page.error().to_string();
  EXPECT_EQ(page->html.find("<script>"), std::string::npos);
  EXPECT_NE(page->html.find("&lt;script&gt;"), std::string::npos);
  auto csv = windows_csv({{"odd.json", text}});
  ASSERT_TRUE(csv.has_value());
  EXPECT_NE(csv->find("a.b.windows"), std::string::npos) << *csv;
  EXPECT_NE(csv->find("deep[0][0].windows"), std::string::npos) << *csv;
  EXPECT_TRUE(figures_csv({{"odd.json", text}}).has_value());
}

// ---------------------------------------------------------------------------
// CSV

// RFC 4180 rows (CRLF; quoted fields with doubled quotes).
std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows(1);
  std::string field;
  bool quoted = false, any = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      rows.back().push_back(field);
      field.clear();
    } else if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') {
      rows.back().push_back(field);
      field.clear();
      rows.emplace_back();
      ++i;
    } else {
      field += c;
    }
    any = true;
  }
  if (!any || rows.back().empty()) rows.pop_back();
  return rows;
}

// Every scalar leaf of a document, by its CSV path ("steady.repeats[0].rate_per_s").
void leaves(const json& node, const std::string& path, std::map<std::string, json>& out) {
  if (node.is_object()) {
    for (const auto& [k, v] : node.items()) leaves(v, path.empty() ? k : path + "." + k, out);
  } else if (node.is_array()) {
    for (size_t i = 0; i < node.size(); ++i)
      leaves(node[i], path + "[" + std::to_string(i) + "]", out);
  } else {
    out[path] = node;
  }
}

TEST(Export, FiguresCsvRoundTripsEveryLeafOfEveryDocument) {
  const auto files = all_fixtures();
  auto csv = figures_csv(files);
  ASSERT_TRUE(csv.has_value()) << csv.error().to_string();
  const auto rows = parse_csv(*csv);
  ASSERT_FALSE(rows.empty());
  EXPECT_EQ(rows[0], (std::vector<std::string>{"result", "section", "name", "value", "unit"}));
  std::map<std::string, std::map<std::string, json>> expected;
  for (const auto& f : files) leaves(json::parse(f.text), "", expected[f.path]);
  size_t expected_rows = 0;
  for (const auto& [_, l] : expected) expected_rows += l.size();
  EXPECT_EQ(rows.size() - 1, expected_rows);
  for (size_t i = 1; i < rows.size(); ++i) {
    const auto& r = rows[i];
    ASSERT_EQ(r.size(), 5u) << i;
    const std::string key =
        r[1] == "header" ? r[2] : r[1] + (r[2].empty() ? "" : (r[2][0] == '[' ? "" : ".") + r[2]);
    auto& doc = expected[r[0]];
    auto it = doc.find(key);
    ASSERT_NE(it, doc.end()) << r[0] << ": " << key;
    const json& v = it->second;
    if (v.is_null()) {
      EXPECT_EQ(r[3], "") << key;
    } else if (v.is_boolean()) {
      EXPECT_EQ(r[3], v.get<bool>() ? "true" : "false") << key;
    } else if (v.is_string()) {
      EXPECT_EQ(r[3], v.get<std::string>()) << key;
    } else {
      EXPECT_EQ(std::stod(r[3]), v.get<double>()) << key;  // exact: 17 digits
    }
    doc.erase(it);  // each leaf once
  }
  for (const auto& [path, l] : expected) EXPECT_TRUE(l.empty()) << path << " " << l.begin()->first;
  // Units come from the key names.
  EXPECT_NE(csv->find(",ttfo,total_ms,"), std::string::npos);
  EXPECT_NE(csv->find(",steady,rate_per_s.median,"), std::string::npos);
  for (const auto& r : rows) {
    if (r[1] == "ttfo" && r[2] == "total_ms") {
      EXPECT_EQ(r[4], "ms");
    }
    if (r[1] == "steady" && r[2] == "rate_per_s.median") {
      EXPECT_EQ(r[4], "/s");
    }
    if (r[1] == "steady" && r[2] == "rate_per_s.spread") {
      EXPECT_EQ(r[4], "fraction");
    }
    if (r[1] == "bytes" && r[2] == "payload_mb_per_s") {
      EXPECT_EQ(r[4], "MB/s");
    }
    if (r[1] == "bytes" && r[2] == "model_in") {
      EXPECT_EQ(r[4], "B");
    }
  }
}

TEST(Export, WindowsCsvHasEveryWindowOfEveryRepeat) {
  auto files = read_result_files({fixture("bench-v2.json"), fixture("unknown-v2.json")});
  ASSERT_TRUE(files.has_value());
  auto csv = windows_csv(*files);
  ASSERT_TRUE(csv.has_value());
  const auto rows = parse_csv(*csv);
  ASSERT_FALSE(rows.empty());
  EXPECT_EQ(rows[0],
            (std::vector<std::string>{"result", "series", "repeat", "window", "start_s",
                                      "duration_s", "inferences", "rate_per_s", "temperature_c"}));
  const json bench = json::parse((*files)[0].text);
  const json other = json::parse((*files)[1].text);
  size_t i = 1;
  for (size_t rep = 0; rep < bench["steady"]["repeats"].size(); ++rep) {
    const json& ws = bench["steady"]["repeats"][rep]["windows"];
    for (size_t w = 0; w < ws.size(); ++w, ++i) {
      ASSERT_LT(i, rows.size());
      EXPECT_EQ(rows[i][1], "steady.repeats[" + std::to_string(rep) + "].windows");
      EXPECT_EQ(rows[i][2], std::to_string(rep + 1));
      EXPECT_EQ(rows[i][3], std::to_string(w + 1));
      EXPECT_EQ(std::stod(rows[i][7]), ws[w]["rate_per_s"].get<double>());
      EXPECT_EQ(std::stoull(rows[i][6]), ws[w]["inferences"].get<uint64_t>());
      EXPECT_EQ(rows[i][8], "");
    }
  }
  const json& ws = other["results"]["windows"];
  for (size_t w = 0; w < ws.size(); ++w, ++i) {
    ASSERT_LT(i, rows.size());
    EXPECT_EQ(rows[i][1], "results.windows");
    EXPECT_EQ(rows[i][2], "");
    EXPECT_EQ(std::stod(rows[i][8]), ws[w]["temperature_c"].get<double>());
  }
  EXPECT_EQ(i, rows.size());
}

}  // namespace
}  // namespace rig

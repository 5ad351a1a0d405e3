// libFuzzer target: result files handed to rig report, rig export and the
// commands that read results (diff, predict, place, fit --ladder, history's
// documents) are untrusted bytes. The HTML page (plots off: no child process
// per input), the figures CSV, the windows CSV, the verdict reader, the bench
// reader, the diff and the history's record must each return a value or an
// Error for any input, never crash or hang (a document nested 20,000 deep
// once overflowed the stack). RIG_FUZZ_SEEDS=DIR writes a seed corpus (the
// fixture results of every kind, tests/report/fixtures, and deeply nested
// documents) to DIR.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <fstream>

#include "rig/history.hpp"
#include "rig/model.hpp"
#include "rig/report/bench_report.hpp"
#include "rig/report/diff_report.hpp"
#include "rig/report/document.hpp"
#include "rig/report/html_report.hpp"
#include "rig/report/result_files.hpp"

#ifndef RIG_FIXTURES_DIR
#error "RIG_FIXTURES_DIR: tests/report/fixtures, defined by fuzz/CMakeLists.txt"
#endif

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  const char* dir = std::getenv("RIG_FUZZ_SEEDS");
  if (!dir) return 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(RIG_FIXTURES_DIR, ec))
    std::filesystem::copy_file(entry.path(), std::filesystem::path(dir) / entry.path().filename(),
                               std::filesystem::copy_options::overwrite_existing, ec);
  // Nesting at, just past and far past the readers' bound, in a section, in
  // a window and at the top.
  const std::string head = R"({"schema_version": 6, "tool": "rig bench", "steady": )";
  const std::pair<const char*, std::string> deep[] = {
      {"deep-64", head + std::string(63, '[') + std::string(63, ']') + "}"},
      {"deep-65", head + std::string(65, '[') + std::string(65, ']') + "}"},
      {"deep-objects", head +
                           [] {
                             std::string s;
                             for (int i = 0; i < 5000; ++i) s += R"({"windows": [)";
                             for (int i = 0; i < 5000; ++i) s += "]}";
                             return s;
                           }() +
                           "}"},
      {"deep-20000", std::string(20000, '[') + std::string(20000, ']')}};
  for (const auto& [name, text] : deep)
    std::ofstream(std::filesystem::path(dir) / name, std::ios::binary) << text;
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::vector<rig::ResultFile> files = {
      {"fuzz.json", std::string(reinterpret_cast<const char*>(data), size)}};
  rig::HtmlReportSettings s;
  s.gnuplot = "/nonexistent/gnuplot";
  auto page = rig::html_report(files, s);
  if (page && page->html.find("</html>") == std::string::npos) __builtin_trap();
  (void)rig::figures_csv(files);
  (void)rig::windows_csv(files);
  const std::string& text = files.front().text;
  (void)rig::read_input_verdict(text, "fuzz.json", "fuzz");
  (void)rig::read_bench_json(text, "fuzz.json", "fuzz");
  (void)rig::diff_documents({"a", text}, {"b", text});
  (void)rig::record_of_document(text);
  return 0;
}

// libFuzzer target: result files handed to rig report and rig export are
// untrusted bytes. The HTML page (plots off: no child process per input), the
// figures CSV and the windows CSV must each return a value or an Error for
// any input, never crash or hang. RIG_FUZZ_SEEDS=DIR writes a seed corpus
// (the fixture results of every kind, tests/report/fixtures) to DIR.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "rig/model.hpp"
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
  return 0;
}

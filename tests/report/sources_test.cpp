// No reporter addresses a result by a path of keys: every key of a result
// is named in a table of keys (src/report/*_fields.hpp) or in the walkers
// that walk them (json_walkers.hpp), and json_common.cpp reads the header
// every document shares. Elsewhere in src/report a JSON lookup by a literal
// key (`doc["results"]` read, `.at("…")`, `.value("…", …)`, `.find("…")`,
// `.contains("…")`, `.count("…")`) or the old path helpers (`at_path`,
// `number_at`, `string_at`) fails this test, naming the file and the line.
// Writing a key (`doc["notes"] = …`) is not a lookup; a generic walk over a
// tree (items(), comparing a key it meets) is allowed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#ifndef RIG_SOURCE_DIR
#error "RIG_SOURCE_DIR: the source tree, defined by tests/report/CMakeLists.txt"
#endif

namespace {

namespace fs = std::filesystem;

// The visitor files: where keys are named.
bool is_visitor_file(const std::string& name) {
  const std::string suffix = "_fields.hpp";
  return name == "json_walkers.hpp" || name == "json_common.cpp" ||
         (name.size() > suffix.size() &&
          name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0);
}

// The code of a file with its comments and the text inside its string
// literals blanked (the quotes kept: `doc["results"]` reads `doc[" "]`), so a
// comment that names a helper, or a message that holds a bracket, is not a
// lookup.
std::string code_of(const std::string& text) {
  std::string out = text;
  bool in_string = false, in_char = false, line_comment = false, block_comment = false;
  for (size_t i = 0; i < out.size(); ++i) {
    const char c = out[i], next = i + 1 < out.size() ? out[i + 1] : '\0';
    if (line_comment) {
      if (c == '\n')
        line_comment = false;
      else
        out[i] = ' ';
    } else if (block_comment) {
      if (c == '*' && next == '/') {
        block_comment = false;
        out[i] = out[i + 1] = ' ';
        ++i;
      } else if (c != '\n') {
        out[i] = ' ';
      }
    } else if (in_string || in_char) {
      if (c == '\\') {
        out[i] = ' ';
        if (i + 1 < out.size() && out[i + 1] != '\n') out[++i] = ' ';
      } else if ((in_string && c == '"') || (in_char && c == '\'')) {
        in_string = in_char = false;
      } else if (c != '\n') {
        out[i] = ' ';
      }
    } else if (c == '/' && next == '/') {
      line_comment = true;
      out[i] = ' ';
    } else if (c == '/' && next == '*') {
      block_comment = true;
      out[i] = ' ';
    } else if (c == '"') {
      // A raw string (R"(...)") holds CSS or text, never a lookup: skip it whole.
      if (i > 0 && out[i - 1] == 'R' && next == '(') {
        const size_t end = out.find(")\"", i + 2);
        const size_t stop = end == std::string::npos ? out.size() : end;
        for (size_t k = i + 1; k < stop; ++k)
          if (out[k] != '\n') out[k] = ' ';
        i = end == std::string::npos ? out.size() : end + 1;
      } else {
        in_string = true;
      }
    } else if (c == '\'') {
      in_char = true;
    }
  }
  return out;
}

size_t line_of(const std::string& text, size_t pos) {
  return static_cast<size_t>(std::count(text.begin(), text.begin() + pos, '\n')) + 1;
}

// Every lookup by a literal key in `code`: "LINE: TEXT".
std::vector<std::string> lookups(const std::string& code) {
  std::vector<std::string> found;
  auto add = [&](size_t pos, size_t len) {
    found.push_back(std::to_string(line_of(code, pos)) + ": " + code.substr(pos, len) +
                    " (string contents blanked)");
  };
  for (const char* helper : {"at_path(", "number_at(", "string_at("})
    for (size_t p = code.find(helper); p != std::string::npos; p = code.find(helper, p + 1)) {
      const char before = p ? code[p - 1] : ' ';
      if (!(std::isalnum(static_cast<unsigned char>(before)) || before == '_')) add(p, 12);
    }
  for (const char* method : {".at(\"", ".value(\"", ".find(\"", ".contains(\"", ".count(\""})
    for (size_t p = code.find(method); p != std::string::npos; p = code.find(method, p + 1))
      add(p, 24);
  size_t chain_end = 0;
  // X["key"]... read, not assigned: a subscript after a name, ) or ], with
  // no '=' (other than '==') after the chain of subscripts.
  for (size_t p = code.find("[\""); p != std::string::npos; p = code.find("[\"", p + 1)) {
    if (p < chain_end) continue;  // a later subscript of a chain already judged
    size_t b = p;
    while (b > 0 && code[b - 1] == ' ') --b;
    const char before = b ? code[b - 1] : ' ';
    if (!(std::isalnum(static_cast<unsigned char>(before)) || before == '_' || before == ')' ||
          before == ']'))
      continue;
    size_t e = p;
    while (e < code.size() && code[e] == '[') {
      const size_t close = code.find(']', e);
      if (close == std::string::npos) break;
      e = close + 1;
      while (e < code.size() && code[e] == ' ') ++e;
    }
    chain_end = e;
    const bool assigned = e + 1 < code.size() && code[e] == '=' && code[e + 1] != '=';
    if (!assigned) add(p, std::min<size_t>(24, e - p));
  }
  return found;
}

TEST(ReportSources, NoReporterReadsAResultByAPathOfKeys) {
  const fs::path dir = fs::path(RIG_SOURCE_DIR) / "src" / "report";
  ASSERT_TRUE(fs::is_directory(dir)) << dir;
  size_t scanned = 0;
  std::vector<std::string> offences;
  // Every file below src/report, the page's sections (src/report/html) too.
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    const std::string ext = entry.path().extension().string();
    if (ext != ".cpp" && ext != ".hpp") continue;
    if (is_visitor_file(name)) continue;
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    ++scanned;
    const std::string where = fs::relative(entry.path(), dir).string();
    for (const auto& l : lookups(code_of(text.str()))) offences.push_back(where + ":" + l);
  }
  EXPECT_GT(scanned, 10u) << "src/report holds the reporters";
  std::string all;
  for (const auto& o : offences) all += "\n  " + o;
  EXPECT_TRUE(offences.empty()) << "lookups by a literal key outside the tables of keys:" << all;
}

// The scanner itself: it finds each kind of lookup and passes writes,
// comments and generic walks.
TEST(ReportSources, TheScannerFindsLookupsAndPassesWrites) {
  EXPECT_EQ(lookups(code_of("x = number_at(d, \"a.b\");")).size(), 1u);
  EXPECT_EQ(lookups(code_of("auto v = doc[\"results\"][\"x\"];")).size(), 1u);
  EXPECT_EQ(lookups(code_of("if (doc[\"kind\"] == \"rate\") {}")).size(), 1u);
  EXPECT_EQ(lookups(code_of("auto it = j.find(\"tool\");")).size(), 1u);
  EXPECT_EQ(lookups(code_of("int v = j.value(\"schema_version\", 0);")).size(), 1u);
  EXPECT_EQ(lookups(code_of("const json& d = j.at(\"steady\");")).size(), 1u);
  EXPECT_TRUE(lookups(code_of("doc[\"notes\"] = r.notes;")).empty());
  EXPECT_TRUE(lookups(code_of("doc[\"environment\"][\"mixed_clocks\"] = true;")).empty());
  EXPECT_TRUE(lookups(code_of("// number_at(d, \"a\") was the old way\n")).empty());
  EXPECT_TRUE(lookups(code_of("s = path + \"[\" + k + \"]\";")).empty());
  EXPECT_TRUE(lookups(code_of("for (auto& [k, v] : doc.items()) if (k == \"x\") {}")).empty());
}

}  // namespace

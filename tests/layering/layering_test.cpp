// The layering of the tree, as data, and a test that holds the tree to it.
//
// Data flows one way: cli -> report -> scenario -> engine (rig_core) -> the
// device interface (include/rig/device.hpp). The tables below are the whole
// contract; edit them, not the checks:
//  * kComponents: one row per component: the paths it owns (a folder ends in
//    '/', anything else is one file), the CMake targets it declares, and the
//    targets it may use: link, or include a header of. A component may always
//    use its own targets and kEveryComponentMayUse.
//  * kExternals: the third-party libraries whose headers and names are checked
//    as well as their targets (of the <...> includes only these are checked).
//  * kRules: edges the rows cannot express (a device may use rig_core but not
//    the engine in it) or that deserve their own reason; a rule is checked
//    before the row, and its reason is what a failure prints.
//
// What is checked, for every file under src/ and include/:
//  * src/**/CMakeLists.txt: each target a folder declares (rig_component,
//    add_library, add_executable) or edits (target_*) belongs to the folder's
//    component, and each item of each target_link_libraries is a target that
//    component may use.
//  * *.cpp, *.cc, *.c, *.hpp, *.h: the file belongs to a component; each quoted
//    #include names a path under include/ or src/ ("rig/model.hpp" is
//    include/rig/model.hpp, "proto/wire.hpp" is src/proto/wire.hpp, generated
//    headers included) that some row owns, and the including component may use
//    that row's targets.
//  * The same files do not name a kExternals namespace (nlohmann::) that their
//    component may not use: getting a header through another component's
//    header does not make the library the including component's to use.
// Only direct edges are checked: every component declares what it uses itself.
// One file on purpose (over 600 lines): the tables are the contract, and the
// checks that read them are short beside them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#ifndef RIG_SOURCE_DIR
#error "RIG_SOURCE_DIR: the source root, defined by tests/layering/CMakeLists.txt"
#endif

namespace rig::layering {
namespace {

struct Component {
  std::string_view name;
  std::vector<std::string_view> paths;    // relative to the source root
  std::vector<std::string_view> targets;  // the CMake targets it declares
  std::vector<std::string_view> may_use;  // targets it may link or include
};

struct External {
  std::string_view target;         // the CMake target that provides it
  std::string_view header_prefix;  // its headers: #include <header_prefix...>
  std::string_view name_prefix;    // its names in code
};

struct Rule {
  std::string_view who;   // a component name
  std::string_view what;  // a target, or an include as spelled: "\"rig/engine.hpp\"", "<nlohmann/"
  std::string_view why;   // printed when it is broken
};

// clang-format off
const std::vector<Component> kComponents = {
  {"core",
   {"src/core/",
    "include/rig/clock.hpp", "include/rig/units.hpp", "include/rig/error.hpp",
    "include/rig/stats.hpp", "include/rig/device.hpp", "include/rig/device_spec.hpp",
    "include/rig/environment.hpp", "include/rig/link_profile.hpp", "include/rig/engine.hpp",
    "include/rig/input_data.hpp", "include/rig/output_file.hpp",
    "include/rig/sha256.hpp", "include/rig/random.hpp", "include/rig/json_depth.hpp",
    "include/rig/fanout_observer.hpp",
    "include/rig/version.hpp"},  // generated into the build tree
   {"rig_core"},
   {}},
  {"model",
   {"src/model/", "include/rig/model.hpp", "include/rig/model_weights.hpp",
    "include/rig/model_graph.hpp"},
   {"rig_model"},
   {"rig_core", "rig_onnx"}},
  {"tensor_io",  // .npy files (untrusted bytes), tensor figures and comparisons
   {"src/tensor_io/", "include/rig/tensor_io.hpp"},
   {"rig_tensor_io"},
   {"rig_core"}},
  {"devices",  // cpu (OpenCV, ONNX Runtime when found: its profiler writes JSON), sim,
               // remote (speaks the wire protocol) and hailo (HailoRT, when found)
   {"src/devices/", "include/rig/device_registry.hpp"},
   {"rig_devices"},
   {"rig_core", "rig_model", "rig_proto", "rig_opencv", "rig_onnx", "rig_onnxruntime",
    "HailoRT::libhailort", "nlohmann_json::nlohmann_json"}},
  {"proto",  // the codec, and rig_proto_pb: protoc's output (proto/rig.pb.h)
   {"src/proto/"},
   {"rig_proto", "rig_proto_pb"},
   {"rig_core", "protobuf::libprotobuf"}},
  {"server",
   {"src/server/"},
   {"rig_server"},
   {"rig_core", "rig_proto", "rig_model"}},
  {"monitor",  // sampled beside every measurement: host, clocks, temperatures, power
   {"src/monitor/", "include/rig/monitor/"},
   {"rig_monitor"},
   {"rig_core"}},
  {"scenario",
   {"src/scenario/", "include/rig/scenario/"},
   {"rig_scenario"},
   {"rig_core", "rig_model", "rig_tensor_io", "rig_monitor"}},
  {"report",
   {"src/report/", "include/rig/report/"},
   {"rig_report"},
   {"rig_scenario", "rig_core", "rig_model", "rig_tensor_io", "rig_monitor",
    "nlohmann_json::nlohmann_json"}},
  {"history",  // the run history: result documents in SQLite
   {"src/history/", "include/rig/history.hpp"},
   {"rig_history"},
   {"rig_core", "SQLite::SQLite3", "nlohmann_json::nlohmann_json"}},
  {"cli",  // `rig` (its code in rig_cli_objects); rig_opencv and protobuf: it prints their versions
   {"src/cli/"},
   {"rig_cli", "rig_cli_objects"},
   {"rig", "rig_core", "rig_model", "rig_tensor_io", "rig_devices", "rig_proto", "rig_server",
    "rig_scenario", "rig_report", "rig_monitor", "rig_history", "CLI11::CLI11", "rig_opencv",
    "protobuf::libprotobuf"}},
  {"capi",  // librig_c.so: the C ABI over the device interface, bench and its JSON
   {"src/capi/", "include/rig/rig.h", "include/rig/rig.sigs"},
   {"rig_c"},
   {"rig_core", "rig_model", "rig_devices", "rig_scenario", "rig_report"}},
};

const std::vector<std::string_view> kEveryComponentMayUse = {
  "rig_build_flags", "tl::expected", "Threads::Threads"};

const std::vector<External> kExternals = {
  {"nlohmann_json::nlohmann_json", "nlohmann/", "nlohmann::"},
};

const std::vector<Rule> kRules = {
  {"scenario", "rig_report",
   "a scenario does not reach up to a reporter: reporters read scenario results "
   "(report -> scenario), never the reverse"},
  {"devices", "\"rig/engine.hpp\"",
   "a device implements the device interface (rig/device.hpp); the engine drives devices, "
   "never the reverse"},
  {"devices", "rig_scenario", "a device knows nothing of the scenarios that drive it"},
  {"devices", "rig_report", "a device knows nothing of how results are reported"},
  {"monitor", "rig_scenario",
   "the monitor watches a measurement; the scenarios attach it (scenario -> monitor), never the "
   "reverse"},
  {"monitor", "rig_report", "the monitor records series; reporters format them, never the reverse"},
  {"monitor", "rig_cli", "the monitor's roots and switches are settings the cli fills in"},
  {"cli", "nlohmann_json::nlohmann_json",
   "the cli writes and reads JSON only through rig_report: one component owns the schema"},
};
// clang-format on

// The checker works on any table, so that its own tests can use small ones.
struct Table {
  std::vector<Component> components;
  std::vector<std::string_view> every_component_may_use;
  std::vector<External> externals;
  std::vector<Rule> rules;
};

const Table kTable{kComponents, kEveryComponentMayUse, kExternals, kRules};

struct Violation {
  std::string file;  // relative to the source root
  int line = 0;
  std::string what;  // what the file includes, links or names
  std::string rule;  // the rule it breaks, and where that rule is written
};

template <class Range, class T>
bool contains(const Range& range, const T& value) {
  return std::find(std::begin(range), std::end(range), value) != std::end(range);
}

std::string join(const std::vector<std::string_view>& items) {
  std::string out;
  for (std::string_view item : items) {
    if (!out.empty()) out += ", ";
    out += item;
  }
  return out;
}

bool path_matches(std::string_view path, std::string_view entry) {
  return entry.ends_with('/') ? path.starts_with(entry) : path == entry;
}

// The row owning `path` (relative to the source root): the longest entry wins,
// so a file listed on its own beats the folder around it.
const Component* owner_of(const Table& table, std::string_view path) {
  const Component* best = nullptr;
  size_t best_size = 0;
  for (const Component& c : table.components) {
    for (std::string_view entry : c.paths) {
      if (path_matches(path, entry) && entry.size() > best_size) {
        best = &c;
        best_size = entry.size();
      }
    }
  }
  return best;
}

// The row owning a quoted include: the path it names under include/ or src/.
const Component* owner_of_include(const Table& table, std::string_view include) {
  const std::string in_include = "include/" + std::string(include);
  const std::string in_src = "src/" + std::string(include);
  const Component* public_owner = owner_of(table, in_include);
  return public_owner != nullptr ? public_owner : owner_of(table, in_src);
}

const Component* owner_of_target(const Table& table, std::string_view target) {
  for (const Component& c : table.components) {
    if (contains(c.targets, target)) return &c;
  }
  return nullptr;
}

const External* external_of_header(const Table& table, std::string_view header) {
  for (const External& e : table.externals) {
    if (!e.header_prefix.empty() && header.starts_with(e.header_prefix)) return &e;
  }
  return nullptr;
}

std::string row_rule(const Component& who) {
  const std::string allowed =
      who.may_use.empty() ? "no other component or library" : "only " + join(who.may_use);
  return std::string(who.name) + " may use " + allowed + " (kComponents, row \"" +
         std::string(who.name) + "\")";
}

// Why `who` may not use what is named `spelled` (an include as written, or
// empty) and provided by `targets`; nullopt when it may.
std::optional<std::string> refusal(const Table& table, const Component& who,
                                   std::string_view spelled,
                                   const std::vector<std::string_view>& targets) {
  for (const Rule& r : table.rules) {
    if (r.who != who.name) continue;
    const bool is_include = r.what.starts_with('"') || r.what.starts_with('<');
    const bool hit =
        is_include ? !spelled.empty() && spelled.starts_with(r.what) : contains(targets, r.what);
    if (hit) return std::string(r.why) + " (kRules, " + std::string(r.who) + ")";
  }
  for (std::string_view target : targets) {
    if (contains(who.targets, target) || contains(who.may_use, target) ||
        contains(table.every_component_may_use, target)) {
      return std::nullopt;
    }
  }
  return row_rule(who);
}

// --- CMake ------------------------------------------------------------------

struct CmakeArg {
  std::string text;  // without the quotes of a quoted or bracket argument
  int line = 0;
};

struct CmakeCommand {
  std::string name;  // lower case: CMake command names are case-insensitive
  int line = 0;
  std::vector<CmakeArg> args;
};

bool is_identifier_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
}

// The commands of a CMakeLists.txt with their arguments, each with the line it
// starts on. Understands line comments, bracket comments and arguments
// (#[[...]], [=[...]=]), quoted arguments and calls over many lines; enough of
// the language for a layering check, not a CMake implementation.
std::vector<CmakeCommand> parse_cmake(std::string_view text) {
  std::vector<CmakeCommand> commands;
  size_t i = 0;
  int line = 1;
  const auto at = [&](size_t k) { return k < text.size() ? text[k] : '\0'; };
  // At '[': the length of a bracket opening "[=*[", or 0.
  const auto bracket_open = [&](size_t k) -> size_t {
    size_t j = k + 1;
    while (at(j) == '=') ++j;
    return at(j) == '[' ? j - k + 1 : 0;
  };
  // Skips the bracket that opens at i (open_size chars); returns its content.
  const auto skip_bracket = [&](size_t open_size) {
    const std::string close = "]" + std::string(open_size - 2, '=') + "]";
    const size_t begin = i + open_size;
    size_t end = text.find(close, begin);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view content = text.substr(begin, end - begin);
    line += static_cast<int>(std::count(content.begin(), content.end(), '\n'));
    i = std::min(text.size(), end + close.size());
    return std::string(content);
  };
  // At '#': a bracket comment, or a comment to the end of the line.
  const auto skip_comment = [&] {
    if (at(i + 1) == '[') {
      if (const size_t open_size = bracket_open(i + 1); open_size > 0) {
        ++i;
        skip_bracket(open_size);
        return;
      }
    }
    while (i < text.size() && text[i] != '\n') ++i;
  };
  // At '"': the quoted content; escapes keep the escaped character.
  const auto skip_quoted = [&] {
    std::string content;
    ++i;
    while (i < text.size() && text[i] != '"') {
      if (text[i] == '\\' && i + 1 < text.size()) content += text[i++];
      if (text[i] == '\n') ++line;
      content += text[i++];
    }
    ++i;
    return content;
  };

  while (i < text.size()) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
      ++i;
      continue;
    }
    if (c == '#') {
      skip_comment();
      continue;
    }
    if (!is_identifier_char(c)) {
      ++i;
      continue;
    }
    CmakeCommand command;
    command.line = line;
    while (is_identifier_char(at(i))) {
      command.name += static_cast<char>(std::tolower(static_cast<unsigned char>(text[i])));
      ++i;
    }
    size_t open = i;
    while (at(open) == ' ' || at(open) == '\t') ++open;
    if (at(open) != '(') continue;
    i = open + 1;

    std::string token;
    int token_line = 0;
    bool in_token = false;
    const auto flush = [&] {
      if (in_token) command.args.push_back({token, token_line});
      token.clear();
      in_token = false;
    };
    const auto extend = [&](std::string_view part) {
      if (!in_token) token_line = line;
      in_token = true;
      token += part;
    };
    int depth = 1;
    while (i < text.size() && depth > 0) {
      const char d = text[i];
      if (d == '\n') {
        flush();
        ++line;
        ++i;
      } else if (d == ' ' || d == '\t' || d == '\r') {
        flush();
        ++i;
      } else if (d == '#') {
        flush();
        skip_comment();
      } else if (d == '(' || d == ')') {
        flush();
        depth += d == '(' ? 1 : -1;
        ++i;
      } else if (d == '"') {
        // A quoted argument, or quotes inside an unquoted one (NAME="value").
        const bool inside = in_token;
        const int quote_line = line;
        const std::string content = skip_quoted();
        if (inside) {
          extend("\"" + content + "\"");
        } else {
          command.args.push_back({content, quote_line});
        }
      } else if (d == '[' && !in_token && bracket_open(i) > 0) {
        const int bracket_line = line;
        command.args.push_back({skip_bracket(bracket_open(i)), bracket_line});
      } else if (d == '\\' && i + 1 < text.size()) {
        extend(text.substr(i, 2));
        i += 2;
      } else {
        extend(text.substr(i, 1));
        ++i;
      }
    }
    flush();
    commands.push_back(std::move(command));
  }
  return commands;
}

const std::vector<std::string_view> kDeclaringCommands = {"rig_component", "add_library",
                                                          "add_executable"};
const std::vector<std::string_view> kLinkKeywords = {
    "PUBLIC", "PRIVATE",   "INTERFACE", "LINK_PUBLIC", "LINK_PRIVATE", "LINK_INTERFACE_LIBRARIES",
    "debug",  "optimized", "general"};

// The violations of one CMakeLists.txt at `path` (relative to the source root).
std::vector<Violation> check_cmake(const Table& table, const std::string& path,
                                   std::string_view text) {
  std::vector<Violation> out;
  const Component* owner = owner_of(table, path);
  if (owner == nullptr) {
    out.push_back({path, 1, "this CMakeLists.txt belongs to no component",
                   "add its folder to the paths of a row of kComponents"});
    return out;
  }
  for (const CmakeCommand& command : parse_cmake(text)) {
    const bool declares = contains(kDeclaringCommands, command.name);
    const bool edits = command.name.starts_with("target_");
    if ((!declares && !edits) || command.args.empty()) continue;

    const CmakeArg& target = command.args.front();
    if (!contains(owner->targets, target.text)) {
      const Component* other = owner_of_target(table, target.text);
      const std::string owner_name(owner->name);
      out.push_back(
          {path, target.line, (declares ? "declares " : command.name + " edits ") + target.text,
           other != nullptr ? target.text + " belongs to " + std::string(other->name) + ", not " +
                                  owner_name + ": a folder builds only its own component's targets"
                            : "no row of kComponents declares " + target.text +
                                  ": add it to the targets of row \"" + owner_name + "\""});
      continue;
    }
    if (command.name != "target_link_libraries") continue;

    std::string scope;
    for (size_t k = 1; k < command.args.size(); ++k) {
      const CmakeArg& item = command.args[k];
      if (contains(kLinkKeywords, item.text)) {
        scope = item.text;
        continue;
      }
      const std::string what =
          target.text + " links " + item.text + (scope.empty() ? "" : " (" + scope + ")");
      if (item.text.find("${") != std::string::npos || item.text.find("$<") != std::string::npos) {
        out.push_back({path, item.line, what,
                       "the layering test cannot resolve a variable or generator expression: "
                       "link a named target"});
        continue;
      }
      if (auto why = refusal(table, *owner, "", {item.text})) {
        out.push_back({path, item.line, what, *why});
      }
    }
  }
  return out;
}

// --- C++ sources --------------------------------------------------------------

// `text` with its comments and the contents of its raw strings blanked out
// (newlines kept, so lines still count): a line of either may read like a
// directive. Other string and character literals are skipped, not blanked, so
// that "//" in a string starts no comment and a quoted #include keeps its path.
std::string strip_comments(std::string_view text) {
  std::string out(text);
  const size_t n = text.size();
  const auto blank = [&](size_t k) {
    if (out[k] != '\n') out[k] = ' ';
  };
  size_t i = 0;
  while (i < n) {
    const char c = text[i];
    const char next = i + 1 < n ? text[i + 1] : '\0';
    const char previous = i > 0 ? text[i - 1] : '\0';
    if (c == '/' && next == '/') {
      while (i < n && text[i] != '\n') blank(i++);
    } else if (c == '/' && next == '*') {
      blank(i++);
      blank(i++);
      while (i < n && !(text[i] == '*' && i + 1 < n && text[i + 1] == '/')) blank(i++);
      for (int k = 0; k < 2 && i < n; ++k) blank(i++);
    } else if (c == 'R' && next == '"' &&
               (!is_identifier_char(previous) || contains(std::string_view("8LuU"), previous))) {
      // A raw string: R"delimiter( ... )delimiter". Its content is blanked
      // too: it spans lines, and a line of it may read like a directive.
      const size_t open = text.find('(', i + 2);
      if (open == std::string_view::npos) break;
      const std::string close = ")" + std::string(text.substr(i + 2, open - i - 2)) + "\"";
      const size_t end = text.find(close, open);
      const size_t content_end = end == std::string_view::npos ? n : end;
      for (size_t k = open + 1; k < content_end; ++k) blank(k);
      i = end == std::string_view::npos ? n : end + close.size();
    } else if (c == '"' || (c == '\'' && !is_identifier_char(previous))) {
      // A digit separator (1'000) follows a digit, so it starts no literal.
      ++i;
      while (i < n && text[i] != c && text[i] != '\n') i += text[i] == '\\' ? 2 : 1;
      ++i;
    } else {
      ++i;
    }
  }
  return out;
}

struct Include {
  std::string path;
  bool angled = false;
  int line = 0;

  std::string spelled() const { return angled ? "<" + path + ">" : "\"" + path + "\""; }
};

// The #include directives of comment-stripped source text.
std::vector<Include> parse_includes(std::string_view stripped) {
  std::vector<Include> includes;
  int line = 0;
  size_t begin = 0;
  while (begin <= stripped.size()) {
    size_t end = stripped.find('\n', begin);
    if (end == std::string_view::npos) end = stripped.size();
    std::string_view rest = stripped.substr(begin, end - begin);
    ++line;
    begin = end + 1;

    const auto skip_space = [&] {
      while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t')) rest.remove_prefix(1);
    };
    skip_space();
    if (!rest.starts_with('#')) continue;
    rest.remove_prefix(1);
    skip_space();
    if (!rest.starts_with("include")) continue;
    rest.remove_prefix(std::string_view("include").size());
    skip_space();
    if (rest.empty() || (rest.front() != '"' && rest.front() != '<')) continue;
    const bool angled = rest.front() == '<';
    const size_t close = rest.find(angled ? '>' : '"', 1);
    if (close == std::string_view::npos) continue;
    includes.push_back({std::string(rest.substr(1, close - 1)), angled, line});
  }
  return includes;
}

// The include violations of one source file at `path`, and the violation of
// the file itself when no row owns it.
std::vector<Violation> check_includes(const Table& table, const std::string& path,
                                      std::string_view text) {
  std::vector<Violation> out;
  const Component* owner = owner_of(table, path);
  if (owner == nullptr) {
    out.push_back({path, 1, "this file belongs to no component",
                   "add its folder (or the file) to the paths of a row of kComponents"});
    return out;
  }
  for (const Include& include : parse_includes(strip_comments(text))) {
    const std::string spelled = include.spelled();
    std::vector<std::string_view> targets;
    std::string provider;
    if (include.angled) {
      const External* external = external_of_header(table, include.path);
      if (external == nullptr) continue;  // a system or third-party header not in kExternals
      targets = {external->target};
      provider = external->target;
    } else {
      const Component* used = owner_of_include(table, include.path);
      if (used == nullptr) {
        out.push_back({path, include.line, "includes " + spelled,
                       "it maps to no component: name it by its path under include/ or src/ "
                       "(\"rig/...\", \"<folder>/...\"), and add that path to a row of "
                       "kComponents"});
        continue;
      }
      if (used == owner) continue;
      targets = used->targets;
      provider = std::string(used->name);
    }
    if (auto why = refusal(table, *owner, spelled, targets)) {
      out.push_back({path, include.line, "includes " + spelled + " (" + provider + ")", *why});
    }
  }
  return out;
}

// The files of `path` that name a kExternals namespace their component may
// not use: one violation per file and library, at the first line naming it.
std::vector<Violation> check_names(const Table& table, const std::string& path,
                                   std::string_view text) {
  std::vector<Violation> out;
  const Component* owner = owner_of(table, path);
  if (owner == nullptr) return out;  // check_includes reports the file
  const std::string stripped = strip_comments(text);
  for (const External& external : table.externals) {
    if (external.name_prefix.empty()) continue;
    const auto why = refusal(table, *owner, "", {external.target});
    if (!why) continue;
    int line = 0;
    int first = 0;
    int count = 0;
    std::istringstream lines(stripped);
    for (std::string l; std::getline(lines, l);) {
      ++line;
      if (l.find(external.name_prefix) == std::string::npos) continue;
      if (count++ == 0) first = line;
    }
    if (count == 0) continue;
    out.push_back({path, first,
                   "names " + std::string(external.name_prefix) + " (" +
                       std::string(external.target) + ") on " + std::to_string(count) +
                       (count == 1 ? " line" : " lines"),
                   *why});
  }
  return out;
}

// --- The tree -----------------------------------------------------------------

const std::filesystem::path kSourceRoot = RIG_SOURCE_DIR;

std::string read_file(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Paths relative to the source root, sorted, of the files under `folders`
// that `wanted` accepts.
template <class Wanted>
std::vector<std::string> files_under(const std::vector<std::string>& folders, Wanted wanted) {
  std::vector<std::string> files;
  for (const std::string& folder : folders) {
    const std::filesystem::path root = kSourceRoot / folder;
    if (!std::filesystem::is_directory(root)) continue;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
      if (entry.is_regular_file() && wanted(entry.path())) {
        files.push_back(entry.path().lexically_relative(kSourceRoot).generic_string());
      }
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<std::string> cmake_files() {
  return files_under(
      {"src"}, [](const std::filesystem::path& p) { return p.filename() == "CMakeLists.txt"; });
}

std::vector<std::string> source_files() {
  return files_under({"src", "include"}, [](const std::filesystem::path& p) {
    return contains(std::vector<std::string>{".cpp", ".cc", ".c", ".hpp", ".h"},
                    p.extension().string());
  });
}

void report(const std::vector<Violation>& violations) {
  for (const Violation& v : violations) {
    ADD_FAILURE_AT(v.file.c_str(), v.line) << v.what << "\n  rule: " << v.rule;
  }
}

template <class Check>
void check_tree(const std::vector<std::string>& files, Check check) {
  ASSERT_TRUE(std::filesystem::exists(kSourceRoot / "src/core/CMakeLists.txt"))
      << "RIG_SOURCE_DIR is not the source root: " << kSourceRoot;
  ASSERT_FALSE(files.empty()) << "no files to check under " << kSourceRoot;
  for (const std::string& file : files) report(check(kTable, file, read_file(kSourceRoot / file)));
}

TEST(Layering, CmakeTargetsLinkOnlyWhatTheTableAllows) {
  check_tree(cmake_files(), check_cmake);
}

TEST(Layering, IncludesFollowTheTable) {
  check_tree(source_files(), check_includes);
}

TEST(Layering, NoFileNamesALibraryItsComponentMayNotUse) {
  check_tree(source_files(), check_names);
}

// --- The checker's own tests ----------------------------------------------------

// a <- b <- c: b may use a; c may use b, and a only through rules.
Table small_table() {
  return Table{{{"a", {"src/a/", "include/x/a.hpp"}, {"x_a"}, {}},
                {"b", {"src/b/"}, {"x_b", "x_b_gen"}, {"x_a", "ext::lib"}},
                {"c", {"src/c/"}, {"x_c"}, {"x_a", "x_b"}}},
               {"x_flags"},
               {{"ext::lib", "ext/", "ext::"}},
               {{"c", "\"x/a.hpp\"", "c reaches a only through b"}}};
}

TEST(LayeringChecker, ParsesMultiLineCallsWithKeywordsCommentsAndQuotes) {
  const auto commands = parse_cmake(
      "# a comment: target_link_libraries(x_a PUBLIC x_c)\n"
      "target_link_libraries(x_b\n"
      "  PUBLIC x_a  # why x_a\n"
      "  PRIVATE \"ext::lib\"\n"
      "  #[[ x_c ]] x_flags)\n"
      "target_compile_definitions(x_b PRIVATE NAME=\"${VALUE}\")\n");
  ASSERT_EQ(commands.size(), 2u);
  EXPECT_EQ(commands[0].name, "target_link_libraries");
  EXPECT_EQ(commands[0].line, 2);
  ASSERT_EQ(commands[0].args.size(), 6u);
  const std::vector<std::pair<std::string, int>> expected = {
      {"x_b", 2}, {"PUBLIC", 3}, {"x_a", 3}, {"PRIVATE", 4}, {"ext::lib", 4}, {"x_flags", 5}};
  for (size_t k = 0; k < expected.size(); ++k) {
    EXPECT_EQ(commands[0].args[k].text, expected[k].first);
    EXPECT_EQ(commands[0].args[k].line, expected[k].second);
  }
  ASSERT_EQ(commands[1].args.size(), 3u);
  EXPECT_EQ(commands[1].args[2].text, "NAME=\"${VALUE}\"");
}

TEST(LayeringChecker, ALinkTheTableDoesNotAllowIsNamedWithItsLine) {
  const auto violations = check_cmake(small_table(), "src/b/CMakeLists.txt",
                                      "add_library(x_b_gen STATIC gen.cc)\n"
                                      "rig_component(x_b b.cpp)\n"
                                      "target_link_libraries(x_b PUBLIC x_a x_b_gen x_flags\n"
                                      "  PRIVATE ext::lib\n"
                                      "  x_c)\n");
  ASSERT_EQ(violations.size(), 1u);
  EXPECT_EQ(violations[0].file, "src/b/CMakeLists.txt");
  EXPECT_EQ(violations[0].line, 5);
  EXPECT_EQ(violations[0].what, "x_b links x_c (PRIVATE)");
  EXPECT_EQ(violations[0].rule, "b may use only x_a, ext::lib (kComponents, row \"b\")");
}

TEST(LayeringChecker, AFolderBuildsOnlyItsOwnTargets) {
  const auto violations = check_cmake(small_table(), "src/b/sub/CMakeLists.txt",
                                      "target_sources(x_b PRIVATE sub.cpp)\n"
                                      "target_sources(x_a PRIVATE sneaky.cpp)\n"
                                      "add_library(x_new STATIC new.cpp)\n"
                                      "target_link_libraries(x_b PRIVATE ${SOME_LIBRARY})\n");
  ASSERT_EQ(violations.size(), 3u);
  EXPECT_EQ(violations[0].line, 2);
  EXPECT_NE(violations[0].rule.find("x_a belongs to a, not b"), std::string::npos);
  EXPECT_EQ(violations[1].what, "declares x_new");
  EXPECT_NE(violations[1].rule.find("no row of kComponents declares x_new"), std::string::npos);
  EXPECT_EQ(violations[2].line, 4);
  EXPECT_NE(violations[2].rule.find("cannot resolve"), std::string::npos);
  EXPECT_EQ(check_cmake(small_table(), "src/d/CMakeLists.txt", "").size(), 1u);
}

TEST(LayeringChecker, IncludesMapByTheirPathAndFollowTheTable) {
  const auto violations = check_includes(small_table(), "src/c/c.cpp",
                                         "#include <vector>\n"
                                         "#include <ext/ext.hpp>\n"
                                         "#include \"b/b.hpp\"\n"
                                         "#include \"c/c.hpp\"\n"
                                         "#include \"x/a.hpp\"\n"
                                         "  #  include \"nowhere.hpp\"\n");
  ASSERT_EQ(violations.size(), 3u);
  EXPECT_EQ(violations[0].line, 2);
  EXPECT_EQ(violations[0].what, "includes <ext/ext.hpp> (ext::lib)");
  EXPECT_EQ(violations[1].line, 5);
  EXPECT_EQ(violations[1].what, "includes \"x/a.hpp\" (a)");
  EXPECT_EQ(violations[1].rule, "c reaches a only through b (kRules, c)");
  EXPECT_EQ(violations[2].line, 6);
  EXPECT_NE(violations[2].rule.find("maps to no component"), std::string::npos);

  const auto unowned = check_includes(small_table(), "src/d/d.cpp", "");
  ASSERT_EQ(unowned.size(), 1u);
  EXPECT_EQ(unowned[0].what, "this file belongs to no component");
}

TEST(LayeringChecker, CommentsAndStringsHideNoIncludeAndFakeNone) {
  const auto violations = check_includes(small_table(), "src/a/a.cpp",
                                         "// #include \"b/b.hpp\"\n"
                                         "/* several lines\n"
                                         "#include \"b/b.hpp\"\n"
                                         "*/ const char* s = \"/*\";\n"
                                         "const char* r = R\"(\n"
                                         "#include \"b/b.hpp\" )\";\n"
                                         "int n = 1'000; char q = '\"';\n"
                                         "#include \"b/b.hpp\"  // x_a may not use x_b\n");
  ASSERT_EQ(violations.size(), 1u);
  EXPECT_EQ(violations[0].line, 8);
}

TEST(LayeringChecker, NamesOfAnExternalLibraryNeedItInTheTable) {
  const auto violations =
      check_names(small_table(), "src/c/c.cpp", "// ext::lib in a comment\nint x = ext::f();\n");
  ASSERT_EQ(violations.size(), 1u);
  EXPECT_EQ(violations[0].line, 2);
  EXPECT_EQ(violations[0].what, "names ext:: (ext::lib) on 1 line");
  EXPECT_TRUE(check_names(small_table(), "src/b/b.cpp", "int x = ext::f();\n").empty());
}

// A typo in the table would make a rule that never fires: hold it to itself.
TEST(LayeringRules, TheTableNamesOnlyWhatItDeclares) {
  for (const Rule& r : kTable.rules) {
    EXPECT_TRUE(std::any_of(kTable.components.begin(), kTable.components.end(),
                            [&](const Component& c) { return c.name == r.who; }))
        << "kRules names no row: " << r.who;
    const bool is_include = r.what.starts_with('"') || r.what.starts_with('<');
    const bool is_external = std::any_of(kTable.externals.begin(), kTable.externals.end(),
                                         [&](const External& e) { return e.target == r.what; });
    EXPECT_TRUE(is_include || is_external || owner_of_target(kTable, r.what) != nullptr)
        << "kRules names an unknown target: " << r.what;
  }
  for (const Component& c : kTable.components) {
    for (std::string_view target : c.targets) {
      EXPECT_EQ(owner_of_target(kTable, target), &c) << target << " is in two rows";
    }
  }
}

// The rules this table exists for, on the real table.

TEST(LayeringRules, IncludesMapToTheComponentsOfTheFinalLayout) {
  const std::vector<std::pair<std::string_view, std::string_view>> expected = {
      {"rig/scenario/ladder.hpp", "scenario"},
      {"rig/report/json.hpp", "report"},
      {"rig/model.hpp", "model"},
      {"rig/engine.hpp", "core"},
      {"rig/device.hpp", "core"},
      {"rig/version.hpp", "core"},
      {"devices/sim/sim_device.hpp", "devices"},
      {"proto/rig.pb.h", "proto"},
      {"server/server.hpp", "server"},
      {"scenario/detail.hpp", "scenario"},
      {"report/detail.hpp", "report"},
      {"cli/command.hpp", "cli"},
      {"core/detail.hpp", "core"},
      {"model/onnx_util.hpp", "model"}};
  for (const auto& [include, component] : expected) {
    const Component* owner = owner_of_include(kTable, include);
    ASSERT_NE(owner, nullptr) << include;
    EXPECT_EQ(owner->name, component) << include;
  }
  EXPECT_EQ(owner_of(kTable, "include/rig/model.hpp")->name, "model");
}

TEST(LayeringRules, AScenarioNeitherIncludesNorLinksAReporter) {
  const auto includes = check_includes(kTable, "src/scenario/ladder.cpp",
                                       "#include \"rig/engine.hpp\"\n"
                                       "#include \"rig/model.hpp\"\n"
                                       "#include \"rig/report/json.hpp\"\n"
                                       "#include \"report/detail.hpp\"\n");
  ASSERT_EQ(includes.size(), 2u);
  EXPECT_EQ(includes[0].line, 3);
  EXPECT_EQ(includes[1].line, 4);
  EXPECT_NE(includes[0].rule.find("(kRules, scenario)"), std::string::npos);
  EXPECT_EQ(check_includes(kTable, "include/rig/scenario/ladder.hpp",
                           "#include \"rig/report/json.hpp\"\n")
                .size(),
            1u);

  const auto links = check_cmake(kTable, "src/scenario/CMakeLists.txt",
                                 "rig_component(rig_scenario ladder.cpp)\n"
                                 "target_link_libraries(rig_scenario PUBLIC rig_core rig_model\n"
                                 "  rig_report)\n");
  ASSERT_EQ(links.size(), 1u);
  EXPECT_EQ(links[0].what, "rig_scenario links rig_report (PUBLIC)");
  EXPECT_NE(links[0].rule.find("(kRules, scenario)"), std::string::npos);
}

TEST(LayeringRules, ADeviceIncludesNeitherTheEngineAScenarioNorAReporter) {
  const auto violations = check_includes(kTable, "src/devices/sim/sim_device.cpp",
                                         "#include \"rig/device.hpp\"\n"
                                         "#include \"rig/model.hpp\"\n"
                                         "#include \"proto/wire.hpp\"\n"
                                         "#include \"rig/engine.hpp\"\n"
                                         "#include \"rig/scenario/ladder.hpp\"\n"
                                         "#include \"scenario/detail.hpp\"\n"
                                         "#include \"rig/report/json.hpp\"\n");
  ASSERT_EQ(violations.size(), 4u);
  for (size_t k = 0; k < violations.size(); ++k) {
    EXPECT_EQ(violations[k].line, static_cast<int>(k) + 4);
    EXPECT_NE(violations[k].rule.find("(kRules, devices)"), std::string::npos);
  }
}

TEST(LayeringRules, TheCliUsesNoJsonLibraryDirectly) {
  const auto includes = check_includes(kTable, "src/cli/main.cpp",
                                       "#include <CLI/CLI.hpp>\n"
                                       "#include <nlohmann/json.hpp>\n"
                                       "#include <nlohmann/json_fwd.hpp>\n");
  ASSERT_EQ(includes.size(), 2u);
  EXPECT_EQ(includes[0].what, "includes <nlohmann/json.hpp> (nlohmann_json::nlohmann_json)");
  EXPECT_NE(includes[0].rule.find("(kRules, cli)"), std::string::npos);
  EXPECT_EQ(check_names(kTable, "src/cli/main.cpp", "nlohmann::json j;\n").size(), 1u);
  EXPECT_EQ(check_cmake(kTable, "src/cli/CMakeLists.txt",
                        "target_link_libraries(rig_cli PRIVATE rig nlohmann_json::nlohmann_json)")
                .size(),
            1u);

  EXPECT_TRUE(check_includes(kTable, "src/report/json_report.cpp", "#include <nlohmann/json.hpp>\n")
                  .empty());
  EXPECT_EQ(
      check_includes(kTable, "src/scenario/ladder.cpp", "#include <nlohmann/json.hpp>\n").size(),
      1u);
}

TEST(LayeringRules, CoreIncludesNoOtherComponent) {
  const auto violations = check_includes(kTable, "include/rig/engine.hpp",
                                         "#include \"rig/clock.hpp\"\n"
                                         "#include \"rig/version.hpp\"\n"
                                         "#include \"core/detail.hpp\"\n"
                                         "#include \"rig/model.hpp\"\n"
                                         "#include \"devices/sim/sim_device.hpp\"\n"
                                         "#include \"proto/wire.hpp\"\n"
                                         "#include \"server/server.hpp\"\n"
                                         "#include \"rig/scenario/ladder.hpp\"\n"
                                         "#include \"rig/report/json.hpp\"\n"
                                         "#include \"cli/command.hpp\"\n");
  ASSERT_EQ(violations.size(), 7u);
  EXPECT_EQ(violations[0].line, 4);
  EXPECT_EQ(violations[0].rule,
            "core may use no other component or library (kComponents, row \"core\")");
  EXPECT_EQ(check_includes(kTable, "src/core/engine.cpp", "#include \"rig/model.hpp\"\n").size(),
            1u);
}

}  // namespace
}  // namespace rig::layering

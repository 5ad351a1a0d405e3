// rig history [--model M] [--device D] [--since T] [--tool T] [--show ID] [--json FILE]
// rig diff RUN_A RUN_B [--json FILE]   (history ids or result files)
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "cli/command.hpp"
#include "cli/options.hpp"
#include "rig/history.hpp"
#include "rig/model.hpp"
#include "rig/report/diff_report.hpp"
#include "rig/report/document.hpp"
#include "rig/units.hpp"

namespace rig::cli {
namespace {

struct HistoryCommandOptions {
  std::string model, device, since, tool, json;
  std::optional<int64_t> show;
};

Result<History> open_history() {
  const std::string path = history_path();
  if (path.empty())
    return fail(ErrorCode::invalid_argument,
                history_options().disabled
                    ? "--no-history: there is no history to read"
                    : "no history path: give --history PATH or set RIG_HISTORY (or HOME)");
  return History::open(path);
}

std::string short_sha(const std::string& sha) {
  return sha.size() > 12 ? sha.substr(0, 12) : (sha.empty() ? "-" : sha);
}

int run_history_command(const HistoryCommandOptions& o) {
  HistoryFilter f;
  f.model = o.model;
  f.device = o.device;
  f.tool = o.tool;
  if (!o.since.empty()) {
    auto since = parse_since(o.since, now_unix_ms());
    if (!since) return report_error(since.error());
    f.since_unix_ms = *since;
  }
  auto history = open_history();
  if (!history) return report_error(history.error());
  if (o.show) {
    auto run = history->get(*o.show);
    if (!run) return report_error(run.error());
    std::fputs(terminal_safe(run->document).c_str(), stdout);
    if (!run->document.empty() && run->document.back() != '\n') std::fputc('\n', stdout);
    return 0;
  }
  auto runs = history->list(f);
  if (!runs) return report_error(runs.error());
  std::string out = "rig history: " + std::to_string(runs->size()) + " run" +
                    (runs->size() == 1 ? "" : "s") + " in " + history->path() + "\n";
  char buf[1024];
  std::snprintf(buf, sizeof buf, "%6s  %-20s  %-11s  %-18s  %-12s  %-8s  %s\n", "id", "time (UTC)",
                "tool", "model", "sha256", "verdict", "device");
  out += buf;
  for (const auto& r : *runs) {
    std::snprintf(buf, sizeof buf, "%6lld  %-20s  %-11s  %-18s  %-12s  %-8s  %s\n",
                  static_cast<long long>(r.id), r.time_utc.c_str(), r.tool.c_str(),
                  (r.model_name.empty() ? "-" : r.model_name).c_str(),
                  short_sha(r.model_sha256).c_str(), (r.verdict.empty() ? "-" : r.verdict).c_str(),
                  r.device_spec.c_str());
    out += buf;
  }
  std::fputs(terminal_safe(out).c_str(), stdout);
  if (!o.json.empty()) {
    const std::string doc = runs_to_json(*runs);
    if (auto ok = write_json_file(o.json, doc); !ok) return report_error(ok.error());
  }
  return 0;
}

// A run named by its history id (digits) or a result file.
Result<DiffSide> load_side(const std::string& what, std::optional<History>& history) {
  std::error_code ec;
  const bool digits = !what.empty() && what.find_first_not_of("0123456789") == std::string::npos;
  if (!digits || std::filesystem::exists(what, ec)) {
    auto bytes = read_file(what);
    if (!bytes) return tl::unexpected(bytes.error());
    return DiffSide{what, std::string(reinterpret_cast<const char*>(bytes->data()), bytes->size())};
  }
  if (!history) {
    auto h = open_history();
    if (!h) return tl::unexpected(h.error());
    history.emplace(std::move(*h));
  }
  auto run = history->get(std::stoll(what));
  if (!run) return tl::unexpected(run.error());
  return DiffSide{"run " + what, run->document};
}

int run_diff_command(const std::string& a, const std::string& b, const std::string& json) {
  if (a.empty() || b.empty())
    return report_error({ErrorCode::invalid_argument,
                         "give two runs: history ids (rig history lists them) or result files"});
  if (!json.empty())
    if (auto ok = check_writable("--json", json); !ok) return report_error(ok.error());
  std::optional<History> history;
  auto sa = load_side(a, history);
  if (!sa) return report_error(sa.error());
  auto sb = load_side(b, history);
  if (!sb) return report_error(sb.error());
  auto d = diff_documents(*sa, *sb);
  if (!d) return report_error(d.error());
  std::fputs(terminal_safe(format_diff_text(*d)).c_str(), stdout);
  if (!json.empty())
    if (auto ok = write_json_file(json, diff_to_json(*d)); !ok) return report_error(ok.error());
  return d->outside > 0 ? 1 : 0;
}

}  // namespace

Command add_history_command(CLI::App& app) {
  auto o = std::make_shared<HistoryCommandOptions>();
  CLI::App* sub = app.add_subcommand("history", "List the runs the history holds");
  sub->add_option("--model", o->model, "runs of this model: part of its name, or a sha256 prefix");
  sub->add_option("--device", o->device, "runs on this device: part of its spec");
  sub->add_option("--since", o->since,
                  "runs since a date (2026-12-01[T11:20]) or a time back (2h, 3d)");
  sub->add_option("--tool", o->tool, "runs of one tool, e.g. 'rig bench'");
  sub->add_option("--show", o->show, "print run ID's stored result document");
  sub->add_option("--json", o->json, "also write the listing as JSON to this file");
  return {sub, [o] { return run_history_command(*o); }};
}

Command add_diff_command(CLI::App& app) {
  auto a = std::make_shared<std::string>();
  auto b = std::make_shared<std::string>();
  auto json = std::make_shared<std::string>();
  CLI::App* sub = app.add_subcommand(
      "diff",
      "Compare two runs figure by figure, say which changes are outside the noise and what "
      "differs in the environment (exit 1 when a figure changed outside the noise)");
  sub->add_option("run_a", *a, "a history id or a result file");
  sub->add_option("run_b", *b, "a history id or a result file");
  sub->add_option("--json", *json, "also write the comparison as JSON to this file");
  return {sub, [a, b, json] { return run_diff_command(*a, *b, *json); }};
}

}  // namespace rig::cli

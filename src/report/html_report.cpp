// rig report's page. Each document is read into its typed result through its
// tool's table of keys (the *_fields.hpp beside this file: the same tables
// the writers use), never by a path of keys, and each field the document
// does not hold is shown as absent, never as 0 (Typed, html/page.hpp). One
// section per kind of result (kKinds below; html/*_sections.cpp) leads with
// its answer, then the verdict's reasons and the caveats, once, then its
// tables and plots. The verdict and confound summary and the three
// quantities side by side come from the typed results; every figure, the
// settings and the environment are a generic walk over the document's tree,
// folded away, so an unknown kind still shows every figure (and its
// per-window series, if it has any).
//
// One file on purpose, just over 600 lines: the page's frame (kinds, typed
// reads, the caveats grouped by cause) is one job; the sections are in
// html/*_sections.cpp.
#include "rig/report/html_report.hpp"

#include <algorithm>
#include <cctype>
#include <deque>
#include <functional>
#include <map>
#include <set>

#include "report/ab_fields.hpp"
#include "report/bench_fields.hpp"
#include "report/diff_fields.hpp"
#include "report/fit_fields.hpp"
#include "report/html/page.hpp"
#include "report/ladder_fields.hpp"
#include "report/loop_fields.hpp"
#include "report/place_fields.hpp"
#include "report/predict_fields.hpp"
#include "report/profile_fields.hpp"
#include "report/result_doc.hpp"
#include "report/run_fields.hpp"
#include "report/soak_fields.hpp"
#include "report/sweep_fields.hpp"
#include "report/text_common.hpp"
#include "rig/units.hpp"
#include "rig/version.hpp"

namespace rig {
namespace {

using namespace report::html;
using report::json;
using report::JsonReader;
using report::ResultDoc;

// A table of every leaf under `node` (a section), name / value / unit.
void figures_table(std::string& out, const json& node, const std::string& section) {
  json wrapper = json::object();
  wrapper[section] = node;
  table_head(out, {"figure", "value", "unit"}, "figures");
  for (const auto& f : report::flatten(wrapper))
    table_row(out, {f.name.empty() ? f.section : f.name, report::display(*f.value), f.unit});
  table_end(out);
}

template <class T, class F>
void read_into(Typed& t, F&& fields) {
  report::read_leniently(t.doc->doc, t.doc->version, t.result.emplace<T>(), t.absent, fields);
}

template <class T, void (*Fields)(JsonReader&, T&)>
void read_kind(Typed& t) {
  read_into<T>(t, Fields);
}

// rig sweep writes two kinds of result: the depth sweep, and (kind "rate")
// the rate search.
void read_sweep(Typed& t) {
  if (t.common.kind == "rate")
    read_into<RateSweepResult>(t, report::rate_sweep_fields<JsonReader>);
  else
    read_into<SweepResult>(t, report::sweep_fields<JsonReader>);
}

// Every kind of result with a section of its own: its tool, how the page
// reads it (its table of keys), and its section. A new kind is one line.
struct Kind {
  std::string_view tool;
  void (*read)(Typed&);
  const Section* section;
};
const Kind kKinds[] = {
    {"rig bench", read_kind<BenchResult, report::bench_fields<JsonReader>>, &kBenchSection},
    {"rig loop", read_kind<LoopResult, report::loop_fields<JsonReader>>, &kLoopSection},
    {"rig soak", read_kind<SoakResult, report::soak_fields<JsonReader>>, &kSoakSection},
    {"rig profile", read_kind<ProfileResult, report::profile_fields<JsonReader>>, &kProfileSection},
    {"rig ladder", read_kind<LadderResult, report::ladder_fields<JsonReader>>, &kLadderSection},
    {"rig sweep", read_sweep, &kSweepSection},
    {"rig ab", read_kind<AbResult, report::ab_fields<JsonReader>>, &kAbSection},
    {"rig predict", read_kind<report::PredictDoc, report::predict_fields<JsonReader>>,
     &kPredictSection},
    {"rig fit", read_kind<FitResult, report::fit_fields<JsonReader>>, &kFitSection},
    {"rig place", read_kind<PlaceResult, report::place_fields<JsonReader>>, &kPlaceSection},
    {"rig diff", read_kind<DiffResult, report::diff_fields<JsonReader>>, &kDiffSection},
    {"rig run", read_kind<RunResult, report::run_fields<JsonReader>>, &kRunSection},
    {"rig check", read_kind<CheckResult, report::check_fields<JsonReader>>, &kCheckSection},
    {"rig compare", read_kind<CompareResult, report::compare_fields<JsonReader>>, &kCompareSection},
};

const Kind* kind_of(const ResultDoc& r) {
  for (const auto& k : kKinds)
    if (k.tool == r.tool) return &k;
  return nullptr;
}

void read_typed(const ResultDoc& r, Typed& t) {
  t.doc = &r;
  t.common = report::read_leniently<report::CommonDoc>(r.doc, r.version,
                                                       report::common_fields<JsonReader>);
  if (const Kind* k = kind_of(r)) k->read(t);
}

// A message's cause: its topic ("virtual clock: ...", whoever says it), else
// what it says of its subject ("4k: too few frames per window (4 in 2
// windows, ...)" and "4k out-heavy: too few frames per window (4 in 1
// window, ...)" are one cause), digits aside. The subject is what comes
// before the first ": " (a rung, a quantile), when it is short.
constexpr std::string_view kSubjectEnd = ": ";              // "4k: too few frames ..."
constexpr std::string_view kDetailStarts[] = {" (", "; "};  // what follows the cause

std::string cause_of(const std::string& m) {
  for (std::string_view topic : {"virtual clock:", "mixed clocks:", "host busy before the run"})
    if (m.starts_with(topic) ||
        m.find(std::string(kSubjectEnd) + std::string(topic)) != std::string::npos)
      return std::string(topic.substr(0, topic.find(':')));
  const size_t colon = m.find(kSubjectEnd);
  std::string rest = colon != std::string::npos && colon <= 40 ? m.substr(colon + 2) : m;
  size_t detail = rest.size();
  for (std::string_view start : kDetailStarts) detail = std::min(detail, rest.find(start));
  rest = rest.substr(0, detail);
  for (char& c : rest)
    if (std::isdigit(static_cast<unsigned char>(c))) c = '#';
  return rest;
}

// The subject of a message (what comes before its first ": "), or "".
std::string subject_of(const std::string& m) {
  const size_t colon = m.find(kSubjectEnd);
  return colon != std::string::npos && colon <= 40 ? m.substr(0, colon) : "";
}

// Messages grouped by cause, in the order first found: one line each, the
// first message's words, "(N like it)" where a cause has several, and where
// they were found when given.
struct Flag {
  std::string cause, message, where;
  size_t count = 0;
  std::vector<std::string> others;  // the subjects of the others of its cause
};
void add_flag(std::vector<Flag>& flags, const std::string& message, const std::string& where) {
  const std::string cause = cause_of(message);
  for (auto& f : flags)
    if (f.cause == cause) {
      // A topic said in other words is one flag; a rule's findings are counted.
      const bool topic = cause == "virtual clock" || cause == "mixed clocks" ||
                         cause == "host busy before the run";
      if (f.message != message && !topic &&
          std::find(f.others.begin(), f.others.end(), message) == f.others.end()) {
        ++f.count;
        f.others.push_back(message);
      }
      if (!where.empty() && f.where.find(where) == std::string::npos)
        f.where += (f.where.empty() ? "" : ", ") + where;
      return;
    }
  flags.push_back({cause, message, where, 1, {}});
}
std::vector<std::string> flag_lines(const std::vector<Flag>& flags) {
  std::vector<std::string> out;
  for (const auto& f : flags) {
    std::string more;
    for (const auto& o : f.others) {
      const std::string subject = subject_of(o);
      if (!subject.empty()) more += (more.empty() ? ": " : ", ") + subject;
    }
    out.push_back(
        f.message +
        (f.count > 1 ? " (and " + std::to_string(f.count - 1) + " more like it" + more + ")" : "") +
        (f.where.empty() ? "" : " (" + f.where + ")"));
  }
  return out;
}

// On a virtual clock the host's load before the run moves no figure
// (docs/methodology.md; the verdict's quiet_host rule leaves it out too).
void drop_host_load_on_virtual_clock(std::vector<Flag>& flags) {
  const bool virtual_clock = std::any_of(flags.begin(), flags.end(),
                                         [](const Flag& f) { return f.cause == "virtual clock"; });
  if (virtual_clock)
    std::erase_if(flags, [](const Flag& f) { return f.cause == "host busy before the run"; });
}

// Every confound flag a document holds: warnings anywhere (environment,
// devices, verdict, a monitor), and the flags that qualify the figures. A
// generic walk over the document's tree: any block may carry warnings. One
// line per cause, naming every key that holds it.
std::vector<std::string> confounds(const ResultDoc& r) {
  std::vector<Flag> found;
  std::function<void(const json&, const std::string&)> walk = [&](const json& n,
                                                                  const std::string& where) {
    if (!n.is_object()) return;
    for (const auto& [k, v] : n.items()) {
      const std::string path = where.empty() ? k : where + "." + k;
      if ((k == "warnings" || k == "confounds" || k == "flags") && v.is_array()) {
        for (const auto& s : v)
          if (s.is_string()) add_flag(found, s.get<std::string>(), path);
      } else if ((k == "virtual_clock" || k == "mixed_clocks" || k == "limiting") &&
                 v.is_boolean() && v.get<bool>()) {
        add_flag(found,
                 k == "virtual_clock" ? "virtual clock: the figures are simulated"
                 : k == "mixed_clocks"
                     ? "mixed clocks: the device's timings are simulated, the host's real"
                     : "the rig may be setting the rate",
                 path);
      } else if (v.is_object()) {
        walk(v, path);
      }
    }
  };
  walk(r.doc, "");
  drop_host_load_on_virtual_clock(found);
  return flag_lines(found);
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

void ttfo_quantities(Quantities& q, const Typed& t, const TtfoResult& ttfo) {
  q.ttfo = fig(t, ttfo.total);
  q.load = fig(t, ttfo.load);
  q.allocate = fig(t, ttfo.allocate);
  q.first = fig(t, ttfo.first_inference);
}

// A model summary's bytes each way (sweep, ab, the rate search): absent when
// the document names none (model_summary_fields reads no tensor then).
void model_bytes(Quantities& q, const ModelInfo& m) {
  if (!m.inputs.empty()) q.in = static_cast<double>(m.input_bytes());
  if (!m.outputs.empty()) q.out = static_cast<double>(m.output_bytes());
}

std::vector<Quantities> quantities_of(const Typed& t) {
  const ResultDoc& r = *t.doc;
  std::vector<Quantities> cols;
  Quantities q;
  q.label = r.path + " (" + r.tool + ")\n" + device_of(t);
  if (const auto* b = as<BenchResult>(t)) {
    ttfo_quantities(q, t, b->ttfo);
    q.rate = fig(t, b->steady.rate.median);
    q.spread = fig(t, b->steady.rate.spread);
    q.time_per_frame = fig(t, b->steady.time_per_frame_ms);
    q.rate_note = "median of the repeats";
    q.in = fig(t, b->bytes.payload_in);
    q.out = fig(t, b->bytes.payload_out);
    q.link_in = fig(t, b->bytes.link_in);
    q.link_out = fig(t, b->bytes.link_out);
    q.mb_per_s = fig(t, b->bytes.payload_mb_per_s);
    q.link_mb_per_s = fig(t, b->bytes.link_mb_per_s);
  } else if (const auto* l = as<LoopResult>(t)) {
    ttfo_quantities(q, t, l->ttfo);  // absent before version 2
    q.rate = fig(t, l->host_rate);
    // v5: the interval's midpoint; before, frames completed / duration.
    q.device_rate =
        fig(t, l->device_rate) ? fig(t, l->device_rate) : fig(t, l->loop.frames_per_second);
    q.rate_note = "host-observed pipelined run";
    q.in = fig(t, l->steady.payload_in_per_inference);
    q.out = fig(t, l->steady.payload_out_per_inference);
    q.link_in = fig(t, l->steady.link_in_per_inference);
    q.link_out = fig(t, l->steady.link_out_per_inference);
  } else if (const auto* rs = as<RateSweepResult>(t)) {
    q.ttfo = fig(t, rs->ttfo.total);
    q.rate = fig(t, rs->search.best_rate);
    q.rate_note =
        "highest offered rate with p99 <= " + num(fig(t, rs->effective.latency_bound), "ms");
    model_bytes(q, rs->model);
  } else if (const auto* w = as<SweepResult>(t)) {
    q.ttfo = fig(t, w->ttfo.total);
    q.rate = fig(t, w->best_rate);
    q.rate_note =
        "best depth " + (w->best_depth ? std::to_string(*w->best_depth) : std::string("null"));
    model_bytes(q, w->model);
  } else if (const auto* p = as<report::PredictDoc>(t)) {
    const Prediction& x = p->prediction;
    q.ttfo = fig(t, x.ttfo_ms);
    q.load = fig(t, p->source.load_ms);
    q.allocate = fig(t, p->source.allocate_ms);
    q.first = fig(t, p->source.first_inference_ms);
    q.ttfo_note = "predicted";
    q.rate = fig(t, x.rate);
    q.rate_note = "predicted on " + x.link.name;
    q.in = fig(t, p->source.bytes_in);
    q.out = fig(t, p->source.bytes_out);
    q.mb_per_s = fig(t, p->traffic_mb_per_s);
  } else if (const auto* a = as<AbResult>(t)) {
    for (const auto* side : {&a->a, &a->b}) {
      const bool is_a = side == &a->a;
      Quantities s;
      s.label = r.path + " (rig ab, side " + (is_a ? "A" : "B") + ")\n" + side->spec.given_text();
      const Summary& rate = is_a ? a->rate_a : a->rate_b;
      s.rate = fig(t, rate.median);
      s.spread = fig(t, rate.spread);
      s.rate_note = "median of the pairs";
      model_bytes(s, a->model);
      fill_bytes_rate(s);
      cols.push_back(s);
    }
    return cols;
  } else if (const auto* s = as<SoakResult>(t)) {
    ttfo_quantities(q, t, s->ttfo);
    q.rate = fig(t, s->run.rate);
    q.rate_note = "the whole soak run";
    model_bytes(q, s->model);
  } else if (const auto* f = as<ProfileResult>(t)) {
    ttfo_quantities(q, t, f->ttfo);
  } else {
    return cols;  // a kind without a table of keys measures none of them here
  }
  fill_bytes_rate(q);
  cols.push_back(q);
  return cols;
}

void summary_section(std::string& out, const std::deque<Typed>& docs) {
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
  // One row per result (an A/B result: per side), so that any number of
  // results fits the page's width; each cell its figure, then its parts.
  out +=
      "<table class=\"quantities\">\n<thead><tr><th>result</th><th>time to first output "
      "(TTFO)</th><th>steady-state rate</th><th>bytes per inference in / out</th></tr>"
      "</thead>\n<tbody>\n";
  for (const auto& q : cols) {
    const auto cell = [&](const std::string& lead, const std::vector<std::string>& parts) {
      std::string c = "<td><b>" + esc(lead) + "</b>";
      for (const auto& p : parts) c += "<br><small>" + esc(p) + "</small>";
      return c + "</td>";
    };
    std::string label = esc(q.label);
    if (const size_t nl = label.find('\n'); nl != std::string::npos)
      label.replace(nl, 1, "<br><small>") += "</small>";
    out += "<tr><th class=\"long\">" + label + "</th>";
    out +=
        cell(num(q.ttfo, "ms") + (q.ttfo_note.empty() ? "" : " (" + q.ttfo_note + ")"),
             {"load (read + parse + compile) " + num(q.load, "ms"),
              "allocate + bind " + num(q.allocate, "ms"), "first inference " + num(q.first, "ms")});
    out += cell(num(q.rate, "/s") + (q.rate_note.empty() ? "" : " (" + q.rate_note + ")"),
                {"spread " + (q.spread ? num(*q.spread * 100, "%") : std::string("n/a")),
                 "time per frame " + num(q.time_per_frame, "ms"),
                 "device's own rate (on-device loop) " + num(q.device_rate, "/s")});
    out += cell(num(q.in, "B") + " / " + num(q.out, "B"),
                {"on the link " + num(q.link_in, "B") + " / " + num(q.link_out, "B"),
                 "payload traffic at that rate " + num(q.mb_per_s, "MB/s"),
                 "link traffic at that rate " + num(q.link_mb_per_s, "MB/s")});
    out += "</tr>\n";
  }
  table_end(out);
  out += "</section>\n";
}

// The head of a result: its answer, the three quantities where it measures
// them, and the verdict with its one-line reason. What a reader came for,
// before any table.
void headline(std::string& out, const Typed& t, const Section* section,
              const std::vector<std::string>& caveats) {
  out += "<div class=\"headline\">\n";
  if (section) out += "<p class=\"answer\">" + esc(section->answer(t)) + "</p>\n";
  const auto cols = quantities_of(t);
  if (!cols.empty()) {
    out += "<table class=\"headline-figures\">\n";
    if (cols.size() > 1) {  // rig ab: a column per side
      out += "<thead><tr><th></th>";
      for (size_t i = 0; i < cols.size(); ++i)
        out += "<th>side " + std::string(1, static_cast<char>('A' + i)) + "</th>";
      out += "</tr></thead>\n";
    }
    out += "<tbody>\n";
    const auto row = [&](const char* name, const std::function<std::string(const Quantities&)>& f) {
      out += "<tr><th>" + esc(name) + "</th>";
      for (const auto& q : cols) out += "<td>" + esc(f(q)) + "</td>";
      out += "</tr>\n";
    };
    row("time to first output (TTFO)", [](const Quantities& q) {
      return num(q.ttfo, "ms") + (q.ttfo_note.empty() ? "" : " (" + q.ttfo_note + ")");
    });
    row("steady-state rate", [](const Quantities& q) {
      return num(q.rate, "/s") + (q.rate_note.empty() ? "" : " (" + q.rate_note + ")");
    });
    row("bytes per inference in / out",
        [](const Quantities& q) { return num(q.in, "B") + " / " + num(q.out, "B"); });
    out += "</tbody>\n</table>\n";
  }
  const std::string verdict = verdict_of(t);
  std::string reason;
  if (!t.common.verdict) {
    reason = "the document holds no verdict";
  } else if (!t.common.verdict->valid) {
    const auto& r = t.common.verdict->reasons;
    reason = r.empty() ? "no reason given"
                       : r.front() + (r.size() > 1 ? " (and " + std::to_string(r.size() - 1) +
                                                         " more reasons below)"
                                                   : "");
  } else {
    reason = caveats.empty() ? "every rule passed"
                             : "every rule passed, with " + std::to_string(caveats.size()) +
                                   " caveat" + (caveats.size() == 1 ? "" : "s") + " below";
  }
  out += "<p class=\"verdict " +
         std::string(verdict == "VALID"     ? "valid"
                     : verdict == "INVALID" ? "invalid"
                                            : "none") +
         "\">verdict: " + esc(verdict) + " <span class=\"reason\">— " + esc(reason) +
         "</span></p>\n</div>\n";
}

// Any kind without its own section: its per-window series, if any (a
// monitor's series on the second axis).
void generic_section(Context& c, const Typed& t) {
  c.out += "<p>No dedicated section for '" + esc(t.doc->tool) +
           "' in this rig: every figure of the document is shown below.</p>\n";
  window_plot(c, t.doc->doc, t.doc->version, "Rate per window over time");
}

void result_section(Context& c, const Typed& t, size_t index) {
  const ResultDoc& r = *t.doc;
  std::string& out = c.out;
  const std::string id = "result-" + std::to_string(index);
  // "rig bench: MODEL on DEVICE", leaving out what the document does not name.
  const std::string model = model_of(t), device = device_of(t);
  out += "<section class=\"result\" id=\"" + id + "\">\n<h2>" + std::to_string(index) + ". " +
         esc(r.tool) + (model.empty() ? "" : ": " + esc(model)) +
         (device.empty() ? "" : " on <span class=\"long\">" + esc(device) + "</span>") + "</h2>\n";
  out += "<p class=\"source\">" + esc(r.path) + ", schema version " + std::to_string(r.version) +
         "</p>\n";
  const Kind* kind = kind_of(r);
  const Section* section =
      kind && !std::holds_alternative<std::monostate>(t.result) ? kind->section : nullptr;
  // The headline first (the answer, the three quantities, the verdict and
  // its reason), then the reasons and the caveats (one line per cause),
  // then the kind's tables.
  std::vector<Flag> flags;
  if (t.common.verdict)
    for (const auto& w : t.common.verdict->warnings) add_flag(flags, w, "");
  if (section && section->caveats)
    for (const auto& w : section->caveats(t)) add_flag(flags, w, "");
  drop_host_load_on_virtual_clock(flags);
  const std::vector<std::string> caveats = flag_lines(flags);
  headline(out, t, section, caveats);
  list(out, "reasons", t.common.verdict ? t.common.verdict->reasons : std::vector<std::string>());
  list(out, "caveats", caveats);
  // A note that says what a caveat says is not said again.
  std::vector<std::string> notes;
  for (const auto& n : t.common.notes)
    if (std::none_of(flags.begin(), flags.end(),
                     [&](const Flag& f) { return f.cause == cause_of(n); }))
      notes.push_back(n);
  list(out, "notes", notes);
  if (section)
    section->body(c, t);
  else
    generic_section(c, t);

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
.long, td.long, table.figures td, table.wrap td { overflow-wrap: anywhere; }
p.answer { font-size: 1.05em; font-weight: bold; }
td.flags { min-width: 24em; overflow-wrap: anywhere; }
thead th { background: #f0f0f0; }
table.quantities { width: 100%; table-layout: fixed; }
table.quantities th, table.quantities td { overflow-wrap: anywhere; }
table.quantities tbody th { font-weight: normal; width: 28%; }
table.quantities small { color: #555; }
div.headline { border: 1px solid #c8c8e8; background: #f7f7ff; padding: .4em .9em; margin: .6em 0 1em; }
div.headline p.answer { font-size: 1.15em; margin: .4em 0; overflow-wrap: anywhere; }
table.headline-figures { font-size: 1em; margin: .4em 0; }
table.headline-figures td { font-weight: bold; overflow-wrap: anywhere; }
p.verdict span.reason { font-weight: normal; color: #222; overflow-wrap: anywhere; }
td.flags ul { max-width: 60em; }
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
  std::deque<Typed> typed;  // in place: Typed::absent holds addresses into each
  for (const auto& d : docs) read_typed(d, typed.emplace_back());
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
  // Side by side is for several results; one result's headline says it all.
  if (typed.size() > 1) summary_section(out, typed);
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
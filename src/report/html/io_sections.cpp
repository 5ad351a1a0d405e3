// The page's sections of the kinds that run a model on exact bytes: rig run,
// rig check and rig compare (page.hpp, Section).
#include "report/html/page.hpp"
#include "report/text_common.hpp"

namespace rig::report::html {
namespace {

std::string shape_type(const TensorInfo& t) {
  return shape_text(t.shape) + " " + std::string(to_string(t.type));
}

// One row per tensor: its name, shape and type, and its bytes' statistics.
void stats_table(Context& c, const Typed& t, const char* title,
                 const std::vector<std::pair<const TensorInfo*, const TensorStats*>>& rows) {
  if (rows.empty()) return;
  c.out += "<h3>" + std::string(title) + "</h3>\n";
  table_head(c.out, {"tensor", "shape and type", "mean", "min", "max", "non-finite", "sha256"},
             "wrap");
  for (const auto& [info, s] : rows)
    table_row(c.out, {info->name, shape_type(*info), num(s->mean), num(s->min), num(s->max),
                      count(t, s->nonfinite), s->sha256});
  table_end(c.out);
}

std::string run_answer(const Typed& t) {
  const RunResult& r = *as<RunResult>(t);
  if (!r.references.empty())
    return r.references_passed ? "PASS: every output within tolerance of its reference"
                               : "FAIL: outputs outside tolerance of their references";
  std::string out = std::to_string(r.outputs.size()) + " output" +
                    (r.outputs.size() == 1 ? "" : "s") + " from " +
                    std::to_string(r.inputs.size()) + " input" + (r.inputs.size() == 1 ? "" : "s");
  if (!r.outputs.empty())
    out += "; '" + r.outputs.front().info.name + "' mean " + num(r.outputs.front().stats.mean);
  return out + " (no reference given)";
}

void run_section(Context& c, const Typed& t) {
  const RunResult& r = *as<RunResult>(t);
  if (!r.inputs.empty()) {
    c.out += "<h3>Inputs</h3>\n";
    table_head(c.out, {"tensor", "shape and type", "from", "mean", "sha256"}, "wrap");
    for (const InputRecord& in : r.inputs)
      table_row(c.out, {in.info.name, shape_type(in.info), in.source, num(in.stats.mean),
                        in.stats.sha256});
    table_end(c.out);
  }
  std::vector<std::pair<const TensorInfo*, const TensorStats*>> outputs;
  for (const OutputRecord& o : r.outputs) outputs.push_back({&o.info, &o.stats});
  stats_table(c, t, "Outputs", outputs);
  if (!r.references.empty()) {
    c.out += "<h3>Against the references (|a - r| &lt;= " +
             esc(num(fig(t, r.settings.atol)) + " + " + num(fig(t, r.settings.rtol))) +
             " |r|)</h3>\n";
    table_head(c.out, {"reference", "passed", "max abs error", "max rel error", "L2 rel error",
                       "cosine", "outside tolerance"});
    for (const ReferenceRecord& ref : r.references) {
      const TensorComparison& x = ref.comparison;
      table_row(c.out, {ref.path, yes_no(t, ref.passed), num(fig(t, x.max_abs_error)),
                        num(fig(t, x.max_rel_error)), num(x.l2_rel_error), num(x.cosine),
                        count(t, x.outside) + " of " + count(t, x.elements)});
    }
    table_end(c.out);
  }
  table_head(c.out, {"device timing", "value"});
  for (const auto& [name, d] :
       {std::pair{"transfer in", &r.timings.transfer_in}, std::pair{"compute", &r.timings.compute},
        std::pair{"transfer out", &r.timings.transfer_out}})
    table_row(c.out, {name, *d ? num(to_ms(**d), "ms") : std::string("n/a")});
  table_end(c.out);
}

std::string check_answer(const Typed& t) {
  const CheckResult& r = *as<CheckResult>(t);
  size_t failed = 0;
  for (const CheckLine& x : r.checks) failed += !x.passed;
  if (t.absent(r.passed)) return std::to_string(r.checks.size()) + " checks";
  return r.passed ? "PASS: all " + std::to_string(r.checks.size()) + " checks passed"
                  : "FAIL: " + std::to_string(failed) + " of " + std::to_string(r.checks.size()) +
                        " checks failed";
}

void check_section(Context& c, const Typed& t) {
  const CheckResult& r = *as<CheckResult>(t);
  table_head(c.out, {"check", "result", "evidence"}, "wrap");
  for (const CheckLine& x : r.checks)
    table_row(c.out, {x.name, t.absent(x.passed) ? "n/a" : x.passed ? "PASS" : "FAIL", x.evidence});
  table_end(c.out);
  c.out += "<p>The guards around every buffer were checked after " +
           esc(count(t, r.guarded_calls)) + " device calls.</p>\n";
}

std::string compare_answer(const Typed& t) {
  const CompareResult& r = *as<CompareResult>(t);
  size_t differ = 0, unknown = 0, nondeterministic = 0;
  for (size_t i = 1; i < r.variants.size(); ++i) {
    const auto& d = r.variants[i].bytes_differing_from_first;
    unknown += !d;
    differ += d && *d > 0;
  }
  // A variant whose document does not say is counted as not recorded.
  size_t unrecorded = 0;
  for (const auto& v : r.variants) {
    unrecorded += t.absent(v.deterministic);
    nondeterministic += !t.absent(v.deterministic) && !v.deterministic;
  }
  std::string out = std::to_string(r.variants.size()) + " variants: ";
  out += differ == 0 && unknown == 0
             ? "every output identical to the first's"
             : std::to_string(differ) + " differ from the first" +
                   (unknown ? ", " + std::to_string(unknown) + " not comparable" : std::string());
  if (nondeterministic)
    out += "; " + std::to_string(nondeterministic) + " not deterministic on a rerun";
  else if (!unrecorded)
    out += "; each deterministic on a rerun";
  if (unrecorded) out += "; determinism not recorded for " + std::to_string(unrecorded);
  return out;
}

void compare_section(Context& c, const Typed& t) {
  const CompareResult& r = *as<CompareResult>(t);
  table_head(c.out, {"#", "model", "artifact sha256", "weights sha256", "out mean", "bytes != #1",
                     "rerun"});
  for (size_t v = 0; v < r.variants.size(); ++v) {
    const VariantResult& x = r.variants[v];
    table_row(c.out,
              {std::to_string(v + 1), x.name,
               x.weights.artifact_sha256.empty() ? "n/a" : x.weights.artifact_sha256.substr(0, 12),
               x.weights.weights_sha256 ? x.weights.weights_sha256->substr(0, 12) : "-",
               x.outputs.empty() ? "n/a" : num(x.outputs.front().stats.mean),
               x.bytes_differing_from_first ? std::to_string(*x.bytes_differing_from_first) +
                                                  " of " + count(t, x.output_bytes)
                                            : std::string("n/a"),
               t.absent(x.deterministic) ? "n/a"
               : x.deterministic         ? "identical"
                                         : count(t, x.rerun_bytes_differing) + " bytes differ"});
  }
  table_end(c.out);
  for (size_t v = 0; v < r.variants.size(); ++v)
    if (r.variants[v].note)
      c.out += "<p>#" + std::to_string(v + 1) + ": " + esc(*r.variants[v].note) + "</p>\n";
}

}  // namespace

const Section kRunSection{run_answer, run_section};
const Section kCheckSection{check_answer, check_section};
const Section kCompareSection{compare_answer, compare_section};

}  // namespace rig::report::html

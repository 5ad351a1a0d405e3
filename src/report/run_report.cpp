// Reporters of rig run, rig check and rig compare (rig/report/run_report.hpp).
#include "rig/report/run_report.hpp"

#include <sstream>

#include "report/json_common.hpp"
#include "report/run_fields.hpp"
#include "report/text_common.hpp"
#include "rig/units.hpp"

namespace rig {
namespace {

using report::line;

std::string g(const std::optional<double>& v) {
  return v ? line("%.6g", *v) : std::string("n/a");
}

std::string shape_dtype(const TensorInfo& t) {
  return shape_text(t.shape) + " " + std::string(to_string(t.type));
}

void stats_row(std::ostringstream& out, const std::string& label, const TensorInfo& t,
               const TensorStats& s) {
  out << line("  %-24s %-24s mean %-12s min %-12s max %-12s\n", label.c_str(),
              shape_dtype(t).c_str(), g(s.mean).c_str(), g(s.min).c_str(), g(s.max).c_str());
  out << line("  %-24s sha256 %s%s\n", "", s.sha256.c_str(),
              s.nonfinite ? (", " + std::to_string(s.nonfinite) + " non-finite").c_str() : "");
}

}  // namespace

std::string format_run_text(const RunResult& r) {
  std::ostringstream out;
  out << "rig run: " << r.model.name << " on " << r.device.spec << "\n";
  for (const auto& in : r.inputs)
    out << line("  input  %-17s %-24s from %s\n", ("'" + in.info.name + "'").c_str(),
                shape_dtype(in.info).c_str(), in.source.c_str());
  out << "\noutputs\n";
  for (const auto& o : r.outputs) stats_row(out, "'" + o.info.name + "'", o.info, o.stats);
  if (!r.references.empty()) {
    out << line("\nagainst the references (|a - r| <= %g + %g |r|)\n", r.settings.atol,
                r.settings.rtol);
    for (size_t i = 0; i < r.references.size(); ++i) {
      const auto& ref = r.references[i];
      const auto& c = ref.comparison;
      out << line("  %-4s '%s' vs %s\n", ref.passed ? "PASS" : "FAIL",
                  r.outputs[i].info.name.c_str(), ref.path.c_str());
      out << line(
          "       max abs %s, max rel %s, L2 rel %s, cosine %s, %llu of %llu outside tolerance\n",
          g(c.max_abs_error).c_str(), g(c.max_rel_error).c_str(), g(c.l2_rel_error).c_str(),
          g(c.cosine).c_str(), static_cast<unsigned long long>(c.outside),
          static_cast<unsigned long long>(c.elements));
    }
    std::string failed;
    for (size_t i = 0; i < r.references.size(); ++i)
      if (!r.references[i].passed)
        failed += (failed.empty() ? "" : ", ") + ("'" + r.outputs[i].info.name + "'");
    out << (r.references_passed ? "\nPASS: every output within tolerance\n"
                                : "\nFAIL: outputs outside tolerance: " + failed + "\n");
  } else {
    out << "\nno check: no --reference given, the outputs are not compared with anything\n";
  }
  return out.str();
}

std::string run_to_json(const RunResult& r) {
  return report::write_document("rig run", r, report::run_fields<report::JsonWriter>);
}

std::string format_check_text(const CheckResult& r) {
  std::ostringstream out;
  out << "rig check: " << r.model.name << " on " << r.device.spec << "\n";
  for (const auto& c : r.checks)
    out << line("  %-4s %s\n       %s\n", c.passed ? "PASS" : "FAIL", c.name.c_str(),
                c.evidence.c_str());
  size_t failed = 0;
  std::string names;
  for (const auto& c : r.checks)
    if (!c.passed) {
      ++failed;
      names += (names.empty() ? "" : ", ") + c.name;
    }
  out << (failed == 0 ? "\nPASS: all " + std::to_string(r.checks.size()) + " checks passed\n"
                      : "\nFAIL: " + std::to_string(failed) + " of " +
                            std::to_string(r.checks.size()) + " checks failed: " + names + "\n");
  return out.str();
}

std::string check_to_json(const CheckResult& r) {
  return report::write_document("rig check", r, report::check_fields<report::JsonWriter>);
}

std::string format_compare_text(const CompareResult& r) {
  std::ostringstream out;
  out << "rig compare: " << r.variants.size() << " variants on " << r.device.spec << "\n";
  if (r.outputs_not_the_models) out << "  warning: " << *r.outputs_not_the_models << "\n";
  if (!r.variants.empty() && !r.variants.front().input_sources.empty()) {
    out << "  input: ";
    for (size_t i = 0; i < r.variants.front().input_sources.size(); ++i)
      out << (i ? ", " : "") << r.variants.front().input_sources[i];
    out << "\n";
  }
  out << "\n"
      << line("  %-3s %-20s %-14s %-14s %-12s %-22s %s\n", "#", "model", "artifact", "weights",
              "out mean", "bytes != #1", "rerun");
  for (size_t v = 0; v < r.variants.size(); ++v) {
    const auto& x = r.variants[v];
    const std::string artifact =
        x.weights.artifact_sha256.empty() ? "n/a" : x.weights.artifact_sha256.substr(0, 12);
    const std::string weights =
        x.weights.weights_sha256 ? x.weights.weights_sha256->substr(0, 12) : std::string("-");
    const std::string mean = x.outputs.empty() ? "n/a" : g(x.outputs.front().stats.mean);
    const std::string diff = x.bytes_differing_from_first
                                 ? std::to_string(*x.bytes_differing_from_first) + " of " +
                                       std::to_string(x.output_bytes)
                                 : std::string("n/a");
    const std::string rerun =
        x.deterministic ? "identical" : std::to_string(x.rerun_bytes_differing) + " bytes differ";
    out << line("  %-3zu %-20s %-14s %-14s %-12s %-22s %s\n", v + 1, x.name.c_str(),
                artifact.c_str(), weights.c_str(), mean.c_str(), diff.c_str(), rerun.c_str());
  }
  out << "\n";
  for (size_t v = 0; v < r.variants.size(); ++v) {
    const auto& x = r.variants[v];
    out << "  #" << v + 1 << " " << (x.model.empty() ? x.name : x.model) << "\n";
    if (!x.weights.artifact_sha256.empty())
      out << "     artifact sha256 " << x.weights.artifact_sha256 << "\n";
    if (x.weights.weights_sha256)
      out << "     weights  sha256 " << *x.weights.weights_sha256 << "\n";
    for (const auto& f : x.weights.facts)
      out << "     " << (f.tensor.empty() ? "" : f.tensor + ": ") << f.fact << " "
          << line("%.9g", f.value) << "\n";
    for (const auto& o : x.outputs)
      out << line("     output '%s' %s mean %s min %s max %s\n", o.info.name.c_str(),
                  shape_dtype(o.info).c_str(), g(o.stats.mean).c_str(), g(o.stats.min).c_str(),
                  g(o.stats.max).c_str());
    if (x.note) out << "     note: " << *x.note << "\n";
  }
  return out.str();
}

std::string compare_to_json(const CompareResult& r) {
  return report::write_document("rig compare", r, report::compare_fields<report::JsonWriter>);
}

}  // namespace rig

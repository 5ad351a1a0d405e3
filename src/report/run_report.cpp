// Reporters of rig run, rig check and rig compare (rig/report/run_report.hpp).
#include "rig/report/run_report.hpp"

#include <sstream>

#include "report/json_common.hpp"
#include "report/text_common.hpp"
#include "rig/units.hpp"

namespace rig {
namespace {

using report::json;
using report::json_number;
using report::line;

std::string g(const std::optional<double>& v) {
  return v ? line("%.6g", *v) : std::string("n/a");
}

std::string shape_dtype(const TensorInfo& t) {
  return shape_text(t.shape) + " " + std::string(to_string(t.type));
}

json stats_json(const TensorStats& s) {
  return {{"elements", s.elements},    {"nonfinite", s.nonfinite},  {"mean", json_number(s.mean)},
          {"min", json_number(s.min)}, {"max", json_number(s.max)}, {"sha256", s.sha256}};
}

json tensor_stats_json(const TensorInfo& t, const TensorStats& s) {
  json j = report::tensor_json(t);
  j["stats"] = stats_json(s);
  return j;
}

void stats_row(std::ostringstream& out, const std::string& label, const TensorInfo& t,
               const TensorStats& s) {
  out << line("  %-24s %-24s mean %-12s min %-12s max %-12s\n", label.c_str(),
              shape_dtype(t).c_str(), g(s.mean).c_str(), g(s.min).c_str(), g(s.max).c_str());
  out << line("  %-24s sha256 %s%s\n", "", s.sha256.c_str(),
              s.nonfinite ? (", " + std::to_string(s.nonfinite) + " non-finite").c_str() : "");
}

json environment(const Environment& env, bool virtual_clock, const DeviceInfo& d) {
  return report::environment_json(env, virtual_clock, {{"device", &d}});
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
    out << (r.references_passed ? "\nPASS: every output within tolerance\n"
                                : "\nFAIL: outputs outside tolerance\n");
  }
  return out.str();
}

std::string run_to_json(const RunResult& r) {
  json doc = report::document("rig run");
  doc["settings"] = {{"model", r.settings.model},   {"device", r.settings.device},
                     {"inputs", r.settings.inputs}, {"references", r.settings.references},
                     {"atol", r.settings.atol},     {"rtol", r.settings.rtol},
                     {"seed", r.settings.seed}};
  doc["environment"] = environment(r.environment, r.virtual_clock, r.device);
  doc["model"] = report::model_json(r.model);
  json inputs = json::array();
  for (const auto& in : r.inputs) {
    json j = tensor_stats_json(in.info, in.stats);
    j["source"] = in.source;
    inputs.push_back(std::move(j));
  }
  doc["inputs"] = std::move(inputs);
  json outputs = json::array();
  for (const auto& o : r.outputs) outputs.push_back(tensor_stats_json(o.info, o.stats));
  doc["outputs"] = std::move(outputs);
  doc["timings"] = report::timings_json(r.timings);
  json refs = json::array();
  for (const auto& ref : r.references) {
    const auto& c = ref.comparison;
    refs.push_back({{"path", ref.path},
                    {"passed", ref.passed},
                    {"elements", c.elements},
                    {"outside", c.outside},
                    {"max_abs_error", json_number(c.max_abs_error)},
                    {"max_rel_error", json_number(c.max_rel_error)},
                    {"l2_rel_error", json_number(c.l2_rel_error)},
                    {"cosine", json_number(c.cosine)},
                    {"bytes_differing", c.bytes_differing}});
  }
  doc["references"] = std::move(refs);
  doc["references_passed"] = r.references_passed;
  return report::dump(doc);
}

std::string format_check_text(const CheckResult& r) {
  std::ostringstream out;
  out << "rig check: " << r.model.name << " on " << r.device.spec << "\n";
  for (const auto& c : r.checks)
    out << line("  %-4s %s\n       %s\n", c.passed ? "PASS" : "FAIL", c.name.c_str(),
                c.evidence.c_str());
  size_t failed = 0;
  for (const auto& c : r.checks) failed += !c.passed;
  out << (failed == 0 ? "\nPASS: all " + std::to_string(r.checks.size()) + " checks passed\n"
                      : "\nFAIL: " + std::to_string(failed) + " of " +
                            std::to_string(r.checks.size()) + " checks failed\n");
  return out.str();
}

std::string check_to_json(const CheckResult& r) {
  json doc = report::document("rig check");
  doc["settings"] = {{"model", r.settings.model},
                     {"device", r.settings.device},
                     {"allow_nondeterministic", r.settings.allow_nondeterministic},
                     {"seed", r.settings.seed},
                     {"guard_bytes", r.settings.guard_bytes}};
  doc["environment"] = environment(r.environment, r.virtual_clock, r.device);
  doc["model"] = report::model_json(r.model);
  json checks = json::array();
  for (const auto& c : r.checks) {
    json j = {{"name", c.name}, {"passed", c.passed}, {"evidence", c.evidence}};
    j["differing_bytes"] = c.differing_bytes ? json(*c.differing_bytes) : json(nullptr);
    j["total_bytes"] = c.total_bytes ? json(*c.total_bytes) : json(nullptr);
    j["max_difference"] = json_number(c.max_difference);
    j["refusal"] = report::error_json(c.refusal);
    checks.push_back(std::move(j));
  }
  doc["checks"] = std::move(checks);
  doc["guarded_calls"] = r.guarded_calls;
  doc["passed"] = r.passed;
  return report::dump(doc);
}

std::string format_compare_text(const CompareResult& r) {
  std::ostringstream out;
  out << "rig compare: " << r.variants.size() << " variants on " << r.device.spec << "\n";
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
  json doc = report::document("rig compare");
  doc["settings"] = {{"models", r.settings.models},
                     {"device", r.settings.device},
                     {"inputs", r.settings.inputs},
                     {"seed", r.settings.seed}};
  doc["environment"] = environment(r.environment, r.virtual_clock, r.device);
  json variants = json::array();
  for (const auto& x : r.variants) {
    json facts = json::array();
    for (const auto& f : x.weights.facts)
      facts.push_back({{"tensor", f.tensor}, {"fact", f.fact}, {"value", json_number(f.value)}});
    json outputs = json::array();
    for (const auto& o : x.outputs) outputs.push_back(tensor_stats_json(o.info, o.stats));
    json j = {{"model", x.model},
              {"name", x.name},
              {"artifact_sha256",
               x.weights.artifact_sha256.empty() ? json(nullptr) : json(x.weights.artifact_sha256)},
              {"weights_sha256",
               x.weights.weights_sha256 ? json(*x.weights.weights_sha256) : json(nullptr)},
              {"facts", std::move(facts)},
              {"input_sources", x.input_sources},
              {"outputs", std::move(outputs)},
              {"output_bytes", x.output_bytes},
              {"bytes_differing_from_first",
               x.bytes_differing_from_first ? json(*x.bytes_differing_from_first) : json(nullptr)},
              {"rerun_bytes_differing", x.rerun_bytes_differing},
              {"deterministic", x.deterministic},
              {"note", x.note ? json(*x.note) : json(nullptr)}};
    variants.push_back(std::move(j));
  }
  doc["variants"] = std::move(variants);
  return report::dump(doc);
}

}  // namespace rig

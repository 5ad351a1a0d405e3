// The documents of rig run, rig check and rig compare as tables of keys
// (json_walkers.hpp): run_to_json, check_to_json and compare_to_json write
// them, the page reads them back. docs/results-schema.md, "rig run", "rig
// check", "rig compare". Private to the reporters.
#pragma once

#include "report/schema_fields.hpp"
#include "rig/scenario/check.hpp"
#include "rig/scenario/compare.hpp"
#include "rig/scenario/run.hpp"

namespace rig::report {

// A tensor with the statistics of its bytes.
template <class Io>
void tensor_with_stats_fields(Io& io, TensorInfo& t, TensorStats& s) {
  tensor_fields(io, t);
  io.object("stats", [&](Io& x) {
    x.value("elements", s.elements);
    x.value("nonfinite", s.nonfinite);
    x.number("mean", s.mean);
    x.number("min", s.min);
    x.number("max", s.max);
    x.value("sha256", s.sha256);
  });
}

template <class Io>
void run_fields(Io& io, RunResult& r) {
  io.object("settings", [&](Io& s) {
    s.value("model", r.settings.model);
    s.value("device", r.settings.device);
    s.value("inputs", r.settings.inputs);
    s.value("references", r.settings.references);
    s.number("atol", r.settings.atol);
    s.number("rtol", r.settings.rtol);
    s.value("seed", r.settings.seed);
  });
  environment_device_fields(io, r.environment, r.virtual_clock, r.device);
  io.object("model", [&](Io& m) { model_fields(m, r.model); });
  io.array("inputs", r.inputs, [](Io& x, InputRecord& in) {
    tensor_with_stats_fields(x, in.info, in.stats);
    x.value("source", in.source);
  });
  io.array("outputs", r.outputs,
           [](Io& x, OutputRecord& o) { tensor_with_stats_fields(x, o.info, o.stats); });
  io.object("timings", [&](Io& t) { timings_fields(t, r.timings); });
  io.array("references", r.references, [](Io& x, ReferenceRecord& ref) {
    TensorComparison& c = ref.comparison;
    x.value("path", ref.path);
    x.value("passed", ref.passed);
    x.value("elements", c.elements);
    x.value("outside", c.outside);
    x.number("max_abs_error", c.max_abs_error);
    x.number("max_rel_error", c.max_rel_error);
    x.number("l2_rel_error", c.l2_rel_error);
    x.number("cosine", c.cosine);
    x.value("bytes_differing", c.bytes_differing);
  });
  io.value("references_passed", r.references_passed);
}

template <class Io>
void check_line_fields(Io& io, CheckLine& c) {
  io.value("name", c.name);
  io.value("passed", c.passed);
  io.value("evidence", c.evidence);
  io.optional_count("differing_bytes", c.differing_bytes);
  io.optional_count("total_bytes", c.total_bytes);
  io.number("max_difference", c.max_difference);
  io.error("refusal", c.refusal);
}

template <class Io>
void check_fields(Io& io, CheckResult& r) {
  io.object("settings", [&](Io& s) {
    s.value("model", r.settings.model);
    s.value("device", r.settings.device);
    s.value("allow_nondeterministic", r.settings.allow_nondeterministic);
    s.value("seed", r.settings.seed);
    s.value("guard_bytes", r.settings.guard_bytes);
  });
  environment_device_fields(io, r.environment, r.virtual_clock, r.device);
  io.object("model", [&](Io& m) { model_fields(m, r.model); });
  io.array("checks", r.checks, check_line_fields<Io>);
  io.value("guarded_calls", r.guarded_calls);
  io.value("passed", r.passed);
}

template <class Io>
void variant_fields(Io& io, VariantResult& x) {
  io.value("model", x.model);
  io.value("name", x.name);
  // The artifact's digest is null when the artifact is not on this host.
  std::optional<std::string> artifact;
  if (!x.weights.artifact_sha256.empty()) artifact = x.weights.artifact_sha256;
  io.value("artifact_sha256", artifact);
  if constexpr (Io::reading) x.weights.artifact_sha256 = artifact.value_or("");
  io.value("weights_sha256", x.weights.weights_sha256);
  io.array("facts", x.weights.facts, [](Io& f, TensorFact& fact) {
    f.value("tensor", fact.tensor);
    f.value("fact", fact.fact);
    f.number("value", fact.value);
  });
  io.value("input_sources", x.input_sources);
  io.array("outputs", x.outputs,
           [](Io& o, VariantOutput& v) { tensor_with_stats_fields(o, v.info, v.stats); });
  io.value("output_bytes", x.output_bytes);
  io.optional_count("bytes_differing_from_first", x.bytes_differing_from_first);
  io.value("rerun_bytes_differing", x.rerun_bytes_differing);
  io.value("deterministic", x.deterministic);
  io.value("note", x.note);
}

template <class Io>
void compare_fields(Io& io, CompareResult& r) {
  io.object("settings", [&](Io& s) {
    s.value("models", r.settings.models);
    s.value("device", r.settings.device);
    s.value("inputs", r.settings.inputs);
    s.value("seed", r.settings.seed);
  });
  environment_device_fields(io, r.environment, r.virtual_clock, r.device);
  io.value("outputs_not_the_models", r.outputs_not_the_models, 8);
  io.array("variants", r.variants, variant_fields<Io>);
}

}  // namespace rig::report

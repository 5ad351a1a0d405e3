#include "report/json_common.hpp"

#include <cmath>
#include <cstdio>

#include "rig/json_depth.hpp"
#include "rig/report/document.hpp"

namespace rig::report {

std::optional<double> optional_ms(const std::optional<Nanos>& d) {
  if (!d) return std::nullopt;
  return to_ms(*d);
}

json json_number(std::optional<double> value) {
  if (!value || !std::isfinite(*value)) return nullptr;
  return *value;
}

json json_interval(const PercentileInterval& ci) {
  return {{"p", json_number(ci.p)},
          {"confidence", json_number(ci.confidence)},
          {"enough", ci.enough()},
          {"needs", ci.needs},
          {"lower", json_number(ci.lower)},
          {"upper", json_number(ci.upper)},
          {"lower_rank", ci.lower_rank ? json(*ci.lower_rank) : json(nullptr)},
          {"upper_rank", ci.upper_rank ? json(*ci.upper_rank) : json(nullptr)},
          {"method", to_string(ci.method)},
          {"batches", ci.batches},
          {"batch_size", ci.batch_size},
          {"lag1", json_number(ci.lag1)}};
}

json json_summary(const Summary& s) {
  return {{"count", s.count},
          {"intervals",
           {{"p50", json_interval(s.median_ci)},
            {"p90", json_interval(s.p90_ci)},
            {"p95", json_interval(s.p95_ci)},
            {"p99", json_interval(s.p99_ci)}}},
          {"min", json_number(s.min)},
          {"median", json_number(s.median)},
          {"mean", json_number(s.mean)},
          {"p90", json_number(s.p90)},
          {"p95", json_number(s.p95)},
          {"p99", json_number(s.p99)},
          {"max", json_number(s.max)},
          {"stddev", json_number(s.stddev)},
          {"spread", json_number(s.spread)},
          {"mdape", json_number(s.mdape)}};
}

json error_json(const std::optional<Error>& e) {
  if (!e) return nullptr;
  return {{"code", std::string(to_string(e->code))}, {"message", e->message}};
}

json tensor_json(const TensorInfo& t) {
  return {{"name", t.name},
          {"type", std::string(to_string(t.type))},
          {"shape", t.shape},
          {"bytes", t.bytes}};
}

json model_json(const ModelInfo& m) {
  json inputs = json::array(), outputs = json::array();
  for (const auto& t : m.inputs) inputs.push_back(tensor_json(t));
  for (const auto& t : m.outputs) outputs.push_back(tensor_json(t));
  return {{"name", m.name},
          {"sha256", m.sha256},
          {"inputs", inputs},
          {"outputs", outputs},
          {"normalization", normalization_json(m.normalization)}};
}

json normalization_json(const ModelRewrites& n) {
  return {{"ran", n.ran},
          {"nodes_before", n.nodes_before},
          {"nodes_after", n.nodes_after},
          {"rewrites", json(n.rewrites)},
          {"notes", n.notes}};
}

json timings_json(const InferenceTimings& t) {
  return {{"transfer_in_ms", json_number(optional_ms(t.transfer_in))},
          {"queue_wait_ms", json_number(optional_ms(t.queue_wait))},
          {"compute_ms", json_number(optional_ms(t.compute))},
          {"transfer_out_ms", json_number(optional_ms(t.transfer_out))}};
}

json ttfo_json(const TtfoResult& t) {
  return {{"total_ms", to_ms(t.total)},
          {"load_ms", to_ms(t.load)},
          {"load_breakdown",
           {{"read_ms", to_ms(t.load_breakdown.read)},
            {"parse_ms", to_ms(t.load_breakdown.parse)},
            {"compile_ms", to_ms(t.load_breakdown.compile)}}},
          {"allocate_ms", to_ms(t.allocate)},
          {"first_inference_ms", to_ms(t.first_inference)},
          {"first_inference_device", timings_json(t.first_timings)}};
}

json point_json(const PointResult& p) {
  json rates = json::array();
  for (double r : p.repeat_rates) rates.push_back(json_number(r));
  return {{"depth", p.depth},
          {"rate_per_s", json_summary(p.rate)},
          {"repeat_rates_per_s", rates},
          {"ms_per_frame", json_number(p.ms_per_frame)},
          {"little_rate_per_s", json_summary(p.little_rate)},
          {"spread", json_number(p.rate.spread)},
          {"stable", p.stable},
          {"errors", p.errors},
          {"first_error", error_json(p.first_error)},
          {"aborted", p.aborted}};
}

json model_summary_json(const ModelInfo& m) {
  return {{"name", m.name},
          {"sha256", m.sha256},
          {"input_bytes", m.input_bytes()},
          {"output_bytes", m.output_bytes()}};
}

json point_settings_json(const PointSettings& s) {
  return {{"duration_s", to_seconds(s.duration)},
          {"min_inferences", s.min_inferences},
          {"windows", s.windows},
          {"stability_tolerance", s.stability_tolerance},
          {"rate_tolerance", s.rate_tolerance},
          {"max_duration_factor", s.max_duration_factor},
          {"warmup_max_s", to_seconds(s.warmup_max)},
          {"request_timeout_s", to_seconds(s.request_timeout)},
          {"repeats", s.repeats},
          {"seed", s.seed}};
}

json device_json(const DeviceInfo& d) {
  return {
      {"spec", d.spec},
      {"kind", d.kind},
      {"description", d.description},
      {"queue_depth", d.queue_depth},
      {"device_queue_depth", d.device_queue_depth()},
      {"in_process", d.in_process},
      {"duplex", std::string(to_string(d.duplex))},
      {"clock", std::string(to_string(d.clock))},
      {"memory_bytes", d.memory_bytes ? json(*d.memory_bytes) : json(nullptr)},
      {"link_floor_median_ms", d.link_floor ? json(to_ms(d.link_floor->median)) : json(nullptr)},
      {"link_floor_min_ms", d.link_floor ? json(to_ms(d.link_floor->min)) : json(nullptr)},
      {"link_floor_round_trips", d.link_floor ? json(d.link_floor->round_trips) : json(nullptr)},
      {"link_floor_spent_ms", d.link_floor ? json(to_ms(d.link_floor->spent)) : json(nullptr)},
      {"loop_whole", d.loop_whole},
      {"properties", d.properties},
      {"warnings", d.warnings}};
}

json environment_json(const Environment& env, bool virtual_clock,
                      const std::vector<std::pair<std::string, const DeviceInfo*>>& devices) {
  json e = env.facts;
  e["warnings"] = env.warnings;
  e["virtual_clock"] = virtual_clock;
  for (const auto& [key, d] : devices) e[key] = device_json(*d);
  return e;
}

json verdict_json(const Verdict& v) {
  json rules = json::array();
  for (const auto& r : v.rules)
    rules.push_back({{"rule", r.rule},
                     {"severity", std::string(to_string(r.severity))},
                     {"met", r.met},
                     {"evidence", r.evidence},
                     {"findings", r.findings},
                     {"threshold", r.threshold}});
  return {{"status", v.valid ? "VALID" : "INVALID"},
          {"valid", v.valid},
          {"reasons", v.reasons},
          {"warnings", v.warnings},
          {"rules", rules}};
}

json input_data_json(const InputFiles* files, uint64_t seed) {
  json list = json::array();
  if (files)
    for (const auto& f : files->files)
      list.push_back({{"path", f.path}, {"sha256", f.sha256}, {"bytes", f.bytes}});
  return {{"source", files ? "files" : "generated"},
          {"seed", files ? json(nullptr) : json(seed)},
          {"files", list}};
}

json inputs_json(const JudgedInputs& j) {
  json inputs = json::array();
  for (const auto& in : j.inputs)
    inputs.push_back({{"source", in.source},
                      {"tool", in.tool},
                      {"status", input_status(in)},
                      {"reasons", in.reasons}});
  return inputs;
}

json document(std::string_view tool) {
  json doc;
  doc["schema_version"] = kJsonSchemaVersion;
  doc["tool"] = std::string(tool);
  return doc;
}

std::string dump(const json& doc) {
  return doc.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

Result<json> parse_json(std::string_view text, std::string_view what, std::string_view expected) {
  if (auto ok = check_json_depth(text, what); !ok) return tl::unexpected(ok.error());
  json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded())
    return fail(ErrorCode::invalid_argument,
                std::string(what) + ": not JSON (expected " + std::string(expected) + ")");
  return doc;
}

Result<std::pair<json, int>> read_document(std::string_view text, std::string_view what,
                                           std::string_view tool, std::string_view reader) {
  const std::string expected = tool.empty() ? std::string("a rig --json result")
                                            : "a " + std::string(tool) + " --json result";
  auto bad = [&](const std::string& m) {
    return fail(ErrorCode::invalid_argument, std::string(what) + ": " + m);
  };
  auto parsed = parse_json(text, what, expected);
  if (!parsed) return tl::unexpected(parsed.error());
  json doc = std::move(*parsed);
  if (!doc.is_object()) return bad("not a JSON object (expected " + expected + ")");
  auto v = doc.find("schema_version");
  if (v == doc.end()) return bad("field 'schema_version' is missing (expected " + expected + ")");
  if (!v->is_number()) return bad("field 'schema_version' is not a number");
  const double version = v->get<double>();
  std::string readable;
  for (int r : readable_schema_versions()) {
    if (version == r) {
      auto t = doc.find("tool");
      if (t == doc.end() || !t->is_string()) return bad("field 'tool' is missing");
      const std::string name = t->get<std::string>();
      if (!tool.empty() && name != tool)
        return bad("a '" + name + "' result; " + std::string(reader) + " reads " + expected);
      return std::pair<json, int>{std::move(doc), r};
    }
    readable += (readable.empty() ? "" : ", ") + std::to_string(r);
  }
  char number[64];
  std::snprintf(number, sizeof number, "%.17g", version);
  return bad("schema_version " + std::string(number) + " is not one this rig reads (" + readable +
             ")");
}

}  // namespace rig::report

namespace rig {

Result<InputVerdict> read_input_verdict(std::string_view text, std::string_view what,
                                        std::string_view reader) {
  auto read = report::read_document(text, what, "", reader);
  if (!read) return tl::unexpected(read.error());
  const report::json& doc = read->first;
  InputVerdict in;
  in.source = std::string(what);
  in.tool = doc["tool"].get<std::string>();
  auto v = doc.find("verdict");
  if (v == doc.end() || !v->is_object()) return in;
  auto valid = v->find("valid");
  if (valid == v->end() || !valid->is_boolean())
    return fail(ErrorCode::invalid_argument,
                std::string(what) + ": field 'verdict.valid' is missing or not true or false");
  in.valid = valid->get<bool>();
  if (auto reasons = v->find("reasons"); reasons != v->end() && reasons->is_array())
    for (const auto& r : *reasons)
      if (r.is_string()) in.reasons.push_back(r.get<std::string>());
  return in;
}

}  // namespace rig

#include <cmath>

#include "rig/model.hpp"
#include "rig/report.hpp"

namespace rig {
namespace {

using nlohmann::json;

double ms(Nanos d) {
  return static_cast<double>(d.count()) / 1e6;
}

json optional_ms(const std::optional<Nanos>& d) {
  return d ? json_number(ms(*d)) : json(nullptr);
}

json settings_json(const BenchSettings& s) {
  return {{"model", s.model},
          {"device", s.device},
          {"depth", s.depth},
          {"duration_s", static_cast<double>(s.duration.count()) / 1e9},
          {"min_inferences", s.min_inferences},
          {"repeats", s.repeats},
          {"windows", s.windows},
          {"stability_tolerance", s.stability_tolerance},
          {"repeat_tolerance", s.repeat_tolerance},
          {"warmup_max_s", static_cast<double>(s.warmup_max.count()) / 1e9},
          {"latency_samples", s.latency_samples},
          {"latency_max_s", static_cast<double>(s.latency_max.count()) / 1e9},
          {"request_timeout_s", static_cast<double>(s.request_timeout.count()) / 1e9},
          {"reservoir_capacity", s.reservoir_capacity},
          {"seed", s.seed},
          {"overhead_limit", s.overhead_limit}};
}

json tensor_json(const TensorInfo& t) {
  return {{"name", t.name},
          {"type", std::string(to_string(t.type))},
          {"shape", t.shape},
          {"bytes", t.bytes}};
}

json timings_json(const InferenceTimings& t) {
  return {{"transfer_in_ms", optional_ms(t.transfer_in)},
          {"queue_wait_ms", optional_ms(t.queue_wait)},
          {"compute_ms", optional_ms(t.compute)},
          {"transfer_out_ms", optional_ms(t.transfer_out)}};
}

json error_json(const std::optional<Error>& e) {
  if (!e) return nullptr;
  return {{"code", std::string(to_string(e->code))}, {"message", e->message}};
}

}  // namespace

json json_number(std::optional<double> value) {
  if (!value || !std::isfinite(*value)) return nullptr;
  return *value;
}

json json_summary(const Summary& s) {
  return {{"count", s.count},
          {"min", json_number(s.min)},
          {"median", json_number(s.median)},
          {"mean", json_number(s.mean)},
          {"p90", json_number(s.p90)},
          {"p99", json_number(s.p99)},
          {"max", json_number(s.max)},
          {"stddev", json_number(s.stddev)},
          {"spread", json_number(s.spread)},
          {"mdape", json_number(s.mdape)}};
}

json bench_to_json(const BenchResult& r) {
  json doc;
  doc["schema_version"] = kJsonSchemaVersion;
  doc["tool"] = "rig bench";
  doc["settings"] = {{"requested", settings_json(r.requested)},
                     {"effective", settings_json(r.effective)}};
  json env = r.environment.facts;
  env["warnings"] = r.environment.warnings;
  env["virtual_clock"] = r.virtual_clock;
  env["device"] = {{"spec", r.device.spec},
                   {"kind", r.device.kind},
                   {"description", r.device.description},
                   {"queue_depth", r.device.queue_depth},
                   {"in_process", r.device.in_process},
                   {"properties", r.device.properties},
                   {"warnings", r.device.warnings}};
  doc["environment"] = env;
  json inputs = json::array(), outputs = json::array();
  for (const auto& t : r.model.inputs) inputs.push_back(tensor_json(t));
  for (const auto& t : r.model.outputs) outputs.push_back(tensor_json(t));
  doc["model"] = {{"name", r.model.name}, {"inputs", inputs}, {"outputs", outputs}};

  doc["ttfo"] = {{"total_ms", ms(r.ttfo.total)},
                 {"load_ms", ms(r.ttfo.load)},
                 {"load_breakdown",
                  {{"read_ms", ms(r.ttfo.load_breakdown.read)},
                   {"parse_ms", ms(r.ttfo.load_breakdown.parse)},
                   {"compile_ms", ms(r.ttfo.load_breakdown.compile)}}},
                 {"allocate_ms", ms(r.ttfo.allocate)},
                 {"first_inference_ms", ms(r.ttfo.first_inference)},
                 {"first_inference_device", timings_json(r.ttfo.first_timings)}};

  json repeats = json::array();
  for (const auto& rep : r.steady.repeats) {
    json windows = json::array();
    for (const auto& w : rep.windows)
      windows.push_back({{"start_s", w.start_s},
                         {"duration_s", w.duration_s},
                         {"inferences", w.inferences},
                         {"rate_per_s", json_number(w.rate)}});
    repeats.push_back({{"depth", rep.depth},
                       {"inferences", rep.inferences},
                       {"elapsed_s", static_cast<double>(rep.elapsed.count()) / 1e9},
                       {"rate_per_s", json_number(rep.rate)},
                       {"stable", rep.stable},
                       {"last_windows_spread", json_number(rep.last_windows_spread)},
                       {"warmup_s", static_cast<double>(rep.warmup.count()) / 1e9},
                       {"warmup_inferences", rep.warmup_inferences},
                       {"warmup_settled", rep.warmup_settled},
                       {"latency_ms", json_summary(rep.latency_ms)},
                       {"errors", rep.errors},
                       {"first_error", error_json(rep.first_error)},
                       {"aborted", rep.aborted},
                       {"windows", windows}});
  }
  doc["steady"] = {{"depth", r.steady.depth},
                   {"rate_per_s", json_summary(r.steady.rate)},
                   {"time_per_frame_ms", json_number(r.steady.time_per_frame_ms)},
                   {"stable", r.steady.stable},
                   {"repeats", repeats}};

  doc["latency"] = {{"samples", r.latency.samples},
                    {"errors", r.latency.errors},
                    {"first_error", error_json(r.latency.first_error)},
                    {"overall_ms", json_summary(r.latency.overall_ms)},
                    {"hardware_ms", json_summary(r.latency.hardware_ms)},
                    {"transfer_in_ms", json_summary(r.latency.transfer_in_ms)},
                    {"transfer_out_ms", json_summary(r.latency.transfer_out_ms)},
                    {"queue_wait_ms", json_summary(r.latency.queue_wait_ms)},
                    {"bus_share", json_number(r.latency.bus_share)}};

  doc["bytes"] = {{"model_in", r.bytes.model_in},
                  {"model_out", r.bytes.model_out},
                  {"payload_in_per_inference", json_number(r.bytes.payload_in)},
                  {"payload_out_per_inference", json_number(r.bytes.payload_out)},
                  {"link_in_per_inference", json_number(r.bytes.link_in)},
                  {"link_out_per_inference", json_number(r.bytes.link_out)},
                  {"payload_mb_per_s", json_number(r.bytes.payload_mb_per_s)},
                  {"link_mb_per_s", json_number(r.bytes.link_mb_per_s)}};

  doc["overhead"] = {
      {"measured", r.overhead.measured},
      {"bookkeeping_ns_per_inference", json_number(r.overhead.bookkeeping_ns_per_inference)},
      {"bookkeeping_share", json_number(r.overhead.bookkeeping_share)},
      {"wait_fraction", json_number(r.overhead.wait_fraction)},
      {"limiting", r.overhead.limiting},
      {"note", r.overhead.note}};

  doc["verdict"] = {{"status", r.verdict.valid ? "VALID" : "INVALID"},
                    {"valid", r.verdict.valid},
                    {"reasons", r.verdict.reasons},
                    {"warnings", r.verdict.warnings}};
  return doc;
}

Result<void> write_json_file(const std::string& path, const nlohmann::json& document) {
  // error_handler::replace: invalid UTF-8 in device strings never throws.
  const std::string text =
      document.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  return write_file_atomic(path, std::string_view(text));
}

}  // namespace rig

// Text and JSON for the analyses. Text: every figure with its unit. JSON:
// schema_version, tool, settings, environment (with the device), results,
// notes; a figure that does not exist is null, never NaN.
#include <cinttypes>
#include <cmath>
#include <cstdio>

#include "rig/analysis_report.hpp"
#include "rig/report.hpp"
#include "rig/units.hpp"

namespace rig {
namespace {

using nlohmann::json;

double seconds(Nanos d) {
  return static_cast<double>(d.count()) / 1e9;
}
double ms(Nanos d) {
  return static_cast<double>(d.count()) / 1e6;
}

std::string opt_fixed(const std::optional<double>& v, int decimals) {
  return v ? format_fixed(*v, decimals) : std::string("n/a");
}
// Rounding noise of a fit (|v| < 1 ns) prints as 0, not "-0.000 us".
std::string opt_ms(const std::optional<double>& v) {
  if (!v) return "n/a";
  return format_ms(std::fabs(*v) < 1e-6 ? 0.0 : *v);
}
std::string opt_pct(const std::optional<double>& v, int decimals = 2) {
  return v ? format_fixed(*v * 100, decimals) + "%" : std::string("n/a");
}
std::string opt_rate(const std::optional<double>& bytes_per_s) {
  return bytes_per_s ? format_rate(*bytes_per_s) : "n/a";
}

template <class... Args>
std::string line(const char* format, Args... args) {
  char buf[512];
  std::snprintf(buf, sizeof buf, format, args...);
  return buf;
}

// 150528 -> "150,528"
std::string with_commas(double value) {
  if (!std::isfinite(value)) return "n/a";
  // Beyond 10^18 llround has no long long to return (and no reader counts
  // the digits).
  if (std::fabs(value) >= 1e18) return line("%.3g", value);
  const auto v = static_cast<uint64_t>(std::llround(std::fabs(value)));
  std::string digits = std::to_string(v), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return (value < 0 ? "-" : "") + out;
}

void append_notes(std::string& out, const std::vector<std::string>& notes) {
  if (notes.empty()) return;
  out += "notes:\n";
  for (const auto& n : notes) out += "  - " + n + "\n";
}

json environment_json(const Environment& env, bool virtual_clock,
                      const std::vector<std::pair<std::string, const DeviceInfo*>>& devices) {
  json e = env.facts;
  e["warnings"] = env.warnings;
  e["virtual_clock"] = virtual_clock;
  for (const auto& [key, d] : devices)
    e[key] = {{"spec", d->spec},
              {"kind", d->kind},
              {"description", d->description},
              {"queue_depth", d->queue_depth},
              {"in_process", d->in_process},
              {"properties", d->properties},
              {"warnings", d->warnings}};
  return e;
}

// "queue depth 32", or for a remote device "queue depth 32 (64 in flight per
// connection)".
std::string queue_text(const DeviceInfo& d) {
  const uint32_t own = device_queue_depth(d);
  std::string out = "queue depth " + std::to_string(own);
  if (own != d.queue_depth)
    out += " (" + std::to_string(d.queue_depth) + " in flight per connection)";
  return out;
}

json point_settings_json(const PointSettings& s) {
  return {{"duration_s", seconds(s.duration)},
          {"min_inferences", s.min_inferences},
          {"windows", s.windows},
          {"stability_tolerance", s.stability_tolerance},
          {"warmup_max_s", seconds(s.warmup_max)},
          {"request_timeout_s", seconds(s.request_timeout)},
          {"repeats", s.repeats},
          {"seed", s.seed}};
}

json error_json(const std::optional<Error>& e) {
  if (!e) return nullptr;
  return {{"code", std::string(to_string(e->code))}, {"message", e->message}};
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

json fit_json(const LinkFit& f) {
  json res = json::array(), rel = json::array();
  for (double v : f.residuals_ms) res.push_back(json_number(v));
  for (double v : f.relative_residuals) rel.push_back(json_number(v));
  std::optional<double> mb;
  if (f.bandwidth_bytes_per_s) mb = *f.bandwidth_bytes_per_s / 1e6;
  return {{"points", f.points},
          {"fixed_ms", json_number(f.fixed_ms)},
          {"bandwidth_bytes_per_s", json_number(f.bandwidth_bytes_per_s)},
          {"bandwidth_mb_per_s", json_number(mb)},
          {"residuals_ms", res},
          {"relative_residuals", rel},
          {"rms_relative_residual", json_number(f.rms_relative_residual)},
          {"max_relative_residual", json_number(f.max_relative_residual)},
          {"r_squared", json_number(f.r_squared)}};
}

std::string fit_text(const LinkFit& f, const char* what) {
  if (!f.fixed_ms) return std::string(what) + " no fit: fewer than two sizes";
  return std::string(what) + " fit over " + std::to_string(f.points) +
         " sizes: " + opt_ms(f.fixed_ms) + " + bytes / " + opt_rate(f.bandwidth_bytes_per_s) +
         "; residuals rms " + opt_pct(f.rms_relative_residual) + ", max " +
         opt_pct(f.max_relative_residual);
}

json ladder_settings_json(const LadderSettings& s) {
  return {{"sizes", s.sizes},
          {"depth", s.depth},
          {"latency_samples", s.latency_samples},
          {"plateau_tolerance", s.plateau_tolerance},
          {"latency_bound_margin", s.latency_bound_margin},
          {"compute_bound_share", s.compute_bound_share},
          {"transport", {{"input_type", "u8"}, {"channels", 4}, {"output_fraction", 0.25}}},
          {"point", point_settings_json(s.point)}};
}

json sweep_settings_json(const SweepSettings& s) {
  return {{"min_depth", s.min_depth},
          {"max_depth", s.max_depth},
          {"knee_fraction", s.knee_fraction},
          {"refine", s.refine},
          {"latency_samples", s.latency_samples},
          {"point", point_settings_json(s.point)}};
}

json model_json(const ModelInfo& m) {
  return {{"name", m.name}, {"input_bytes", m.input_bytes()}, {"output_bytes", m.output_bytes()}};
}

// A path "a.b.c" in a JSON document.
Result<const json*> field(const json& doc, std::string_view path, std::string_view what) {
  const json* node = &doc;
  size_t start = 0;
  while (start <= path.size()) {
    const size_t dot = std::min(path.find('.', start), path.size());
    const std::string key(path.substr(start, dot - start));
    if (!node->is_object() || !node->contains(key))
      return fail(ErrorCode::invalid_argument, std::string(what) + ": field '" + std::string(path) +
                                                   "' is missing (expected a rig bench --json "
                                                   "result)");
    node = &(*node)[key];
    start = dot + 1;
  }
  return node;
}

Result<double> number(const json& doc, std::string_view path, std::string_view what) {
  auto f = field(doc, path, what);
  if (!f) return tl::unexpected(f.error());
  if ((*f)->is_null())
    return fail(ErrorCode::invalid_argument,
                std::string(what) + ": field '" + std::string(path) + "' is null");
  if (!(*f)->is_number())
    return fail(ErrorCode::invalid_argument,
                std::string(what) + ": field '" + std::string(path) + "' is not a number");
  return (*f)->get<double>();
}

std::optional<double> optional_number(const json& doc, std::string_view path) {
  auto f = field(doc, path, "");
  if (!f || !(*f)->is_number()) return std::nullopt;
  return (*f)->get<double>();
}

}  // namespace

// ---------------------------------------------------------------------------
// ladder

std::string format_ladder_text(const LadderResult& r) {
  std::string out = "rig ladder on " + r.device.spec + " (" + queue_text(r.device) + ")\n";
  out += "transport models (u8, output 1/4 of input); pipelined at depth " +
         std::to_string(r.effective.depth) + ", " + std::to_string(r.effective.point.repeats) +
         " repeats of " + format_duration(r.effective.point.duration) + " per size; " +
         std::to_string(r.effective.latency_samples) + " lone frames per size\n\n";
  out += line("%-11s %8s %8s %10s %10s %9s %10s %9s  %s\n", "frame", "in MB", "out MB", "ms/frame",
              "frames/s", "MB/s", "lone ms", "spread", "bound");
  for (const auto& rung : r.rungs) {
    const auto& p = rung.pipelined;
    out += line("%-11s %8.3f %8.3f %10s %10s %9s %10s %9s  %s%s\n", rung.size.c_str(),
                rung.bytes_in / 1e6, rung.bytes_out / 1e6, opt_fixed(p.ms_per_frame, 3).c_str(),
                opt_fixed(p.rate.median, 1).c_str(), opt_fixed(rung.mb_per_s, 1).c_str(),
                opt_fixed(rung.lone_ms.median, 3).c_str(), opt_pct(p.rate.spread).c_str(),
                std::string(to_string(rung.bound)).c_str(),
                rung.in_bandwidth_fit ? "" : " (not fitted)");
  }
  out += "\n";
  if (r.plateau.found)
    out += "plateau: " + opt_fixed(r.plateau.median_mb_per_s, 1) + " MB/s (" +
           opt_fixed(r.plateau.min_mb_per_s, 1) + "-" + opt_fixed(r.plateau.max_mb_per_s, 1) +
           ") over " + r.rungs[r.plateau.first].size + " to " + r.rungs[r.plateau.last].size +
           ", " + std::to_string(r.plateau.last - r.plateau.first + 1) + " sizes within " +
           format_fixed(r.plateau.tolerance * 100, 0) + "%\n";
  else
    out += "plateau: none within " + format_fixed(r.plateau.tolerance * 100, 0) + "%\n";
  out += "bandwidth: " + opt_rate(r.bandwidth_bytes_per_s) + " of in + out bytes" +
         (r.bandwidth_from_lone_frames ? " (from the lone-frame fit)" : "") + "\n";
  out += "  " + fit_text(r.pipelined_fit, "pipelined time per frame =") + "\n";
  const std::string from = r.duplex_from_device ? "the device says so" : "inferred";
  switch (r.duplex) {
    case Duplex::half:
      out += "duplex: half (" + from + "): in and out share one channel of " +
             opt_rate(r.direction_bandwidth_bytes_per_s) + "\n";
      break;
    case Duplex::full:
      out += "duplex: full (" + from +
             "): in and out overlap; the input direction, which carries 4x the output's bytes, " +
             "moves " + opt_rate(r.direction_bandwidth_bytes_per_s) + "\n";
      break;
    case Duplex::unknown:
      out +=
          "duplex: unknown (the device does not say, and there is no pipelined fit to set "
          "against the lone frames); one direction's bandwidth: n/a\n";
      break;
  }
  out += "fixed latency: " + opt_ms(r.round_trip_ms) +
         " round trip = " + opt_ms(r.per_transfer_ms) +
         " per transfer (a lone frame crosses twice)\n";
  out += "  " + fit_text(r.lone_fit, "lone-frame link time =") + "\n";
  if (r.worst_spread && r.worst_spread_rung)
    out += "reproducibility: repeats agree within " + opt_pct(r.worst_spread) +
           " (worst: " + r.rungs[*r.worst_spread_rung].size + ")\n";
  append_notes(out, r.notes);
  return out;
}

json ladder_to_json(const LadderResult& r) {
  json doc;
  doc["schema_version"] = kJsonSchemaVersion;
  doc["tool"] = "rig ladder";
  doc["settings"] = {{"requested", ladder_settings_json(r.requested)},
                     {"effective", ladder_settings_json(r.effective)}};
  doc["environment"] = environment_json(r.environment, r.virtual_clock, {{"device", &r.device}});
  json rungs = json::array();
  for (size_t i = 0; i < r.rungs.size(); ++i) {
    const auto& rung = r.rungs[i];
    rungs.push_back({{"size", rung.size},
                     {"width", rung.frame.width},
                     {"height", rung.frame.height},
                     {"bytes_in", rung.bytes_in},
                     {"bytes_out", rung.bytes_out},
                     {"pipelined", point_json(rung.pipelined)},
                     {"mb_per_s", json_number(rung.mb_per_s)},
                     {"lone_ms", json_summary(rung.lone_ms)},
                     {"compute_ms", json_number(rung.compute_ms)},
                     {"link_ms", json_number(rung.link_ms)},
                     {"lone_errors", rung.lone_errors},
                     {"bound", std::string(to_string(rung.bound))},
                     {"in_bandwidth_fit", rung.in_bandwidth_fit}});
  }
  json plateau_sizes = json::array();
  if (r.plateau.found)
    for (size_t i = r.plateau.first; i <= r.plateau.last; ++i)
      plateau_sizes.push_back(r.rungs[i].size);
  std::optional<double> bw_mb, direction_mb;
  if (r.bandwidth_bytes_per_s) bw_mb = *r.bandwidth_bytes_per_s / 1e6;
  if (r.direction_bandwidth_bytes_per_s) direction_mb = *r.direction_bandwidth_bytes_per_s / 1e6;
  doc["results"] = {
      {"rungs", rungs},
      {"plateau",
       {{"found", r.plateau.found},
        {"sizes", plateau_sizes},
        {"median_mb_per_s", json_number(r.plateau.median_mb_per_s)},
        {"min_mb_per_s", json_number(r.plateau.min_mb_per_s)},
        {"max_mb_per_s", json_number(r.plateau.max_mb_per_s)},
        {"tolerance", r.plateau.tolerance}}},
      {"bandwidth_bytes_per_s", json_number(r.bandwidth_bytes_per_s)},
      {"bandwidth_mb_per_s", json_number(bw_mb)},
      {"bandwidth_from", r.bandwidth_from_lone_frames ? "lone_frames" : "pipelined"},
      {"duplex", std::string(to_string(r.duplex))},
      {"duplex_from", r.duplex == Duplex::unknown ? json(nullptr)
                      : r.duplex_from_device      ? json("device")
                                                  : json("inferred")},
      {"direction_bandwidth_bytes_per_s", json_number(r.direction_bandwidth_bytes_per_s)},
      {"direction_bandwidth_mb_per_s", json_number(direction_mb)},
      {"round_trip_ms", json_number(r.round_trip_ms)},
      {"per_transfer_ms", json_number(r.per_transfer_ms)},
      {"pipelined_fit", fit_json(r.pipelined_fit)},
      {"lone_fit", fit_json(r.lone_fit)},
      {"reproducibility",
       {{"worst_spread", json_number(r.worst_spread)},
        {"worst_size",
         r.worst_spread_rung ? json(r.rungs[*r.worst_spread_rung].size) : json(nullptr)}}}};
  doc["notes"] = r.notes;
  return doc;
}

// ---------------------------------------------------------------------------
// sweep

std::string format_sweep_text(const SweepResult& r) {
  std::string out =
      "rig sweep: " + r.model.name + " on " + r.device.spec + " (" + queue_text(r.device) + ")\n";
  out += std::to_string(r.effective.point.repeats) + " repeats of " +
         format_duration(r.effective.point.duration) + " per depth\n";
  out += "lone frame (depth 1): " + opt_ms(r.lone.overall_ms.median) + " median";
  if (r.lone.hardware_ms.median)
    out += " (device compute " + opt_ms(r.lone.hardware_ms.median) + ")";
  out += "\n\n";
  out += line("%7s %11s %10s %9s %9s\n", "depth", "frames/s", "ms/frame", "of best", "spread");
  for (const auto& p : r.points)
    out += line("%6u%s %11s %10s %9s %9s\n", p.result.depth, p.refined ? "*" : " ",
                opt_fixed(p.result.rate.median, 1).c_str(),
                opt_fixed(p.result.ms_per_frame, 3).c_str(), opt_pct(p.fraction_of_best, 1).c_str(),
                opt_pct(p.result.rate.spread).c_str());
  bool any_refined = false;
  for (const auto& p : r.points) any_refined |= p.refined;
  if (any_refined) out += "(* refined around the knee)\n";
  out += "\n";
  if (r.knee)
    out += "knee: depth " + std::to_string(*r.knee) +
           " (the smallest depth with >= " + format_fixed(r.effective.knee_fraction * 100, 0) +
           "% of the best, " + opt_fixed(r.best_rate, 1) + " frames/s at depth " +
           std::to_string(r.best_depth.value_or(0)) + ")\n";
  else
    out += "knee: n/a\n";
  const std::string q = "queue depth " + std::to_string(r.queue_depth);
  const std::string knee = std::to_string(r.knee.value_or(0));
  const std::string top = std::to_string(r.effective.max_depth);
  switch (r.knee_vs_queue) {
    case KneeVsQueue::at_queue_depth:
      out += q + ": the rate flattens at the queue depth (knee " + knee + ", within one step)";
      out += r.effective.max_depth > r.queue_depth
                 ? "; the depths beyond it, up to " + top + ", add latency, not rate\n"
                 : "; the last step into it adds little rate\n";
      break;
    case KneeVsQueue::queue_limited:
      out += q +
             ": the rate was still rising at the queue depth, the deepest the device takes; "
             "the queue limits pipelining (a deeper queue would raise the rate)\n";
      break;
    case KneeVsQueue::above_queue_depth:
      out += q + ": the knee (" + knee + ") is above the device's own queue; the requests a " +
             "connection holds beyond it (up to " + std::to_string(r.device.queue_depth) +
             ") cover the link's round trip\n";
      break;
    case KneeVsQueue::still_rising:
      out += q + ": the rate was still rising at the deepest depth swept (" + top +
             "); raise --depth (up to " + std::to_string(r.device.queue_depth) + ")\n";
      break;
    case KneeVsQueue::below:
      out += q + ": the knee is below it; depths beyond " + knee + " add latency, not rate\n";
      break;
    case KneeVsQueue::unknown:
      break;
  }
  if (r.round_trip_ms)
    out += "round trip: " + opt_ms(r.round_trip_ms) + " of the " + opt_ms(r.single_shot_ms) +
           " single shot (" + opt_pct(r.round_trip_share, 0) + ") is hidden by pipelining (" +
           opt_ms(r.single_shot_ms) + " at depth 1 -> " + opt_ms(r.pipelined_ms) +
           " per frame at depth " + std::to_string(r.best_depth.value_or(0)) + ")\n";
  append_notes(out, r.notes);
  return out;
}

json sweep_to_json(const SweepResult& r) {
  json doc;
  doc["schema_version"] = kJsonSchemaVersion;
  doc["tool"] = "rig sweep";
  doc["settings"] = {{"requested", sweep_settings_json(r.requested)},
                     {"effective", sweep_settings_json(r.effective)}};
  doc["environment"] = environment_json(r.environment, r.virtual_clock, {{"device", &r.device}});
  doc["model"] = model_json(r.model);
  json points = json::array();
  for (const auto& p : r.points) {
    json j = point_json(p.result);
    j["refined"] = p.refined;
    j["fraction_of_best"] = json_number(p.fraction_of_best);
    points.push_back(j);
  }
  auto opt_u32 = [](const std::optional<uint32_t>& v) { return v ? json(*v) : json(nullptr); };
  doc["results"] = {{"points", points},
                    {"skipped_depths", r.skipped},
                    {"knee", opt_u32(r.knee)},
                    {"best_depth", opt_u32(r.best_depth)},
                    {"best_rate_per_s", json_number(r.best_rate)},
                    {"queue_depth", r.queue_depth},
                    {"max_in_flight", r.device.queue_depth},
                    {"knee_vs_queue", std::string(to_string(r.knee_vs_queue))},
                    {"lone_ms", json_summary(r.lone.overall_ms)},
                    {"lone_hardware_ms", json_summary(r.lone.hardware_ms)},
                    {"single_shot_ms", json_number(r.single_shot_ms)},
                    {"pipelined_ms", json_number(r.pipelined_ms)},
                    {"round_trip_ms", json_number(r.round_trip_ms)},
                    {"round_trip_share", json_number(r.round_trip_share)},
                    {"ttfo_ms", ms(r.ttfo.total)}};
  doc["notes"] = r.notes;
  return doc;
}

// ---------------------------------------------------------------------------
// ab

std::string format_ab_text(const AbResult& r) {
  std::string out = "rig ab: " + r.model.name + ", " + std::to_string(r.rates_a.size()) +
                    " interleaved pairs (A B A B ...), " +
                    format_duration(r.settings.point.duration) + " per run\n";
  auto side = [&](const char* name, const AbConfig& c, const DeviceInfo& d, uint32_t depth) {
    std::string knobs;
    for (const auto& k : c.knobs) knobs += (knobs.empty() ? "" : ", ") + k;
    return std::string(name) + ": " + knobs + "  ->  " + d.spec + " at depth " +
           std::to_string(depth) + "\n";
  };
  out += side("A", r.a, r.device_a, r.depth_a);
  out += side("B", r.b, r.device_b, r.depth_b);
  out += "\n" + line("%-8s %14s %14s %8s\n", "pair", "A frames/s", "B frames/s", "B/A");
  for (size_t i = 0; i < r.ratios.size(); ++i)
    out += line("%-8zu %14.2f %14.2f %8.4f\n", i + 1, r.rates_a[i], r.rates_b[i], r.ratios[i]);
  out += line("%-8s %14s %14s %8s\n", "median", opt_fixed(r.rate_a.median, 2).c_str(),
              opt_fixed(r.rate_b.median, 2).c_str(), opt_fixed(r.ratio.median, 4).c_str());
  out += line("%-8s %14s %14s %8s\n", "spread", opt_pct(r.rate_a.spread).c_str(),
              opt_pct(r.rate_b.spread).c_str(), opt_pct(r.ratio.spread).c_str());
  out += "\nverdict: " + r.verdict_text + "\n";
  append_notes(out, r.notes);
  return out;
}

json ab_to_json(const AbResult& r) {
  json doc;
  doc["schema_version"] = kJsonSchemaVersion;
  doc["tool"] = "rig ab";
  auto side = [](const AbConfig& c) {
    return json{{"spec", c.spec}, {"depth", c.depth}, {"knobs", c.knobs}};
  };
  doc["settings"] = {{"a", side(r.a)},
                     {"b", side(r.b)},
                     {"pairs", r.settings.pairs},
                     {"point", point_settings_json(r.settings.point)}};
  doc["environment"] = environment_json(r.environment, r.virtual_clock,
                                        {{"device_a", &r.device_a}, {"device_b", &r.device_b}});
  doc["model"] = model_json(r.model);
  json pairs = json::array();
  for (size_t i = 0; i < r.ratios.size(); ++i)
    pairs.push_back({{"pair", i + 1},
                     {"a_rate_per_s", json_number(r.rates_a[i])},
                     {"b_rate_per_s", json_number(r.rates_b[i])},
                     {"ratio", json_number(r.ratios[i])}});
  doc["results"] = {{"shared_device", r.shared_device},
                    {"depth_a", r.depth_a},
                    {"depth_b", r.depth_b},
                    {"pairs", pairs},
                    {"a_rate_per_s", json_summary(r.rate_a)},
                    {"b_rate_per_s", json_summary(r.rate_b)},
                    {"ratio", json_summary(r.ratio)},
                    {"difference", json_number(r.difference)},
                    {"noise", json_number(r.noise)},
                    {"verdict", std::string(to_string(r.verdict))},
                    {"verdict_text", r.verdict_text}};
  doc["notes"] = r.notes;
  return doc;
}

// ---------------------------------------------------------------------------
// predict

Result<PredictSource> predict_source_from_json(const json& doc, std::string_view what) {
  if (!doc.is_object())
    return fail(ErrorCode::invalid_argument,
                std::string(what) + ": not a JSON object (expected a rig bench --json result)");
  auto version = number(doc, "schema_version", what);
  if (!version) return tl::unexpected(version.error());
  if (*version != kJsonSchemaVersion)
    return fail(ErrorCode::invalid_argument, std::string(what) + ": schema_version " +
                                                 format_fixed(*version, 0) + ", this rig reads " +
                                                 std::to_string(kJsonSchemaVersion));
  auto tool = field(doc, "tool", what);
  if (!tool) return tl::unexpected(tool.error());
  if (!(*tool)->is_string() || (*tool)->get<std::string>() != "rig bench")
    return fail(ErrorCode::invalid_argument,
                std::string(what) + ": a '" +
                    ((*tool)->is_string() ? (*tool)->get<std::string>() : std::string("?")) +
                    "' result; predict reads a rig bench --json result");
  PredictSource s;
  if (auto spec = field(doc, "environment.device.spec", what); spec && (*spec)->is_string())
    s.device_spec = (*spec)->get<std::string>();
  if (auto name = field(doc, "model.name", what); name && (*name)->is_string())
    s.model_name = (*name)->get<std::string>();

  // Compute: what the device reported; an in-process device crosses no link,
  // so its whole lone-frame latency is compute.
  if (auto hw = optional_number(doc, "latency.hardware_ms.median")) {
    s.compute_ms = *hw;
    s.compute_from = "latency.hardware_ms.median";
  } else {
    auto in_process = field(doc, "environment.device.in_process", what);
    if (in_process && (*in_process)->is_boolean() && (*in_process)->get<bool>()) {
      auto overall = number(doc, "latency.overall_ms.median", what);
      if (!overall) return tl::unexpected(overall.error());
      s.compute_ms = *overall;
      s.compute_from = "latency.overall_ms.median (in-process device: no link)";
    } else {
      return fail(ErrorCode::invalid_argument,
                  std::string(what) +
                      ": field 'latency.hardware_ms.median' is null: the device did not report "
                      "its compute time, so compute and link cannot be told apart");
    }
  }
  if (!(s.compute_ms >= 0))
    return fail(ErrorCode::invalid_argument, std::string(what) + ": compute time is negative");

  // Bytes: measured per inference, else the model's declared frames.
  auto bytes = [&](const char* measured, const char* declared) -> Result<double> {
    if (auto v = optional_number(doc, measured); v && *v > 0) return *v;
    return number(doc, declared, what);
  };
  auto in = bytes("bytes.payload_in_per_inference", "bytes.model_in");
  if (!in) return tl::unexpected(in.error());
  auto out = bytes("bytes.payload_out_per_inference", "bytes.model_out");
  if (!out) return tl::unexpected(out.error());
  if (*in < 0 || *out < 0)
    return fail(ErrorCode::invalid_argument,
                std::string(what) + ": bytes per inference are negative");
  s.bytes_in = *in;
  s.bytes_out = *out;

  // A depth outside uint32_t would make the cast undefined: name the field.
  if (auto d = optional_number(doc, "steady.depth")) {
    if (!(*d >= 1 && *d <= 4294967295.0 && std::floor(*d) == *d))
      return fail(ErrorCode::invalid_argument,
                  std::string(what) + ": field 'steady.depth' must be a whole number in " +
                      "1..4294967295, got " + line("%.17g", *d));
    s.depth = static_cast<uint32_t>(*d);
  }
  s.measured_rate = optional_number(doc, "steady.rate_per_s.median");
  s.measured_lone_ms = optional_number(doc, "latency.overall_ms.median");
  for (auto [path, dst] :
       {std::pair{"ttfo.load_ms", &s.load_ms}, std::pair{"ttfo.allocate_ms", &s.allocate_ms},
        std::pair{"ttfo.first_inference_ms", &s.first_inference_ms}}) {
    auto v = number(doc, path, what);
    if (!v) return tl::unexpected(v.error());
    *dst = *v;
  }
  s.first_compute_ms = optional_number(doc, "ttfo.first_inference_device.compute_ms");
  return s;
}

std::string format_prediction_text(const PredictSource& s, const Prediction& p) {
  const LinkProfile& l = p.link;
  const double lat_ms = ms(l.latency);
  std::string out = "rig predict: " + (s.model_name.empty() ? std::string("model") : s.model_name) +
                    " measured on " + s.device_spec;
  if (s.measured_rate)
    out += " (" + format_fixed(*s.measured_rate, 1) + " frames/s at depth " +
           std::to_string(s.depth) + ")";
  out += "\n  compute " + format_ms(s.compute_ms) + " per frame (" + s.compute_from + "); " +
         with_commas(s.bytes_in) + " B in, " + with_commas(s.bytes_out) + " B out per frame\n";
  out += "link " + l.name + ": " + format_rate(l.bw_in) + " in, " + format_rate(l.bw_out) +
         " out, " + format_ms(lat_ms) + " per transfer (" + format_ms(2 * lat_ms) +
         " round trip), queue depth " + std::to_string(l.queue_depth) + ", " +
         (l.full_duplex ? "full" : "half") + " duplex\n  (" + l.source + ")\n\n";

  out += "steady: " + format_fixed(p.rate, 1) + " frames/s (" + format_ms(p.ms_per_frame) +
         " per frame) at depth " + std::to_string(p.depth) + ", bounded by ";
  switch (p.bound) {
    case Bottleneck::bus:
      out += "the bus: " + format_ms(p.bus_ms_per_frame) + " per frame on the link against " +
             format_ms(p.compute_ms_per_frame) + " of compute\n";
      break;
    case Bottleneck::compute:
      out += "compute: " + format_ms(p.compute_ms_per_frame) + " per frame against " +
             format_ms(p.bus_ms_per_frame) + " on the link\n";
      break;
    case Bottleneck::latency:
      out += "latency: depth " + std::to_string(p.depth) + " cannot cover a " +
             format_ms(p.lone_ms) + " lone frame; a deeper queue would help\n";
      break;
  }
  if (p.compute_overlaps)
    out += "  (the device overlaps frames: " + format_ms(s.compute_ms) +
           " of compute latency, but it measured " + format_ms(p.compute_ms_per_frame) +
           " per frame; that is the compute stage's time per frame)\n";
  out += "lone frame: " + format_ms(p.lone_ms) + " (in " + format_ms(p.transfer_in_ms) + " + " +
         format_ms(lat_ms) + " + compute " + format_ms(s.compute_ms) + " + out " +
         format_ms(p.transfer_out_ms) + " + " + format_ms(lat_ms) + ")\n";
  out += "time to first output: " + format_ms(p.ttfo_ms) + " (load " + format_ms(s.load_ms) +
         " + allocate " + format_ms(s.allocate_ms) + " + first inference " +
         format_ms(p.ttfo_ms - s.load_ms - s.allocate_ms) + "; the model upload is not included)\n";
  const std::string rate = with_commas(p.rate);
  if (!l.full_duplex && l.bw_in == l.bw_out) {
    out += "bus: " + rate + " x " + with_commas(s.bytes_in + s.bytes_out) +
           " B = " + format_rate(p.traffic_in_bytes_per_s + p.traffic_out_bytes_per_s) +
           " against " + format_rate(l.bw_in) + " leaves the bus " +
           format_fixed(p.bus_idle * 100, 0) + "% idle\n";
  } else {
    auto dir = [&](const char* name, double bytes, double traffic, double bw) {
      return std::string(name) + ": " + rate + " x " + with_commas(bytes) +
             " B = " + format_rate(traffic) + " against " + format_rate(bw) + " (" +
             format_fixed(traffic / bw * 100, 0) + "% busy)";
    };
    out += "bus: " + dir("in", s.bytes_in, p.traffic_in_bytes_per_s, l.bw_in) + "; " +
           dir("out", s.bytes_out, p.traffic_out_bytes_per_s, l.bw_out) + "; the " +
           (l.full_duplex ? "busier direction" : "shared channel") + " is " +
           format_fixed(p.bus_idle * 100, 0) + "% idle\n";
  }
  return out;
}

json prediction_to_json(const std::string& path, const PredictSource& s, const Prediction& p) {
  json doc;
  doc["schema_version"] = kJsonSchemaVersion;
  doc["tool"] = "rig predict";
  const LinkProfile& l = p.link;
  doc["settings"] = {{"result", path},
                     {"depth", p.depth},
                     {"link",
                      {{"name", l.name},
                       {"bw_in_bytes_per_s", l.bw_in},
                       {"bw_out_bytes_per_s", l.bw_out},
                       {"latency_ms", ms(l.latency)},
                       {"round_trip_ms", ms(l.round_trip())},
                       {"queue_depth", l.queue_depth},
                       {"duplex", l.full_duplex ? "full" : "half"},
                       {"source", l.source}}}};
  doc["results"] = {
      {"source",
       {{"device_spec", s.device_spec},
        {"model", s.model_name},
        {"compute_ms", json_number(s.compute_ms)},
        {"compute_from", s.compute_from},
        {"bytes_in", json_number(s.bytes_in)},
        {"bytes_out", json_number(s.bytes_out)},
        {"depth", s.depth},
        {"measured_rate_per_s", json_number(s.measured_rate)},
        {"measured_lone_ms", json_number(s.measured_lone_ms)}}},
      {"prediction",
       {{"rate_per_s", json_number(p.rate)},
        {"ms_per_frame", json_number(p.ms_per_frame)},
        {"bound", std::string(to_string(p.bound))},
        {"lone_ms", json_number(p.lone_ms)},
        {"transfer_in_ms", json_number(p.transfer_in_ms)},
        {"transfer_out_ms", json_number(p.transfer_out_ms)},
        {"bus_ms_per_frame", json_number(p.bus_ms_per_frame)},
        {"compute_ms_per_frame", json_number(p.compute_ms_per_frame)},
        {"compute_overlaps", p.compute_overlaps},
        {"traffic_in_bytes_per_s", json_number(p.traffic_in_bytes_per_s)},
        {"traffic_out_bytes_per_s", json_number(p.traffic_out_bytes_per_s)},
        {"traffic_mb_per_s",
         json_number((p.traffic_in_bytes_per_s + p.traffic_out_bytes_per_s) / 1e6)},
        {"bus_utilization", json_number(p.bus_utilization)},
        {"bus_idle", json_number(p.bus_idle)},
        {"ttfo_ms", json_number(p.ttfo_ms)},
        {"ttfo",
         {{"load_ms", json_number(s.load_ms)},
          {"allocate_ms", json_number(s.allocate_ms)},
          {"first_compute_ms", json_number(p.first_compute_ms)},
          {"first_inference_ms", json_number(p.ttfo_ms - s.load_ms - s.allocate_ms)}}}}}};
  return doc;
}

}  // namespace rig

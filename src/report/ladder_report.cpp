// rig ladder's reporters: text with units, and the JSON document.
#include "rig/report/ladder_report.hpp"

#include <algorithm>
#include <cmath>

#include "report/json_common.hpp"
#include "report/monitor_fields.hpp"
#include "report/monitor_text.hpp"
#include "report/text_common.hpp"
#include "rig/units.hpp"

namespace rig {
namespace {

using report::json;
using namespace report;

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
  json j = {{"sizes", s.sizes},
            {"depth", s.depth},
            {"latency_samples", s.latency_samples},
            {"plateau_tolerance", s.plateau_tolerance},
            {"latency_bound_margin", s.latency_bound_margin},
            {"compute_bound_share", s.compute_bound_share},
            {"out_heavy", s.out_heavy},
            {"transport",
             {{"input_type", "u8"},
              {"channels", 4},
              {"output_fraction", output_fraction(RungShape::in_heavy)},
              {"out_heavy_output_fraction", output_fraction(RungShape::out_heavy)}}},
            {"point", point_settings_json(s.point)}};
  add_monitor_settings_json(j, s.monitor, s.confounds);
  return j;
}

}  // namespace

std::string format_ladder_text(const LadderResult& r) {
  std::string out = "rig ladder on " + r.device.spec + " (" + queue_text(r.device) + ")\n";
  out += std::string("transport models (u8, output 1/4 of input") +
         (r.effective.out_heavy ? ", and out-heavy: output 4x the input, frame halved each side"
                                : "") +
         "); pipelined at depth " + std::to_string(r.effective.depth) + ", " +
         std::to_string(r.effective.point.repeats) + " repeats of " +
         format_duration(r.effective.point.duration) + " per size; " +
         std::to_string(r.effective.latency_samples) + " lone frames per size\n\n";
  out += confounds_text(r.verdict, r.effective.confounds.strict);
  out += line("%-21s %8s %8s %10s %10s %9s %10s %9s  %s\n", "frame", "in MB", "out MB", "ms/frame",
              "frames/s", "MB/s", "lone ms", "spread", "bound");
  for (const auto& rung : r.rungs) {
    const auto& p = rung.pipelined;
    out += line("%-21s %8.3f %8.3f %10s %10s %9s %10s %9s  %s%s\n", rung.label().c_str(),
                rung.bytes_in / 1e6, rung.bytes_out / 1e6, opt_fixed(p.ms_per_frame, 3).c_str(),
                opt_fixed(p.rate.median, 1).c_str(), opt_fixed(rung.mb_per_s, 1).c_str(),
                opt_fixed(rung.lone_ms.median, 3).c_str(), opt_pct(p.rate.spread).c_str(),
                std::string(to_string(rung.bound)).c_str(),
                rung.in_bandwidth_fit || rung.in_direction_fit ? "" : " (not fitted)");
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
  auto from = [](DirectionSource d) {
    return d == DirectionSource::pipelined ? std::string("pipelined") : std::string("lone frames");
  };
  if (r.bw_in_bytes_per_s && r.bw_out_bytes_per_s)
    out += "bandwidth: in " + opt_rate(r.bw_in_bytes_per_s) + " (" + from(r.bw_in_from) +
           "), out " + opt_rate(r.bw_out_bytes_per_s) + " (" + from(r.bw_out_from) + ")\n";
  else
    out += "bandwidth per direction: n/a (see the notes)\n";
  out += "  in-heavy frames: " + opt_rate(r.bandwidth_bytes_per_s) + " of in + out bytes" +
         (r.bandwidth_from_lone_frames ? " (from the lone-frame fit)" : "") + "\n";
  out += "  " + fit_text(r.pipelined_fit, "pipelined time per frame =") + "\n";
  const std::string said = r.duplex_from_device ? "the device says so" : "inferred";
  switch (r.duplex) {
    case Duplex::half:
      out += "duplex: half (" + said + "): in and out share one channel, back to back\n";
      break;
    case Duplex::full:
      out += "duplex: full (" + said + "): in and out cross at once, each at its own bandwidth\n";
      break;
    case Duplex::unknown:
      out +=
          "duplex: unknown (the device does not say, and there is no pipelined fit to set "
          "against the lone frames)\n";
      break;
  }
  out += "fixed latency: " + opt_ms(r.round_trip_ms) +
         " round trip = " + opt_ms(r.per_transfer_ms) +
         " per transfer (a lone frame crosses twice)\n";
  if (r.rig_round_trip_ms)
    out += "  of which rig round trip on this link, no device: " + opt_ms(r.rig_round_trip_ms) +
           " (protocol ping)\n";
  out += "  " + fit_text(r.lone_fit, "lone-frame link time =") + " (in-heavy frames)\n";
  if (r.direction_fit_max_relative_residual)
    out +=
        "  lone-frame link time = round trip + in / bw_in + out / bw_out over every rung: "
        "residuals max " +
        opt_pct(r.direction_fit_max_relative_residual) + "\n";
  if (auto link = measured_link(r))
    out += "as a link for rig predict and rig fit: --link " + to_sim_params(*link) + "\n";
  if (r.worst_spread && r.worst_spread_rung)
    out += "reproducibility: repeats agree within " + opt_pct(r.worst_spread) +
           " (worst: " + r.rungs[*r.worst_spread_rung].label() + ")\n";
  append_notes(out, r.notes);
  out += monitor_text(r.monitor);
  out += verdict_line(r.verdict);  // the notes above say why
  return out;
}

std::string ladder_to_json(const LadderResult& r) {
  json doc = document("rig ladder");
  doc["settings"] = {{"requested", ladder_settings_json(r.requested)},
                     {"effective", ladder_settings_json(r.effective)}};
  doc["environment"] = environment_json(r.environment, r.virtual_clock, {{"device", &r.device}});
  json rungs = json::array();
  for (size_t i = 0; i < r.rungs.size(); ++i) {
    const auto& rung = r.rungs[i];
    rungs.push_back({{"size", rung.size},
                     {"shape", std::string(to_string(rung.shape))},
                     {"in_direction_fit", rung.in_direction_fit},
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
  std::optional<double> bw_mb, in_mb, out_mb;
  if (r.bandwidth_bytes_per_s) bw_mb = *r.bandwidth_bytes_per_s / 1e6;
  if (r.bw_in_bytes_per_s) in_mb = *r.bw_in_bytes_per_s / 1e6;
  if (r.bw_out_bytes_per_s) out_mb = *r.bw_out_bytes_per_s / 1e6;
  auto from = [](DirectionSource d) {
    return d == DirectionSource::none ? json(nullptr) : json(std::string(to_string(d)));
  };
  const std::optional<LinkProfile> link = measured_link(r);
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
      {"bandwidth_from", !r.bandwidth_bytes_per_s       ? json(nullptr)
                         : r.bandwidth_from_lone_frames ? json("lone_frames")
                                                        : json("pipelined")},
      {"duplex", std::string(to_string(r.duplex))},
      {"duplex_from", r.duplex == Duplex::unknown ? json(nullptr)
                      : r.duplex_from_device      ? json("device")
                                                  : json("inferred")},
      {"bw_in_bytes_per_s", json_number(r.bw_in_bytes_per_s)},
      {"bw_in_mb_per_s", json_number(in_mb)},
      {"bw_in_from", from(r.bw_in_from)},
      {"bw_out_bytes_per_s", json_number(r.bw_out_bytes_per_s)},
      {"bw_out_mb_per_s", json_number(out_mb)},
      {"bw_out_from", from(r.bw_out_from)},
      {"direction_fit_max_relative_residual", json_number(r.direction_fit_max_relative_residual)},
      {"link", link ? json(to_sim_params(*link)) : json(nullptr)},
      {"round_trip_ms", json_number(r.round_trip_ms)},
      {"per_transfer_ms", json_number(r.per_transfer_ms)},
      {"rig_round_trip_ms", json_number(r.rig_round_trip_ms)},
      {"pipelined_fit", fit_json(r.pipelined_fit)},
      {"lone_fit", fit_json(r.lone_fit)},
      {"reproducibility",
       {{"worst_spread", json_number(r.worst_spread)},
        {"worst_size",
         r.worst_spread_rung ? json(r.rungs[*r.worst_spread_rung].label()) : json(nullptr)}}}};
  doc["notes"] = r.notes;
  doc["monitor"] = monitor_json(r.monitor);
  doc["verdict"] = verdict_json(r.verdict);
  return dump(doc);
}

Result<LinkProfile> read_ladder_link(std::string_view text, std::string_view what,
                                     std::string_view reader) {
  auto read = read_document(text, what, "rig ladder", reader);
  if (!read) return tl::unexpected(read.error());
  const json& doc = read->first;
  auto bad = [&](const std::string& m) {
    return fail(ErrorCode::invalid_argument, std::string(what) + ": " + m);
  };
  auto results = doc.find("results");
  if (results == doc.end() || !results->is_object()) return bad("field 'results' is missing");
  auto number = [&](const char* key) -> std::optional<double> {
    auto it = results->find(key);
    if (it == results->end() || !it->is_number()) return std::nullopt;
    const double v = it->get<double>();
    return std::isfinite(v) ? std::optional<double>(v) : std::nullopt;
  };
  LinkProfile link;
  link.name = "measured";
  // Version 5 names each direction; older documents have one bandwidth for
  // both (one direction's, else in + out over one channel).
  std::optional<double> bw_in = number("bw_in_bytes_per_s"), bw_out = number("bw_out_bytes_per_s");
  std::string from = "results.bw_in_bytes_per_s, results.bw_out_bytes_per_s";
  if (!bw_in || !bw_out || *bw_in <= 0 || *bw_out <= 0) {
    std::optional<double> bw = number("direction_bandwidth_bytes_per_s");
    from = "results.direction_bandwidth_bytes_per_s";
    if (!bw || *bw <= 0) {
      bw = number("bandwidth_bytes_per_s");
      from = "results.bandwidth_bytes_per_s";
    }
    if (!bw || *bw <= 0)
      return bad("field 'results.bandwidth_bytes_per_s' is null: the ladder fitted no bandwidth");
    bw_in = bw_out = bw;
  }
  link.bw_in = *bw_in;
  link.bw_out = *bw_out;
  if (auto per = number("per_transfer_ms"); per && *per > 0)
    link.latency = Nanos(static_cast<int64_t>(std::llround(*per * 1e6)));
  auto duplex = results->find("duplex");
  link.full_duplex = duplex != results->end() && duplex->is_string() && *duplex == "full";
  std::string spec = "?";
  auto env = doc.find("environment");
  if (env != doc.end() && env->is_object()) {
    auto dev = env->find("device");
    if (dev != env->end() && dev->is_object()) {
      if (auto s = dev->find("spec"); s != dev->end() && s->is_string()) spec = *s;
      if (auto q = dev->find("queue_depth"); q != dev->end() && q->is_number_unsigned())
        link.queue_depth = std::max<uint32_t>(1, q->get<uint32_t>());
    }
  }
  link.source = "rig ladder result " + std::string(what) + " (device " + spec + "; " + from + ")";
  return link;
}

}  // namespace rig

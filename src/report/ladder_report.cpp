// rig ladder's reporters: text with units, and the JSON document.
#include "rig/report/ladder_report.hpp"

#include <algorithm>
#include <cmath>

#include "report/json_common.hpp"
#include "report/ladder_fields.hpp"
#include "report/monitor_text.hpp"
#include "report/text_common.hpp"
#include "rig/units.hpp"

namespace rig {
namespace {

using report::json;
using namespace report;

std::string fit_text(const LinkFit& f, const char* what) {
  if (!f.fixed_ms) return std::string(what) + " no fit: fewer than two sizes";
  if (f.max_relative_residual && *f.max_relative_residual > kLadderPoorFitResidual)
    return std::string(what) + " poor fit over " + std::to_string(f.points) +
           " sizes, no bandwidth stated: residuals rms " + opt_pct(f.rms_relative_residual) +
           ", max " + opt_pct(f.max_relative_residual) + " (> " +
           format_fixed(kLadderPoorFitResidual * 100, 0) + "%)";
  return std::string(what) + " fit over " + std::to_string(f.points) +
         " sizes: " + opt_ms(f.fixed_ms) + " + bytes / " + opt_rate(f.bandwidth_bytes_per_s) +
         "; residuals rms " + opt_pct(f.rms_relative_residual) + ", max " +
         opt_pct(f.max_relative_residual);
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
  if (r.bandwidth_bytes_per_s)
    out += "  in-heavy frames: " + opt_rate(r.bandwidth_bytes_per_s) + " of in + out bytes" +
           (r.bandwidth_from_lone_frames ? " (from the lone-frame fit)" : "") + "\n";
  else
    out += "  in-heavy frames: n/a (see the notes)\n";
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
  if (r.rig_round_trip_ms)
    out += "fixed latency: " + opt_ms(r.round_trip_ms) + " round trip, less rig's own " +
           opt_ms(r.rig_round_trip_ms) +
           " to the server (protocol ping, no device) = " + opt_ms(r.per_transfer_ms) +
           " per transfer on the device's link (a lone frame "
           "crosses twice)\n";
  else
    out += "fixed latency: " + opt_ms(r.round_trip_ms) +
           " round trip = " + opt_ms(r.per_transfer_ms) +
           " per transfer (a lone frame crosses twice)\n";
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
  return out + closing_text(r.notes, r.monitor, r.verdict);
}

std::string ladder_to_json(const LadderResult& result) {
  return write_document("rig ladder", result, ladder_fields<JsonWriter>);
}

Result<LinkProfile> read_ladder_link(std::string_view text, std::string_view what,
                                     std::string_view reader) {
  auto read = read_document(text, what, "rig ladder", reader);
  if (!read) return tl::unexpected(read.error());
  const LadderLinkRead read_back =
      read_leniently<LadderLinkRead>(read->first, read->second, ladder_link_fields<JsonReader>);
  const LadderResult& r = read_back.ladder;
  auto bad = [&](const std::string& m) {
    return fail(ErrorCode::invalid_argument, std::string(what) + ": " + m);
  };
  if (!read_back.has_results) return bad("field 'results' is missing");
  const auto positive = [](const std::optional<double>& v) {
    return v && std::isfinite(*v) && *v > 0 ? v : std::nullopt;
  };
  LinkProfile link;
  link.name = "measured";
  // Version 5 names each direction; older documents have one bandwidth for
  // both (one direction's, else in + out over one channel).
  std::optional<double> bw_in = r.bw_in_bytes_per_s, bw_out = r.bw_out_bytes_per_s;
  std::string from = "results.bw_in_bytes_per_s, results.bw_out_bytes_per_s";
  if (!positive(bw_in) || !positive(bw_out)) {
    std::optional<double> bw = read_back.direction_bandwidth;
    from = "results.direction_bandwidth_bytes_per_s";
    if (!positive(bw)) {
      bw = r.bandwidth_bytes_per_s;
      from = "results.bandwidth_bytes_per_s";
    }
    if (!positive(bw))
      return bad("field 'results.bandwidth_bytes_per_s' is null: the ladder fitted no bandwidth");
    bw_in = bw_out = bw;
  }
  link.bw_in = *bw_in;
  link.bw_out = *bw_out;
  if (auto per = positive(r.per_transfer_ms))
    link.latency = Nanos(static_cast<int64_t>(std::llround(*per * 1e6)));
  link.full_duplex = r.duplex == Duplex::full;
  const std::string spec = r.device.spec.empty() ? "?" : r.device.spec;
  link.queue_depth = std::max<uint32_t>(1, r.device.queue_depth);
  link.source = "rig ladder result " + std::string(what) + " (device " + spec + "; " + from + ")";
  return link;
}

}  // namespace rig

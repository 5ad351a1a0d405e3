// rig bench's reporters: the text table, and the JSON document written and
// read through one table of keys (bench_fields.hpp).
#include "rig/report/bench_report.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "report/bench_fields.hpp"
#include "report/json_common.hpp"
#include "report/monitor_text.hpp"
#include "report/text_common.hpp"
#include "rig/report/document.hpp"
#include "rig/units.hpp"

namespace rig {

using report::json;
using namespace report;

std::string bench_to_json(const BenchResult& result) {
  return write_document("rig bench", result, bench_fields<JsonWriter>);
}

Result<BenchResult> read_bench_json(std::string_view text, std::string_view what,
                                    std::string_view reader) {
  auto read = read_document(text, what, "rig bench", reader);
  if (!read) return tl::unexpected(read.error());
  BenchResult r;
  std::optional<Error> error;
  JsonReader io(read->first, "", read->second, what, error);
  bench_fields(io, r);
  if (error) return tl::unexpected(*error);
  return r;
}

Result<BenchSettings> read_bench_settings_json(std::string_view text, std::string_view what) {
  auto parsed = parse_json(text, what, "a JSON object of settings.effective keys");
  if (!parsed) return tl::unexpected(parsed.error());
  const json given = std::move(*parsed);
  if (!given.is_object())
    return fail(ErrorCode::invalid_argument,
                std::string(what) + ": not a JSON object of settings.effective keys");
  // The defaults through the same table, then the keys given on top of them.
  BenchSettings defaults;
  json merged = json::object();
  JsonWriter writer(merged);
  bench_settings_fields(writer, defaults);
  for (const auto& [key, value] : given.items()) {
    if (!merged.contains(key)) {
      std::string known;
      for (const auto& [k, v] : merged.items()) known += (known.empty() ? "" : ", ") + k;
      return fail(ErrorCode::invalid_argument,
                  std::string(what) + ": unknown setting '" + key + "' (known: " + known + ")");
    }
    merged[key] = value;
  }
  BenchSettings s;
  std::optional<Error> error;
  JsonReader reader(merged, "", kJsonSchemaVersion, what, error);
  bench_settings_fields(reader, s);
  if (error) return tl::unexpected(*error);
  return s;
}

WallPlan bench_wall_plan(const BenchSettings& s) {
  WallPlan p;
  p.lone_max = s.latency_max;
  p.measure_min = s.point.duration;
  if (s.offered.enabled()) {
    p.repeats = 1;
    p.warmup_max = default_warmup_window(s.point.duration, s.point.windows);
    p.measure_max = s.point.duration;
    return p;
  }
  p.repeats = s.point.repeats;
  p.warmup_max = s.point.warmup_max;
  p.measure_max = Nanos(static_cast<int64_t>(static_cast<double>(s.point.duration.count()) *
                                             std::max(1.0, s.point.max_duration_factor)));
  return p;
}

std::string format_bench_text(const BenchResult& r) {
  std::ostringstream out;
  out << "rig bench: " << r.model.name << " on " << r.device.spec << "\n";
  out << "  " << r.device.description << ", queue depth " << r.device.queue_depth << "\n";
  out << "  model: ";
  for (size_t i = 0; i < r.model.inputs.size(); ++i)
    out << (i ? ", " : "") << "in " << r.model.inputs[i].name << " "
        << to_string(r.model.inputs[i].type) << " "
        << format_bytes(static_cast<double>(r.model.inputs[i].bytes));
  for (const auto& t : r.model.outputs)
    out << ", out " << t.name << " " << to_string(t.type) << " "
        << format_bytes(static_cast<double>(t.bytes));
  out << "\n";
  if (const ModelRewrites& n = r.model.normalization; n.ran) {
    std::string kinds;
    for (const auto& [kind, count] : n.rewrites)
      kinds += (kinds.empty() ? "" : ", ") + kind + " " + std::to_string(count);
    out << "  normalised at load: nodes " << n.nodes_before << " -> " << n.nodes_after << ", "
        << (kinds.empty() ? std::string("no rewrites") : "rewrites: " + kinds) << "\n";
    for (const auto& note : n.notes) out << "  note: " << note << "\n";
  }
  out << "\n";
  out << confounds_text(r.verdict, r.effective.confounds.strict);

  out << "time to first output (cold)\n";
  row(out, "total", format_duration(r.ttfo.total));
  row(out, "load (read+parse+compile)", format_duration(r.ttfo.load),
      "read " + format_duration(r.ttfo.load_breakdown.read) + ", parse " +
          format_duration(r.ttfo.load_breakdown.parse) + ", compile " +
          format_duration(r.ttfo.load_breakdown.compile));
  row(out, "allocate + bind", format_duration(r.ttfo.allocate));
  row(out, "first inference", format_duration(r.ttfo.first_inference),
      r.ttfo.first_timings.compute
          ? "device compute " + format_duration(*r.ttfo.first_timings.compute)
          : "");
  out << '\n';

  if (r.offered) {
    const OfferedRun& o = *r.offered;
    const auto& req = r.effective.offered;
    out << "offered load (open loop, " << to_string(req.arrival) << " arrivals, up to " << o.depth
        << " in flight, " << (req.on_full == QueueFull::drop ? "drop" : "wait") << " when full)\n";
    row(out, "offered / arrived", per_s(o.offered_rate) + " / " + per_s(o.scheduled_rate),
        std::to_string(o.arrivals) + " frames in " + format_duration(r.effective.point.duration));
    row(out, "achieved", per_s(o.achieved_rate),
        std::to_string(o.completed) + " completed over " + format_duration(o.span));
    row(out, "keeps up", o.keeps_up ? "yes" : "NO",
        "no drops, <= 1% late, achieved >= 99% of arrived");
    row(out, "submitted late", std::to_string(o.late) + " (" + pct(o.late_share) + ")",
        o.late > 0
            ? "median " + ms_or_na(o.lateness_ms.median) + ", max " + ms_or_na(o.lateness_ms.max) +
                  " behind schedule" + (o.late_share > kLateShareLimit ? "  [over 1%]" : "")
            : "more than " + format_duration(req.late_threshold) + " behind schedule");
    row(out, "dropped (queue full)", std::to_string(o.dropped));
    const auto& l = o.latency_ms;
    row(out, "latency from arrival p50", percentile_ms(l.median, l.median_ci),
        "includes waiting for earlier frames");
    row(out, "latency from arrival p90", percentile_ms(l.p90, l.p90_ci));
    row(out, "latency from arrival p95", percentile_ms(l.p95, l.p95_ci));
    row(out, "latency from arrival p99", percentile_ms(l.p99, l.p99_ci), "max " + ms_or_na(l.max));
    const auto& sv = o.service_ms;
    row(out, "latency from submission p50", percentile_ms(sv.median, sv.median_ci));
    row(out, "latency from submission p99", percentile_ms(sv.p99, sv.p99_ci));
    out << '\n';
  } else {
    out << "steady state (pipelined, warm, depth " << r.steady.depth << ")\n";
    const auto& rate = r.steady.rate;
    row(out, "rate (median of " + std::to_string(rate.count) + ")", per_s(rate.median),
        r.steady.time_per_frame_ms ? "= " + format_ms(*r.steady.time_per_frame_ms) + " per frame"
                                   : "");
    row(out, "rate min / max", per_s(rate.min) + " / " + per_s(rate.max),
        "spread " + pct(rate.spread));
    for (size_t i = 0; i < r.steady.repeats.size(); ++i) {
      const auto& rep = r.steady.repeats[i];
      row(out, "  repeat " + std::to_string(i + 1),
          format_fixed(rep.rate, rep.rate >= 100 ? 1 : 2) + " /s",
          std::to_string(rep.inferences) + " inferences in " + format_duration(rep.elapsed) + ", " +
              std::to_string(rep.windows.size()) + " windows, " +
              (rep.stable ? "stable" : "UNSTABLE") + " (last 3 windows " +
              pct(rep.last_windows_spread) + "), warm-up " + format_duration(rep.warmup));
    }
    if (!r.steady.repeats.empty())
      row(out, "pipelined latency p50 / p99",
          ms_or_na(r.steady.repeats.front().latency_ms.median) + " / " +
              ms_or_na(r.steady.repeats.front().latency_ms.p99),
          "includes queueing at depth " + std::to_string(r.steady.depth));
    out << '\n';
  }

  out << "lone-frame latency (depth 1, " << r.latency.samples << " samples)\n";
  const auto& lat = r.latency.overall_ms;
  row(out, "overall p50", percentile_ms(lat.median, lat.median_ci));
  row(out, "overall p90", percentile_ms(lat.p90, lat.p90_ci));
  row(out, "overall p95", percentile_ms(lat.p95, lat.p95_ci));
  row(out, "overall p99", percentile_ms(lat.p99, lat.p99_ci), "max " + ms_or_na(lat.max));
  if (r.latency.hardware_ms.count > 0) {
    row(out, "hardware (device compute) p50", ms_or_na(r.latency.hardware_ms.median));
    if (r.device.in_process)
      row(out, "non-compute share of latency", pct(r.latency.bus_share),
          "(overall - compute) / overall: copies and scheduling; no link in process");
    else
      row(out, "bus share of latency", pct(r.latency.bus_share), "(overall - hardware) / overall");
  } else {
    row(out, "hardware (device compute)", "n/a", "the device reports no compute time");
  }
  if (r.latency.rig_round_trip_ms && r.device.link_floor)
    row(out, "rig round trip, no device", ms_or_na(r.latency.rig_round_trip_ms),
        "on this link: median of " + std::to_string(r.device.link_floor->round_trips) +
            " protocol pings, min " + ms_or_na(to_ms(r.device.link_floor->min)));
  out << '\n';

  out << "bytes per inference\n";
  row(out, "payload in / out",
      format_bytes(r.bytes.payload_in) + " / " + format_bytes(r.bytes.payload_out),
      "model declares " + format_bytes(static_cast<double>(r.bytes.model_in)) + " / " +
          format_bytes(static_cast<double>(r.bytes.model_out)));
  if (r.bytes.link_in + r.bytes.link_out > 0)
    row(out, "on the link in / out",
        format_bytes(r.bytes.link_in) + " / " + format_bytes(r.bytes.link_out));
  else
    row(out, "on the link", "0 B", "in-process device: nothing crosses a link");
  // An offered-load run's traffic is at its achieved rate.
  const std::string traffic = r.offered ? "offered-load" : "steady";
  row(out, traffic + " payload traffic",
      r.bytes.payload_mb_per_s ? format_fixed(*r.bytes.payload_mb_per_s, 2) + " MB/s" : "n/a",
      r.offered ? "(in + out) x achieved rate" : "(in + out) x rate");
  if (r.bytes.link_mb_per_s)
    row(out, traffic + " link traffic", format_fixed(*r.bytes.link_mb_per_s, 2) + " MB/s");
  out << '\n';

  out << "rig overhead\n";
  if (r.overhead.measured)
    row(out, "bookkeeping per inference",
        format_fixed(r.overhead.bookkeeping_ns_per_inference, 0) + " ns",
        r.overhead.note + "; engine waited " + format_fixed(r.overhead.wait_fraction * 100, 1) +
            "% of the time");
  else
    row(out, "bookkeeping per inference", "n/a", "not measured on a virtual clock");
  out << '\n';

  out << monitor_text(r.monitor);
  out << verdict_text(r.verdict);
  return out.str();
}

}  // namespace rig

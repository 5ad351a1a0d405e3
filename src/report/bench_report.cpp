// rig bench's reporters. The JSON document is written and read through one
// table of keys, bench_fields(): a JsonWriter walks it to build the document,
// a JsonReader walks the same table to read one back, so every key is named
// once and the reader cannot drift from the writer.
#include "rig/report/bench_report.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "report/json_common.hpp"
#include "report/json_walkers.hpp"
#include "report/monitor_fields.hpp"
#include "report/monitor_text.hpp"
#include "report/text_common.hpp"
#include "rig/report/document.hpp"
#include "rig/units.hpp"

namespace rig {
namespace {

using report::json;
using namespace report;

// ---------------------------------------------------------------------------
// The table of keys: one function per block, walked by both.

template <class Io>
void bench_settings_fields(Io& io, BenchSettings& s) {
  io.value("model", s.model);
  io.value("device", s.device);
  io.value("depth", s.depth);
  io.seconds("duration_s", s.point.duration);
  io.value("min_inferences", s.point.min_inferences);
  io.value("repeats", s.point.repeats);
  io.value("windows", s.point.windows);
  io.number("stability_tolerance", s.point.stability_tolerance);
  io.number("repeat_tolerance", s.repeat_tolerance);
  io.seconds("warmup_max_s", s.point.warmup_max);
  io.value("latency_samples", s.latency_samples);
  io.seconds("latency_max_s", s.latency_max);
  io.seconds("request_timeout_s", s.point.request_timeout);
  io.value("reservoir_capacity", s.reservoir_capacity);
  io.value("seed", s.point.seed);
  io.number("overhead_limit", s.overhead_limit);
  io.object(
      "monitor", [&](Io& m) { monitor_settings_fields(m, s.monitor); }, 3);
  io.object(
      "confounds", [&](Io& c) { confound_settings_fields(c, s.confounds); }, 3);
  io.number("confidence", s.confidence, 3);
  io.number("rate_tolerance", s.point.rate_tolerance, 3);
  io.number("max_duration_factor", s.point.max_duration_factor, 3);
  io.object(
      "offered",
      [&](Io& o) {
        o.number("rate_per_s", s.offered.rate);
        o.enumeration("arrival", s.offered.arrival, {Arrival::constant, Arrival::poisson});
        o.enumeration("on_full", s.offered.on_full, {QueueFull::wait, QueueFull::drop});
        o.ms("late_threshold_ms", s.offered.late_threshold);
      },
      3);
}

// DeviceInfo::link_floor as flat keys (null when absent), since version 3.
template <class Io>
void link_floor_fields(Io& io, std::optional<LinkFloor>& f) {
  std::optional<double> median, min, spent;
  std::optional<uint64_t> trips;
  if (f) {
    median = to_ms(f->median);
    min = to_ms(f->min);
    spent = to_ms(f->spent);
    trips = f->round_trips;
  }
  io.number("link_floor_median_ms", median, 3);
  io.number("link_floor_min_ms", min, 3);
  io.optional_count("link_floor_round_trips", trips, 3);
  io.number("link_floor_spent_ms", spent, 3);
  const auto ns = [](double ms) { return Nanos(static_cast<int64_t>(std::llround(ms * 1e6))); };
  if (median && min && trips && spent)
    f = LinkFloor{static_cast<uint32_t>(*trips), ns(*median), ns(*min), Nanos(0), ns(*spent)};
}

template <class Io>
void offered_fields(Io& io, OfferedRun& o) {
  io.number("offered_rate_per_s", o.offered_rate);
  io.number("scheduled_rate_per_s", o.scheduled_rate);
  io.number("achieved_rate_per_s", o.achieved_rate);
  io.value("keeps_up", o.keeps_up);
  io.value("depth", o.depth);
  io.value("arrivals", o.arrivals);
  io.value("submitted", o.submitted);
  io.value("completed", o.completed);
  io.value("dropped", o.dropped);
  io.value("late", o.late);
  io.number("late_share", o.late_share);
  io.summary("lateness_ms", o.lateness_ms);
  io.summary("latency_from_arrival_ms", o.latency_ms);
  io.summary("latency_from_submission_ms", o.service_ms);
  io.seconds("span_s", o.span);
  io.value("errors", o.errors);
  io.error("first_error", o.first_error);
  io.value("aborted", o.aborted);
  io.value("cut_short", o.cut_short, 5);
  io.value("device_stuck", o.device_stuck);
  io.array("windows", o.windows, [](Io& w, WindowFigure& f) {
    w.number("start_s", f.start_s);
    w.number("duration_s", f.duration_s);
    w.value("inferences", f.inferences);
    w.number("rate_per_s", f.rate);
  });
}

template <class Io>
void device_fields(Io& io, DeviceInfo& d) {
  io.value("spec", d.spec);
  io.value("kind", d.kind);
  io.value("description", d.description);
  io.value("queue_depth", d.queue_depth);
  uint32_t own = d.device_queue_depth();
  io.value("device_queue_depth", own, 2);
  d.own_queue_depth = own == std::max<uint32_t>(1, d.queue_depth) ? 0 : own;
  io.value("in_process", d.in_process);
  io.enumeration("duplex", d.duplex, kDuplexes, 2);
  io.enumeration("clock", d.clock, kClocks, 2);
  io.optional_count("memory_bytes", d.memory_bytes, 2);
  link_floor_fields(io, d.link_floor);
  io.value("properties", d.properties);
  io.value("warnings", d.warnings);
}

template <class Io>
void environment_fields(Io& io, BenchResult& r) {
  io.facts(r.environment.facts);
  io.value("warnings", r.environment.warnings);
  io.value("virtual_clock", r.virtual_clock);
  io.object("device", [&](Io& d) { device_fields(d, r.device); });
}

template <class Io>
void tensor_fields(Io& io, TensorInfo& t) {
  io.value("name", t.name);
  io.enumeration("type", t.type, kElementTypes);
  io.value("shape", t.shape);
  io.value("bytes", t.bytes);
}

template <class Io>
void timings_fields(Io& io, InferenceTimings& t) {
  io.ms("transfer_in_ms", t.transfer_in);
  io.ms("queue_wait_ms", t.queue_wait);
  io.ms("compute_ms", t.compute);
  io.ms("transfer_out_ms", t.transfer_out);
}

template <class Io>
void ttfo_fields(Io& io, TtfoResult& t) {
  io.ms("total_ms", t.total);
  io.ms("load_ms", t.load);
  io.object("load_breakdown", [&](Io& b) {
    b.ms("read_ms", t.load_breakdown.read);
    b.ms("parse_ms", t.load_breakdown.parse);
    b.ms("compile_ms", t.load_breakdown.compile);
  });
  io.ms("allocate_ms", t.allocate);
  io.ms("first_inference_ms", t.first_inference);
  io.object("first_inference_device", [&](Io& d) { timings_fields(d, t.first_timings); });
}

template <class Io>
void repeat_fields(Io& io, SteadyRepeat& rep) {
  io.value("depth", rep.depth);
  io.value("inferences", rep.inferences);
  io.seconds("elapsed_s", rep.elapsed);
  io.number("rate_per_s", rep.rate);
  io.value("stable", rep.stable);
  io.number("last_windows_spread", rep.last_windows_spread);
  io.number("rate_half_width", rep.rate_half_width, 3);
  io.value("precise", rep.precise, 3);
  io.value("capped", rep.capped, 3);
  io.number("declared_cap_per_s", rep.declared_cap, 5);
  io.seconds("warmup_s", rep.warmup);
  io.value("warmup_inferences", rep.warmup_inferences);
  io.value("warmup_settled", rep.warmup_settled);
  io.summary("latency_ms", rep.latency_ms);
  io.value("errors", rep.errors);
  io.error("first_error", rep.first_error);
  io.value("aborted", rep.aborted);
  io.value("cut_short", rep.cut_short, 5);
  io.array("windows", rep.windows, [](Io& w, WindowFigure& f) {
    w.number("start_s", f.start_s);
    w.number("duration_s", f.duration_s);
    w.value("inferences", f.inferences);
    w.number("rate_per_s", f.rate);
  });
}

template <class Io>
void latency_fields(Io& io, LatencyResult& l) {
  io.value("samples", l.samples);
  io.value("cut_short", l.cut_short, 5);
  io.value("errors", l.errors);
  io.error("first_error", l.first_error);
  io.summary("overall_ms", l.overall_ms);
  io.summary("hardware_ms", l.hardware_ms);
  io.summary("transfer_in_ms", l.transfer_in_ms);
  io.summary("transfer_out_ms", l.transfer_out_ms);
  io.summary("queue_wait_ms", l.queue_wait_ms);
  io.number("bus_share", l.bus_share);
  io.number("rig_round_trip_ms", l.rig_round_trip_ms, 3);
}

template <class Io>
void bytes_fields(Io& io, BytesResult& b) {
  io.value("model_in", b.model_in);
  io.value("model_out", b.model_out);
  io.number("payload_in_per_inference", b.payload_in);
  io.number("payload_out_per_inference", b.payload_out);
  io.number("link_in_per_inference", b.link_in);
  io.number("link_out_per_inference", b.link_out);
  io.number("payload_mb_per_s", b.payload_mb_per_s);
  io.number("link_mb_per_s", b.link_mb_per_s);
}

template <class Io>
void overhead_fields(Io& io, OverheadResult& o) {
  io.value("measured", o.measured);
  io.number("bookkeeping_ns_per_inference", o.bookkeeping_ns_per_inference);
  io.number("bookkeeping_share", o.bookkeeping_share);
  io.number("wait_fraction", o.wait_fraction);
  io.value("limiting", o.limiting);
  io.value("note", o.note);
}

template <class Io>
void verdict_fields(Io& io, Verdict& v) {
  io.derived("status", v.valid ? "VALID" : "INVALID");
  io.value("valid", v.valid);
  io.value("reasons", v.reasons);
  io.value("warnings", v.warnings);
  io.array(
      "rules", v.rules,
      [](Io& r, RuleOutcome& o) {
        r.value("rule", o.rule);
        r.enumeration("severity", o.severity, kSeverities);
        r.value("met", o.met);
        r.value("evidence", o.evidence);
        r.value("findings", o.findings);
        r.value("threshold", o.threshold, 3);
      },
      2);
}

template <class Io>
void bench_fields(Io& io, BenchResult& r) {
  io.object("settings", [&](Io& s) {
    s.object("requested", [&](Io& q) { bench_settings_fields(q, r.requested); });
    s.object("effective", [&](Io& e) { bench_settings_fields(e, r.effective); });
  });
  io.object("environment", [&](Io& e) { environment_fields(e, r); });
  io.object("model", [&](Io& m) {
    m.value("name", r.model.name);
    m.value("sha256", r.model.sha256, 3);
    m.array("inputs", r.model.inputs, tensor_fields<Io>);
    m.array("outputs", r.model.outputs, tensor_fields<Io>);
    m.object(
        "normalization",
        [&](Io& n) {
          ModelRewrites& w = r.model.normalization;
          n.value("ran", w.ran);
          n.value("nodes_before", w.nodes_before);
          n.value("nodes_after", w.nodes_after);
          n.value("rewrites", w.rewrites);
          n.value("notes", w.notes);
        },
        3);
  });
  io.derived("input_data", input_data_json(r.effective.point.inputs.get(), r.effective.point.seed));
  io.object("ttfo", [&](Io& t) { ttfo_fields(t, r.ttfo); });
  io.object("steady", [&](Io& s) {
    s.value("depth", r.steady.depth);
    s.summary("rate_per_s", r.steady.rate);
    s.number("time_per_frame_ms", r.steady.time_per_frame_ms);
    s.value("stable", r.steady.stable);
    s.array("repeats", r.steady.repeats, repeat_fields<Io>);
  });
  io.optional_object("offered", r.offered, offered_fields<Io>, 3);
  io.object("latency", [&](Io& l) { latency_fields(l, r.latency); });
  io.object("bytes", [&](Io& b) { bytes_fields(b, r.bytes); });
  io.object("overhead", [&](Io& o) { overhead_fields(o, r.overhead); });
  io.object(
      "monitor", [&](Io& m) { monitor_fields(m, r.monitor); }, 3);
  io.object("verdict", [&](Io& v) { verdict_fields(v, r.verdict); });
}

// The document's header: an object with a readable schema_version and the
// tool a bench result names.
Result<int> check_header(const json& doc, std::string_view what, std::string_view reader) {
  auto bad = [&](const std::string& m) {
    return fail(ErrorCode::invalid_argument, std::string(what) + ": " + m);
  };
  if (!doc.is_object()) return bad("not a JSON object (expected a rig bench --json result)");
  auto v = doc.find("schema_version");
  if (v == doc.end())
    return bad("field 'schema_version' is missing (expected a rig bench --json result)");
  if (!v->is_number()) return bad("field 'schema_version' is not a number");
  const double version = v->get<double>();
  std::string readable;
  for (int r : readable_schema_versions()) {
    if (version == r) {
      auto tool = doc.find("tool");
      if (tool == doc.end()) return bad("field 'tool' is missing");
      const std::string name = tool->is_string() ? tool->get<std::string>() : "?";
      if (name != "rig bench")
        return bad("a '" + name + "' result; " + std::string(reader) +
                   " reads a rig bench --json result");
      return r;
    }
    readable += (readable.empty() ? "" : ", ") + std::to_string(r);
  }
  return bad("schema_version " + line("%.17g", version) + " is not one this rig reads (" +
             readable + ")");
}

}  // namespace

std::string bench_to_json(const BenchResult& result) {
  json doc = document("rig bench");
  BenchResult r = result;
  JsonWriter io(doc);
  bench_fields(io, r);
  return dump(doc);
}

Result<BenchResult> read_bench_json(std::string_view text, std::string_view what,
                                    std::string_view reader) {
  const json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded())
    return fail(ErrorCode::invalid_argument,
                std::string(what) + ": not JSON (expected a rig bench --json result)");
  auto version = check_header(doc, what, reader);
  if (!version) return tl::unexpected(version.error());
  BenchResult r;
  std::optional<Error> error;
  JsonReader io(doc, "", *version, what, error);
  bench_fields(io, r);
  if (error) return tl::unexpected(*error);
  return r;
}

Result<BenchSettings> read_bench_settings_json(std::string_view text, std::string_view what) {
  const json given = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (given.is_discarded() || !given.is_object())
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

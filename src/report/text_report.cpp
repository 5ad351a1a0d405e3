#include <sstream>

#include "rig/report.hpp"
#include "rig/units.hpp"

namespace rig {
namespace {

std::string ms_or_na(const std::optional<double>& v) {
  return v ? format_ms(*v) : "n/a";
}

std::string per_s(const std::optional<double>& v) {
  return v ? format_fixed(*v, *v >= 100 ? 1 : 2) + " /s" : "n/a";
}

std::string pct(const std::optional<double>& v) {
  return v ? format_fixed(*v * 100, 1) + " %" : "n/a";
}

void row(std::ostringstream& out, const std::string& label, const std::string& value,
         const std::string& note = {}) {
  out << "  " << label;
  for (size_t i = label.size(); i < 30; ++i) out << ' ';
  out << value;
  if (!note.empty()) out << "   " << note;
  out << '\n';
}

}  // namespace

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
  out << "\n\n";

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

  out << "lone-frame latency (depth 1, " << r.latency.samples << " samples)\n";
  const auto& lat = r.latency.overall_ms;
  row(out, "overall p50 / p90 / p99",
      ms_or_na(lat.median) + " / " + ms_or_na(lat.p90) + " / " + ms_or_na(lat.p99),
      "max " + ms_or_na(lat.max));
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
  row(out, "steady payload traffic",
      r.bytes.payload_mb_per_s ? format_fixed(*r.bytes.payload_mb_per_s, 2) + " MB/s" : "n/a",
      "(in + out) x rate");
  if (r.bytes.link_mb_per_s)
    row(out, "steady link traffic", format_fixed(*r.bytes.link_mb_per_s, 2) + " MB/s");
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

  out << "verdict: " << (r.verdict.valid ? "VALID" : "INVALID") << '\n';
  for (const auto& reason : r.verdict.reasons) out << "  - " << reason << '\n';
  for (const auto& w : r.verdict.warnings) out << "  warning: " << w << '\n';
  return out.str();
}

}  // namespace rig

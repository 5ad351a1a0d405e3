#include "rig/report/place_report.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "report/json_common.hpp"
#include "report/place_fields.hpp"
#include "report/predict_fields.hpp"
#include "report/text_common.hpp"
#include "rig/report/bench_report.hpp"
#include "rig/scenario/predict.hpp"
#include "rig/units.hpp"

namespace rig {
namespace {

using namespace report;

Result<PlaceCandidate> from_bench(std::string_view text, std::string_view what) {
  auto bench = read_bench_json(text, what, "place");
  if (!bench) return tl::unexpected(bench.error());
  const BenchResult& b = *bench;
  const std::string w(what);
  PlaceCandidate c;
  c.source = w;
  c.device = b.device.spec;
  c.model_name = b.model.name;
  c.model_sha256 = b.model.sha256;
  if (!b.steady.rate.median || !(*b.steady.rate.median > 0))
    return fail(ErrorCode::invalid_argument,
                w + ": field 'steady.rate_per_s.median' is null: no rate to place");
  c.rate_per_s = *b.steady.rate.median;
  c.bytes_in = static_cast<double>(b.model.input_bytes());
  c.bytes_out = static_cast<double>(b.model.output_bytes());
  c.inputs = b.model.inputs;
  c.depth = b.effective.depth;
  const double per_frame = 1e3 / c.rate_per_s;
  c.lone_ms = b.latency.overall_ms.median.value_or(per_frame);
  if (b.latency.hardware_ms.median) {
    c.compute_ms = *b.latency.hardware_ms.median;
  } else {
    c.compute_ms = c.lone_ms;
    c.caveats.push_back(w +
                        ": the device reports no compute time: its lone-frame latency stands "
                        "in for compute (transfers counted twice)");
  }
  c.compute_ms_per_frame = std::min(c.compute_ms, per_frame);
  if (b.device.in_process) {
    c.link.reset();
  } else if (b.device.kind == "sim") {
    const SimLinkProperties sim = sim_link_properties(b.device);
    if (sim.bw_in && sim.bw_out && *sim.bw_in > 0 && *sim.bw_out > 0) {
      LinkProfile l;
      l.name = "sim";
      l.bw_in = *sim.bw_in;
      l.bw_out = *sim.bw_out;
      l.latency = Nanos(static_cast<int64_t>(std::llround(sim.latency_ms.value_or(0) * 1e6)));
      l.full_duplex = sim.full_duplex;
      l.queue_depth = std::max<uint32_t>(1, b.device.queue_depth);
      l.source = "the sim device's parameters in " + w;
      c.link = l;
    }
  }
  if (b.device.kind == "remote") {
    // Through rig serve the link is part of what was measured: its cost is
    // the lone frame less the device's compute, never nothing.
    c.link = measured_link(c.lone_ms, c.compute_ms, c.bytes_in, c.bytes_out,
                           b.bytes.link_in + b.bytes.link_out, b.latency.rig_round_trip_ms,
                           b.device.queue_depth, "measured through rig serve in " + w);
    if (!c.link && !b.latency.hardware_ms.median) {
      c.caveats.push_back(w +
                          ": without the device's compute time the link across rig serve "
                          "cannot be told apart from compute: the lone frame " +
                          format_ms(c.lone_ms) + " stands for both");
    } else if (!c.link) {
      c.caveats.push_back(w + ": the lone frame " + format_ms(c.lone_ms) +
                          " is not longer than its device compute " + format_ms(c.compute_ms) +
                          " (lone frame >= device compute): the figures contradict each other, "
                          "and the link across rig serve cannot be costed from them");
    }
  }
  if (!b.device.in_process && !c.link && b.device.kind != "remote")
    c.caveats.push_back(w + ": the link of " + c.device +
                        " is not characterised in the result: moving other bytes than measured "
                        "is not costed (measure it with rig ladder, or predict with rig predict)");
  // Energy only where the monitor measured it (monitor.energy of the result).
  if (b.monitor.energy.available && b.monitor.energy.joules_per_inference)
    c.energy_j = *b.monitor.energy.joules_per_inference;
  if (!b.verdict.valid) {
    std::string reasons;
    for (const auto& r : b.verdict.reasons) reasons += (reasons.empty() ? "" : "; ") + r;
    c.caveats.push_back(w + " is INVALID: " + reasons);
  }
  for (const auto& warning : b.verdict.warnings) c.caveats.push_back(w + ": " + warning);
  return c;
}

Result<PlaceCandidate> from_predict(const json& doc, int version, std::string_view what) {
  const std::string w(what);
  // Read leniently: a placement needs only the figures below, and a key
  // absent from the document is told apart from a 0 (Absent).
  PredictDoc d;
  Absent absent;
  read_leniently(doc, version, d, absent, predict_fields<JsonReader>);
  const Prediction& p = d.prediction;
  const PredictSource& s = d.source;
  // The figures a placement needs, named as the document names them.
  const std::pair<const double*, const char*> needed[] = {
      {&p.rate, "results.prediction.rate_per_s"},
      {&p.lone_ms, "results.prediction.lone_ms"},
      {&s.compute_ms, "results.source.compute_ms"},
      {&p.compute_ms_per_frame, "results.prediction.compute_ms_per_frame"},
      {&p.link.bw_in, "settings.link.bw_in_bytes_per_s"},
      {&p.link.bw_out, "settings.link.bw_out_bytes_per_s"},
      {nullptr, "settings.link.latency_ms"},
      {&s.bytes_in, "results.source.bytes_in"},
      {&s.bytes_out, "results.source.bytes_out"}};
  for (const auto& [v, name] : needed)
    if (v ? absent(*v) || !std::isfinite(*v) : absent(p.link.latency))
      return fail(ErrorCode::invalid_argument, w + ": field '" + name + "' is missing or null");
  if (!(p.rate > 0) || !(p.link.bw_in > 0) || !(p.link.bw_out > 0))
    return fail(ErrorCode::invalid_argument, w + ": a zero rate or bandwidth cannot be placed");
  PlaceCandidate c;
  c.source = w;
  c.predicted = true;
  c.rate_per_s = p.rate;
  c.lone_ms = p.lone_ms;
  if (!absent(p.depth) && p.depth >= 1) c.depth = p.depth;
  c.compute_ms = s.compute_ms;
  c.compute_ms_per_frame = p.compute_ms_per_frame;
  c.bytes_in = s.bytes_in;
  c.bytes_out = s.bytes_out;
  LinkProfile l = p.link;
  l.queue_depth = LinkProfile{}.queue_depth;  // the link's, not the predicted device's
  c.link = l;
  c.device = s.device_spec + " on " + p.link.name;
  c.model_name = s.model_name;
  c.model_sha256 = s.model_sha256;
  c.caveats.push_back(w + ": predicted for " + p.link.name + " from " + d.result_path +
                      ", not measured (its verdict is in that result)");
  return c;
}

}  // namespace

Result<PlaceCandidate> read_place_candidate(std::string_view text, std::string_view what) {
  auto read = read_document(text, what, "", "place");
  if (!read) return tl::unexpected(read.error());
  const std::string tool = document_tool(read->first);
  if (tool == "rig bench") return from_bench(text, what);
  if (tool == "rig predict") return from_predict(read->first, read->second, what);
  return fail(ErrorCode::invalid_argument, std::string(what) + ": a '" + tool +
                                               "' result; place reads rig bench and rig predict "
                                               "--json results");
}

std::string format_place_text(const PlaceResult& r) {
  std::ostringstream out;
  const Workload& w = r.workload;
  out << "rig place: " << format_fixed(w.fps, 1) << " fps"
      << (w.latency_ms ? ", lone latency <= " + format_ms(*w.latency_ms) : std::string())
      << (w.frame_bytes ? ", frame " + w.frame_text + " = " + format_bytes(*w.frame_bytes)
                        : std::string(", frame = the first model's input"))
      << "\n";
  // The answer first, then the table; each candidate's device spec once
  // (as d1, d2, ...), each caveat once with the assignments it concerns.
  out << (r.met ? "choice: " : "NOT MET: ") << r.reason << "\n";
  if (!r.frame_mapping.empty()) out << "frame " << r.frame_mapping << "\n";
  auto label = [](size_t candidate) { return "d" + std::to_string(candidate + 1); };
  const size_t shown = std::min<size_t>(r.assignments.size(), 10);
  out << "\n"
      << line("  %-3s %-7s %10s %-9s %11s %10s %10s  %s\n", "#", "", "rate/s", "bound", "lone",
              "transfers", "bus busy", "stages");
  for (size_t k = 0; k < shown; ++k) {
    const Assignment& a = r.assignments[k];
    std::string stages, bound = a.bound;
    for (const auto& p : a.stages) {
      stages += (stages.empty() ? "" : ", ") + r.stages[p.stage].name + " on " + label(p.candidate);
      // The bound names a device by its spec: by its label here.
      const std::string& spec = r.candidates[p.candidate].device;
      if (const size_t at = bound.find(spec); !spec.empty() && at != std::string::npos)
        bound.replace(at, spec.size(), label(p.candidate));
    }
    out << line("  %-3s %-7s %10s %-9s %11s %10s %10s  %s%s\n",
                ("#" + std::to_string(k + 1)).c_str(), a.meets ? "MEETS" : "misses",
                format_fixed(a.rate_per_s, 1).c_str(), bound.c_str(), format_ms(a.lone_ms).c_str(),
                (format_fixed(a.transfer_share * 100, 1) + "%").c_str(),
                (format_fixed(a.bus_utilization * 100, 1) + "%").c_str(), stages.c_str(),
                a.energy_j ? ("; " + format_fixed(*a.energy_j, 3) + " J/frame").c_str() : "");
  }
  if (r.assignments.size() > shown)
    out << "  (" << r.assignments.size() - shown << " more assignments in the JSON)\n";
  out << "  (transfers: their share of the lone latency; bus busy: at " << format_fixed(w.fps, 1)
      << " fps)\n";
  out << "\n";
  for (const auto& s : r.stages) {
    out << "stage " << s.name;
    if (!s.model.empty())
      out << " (" << s.model << ", in " << format_bytes(s.input_bytes.value_or(0)) << ", out "
          << format_bytes(s.output_bytes.value_or(0)) << ")";
    out << ": " << s.candidates.size() << " candidate" << (s.candidates.size() == 1 ? "" : "s")
        << "\n";
    for (size_t i : s.candidates) {
      const auto& c = r.candidates[i];
      out << "  " << label(i) << " " << c.device << ": " << format_fixed(c.rate_per_s, 1)
          << "/s, compute " << format_ms(c.compute_ms) << ", lone " << format_ms(c.lone_ms)
          << (c.link ? ", link " + format_rate(c.link->bw_in) + " in / " +
                           format_rate(c.link->bw_out) + " out"
                     : std::string(c.predicted || (c.device.rfind("tcp://", 0) != 0 &&
                                                   c.device.rfind("unix:", 0) != 0)
                                       ? ", in process (no link)"
                                       : ", link not costed"))
          << (c.energy_j ? ", " + format_fixed(*c.energy_j, 3) + " J/inference" : std::string())
          << (c.predicted ? "  [predicted]" : "") << "  (from " << c.source << ")\n";
    }
  }
  // Each shown assignment's transfers, one line per stage that moves bytes.
  for (size_t k = 0; k < shown; ++k) {
    const Assignment& a = r.assignments[k];
    std::string moves;
    for (const auto& p : a.stages) {
      if (p.bytes_in == 0 && p.bytes_out == 0) continue;
      moves +=
          (moves.empty() ? "" : "; ") + r.stages[p.stage].name + " on " + label(p.candidate) + ":";
      if (p.bytes_in > 0)
        moves += " in " + format_bytes(p.bytes_in) + " (" + format_ms(p.transfer_in_ms) + ")";
      if (p.bytes_out > 0)
        moves += " out " + format_bytes(p.bytes_out) + " (" + format_ms(p.transfer_out_ms) + ")";
    }
    if (k == 0) out << "\ntransfers per frame\n";
    out << "  #" << (k + 1) << " " << format_bytes(a.bytes_moved_per_frame) << ", "
        << format_ms(a.transfer_ms) << " of the lone latency, bus headroom "
        << format_fixed(a.bus_headroom * 100, 1) << "%" << (moves.empty() ? "" : ": " + moves)
        << "\n";
  }
  // Each caveat once, with the assignments it concerns where not all; an
  // input's INVALID reasons are the verdict's, below, once.
  auto invalid_input = [&](const std::string& cv) {
    return std::any_of(r.inputs.inputs.begin(), r.inputs.inputs.end(),
                       [&](const auto& in) { return cv.rfind(in.source + " is INVALID", 0) == 0; });
  };
  std::vector<std::pair<std::string, std::vector<size_t>>> caveats;
  for (size_t k = 0; k < shown; ++k)
    for (const auto& cv : r.assignments[k].caveats) {
      if (invalid_input(cv)) continue;
      auto it = std::find_if(caveats.begin(), caveats.end(),
                             [&](const auto& c) { return c.first == cv; });
      if (it == caveats.end())
        caveats.push_back({cv, {k}});
      else if (it->second.back() != k)
        it->second.push_back(k);
    }
  if (!caveats.empty()) out << "\ncaveats\n";
  for (const auto& [cv, where] : caveats) {
    std::string which;
    if (where.size() < shown)
      for (size_t k : where)
        which += std::string(which.empty() ? " (#" : ", #") + std::to_string(k + 1);
    out << "  caveat: " << cv << (which.empty() ? "" : which + ")") << "\n";
  }
  // Each input once; an INVALID one's reasons are in the verdict below.
  out << "\n";
  for (const auto& in : r.inputs.inputs)
    out << "input " << in.source << " (" << in.tool << "): " << input_status(in)
        << (in.valid && !*in.valid ? " (the verdict below says why)" : "") << "\n";
  out << verdict_text(r.inputs.verdict);
  return out.str();
}

std::string place_to_json(const PlaceResult& r) {
  return write_document("rig place", r, place_fields<JsonWriter>);
}

}  // namespace rig

#include "rig/report/fit_report.hpp"

#include <sstream>

#include "report/fit_fields.hpp"
#include "report/json_common.hpp"
#include "report/text_common.hpp"
#include "rig/units.hpp"

namespace rig {
namespace {

using namespace report;

std::string bytes_text(double b) {
  return format_bytes(b);
}

std::string precision_name(unsigned bits) {
  switch (bits) {
    case 32:
      return "32-bit (fp32)";
    case 16:
      return "16-bit (fp16/bf16)";
    case 8:
      return "8-bit";
    case 4:
      return "4-bit";
    default:
      return std::to_string(bits) + "-bit";
  }
}

}  // namespace

std::string format_fit_text(const FitResult& r) {
  std::ostringstream out;
  const auto& w = r.weights;
  const auto& s = r.settings;
  out << "rig fit: " << (s.model.empty() ? std::string("a raw parameter count") : s.model) << " in "
      << bytes_text(s.device_memory_bytes) << " of device memory\n";
  if (r.from_graph) {
    row(out, "parameters", with_commas(static_cast<double>(w.parameters)),
        "in " + std::to_string(w.tensors) + " tensors, from the graph's initializer shapes" +
            (w.constant_tensors ? " and " + std::to_string(w.constant_tensors) + " Constant nodes"
                                : std::string()) +
            (w.external_tensors
                 ? "; " + std::to_string(w.external_tensors) + " hold their data in side files"
                 : std::string()));
    for (const auto& [type, g] : w.by_type)
      row(out, "  " + type, with_commas(static_cast<double>(g.elements)),
          bytes_text(static_cast<double>(g.bytes)) + " stored in " + std::to_string(g.tensors) +
              " tensors" + (g.floating ? "" : " (kept at this type at every precision)"));
  } else {
    row(out, "parameters", with_commas(static_cast<double>(w.parameters)),
        "--params: a raw count, all floating point");
  }
  row(out, "working memory", r.working_known ? bytes_text(r.working_bytes) : "unknown",
      r.working_from);
  row(out, "frame",
      r.frame_known
          ? bytes_text(r.frame_in_bytes) + " in, " + bytes_text(r.frame_out_bytes) + " out"
          : "unknown",
      r.frame_known ? "the graph's inputs and outputs: they cross the link for every inference"
                    : "not counted in the rates below (give a model file)");
  if (s.link)
    row(out, "link", s.link->name,
        "in " + format_rate(s.link->bw_in) + ", " + format_ms(to_ms(s.link->latency)) +
            " per transfer; " + s.link_from);
  else
    row(out, "link", "none given", "--link PROFILE or --ladder RESULT.json for the costs");
  out << '\n';
  for (const auto& x : r.rows) {
    out << precision_name(x.bits) << ": weights " << bytes_text(x.weight_bytes) << ", need "
        << bytes_text(x.need_bytes) << " of " << bytes_text(s.device_memory_bytes) << " -> ";
    switch (x.placement) {
      case Placement::resident:
        out << "RESIDENT (" << bytes_text(x.spare_bytes) << " spare)\n";
        if (x.load_ms)
          out << "    one-off load over the link: " << format_ms(*x.load_ms)
              << "; after it the bus carries only frames"
              << (x.best_rate_per_s
                      ? ": " + format_ms(*x.frame_ms) + " per inference, at best " +
                            format_fixed(*x.best_rate_per_s, 1) + " inferences/s on this link"
                      : std::string())
              << "\n";
        break;
      case Placement::streamed:
        out << "STREAMED: " << bytes_text(x.streamed_bytes)
            << " of weights must cross the link per inference\n";
        if (x.floor_ms)
          out << "    floor " << format_ms(*x.floor_ms) << " per inference ("
              << (r.frame_known ? "the weights and the frame" : "the weights alone") << "; lone "
              << format_ms(*x.lone_floor_ms) << "): at best " << format_fixed(*x.best_rate_per_s, 3)
              << " inferences/s on this link"
              << (r.frame_known ? ""
                                : " (an upper bound: the frame crossing per inference is unknown "
                                  "and not counted; give the model file)")
              << "\n";
        break;
      case Placement::cannot_run:
        out << "CANNOT RUN: the working memory alone exceeds the device memory\n";
        break;
    }
  }
  out << inputs_text(r.inputs) << verdict_text(r.inputs.verdict);
  return out.str();
}

std::string fit_to_json(const FitResult& r) {
  return write_document("rig fit", r, fit_fields<JsonWriter>);
}

}  // namespace rig

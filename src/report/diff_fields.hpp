// rig diff's document as one table of keys (json_walkers.hpp): diff_to_json
// writes it, the page reads it back; and the keys rig diff reads a summary
// of any document by (summary_range). docs/results-schema.md, "rig diff".
// Private to the reporters.
#pragma once

#include <cmath>
#include <optional>
#include <string>

#include "report/schema_fields.hpp"
#include "rig/report/diff_report.hpp"

namespace rig::report {

// A summary found by a generic walk (rig diff): an object holding count,
// median, min and max.
inline bool is_summary(const json& j) {
  return j.is_object() && j.contains("count") && j.contains("median") && j.contains("min") &&
         j.contains("max");
}

// A summary's median and the range a change is judged against: its
// median's interval when it has enough samples ("confidence interval"; a
// document's own ci_low / ci_high or ci.low / ci.high first), else min..max;
// no range when neither is known.
struct SummaryRange {
  std::optional<double> median, low, high;
  std::string kind;  // "confidence interval", "min..max", or "" (none)
};

inline SummaryRange summary_range(const json& node) {
  struct Read {
    Summary s;
    std::optional<double> ci_low, ci_high, low, high;
  };
  const auto fin = [](std::optional<double> v) {
    return v && std::isfinite(*v) ? v : std::nullopt;
  };
  const Read r = read_leniently<Read>(node, kJsonSchemaVersion, [](JsonReader& io, Read& x) {
    io.summary_body(x.s);
    io.number("ci_low", x.ci_low);
    io.number("ci_high", x.ci_high);
    io.object("ci", [&](JsonReader& ci) {
      ci.number("low", x.low);
      ci.number("high", x.high);
    });
  });
  SummaryRange out;
  out.median = fin(r.s.median);
  std::optional<double> lo = fin(r.ci_low), hi = fin(r.ci_high);
  if (!lo || !hi) {
    lo = fin(r.low);
    hi = fin(r.high);
  }
  if (!lo || !hi) {
    lo = fin(r.s.median_ci.lower);
    hi = fin(r.s.median_ci.upper);
  }
  if (lo && hi) {
    out.kind = "confidence interval";
  } else {
    lo = fin(r.s.min);
    hi = fin(r.s.max);
    if (lo && hi) out.kind = "min..max";
  }
  if (lo && hi) {
    out.low = lo;
    out.high = hi;
  }
  return out;
}

template <class Io>
void figure_change_fields(Io& io, FigureChange& f) {
  io.value("path", f.path);
  io.number("a", f.a);
  io.number("b", f.b);
  io.number("change", f.change);
  io.number("a_low", f.a_low);
  io.number("a_high", f.a_high);
  io.number("b_low", f.b_low);
  io.number("b_high", f.b_high);
  io.value("range", f.range_kind);
  io.enumeration("noise", f.noise, {Noise::outside, Noise::within, Noise::unknown});
}

template <class Io>
void diff_fields(Io& io, DiffResult& r) {
  io.derived("kind", "diff");
  io.object("settings", [&](Io& s) {
    s.value("a", r.a.label);
    s.value("b", r.b.label);
  });
  io.object("results", [&](Io& x) {
    x.value("tool", r.tool);
    x.value("model_a", r.model_a);
    x.value("model_b", r.model_b);
    x.array("figures", r.figures, figure_change_fields<Io>);
    x.value("outside_noise", r.outside);
    x.derived("environment_differs", !r.environment.empty());
    x.array("environment", r.environment, [](Io& e, EnvironmentChange& c) {
      e.value("key", c.key);
      e.value("a", c.a);
      e.value("b", c.b);
    });
  });
  io.value("notes", r.notes);
}

}  // namespace rig::report

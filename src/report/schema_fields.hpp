// The blocks every result document shares, as tables of keys both walkers
// use (json_walkers.hpp): each key of a block is named once here, and the
// writer of every result and the reader the page, rig diff and rig place use
// walk the same function. docs/results-schema.md lists the keys ("Shared
// blocks"). Private to the reporters.
#pragma once

#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "report/json_walkers.hpp"
#include "rig/device.hpp"
#include "rig/engine.hpp"
#include "rig/environment.hpp"
#include "rig/link_profile.hpp"
#include "rig/scenario/input_verdict.hpp"
#include "rig/scenario/point.hpp"
#include "rig/scenario/settings.hpp"
#include "rig/scenario/verdict.hpp"
#include "rig/units.hpp"

namespace rig::report {

// A whole number that may be absent (null).
template <class Io>
void optional_u32(Io& io, const char* key, std::optional<uint32_t>& v) {
  std::optional<uint64_t> n;
  if (v) n = *v;
  io.optional_count(key, n);
  if constexpr (Io::reading)
    v = n ? std::optional<uint32_t>(static_cast<uint32_t>(*n)) : std::nullopt;
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

// A device block. `loop_whole`: every document but rig bench's has the key
// (version 3).
template <class Io>
void device_fields(Io& io, DeviceInfo& d, bool loop_whole = true) {
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
  if (loop_whole) io.value("loop_whole", d.loop_whole, 3);
  io.value("properties", d.properties);
  io.value("warnings", d.warnings);
}

// The environment's facts (beside its other keys), warnings and whether the
// clock is virtual; each caller adds its devices.
template <class Io>
void environment_fields(Io& io, Environment& env, bool& virtual_clock) {
  io.facts(env.facts);
  io.value("warnings", env.warnings);
  io.value("virtual_clock", virtual_clock);
}

// A result's "settings": the requested and the effective ones, each through
// `fields`.
template <class Io, class S, class F>
void requested_effective_fields(Io& io, S& requested, S& effective, F&& fields) {
  io.object("settings", [&](Io& s) {
    s.object("requested", [&](Io& q) { fields(q, requested); });
    s.object("effective", [&](Io& e) { fields(e, effective); });
  });
}

// A result's "environment" with its one device.
template <class Io>
void environment_device_fields(Io& io, Environment& env, bool& virtual_clock, DeviceInfo& device,
                               bool loop_whole = true) {
  io.object("environment", [&](Io& e) {
    environment_fields(e, env, virtual_clock);
    e.object("device", [&](Io& d) { device_fields(d, device, loop_whole); });
  });
}

// A link (rig predict's, fit's, a placement candidate's): its queue depth
// where `queue_depth` (rig place's candidates have none).
template <class Io>
void link_fields(Io& io, LinkProfile& l, bool queue_depth = true) {
  io.value("name", l.name);
  io.number("bw_in_bytes_per_s", l.bw_in);
  io.number("bw_out_bytes_per_s", l.bw_out);
  io.ms("latency_ms", l.latency);
  if (queue_depth) io.value("queue_depth", l.queue_depth);
  std::string duplex = l.full_duplex ? "full" : "half";
  io.value("duplex", duplex);
  if constexpr (Io::reading) l.full_duplex = duplex == "full";
  io.value("source", l.source);
}

template <class Io>
void tensor_fields(Io& io, TensorInfo& t) {
  io.value("name", t.name);
  io.enumeration("type", t.type, kElementTypes);
  io.value("shape", t.shape);
  io.value("bytes", t.bytes);
}

template <class Io>
void normalization_fields(Io& io, ModelRewrites& w) {
  io.value("ran", w.ran);
  io.value("nodes_before", w.nodes_before);
  io.value("nodes_after", w.nodes_after);
  io.value("rewrites", w.rewrites);
  io.value("notes", w.notes);
}

// The full model block (bench, loop, profile): every tensor.
template <class Io>
void model_fields(Io& io, ModelInfo& m) {
  io.value("name", m.name);
  io.value("sha256", m.sha256, 3);
  io.array("inputs", m.inputs, tensor_fields<Io>);
  io.array("outputs", m.outputs, tensor_fields<Io>);
  io.object(
      "normalization", [&](Io& n) { normalization_fields(n, m.normalization); }, 3);
}

// The model summary (sweep, ab): name, sha256, the bytes of a frame each
// way, and where the model came from. Read back, each direction's bytes are
// one u8 tensor holding the total (the document names no tensors); a
// direction a lenient read did not find has no tensor.
template <class Io>
void model_summary_fields(Io& io, ModelInfo& m, std::string& path) {
  io.value("path", path);
  io.value("name", m.name);
  io.value("sha256", m.sha256, 3);
  constexpr uint64_t kNotRead = std::numeric_limits<uint64_t>::max();
  uint64_t in = Io::reading ? kNotRead : m.input_bytes();
  uint64_t out = Io::reading ? kNotRead : m.output_bytes();
  io.value("input_bytes", in);
  io.value("output_bytes", out);
  if constexpr (Io::reading) {
    const auto total = [](uint64_t bytes) {
      return std::vector<TensorInfo>{
          TensorInfo{"", ElementType::u8, {static_cast<int64_t>(bytes)}, bytes}};
    };
    m.inputs = in == kNotRead ? std::vector<TensorInfo>() : total(in);
    m.outputs = out == kNotRead ? std::vector<TensorInfo>() : total(out);
  }
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

// One window of a measured run.
template <class Io>
void window_fields(Io& w, WindowFigure& f) {
  w.number("start_s", f.start_s);
  w.number("duration_s", f.duration_s);
  w.value("inferences", f.inferences);
  w.number("rate_per_s", f.rate);
}

// A point's settings (ladder, sweep, ab).
template <class Io>
void point_settings_fields(Io& io, PointSettings& s) {
  io.seconds("duration_s", s.duration);
  io.value("min_inferences", s.min_inferences);
  io.value("windows", s.windows);
  io.value("stability_tolerance", s.stability_tolerance);
  io.value("rate_tolerance", s.rate_tolerance);
  io.value("max_duration_factor", s.max_duration_factor);
  io.seconds("warmup_max_s", s.warmup_max);
  io.seconds("request_timeout_s", s.request_timeout);
  io.value("repeats", s.repeats);
  io.value("seed", s.seed);
}

// One measured point (ladder's rungs, sweep's depths). `spread` repeats the
// rate's for a reader of version 1.
template <class Io>
void point_fields(Io& io, PointResult& p) {
  io.value("depth", p.depth);
  io.summary("rate_per_s", p.rate);
  io.numbers("repeat_rates_per_s", p.repeat_rates);
  io.number("ms_per_frame", p.ms_per_frame);
  io.summary("little_rate_per_s", p.little_rate);
  std::optional<double> spread = p.rate.spread;
  io.number("spread", spread);
  io.value("stable", p.stable);
  io.value("errors", p.errors);
  io.error("first_error", p.first_error);
  io.value("aborted", p.aborted);
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

// One input a command read (rig predict, fit, place; version 6): its status
// is derived from its verdict.
template <class Io>
void input_verdict_fields(Io& io, InputVerdict& in) {
  io.value("source", in.source);
  io.value("tool", in.tool);
  std::string status = input_status(in);
  io.value("status", status);
  if constexpr (Io::reading) {
    in.valid.reset();
    if (status == "VALID") in.valid = true;
    if (status == "INVALID") in.valid = false;
  }
  io.value("reasons", in.reasons);
}

// The tool a document names ("" when none): the document's header.
inline std::string document_tool(const json& doc) {
  struct Header {
    std::string tool;
  };
  return read_leniently<Header>(doc, kJsonSchemaVersion,
                                [](auto& io, Header& h) { io.value("tool", h.tool); })
      .tool;
}

// The header every document has, as it is (checked by the caller).
struct DocHeaderNodes {
  const json* schema_version = nullptr;
  const json* tool = nullptr;
};

inline DocHeaderNodes header_nodes(const json& doc) {
  return read_leniently<DocHeaderNodes>(doc, kJsonSchemaVersion,
                                        [](JsonReader& io, DocHeaderNodes& h) {
                                          io.subtree("schema_version", h.schema_version);
                                          io.subtree("tool", h.tool);
                                        });
}

// What rig diff compares two documents by before their figures: the
// header, the model's identity, and the environment (walked generically).
struct DocHeader {
  double schema_version = 0;
  std::string tool, kind, model_sha256, model_name;
  const json* environment = nullptr;  // into the document read
};

inline DocHeader read_header(const json& doc) {
  return read_leniently<DocHeader>(doc, kJsonSchemaVersion, [](JsonReader& io, DocHeader& h) {
    io.value("schema_version", h.schema_version);
    io.value("tool", h.tool);
    io.value("kind", h.kind);
    io.object("model", [&](JsonReader& m) {
      m.value("sha256", h.model_sha256);
      m.value("name", h.model_name);
    });
    io.subtree("environment", h.environment);
  });
}

// The sim device's link, from its properties (DeviceInfo::properties, which
// the sim fills with its parameters as text); each absent when it is not
// there or not a number.
struct SimLinkProperties {
  std::optional<double> bw_in, bw_out, latency_ms;
  bool full_duplex = false;
};

inline SimLinkProperties sim_link_properties(const DeviceInfo& d) {
  const auto number = [&](const char* key) -> std::optional<double> {
    auto it = d.properties.find(key);
    if (it == d.properties.end()) return std::nullopt;
    auto v = parse_number(it->second);
    if (!v || !std::isfinite(*v)) return std::nullopt;
    return *v;
  };
  SimLinkProperties s;
  s.bw_in = number("bw_in_bytes_per_s");
  s.bw_out = number("bw_out_bytes_per_s");
  s.latency_ms = number("latency_ms");
  auto duplex = d.properties.find("duplex");
  s.full_duplex = duplex != d.properties.end() && duplex->second == "full";
  return s;
}

// What the page shows of any document, whatever its tool: a read-only view
// of the keys every result shares (a tool without a table of its own is
// shown through it and its generic figures).
struct CommonDoc {
  std::string kind;                // "rate" for rig sweep --rate
  std::optional<Verdict> verdict;  // absent: the document records none
  std::string device, device_a, device_b, device_v1, settings_device, source_device;
  std::string model, source_model;
  std::vector<std::string> notes;
};

template <class Io>
void common_fields(Io& io, CommonDoc& c) {
  io.value("kind", c.kind);
  io.optional_object("verdict", c.verdict, verdict_fields<Io>);
  io.object("environment", [&](Io& e) {
    e.object("device", [&](Io& d) { d.value("spec", c.device); });
    e.object("device_a", [&](Io& d) { d.value("spec", c.device_a); });
    e.object("device_b", [&](Io& d) { d.value("spec", c.device_b); });
  });
  io.object("device", [&](Io& d) { d.value("spec", c.device_v1); });
  io.object("settings", [&](Io& s) {
    s.object("effective", [&](Io& e) { e.value("device", c.settings_device); });
  });
  io.object("model", [&](Io& m) { m.value("name", c.model); });
  io.object("results", [&](Io& x) {
    x.object("source", [&](Io& s) {
      s.value("device_spec", c.source_device);
      s.value("model", c.source_model);
    });
  });
  io.value("notes", c.notes);
}

}  // namespace rig::report

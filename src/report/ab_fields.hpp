// rig ab's document as one table of keys (json_walkers.hpp): ab_to_json
// writes it, the page reads it back. docs/results-schema.md, "rig ab".
// Private to the reporters.
#pragma once

#include <limits>
#include <string>

#include "report/monitor_fields.hpp"
#include "report/schema_fields.hpp"
#include "rig/device_spec.hpp"
#include "rig/scenario/ab.hpp"

namespace rig::report {

// A spec as given_text() writes it, read back without the registry (the
// reporters do not open devices): "kind:key=value,..." into kind and given,
// a remote endpoint ("tcp://...", "unix:...") as it is. Not validated.
inline DeviceSpec given_spec(const std::string& text) {
  DeviceSpec spec;
  if (text.rfind("tcp://", 0) == 0 || text.rfind("unix:", 0) == 0) {
    spec.kind = "remote";
    spec.endpoint = text;
    return spec;
  }
  const size_t colon = text.find(':');
  spec.kind = text.substr(0, colon);
  for (size_t at = colon; at != std::string::npos && at + 1 < text.size();) {
    const size_t end = text.find(',', at + 1);
    const std::string item = text.substr(at + 1, end == std::string::npos ? end : end - at - 1);
    const size_t eq = item.find('=');
    if (eq != std::string::npos) spec.given[item.substr(0, eq)] = item.substr(eq + 1);
    at = end;
  }
  spec.params = spec.given;
  return spec;
}

// One side of the comparison: its device spec as given, depth and knobs.
template <class Io>
void ab_config_fields(Io& io, AbConfig& c) {
  std::string spec = c.spec.given_text();
  io.value("spec", spec);
  if constexpr (Io::reading) c.spec = given_spec(spec);
  io.value("depth", c.depth);
  io.value("knobs", c.knobs);
}

// One pair of runs, in the order run.
struct AbPair {
  uint64_t pair = 0;  // 1-based
  std::string order;  // "AB" or "BA"
  // NaN until read: a pair's figure a document does not hold reads as absent.
  double a_rate = std::numeric_limits<double>::quiet_NaN(), b_rate = a_rate, ratio = a_rate;
};

template <class Io>
void ab_pair_fields(Io& io, AbPair& p) {
  io.value("pair", p.pair);
  io.value("order", p.order);
  io.number("a_rate_per_s", p.a_rate);
  io.number("b_rate_per_s", p.b_rate);
  io.number("ratio", p.ratio);
}

template <class Io>
void ab_fields(Io& io, AbResult& r) {
  io.object("settings", [&](Io& s) {
    s.object("a", [&](Io& a) { ab_config_fields(a, r.a); });
    s.object("b", [&](Io& b) { ab_config_fields(b, r.b); });
    s.value("pairs", r.settings.pairs);
    s.value("alpha", r.settings.alpha);
    s.value("same_within", r.settings.same_within);
    s.value("order_seed", r.settings.order_seed);
    s.object("point", [&](Io& p) { point_settings_fields(p, r.settings.point); });
    monitor_confound_settings_fields(s, r.settings.monitor, r.settings.confounds);
  });
  io.object("environment", [&](Io& e) {
    environment_fields(e, r.environment, r.virtual_clock);
    e.object("device_a", [&](Io& d) { device_fields(d, r.device_a); });
    e.object("device_b", [&](Io& d) { device_fields(d, r.device_b); });
  });
  io.object("model", [&](Io& m) { model_summary_fields(m, r.model, r.model_path); });
  io.object("results", [&](Io& x) {
    x.value("shared_device", r.shared_device);
    x.value("depth_a", r.depth_a);
    x.value("depth_b", r.depth_b);
    std::vector<AbPair> pairs;
    for (size_t i = 0; i < r.ratios.size(); ++i)
      pairs.push_back({i + 1, i < r.order.size() ? r.order[i] : std::string(),
                       i < r.rates_a.size() ? r.rates_a[i] : 0,
                       i < r.rates_b.size() ? r.rates_b[i] : 0, r.ratios[i]});
    x.array("pairs", pairs, ab_pair_fields<Io>);
    if constexpr (Io::reading) {
      r.order.clear();
      r.rates_a.clear();
      r.rates_b.clear();
      r.ratios.clear();
      for (const AbPair& p : pairs) {
        r.order.push_back(p.order);
        r.rates_a.push_back(p.a_rate);
        r.rates_b.push_back(p.b_rate);
        r.ratios.push_back(p.ratio);
      }
    }
    x.summary("a_rate_per_s", r.rate_a);
    x.summary("b_rate_per_s", r.rate_b);
    x.summary("ratio", r.ratio);
    x.object("test", [&](Io& t) {
      t.value("name", r.test.name);
      t.number("u", r.test.u);
      t.number("p_value", r.test.p_value);
      t.value("exact", r.test.exact);
      t.number("alpha", r.test.alpha);
    });
    x.object("effect", [&](Io& t) {
      t.number("ratio", r.test.ratio);
      t.number("lower", r.test.ratio_lower);
      t.number("upper", r.test.ratio_upper);
      t.number("confidence", r.test.confidence);
      t.derived("estimator", "hodges_lehmann");
    });
    optional_u32(x, "pairs_recommended", r.pairs_recommended);
    x.enumeration("verdict", r.verdict,
                  {AbVerdict::same, AbVerdict::a_faster, AbVerdict::b_faster, AbVerdict::ambiguous,
                   AbVerdict::failed});
    x.value("verdict_text", r.verdict_text);
  });
  io.value("notes", r.notes);
  io.object(
      "monitor", [&](Io& m) { monitor_fields(m, r.monitor); }, 3);
  io.object("verdict", [&](Io& v) { verdict_fields(v, r.judgement); });
  io.derived("input_data", input_data_json(r.settings.point.inputs.get(), r.settings.point.seed));
}

}  // namespace rig::report

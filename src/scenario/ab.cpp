// rig ab: two configurations measured in interleaved pairs (A B A B ...), so
// slow changes of the host or device (heat, contention) fall on both sides
// alike; each pair gives a ratio, and the verdict compares the difference with
// the runs' own spread.
#include <algorithm>
#include <cmath>

#include "rig/model.hpp"
#include "rig/model_weights.hpp"
#include "rig/scenario/ab.hpp"
#include "rig/units.hpp"

namespace rig {
namespace {

std::string side_label(const char* name, const AbConfig& c) {
  std::string knobs;
  for (const auto& k : c.knobs) knobs += (knobs.empty() ? "" : ", ") + k;
  return std::string(name) + (knobs.empty() ? "" : " (" + knobs + ")");
}

// The side's depth, with the clamp note prefixed by the side's name.
uint32_t side_depth(AbResult& r, const DeviceInfo& info, uint32_t wanted, const char* side) {
  const DepthChoice c = resolve_depth(info, wanted);
  if (c.clamped_note) {
    r.depth_notes.push_back(std::string(side) + ": " + *c.clamped_note);
    r.notes.push_back(r.depth_notes.back());
  }
  return c.depth;
}

// One run: a rate, or the error that prevented it.
Result<double> one_run(Device& device, const Workspace& ws, uint32_t depth,
                       const PointSettings& point, const std::string& what) {
  const PointResult p = measure_point(device, ws, depth, point);
  if (!p.rate.median) {
    Error e = p.first_error.value_or(Error{ErrorCode::device, "no inference completed"});
    e.message = what + ": " + e.message;
    return tl::unexpected(e);
  }
  return *p.rate.median;
}

}  // namespace

std::string_view to_string(AbVerdict v) {
  switch (v) {
    case AbVerdict::no_difference:
      return "no_difference";
    case AbVerdict::a_faster:
      return "a_faster";
    case AbVerdict::b_faster:
      return "b_faster";
    case AbVerdict::insufficient_data:
      return "insufficient_data";
    case AbVerdict::failed:
      return "failed";
  }
  return "failed";
}

Result<AbConfig> apply_knobs(const AbConfig& base, std::span<const std::string> knobs) {
  AbConfig c = base;
  for (const auto& knob : knobs) {
    const auto eq = knob.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == knob.size())
      return fail(
          ErrorCode::invalid_argument,
          "knob '" + knob + "' is not KNOB=VALUE (e.g. depth=4, threads=2, link=usb3-gen2)");
    const std::string key = knob.substr(0, eq), value = knob.substr(eq + 1);
    c.knobs.push_back(knob);
    if (key == "depth") {
      auto n = parse_count(value);
      if (!n || *n == 0 || *n > 65536)
        return fail(ErrorCode::invalid_argument,
                    "knob depth=" + value + ": depth must be an integer in 1..65536");
      c.depth = static_cast<uint32_t>(*n);
      continue;
    }
    if (c.spec.remote())
      return fail(ErrorCode::invalid_argument,
                  "knob '" + knob + "' sets a device spec parameter, but '" + c.spec.given_text() +
                      "' has none; only depth applies to a remote device");
    if (value.find(',') != std::string::npos)
      return fail(ErrorCode::invalid_argument,
                  "knob '" + knob + "': a value must not contain ',' (give one knob per --a/--b)");
    if (auto ok = c.spec.set(key, value); !ok) {  // replaces the base spec's value
      Error e = ok.error();
      e.message = "knob '" + knob + "': " + e.message;
      return tl::unexpected(e);
    }
  }
  return c;
}

Result<void> validate(const AbSettings& s) {
  if (s.pairs == 0) return fail(ErrorCode::invalid_argument, "pairs must be >= 1");
  PointSettings one = s.point;
  one.repeats = 1;
  return validate(one);
}

namespace {

Error on_side(Error e, const std::string& side) {
  e.message = side + ": " + e.message;
  return e;
}

// Both sides on one device: loaded once, the runs continue on it.
Result<void> run_shared(AbResult& r, const DeviceOpener& open, const ModelSource& model) {
  const PointSettings& point = r.settings.point;
  auto device = open(r.a.spec);
  if (!device) return tl::unexpected(on_side(device.error(), "A"));
  r.device_a = r.device_b = (*device)->info();
  r.virtual_clock = (*device)->clock().is_virtual();
  r.depth_a = side_depth(r, r.device_a, r.a.depth, "A");
  r.depth_b = side_depth(r, r.device_a, r.b.depth, "B");
  auto cold =
      cold_start(**device, model, std::max(r.depth_a, r.depth_b), point.seed, point.observer);
  if (!cold) return tl::unexpected(on_side(cold.error(), "A"));
  r.model = (*device)->model_info();
  r.model.sha256 = model_sha256(model);  // after the cold start: never timed
  for (uint32_t i = 0; i < r.settings.pairs; ++i) {
    PointSettings p = point;
    p.seed = point.seed + i;
    const std::string pair = " (pair " + std::to_string(i + 1) + ")";
    auto ra = one_run(**device, cold->workspace, r.depth_a, p, "A" + pair);
    if (!ra) return tl::unexpected(ra.error());
    auto rb = one_run(**device, cold->workspace, r.depth_b, p, "B" + pair);
    if (!rb) return tl::unexpected(rb.error());
    r.rates_a.push_back(*ra);
    r.rates_b.push_back(*rb);
  }
  device->reset();  // before the buffers it has bound
  return {};
}

// The sides differ in device spec: each run opens and loads its side's
// device afresh, because device settings can be process-wide (OpenCV's
// thread count) and hardware may take one handle at a time.
Result<void> run_fresh(AbResult& r, const DeviceOpener& open, const ModelSource& model) {
  const PointSettings& point = r.settings.point;
  for (uint32_t i = 0; i < r.settings.pairs; ++i) {
    for (int side = 0; side < 2; ++side) {
      const char* name = side == 0 ? "A" : "B";
      const AbConfig& config = side == 0 ? r.a : r.b;
      auto device = open(config.spec);
      if (!device) return tl::unexpected(on_side(device.error(), name));
      const DeviceInfo info = (*device)->info();
      uint32_t& depth = side == 0 ? r.depth_a : r.depth_b;
      if (i == 0) {
        (side == 0 ? r.device_a : r.device_b) = info;
        r.virtual_clock = r.virtual_clock || (*device)->clock().is_virtual();
        depth = side_depth(r, info, config.depth, name);
      }
      const uint32_t run_depth = std::min(depth, std::max<uint32_t>(1, info.queue_depth));
      auto cold = cold_start(**device, model, run_depth, point.seed, point.observer);
      if (!cold) return tl::unexpected(on_side(cold.error(), name));
      if (i == 0 && side == 0) {
        r.model = (*device)->model_info();
        r.model.sha256 = model_sha256(model);
      }
      PointSettings p = point;
      p.seed = point.seed + i;
      auto rate = one_run(**device, cold->workspace, run_depth, p,
                          std::string(name) + " (pair " + std::to_string(i + 1) + ")");
      if (!rate) return tl::unexpected(rate.error());
      (side == 0 ? r.rates_a : r.rates_b).push_back(*rate);
      device->reset();  // before the buffers it has bound
    }
  }
  return {};
}

// The ratios, the noise and the verdict against it.
void decide(AbResult& r) {
  for (size_t i = 0; i < r.rates_a.size(); ++i) r.ratios.push_back(r.rates_b[i] / r.rates_a[i]);
  r.rate_a = summarize(r.rates_a);
  r.rate_b = summarize(r.rates_b);
  r.ratio = summarize(r.ratios);
  r.difference = *r.ratio.median - 1;
  r.noise = std::max(
      {r.rate_a.spread.value_or(0.0), r.rate_b.spread.value_or(0.0), r.ratio.spread.value_or(0.0)});

  const std::string la = side_label("A", r.a), lb = side_label("B", r.b);
  const std::string ratios = "B/A " + format_fixed(*r.ratio.median, 3) + ", pair ratios " +
                             format_fixed(*r.ratio.min, 3) + "-" + format_fixed(*r.ratio.max, 3);
  const std::string noise = "the runs' own spread " + format_fixed(*r.noise * 100, 2) + "%";
  if (r.ratios.size() < kAbMinPairsForVerdict) {
    r.verdict = AbVerdict::insufficient_data;
    r.verdict_text = "insufficient data: " + std::to_string(r.ratios.size()) + " pair" +
                     (r.ratios.size() == 1 ? "" : "s") + " (" + ratios +
                     "); a verdict needs at least " + std::to_string(kAbMinPairsForVerdict) +
                     ", because the runs' own spread is the noise estimate; raise --pairs";
  } else if (std::fabs(*r.difference) <= *r.noise) {
    r.verdict = AbVerdict::no_difference;
    r.verdict_text = "no difference (within noise): " + ratios + ", inside " + noise;
  } else {
    const bool b_faster = *r.difference > 0;
    r.verdict = b_faster ? AbVerdict::b_faster : AbVerdict::a_faster;
    // Faster by the faster side's rate over the slower's.
    const double by = b_faster ? *r.difference : 1 / *r.ratio.median - 1;
    r.verdict_text = (b_faster ? lb : la) + " is faster: +" + format_fixed(by * 100, 2) +
                     "% frames/s +/- " + format_fixed(*r.noise * 100, 2) + "% (" + ratios + "; " +
                     noise + ")";
  }
}

}  // namespace

Result<AbResult> run_ab(const DeviceOpener& open, const ModelSource& model, const AbConfig& a,
                        const AbConfig& b, const AbSettings& s) {
  if (auto ok = validate(s); !ok) return tl::unexpected(ok.error());
  AbResult r;
  r.a = a;
  r.b = b;
  r.settings = s;
  r.settings.point.repeats = 1;
  r.environment = collect_environment();
  r.model_path = model_origin(model);
  r.shared_device = a.spec.text() == b.spec.text();
  auto ran = r.shared_device ? run_shared(r, open, model) : run_fresh(r, open, model);
  if (!ran) return tl::unexpected(ran.error());
  decide(r);
  if (!r.shared_device)
    r.notes.push_back(
        "the sides differ in device spec: each run opened and loaded its device "
        "afresh (load time is not measured)");
  if (r.virtual_clock)
    r.notes.push_back(
        "virtual clock: figures are the sim device's model, not a measurement of hardware");
  r.judgement = judge(r);
  return r;
}

}  // namespace rig

#include "rig/scenario/place.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "rig/model.hpp"
#include "rig/units.hpp"

namespace rig {
namespace {

constexpr size_t kMaxAssignments = 100000;

std::string fixed(double v, int decimals) {
  return format_fixed(v, decimals);
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s;
  for (int64_t d : shape) s += (s.empty() ? "" : ",") + std::to_string(d);
  return "[" + s + "]";
}

// Bytes crossing a link with one latency; zero without bytes.
double transfer_ms(double bytes, double bw, const LinkProfile& l) {
  return bytes > 0 ? bytes / bw * 1e3 + to_ms(l.latency) : 0;
}

// The model's rate of one candidate at the conditions its result states
// (its own bytes, compute per frame and depth): what measured_scale compares
// the candidate's own rate_per_s with. Infinity when nothing limits it.
double modelled_rate(const PlaceCandidate& c) {
  double link_ms = 0, lone_ms = c.compute_ms;
  if (c.link) {
    const double in_ms = c.bytes_in / c.link->bw_in * 1e3;
    const double out_ms = c.bytes_out / c.link->bw_out * 1e3;
    link_ms = c.link->full_duplex ? std::max(in_ms, out_ms) : in_ms + out_ms;
    lone_ms += transfer_ms(c.bytes_in, c.link->bw_in, *c.link) +
               transfer_ms(c.bytes_out, c.link->bw_out, *c.link);
  }
  const double resource_ms = std::max(c.compute_ms_per_frame, link_ms);
  double rate = resource_ms > 0 ? 1e3 / resource_ms : HUGE_VAL;
  if (c.depth > 0 && lone_ms > 0) rate = std::min(rate, c.depth * 1e3 / lone_ms);
  return rate;
}

double measured_scale(const PlaceCandidate& c) {
  const double modelled = modelled_rate(c);
  return c.rate_per_s > 0 && modelled > c.rate_per_s ? c.rate_per_s / modelled : 1.0;
}

}  // namespace

std::optional<LinkProfile> measured_link(double lone_ms, double compute_ms, double bytes_in,
                                         double bytes_out, double link_bytes,
                                         std::optional<double> round_trip_ms, uint32_t queue_depth,
                                         const std::string& source) {
  const double link_ms = lone_ms - compute_ms;
  if (!(link_ms > 0) || !std::isfinite(link_ms)) return std::nullopt;
  // The round trip is paid whatever the bytes; what is left moved them.
  const double rt_ms = std::clamp(round_trip_ms.value_or(0.0), 0.0, link_ms);
  const double moving_ms = link_ms - rt_ms;
  const double payload = bytes_in + bytes_out;
  LinkProfile l;
  l.name = "measured";
  // Without bytes or time to move them, the link is its latency alone.
  const bool moved = payload > 0 && moving_ms > 0;
  l.bw_in = l.bw_out = moved ? payload / (moving_ms / 1e3) : 1e15;
  const double latency_ms = (moved ? rt_ms : link_ms) / 2;
  l.latency = Nanos(static_cast<int64_t>(std::llround(latency_ms * 1e6)));
  l.full_duplex = false;
  l.queue_depth = std::max<uint32_t>(1, queue_depth);
  l.source = source + ": lone frame " + format_ms(lone_ms) + " less device compute " +
             format_ms(compute_ms) + " = " + format_ms(link_ms) + " on the link (" +
             (round_trip_ms ? format_ms(rt_ms) + " rig round trip, " : std::string()) +
             format_bytes(payload) + " payload, " + format_bytes(link_bytes) + " on the wire)";
  return l;
}

Result<FrameAsInput> frame_as_input(FrameSize frame, const std::vector<TensorInfo>& inputs) {
  const std::string size = std::to_string(frame.width) + "x" + std::to_string(frame.height);
  const std::string give = ": give frame=BYTES (the bytes one frame crosses as)";
  if (inputs.size() != 1)
    return fail(ErrorCode::invalid_argument,
                "--workload frame=" + size + ": the model has " + std::to_string(inputs.size()) +
                    " inputs; a frame maps onto a model with one image input" + give);
  const TensorInfo& t = inputs[0];
  const auto& d = t.shape;
  // Which dimensions are the height and width: the layouts rig's models and
  // common vision models use, channels (at most 4) first or last.
  int64_t h = 0, w = 0;
  if (d.size() == 4 && d[1] <= 4 && d[3] > 4) {
    h = d[2], w = d[3];
  } else if (d.size() == 4 && d[3] <= 4) {
    h = d[1], w = d[2];
  } else if (d.size() == 3 && d[0] <= 4 && d[2] > 4) {
    h = d[1], w = d[2];
  } else if (d.size() == 3 && d[2] <= 4) {
    h = d[0], w = d[1];
  }
  if (h <= 0 || w <= 0)
    return fail(ErrorCode::invalid_argument, "--workload frame=" + size + ": the model's input '" +
                                                 t.name + "' has shape " + shape_text(d) +
                                                 ", not an image layout (N,C,H,W, N,H,W,C, C,H,W "
                                                 "or H,W,C with at most 4 channels) that a "
                                                 "frame's width and height map onto" +
                                                 give);
  const double per_pixel = static_cast<double>(t.bytes) / static_cast<double>(h * w);
  FrameAsInput f;
  f.bytes = per_pixel * static_cast<double>(frame.width) * static_cast<double>(frame.height);
  f.model_size = frame.width == w && frame.height == h;
  f.text = size + " in the model's input format: input '" + t.name + "' " +
           std::string(to_string(t.type)) + " " + shape_text(d) + ", " + fixed(per_pixel, 0) +
           " B per pixel = " + format_bytes(f.bytes);
  if (!f.model_size)
    f.text += "; the model's own frame is " + std::to_string(w) + "x" + std::to_string(h) +
              ": the compute is the one measured at that size, not rescaled";
  return f;
}

Result<Workload> parse_workload(std::string_view text) {
  auto spec = parse_spec("workload:" + std::string(text));
  if (!spec) return fail(ErrorCode::invalid_argument, "--workload: " + spec.error().message);
  Workload w;
  bool fps_given = false;
  for (const auto& [key, value] : spec->params) {
    if (key == "fps") {
      auto n = parse_number(value);
      if (!n || !(*n > 0))
        return fail(ErrorCode::invalid_argument,
                    "--workload: fps must be a positive rate, got '" + value + "'");
      w.fps = *n;
      fps_given = true;
    } else if (key == "latency") {
      auto d = parse_duration(value);
      if (!d || d->count() <= 0)
        return fail(ErrorCode::invalid_argument,
                    "--workload: latency must be a positive duration (50ms), got '" + value + "'");
      w.latency_ms = to_ms(*d);
    } else if (key == "frame") {
      w.frame_text = value;
      if (auto size = parse_frame_size(value); size) {
        w.frame_size = *size;
      } else if (auto b = parse_bytes(value); b && *b > 0) {
        w.frame_bytes = *b;
      } else {
        return fail(ErrorCode::invalid_argument,
                    "--workload: frame must be a size (1080p, 640x480) or bytes (6MB), got '" +
                        value + "'");
      }
    } else {
      return fail(ErrorCode::invalid_argument,
                  "--workload: unknown key '" + key + "' (fps=, latency=, frame=)");
    }
  }
  if (!fps_given)
    return fail(ErrorCode::invalid_argument, "--workload needs fps=N, e.g. 'fps=30,latency=50ms'");
  return w;
}

Result<PlaceResult> place(const Workload& workload, std::vector<PlaceStage> stages,
                          std::vector<PlaceCandidate> candidates) {
  PlaceResult r;
  r.workload = workload;
  r.candidates = std::move(candidates);
  if (stages.empty()) return fail(ErrorCode::invalid_argument, "place: no stage");
  if (r.candidates.empty()) return fail(ErrorCode::invalid_argument, "give at least one result");
  size_t total = 1;
  for (auto& s : stages) {
    s.candidates.clear();
    for (size_t i = 0; i < r.candidates.size(); ++i)
      if (s.sha256.empty() || r.candidates[i].model_sha256 == s.sha256) s.candidates.push_back(i);
    if (s.candidates.empty())
      return fail(ErrorCode::invalid_argument,
                  "stage '" + s.name + "' (" + s.model + ", sha256 " + s.sha256.substr(0, 12) +
                      "): no result given measured this model (results match a stage by "
                      "model.sha256, written since schema version 3)");
    total *= s.candidates.size();
    if (total > kMaxAssignments)
      return fail(ErrorCode::limit_exceeded, "more than " + std::to_string(kMaxAssignments) +
                                                 " assignments: give fewer results");
  }
  r.stages = stages;
  std::vector<std::string> frame_caveats;
  if (workload.frame_size) {
    const std::vector<TensorInfo>* inputs = stages[0].inputs.empty() ? nullptr : &stages[0].inputs;
    for (size_t i : stages[0].candidates)
      if (!inputs && !r.candidates[i].inputs.empty()) inputs = &r.candidates[i].inputs;
    if (!inputs)
      return fail(ErrorCode::invalid_argument,
                  "--workload frame=" + workload.frame_text +
                      ": no result records the model's input shape (a rig predict result does "
                      "not) to map the frame onto: give a rig bench result, --pipeline with the "
                      "model file, or frame=BYTES");
    auto mapped = frame_as_input(*workload.frame_size, *inputs);
    if (!mapped) return tl::unexpected(mapped.error());
    r.workload.frame_bytes = mapped->bytes;
    r.frame_mapping = mapped->text;
    if (!mapped->model_size) frame_caveats.push_back("frame " + mapped->text);
  }

  std::vector<size_t> pick(stages.size(), 0);
  for (size_t n = 0; n < total; ++n) {
    // The n-th combination, stage 0 varying fastest.
    size_t rest = n;
    for (size_t s = 0; s < stages.size(); ++s) {
      pick[s] = stages[s].candidates[rest % stages[s].candidates.size()];
      rest /= stages[s].candidates.size();
    }
    Assignment a;
    struct DeviceLoad {
      double compute_ms = 0, in_bytes = 0, out_bytes = 0;
      double slot_ms = 0;  // the sum of its stages' lone times: how long a frame holds a slot
      uint32_t depth = 0;  // the least depth of its candidates; 0: unknown
      double scale = 1;    // the least measured_scale of its candidates
      std::string scaled_by;
      const LinkProfile* link = nullptr;
    };
    std::map<std::string, DeviceLoad> load;
    std::set<std::string> caveats(frame_caveats.begin(), frame_caveats.end());
    bool energy_known = true;
    double energy = 0;
    for (size_t s = 0; s < stages.size(); ++s) {
      const PlaceCandidate& c = r.candidates[pick[s]];
      const PlaceStage& st = stages[s];
      StagePlacement p;
      p.stage = s;
      p.candidate = pick[s];
      p.compute_ms = c.compute_ms;
      const bool first = s == 0, last = s + 1 == stages.size();
      const std::string& prev = first ? std::string() : r.candidates[pick[s - 1]].device;
      const std::string& next = last ? std::string() : r.candidates[pick[s + 1]].device;
      if (first)
        p.bytes_in = r.workload.frame_bytes.value_or(st.input_bytes.value_or(c.bytes_in));
      else if (prev != c.device)
        p.bytes_in = stages[s - 1].output_bytes.value_or(r.candidates[pick[s - 1]].bytes_out);
      if (last || next != c.device) p.bytes_out = st.output_bytes.value_or(c.bytes_out);
      if (c.link) {
        if (p.bytes_in > 0)
          p.transfer_in_ms = p.bytes_in / c.link->bw_in * 1e3 + to_ms(c.link->latency);
        if (p.bytes_out > 0)
          p.transfer_out_ms = p.bytes_out / c.link->bw_out * 1e3 + to_ms(c.link->latency);
        a.bytes_moved_per_frame += p.bytes_in + p.bytes_out;
      }
      DeviceLoad& d = load[c.device];
      d.compute_ms += c.compute_ms_per_frame;
      d.in_bytes += p.bytes_in;
      d.out_bytes += p.bytes_out;
      d.link = c.link ? &*c.link : nullptr;
      d.slot_ms += p.transfer_in_ms + p.compute_ms + p.transfer_out_ms;
      if (c.depth > 0) d.depth = d.depth > 0 ? std::min(d.depth, c.depth) : c.depth;
      if (const double k = measured_scale(c); k < d.scale) {
        d.scale = k;
        d.scaled_by = c.source;
      }
      a.lone_ms += p.transfer_in_ms + p.compute_ms + p.transfer_out_ms;
      a.transfer_ms += p.transfer_in_ms + p.transfer_out_ms;
      if (c.energy_j)
        energy += *c.energy_j;
      else
        energy_known = false;
      for (const auto& cv : c.caveats) caveats.insert(cv);
      a.stages.push_back(p);
    }
    // Each device's rate: the least of its three limits (the header's model).
    double rate = HUGE_VAL;
    for (const auto& [device, d] : load) {
      double resource_ms = d.compute_ms;
      std::string bound = "compute on " + device;
      if (d.link) {
        const double in_ms = d.in_bytes / d.link->bw_in * 1e3;
        const double out_ms = d.out_bytes / d.link->bw_out * 1e3;
        const double link_ms = d.link->full_duplex ? std::max(in_ms, out_ms) : in_ms + out_ms;
        if (link_ms > resource_ms) {
          resource_ms = link_ms;
          bound = "the link of " + device;
        }
        const double util = workload.fps * link_ms / 1e3;
        if (util >= a.bus_utilization) {
          a.bus_utilization = util;
          a.busiest_link = device;
        }
      }
      const double resource_rate = resource_ms > 0 ? 1e3 / resource_ms : HUGE_VAL;
      std::optional<double> depth_rate;
      if (d.depth > 0 && d.slot_ms > 0) depth_rate = d.depth * 1e3 / d.slot_ms;
      double device_rate = resource_rate;
      if (depth_rate && *depth_rate < device_rate) {
        device_rate = *depth_rate;
        bound = "the queue depth of " + device + " (" + std::to_string(d.depth) +
                " in flight, each holding it " + format_ms(d.slot_ms) + ")";
      }
      if (d.scale < 1) {
        caveats.insert(device + ": the model states " + fixed(device_rate, 1) + "/s; scaled by " +
                       fixed(d.scale, 4) + " to the rate " + d.scaled_by +
                       " states at the conditions it was measured at");
        bound += ", scaled to what " + d.scaled_by + " states";
      }
      device_rate *= d.scale;
      if (device_rate < rate) {
        rate = device_rate;
        a.bound = bound;
        a.resource_rate_per_s = std::isfinite(resource_rate) ? resource_rate : 0;
        a.depth_rate_per_s = depth_rate;
        a.measured_scale = d.scale;
      }
    }
    a.rate_per_s = std::isfinite(rate) ? rate : 0;
    a.bus_headroom = 1 - a.bus_utilization;
    a.transfer_share = a.lone_ms > 0 ? a.transfer_ms / a.lone_ms : 0;
    if (energy_known) a.energy_j = energy;
    a.meets_rate = a.rate_per_s >= workload.fps;
    a.meets_latency = !workload.latency_ms || a.lone_ms <= *workload.latency_ms;
    a.meets = a.meets_rate && a.meets_latency;
    a.shortfall = a.rate_per_s > 0 ? workload.fps / a.rate_per_s : 1e300;
    if (workload.latency_ms) a.shortfall = std::max(a.shortfall, a.lone_ms / *workload.latency_ms);
    a.caveats.assign(caveats.begin(), caveats.end());
    r.assignments.push_back(std::move(a));
  }

  std::stable_sort(r.assignments.begin(), r.assignments.end(),
                   [](const Assignment& x, const Assignment& y) {
                     if (x.meets != y.meets) return x.meets;
                     if (!x.meets) return x.shortfall < y.shortfall;
                     if (x.bytes_moved_per_frame != y.bytes_moved_per_frame)
                       return x.bytes_moved_per_frame < y.bytes_moved_per_frame;
                     if (x.lone_ms != y.lone_ms) return x.lone_ms < y.lone_ms;
                     return x.rate_per_s > y.rate_per_s;
                   });
  const Assignment& best = r.assignments.front();
  r.met = best.meets;
  auto who = [&](const Assignment& a) {
    std::string s;
    for (const auto& p : a.stages)
      s += (s.empty() ? "" : ", ") + r.stages[p.stage].name + " on " +
           r.candidates[p.candidate].device;
    return s;
  };
  const std::string rate_text = fixed(best.rate_per_s, 1) + "/s";
  if (r.met) {
    size_t meeting = 0;
    const Assignment* fastest = &best;
    for (const auto& a : r.assignments)
      if (a.meets) {
        ++meeting;
        if (a.rate_per_s > fastest->rate_per_s) fastest = &a;
      }
    r.reason = who(best) + ": meets " + fixed(workload.fps, 1) + " fps at " + rate_text + " (" +
               fixed(best.rate_per_s / workload.fps, 2) + "x)" +
               (workload.latency_ms
                    ? " and " + format_ms(best.lone_ms) + " <= " + format_ms(*workload.latency_ms)
                    : std::string()) +
               ", moving " + format_bytes(best.bytes_moved_per_frame) +
               " per frame, the least of the " + std::to_string(meeting) + " assignment" +
               (meeting == 1 ? "" : "s") + " that meet it";
    if (fastest != &best)
      r.reason += "; the fastest (" + who(*fastest) + ", " + fixed(fastest->rate_per_s, 1) +
                  "/s) moves " + format_bytes(fastest->bytes_moved_per_frame) + " per frame";
  } else {
    r.reason =
        "no assignment meets the workload; the nearest is " + who(best) + " at " + rate_text +
        (workload.latency_ms ? ", " + format_ms(best.lone_ms) + " lone latency" : std::string()) +
        " (" +
        (best.meets_rate
             ? std::string("rate met")
             : "rate short by " + fixed((1 - best.rate_per_s / workload.fps) * 100, 1) + "%") +
        (workload.latency_ms
             ? std::string(best.meets_latency ? ", latency met" : ", latency over the bound")
             : std::string()) +
        ")";
  }
  return r;
}

}  // namespace rig

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

}  // namespace

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
        w.frame_bytes = static_cast<double>(size->width * size->height * 3);
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
      const LinkProfile* link = nullptr;
    };
    std::map<std::string, DeviceLoad> load;
    std::set<std::string> caveats;
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
        p.bytes_in = workload.frame_bytes.value_or(st.input_bytes.value_or(c.bytes_in));
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
      a.lone_ms += p.transfer_in_ms + p.compute_ms + p.transfer_out_ms;
      a.transfer_ms += p.transfer_in_ms + p.transfer_out_ms;
      if (c.energy_j)
        energy += *c.energy_j;
      else
        energy_known = false;
      for (const auto& cv : c.caveats) caveats.insert(cv);
      a.stages.push_back(p);
    }
    double slowest_ms = 0;
    for (const auto& [device, d] : load) {
      if (d.compute_ms > slowest_ms) {
        slowest_ms = d.compute_ms;
        a.bound = "compute on " + device;
      }
      if (!d.link) continue;
      const double in_ms = d.in_bytes / d.link->bw_in * 1e3;
      const double out_ms = d.out_bytes / d.link->bw_out * 1e3;
      const double link_ms = d.link->full_duplex ? std::max(in_ms, out_ms) : in_ms + out_ms;
      if (link_ms > slowest_ms) {
        slowest_ms = link_ms;
        a.bound = "the link of " + device;
      }
      const double util = workload.fps * link_ms / 1e3;
      if (util >= a.bus_utilization) {
        a.bus_utilization = util;
        a.busiest_link = device;
      }
    }
    a.bus_headroom = 1 - a.bus_utilization;
    a.rate_per_s = slowest_ms > 0 ? 1e3 / slowest_ms : 0;
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

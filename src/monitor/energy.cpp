// Energy per inference from the monitor's series: (mean power during the
// measured part - idle power) x time per frame. A counter (energy_j:*) gives
// the mean as its delta over the elapsed time; sampled power (power_w:*) as
// the mean of its samples. Only series that were read are used; without one
// the figure is unavailable with the reason.
#include <cmath>
#include <functional>

#include "rig/monitor/monitor.hpp"
#include "rig/units.hpp"

namespace rig {
namespace {

struct Candidate {
  std::string sensor;  // as reported
  bool counter = false;
  std::function<std::optional<double>(const MonitorSample&)> value;
};

std::optional<double> get(const MonitorSample& s, const std::string& key) {
  auto it = s.values.find(key);
  if (it == s.values.end()) return std::nullopt;
  return it->second;
}

bool in_measure(const MonitorSample& s) {
  return s.phase == "measure" && s.repeat > 0;
}

struct Mean {
  std::optional<double> watts;
  std::optional<double> period_s;
};

// Counter: sum of deltas over sum of elapsed, per run of consecutive samples
// that all hold the counter (a gap is a reset or a failed read: it splits).
Mean counter_mean(const std::vector<const MonitorSample*>& samples, const Candidate& c) {
  double joules = 0, seconds = 0, intervals = 0;
  const MonitorSample* prev = nullptr;
  std::optional<double> prev_v;
  for (const auto* s : samples) {
    const auto v = c.value(*s);
    if (prev && prev_v && v && s->repeat == prev->repeat && *v >= *prev_v && s->t_s > prev->t_s) {
      joules += *v - *prev_v;
      seconds += s->t_s - prev->t_s;
      intervals += 1;
    }
    prev = s;
    prev_v = v;
  }
  Mean m;
  if (seconds > 0) {
    m.watts = joules / seconds;
    m.period_s = seconds / intervals;
  }
  return m;
}

Mean sampled_mean(const std::vector<const MonitorSample*>& samples, const Candidate& c) {
  double sum = 0, n = 0, span = 0, intervals = 0;
  const MonitorSample* prev = nullptr;
  for (const auto* s : samples) {
    if (auto v = c.value(*s)) {
      sum += *v;
      n += 1;
      if (prev && prev->repeat == s->repeat && s->t_s > prev->t_s) {
        span += s->t_s - prev->t_s;
        intervals += 1;
      }
      prev = s;
    }
  }
  Mean m;
  if (n > 0) m.watts = sum / n;
  if (intervals > 0) m.period_s = span / intervals;
  return m;
}

std::vector<Candidate> candidates(const MonitorRecord& r) {
  std::vector<std::string> energy, power;
  for (const auto& s : r.samples)
    for (const auto& [k, v] : s.values) {
      if (k.rfind("energy_j:", 0) == 0 &&
          std::find(energy.begin(), energy.end(), k) == energy.end())
        energy.push_back(k);
      if (k.rfind("power_w:", 0) == 0 && std::find(power.begin(), power.end(), k) == power.end())
        power.push_back(k);
    }
  std::sort(energy.begin(), energy.end());
  std::sort(power.begin(), power.end());
  std::vector<Candidate> out;
  auto one = [](std::string key) { return [key](const MonitorSample& s) { return get(s, key); }; };
  // The device's own sensors describe the device under test.
  out.push_back({"device:energy_j", true, one("device:energy_j")});
  out.push_back({"device:power_w", false, one("device:power_w")});
  // Host counters: the RAPL packages together (the whole host's CPUs), then each GPU.
  std::vector<std::string> rapl;
  for (const auto& k : energy)
    if (k.rfind("energy_j:nvml", 0) != 0) rapl.push_back(k);
  if (!rapl.empty()) {
    std::string name = "powercap:";
    for (size_t i = 0; i < rapl.size(); ++i) name += (i ? "+" : "") + rapl[i].substr(9);
    out.push_back({name, true, [rapl](const MonitorSample& s) -> std::optional<double> {
                     double sum = 0;
                     for (const auto& k : rapl) {
                       auto v = get(s, k);
                       if (!v) return std::nullopt;
                       sum += *v;
                     }
                     return sum;
                   }});
  }
  for (const auto& k : energy)
    if (k.rfind("energy_j:nvml", 0) == 0) out.push_back({"nvml:" + k.substr(13), true, one(k)});
  for (const auto& k : power) {
    const std::string id = k.substr(8);
    out.push_back(
        {(id.rfind("nvml", 0) == 0 ? "nvml:" + id.substr(4) : "hwmon:" + id), false, one(k)});
  }
  return out;
}

std::string no_power_reason(const MonitorRecord& r) {
  if (!r.enabled) return "unavailable: the monitor was off (--no-monitor)";
  std::string why;
  for (const char* name : {"device_sensors", "powercap", "hwmon_power", "nvml"}) {
    const SourceStatus* s = r.source(name);
    if (!s) continue;
    if (s->state == SourceState::available && std::string(name) == "device_sensors") {
      why += std::string(why.empty() ? "" : "; ") + "device_sensors: no power_w or energy_j";
      continue;
    }
    if (s->state != SourceState::available)
      why += std::string(why.empty() ? "" : "; ") + name + ": " + s->detail;
  }
  for (const auto& n : r.notes) why += std::string(why.empty() ? "" : "; ") + n;
  return "unavailable: no power reading during the measured part (" +
         (why.empty() ? std::string("no power source") : why) + ")";
}

}  // namespace

EnergyFigure energy_per_inference(const MonitorRecord& r, std::optional<double> time_per_frame_s,
                                  Nanos idle) {
  EnergyFigure e;
  std::vector<const MonitorSample*> measured, idle_samples;
  for (const auto& s : r.samples) {
    if (in_measure(s)) measured.push_back(&s);
    if (s.phase == "idle") idle_samples.push_back(&s);
  }
  for (const auto& c : candidates(r)) {
    const Mean m = c.counter ? counter_mean(measured, c) : sampled_mean(measured, c);
    if (!m.watts) continue;
    e.available = true;
    e.sensor = c.sensor;
    e.method = c.counter ? "counter delta" : "sampled mean";
    e.mean_power_w = m.watts;
    e.sampling_period_s = m.period_s;
    if (!idle_samples.empty()) {
      const Mean i = c.counter ? counter_mean(idle_samples, c) : sampled_mean(idle_samples, c);
      if (i.watts) {
        e.idle_power_w = i.watts;
        e.idle_s = idle_samples.back()->t_s - idle_samples.front()->t_s;
        e.idle_subtracted = true;
      }
    }
    if (!e.idle_subtracted && idle > Nanos(0))
      e.reason = "idle power was not read by " + c.sensor + "; the figure is gross";
    e.net_power_w = *e.mean_power_w - e.idle_power_w.value_or(0);
    if (!time_per_frame_s || !(*time_per_frame_s > 0)) {
      e.reason = "no rate: no time per frame to charge the power to";
    } else if (*e.net_power_w < 0) {
      e.reason = "mean power during the run (" + format_fixed(*e.mean_power_w, 3) +
                 " W) was below idle (" + format_fixed(*e.idle_power_w, 3) +
                 " W): no energy per inference";
    } else {
      e.joules_per_inference = *e.net_power_w * *time_per_frame_s;
    }
    return e;
  }
  e.reason = no_power_reason(r);
  return e;
}

}  // namespace rig

// The monitor: sampling at the engine's window boundaries, the device's
// warnings after each phase, the fan-out of observers.
#include "rig/monitor/monitor.hpp"

#include <algorithm>
#include <cmath>

#include "monitor/sources.hpp"

namespace rig {

std::string_view to_string(SourceKind kind) {
  switch (kind) {
    case SourceKind::host:
      return "host";
    case SourceKind::device:
      return "device";
    case SourceKind::scripted:
      return "scripted";
  }
  return "host";
}

std::string_view to_string(SourceState state) {
  switch (state) {
    case SourceState::available:
      return "available";
    case SourceState::unavailable:
      return "unavailable";
    case SourceState::not_sampled:
      return "not_sampled";
  }
  return "unavailable";
}

const SourceStatus* MonitorRecord::source(std::string_view name) const {
  for (const auto& s : sources)
    if (s.name == name) return &s;
  return nullptr;
}

std::string MonitorRecord::why_absent(std::string_view name) const {
  if (!enabled) return "the monitor was off (--no-monitor)";
  const SourceStatus* s = source(name);
  if (!s) return std::string(name) + " was not read";
  if (s->state == SourceState::not_sampled) return s->detail;
  if (s->state == SourceState::unavailable) return "unavailable: " + s->detail;
  return std::string(name) + " gave no value during the measured part";
}

SourceStatus ScriptedSource::probe() {
  SourceStatus s;
  s.name = name_;
  s.kind = SourceKind::scripted;
  s.state = series_.empty() ? SourceState::unavailable : SourceState::available;
  s.detail =
      series_.empty() ? "an empty script" : std::to_string(series_.size()) + " scripted samples";
  return s;
}

void ScriptedSource::sample(Nanos, std::map<std::string, double>& out, std::vector<std::string>&) {
  if (series_.empty()) return;
  const auto& values = series_[std::min(next_, series_.size() - 1)];
  ++next_;
  for (const auto& [k, v] : values) out[k] = v;
}

std::vector<std::unique_ptr<MonitorSource>> standard_sources(const MonitorSettings& settings,
                                                             Device* device) {
  return monitor::host_sources(settings, device);
}

namespace {

// A device on a virtual clock paced to the wall clock (a served sim with
// realtime=1) is timed by the wall clock like a real one: the host is sampled.
bool simulated(Device& device) {
  const DeviceInfo info = device.info();
  return device.clock().is_virtual() ||
         (info.clock == ClockKind::virtual_time && !info.paced_clock);
}

const char* kHostNote =
    "virtual clock: host sources not sampled (they would describe this host, not the simulated "
    "device); device sensors and scripted sources are";

}  // namespace

Monitor::Monitor(const MonitorSettings& settings, Device& device)
    : settings_(settings), device_(&device), clock_(device.clock()), virtual_(simulated(device)) {}

Monitor::Monitor(const MonitorSettings& settings, Clock& clock, bool virtual_device)
    : settings_(settings), clock_(clock), virtual_(virtual_device || clock.is_virtual()) {}

Monitor::~Monitor() = default;

void Monitor::set_sources(std::vector<std::unique_ptr<MonitorSource>> sources) {
  sources_ = std::move(sources);
  sources_set_ = true;
}

void Monitor::add_source(std::unique_ptr<MonitorSource> source) {
  if (!sources_set_) set_sources(standard_sources(settings_, device_));
  sources_.push_back(std::move(source));
}

void Monitor::start() {
  if (started_) return;
  started_ = true;
  record_.enabled = settings_.enabled;
  if (!settings_.enabled) return;
  if (!sources_set_) set_sources(standard_sources(settings_, device_));
  if (settings_.extra_sources)
    for (auto& extra : settings_.extra_sources()) sources_.push_back(std::move(extra));
  record_.host_sampled = !virtual_;
  if (virtual_) record_.host_note = kHostNote;
  for (auto& s : sources_) {
    SourceStatus st;
    if (virtual_ && s->kind() == SourceKind::host) {
      st.name = s->name();
      st.kind = s->kind();
      st.state = SourceState::not_sampled;
      st.detail = "not sampled on a virtual clock (it would describe this host)";
    } else {
      st = s->probe();
    }
    sampled_.push_back(st.state == SourceState::available);
    record_.sources.push_back(std::move(st));
  }
  t0_ = clock_.now();
  take_warnings("after open");
  sample_at(t0_, "start");
}

void Monitor::take_warnings(const std::string& when) {
  if (!device_ || !settings_.enabled) return;
  for (auto& w : device_->take_warnings()) record_.device_warnings.push_back({when, std::move(w)});
}

void Monitor::sample(const std::string& event) {
  if (!started_ || !settings_.enabled) return;
  sample_at(clock_.now(), event);
}

void Monitor::sample_at(Nanos at, const std::string& event) {
  MonitorSample s;
  s.t_s = to_seconds(at - t0_);
  s.phase = phase_;
  s.event = event;
  s.repeat = repeat_;
  s.window = event == "window" ? window_ : 0;
  for (size_t i = 0; i < sources_.size(); ++i)
    if (sampled_[i]) sources_[i]->sample(at, s.values, record_.notes);
  for (auto it = s.values.begin(); it != s.values.end();)
    it = std::isfinite(it->second) ? std::next(it) : s.values.erase(it);
  record_.samples.push_back(std::move(s));
}

bool Monitor::power_readable() const {
  if (record_.samples.empty()) return false;
  for (const auto& [k, v] : record_.samples.front().values)
    if (k.rfind("power_w:", 0) == 0 || k.rfind("energy_j:", 0) == 0 || k == "device:power_w" ||
        k == "device:energy_j")
      return true;
  return false;
}

void Monitor::measure_idle(Nanos duration) {
  wait(duration, "idle");
}

void Monitor::wait(Nanos duration, const std::string& phase) {
  if (duration <= Nanos(0)) return;
  if (!started_ || !settings_.enabled) {
    clock_.sleep_until(clock_.now() + duration);
    return;
  }
  const std::string before = phase_;
  phase_ = phase;
  const uint32_t n = std::max<uint32_t>(2, settings_.idle_samples);
  const Nanos start = clock_.now();
  sample_at(start, phase);
  for (uint32_t i = 1; i < n; ++i) {
    const Nanos t = start + duration * i / (n - 1);
    clock_.sleep_until(t);
    sample_at(clock_.now(), phase);
  }
  phase_ = before;
}

void append_run(MonitorRecord& whole, MonitorRecord part, const std::string& run) {
  for (auto& w : part.device_warnings) w.when = run + ", " + w.when;
  if (whole.sources.empty() && whole.samples.empty()) {
    whole = std::move(part);
    return;
  }
  const double t0 = whole.samples.empty() ? 0 : whole.samples.back().t_s;
  uint32_t repeats = 0;
  for (const auto& s : whole.samples) repeats = std::max(repeats, s.repeat);
  for (auto& s : part.samples) {
    s.t_s += t0;
    s.repeat += repeats;  // measured parts begun so far, over every run
    whole.samples.push_back(std::move(s));
  }
  for (auto& src : part.sources)
    if (!whole.source(src.name)) whole.sources.push_back(std::move(src));
  for (auto& w : part.device_warnings) whole.device_warnings.push_back(std::move(w));
  for (auto& n : part.notes)
    if (std::find(whole.notes.begin(), whole.notes.end(), n) == whole.notes.end())
      whole.notes.push_back(std::move(n));
}

void Monitor::measured_begin(const std::string& phase) {
  phase_ = phase;
  if (!started_ || !settings_.enabled) return;
  ++repeat_;
  window_ = 0;
  sample_at(clock_.now(), "measure_begin");
}

void Monitor::measured_end() {
  if (!started_ || !settings_.enabled) return;
  sample_at(clock_.now(), "measure_end");
  take_warnings("after " + phase_);
}

MonitorRecord Monitor::finish() {
  if (started_ && settings_.enabled) {
    take_warnings("at the end");
    phase_ = "end";
    sample_at(clock_.now(), "end");
  }
  return record_;
}

void Monitor::phase_begin(EnginePhase phase, Nanos at) {
  phase_ = std::string(to_string(phase));
  if (!started_ || !settings_.enabled) return;
  if (phase == EnginePhase::measure) {
    ++repeat_;
    window_ = 0;
    sample_at(at, "measure_begin");
  }
}

void Monitor::phase_end(EnginePhase phase, Nanos at) {
  if (!started_ || !settings_.enabled) return;
  if (phase == EnginePhase::measure) sample_at(at, "measure_end");
  take_warnings("after " + std::string(to_string(phase)));
}

void Monitor::window_closed(const WindowFigure&, Nanos at) {
  if (!started_ || !settings_.enabled) return;
  ++window_;
  sample_at(at, "window");
}

}  // namespace rig

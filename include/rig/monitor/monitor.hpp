// The monitor: what else was happening while rig measured. It samples its
// sources at every window boundary on the device's clock (an EngineObserver),
// so its series align with the rate windows on every device, and records
// which sources were absent and why. On virtual clocks host sources are not
// sampled (they would describe the host, not the simulated device); device
// sensors and scripted sources still are.
//
// Sources (src/monitor/host_sources.cpp, nvml.cpp), each a series of named
// values per sample:
//   host_cpu          others_cpu (share of the host's CPU time used by other
//                     processes: /proc/stat minus /proc/self/stat), steal
//   psi_cpu, psi_io   psi_cpu_some, psi_io_some: % of the interval some task
//                     stalled (/proc/pressure/*, "total=" deltas)
//   loadavg           load_1m
//   cpufreq           cpu_freq_min_mhz, cpu_freq_mean_mhz (scaling_cur_freq)
//   thermal_throttle  throttle_events (core + package throttle counters)
//   thermal_zones     temp_c:thermal_zoneN
//   hwmon_temp        temp_c:hwmonN/tempM
//   hwmon_power       power_w:hwmonN/powerM
//   powercap          energy_j:ZONE (RAPL energy_uj since the first sample,
//                     wrap-around handled with max_energy_range_uj)
//   nvml              power_w:nvmlN, temp_c:nvmlN, energy_j:nvmlN (libnvidia-ml
//                     loaded with dlopen, never linked)
//   device_sensors    device:NAME for every Device::read_sensors() reading
//   link_traffic      link_other_bytes: the interface's byte counters minus
//                     rig's own link bytes (remote devices), since the start
// The roots of /proc and /sys are settings, so tests point them at fake trees.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "rig/clock.hpp"
#include "rig/device.hpp"
#include "rig/engine.hpp"
#include "rig/fanout_observer.hpp"  // FanOutObserver: the monitor beside other observers

namespace rig {

class MonitorSource;

struct MonitorSettings {
  bool enabled = true;                             // --no-monitor: false
  std::string proc_root = "/proc";                 // --proc-root (tests)
  std::string sys_root = "/sys";                   // --sys-root (tests)
  std::string nvml_library = "libnvidia-ml.so.1";  // empty: NVML not tried
  // Idle power: measured for this long before the run when a power source is
  // readable, and subtracted from the mean power during the run. 0: not
  // measured (the energy figure is then gross and says so).
  Nanos idle{std::chrono::seconds(2)};
  uint32_t idle_samples = 10;
  // Sources added beside the standard ones each time a monitor starts
  // (tests script series per window with ScriptedSource). Not reported.
  std::function<std::vector<std::unique_ptr<MonitorSource>>()> extra_sources;
};

// How a source is read: host sources describe this machine; device sources
// come through the device interface; scripted ones are injected (tests).
enum class SourceKind { host, device, scripted };
std::string_view to_string(SourceKind kind);

// available: sampled; unavailable: absent or unreadable (detail has the
// reason); not_sampled: present or not, deliberately not read (a virtual
// clock, --no-monitor).
enum class SourceState { available, unavailable, not_sampled };
std::string_view to_string(SourceState state);

struct SourceStatus {
  std::string name;  // "host_cpu", "powercap", ...
  SourceKind kind = SourceKind::host;
  SourceState state = SourceState::unavailable;
  // What was found ("2 zones: intel-rapl:0, intel-rapl:1"), or why not
  // ("no /sys/class/powercap on this host", "permission denied reading ...").
  std::string detail;
};

struct MonitorSample {
  double t_s = 0;       // on the device clock, since the monitor started
  std::string phase;    // the engine phase in progress: "idle", "warmup", "measure", ...
  std::string event;    // "start", "measure_begin", "window", "measure_end", "idle", "end"
  uint32_t repeat = 0;  // measured parts begun so far (1-based; 0 before the first)
  uint32_t window = 0;  // the window that closed (1-based within its repeat), else 0
  std::map<std::string, double> values;  // series name -> value (finite only)
};

// A warning the device raised, taken through Device::take_warnings().
struct DeviceWarning {
  std::string when;  // "after open", "after load", "after measure", ...
  std::string text;
};

// Energy per inference, or why there is none. No figure is ever made up:
// available is false unless a power sensor was read during the run.
struct EnergyFigure {
  bool available = false;
  std::string reason;  // when unavailable: "unavailable: no power source: ..."
  std::string sensor;  // "powercap:intel-rapl:0", "device:power_w", "nvml:0", ...
  std::string method;  // "counter delta" or "sampled mean"
  std::optional<double> sampling_period_s;  // mean interval between samples in the run
  double idle_s = 0;                        // idle measured for this long; 0: not measured
  std::optional<double> idle_power_w;
  std::optional<double> mean_power_w;          // during the measured part
  std::optional<double> net_power_w;           // mean - idle (mean when idle was not measured)
  std::optional<double> joules_per_inference;  // net power x time per frame
  bool idle_subtracted = false;
};

struct MonitorRecord {
  bool enabled = false;       // false: the monitor was off (--no-monitor)
  bool host_sampled = false;  // false on virtual clocks
  std::string host_note;      // why host sources were not sampled
  std::vector<SourceStatus> sources;
  std::vector<MonitorSample> samples;
  std::vector<DeviceWarning> device_warnings;
  std::vector<std::string> notes;  // counter resets, reads that failed mid-run
  EnergyFigure energy;

  const SourceStatus* source(std::string_view name) const;
  // Why a series is absent: the source's state and detail, or the host note.
  std::string why_absent(std::string_view source_name) const;
};

// Joins the record of one more run, watched on its own (a device opened
// afresh for it), to `whole`: the first run's record is taken as it is; a
// later one's samples continue from the last sample's time and count the
// measured parts of the runs before it; sources not seen yet are added;
// each device warning's `when` is prefixed with `run` ("B (pair 2)").
// `whole` keeps the first run's energy figure.
void append_run(MonitorRecord& whole, MonitorRecord part, const std::string& run);

// One source of series. probe() runs once before the first sample; sample()
// appends this source's values for one sample.
class MonitorSource {
 public:
  virtual ~MonitorSource() = default;
  virtual std::string name() const = 0;
  virtual SourceKind kind() const = 0;
  virtual SourceStatus probe() = 0;
  // `at` on the monitor's clock. Values that cannot be read this time are
  // left out; a note explains a lasting problem (a counter reset).
  virtual void sample(Nanos at, std::map<std::string, double>& out,
                      std::vector<std::string>& notes) = 0;
};

// A scripted source: the n-th sample gets series[n] (the last one repeats).
// Tests script contention or clocks per window with it; on virtual clocks it
// is sampled like a device sensor.
class ScriptedSource final : public MonitorSource {
 public:
  ScriptedSource(std::string name, std::vector<std::map<std::string, double>> series)
      : name_(std::move(name)), series_(std::move(series)) {}
  std::string name() const override { return name_; }
  SourceKind kind() const override { return SourceKind::scripted; }
  SourceStatus probe() override;
  void sample(Nanos at, std::map<std::string, double>& out,
              std::vector<std::string>& notes) override;

 private:
  std::string name_;
  std::vector<std::map<std::string, double>> series_;
  size_t next_ = 0;
};

// The sources read from /proc and /sys (and NVML), in the order listed above.
// `device` (may be null) feeds device_sensors and link_traffic.
std::vector<std::unique_ptr<MonitorSource>> standard_sources(const MonitorSettings& settings,
                                                             Device* device);

// Samples at the engine's window boundaries: attach it as the EngineObserver
// (through FanOutObserver beside others). Driven on the engine's thread.
class Monitor final : public EngineObserver {
 public:
  // Reads the device's sensors, warnings and byte counters, on its clock.
  Monitor(const MonitorSettings& settings, Device& device);
  // No device (tests): `clock` times the samples; `virtual_device` says
  // whether the figures being watched are simulated.
  Monitor(const MonitorSettings& settings, Clock& clock, bool virtual_device);
  ~Monitor() override;
  Monitor(const Monitor&) = delete;
  Monitor& operator=(const Monitor&) = delete;

  // Replaces the standard sources (before start()).
  void set_sources(std::vector<std::unique_ptr<MonitorSource>> sources);
  void add_source(std::unique_ptr<MonitorSource> source);

  // Probes every source, takes the device's warnings ("after open") and the
  // first sample. Nothing is read when the monitor is disabled.
  void start();
  // Takes one sample now.
  void sample(const std::string& event);
  // Whether a power or energy series was read in the first sample.
  bool power_readable() const;
  // Idle power: samples `idle_samples` times over `duration`, waiting through
  // the device's clock (no wall time on a virtual clock).
  void measure_idle(Nanos duration);
  // Waits `duration` through the device's clock, sampling as measure_idle
  // does, in phase `phase` ("cooldown").
  void wait(Nanos duration, const std::string& phase);
  // A measured part the engine does not drive (the device's own loop):
  // sampled at its start and end as one more repeat, in phase `phase`, and
  // the device's warnings read after it. Confound rules read it as measured.
  void measured_begin(const std::string& phase);
  void measured_end();
  // A last sample and the device's last warnings; the record.
  MonitorRecord finish();
  const MonitorRecord& record() const { return record_; }

  void phase_begin(EnginePhase phase, Nanos at) override;
  void phase_end(EnginePhase phase, Nanos at) override;
  void window_closed(const WindowFigure& window, Nanos at) override;

 private:
  void take_warnings(const std::string& when);
  void sample_at(Nanos at, const std::string& event);

  MonitorSettings settings_;
  Device* device_ = nullptr;
  Clock& clock_;
  bool virtual_ = false;
  bool started_ = false;
  bool sources_set_ = false;
  std::vector<std::unique_ptr<MonitorSource>> sources_;
  std::vector<bool> sampled_;  // per source: read at each sample
  MonitorRecord record_;
  Nanos t0_{0};
  std::string phase_ = "start";
  uint32_t repeat_ = 0, window_ = 0;
};

// J/inference = (mean power during the measured part - idle power) x time
// per frame. Counters (energy_j:*) are preferred over sampled power
// (power_w:*), a device's own sensors over the host's. `time_per_frame_s`:
// nullopt when the run has no rate. docs/methodology.md, section 9.
EnergyFigure energy_per_inference(const MonitorRecord& record,
                                  std::optional<double> time_per_frame_s, Nanos idle);

}  // namespace rig

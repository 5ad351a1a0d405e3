// The monitor's sources against fake /proc and /sys trees (present, missing,
// unreadable, garbage, counter wrap and reset), its alignment with the
// engine's windows on the sim device, and the energy arithmetic against
// hand-computed values.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "rig/device.hpp"
#include "rig/engine.hpp"
#include "rig/model.hpp"
#include "rig/monitor/monitor.hpp"

namespace rig {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// A real (not virtual) clock the test moves by hand, so host sources are read.
class ManualClock final : public Clock {
 public:
  Nanos now() const override { return now_; }
  bool is_virtual() const override { return false; }
  void sleep_until(Nanos t) override { now_ = std::max(now_, t); }
  void advance(Nanos d) { now_ += d; }

 private:
  Nanos now_{std::chrono::seconds(100)};
};

class FakeTree : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("rig-monitor-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_ / "proc");
    fs::create_directories(root_ / "sys");
    settings_.proc_root = (root_ / "proc").string();
    settings_.sys_root = (root_ / "sys").string();
    settings_.nvml_library = "librig-test-no-such-nvml.so.1";
  }
  void TearDown() override { fs::remove_all(root_); }

  void write(const std::string& rel, const std::string& text) {
    const fs::path p = root_ / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  // user nice system idle iowait irq softirq steal
  void proc_stat(long busy, long idle, long steal) {
    write("proc/stat", "cpu  " + std::to_string(busy) + " 0 0 " + std::to_string(idle) + " 0 0 0 " +
                           std::to_string(steal) + " 0 0\ncpu0 1 2 3 4\n");
  }
  void self_stat(long ticks) {
    write("proc/self/stat", "1234 (rig worker) R 1 1 1 0 -1 0 0 0 0 0 " + std::to_string(ticks) +
                                " 0 0 0 20 0 4 0\n");
  }
  void full_tree() {
    proc_stat(1000, 9000, 0);
    self_stat(100);
    write("proc/pressure/cpu",
          "some avg10=1.00 avg60=0.50 avg300=0.10 total=1000000\nfull avg10=0 avg60=0 avg300=0 "
          "total=0\n");
    write("proc/pressure/io", "some avg10=0.00 avg60=0.00 avg300=0.00 total=500\n");
    write("proc/loadavg", "0.42 0.30 0.20 1/100 1234\n");
    for (int c = 0; c < 2; ++c) {
      const std::string cpu = "sys/devices/system/cpu/cpu" + std::to_string(c);
      write(cpu + "/cpufreq/scaling_cur_freq", "3000000\n");
      write(cpu + "/thermal_throttle/core_throttle_count", "0\n");
      write(cpu + "/thermal_throttle/package_throttle_count", "0\n");
    }
    write("sys/class/thermal/thermal_zone0/temp", "45000\n");
    write("sys/class/hwmon/hwmon0/temp1_input", "50000\n");
    write("sys/class/hwmon/hwmon0/power1_input", "12500000\n");
    write("sys/class/powercap/intel-rapl:0/energy_uj", "1000000\n");
    write("sys/class/powercap/intel-rapl:0/max_energy_range_uj", "262143328850\n");
    write("sys/class/powercap/intel-rapl:0:0/energy_uj", "5\n");  // a sub-zone: not counted
  }

  const SourceStatus& status(const MonitorRecord& r, const std::string& name) {
    const SourceStatus* s = r.source(name);
    EXPECT_NE(s, nullptr) << name;
    static SourceStatus none;
    return s ? *s : none;
  }

  fs::path root_;
  MonitorSettings settings_;
  ManualClock clock_;
};

TEST_F(FakeTree, PresentSourcesGiveTheirSeries) {
  full_tree();
  Monitor m(settings_, clock_, false);
  m.start();
  // One second later: 400 of 1000 new ticks busy, 100 of them rig's; 50 stolen.
  clock_.advance(1s);
  proc_stat(1400, 9550, 50);
  self_stat(200);
  write("proc/pressure/cpu", "some avg10=1 avg60=1 avg300=1 total=1250000\n");
  write("sys/devices/system/cpu/cpu1/cpufreq/scaling_cur_freq", "1500000\n");
  write("sys/devices/system/cpu/cpu1/thermal_throttle/core_throttle_count", "3\n");
  write("sys/class/powercap/intel-rapl:0/energy_uj", "6000000\n");
  m.sample("window");
  const MonitorRecord r = m.finish();
  EXPECT_TRUE(r.host_sampled);
  for (const char* name :
       {"host_cpu", "psi_cpu", "psi_io", "loadavg", "cpufreq", "thermal_throttle", "thermal_zones",
        "hwmon_temp", "hwmon_power", "powercap"})
    EXPECT_EQ(status(r, name).state, SourceState::available)
        << name << ": " << status(r, name).detail;
  EXPECT_EQ(status(r, "powercap").detail, "intel-rapl:0");
  ASSERT_GE(r.samples.size(), 2u);
  const auto& first = r.samples[0].values;
  EXPECT_EQ(first.count("others_cpu"), 0u);  // needs an interval
  EXPECT_DOUBLE_EQ(first.at("load_1m"), 0.42);
  EXPECT_DOUBLE_EQ(first.at("temp_c:thermal_zone0"), 45.0);
  EXPECT_DOUBLE_EQ(first.at("temp_c:hwmon0/temp1"), 50.0);
  EXPECT_DOUBLE_EQ(first.at("power_w:hwmon0/power1"), 12.5);
  EXPECT_DOUBLE_EQ(first.at("energy_j:intel-rapl:0"), 0.0);
  EXPECT_EQ(first.count("energy_j:intel-rapl:0:0"), 0u);
  const auto& v = r.samples[1].values;
  // total ticks 10000 -> 11000 (+1000); busy +400 of which rig +100.
  EXPECT_NEAR(v.at("others_cpu"), 0.30, 1e-12);
  EXPECT_NEAR(v.at("steal"), 0.05, 1e-12);
  EXPECT_NEAR(v.at("psi_cpu_some"), 25.0, 1e-9);  // 250 ms stalled in 1 s
  EXPECT_DOUBLE_EQ(v.at("cpu_freq_min_mhz"), 1500);
  EXPECT_DOUBLE_EQ(v.at("cpu_freq_mean_mhz"), 2250);
  EXPECT_DOUBLE_EQ(v.at("throttle_events"), 3);
  EXPECT_DOUBLE_EQ(v.at("energy_j:intel-rapl:0"), 5.0);
}

TEST_F(FakeTree, MissingSourcesAreUnavailableWithTheirReason) {
  Monitor m(settings_, clock_, false);
  m.start();
  const MonitorRecord r = m.finish();
  for (const auto& s : r.sources)
    if (s.kind == SourceKind::host) {
      EXPECT_EQ(s.state, SourceState::unavailable) << s.name;
      EXPECT_FALSE(s.detail.empty()) << s.name;
    }
  const std::string sys = settings_.sys_root;
  EXPECT_EQ(status(r, "powercap").detail, "no " + sys + "/class/powercap on this host");
  EXPECT_EQ(status(r, "cpufreq").detail,
            "no " + sys + "/devices/system/cpu/cpu*/cpufreq on this host");
  EXPECT_EQ(status(r, "hwmon_power").detail,
            "no " + sys + "/class/hwmon/hwmon*/power*_input on this host");
  EXPECT_NE(status(r, "host_cpu").detail.find("no " + settings_.proc_root + "/stat"),
            std::string::npos);
  EXPECT_NE(status(r, "nvml").detail.find("dlopen(librig-test-no-such-nvml.so.1)"),
            std::string::npos)
      << status(r, "nvml").detail;
  EXPECT_EQ(status(r, "device_sensors").detail, "no device");
  for (const auto& s : r.samples) EXPECT_TRUE(s.values.empty());
  const EnergyFigure e = energy_per_inference(r, 0.01, 2s);
  EXPECT_FALSE(e.available);
  EXPECT_FALSE(e.joules_per_inference.has_value());
  EXPECT_NE(e.reason.find("unavailable: no power reading"), std::string::npos) << e.reason;
  EXPECT_NE(e.reason.find("no " + sys + "/class/powercap on this host"), std::string::npos)
      << e.reason;
}

TEST_F(FakeTree, GarbageValuesAreUnavailableNotNumbers) {
  full_tree();
  write("proc/stat", "cpu  one two three\n");
  write("proc/loadavg", "high\n");
  write("sys/class/powercap/intel-rapl:0/energy_uj", "lots\n");
  write("sys/class/thermal/thermal_zone0/temp", "\n");
  write("proc/pressure/io", "nothing here\n");
  Monitor m(settings_, clock_, false);
  m.start();
  // Mid-run garbage leaves the value out of that sample only.
  write("sys/class/hwmon/hwmon0/temp1_input", "NaN\n");
  clock_.advance(1s);
  m.sample("window");
  const MonitorRecord r = m.finish();
  EXPECT_EQ(status(r, "host_cpu").state, SourceState::unavailable);
  EXPECT_NE(status(r, "host_cpu").detail.find("no 'cpu' line of numbers"), std::string::npos);
  EXPECT_NE(status(r, "loadavg").detail.find("not a load average"), std::string::npos);
  EXPECT_NE(status(r, "powercap").detail.find("not a number in "), std::string::npos)
      << status(r, "powercap").detail;
  EXPECT_NE(status(r, "powercap").detail.find("'lots'"), std::string::npos);
  EXPECT_NE(status(r, "thermal_zones").detail.find("not a number"), std::string::npos);
  EXPECT_NE(status(r, "psi_io").detail.find("no 'some ... total=' line"), std::string::npos);
  EXPECT_EQ(r.samples[0].values.count("temp_c:hwmon0/temp1"), 1u);
  EXPECT_EQ(r.samples[1].values.count("temp_c:hwmon0/temp1"), 0u);
}

TEST_F(FakeTree, UnreadableFilesSayPermissionDenied) {
  full_tree();
  const fs::path energy = root_ / "sys/class/powercap/intel-rapl:0/energy_uj";
  fs::permissions(energy, fs::perms::none);
  if (std::ifstream(energy).good()) {
    fs::permissions(energy, fs::perms::owner_all);
    // Root reads any file; a folder where a file should be is unreadable for everyone.
    fs::remove(energy);
    fs::create_directories(energy);
    Monitor m(settings_, clock_, false);
    m.start();
    const MonitorRecord r = m.finish();
    EXPECT_EQ(status(r, "powercap").state, SourceState::unavailable);
    EXPECT_EQ(status(r, "powercap").detail, "cannot read " + energy.string() + ": is a directory");
    return;
  }
  Monitor m(settings_, clock_, false);
  m.start();
  const MonitorRecord r = m.finish();
  EXPECT_EQ(status(r, "powercap").detail, "permission denied reading " + energy.string());
}

TEST_F(FakeTree, EnergyCounterWrapsAroundItsRange) {
  full_tree();
  write("sys/class/powercap/intel-rapl:0/max_energy_range_uj", "1000000\n");
  write("sys/class/powercap/intel-rapl:0/energy_uj", "900000\n");
  Monitor m(settings_, clock_, false);
  m.start();
  clock_.advance(1s);
  write("sys/class/powercap/intel-rapl:0/energy_uj", "100000\n");  // wrapped: +200000
  m.sample("window");
  clock_.advance(1s);
  write("sys/class/powercap/intel-rapl:0/energy_uj", "400000\n");  // +300000
  m.sample("window");
  const MonitorRecord r = m.finish();
  EXPECT_NEAR(r.samples[1].values.at("energy_j:intel-rapl:0"), 0.2, 1e-12);
  EXPECT_NEAR(r.samples[2].values.at("energy_j:intel-rapl:0"), 0.5, 1e-12);
  EXPECT_TRUE(r.notes.empty());
}

TEST_F(FakeTree, AResetCounterIsNeverNegativeEnergy) {
  full_tree();
  fs::remove(root_ / "sys/class/powercap/intel-rapl:0/max_energy_range_uj");
  write("sys/class/powercap/intel-rapl:0/energy_uj", "900000\n");
  Monitor m(settings_, clock_, false);
  m.start();
  clock_.advance(1s);
  write("sys/class/powercap/intel-rapl:0/energy_uj", "100000\n");  // no range: a reset
  m.sample("window");
  clock_.advance(1s);
  write("sys/class/powercap/intel-rapl:0/energy_uj", "200000\n");
  m.sample("window");
  const MonitorRecord r = m.finish();
  EXPECT_NE(status(r, "powercap").detail.find("no max_energy_range_uj"), std::string::npos);
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_NE(r.notes[0].find("a reset"), std::string::npos) << r.notes[0];
  for (size_t i = 1; i < r.samples.size(); ++i)
    EXPECT_EQ(r.samples[i].values.count("energy_j:intel-rapl:0"), 0u);
  for (const auto& s : r.samples)
    for (const auto& [k, v] : s.values)
      if (k.rfind("energy_j:", 0) == 0) {
        EXPECT_GE(v, 0) << k;
      }
}

// ---------------------------------------------------------------------------
// Energy arithmetic on hand-made records.

MonitorSample at(double t, const std::string& phase, uint32_t repeat,
                 std::map<std::string, double> values) {
  MonitorSample s;
  s.t_s = t;
  s.phase = phase;
  s.event = phase == "idle" ? "idle" : "window";
  s.repeat = repeat;
  s.values = std::move(values);
  return s;
}

TEST(Energy, CounterDeltaMinusIdleTimesTimePerFrame) {
  MonitorRecord r;
  r.enabled = true;
  // Idle: 10 J over 5 s = 2 W. Measured: two repeats, 30 J in 10 s and 16 J in 4 s: 46/14 W.
  r.samples = {at(0, "idle", 0, {{"energy_j:intel-rapl:0", 0}}),
               at(5, "idle", 0, {{"energy_j:intel-rapl:0", 10}}),
               at(6, "warmup", 0, {{"energy_j:intel-rapl:0", 12}}),
               at(7, "measure", 1, {{"energy_j:intel-rapl:0", 15}}),
               at(12, "measure", 1, {{"energy_j:intel-rapl:0", 30}}),
               at(17, "measure", 1, {{"energy_j:intel-rapl:0", 45}}),
               at(20, "measure", 2, {{"energy_j:intel-rapl:0", 50}}),
               at(24, "measure", 2, {{"energy_j:intel-rapl:0", 66}})};
  const EnergyFigure e = energy_per_inference(r, 0.004, 5s);
  ASSERT_TRUE(e.available) << e.reason;
  EXPECT_EQ(e.sensor, "powercap:intel-rapl:0");
  EXPECT_EQ(e.method, "counter delta");
  EXPECT_NEAR(*e.mean_power_w, 46.0 / 14.0, 1e-12);
  EXPECT_NEAR(*e.idle_power_w, 2.0, 1e-12);
  EXPECT_TRUE(e.idle_subtracted);
  EXPECT_DOUBLE_EQ(e.idle_s, 5.0);
  EXPECT_NEAR(*e.sampling_period_s, 14.0 / 3.0, 1e-12);
  EXPECT_NEAR(*e.joules_per_inference, (46.0 / 14.0 - 2.0) * 0.004, 1e-12);
}

TEST(Energy, SampledMeanPrefersTheDevicesOwnSensor) {
  MonitorRecord r;
  r.enabled = true;
  r.samples = {at(0, "idle", 0, {{"device:power_w", 1.0}, {"power_w:hwmon0/power1", 90}}),
               at(1, "idle", 0, {{"device:power_w", 2.0}, {"power_w:hwmon0/power1", 90}}),
               at(2, "measure", 1, {{"device:power_w", 4.0}, {"power_w:hwmon0/power1", 99}}),
               at(3, "measure", 1, {{"device:power_w", 6.0}, {"power_w:hwmon0/power1", 99}})};
  const EnergyFigure e = energy_per_inference(r, 0.5, 1s);
  ASSERT_TRUE(e.available);
  EXPECT_EQ(e.sensor, "device:power_w");
  EXPECT_EQ(e.method, "sampled mean");
  EXPECT_DOUBLE_EQ(*e.mean_power_w, 5.0);
  EXPECT_DOUBLE_EQ(*e.idle_power_w, 1.5);
  EXPECT_DOUBLE_EQ(*e.joules_per_inference, 3.5 * 0.5);
}

TEST(Energy, BelowIdleOrWithoutARateGivesNoFigure) {
  MonitorRecord r;
  r.enabled = true;
  r.samples = {at(0, "idle", 0, {{"device:power_w", 5}}), at(1, "idle", 0, {{"device:power_w", 5}}),
               at(2, "measure", 1, {{"device:power_w", 4}}),
               at(3, "measure", 1, {{"device:power_w", 4}})};
  EnergyFigure e = energy_per_inference(r, 0.1, 1s);
  EXPECT_FALSE(e.joules_per_inference.has_value());
  EXPECT_NE(e.reason.find("below idle"), std::string::npos) << e.reason;
  e = energy_per_inference(r, std::nullopt, 1s);
  EXPECT_FALSE(e.joules_per_inference.has_value());
  EXPECT_NE(e.reason.find("no rate"), std::string::npos);
  r.enabled = false;
  r.samples.clear();
  e = energy_per_inference(r, 0.1, 1s);
  EXPECT_FALSE(e.available);
  EXPECT_NE(e.reason.find("--no-monitor"), std::string::npos);
}

// ---------------------------------------------------------------------------
// On the sim device: windows, sensors and warnings through the engine.

struct Counting final : EngineObserver {
  int windows = 0, phases = 0;
  void phase_begin(EnginePhase, Nanos) override { ++phases; }
  void window_closed(const WindowFigure&, Nanos) override { ++windows; }
};

// A sim whose sensors are renamed at every read: 1000 new names each time
// (a hostile server's read_sensors).
class RenamingSensors final : public Device {
 public:
  explicit RenamingSensors(std::unique_ptr<Device> sim) : sim_(std::move(sim)) {}
  DeviceInfo info() const override { return sim_->info(); }
  Clock& clock() override { return sim_->clock(); }
  Result<LoadTimings> load(const ModelSource& source) override { return sim_->load(source); }
  const ModelInfo& model_info() const override { return sim_->model_info(); }
  Result<BindingId> bind(const Bindings& buffers) override { return sim_->bind(buffers); }
  Result<InferenceTimings> run(BindingId binding) override { return sim_->run(binding); }
  Result<void> submit(BindingId binding, uint64_t tag) override {
    return sim_->submit(binding, tag);
  }
  Result<Completion> wait_next(Nanos timeout) override { return sim_->wait_next(timeout); }
  uint32_t in_flight() const override { return sim_->in_flight(); }
  Result<DurationRun> run_for_duration(BindingId binding, Nanos duration, Nanos sleep) override {
    return sim_->run_for_duration(binding, duration, sleep);
  }
  ByteCounters bytes() const override { return sim_->bytes(); }
  std::map<std::string, double> read_sensors() override {
    std::map<std::string, double> out;
    for (int i = 0; i < 1000; ++i) out["s" + std::to_string(reads_ * 1000 + i)] = i;
    ++reads_;
    return out;
  }

 private:
  std::unique_ptr<Device> sim_;
  uint64_t reads_ = 0;
};

// Issue 37, item 3: the sensors a run keeps are bounded (the first 512
// names), whatever the device names; the dropped readings are counted.
TEST(MonitorOnSim, TheSensorsOfARunAreBoundedAndTheDroppedCounted) {
  auto sim = open_device("sim:compute=1ms");
  ASSERT_TRUE(sim.has_value()) << sim.error().to_string();
  RenamingSensors device(std::move(*sim));
  Monitor monitor(MonitorSettings{}, device);
  monitor.start();
  for (int i = 0; i < 10; ++i) monitor.sample("window");
  const MonitorRecord r = monitor.finish();
  std::set<std::string> names;
  for (const auto& s : r.samples)
    for (const auto& [k, v] : s.values)
      if (k.rfind("device:", 0) == 0) names.insert(k);
  EXPECT_EQ(names.size(), 512u);
  uint64_t reads = r.samples.size();  // one read per sample (the probe's is not kept)
  const std::string dropped = std::to_string(reads * 1000 - 512) + " readings of others";
  bool said = false;
  for (const auto& n : r.notes) said = said || n.find(dropped) != std::string::npos;
  EXPECT_TRUE(said) << "no note of the " << dropped;
}

TEST(MonitorOnSim, SamplesAlignWithWindowsAndHostSourcesAreNotSampled) {
  auto device = open_device("sim:compute=1ms,temp=40:50:60,sensor_step=500ms,warn=low_power_mode");
  ASSERT_TRUE(device.has_value()) << device.error().to_string();
  TransportSpec spec;
  spec.frame = {8, 8};
  auto bytes = build_transport_model(spec);
  ASSERT_TRUE(bytes.has_value());
  ModelSource src;
  src.bytes = *bytes;
  src.name = "t8";
  MonitorSettings settings;
  Monitor monitor(settings, **device);
  Counting counting;
  FanOutObserver fan({&monitor, nullptr, &counting});
  monitor.start();
  auto cold = cold_start(**device, src, 4, 1, &fan);
  ASSERT_TRUE(cold.has_value());
  SteadySettings ss;
  ss.depth = 4;
  ss.min_duration = 2s;
  ss.windows = 8;
  ss.observer = &fan;
  const SteadyRepeat rep = measure_steady(**device, cold->workspace, ss);
  const MonitorRecord r = monitor.finish();
  EXPECT_FALSE(r.host_sampled);
  EXPECT_NE(r.host_note.find("virtual clock"), std::string::npos);
  for (const auto& s : r.sources)
    EXPECT_EQ(s.state == SourceState::not_sampled, s.kind == SourceKind::host) << s.name;
  size_t windows = 0;
  for (const auto& s : r.samples)
    if (s.event == "window") {
      ++windows;
      EXPECT_EQ(s.phase, "measure");
      EXPECT_EQ(s.repeat, 1u);
      EXPECT_EQ(s.window, windows);
      EXPECT_EQ(s.values.count("device:temperature_c"), 1u);
      EXPECT_EQ(s.values.count("others_cpu"), 0u);
    }
  EXPECT_EQ(windows, rep.windows.size());
  EXPECT_EQ(counting.windows, static_cast<int>(rep.windows.size()));  // the fan-out told both
  EXPECT_GT(counting.phases, 0);
  EXPECT_DOUBLE_EQ(r.samples.back().values.at("device:temperature_c"), 60);
  ASSERT_EQ(r.device_warnings.size(), 1u);
  EXPECT_EQ(r.device_warnings[0].when, "after load");
  EXPECT_EQ(r.device_warnings[0].text, "low_power_mode");
}

TEST(MonitorOnSim, ScriptedSourcesAreSampledOnVirtualClocksAndOffMeansNothing) {
  auto device = open_device("sim:compute=1ms");
  ASSERT_TRUE(device.has_value());
  MonitorSettings settings;
  settings.extra_sources = [] {
    std::vector<std::unique_ptr<MonitorSource>> v;
    v.push_back(std::make_unique<ScriptedSource>(
        "script",
        std::vector<std::map<std::string, double>>{{{"others_cpu", 0.1}}, {{"others_cpu", 0.7}}}));
    return v;
  };
  Monitor on(settings, **device);
  on.start();
  on.sample("window");
  on.sample("window");
  const MonitorRecord r = on.finish();
  ASSERT_EQ(r.samples.size(), 4u);
  EXPECT_DOUBLE_EQ(r.samples[0].values.at("others_cpu"), 0.1);
  EXPECT_DOUBLE_EQ(r.samples[3].values.at("others_cpu"), 0.7);  // the last repeats
  EXPECT_EQ(r.source("script")->kind, SourceKind::scripted);

  settings.enabled = false;
  Monitor off(settings, **device);
  off.start();
  off.sample("window");
  const MonitorRecord none = off.finish();
  EXPECT_FALSE(none.enabled);
  EXPECT_TRUE(none.samples.empty());
  EXPECT_TRUE(none.sources.empty());
}

}  // namespace
}  // namespace rig

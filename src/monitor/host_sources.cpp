// The monitor's sources read from /proc and /sys (under settings' roots), and
// the device's own sensors and link counters. Every read is checked: a
// missing file, a permission error or a value that is not a number makes the
// source unavailable with that reason at probe time, or leaves the value out
// of one sample later.
//
// One file on purpose: every source is a small MonitorSource over the same
// checked readers (read_number, list_dir, cpu_dirs) and the same status
// wording; host_sources() at the end lists them in one place.
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <set>
#include <sstream>

#include "monitor/sources.hpp"

namespace rig::monitor {
namespace fs = std::filesystem;

Read read_text(const std::string& path) {
  Read r;
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    r.error = "cannot read " + path + ": is a directory";
    return r;
  }
  errno = 0;
  std::ifstream f(path);
  if (!f) {
    const int e = errno;
    if (e == EACCES || e == EPERM)
      r.error = "permission denied reading " + path;
    else if (e == ENOENT)
      r.error = "no " + path;
    else
      r.error = "cannot read " + path + (e ? std::string(": ") + std::strerror(e) : "");
    return r;
  }
  std::ostringstream s;
  s << f.rdbuf();
  if (f.bad()) {
    r.error = "cannot read " + path;
    return r;
  }
  r.text = s.str();
  r.ok = true;
  return r;
}

std::optional<double> parse_number_text(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
    text.remove_suffix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
    text.remove_prefix(1);
  if (text.empty()) return std::nullopt;
  std::string s(text);
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(s.c_str(), &end);
  if (errno != 0 || end != s.c_str() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

Value read_number(const std::string& path) {
  Value v;
  const Read r = read_text(path);
  if (!r.ok) {
    v.error = r.error;
    return v;
  }
  v.value = parse_number_text(r.text);
  if (!v.value) {
    std::string shown = r.text.substr(0, 40);
    while (!shown.empty() && (shown.back() == '\n' || shown.back() == ' ')) shown.pop_back();
    v.error = "not a number in " + path + ": '" + shown + "'";
  }
  return v;
}

std::vector<std::string> list_dir(const std::string& path, std::string_view prefix) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(path, ec)) {
    const std::string n = e.path().filename().string();
    if (n.rfind(prefix, 0) == 0) names.push_back(n);
  }
  std::sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) {
    return a.size() != b.size() ? a.size() < b.size() : a < b;
  });
  return names;
}

bool dir_exists(const std::string& path) {
  std::error_code ec;
  return fs::is_directory(path, ec);
}

namespace {

SourceStatus status(std::string name, SourceKind kind, SourceState state, std::string detail) {
  SourceStatus s;
  s.name = std::move(name);
  s.kind = kind;
  s.state = state;
  s.detail = std::move(detail);
  return s;
}

// ---------------------------------------------------------------------------
// host_cpu: others' CPU share and steal, from /proc/stat and /proc/self/stat.

struct CpuTimes {
  double total = 0, busy = 0, steal = 0;
};

std::optional<CpuTimes> parse_proc_stat(const std::string& text) {
  std::istringstream in(text);
  std::string label;
  in >> label;
  if (label != "cpu") return std::nullopt;
  double v[8] = {};
  for (double& x : v)
    if (!(in >> x) || x < 0) return std::nullopt;
  CpuTimes t;
  for (double x : v) t.total += x;        // user nice system idle iowait irq softirq steal
  t.busy = t.total - v[3] - v[4] - v[7];  // steal is counted apart
  t.steal = v[7];
  return t;
}

// utime + stime of this process (fields 14 and 15), after the parenthesised comm.
std::optional<double> parse_self_stat(const std::string& text) {
  const auto close = text.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream in(text.substr(close + 1));
  std::string field;
  double utime = 0, stime = 0;
  // fields 3..13, then 14 utime, 15 stime
  for (int i = 3; i <= 13; ++i)
    if (!(in >> field)) return std::nullopt;
  if (!(in >> utime >> stime) || utime < 0 || stime < 0) return std::nullopt;
  return utime + stime;
}

class HostCpu final : public MonitorSource {
 public:
  explicit HostCpu(std::string proc) : proc_(std::move(proc)) {}
  std::string name() const override { return "host_cpu"; }
  SourceKind kind() const override { return SourceKind::host; }
  SourceStatus probe() override {
    std::string why;
    if (!read(why)) return status(name(), kind(), SourceState::unavailable, why);
    return status(name(), kind(), SourceState::available,
                  proc_ + "/stat and " + proc_ + "/self/stat: others' CPU share and steal");
  }
  void sample(Nanos, std::map<std::string, double>& out, std::vector<std::string>&) override {
    std::string why;
    auto now = read(why);
    if (!now) return;
    if (prev_) {
      const double dt = now->first.total - prev_->first.total;
      if (dt > 0) {
        const double others = (now->first.busy - prev_->first.busy) - (now->second - prev_->second);
        out["others_cpu"] = std::clamp(others / dt, 0.0, 1.0);
        out["steal"] = std::clamp((now->first.steal - prev_->first.steal) / dt, 0.0, 1.0);
      }
    }
    prev_ = now;
  }

 private:
  std::optional<std::pair<CpuTimes, double>> read(std::string& why) {
    const Read stat = read_text(proc_ + "/stat");
    if (!stat.ok) {
      why = stat.error;
      return std::nullopt;
    }
    auto cpu = parse_proc_stat(stat.text);
    if (!cpu) {
      why = "no 'cpu' line of numbers in " + proc_ + "/stat";
      return std::nullopt;
    }
    const Read self = read_text(proc_ + "/self/stat");
    if (!self.ok) {
      why = self.error;
      return std::nullopt;
    }
    auto mine = parse_self_stat(self.text);
    if (!mine) {
      why = "no utime/stime fields in " + proc_ + "/self/stat";
      return std::nullopt;
    }
    return std::pair{*cpu, *mine};
  }
  std::string proc_;
  std::optional<std::pair<CpuTimes, double>> prev_;
};

// ---------------------------------------------------------------------------
// PSI: the share of the interval some task stalled, from "some ... total=US".

std::optional<double> parse_psi_some_total(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("some ", 0) != 0) continue;
    const auto pos = line.find("total=");
    if (pos == std::string::npos) return std::nullopt;
    auto v = parse_number_text(std::string_view(line).substr(pos + 6));
    if (!v || *v < 0) return std::nullopt;
    return v;
  }
  return std::nullopt;
}

class Psi final : public MonitorSource {
 public:
  Psi(std::string proc, std::string resource)
      : path_(proc + "/pressure/" + resource), resource_(std::move(resource)) {}
  std::string name() const override { return "psi_" + resource_; }
  SourceKind kind() const override { return SourceKind::host; }
  SourceStatus probe() override {
    const Read r = read_text(path_);
    if (!r.ok)
      return status(name(), kind(), SourceState::unavailable,
                    r.error + " (no pressure stall information on this host)");
    if (!parse_psi_some_total(r.text))
      return status(name(), kind(), SourceState::unavailable,
                    "no 'some ... total=' line in " + path_);
    return status(name(), kind(), SourceState::available, path_);
  }
  void sample(Nanos at, std::map<std::string, double>& out, std::vector<std::string>&) override {
    const Read r = read_text(path_);
    if (!r.ok) return;
    auto total = parse_psi_some_total(r.text);
    if (!total) return;
    if (prev_ && at > prev_->first && *total >= prev_->second) {
      const double us = static_cast<double>((at - prev_->first).count()) / 1e3;
      out["psi_" + resource_ + "_some"] =
          std::clamp((*total - prev_->second) / us * 100, 0.0, 100.0);
    }
    prev_ = std::pair{at, *total};
  }

 private:
  std::string path_, resource_;
  std::optional<std::pair<Nanos, double>> prev_;
};

// ---------------------------------------------------------------------------
// loadavg

class LoadAvg final : public MonitorSource {
 public:
  explicit LoadAvg(std::string proc) : path_(proc + "/loadavg") {}
  std::string name() const override { return "loadavg"; }
  SourceKind kind() const override { return SourceKind::host; }
  SourceStatus probe() override {
    std::string why;
    if (!read(why)) return status(name(), kind(), SourceState::unavailable, why);
    return status(name(), kind(), SourceState::available, path_);
  }
  void sample(Nanos, std::map<std::string, double>& out, std::vector<std::string>&) override {
    std::string why;
    if (auto v = read(why)) out["load_1m"] = *v;
  }

 private:
  std::optional<double> read(std::string& why) {
    const Read r = read_text(path_);
    if (!r.ok) {
      why = r.error;
      return std::nullopt;
    }
    auto v = parse_number_text(std::string_view(r.text).substr(0, r.text.find(' ')));
    if (!v || *v < 0) {
      why = "not a load average in " + path_;
      return std::nullopt;
    }
    return v;
  }
  std::string path_;
};

// ---------------------------------------------------------------------------
// Per-CPU files: cpufreq and thermal_throttle.

std::vector<std::string> cpu_dirs(const std::string& sys) {
  std::vector<std::string> out;
  const std::string base = sys + "/devices/system/cpu";
  for (const auto& n : list_dir(base, "cpu"))
    if (n.size() > 3 && std::all_of(n.begin() + 3, n.end(), [](char c) { return std::isdigit(c); }))
      out.push_back(base + "/" + n);
  return out;
}

// The files under each CPU's directory (`relative` paths) that read as a
// number `accept` takes, or, when none does, why: the first error other than
// a plain absence, else "no <what> on this host".
struct CpuFiles {
  std::vector<std::string> files;
  std::string why_none;
};

template <class Accept>
CpuFiles find_cpu_files(const std::string& sys, std::initializer_list<const char*> relative,
                        const std::string& what, Accept accept) {
  CpuFiles out;
  std::string first_error;
  for (const auto& d : cpu_dirs(sys))
    for (const char* f : relative) {
      const std::string p = d + "/" + f;
      const Value v = read_number(p);
      if (v.value && accept(*v.value))
        out.files.push_back(p);
      else if (first_error.empty() && v.error.rfind("no ", 0) != 0)
        first_error = v.error;
    }
  if (out.files.empty())
    out.why_none = !first_error.empty()
                       ? first_error
                       : "no " + sys + "/devices/system/cpu/cpu*/" + what + " on this host";
  return out;
}

class CpuFreq final : public MonitorSource {
 public:
  explicit CpuFreq(std::string sys) : sys_(std::move(sys)) {}
  std::string name() const override { return "cpufreq"; }
  SourceKind kind() const override { return SourceKind::host; }
  SourceStatus probe() override {
    CpuFiles found = find_cpu_files(sys_, {"cpufreq/scaling_cur_freq"}, "cpufreq",
                                    [](double khz) { return khz > 0; });
    files_ = std::move(found.files);
    if (files_.empty()) return status(name(), kind(), SourceState::unavailable, found.why_none);
    return status(name(), kind(), SourceState::available,
                  std::to_string(files_.size()) + " CPUs' scaling_cur_freq");
  }
  void sample(Nanos, std::map<std::string, double>& out, std::vector<std::string>&) override {
    double lo = 0, sum = 0;
    size_t n = 0;
    for (const auto& p : files_) {
      const Value v = read_number(p);
      if (!v.value || *v.value <= 0) continue;
      const double mhz = *v.value / 1e3;
      lo = n == 0 ? mhz : std::min(lo, mhz);
      sum += mhz;
      ++n;
    }
    if (n == 0) return;
    out["cpu_freq_min_mhz"] = lo;
    out["cpu_freq_mean_mhz"] = sum / static_cast<double>(n);
  }

 private:
  std::string sys_;
  std::vector<std::string> files_;
};

class ThermalThrottle final : public MonitorSource {
 public:
  explicit ThermalThrottle(std::string sys) : sys_(std::move(sys)) {}
  std::string name() const override { return "thermal_throttle"; }
  SourceKind kind() const override { return SourceKind::host; }
  SourceStatus probe() override {
    CpuFiles found = find_cpu_files(
        sys_, {"thermal_throttle/core_throttle_count", "thermal_throttle/package_throttle_count"},
        "thermal_throttle", [](double count) { return count >= 0; });
    files_ = std::move(found.files);
    if (files_.empty()) return status(name(), kind(), SourceState::unavailable, found.why_none);
    return status(name(), kind(), SourceState::available,
                  std::to_string(files_.size()) + " throttle counters");
  }
  void sample(Nanos, std::map<std::string, double>& out, std::vector<std::string>&) override {
    double sum = 0;
    for (const auto& p : files_) {
      const Value v = read_number(p);
      if (!v.value) return;  // a partial sum would read as a drop
      sum += *v.value;
    }
    out["throttle_events"] = sum;
  }

 private:
  std::string sys_;
  std::vector<std::string> files_;
};

// ---------------------------------------------------------------------------
// Files of one value each, under a class folder: thermal zones and hwmon.

struct Series {
  std::string name;  // "temp_c:thermal_zone0"
  std::string path;
  double scale = 1;  // value x scale
};

class FileSeries final : public MonitorSource {
 public:
  FileSeries(std::string name, std::vector<Series> candidates, std::string absent)
      : name_(std::move(name)), candidates_(std::move(candidates)), absent_(std::move(absent)) {}
  std::string name() const override { return name_; }
  SourceKind kind() const override { return SourceKind::host; }
  SourceStatus probe() override {
    std::string first_error;
    for (const auto& c : candidates_) {
      const Value v = read_number(c.path);
      if (v.value)
        series_.push_back(c);
      else if (first_error.empty())
        first_error = v.error;
    }
    if (series_.empty())
      return status(name_, kind(), SourceState::unavailable,
                    !first_error.empty() ? first_error : absent_);
    std::string names;
    for (const auto& s : series_) names += (names.empty() ? "" : ", ") + s.name;
    return status(name_, kind(), SourceState::available, names);
  }
  void sample(Nanos, std::map<std::string, double>& out, std::vector<std::string>&) override {
    for (const auto& s : series_) {
      const Value v = read_number(s.path);
      if (v.value) out[s.name] = *v.value * s.scale;
    }
  }

 private:
  std::string name_;
  std::vector<Series> candidates_, series_;
  std::string absent_;
};

std::vector<Series> thermal_zones(const std::string& sys) {
  std::vector<Series> out;
  const std::string base = sys + "/class/thermal";
  for (const auto& z : list_dir(base, "thermal_zone"))
    out.push_back({"temp_c:" + z, base + "/" + z + "/temp", 1e-3});
  return out;
}

std::vector<Series> hwmon_files(const std::string& sys, std::string_view prefix,
                                std::string_view suffix, std::string_view series, double scale) {
  std::vector<Series> out;
  const std::string base = sys + "/class/hwmon";
  for (const auto& h : list_dir(base, "hwmon"))
    for (const auto& f : list_dir(base + "/" + h, prefix)) {
      if (f.size() <= suffix.size() || f.compare(f.size() - suffix.size(), suffix.size(), suffix))
        continue;
      const std::string stem = f.substr(0, f.size() - suffix.size());
      out.push_back({std::string(series) + h + "/" + stem, base + "/" + h + "/" + f, scale});
    }
  return out;
}

// ---------------------------------------------------------------------------
// powercap (RAPL): energy counters with wrap-around.

class Powercap final : public MonitorSource {
 public:
  explicit Powercap(std::string sys) : base_(sys + "/class/powercap") {}
  std::string name() const override { return "powercap"; }
  SourceKind kind() const override { return SourceKind::host; }
  SourceStatus probe() override {
    if (!dir_exists(base_))
      return status(name(), kind(), SourceState::unavailable, "no " + base_ + " on this host");
    std::string first_error;
    for (const auto& z : list_dir(base_, "")) {
      // Top-level zones only ("intel-rapl:0", not its sub-zone "intel-rapl:0:0"):
      // sub-zones are already counted in their package.
      if (std::count(z.begin(), z.end(), ':') != 1) continue;
      const std::string p = base_ + "/" + z + "/energy_uj";
      const Value v = read_number(p);
      if (!v.value || *v.value < 0) {
        if (first_error.empty()) first_error = v.value ? "negative value in " + p : v.error;
        continue;
      }
      Zone zone;
      zone.name = z;
      zone.path = p;
      const Value range = read_number(base_ + "/" + z + "/max_energy_range_uj");
      if (range.value && *range.value > 0) zone.range = *range.value;
      zones_.push_back(zone);
    }
    if (zones_.empty())
      return status(name(), kind(), SourceState::unavailable,
                    !first_error.empty() ? first_error : "no energy_uj zone under " + base_);
    std::string names;
    for (const auto& z : zones_)
      names += (names.empty() ? "" : ", ") + z.name + (z.range ? "" : " (no max_energy_range_uj)");
    return status(name(), kind(), SourceState::available, names);
  }
  void sample(Nanos, std::map<std::string, double>& out, std::vector<std::string>& notes) override {
    for (auto& z : zones_) {
      if (z.broken) continue;
      const Value v = read_number(z.path);
      if (!v.value || *v.value < 0) continue;
      const double now = *v.value;
      if (z.last) {
        double delta = now - *z.last;
        if (delta < 0) {
          // Wrapped: the counter runs modulo max_energy_range_uj. Without a
          // range (or a value beyond it) a drop is a reset, never energy.
          if (z.range && *z.last <= *z.range && now <= *z.range) {
            delta = *z.range - *z.last + now;
          } else {
            z.broken = true;
            notes.push_back("powercap " + z.name + ": energy counter went back from " +
                            std::to_string(static_cast<uint64_t>(*z.last)) + " to " +
                            std::to_string(static_cast<uint64_t>(now)) +
                            " uJ with no known range (a reset); its energy is not used");
            continue;
          }
        }
        z.total_uj += delta;
      }
      z.last = now;
      out["energy_j:" + z.name] = z.total_uj / 1e6;
    }
  }

 private:
  struct Zone {
    std::string name, path;
    std::optional<double> range, last;
    double total_uj = 0;
    bool broken = false;
  };
  std::string base_;
  std::vector<Zone> zones_;
};

// ---------------------------------------------------------------------------
// The device's own sensors.

class DeviceSensors final : public MonitorSource {
 public:
  explicit DeviceSensors(Device* device) : device_(device) {}
  std::string name() const override { return "device_sensors"; }
  SourceKind kind() const override { return SourceKind::device; }
  SourceStatus probe() override {
    if (!device_) return status(name(), kind(), SourceState::unavailable, "no device");
    const auto readings = device_->read_sensors();
    if (readings.empty())
      return status(name(), kind(), SourceState::unavailable, "the device reports no sensors");
    std::string names;
    for (const auto& [k, v] : readings) names += (names.empty() ? "" : ", ") + k;
    return status(name(), kind(), SourceState::available, names);
  }
  // At most kMaxNames distinct sensors over the run (the first ones seen):
  // a device that names new ones in every reply (a hostile server) cannot
  // grow each sample, and so the result, without bound. What is dropped is
  // counted in one note.
  void sample(Nanos, std::map<std::string, double>& out, std::vector<std::string>& notes) override {
    uint64_t dropped = 0;
    for (const auto& [k, v] : device_->read_sensors()) {
      if (!std::isfinite(v)) continue;
      if (!names_.contains(k)) {
        if (names_.size() >= kMaxNames) {
          ++dropped;
          continue;
        }
        names_.insert(k);
      }
      out["device:" + k] = v;
    }
    if (dropped == 0) return;
    dropped_ += dropped;
    const std::string note = std::string(kDroppedNote) + std::to_string(kMaxNames) +
                             " sensors a run keeps: " + std::to_string(dropped_) +
                             " readings of others were dropped";
    for (auto& n : notes)
      if (n.rfind(kDroppedNote, 0) == 0) {
        n = note;
        return;
      }
    notes.push_back(note);
  }

 private:
  static constexpr size_t kMaxNames = 512;
  static constexpr const char* kDroppedNote = "device_sensors: the device named more than the ";
  Device* device_;
  std::set<std::string> names_;  // the sensors kept, at most kMaxNames
  uint64_t dropped_ = 0;         // readings of other sensors, over the run
};

// ---------------------------------------------------------------------------
// link_traffic: bytes on the network interface beyond rig's own link bytes.
//
// On a physical interface rig's bytes are counted once: what this host sent
// (tx) and received (rx). On lo both ends of the connection are this host:
// each byte is counted when the client sends it and again when the server
// receives it (lo's tx and rx), and the same for the replies, so rig's own
// bytes appear twice; every packet also carries its framing (Ethernet, IP
// and TCP headers, which lo counts), which rig's byte counters do not hold.
// A unix socket crosses no interface: what shares it is the server's other
// connections, which the server counts (server.other_link_bytes, read by
// the device_sensors source; the shared_link rule takes it from there).

// The most framing one TCP segment carries on lo: Ethernet 14, IPv6 40, TCP
// with timestamps 32 bytes. Taken off every lo packet, so that rig's own
// small frames (lone frames, pings) do not read as other traffic; other
// traffic is then counted without its headers.
constexpr double kLoopbackFramingBytes = 86;

enum class LinkKind { unix_socket, loopback, network };

LinkKind link_kind(const std::string& spec) {
  if (spec.rfind("unix:", 0) == 0) return LinkKind::unix_socket;
  const auto host_start = spec.find("://");
  const std::string host = host_start == std::string::npos ? spec : spec.substr(host_start + 3);
  if (host.rfind("127.", 0) == 0 || host.rfind("localhost", 0) == 0 || host.rfind("[::1]", 0) == 0)
    return LinkKind::loopback;
  return LinkKind::network;
}

struct InterfaceCount {
  double bytes = 0;    // rx + tx
  double packets = 0;  // rx + tx
};

// lo alone (loopback), or every other interface summed (network).
std::optional<InterfaceCount> interface_count(const std::string& text, bool loopback) {
  std::istringstream in(text);
  std::string line;
  InterfaceCount total;
  bool any = false;
  while (std::getline(in, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string name = line.substr(0, colon);
    name.erase(0, name.find_first_not_of(' '));
    if ((name == "lo") != loopback) continue;
    std::istringstream f(line.substr(colon + 1));
    double v[10] = {};
    for (double& x : v)
      if (!(f >> x) || x < 0) return std::nullopt;
    total.bytes += v[0] + v[8];    // rx bytes, tx bytes
    total.packets += v[1] + v[9];  // rx packets, tx packets
    any = true;
  }
  if (!any) return std::nullopt;
  return total;
}

class LinkTraffic final : public MonitorSource {
 public:
  LinkTraffic(std::string proc, Device* device) : path_(proc + "/net/dev"), device_(device) {}
  std::string name() const override { return "link_traffic"; }
  SourceKind kind() const override { return SourceKind::host; }
  SourceStatus probe() override {
    if (!device_) return status(name(), kind(), SourceState::unavailable, "no device");
    const DeviceInfo info = device_->info();
    if (info.in_process)
      return status(name(), kind(), SourceState::unavailable,
                    "in-process device: no link to share");
    kind_ = link_kind(info.spec);
    if (kind_ == LinkKind::unix_socket)
      return status(name(), kind(), SourceState::available,
                    "unix socket: crosses no interface; the other traffic is the server's bytes "
                    "on its other connections (server.other_link_bytes)");
    const Read r = read_text(path_);
    if (!r.ok) return status(name(), kind(), SourceState::unavailable, r.error);
    const bool lo = kind_ == LinkKind::loopback;
    if (!interface_count(r.text, lo))
      return status(name(), kind(), SourceState::unavailable,
                    "no byte counters for " + std::string(lo ? "lo" : "a non-loopback interface") +
                        " in " + path_);
    return status(name(), kind(), SourceState::available,
                  path_ + ": " +
                      (lo ? std::string("lo, minus rig's own link bytes counted at both ends "
                                        "and " +
                                        std::to_string(static_cast<int>(kLoopbackFramingBytes)) +
                                        " bytes of framing per packet")
                          : std::string("every non-loopback interface, minus rig's own link "
                                        "bytes")));
  }
  void sample(Nanos, std::map<std::string, double>& out, std::vector<std::string>&) override {
    const ByteCounters b = device_->bytes();
    const double rig = static_cast<double>(b.link_in + b.link_out);
    if (kind_ != LinkKind::unix_socket) {
      const Read r = read_text(path_);
      if (!r.ok) return;
      const bool lo = kind_ == LinkKind::loopback;
      auto now = interface_count(r.text, lo);
      if (!now) return;
      if (last_) {
        const double bytes = now->bytes - last_->first.bytes;
        const double packets = now->packets - last_->first.packets;
        const double rig_delta = rig - last_->second;
        const double mine = lo ? 2 * rig_delta + packets * kLoopbackFramingBytes : rig_delta;
        if (bytes >= 0) other_ += std::max(0.0, bytes - mine);
      }
      last_ = std::pair{*now, rig};
      out["link_other_bytes"] = other_;
    }
    out["link_rig_bytes"] = rig - first_rig_.value_or(rig);
    if (!first_rig_) first_rig_ = rig;
  }

 private:
  std::string path_;
  LinkKind kind_ = LinkKind::network;
  Device* device_;
  std::optional<std::pair<InterfaceCount, double>> last_;
  std::optional<double> first_rig_;
  double other_ = 0;
};

}  // namespace

std::vector<std::unique_ptr<MonitorSource>> host_sources(const MonitorSettings& s, Device* device) {
  std::vector<std::unique_ptr<MonitorSource>> v;
  const std::string& proc = s.proc_root;
  const std::string& sys = s.sys_root;
  v.push_back(std::make_unique<HostCpu>(proc));
  v.push_back(std::make_unique<Psi>(proc, "cpu"));
  v.push_back(std::make_unique<Psi>(proc, "io"));
  v.push_back(std::make_unique<LoadAvg>(proc));
  v.push_back(std::make_unique<CpuFreq>(sys));
  v.push_back(std::make_unique<ThermalThrottle>(sys));
  v.push_back(
      std::make_unique<FileSeries>("thermal_zones", thermal_zones(sys),
                                   "no " + sys + "/class/thermal/thermal_zone* on this host"));
  v.push_back(std::make_unique<FileSeries>(
      "hwmon_temp", hwmon_files(sys, "temp", "_input", "temp_c:", 1e-3),
      "no " + sys + "/class/hwmon/hwmon*/temp*_input on this host"));
  v.push_back(std::make_unique<FileSeries>(
      "hwmon_power", hwmon_files(sys, "power", "_input", "power_w:", 1e-6),
      "no " + sys + "/class/hwmon/hwmon*/power*_input on this host"));
  v.push_back(std::make_unique<Powercap>(sys));
  v.push_back(nvml_source(s.nvml_library));
  v.push_back(std::make_unique<DeviceSensors>(device));
  v.push_back(std::make_unique<LinkTraffic>(proc, device));
  return v;
}

}  // namespace rig::monitor

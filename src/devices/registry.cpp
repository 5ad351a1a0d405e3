// The device registry: the table of device kinds (rig/device_registry.hpp),
// the one place that parses spec text into a DeviceSpec, and the one that
// maps a DeviceSpec to a device. Each row's parameters are the ones its
// device's own parser accepts (tests/devices/registry_test.cpp opens every
// built kind with each of them).
#include "rig/device_registry.hpp"

#include <algorithm>
#include <cstdint>
#include <string>

#include "devices/cpu/cpu_device.hpp"
#include "devices/cpu/cpu_runtime.hpp"
#ifdef RIG_WITH_HAILO_DEVICE
#include "devices/hailo/hailo_device.hpp"
#endif
#include "devices/null/null_device.hpp"
#include "devices/remote/remote_device.hpp"
#include "devices/sim/sim_device.hpp"
#include "rig/units.hpp"

// How the optional parts were configured (src/devices/CMakeLists.txt): AUTO,
// ON or OFF.
#ifndef RIG_HAILO_SETTING
#define RIG_HAILO_SETTING "AUTO"
#endif
#ifndef RIG_ONNXRUNTIME_SETTING
#define RIG_ONNXRUNTIME_SETTING "AUTO"
#endif

namespace rig {
namespace {

constexpr std::string_view kHailoHowTo =
    "install HailoRT >= 5.1.1 and rebuild with -DRIG_WITH_HAILO=ON (docs/devices/hailo.md)";

std::string not_found_reason(std::string_view setting, std::string_view option,
                             std::string_view what) {
  if (setting == "OFF") return "configured with -D" + std::string(option) + "=OFF";
  return std::string(what) + " not found at configure time";
}

Result<std::unique_ptr<Device>> open_cpu(const DeviceSpec& spec) {
  return open_cpu_device(spec.params);
}
Result<std::unique_ptr<Device>> open_sim(const DeviceSpec& spec) {
  return open_sim_device(spec.params);
}
Result<std::unique_ptr<Device>> open_null(const DeviceSpec& spec) {
  return open_null_device(spec.params);
}
Result<std::unique_ptr<Device>> open_hailo(const DeviceSpec& spec) {
#ifdef RIG_WITH_HAILO_DEVICE
  return open_hailo_device(spec.params, steady_clock());
#else
  (void)spec;
  return fail(ErrorCode::unsupported,
              "this rig was built without HailoRT: " + std::string(kHailoHowTo));
#endif
}
Result<std::unique_ptr<Device>> open_remote(const DeviceSpec& spec) {
  return open_remote_device(spec.endpoint);
}

bool hailo_built() {
#ifdef RIG_WITH_HAILO_DEVICE
  return true;
#else
  return false;
#endif
}

// The table. Parameters in the order their device's header lists them;
// `example` only where the default is not itself a value.
std::vector<DeviceKind> build_table() {
  std::vector<DeviceKind> kinds;

  DeviceKind cpu;
  cpu.name = "cpu";
  cpu.forms = {"cpu[:KEY=VALUE,...]"};
  cpu.summary = "ONNX models on the host CPU, in process, through ONNX Runtime or OpenCV DNN";
  cpu.doc = "docs/devices/cpu.md";
  const std::string ort = "runtime=ort";
  cpu.params = {
      {"runtime", "ort|opencv", "ort where built, else opencv",
       "ONNX Runtime's C++ API, or OpenCV DNN", "opencv", ""},
      {"threads", "N", "all hardware threads",
       "intra-op threads (OpenCV's are process-wide: the last cpu device opened sets them)", "1",
       ""},
      {"workers", "N", "1", "inference workers, each with its own Net or session", "1", ""},
      {"depth", "N", "2 x workers", "queue depth: requests in flight", "2", ""},
      {"inter_threads", "N", "1", "inter-op threads (used with execution=parallel)", "1", ort},
      {"optimization", "disable|basic|extended|all", "all", "graph optimisation level", "all", ort},
      {"execution", "sequential|parallel", "sequential", "ONNX Runtime's execution mode",
       "sequential", ort},
  };
  cpu.open = open_cpu;
  cpu.availability =
      cpu::ort_built()
          ? "runtimes: ort (the default), opencv"
          : "runtimes: opencv; runtime=ort not built (" +
                not_found_reason(RIG_ONNXRUNTIME_SETTING, "RIG_WITH_ONNXRUNTIME", "ONNX Runtime") +
                "; on Debian 13 install libonnxruntime-dev)";
  kinds.push_back(std::move(cpu));

  DeviceKind sim;
  sim.name = "sim";
  sim.forms = {"sim[:KEY=VALUE,...]"};
  sim.summary = "a discrete-event accelerator behind a link, on a virtual clock";
  sim.doc = "docs/link-profiles.md";
  sim.params = {
      {"link", "PROFILE", "none",
       "a named link profile: fills in bw_in, bw_out, lat, depth and duplex where not given",
       "usb3-gen2", ""},
      {"compute", "DUR", "1ms", "device compute time per frame", "1ms", ""},
      {"bw", "BW", "1GB/s", "link bandwidth, each direction", "1GB/s", ""},
      {"bw_in", "BW", "bw", "input direction's bandwidth", "1GB/s", ""},
      {"bw_out", "BW", "bw", "output direction's bandwidth", "1GB/s", ""},
      {"lat", "DUR", "0ms", "fixed latency per transfer; overlaps with other transfers", "0ms", ""},
      {"depth", "N", "8", "device queue depth", "8", ""},
      {"load", "DUR", "100ms", "model load time", "100ms", ""},
      {"first", "DUR", "0ms", "extra cost of the first inference after a load", "0ms", ""},
      {"duplex", "half|full", "half", "half: one channel carries both directions", "half", ""},
      {"drift", "F", "0", "compute time grows by a factor (1 + F x t_seconds)", "0", ""},
      {"slow_at", "DUR", "never", "virtual time from which compute time is x slow_factor", "10s",
       ""},
      {"slow_factor", "F", "1", "the compute factor from slow_at on", "1", ""},
      {"jitter", "F", "0", "compute time x (1 + uniform(-F, F)), F < 1", "0", ""},
      {"seed", "N", "1", "the seed of jitter", "1", ""},
      {"realtime", "0|1", "0", "pace the virtual clock against the wall clock (demos)", "0", ""},
      {"temp", "C:C:...", "none",
       "scripted temperature_c: value k from virtual time k x sensor_step, the last holding",
       "40:45", ""},
      {"power", "W:W:...", "none", "scripted power_w, as temp", "2:3", ""},
      {"clock_mhz", "M:M:...", "none", "scripted clock_mhz, as temp", "800:600", ""},
      {"sensor_step", "DUR", "1s", "virtual time between scripted sensor values", "1s", ""},
      {"idle_power", "W", "the scripted power", "power_w while no request is in flight", "1", ""},
      {"warn", "TEXT", "none", "a warning the device raises at every load", "hot", ""},
  };
  sim.open = open_sim;
  kinds.push_back(std::move(sim));

  DeviceKind null;
  null.name = "null";
  null.forms = {"null[:depth=N]"};
  null.summary =
      "completes every request at once and copies nothing: the rig's own ceiling (also "
      "behind rig serve)";
  null.params = {{"depth", "N", "1024", "requests it takes in flight", "1024", ""}};
  null.open = open_null;
  kinds.push_back(std::move(null));

  DeviceKind hailo;
  hailo.name = "hailo";
  hailo.forms = {"hailo[:KEY=VALUE,...]"};
  hailo.summary = "a Hailo accelerator through HailoRT >= 5.1.1 (InferModel API)";
  hailo.doc = "docs/devices/hailo.md";
  hailo.params = {
      {"device_id", "ID", "any one", "a physical device (PCIe BDF, as hailortcli scan lists)",
       "0000:01:00.0", ""},
      {"network_group", "NAME", "the HEF's only group", "the HEF's network group to load", "net",
       ""},
      {"power_mode", "performance|ultra", "performance", "HailoRT's power mode for the model",
       "performance", ""},
      {"scheduler", "none|round_robin", "round_robin",
       "the VDevice's scheduling algorithm; none: rig activates the model itself", "round_robin",
       ""},
      {"batch", "N", "HailoRT's choice", "the model's batch size", "1", ""},
      {"depth", "N", "the model's async queue size", "requests rig keeps in flight", "4", ""},
      {"dma_map", "0|1", "0", "1: map rig's buffers with VDevice::dma_map", "0", ""},
      {"fallback", "host_loop|none", "host_loop",
       "when HailoRT's on-device loop fails: a pipelined host loop, or fail", "host_loop", ""},
  };
  hailo.open = open_hailo;
  hailo.built = hailo_built();
  if (!hailo.built)
    hailo.availability = not_found_reason(RIG_HAILO_SETTING, "RIG_WITH_HAILO", "HailoRT >= 5.1.1") +
                         "; " + std::string(kHailoHowTo);
  kinds.push_back(std::move(hailo));

  DeviceKind remote;
  remote.name = "remote";
  remote.prefixes = {"tcp://", "unix:"};
  remote.forms = {"tcp://HOST:PORT[?OPTION=VALUE&...]", "unix:PATH[?OPTION=VALUE&...]"};
  remote.summary = "a device hosted by rig serve, over TCP or a unix socket";
  remote.doc = "docs/protocol.md";
  remote.params = {
      {"token", "TEXT", "$RIG_TOKEN", "presented to the server in hello", "secret", ""},
      {"timeout", "DUR", "30s",
       "how long a request may go unanswered before the connection is declared dead", "30s", ""},
      {"calibrate", "0|1", "1", "time pings at open (the link floor)", "1", ""},
      {"compact", "0|1", "1", "runs as run_compact when the server takes it; 0: protobuf run", "1",
       ""},
  };
  remote.open = open_remote;
  remote.availability = "needs a rig serve to connect to";
  kinds.push_back(std::move(remote));

  return kinds;
}

// "cpu[:...]", "tcp://HOST:PORT": a form up to its optional part, "[:...]"
// where that is the parameters.
std::vector<std::string> short_forms(const DeviceKind& kind) {
  std::vector<std::string> out;
  for (const auto& form : kind.forms) {
    const std::string head = form.substr(0, form.find('['));
    out.push_back(kind.prefixes.empty() && !kind.params.empty() ? head + "[:...]" : head);
  }
  return out;
}

std::string join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : std::string(sep)) + item;
  return out;
}

tl::unexpected<Error> unknown_kind(const std::string& kind) {
  // A name is typed as itself; a prefix ("tcp://") as its word ("tcp").
  std::vector<std::string> words, shown;
  for (const auto& k : device_kinds()) {
    const auto forms = short_forms(k);
    if (k.prefixes.empty()) {
      words.push_back(k.name);
      shown.push_back(k.name);
      continue;
    }
    for (size_t i = 0; i < k.prefixes.size(); ++i) {
      const std::string& p = k.prefixes[i];
      words.push_back(p.substr(0, p.find(':')));
      shown.push_back(i < forms.size() ? forms[i] : p);
    }
  }
  std::string message = "unknown device '" + kind + "' (";
  const std::string nearest = nearest_word(kind, words);
  if (!nearest.empty()) {
    const auto at = std::find(words.begin(), words.end(), nearest) - words.begin();
    message += "did you mean '" + shown[static_cast<size_t>(at)] + "'? ";
  }
  return fail(ErrorCode::invalid_argument,
              message + "known: " + known_device_specs() + "; rig devices lists them)");
}

// A markdown table cell: '|' escaped.
std::string cell(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

const std::vector<DeviceKind>& device_kinds() {
  static const std::vector<DeviceKind> kinds = build_table();
  return kinds;
}

const DeviceKind* find_device_kind(std::string_view name) {
  for (const auto& kind : device_kinds())
    if (kind.name == name) return &kind;
  return nullptr;
}

std::string known_device_specs() {
  std::vector<std::string> all;
  for (const auto& kind : device_kinds())
    for (auto& form : short_forms(kind)) all.push_back(std::move(form));
  return join(all, ", ");
}

std::string device_option_help(std::string_view role) {
  std::vector<std::string> built;
  for (const auto& kind : device_kinds())
    if (kind.built)
      for (auto& form : short_forms(kind)) built.push_back(std::move(form));
  return std::string(role) + ": " + join(built, ", ") +
         " (rig devices lists every kind and its parameters)";
}

std::string device_table_markdown() {
  std::string out = "| spec | what | parameters (default) |\n| --- | --- | --- |\n";
  for (const auto& kind : device_kinds()) {
    std::vector<std::string> forms, params;
    for (const auto& form : kind.forms) forms.push_back("`" + cell(form) + "`");
    for (const auto& p : kind.params)
      params.push_back("`" + p.name + "=" + cell(p.value) + "` (" + p.default_text +
                       (p.needs.empty() ? "" : "; " + p.needs + " only") + ")");
    std::string what = kind.summary;
    if (!kind.doc.empty()) what += " (" + kind.doc + ")";
    out += "| " + join(forms, ", ") + " | " + cell(what) + " | " + join(params, ", ") + " |\n";
  }
  return out;
}

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string nearest_word(std::string_view word, const std::vector<std::string>& candidates) {
  std::string nearest;
  size_t best = SIZE_MAX;
  for (const auto& c : candidates)
    if (const size_t d = edit_distance(word, c); d < best) best = d, nearest = c;
  return best <= std::max<size_t>(2, word.size() / 3) ? nearest : std::string();
}

Result<DeviceSpec> parse_device_spec(std::string_view text) {
  for (const auto& kind : device_kinds())
    for (const auto& prefix : kind.prefixes)
      if (text.rfind(prefix, 0) == 0) {
        DeviceSpec spec;
        spec.kind = kind.name;
        spec.endpoint = std::string(text);  // the device parses its own options
        return spec;
      }
  auto parsed = parse_spec(text);
  if (!parsed) return tl::unexpected(parsed.error());
  // A kind written with a prefix is not written by its name ("remote").
  const DeviceKind* kind = find_device_kind(parsed->kind);
  if (!kind || !kind->prefixes.empty()) return unknown_kind(parsed->kind);
  // sim:link=usb3-gen2,... -> the profile's bw_in, bw_out, lat, depth, duplex
  return DeviceSpec::from_params(parsed->kind, std::move(parsed->params));
}

Result<std::unique_ptr<Device>> open_device(const DeviceSpec& spec) {
  const DeviceKind* kind = find_device_kind(spec.kind);
  if (!kind) return unknown_kind(spec.kind);
  return kind->open(spec);
}

Result<std::unique_ptr<Device>> open_device(std::string_view text) {
  auto spec = parse_device_spec(text);
  if (!spec) return tl::unexpected(spec.error());
  return open_device(*spec);
}

}  // namespace rig

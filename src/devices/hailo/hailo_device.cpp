// The hailo device on HailoRT's InferModel API. Threads: HailoRT calls the
// completion callbacks on its own threads (the test double too); they only
// push into Shared under its mutex and notify. Everything else runs on the
// thread that drives the device. Waiting: a wait that may normally expire
// (shorter than kQuietWait: the server's slices) never calls HailoRT, since
// every AsyncInferJob::wait that times out logs at error level
// (configured_infer_model_hrpc_client.cpp on H10, infer_model.cpp elsewhere;
// 5.1.1, 5.2.0): it waits on Shared's condition (on a virtual clock: in
// 1 us steps). A longer one waits in AsyncInferJob::wait on the oldest
// request (HailoRT returns from it after the job's callback ran).
//
// One file on purpose: every call (configure, bindings, run_async, the
// on-device loop and its fallback, re-configure, sensors, the log) works on
// one configured model's state under the single-driver contract; split, that
// state would need an interface of its own with no second user.
#include "devices/hailo/hailo_device.hpp"

#include <hailo/hailort.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>

#include "core/device_base.hpp"
#include "devices/hailo/hailo_log.hpp"
#include "devices/hailo/hailo_status.hpp"
#include "rig/model.hpp"
#include "rig/units.hpp"

namespace rig {
namespace {

using namespace std::chrono_literals;
using hailo::status_error;
using hailo::status_name;

constexpr uint32_t kDepthBeforeLoad = 32;  // HailoRT's usual async queue size
constexpr Nanos kRunTimeout = std::chrono::seconds(30);
// Waits shorter than this are expected to expire now and then (the server's
// slices): they do not go through HailoRT's wait, which logs each expiry.
constexpr Nanos kQuietWait = std::chrono::seconds(1);

// HailoRT's DMA alignment: the system's page size (OsUtils::get_page_size,
// common/os/posix/os_utils.cpp; 16 KiB on the Pi 5's default kernel).
size_t page_size() {
  static const size_t n = [] {
    const long v = ::sysconf(_SC_PAGESIZE);
    return v > 0 ? static_cast<size_t>(v) : size_t{4096};
  }();
  return n;
}

// HailoRT's hRPC client reaches a device id that is an IPv4 address over TCP
// port 12133 (hrpc/rpc_connection.hpp; vdevice.cpp sends such ids to
// VDeviceHrpcClient, 5.1.1 and 5.2.0) with a blocking connect(2)
// (hrpc/raw_connection_internal/socket, common/os/posix/socket.cpp: no
// timeout of its own), so an address nothing answers at waits for the
// kernel's SYN retries, about 2 minutes at Linux's default tcp_syn_retries.
// rig probes the address first and gives up after kHrpcConnectTimeout. The
// probe's connection closes without a byte; a device server takes that as a
// client that left.
constexpr uint16_t kHrpcPort = 12133;
constexpr int kHrpcConnectTimeoutMs = 5000;

Result<void> probe_hrpc_address(const std::string& device_id) {
  in_addr address{};
  if (device_id.empty() || ::inet_pton(AF_INET, device_id.c_str(), &address) != 1) return {};
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return {};  // HailoRT tries for itself, and says what failed
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(kHrpcPort);
  to.sin_addr = address;
  int error = 0;
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&to), sizeof to) != 0) {
    error = errno;
    if (error == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      int n;
      do n = ::poll(&p, 1, kHrpcConnectTimeoutMs);
      while (n < 0 && errno == EINTR);
      if (n == 0) {
        ::close(fd);
        return fail(ErrorCode::device,
                    "hailo: no Hailo device answers at " + device_id + ":" +
                        std::to_string(kHrpcPort) + " within " +
                        std::to_string(kHrpcConnectTimeoutMs / 1000) +
                        " s (HailoRT's hRPC client would wait for the kernel's TCP connect "
                        "timeout, about 2 minutes, so rig gives up first)");
      }
      socklen_t len = sizeof error;
      if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len) != 0) error = errno;
    }
  }
  ::close(fd);
  if (error != 0)
    return fail(ErrorCode::device, "hailo: cannot reach a Hailo device at " + device_id + ":" +
                                       std::to_string(kHrpcPort) + " (" + std::strerror(error) +
                                       "): for a device id that is an IPv4 address HailoRT's "
                                       "hRPC client connects there over TCP");
  return {};
}

struct HailoParams {
  std::string device_id;
  std::string network_group;  // "": the HEF's first (HailoRT's default)
  hailo_power_mode_t power_mode = HAILO_POWER_MODE_PERFORMANCE;
  hailo_scheduling_algorithm_t scheduler = HAILO_SCHEDULING_ALGORITHM_ROUND_ROBIN;
  uint16_t batch = 0;  // 0: HailoRT's choice
  uint32_t depth = 0;  // 0: the model's async queue size
  bool dma_map = false;
  bool host_loop_fallback = true;
};

Result<HailoParams> parse_params(const std::map<std::string, std::string>& params) {
  HailoParams p;
  // Not a structured binding: clang 14 cannot capture one in a lambda.
  for (const auto& entry : params) {
    const std::string& key = entry.first;
    const std::string& value = entry.second;
    auto bad = [&](const std::string& what) {
      return fail(ErrorCode::invalid_argument,
                  "hailo parameter " + key + " must be " + what + ", got '" + value + "'");
    };
    if (key == "device_id") {
      if (value.empty() || value.size() >= HAILO_MAX_DEVICE_ID_LENGTH)
        return bad("a device id shorter than " + std::to_string(HAILO_MAX_DEVICE_ID_LENGTH));
      p.device_id = value;
    } else if (key == "network_group") {
      if (value.empty()) return bad("the name of a network group in the HEF");
      p.network_group = value;
    } else if (key == "power_mode") {
      if (value == "performance")
        p.power_mode = HAILO_POWER_MODE_PERFORMANCE;
      else if (value == "ultra")
        p.power_mode = HAILO_POWER_MODE_ULTRA_PERFORMANCE;
      else
        return bad("performance or ultra");
    } else if (key == "scheduler") {
      if (value == "none")
        p.scheduler = HAILO_SCHEDULING_ALGORITHM_NONE;
      else if (value == "round_robin")
        p.scheduler = HAILO_SCHEDULING_ALGORITHM_ROUND_ROBIN;
      else
        return bad("none or round_robin");
    } else if (key == "batch" || key == "depth") {
      auto n = parse_count(value);
      if (!n || *n == 0 || *n > (key == "batch" ? 65535u : 65536u))
        return bad(key == "batch" ? "in 1..65535" : "in 1..65536");
      if (key == "batch")
        p.batch = static_cast<uint16_t>(*n);
      else
        p.depth = static_cast<uint32_t>(*n);
    } else if (key == "dma_map") {
      if (value != "0" && value != "1") return bad("0 or 1");
      p.dma_map = value == "1";
    } else if (key == "fallback") {
      if (value != "host_loop" && value != "none") return bad("host_loop or none");
      p.host_loop_fallback = value == "host_loop";
    } else {
      return fail(ErrorCode::invalid_argument,
                  "unknown hailo parameter '" + key +
                      "' (known: device_id, network_group, power_mode, scheduler, batch, depth, "
                      "dma_map, fallback)");
    }
  }
  return p;
}

std::string effective_spec(const HailoParams& p) {
  std::string s = "hailo:";
  if (!p.device_id.empty()) s += "device_id=" + p.device_id + ",";
  if (!p.network_group.empty()) s += "network_group=" + p.network_group + ",";
  s += std::string("power_mode=") +
       (p.power_mode == HAILO_POWER_MODE_ULTRA_PERFORMANCE ? "ultra" : "performance");
  s += std::string(",scheduler=") +
       (p.scheduler == HAILO_SCHEDULING_ALGORITHM_NONE ? "none" : "round_robin");
  if (p.batch != 0) s += ",batch=" + std::to_string(p.batch);
  if (p.depth != 0) s += ",depth=" + std::to_string(p.depth);
  s += std::string(",dma_map=") + (p.dma_map ? "1" : "0");
  s += std::string(",fallback=") + (p.host_loop_fallback ? "host_loop" : "none");
  return s;
}

// By number, as the library that answered names it: 7 is HAILO_ARCH_MARS in
// HailoRT 5.1.x and HAILO_ARCH_HAILO12L from 5.2.0 on (hailort.h); a newer
// architecture is still reported, as unknown(N).
std::string arch_name(hailo_device_architecture_t a, const hailo_version_t& library) {
  static const char* const kNames[] = {"HAILO8_A0", "HAILO8",   "HAILO8L", "HAILO15H",
                                       "HAILO15L",  "HAILO15M", "HAILO10H"};
  const int n = static_cast<int>(a);
  if (n >= 0 && n < static_cast<int>(std::size(kNames))) return kNames[n];
  if (n == 7)
    return library.major == 5 && library.minor <= 1 ? std::string("MARS") : std::string("HAILO12L");
  return "unknown(" + std::to_string(n) + ")";
}

// Hailo-8, 8L (and 8 A0) run on HailoRT 4.x only; HailoRT 5.x serves
// Hailo-10 and Hailo-15.
bool is_hailo8(hailo_device_architecture_t a) {
  const int n = static_cast<int>(a);
  return n >= 0 && n <= 2;
}

// The device types HailoRT's public API names; anything else (a USB stick
// reports one of these or nothing rig knows) is "unknown".
std::string type_name(hailort::Device::Type t) {
  switch (t) {
    case hailort::Device::Type::PCIE:
      return "PCIe";
    case hailort::Device::Type::ETH:
      return "Ethernet";
    case hailort::Device::Type::INTEGRATED:
      return "integrated";
  }
  return "unknown";
}

std::string format_name(hailo_format_type_t t) {
  switch (t) {
    case HAILO_FORMAT_TYPE_UINT8:
      return "uint8";
    case HAILO_FORMAT_TYPE_UINT16:
      return "uint16";
    case HAILO_FORMAT_TYPE_FLOAT32:
      return "float32";
    default:
      return "auto";
  }
}

ElementType element_type(hailo_format_type_t t) {
  switch (t) {
    case HAILO_FORMAT_TYPE_UINT16:
      return ElementType::u16;
    case HAILO_FORMAT_TYPE_FLOAT32:
      return ElementType::f32;
    default:
      return ElementType::u8;
  }
}

TensorInfo tensor_of(const hailort::InferModel::InferStream& s) {
  TensorInfo t;
  t.name = s.name();
  t.type = element_type(s.format().type);
  t.bytes = s.get_frame_size();
  const auto shape = s.shape();
  t.shape = {1, shape.height, shape.width, shape.features};  // NHWC, as HailoRT's frames
  const size_t product = size_t(shape.height) * shape.width * shape.features;
  if (product * element_size(t.type) != t.bytes)  // NMS and other packed outputs
    t.shape = {static_cast<int64_t>(t.bytes / element_size(t.type))};
  return t;
}

std::string fixed2(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

std::chrono::milliseconds ceil_ms(Nanos d) {
  if (d <= Nanos(0)) return 0ms;
  if (d > std::chrono::hours(24)) return std::chrono::hours(24);
  return std::chrono::ceil<std::chrono::milliseconds>(d);
}

// Page-aligned memory the device owns (the fallback loop's buffers): the
// allocation is padded to whole pages (infer_model.hpp's set_buffer asks
// this of output buffers), the view HailoRT gets is the exact frame size.
struct PageBuffer {
  std::byte* data = nullptr;
  size_t size = 0;
  explicit PageBuffer(size_t n) : size(n) {
    const size_t page = page_size();
    const size_t rounded = (n + page - 1) / page * page;
    data = static_cast<std::byte*>(std::aligned_alloc(page, rounded == 0 ? page : rounded));
  }
  ~PageBuffer() { std::free(data); }
  PageBuffer(const PageBuffer&) = delete;
  PageBuffer& operator=(const PageBuffer&) = delete;
};

// What the callbacks touch.
struct Shared {
  std::mutex mu;
  std::condition_variable cv;  // notified on each push
  std::deque<Completion> ready;
};

class HailoDevice final : public DeviceBase {
 public:
  HailoDevice(HailoParams p, Clock& clock) : p_(std::move(p)), clock_(clock) {}
  ~HailoDevice() override { release_model(); }
  HailoDevice(const HailoDevice&) = delete;
  HailoDevice& operator=(const HailoDevice&) = delete;

  Result<void> open() {
    // HailoRT chose its log files before main; rig reads the one it writes.
    const auto sink = hailo::locate_log();
    if (sink.path.empty()) {
      properties_["hailort_log"] = "unavailable: " + sink.unavailable;
      open_warnings_.push_back(
          "rig cannot read HailoRT's warnings (the USB-C power warning "
          "among them): " +
          sink.unavailable);
    } else {
      properties_["hailort_log"] = sink.path +
                                   (sink.shared ? " (this process's records, by PID)" : "") +
                                   (sink.note.empty() ? "" : " (" + sink.note + ")");
    }
    log_ = hailo::LogTail(sink.path, sink.shared ? static_cast<int64_t>(::getpid()) : -1);
    if (auto ok = probe_hrpc_address(p_.device_id); !ok) return ok;
    if (auto ok = create_vdevice(); !ok) {
      Error e = ok.error();
      for (const auto& w : open_warnings_) e.message += "; " + w;
      return tl::unexpected(e);
    }
    describe_hardware();
    notes_ = &pending_warnings_;
    return {};
  }

  DeviceInfo info() const override {
    DeviceInfo i;
    i.spec = effective_spec(p_);
    i.kind = "hailo";
    i.description = description_;
    i.queue_depth = queue_depth();
    i.own_queue_depth = async_queue_size_;
    i.in_process = false;
    // Real on hardware; the test double's clock is virtual, and says so.
    i.clock = clock_.is_virtual() ? ClockKind::virtual_time : ClockKind::real;
    i.loop_whole = true;
    // HailoRT DMAs page-aligned buffers directly and copies others through a
    // bounce buffer (vdma/pcie_session.cpp); an output buffer whose
    // allocation is not padded to whole pages risks corruption past its end
    // (set_buffer, infer_model.hpp).
    i.buffer_alignment = page_size();
    i.buffer_padding = page_size();
    i.properties = properties_;
    i.warnings = open_warnings_;
    return i;
  }

  Clock& clock() override { return clock_; }

 protected:
  Result<LoadTimings> do_load(const ModelSource& source, ModelInfo& info) override {
    release_model();
    LoadTimings t;
    Nanos t0 = clock_.now();
    auto model = read_model_source(source);
    if (!model) return tl::unexpected(model.error());
    hef_ = std::vector<std::byte>(model->bytes.begin(), model->bytes.end());
    t.read = clock_.now() - t0;
    // create_infer_model's name is a network group inside the HEF, not the
    // file's: "" is the first group (HailoRT's example and hailortcli run2),
    // an unknown name fails with HAILO_NOT_FOUND (hef.cpp), a network's name
    // with HAILO_NOT_IMPLEMENTED (infer_model.cpp).
    const std::string name =
        p_.network_group.empty() ? model_display_name(source) : p_.network_group;
    t0 = clock_.now();
    if (auto ok = check_network_group(); !ok) return load_failed(ok.error());
    latency_refused_ = false;
    properties_["hw_latency"] = "not read yet";
    auto created = create_model();
    if (!created && created.error().message.find("HAILO_TIMEOUT") != std::string::npos) {
      // A create whose reply was lost may have made the model on the device.
      auto again = reopen_after_lost_reply("create_infer_model");
      if (again) again = create_model();
      note_retry("create_infer_model", again ? "it succeeded" : again.error().to_string());
      created = std::move(again);
    }
    t.parse = clock_.now() - t0;
    if (!created) return load_failed(created.error());
    t0 = clock_.now();
    if (auto ok = configure_at_load(); !ok) return load_failed(ok.error());
    t.compile = clock_.now() - t0;
    info.name = name;
    for (const auto& s : model_->inputs()) {
      info.inputs.push_back(tensor_of(s));
      properties_["input." + s.name()] = describe_stream(s);
    }
    for (const auto& s : model_->outputs()) {
      info.outputs.push_back(tensor_of(s));
      properties_["output." + s.name()] = describe_stream(s);
    }
    auto queue = configured_.get_async_queue_size();
    if (!queue) return load_failed(status_error(queue.status(), "get_async_queue_size"));
    async_queue_size_ = static_cast<uint32_t>(std::clamp<size_t>(*queue, 1, 1u << 16));
    properties_["async_queue_size"] = std::to_string(async_queue_size_);
    loaded_ = true;
    collect_log(pending_warnings_);
    return t;
  }

  // `id` is bindings_.size(): the base numbers bindings in order.
  Result<void> do_bind(BindingId, const Bindings& b) override {
    Bound bound;
    bound.buffers = b;
    if (auto ok = attach(bound); !ok) return ok;
    if (p_.dma_map) map_buffers(bound);
    bindings_.push_back(std::move(bound));
    return {};
  }

  Result<InferenceTimings> do_run(BindingId binding) override {
    if (auto ok = ready_to_infer(); !ok) return tl::unexpected(ok.error());
    const auto st = configured_.run(bindings_[binding].hailo, ceil_ms(kRunTimeout));
    payload_in_ += model_info().input_bytes();
    if (st != HAILO_SUCCESS) {
      // A failed run_async inside run shuts the model down for good
      // (ConfiguredInferModel::run_async, infer_model.cpp;
      // configured_infer_model_hrpc_client.cpp; 5.1.1 and 5.2.0), and a
      // failed frame may have too: the next frame re-configures.
      needs_reconfigure_ = true;
      return infer_failed(status_error(st, "ConfiguredInferModel::run"));
    }
    payload_out_ += model_info().output_bytes();
    ++frames_since_configure_;
    // No per-frame compute: HailoRT's latency measurement is a mean since
    // configure and, on H10, an RPC round trip; it is read outside the timed
    // region (read_sensors) and reported as what it is.
    return InferenceTimings{};
  }

  Result<void> do_submit(BindingId binding, uint64_t tag) override {
    if (auto ok = ready_to_infer(); !ok) return tl::unexpected(ok.error());
    // rig's depth may exceed HailoRT's queue: then submit waits for room.
    if (auto st = configured_.wait_for_async_ready(ceil_ms(kRunTimeout)); st != HAILO_SUCCESS)
      return infer_failed(status_error(st, "ConfiguredInferModel::wait_for_async_ready"));
    auto shared = shared_;
    Clock* clock = &clock_;
    auto job = configured_.run_async(
        bindings_[binding].hailo,
        [shared, clock, tag, binding](const hailort::AsyncInferCompletionInfo& c) {
          Completion done;
          done.tag = tag;
          done.binding = binding;
          done.completed_at = clock->now();
          if (c.status != HAILO_SUCCESS)
            done.error = status_error(c.status, "inference (run_async completion)");
          {
            std::lock_guard lock(shared->mu);
            shared->ready.push_back(std::move(done));
          }
          shared->cv.notify_all();
        });
    if (!job) {
      // HailoRT shut the configured model down (run_async calls shutdown()
      // on any failure): without a re-configure every later request would
      // complete with HAILO_STREAM_ABORT.
      needs_reconfigure_ = true;
      return infer_failed(status_error(job.status(), "ConfiguredInferModel::run_async"));
    }
    payload_in_ += model_info().input_bytes();
    jobs_.push_back(Job{tag, job.release()});
    return {};
  }

  Result<Completion> do_wait_next(Nanos timeout) override {
    if (auto c = pop_ready()) return *c;
    if (timeout < kQuietWait) {
      quiet_wait(clock_.now() + std::max(timeout, Nanos(0)));
      if (auto c = pop_ready()) return *c;
      return fail(ErrorCode::timeout, "hailo: no completion within " + format_duration(timeout));
    }
    const auto st = jobs_.front().job.wait(ceil_ms(timeout));
    if (auto c = pop_ready()) return *c;
    if (st == HAILO_TIMEOUT)
      return fail(ErrorCode::timeout, "hailo: no completion within " + format_duration(timeout));
    return tl::unexpected(status_error(st, "AsyncInferJob::wait"));
  }

  Result<DurationRun> do_run_for_duration(BindingId binding, Nanos duration,
                                          Nanos sleep_between) override;

  uint32_t queue_depth() const override {
    if (p_.depth != 0) return p_.depth;
    return async_queue_size_ != 0 ? async_queue_size_ : kDepthBeforeLoad;
  }

 public:
  ByteCounters bytes() const override {
    ByteCounters b;
    b.payload_in = payload_in_;
    b.payload_out = payload_out_;
    // rig sees HailoRT's frames, not the bus: the link bytes are the payload.
    b.link_in = payload_in_;
    b.link_out = payload_out_;
    return b;
  }

  std::map<std::string, double> read_sensors() override {
    std::map<std::string, double> out;
    probe_sensors(&out);
    read_hw_latency(&out);
    return out;
  }

  std::vector<std::string> take_warnings() override {
    collect_log(pending_warnings_);
    std::vector<std::string> out;
    if (!open_reported_) {
      out = open_warnings_;  // the dynamic channel starts with what open saw
      open_reported_ = true;
    }
    out.insert(out.end(), pending_warnings_.begin(), pending_warnings_.end());
    pending_warnings_.clear();
    return out;
  }

  void cancel() override { cancel_.store(true); }

 private:
  struct Bound {
    Bindings buffers;
    hailort::ConfiguredInferModel::Bindings hailo;
    bool mapped = false;
    std::vector<bool> mapped_each;  // per buffer, inputs then outputs
  };
  struct Job {
    uint64_t tag;
    hailort::AsyncInferJob job;
  };

  std::string describe_stream(const hailort::InferModel::InferStream& s) const {
    const auto sh = s.shape();
    return format_name(s.format().type) + " " + std::to_string(sh.height) + "x" +
           std::to_string(sh.width) + "x" + std::to_string(sh.features) + ", " +
           std::to_string(s.get_frame_size()) + " bytes per frame";
  }

  void collect_log(std::vector<std::string>& into) {
    for (auto& w : hailo::warning_lines(log_.read_new())) into.push_back(std::move(w));
  }

  void describe_hardware() {
    hailo_version_t v{};
    if (hailo_get_library_version(&v) == HAILO_SUCCESS) {
      library_version_ = std::to_string(v.major) + "." + std::to_string(v.minor) + "." +
                         std::to_string(v.revision);
      properties_["hailort_version"] = library_version_;
    }
    bool h10 = false;
    std::string arch = "unknown", type = "unknown", firmware = "unknown", board;
    auto devices = vdevice_->get_physical_devices();
    if (devices && !devices->empty()) {
      hailort::Device& d = devices->front().get();
      type = type_name(d.get_type());
      properties_["device_id"] = d.get_dev_id();
      if (auto a = query("get_architecture", [&] { return d.get_architecture(); })) {
        arch = arch_name(*a, v);
        h10 = static_cast<int>(*a) == 6;  // HAILO_ARCH_HAILO10H
        if (is_hailo8(*a))
          open_warnings_.push_back(
              "this is a " + arch +
              ": Hailo-8 devices run on HailoRT 4.x, which rig does not "
              "support (no InferModel::run_async_for_duration, a different API); HailoRT " +
              library_version_ + " serves Hailo-10 and Hailo-15");
      }
      auto identity = query("identify", [&] { return d.identify(); });
      if (identity) {
        const auto& f = identity->fw_version;
        firmware = std::to_string(f.major) + "." + std::to_string(f.minor) + "." +
                   std::to_string(f.revision);
        board.assign(identity->board_name,
                     std::min<size_t>(identity->board_name_length, sizeof identity->board_name));
      } else {
        firmware = "unavailable: " + status_name(identity.status());
      }
      properties_["physical_devices"] = std::to_string(devices->size());
    }
    // HailoRT's H10 client constructs its Device as PCIe whatever the link
    // (device/device_hrpc_client.hpp, 5.1.1 and 5.2.0): a USB stick says PCIe.
    if (h10 && type == "PCIe") type = "PCIe (as HailoRT's H10 client reports every link)";
    properties_["architecture"] = arch;
    properties_["device_type"] = type;
    properties_["firmware_version"] = firmware;
    if (!board.empty()) properties_["board"] = board;
    properties_["link_bytes"] = "equal to the payload: rig cannot see the bus's own overhead";
    description_ = (board.empty() ? arch : board) + " (" + arch + ", " + type + "), firmware " +
                   firmware + ", HailoRT " + library_version_;
    probe_sensors(nullptr);
  }

  // Reads temperature and power; records in the properties why one is unavailable.
  void probe_sensors(std::map<std::string, double>* out) {
    auto devices = vdevice_->get_physical_devices();
    if (!devices || devices->empty()) return;
    hailort::Device& d = devices->front().get();
    auto t = query("get_chip_temperature", [&] { return d.get_chip_temperature(); });
    if (t) {
      properties_["temperature_c"] = "available";
      if (out) (*out)["temperature_c"] = std::max(t->ts0_temperature, t->ts1_temperature);
    } else {
      properties_["temperature_c"] = "unavailable: " + status_name(t.status());
    }
    auto w = query("power_measurement", [&] {
      return d.power_measurement(HAILO_DVM_OPTIONS_AUTO, HAILO_POWER_MEASUREMENT_TYPES__POWER);
    });
    if (w) {
      properties_["power_w"] = "available";
      if (out) (*out)["power_w"] = *w;
    } else {
      properties_["power_w"] = "unavailable: " + status_name(w.status());
    }
  }

  tl::unexpected<Error> load_failed(Error e) {
    collect_log(pending_warnings_);
    release_model();
    return tl::unexpected(std::move(e));
  }
  tl::unexpected<Error> infer_failed(Error e) {
    collect_log(pending_warnings_);
    return tl::unexpected(std::move(e));
  }

  // The previous configured model goes first: never two on the device. With
  // the scheduler off nothing runs until activate() (the streams refuse
  // writes: async_stream_base.cpp); with it on activate() is refused
  // (core_op.cpp), so it is called only then.
  Result<void> configure(const char* what) {
    configured_ = hailort::ConfiguredInferModel();
    frames_since_configure_ = 0;
    auto configured = model_->configure();
    configure_status_ = configured.status();
    if (!configured) return tl::unexpected(status_error(configured.status(), what));
    configured_ = configured.release();
    if (p_.scheduler == HAILO_SCHEDULING_ALGORITHM_NONE)
      if (auto st = configured_.activate(); st != HAILO_SUCCESS)
        return tl::unexpected(status_error(st, std::string(what) + ": activate"));
    return {};
  }

  // network_group=NAME, checked against the HEF's groups before HailoRT is
  // asked. Without a name HailoRT takes the first group's streams and then
  // fails configure with HAILO_INVALID_ARGUMENT when the HEF holds several
  // (InferModelBase::configure, infer_model.cpp, 5.1.1 and 5.2.0), after
  // configuring them all on the device: refused here first.
  Result<void> check_network_group() {
    auto hef = hailort::Hef::create(hailort::MemoryView(hef_.data(), hef_.size()));
    if (!hef) return tl::unexpected(status_error(hef.status(), "Hef::create"));
    const auto groups = hef->get_network_groups_names();
    std::string names;
    for (const auto& g : groups) names += (names.empty() ? "" : ", ") + g;
    if (p_.network_group.empty()) {
      if (groups.size() <= 1) return {};
      return fail(ErrorCode::invalid_argument,
                  "hailo: the HEF holds " + std::to_string(groups.size()) + " network groups (" +
                      names + "): name one with network_group=NAME");
    }
    if (std::find(groups.begin(), groups.end(), p_.network_group) != groups.end()) return {};
    return fail(ErrorCode::not_found, "hailo: the HEF has no network group '" + p_.network_group +
                                          "' (its groups: " + names + ")");
  }

  // hrpc/client.cpp's Client::execute_request (5.1.1, 5.2.0) waits for the
  // reply on a condition variable without a predicate: a reply that comes
  // before the wait is lost and the call fails with HAILO_TIMEOUT after the
  // request's timeout although the device answered. A query is asked once
  // more; a create or configure may have taken effect, so the VDevice is
  // released and opened again once (reopen_after_lost_reply).
  template <typename F>
  auto query(const char* call, F&& f) -> decltype(f()) {
    auto first = f();
    if (first || first.status() != HAILO_TIMEOUT) return first;
    auto again = f();
    note_retry(call, again ? "it answered" : status_name(again.status()));
    return again;
  }

  void note_retry(const std::string& call, const std::string& outcome) {
    const bool query =
        call != "VDevice::create" && call != "create_infer_model" && call != "configure";
    notes_->push_back("HailoRT's " + call +
                      " timed out (HAILO_TIMEOUT) although the device may have answered "
                      "(hrpc/client.cpp waits for the reply without a predicate, so a reply "
                      "that comes first is lost); " +
                      (query ? std::string("retried once: ")
                             : std::string("rig released the VDevice and opened it again, "
                                           "retried once: ")) +
                      outcome);
  }

  Result<void> create_vdevice() {
    hailo_vdevice_params_t params{};
    if (auto st = hailo_init_vdevice_params(&params); st != HAILO_SUCCESS)
      return tl::unexpected(status_error(st, "hailo_init_vdevice_params"));
    params.scheduling_algorithm = p_.scheduler;
    hailo_device_id_t id{};
    if (!p_.device_id.empty()) {
      std::memcpy(id.id, p_.device_id.c_str(), p_.device_id.size() + 1);
      params.device_ids = &id;
      params.device_count = 1;
    }
    auto vdevice = hailort::VDevice::create(params);
    collect_log(*notes_);
    if (!vdevice && vdevice.status() == HAILO_TIMEOUT) {
      auto again = hailort::VDevice::create(params);
      collect_log(*notes_);
      note_retry("VDevice::create", again ? "it succeeded" : status_name(again.status()));
      if (!again) return tl::unexpected(status_error(again.status(), "VDevice::create"));
      vdevice_ = again.release();
      return {};
    }
    if (!vdevice) return tl::unexpected(status_error(vdevice.status(), "VDevice::create"));
    vdevice_ = vdevice.release();
    return {};
  }

  // After a create or configure whose reply was lost: the device may hold
  // what it made; releasing the VDevice releases it (the server drops a
  // client's objects with it), then the VDevice is opened again.
  Result<void> reopen_after_lost_reply(const char* call) {
    collect_log(pending_warnings_);
    configured_ = hailort::ConfiguredInferModel();
    model_.reset();
    vdevice_.reset();
    if (auto ok = create_vdevice(); !ok) {
      note_retry(call, "opening the VDevice again failed: " + ok.error().to_string());
      return ok;
    }
    return {};
  }

  Result<void> create_model() {
    auto infer_model = vdevice_->create_infer_model(hailort::MemoryView(hef_.data(), hef_.size()),
                                                    p_.network_group);
    if (!infer_model)
      return tl::unexpected(status_error(infer_model.status(), "create_infer_model"));
    model_ = infer_model.release();
    if (p_.batch != 0) model_->set_batch_size(p_.batch);
    model_->set_power_mode(p_.power_mode);
    model_->set_hw_latency_measurement_flags(latency_refused_ ? HAILO_LATENCY_NONE
                                                              : HAILO_LATENCY_MEASURE);
    return {};
  }

  // The load's configure() with HailoRT's refusals and a lost reply handled.
  // HailoRT's core refuses a latency meter (HAILO_INVALID_OPERATION) for a
  // model with on-chip NMS or more than one physical input
  // (create_hw_latency_meter, core_op/resource_manager/resource_manager.cpp,
  // 5.1.1 and 5.2.0; on H10 in the device's server), which InferModel does
  // not show before configure: rig configures once more without it. A
  // second HAILO_INVALID_OPERATION is the batch (InferModelBase::configure,
  // infer_model.cpp: a batch above the model's internal queue).
  Result<void> configure_at_load() {
    auto ok = configure("configure");
    if (!ok && configure_status_ == HAILO_TIMEOUT) {
      auto again = reopen_after_lost_reply("configure");
      if (again) again = create_model();
      if (again) again = configure("configure");
      note_retry("configure", again ? "it succeeded" : again.error().to_string());
      return again;
    }
    if (ok || configure_status_ != HAILO_INVALID_OPERATION) return ok;
    // The refusal's own lines are what rig handles here, not device warnings.
    std::vector<std::string> lines;
    collect_log(lines);
    for (auto& l : lines)
      if (l.find("HW Latency measurement is") == std::string::npos &&
          l.find("CHECK_SUCCESS failed with status=HAILO_INVALID_OPERATION(6)") ==
              std::string::npos)
        pending_warnings_.push_back(std::move(l));
    latency_refused_ = true;
    model_->set_hw_latency_measurement_flags(HAILO_LATENCY_NONE);
    auto retry = configure("configure (without HAILO_LATENCY_MEASURE)");
    if (retry) {
      properties_["hw_latency"] =
          "unavailable: the model has on-chip NMS or several inputs: HailoRT refuses latency "
          "measurement for it (HAILO_INVALID_OPERATION at configure with HAILO_LATENCY_MEASURE)";
      return retry;
    }
    if (configure_status_ != HAILO_INVALID_OPERATION) return retry;
    return fail(ErrorCode::invalid_argument,
                "configure: " + status_name(HAILO_INVALID_OPERATION) + ": HailoRT refuses " +
                    (p_.batch != 0 ? "batch=" + std::to_string(p_.batch) +
                                         " for this model (above its internal queue); lower "
                                         "batch="
                                   : std::string("this model's configuration (with and without "
                                                 "latency measurement)")));
  }

  // Waits for a completion until `deadline` without calling HailoRT.
  void quiet_wait(Nanos deadline) {
    if (clock_.is_virtual()) {
      // The double delivers completions as its clock passes them: 1 us steps
      // stop within 1 us of the first.
      while (clock_.now() < deadline) {
        clock_.sleep_until(std::min(deadline, clock_.now() + std::chrono::microseconds(1)));
        std::lock_guard lock(shared_->mu);
        if (!shared_->ready.empty()) return;
      }
      return;
    }
    const auto until = std::chrono::steady_clock::time_point(
        std::chrono::duration_cast<std::chrono::steady_clock::duration>(deadline));
    std::unique_lock lock(shared_->mu);
    shared_->cv.wait_until(lock, until, [this] { return !shared_->ready.empty(); });
  }

  Result<void> attach(Bound& b) {
    auto created = configured_.create_bindings();
    if (!created) return tl::unexpected(status_error(created.status(), "create_bindings"));
    b.hailo = created.release();
    for (size_t i = 0; i < model_info().inputs.size(); ++i) {
      auto stream = b.hailo.input(model_info().inputs[i].name);
      if (!stream) return tl::unexpected(status_error(stream.status(), "Bindings::input"));
      const auto& span = b.buffers.inputs[i];
      auto st =
          stream->set_buffer(hailort::MemoryView(const_cast<std::byte*>(span.data()), span.size()));
      if (st != HAILO_SUCCESS)
        return tl::unexpected(
            status_error(st, "set_buffer of input '" + model_info().inputs[i].name + "'"));
    }
    for (size_t i = 0; i < model_info().outputs.size(); ++i) {
      auto stream = b.hailo.output(model_info().outputs[i].name);
      if (!stream) return tl::unexpected(status_error(stream.status(), "Bindings::output"));
      const auto& span = b.buffers.outputs[i];
      auto st = stream->set_buffer(hailort::MemoryView(span.data(), span.size()));
      if (st != HAILO_SUCCESS)
        return tl::unexpected(
            status_error(st, "set_buffer of output '" + model_info().outputs[i].name + "'"));
    }
    return {};
  }

  // dma_map=1: maps every buffer. HailoRT maps the part of a buffer from its
  // first page-aligned address and succeeds, copying the rest through its
  // bounce buffers (VdmaDevice::dma_map_impl, vdma/vdma_device.cpp, 5.2.0);
  // says once that such buffers are copied in part.
  void map_buffers(Bound& b) {
    bool all = true;
    b.mapped_each.clear();
    auto map = [&](void* p, size_t n, hailo_dma_buffer_direction_t dir) {
      if (reinterpret_cast<uintptr_t>(p) % page_size() != 0) all = false;
      const bool ok = vdevice_->dma_map(p, n, dir) == HAILO_SUCCESS;
      b.mapped_each.push_back(ok);
      if (ok)
        b.mapped = true;
      else
        all = false;
    };
    for (const auto& s : b.buffers.inputs)
      map(const_cast<std::byte*>(s.data()), s.size(), HAILO_DMA_BUFFER_DIRECTION_H2D);
    for (const auto& s : b.buffers.outputs) map(s.data(), s.size(), HAILO_DMA_BUFFER_DIRECTION_D2H);
    if (!all && !unmapped_noted_) {
      unmapped_noted_ = true;
      pending_warnings_.push_back(
          "dma_map=1: some of rig's buffers are not page-aligned or did not map; HailoRT maps "
          "only their page-aligned part and copies the rest through its own buffers");
    }
  }

  void unmap(Bound& b) {
    if (!b.mapped) return;
    size_t i = 0;
    auto unmap_one = [&](void* p, size_t n, hailo_dma_buffer_direction_t dir) {
      if (i < b.mapped_each.size() && b.mapped_each[i]) vdevice_->dma_unmap(p, n, dir);
      ++i;
    };
    for (const auto& s : b.buffers.inputs)
      unmap_one(const_cast<std::byte*>(s.data()), s.size(), HAILO_DMA_BUFFER_DIRECTION_H2D);
    for (const auto& s : b.buffers.outputs)
      unmap_one(s.data(), s.size(), HAILO_DMA_BUFFER_DIRECTION_D2H);
    b.mapped = false;
  }

  void release_model() {
    // Requests still on the device finish before their buffers go; what does
    // not finish is aborted by shutdown().
    bool stuck = false;
    while (!jobs_.empty()) {
      stuck |= jobs_.front().job.wait(ceil_ms(kRunTimeout)) == HAILO_TIMEOUT;
      jobs_.pop_front();
    }
    if (pending_loop_) {
      stuck |= pending_loop_->wait(ceil_ms(kRunTimeout)) == HAILO_TIMEOUT;
      pending_loop_.reset();
    }
    if (stuck && loaded_) (void)configured_.shutdown();
    {
      std::lock_guard lock(shared_->mu);
      shared_->ready.clear();
    }
    if (vdevice_)
      for (auto& b : bindings_) unmap(b);
    bindings_.clear();
    configured_ = hailort::ConfiguredInferModel();
    model_.reset();
    loaded_ = false;
    needs_reconfigure_ = false;
    async_queue_size_ = 0;
    frames_since_configure_ = 0;
  }

  // HailoRT has shut the configured model down after a loop (re-configured
  // right after it, retried here if that failed) or after a failed request
  // (run_async shuts down on any failure): the next frame re-configures.
  Result<void> ready_to_infer() {
    if (!needs_reconfigure_) return {};
    if (auto ok = finish_pending_loop(); !ok) return ok;
    return reconfigure(nullptr);
  }

  // A loop whose reply did not come in time may still run on the device:
  // re-configuring now would put a second configured model beside it.
  Result<void> finish_pending_loop() {
    if (!pending_loop_) return {};
    // On H10 a job that answered returns its own status (the loop's 77
    // among them: AsyncInferJobHrpcClient::wait): only a timeout is no answer.
    if (pending_loop_->wait(ceil_ms(kRunTimeout)) == HAILO_TIMEOUT)
      return fail(ErrorCode::timeout,
                  "hailo: HailoRT's on-device loop still has not answered; rig does not "
                  "re-configure while it may run");
    pending_loop_.reset();
    return {};
  }

  Result<void> reconfigure(std::vector<std::string>* notes) {
    const Nanos t0 = clock_.now();
    // After a loop, or after HailoRT shut the model down on a failed request.
    if (auto ok = configure(notes ? "re-configure after run_async_for_duration"
                                  : "re-configure after HailoRT shut the model down");
        !ok)
      return ok;
    for (auto& b : bindings_)
      if (auto ok = attach(b); !ok) return ok;
    needs_reconfigure_ = false;
    const Nanos took = clock_.now() - t0;
    if (notes)
      notes->push_back(
          "HailoRT shuts the configured model down after run_async_for_duration: rig "
          "re-configured it (" +
          format_duration(took) +
          ", a cold phase outside the loop's figure and outside any steady window)");
    return {};
  }

  std::optional<Completion> pop_ready() {
    std::optional<Completion> c;
    {
      std::lock_guard lock(shared_->mu);
      if (shared_->ready.empty()) return std::nullopt;
      c = std::move(shared_->ready.front());
      shared_->ready.pop_front();
    }
    auto it =
        std::find_if(jobs_.begin(), jobs_.end(), [&](const Job& j) { return j.tag == c->tag; });
    if (it != jobs_.end()) jobs_.erase(it);
    if (!c->error) {
      payload_out_ += model_info().output_bytes();
      ++frames_since_configure_;
    } else {
      needs_reconfigure_ = true;  // a failed completion: the model may be shut down
    }
    return c;
  }

  // HailoRT's hardware latency: a running mean over the frames since
  // configure (common/latency_meter.hpp), an RPC on H10; not measured for a
  // model whose configure refused the meter (configure_at_load). Read outside
  // any timed region, reported with rig's count of the frames since
  // configure: lone frames, requests and the fallback loop's.
  void read_hw_latency(std::map<std::string, double>* out) {
    if (!loaded_ || needs_reconfigure_ || latency_refused_ || frames_since_configure_ == 0) return;
    auto l = query("get_hw_latency_measurement",
                   [&] { return configured_.get_hw_latency_measurement(); });
    if (!l) {
      properties_["hw_latency"] = "unavailable: " + status_name(l.status());
      return;
    }
    const Nanos mean = std::chrono::duration_cast<Nanos>(l->avg_hw_latency);
    properties_["hw_latency"] = format_duration(mean) + ", HailoRT's mean over the " +
                                std::to_string(frames_since_configure_) +
                                " frames since configure (not a per-frame figure)";
    if (out) (*out)["hw_latency_mean_ms"] = to_seconds(mean) * 1e3;
  }

  Result<DurationRun> host_loop(const Bound& source, Nanos duration, Nanos sleep_between);

  HailoParams p_;
  Clock& clock_;
  std::unique_ptr<hailort::VDevice> vdevice_;
  std::shared_ptr<hailort::InferModel> model_;
  hailort::ConfiguredInferModel configured_;
  std::vector<std::byte> hef_;
  bool loaded_ = false;  // a configured model (the base's loaded() follows it)
  bool needs_reconfigure_ = false;
  bool latency_refused_ = false;  // HailoRT refused HAILO_LATENCY_MEASURE for this model
  hailo_status configure_status_ = HAILO_SUCCESS;  // the last configure()'s
  // Where a retry's note goes: the open's warnings, then the dynamic channel.
  std::vector<std::string>* notes_ = &open_warnings_;
  uint32_t async_queue_size_ = 0;
  std::vector<Bound> bindings_;
  std::deque<Job> jobs_;
  std::shared_ptr<Shared> shared_ = std::make_shared<Shared>();
  uint64_t payload_in_ = 0, payload_out_ = 0;
  hailo::LogTail log_;
  std::vector<std::string> open_warnings_, pending_warnings_;
  bool open_reported_ = false;
  bool unmapped_noted_ = false;
  std::map<std::string, std::string> properties_;
  std::string description_ = "Hailo device", library_version_ = "unknown";
  uint64_t frames_since_configure_ = 0;
  // A run_async_for_duration whose wait expired: the device may still loop.
  std::optional<hailort::AsyncInferJob> pending_loop_;
  std::atomic<bool> cancel_{false};
};

Result<DurationRun> HailoDevice::do_run_for_duration(BindingId binding, Nanos duration,
                                                     Nanos sleep_between) {
  Bound* b = &bindings_[binding];
  if (auto ok = ready_to_infer(); !ok) return tl::unexpected(ok.error());
  cancel_.store(false);
  DurationRun run;
  const auto duration_ms = ceil_ms(duration);
  const auto sleep_ms = ceil_ms(sleep_between);
  if (Nanos(duration_ms) != duration || Nanos(sleep_ms) != sleep_between)
    run.notes.push_back("HailoRT takes whole milliseconds: the loop ran " +
                        std::to_string(duration_ms.count()) + " ms with " +
                        std::to_string(sleep_ms.count()) + " ms between frames");

  struct Outcome {
    std::mutex mu;
    hailo_status status = HAILO_UNINITIALIZED;
    uint32_t fps = 0;
  };
  auto outcome = std::make_shared<Outcome>();
  const Nanos t0 = clock_.now();
  auto job = configured_.run_async_for_duration(
      b->hailo, static_cast<uint32_t>(duration_ms.count()), static_cast<uint32_t>(sleep_ms.count()),
      [outcome](const hailort::AsyncInferCompletionInfo& info, uint32_t fps) {
        std::lock_guard lock(outcome->mu);
        outcome->status = info.status;
        outcome->fps = fps;
      });
  if (!job)
    return infer_failed(status_error(job.status(), "ConfiguredInferModel::run_async_for_duration"));
  payload_in_ += model_info().input_bytes();
  const auto budget = duration_ms + sleep_ms + 15s;
  const auto wait_status = job->wait(budget);
  const Nanos wall = clock_.now() - t0;
  // The device side shut the model down, whatever the reply said.
  needs_reconfigure_ = true;
  hailo_status status;
  uint32_t fps;
  {
    std::lock_guard lock(outcome->mu);
    status = wait_status != HAILO_SUCCESS && outcome->status == HAILO_UNINITIALIZED
                 ? wait_status
                 : outcome->status;
    fps = outcome->fps;
  }
  if (status == HAILO_TIMEOUT) {
    // No answer: the device may still be looping. rig re-configures only once
    // the loop answers (the next call waits for it).
    pending_loop_.emplace(job.release());
    collect_log(pending_warnings_);
    return fail(ErrorCode::timeout,
                "hailo: run_async_for_duration did not answer within " +
                    format_duration(Nanos(budget)) +
                    " (the loop, its sleep and 15 s); the device may still be looping, so rig "
                    "re-configures only after it answers");
  }
  // seeds/000: over hRPC (Hailo-10H) the host parses the reply from the
  // header's offset, so every non-zero rate fails with 77 after the whole
  // loop. Recognised by that behaviour, not by a version number.
  const bool hrpc_bug = status == HAILO_RPC_FAILED && wall >= duration_ms * 9 / 10;
  auto reconfigured = reconfigure(&run.notes);
  collect_log(pending_warnings_);
  if (status == HAILO_SUCCESS) {
    payload_out_ += model_info().output_bytes();
    run.frames_completed.reset();
    run.frames_aborted.reset();
    run.elapsed = duration_ms;
    // HailoRT's loop counts every callback, those of the frames its own
    // shutdown() aborts included (infer_model.cpp, 5.1.1 and 5.2.0): up to a
    // queue's worth beyond the frames completed. So the completed rate lies
    // in [fps - queue / duration, fps + 1).
    const double seconds = to_seconds(Nanos(duration_ms));
    const double slack = static_cast<double>(async_queue_size_) / seconds;
    const double lower = std::max(0.0, static_cast<double>(fps) - slack);
    run.frames_per_second = lower;
    run.rate_step = static_cast<double>(fps) + 1 - lower;
    run.notes.push_back(
        "HailoRT reports the loop's rate as a whole number (uint32_t fps = " + std::to_string(fps) +
        ", truncated) that counts the frames its shutdown() aborted at the end as done, up to "
        "the async queue (" +
        std::to_string(async_queue_size_) + " frames over " + format_duration(Nanos(duration_ms)) +
        "), and no frame count: the completed rate lies in [" + fixed2(lower) + ", " +
        std::to_string(fps + 1) +
        ") frames/s and the completed and aborted frame counts are unknown");
    if (fps == 0)
      run.notes.push_back(
          "HailoRT reported 0 frames/s: fewer than one frame per second completed; lengthen "
          "the duration or shorten the sleep between frames");
    if (!reconfigured) return tl::unexpected(reconfigured.error());
    return run;
  }
  // The loop's own status is the error; a re-configure that failed after it
  // is its second part (the next call re-configures again).
  auto then_reconfigure = [&](Error e) {
    if (!reconfigured) e.message += "; then re-configuring failed: " + reconfigured.error().message;
    return e;
  };
  if (!hrpc_bug)
    return infer_failed(then_reconfigure(status_error(status, "run_async_for_duration")));
  const std::string explanation =
      "HailoRT " + library_version_ + "'s run_async_for_duration failed with " +
      status_name(status) + " after the whole " + format_duration(Nanos(duration_ms)) + " loop (" +
      format_duration(wall) +
      "): the known host-side hRPC bug (seeds/000), where the host parses the reply body from "
      "the header's offset; the one-line fix in configured_infer_model_hrpc_client.cpp is "
      "deserialize_reply(MemoryView(reply.body.data(), reply.header.size)) instead of "
      "reply.buffer->data()";
  if (!p_.host_loop_fallback)
    return tl::unexpected(then_reconfigure(
        Error{ErrorCode::device, explanation + " (fallback=none: no loop figure)"}));
  if (!reconfigured)
    return tl::unexpected(then_reconfigure(
        Error{ErrorCode::device, explanation + "; the fallback loop could not run"}));
  if (cancel_.load())
    return fail(ErrorCode::device, explanation + "; cancelled before the fallback loop ran");
  auto fallback = host_loop(*b, duration, sleep_between);
  if (!fallback) return fallback;
  DurationRun out = std::move(*fallback);
  out.notes.insert(out.notes.begin(), run.notes.begin(), run.notes.end());
  out.notes.insert(out.notes.begin(), explanation);
  return out;
}

// The nearest honest figure when the on-device loop is unavailable: a
// pipelined loop at full queue depth, one request per binding on
// device-owned page-aligned buffers, all fed the caller's input bytes.
Result<DurationRun> HailoDevice::host_loop(const Bound& source, Nanos duration,
                                           Nanos sleep_between) {
  const uint32_t depth = sleep_between > Nanos(0) ? 1 : queue_depth();
  struct Slot {
    std::vector<std::unique_ptr<PageBuffer>> inputs, outputs;
    hailort::ConfiguredInferModel::Bindings hailo;
    bool mapped = false;
  };
  // Every request's callback holds the slots: a request that outlives the
  // loop (a wait that expired) never writes into freed memory.
  auto owned = std::make_shared<std::vector<Slot>>(depth);
  std::vector<Slot>& slots = *owned;
  for (auto& slot : slots) {
    auto created = configured_.create_bindings();
    if (!created) return infer_failed(status_error(created.status(), "create_bindings"));
    slot.hailo = created.release();
    for (size_t i = 0; i < model_info().inputs.size(); ++i) {
      const auto& src = source.buffers.inputs[i];
      slot.inputs.push_back(std::make_unique<PageBuffer>(src.size()));
      if (slot.inputs.back()->data == nullptr)
        return fail(ErrorCode::limit_exceeded,
                    "hailo: cannot allocate the fallback loop's buffers");
      std::memcpy(slot.inputs.back()->data, src.data(), src.size());
      auto stream = slot.hailo.input(model_info().inputs[i].name);
      if (!stream) return infer_failed(status_error(stream.status(), "Bindings::input"));
      if (auto st = stream->set_buffer(hailort::MemoryView(slot.inputs.back()->data, src.size()));
          st != HAILO_SUCCESS)
        return infer_failed(status_error(st, "set_buffer (fallback loop)"));
      if (p_.dma_map && vdevice_->dma_map(slot.inputs.back()->data, src.size(),
                                          HAILO_DMA_BUFFER_DIRECTION_H2D) == HAILO_SUCCESS)
        slot.mapped = true;
    }
    for (size_t i = 0; i < model_info().outputs.size(); ++i) {
      const size_t n = model_info().outputs[i].bytes;
      slot.outputs.push_back(std::make_unique<PageBuffer>(n));
      if (slot.outputs.back()->data == nullptr)
        return fail(ErrorCode::limit_exceeded,
                    "hailo: cannot allocate the fallback loop's buffers");
      auto stream = slot.hailo.output(model_info().outputs[i].name);
      if (!stream) return infer_failed(status_error(stream.status(), "Bindings::output"));
      if (auto st = stream->set_buffer(hailort::MemoryView(slot.outputs.back()->data, n));
          st != HAILO_SUCCESS)
        return infer_failed(status_error(st, "set_buffer (fallback loop)"));
      if (p_.dma_map && vdevice_->dma_map(slot.outputs.back()->data, n,
                                          HAILO_DMA_BUFFER_DIRECTION_D2H) == HAILO_SUCCESS)
        slot.mapped = true;
    }
  }
  struct Done {
    uint32_t slot;
    hailo_status status;
    Nanos at;
  };
  struct Loop {
    std::mutex mu;
    std::deque<Done> done;
  };
  auto loop = std::make_shared<Loop>();
  std::deque<std::pair<uint32_t, hailort::AsyncInferJob>> jobs;
  std::vector<uint32_t> free_slots;
  for (uint32_t i = depth; i-- > 0;) free_slots.push_back(i);
  uint64_t completed = 0, aborted = 0, submitted = 0;
  std::optional<uint32_t> last;
  std::optional<Error> failure;
  const Nanos start = clock_.now();
  const Nanos deadline = start + duration;
  Nanos stopped_at = deadline;
  Nanos next_submit = start;
  Clock* clock = &clock_;
  auto drain_done = [&] {
    std::deque<Done> done;
    {
      std::lock_guard lock(loop->mu);
      done.swap(loop->done);
    }
    for (const auto& d : done) {
      auto it =
          std::find_if(jobs.begin(), jobs.end(), [&](const auto& j) { return j.first == d.slot; });
      if (it != jobs.end()) jobs.erase(it);
      free_slots.push_back(d.slot);
      if (d.status != HAILO_SUCCESS) {
        if (!failure) failure = status_error(d.status, "inference in the fallback loop");
        ++aborted;
      } else if (d.at <= stopped_at) {
        ++frames_since_configure_;
        ++completed;
        last = d.slot;
        payload_out_ += model_info().output_bytes();
      } else {
        ++frames_since_configure_;  // the device ran it: HailoRT's mean counts it
        ++aborted;                  // finished after the end: cut off, never completed
      }
    }
  };
  while (true) {
    if (cancel_.load() && stopped_at == deadline) stopped_at = std::min(clock_.now(), deadline);
    const bool open = clock_.now() < stopped_at && !failure;
    if (open && !free_slots.empty() && clock_.now() >= next_submit) {
      const uint32_t s = free_slots.back();
      if (auto st = configured_.wait_for_async_ready(ceil_ms(kRunTimeout)); st != HAILO_SUCCESS) {
        failure = status_error(st, "wait_for_async_ready (fallback loop)");
        continue;
      }
      auto job = configured_.run_async(
          slots[s].hailo, [loop, clock, s, owned](const hailort::AsyncInferCompletionInfo& info) {
            std::lock_guard lock(loop->mu);
            loop->done.push_back(Done{s, info.status, clock->now()});
          });
      if (!job) {
        failure = status_error(job.status(), "run_async (fallback loop)");
        continue;
      }
      free_slots.pop_back();
      jobs.emplace_back(s, job.release());
      ++submitted;
      payload_in_ += model_info().input_bytes();
      if (sleep_between > Nanos(0)) next_submit = clock_.now() + sleep_between;
      continue;
    }
    if (jobs.empty()) {
      if (!open) break;
      clock_.sleep_until(std::min(next_submit, stopped_at));  // a sleep between frames
      continue;
    }
    const auto st = jobs.front().second.wait(ceil_ms(kRunTimeout));
    drain_done();
    if (st != HAILO_SUCCESS && !failure)
      failure = status_error(st, "AsyncInferJob::wait (fallback loop)");
    if (st != HAILO_SUCCESS) break;
  }
  // After a failed wait, requests may still be on the device: they get one
  // more wait, then shutdown() aborts them (the model is re-configured before
  // the next run). Their callbacks keep the slots alive either way.
  for (auto& [slot, job] : jobs) (void)job.wait(ceil_ms(kRunTimeout));
  drain_done();
  if (!jobs.empty()) {
    (void)configured_.shutdown();
    needs_reconfigure_ = true;
    drain_done();
  }
  const bool unfinished = !jobs.empty();
  for (auto& slot : slots) {
    if (!slot.mapped || unfinished) continue;
    for (size_t i = 0; i < slot.inputs.size(); ++i)
      vdevice_->dma_unmap(slot.inputs[i]->data, model_info().inputs[i].bytes,
                          HAILO_DMA_BUFFER_DIRECTION_H2D);
    for (size_t i = 0; i < slot.outputs.size(); ++i)
      vdevice_->dma_unmap(slot.outputs[i]->data, model_info().outputs[i].bytes,
                          HAILO_DMA_BUFFER_DIRECTION_D2H);
  }
  if (failure && completed == 0) return infer_failed(*failure);
  if (last)
    for (size_t i = 0; i < model_info().outputs.size(); ++i)
      std::memcpy(source.buffers.outputs[i].data(), slots[*last].outputs[i]->data,
                  model_info().outputs[i].bytes);
  DurationRun run;
  run.frames_completed = completed;
  run.frames_aborted = aborted;
  run.elapsed = stopped_at - start;
  run.frames_per_second =
      run.elapsed > Nanos(0) ? static_cast<double>(completed) / to_seconds(run.elapsed) : 0;
  run.includes_transfers = true;
  run.notes.push_back("fallback=host_loop: rig measured a pipelined loop at depth " +
                      std::to_string(depth) + " on " + std::to_string(depth) +
                      " bindings, all fed the same input bytes; every frame crossed the link, so "
                      "this rate includes the per-frame transfers (" +
                      std::to_string(submitted) + " frames submitted)");
  if (failure) run.notes.push_back("the fallback loop stopped early: " + failure->to_string());
  if (needs_reconfigure_)
    run.notes.push_back(
        "requests of the fallback loop did not finish: rig shut the configured model down "
        "(HailoRT aborts them) and re-configures it before the next run");
  if (unfinished)
    run.notes.push_back(std::to_string(jobs.size()) +
                        " requests still had not finished after shutdown: their buffers stay "
                        "allocated (and mapped) until HailoRT calls them back");
  collect_log(pending_warnings_);
  return run;
}

}  // namespace

Result<std::unique_ptr<Device>> open_hailo_device(const std::map<std::string, std::string>& params,
                                                  Clock& clock) {
  auto p = parse_params(params);
  if (!p) return tl::unexpected(p.error());
  auto device = std::make_unique<HailoDevice>(std::move(*p), clock);
  if (auto ok = device->open(); !ok) return tl::unexpected(ok.error());
  return std::unique_ptr<Device>(std::move(device));
}

}  // namespace rig

// The HailoRT test double's behaviour: see hailo_double.hpp.
#include "hailo_double.hpp"

#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

namespace hailort {

class AsyncInferJobBase {
 public:
  bool done = false;
  hailo_status status = HAILO_UNINITIALIZED;  // the completion's, once done
};

// One request on the device: its completion runs once, whether it finishes
// or shutdown() aborts it first.
struct DoubleRequest {
  std::shared_ptr<AsyncInferJobBase> job;
  std::function<void(const AsyncInferCompletionInfo&)> callback;
  std::vector<MemoryView> outputs;
  uint64_t hash = 0;
  bool finished = false;
};

class ConfiguredInferModel::Bindings::InferStream::Impl {
 public:
  std::string name;
  size_t frame_size = 0;
  MemoryView buffer;
  bool set = false;
};

class InferModel::InferStream::Impl {
 public:
  std::string name;
  hailo_3d_image_shape_t shape{};
  hailo_format_t format{};
  bool nms = false;  // an NMS output (nms_on_chip in the double's HEF)
};

struct ModelDesc {
  std::vector<InferModel::InferStream> inputs, outputs;
  std::vector<std::string> input_names, output_names;
  std::vector<std::string> groups;  // the HEF's network groups; the streams are the first's
  bool nms_on_chip = false;  // an output's physical layer is HAILO_FORMAT_ORDER_HAILO_NMS_ON_CHIP
};

class Hef::Impl {
 public:
  std::shared_ptr<ModelDesc> desc;
};

class ConfiguredInferModelBase {
 public:
  ConfiguredInferModelBase();
  ~ConfiguredInferModelBase();
  ConfiguredInferModelBase(const ConfiguredInferModelBase&) = delete;
  ConfiguredInferModelBase& operator=(const ConfiguredInferModelBase&) = delete;
  std::shared_ptr<ModelDesc> model;
  bool scheduled = true;  // the VDevice's scheduler is on
  bool active = false;    // activate() without the scheduler
  uint32_t in_flight = 0;
  uint64_t latency_frames = 0;    // frames since configure (the latency meter's count)
  bool latency_measured = false;  // configured with HAILO_LATENCY_MEASURE
  bool shut_down = false;
  std::vector<std::shared_ptr<DoubleRequest>> requests;  // not yet finished
};

}  // namespace hailort

namespace hailo_double {
namespace {

using namespace hailort;

const char* const kStatusNames[] = {"HAILO_SUCCESS",
                                    "HAILO_UNINITIALIZED",
                                    "HAILO_INVALID_ARGUMENT",
                                    "HAILO_OUT_OF_HOST_MEMORY",
                                    "HAILO_TIMEOUT",
                                    "HAILO_INSUFFICIENT_BUFFER",
                                    "HAILO_INVALID_OPERATION",
                                    "HAILO_NOT_IMPLEMENTED",
                                    "HAILO_INTERNAL_FAILURE",
                                    "HAILO_DATA_ALIGNMENT_FAILURE",
                                    "HAILO_CHUNK_TOO_LARGE",
                                    "HAILO_INVALID_LOGGER_LEVEL",
                                    "HAILO_CLOSE_FAILURE",
                                    "HAILO_OPEN_FILE_FAILURE",
                                    "HAILO_FILE_OPERATION_FAILURE",
                                    "HAILO_UNSUPPORTED_CONTROL_PROTOCOL_VERSION",
                                    "HAILO_UNSUPPORTED_FW_VERSION",
                                    "HAILO_INVALID_CONTROL_RESPONSE",
                                    "HAILO_FW_CONTROL_FAILURE",
                                    "HAILO_ETH_FAILURE",
                                    "HAILO_ETH_INTERFACE_NOT_FOUND",
                                    "HAILO_ETH_RECV_FAILURE",
                                    "HAILO_ETH_SEND_FAILURE",
                                    "HAILO_INVALID_FIRMWARE",
                                    "HAILO_INVALID_CONTEXT_COUNT",
                                    "HAILO_INVALID_FRAME",
                                    "HAILO_INVALID_HEF",
                                    "HAILO_PCIE_NOT_SUPPORTED_ON_PLATFORM",
                                    "HAILO_INTERRUPTED_BY_SIGNAL",
                                    "HAILO_START_VDMA_CHANNEL_FAIL",
                                    "HAILO_SYNC_VDMA_BUFFER_FAIL",
                                    "HAILO_STOP_VDMA_CHANNEL_FAIL",
                                    "HAILO_CLOSE_VDMA_CHANNEL_FAIL",
                                    "HAILO_ATR_TABLES_CONF_VALIDATION_FAIL",
                                    "HAILO_EVENT_CREATE_FAIL",
                                    "HAILO_READ_EVENT_FAIL",
                                    "HAILO_DRIVER_OPERATION_FAILED",
                                    "HAILO_INVALID_FIRMWARE_MAGIC",
                                    "HAILO_INVALID_FIRMWARE_CODE_SIZE",
                                    "HAILO_INVALID_KEY_CERTIFICATE_SIZE",
                                    "HAILO_INVALID_CONTENT_CERTIFICATE_SIZE",
                                    "HAILO_MISMATCHING_FIRMWARE_BUFFER_SIZES",
                                    "HAILO_INVALID_FIRMWARE_CPU_ID",
                                    "HAILO_CONTROL_RESPONSE_MD5_MISMATCH",
                                    "HAILO_GET_CONTROL_RESPONSE_FAIL",
                                    "HAILO_GET_D2H_EVENT_MESSAGE_FAIL",
                                    "HAILO_MUTEX_INIT_FAIL",
                                    "HAILO_OUT_OF_DESCRIPTORS",
                                    "HAILO_UNSUPPORTED_OPCODE",
                                    "HAILO_USER_MODE_RATE_LIMITER_NOT_SUPPORTED",
                                    "HAILO_RATE_LIMIT_MAXIMUM_BANDWIDTH_EXCEEDED",
                                    "HAILO_ANSI_TO_UTF16_CONVERSION_FAILED",
                                    "HAILO_UTF16_TO_ANSI_CONVERSION_FAILED",
                                    "HAILO_UNEXPECTED_INTERFACE_INFO_FAILURE",
                                    "HAILO_UNEXPECTED_ARP_TABLE_FAILURE",
                                    "HAILO_MAC_ADDRESS_NOT_FOUND",
                                    "HAILO_NO_IPV4_INTERFACES_FOUND",
                                    "HAILO_SHUTDOWN_EVENT_SIGNALED",
                                    "HAILO_THREAD_ALREADY_ACTIVATED",
                                    "HAILO_THREAD_NOT_ACTIVATED",
                                    "HAILO_THREAD_NOT_JOINABLE",
                                    "HAILO_NOT_FOUND",
                                    "HAILO_COMMUNICATION_CLOSED",
                                    "HAILO_STREAM_ABORT",
                                    "HAILO_DRIVER_NOT_INSTALLED",
                                    "HAILO_NOT_AVAILABLE",
                                    "HAILO_TRAFFIC_CONTROL_FAILURE",
                                    "HAILO_INVALID_SECOND_STAGE",
                                    "HAILO_INVALID_PIPELINE",
                                    "HAILO_NETWORK_GROUP_NOT_ACTIVATED",
                                    "HAILO_VSTREAM_PIPELINE_NOT_ACTIVATED",
                                    "HAILO_OUT_OF_FW_MEMORY",
                                    "HAILO_STREAM_NOT_ACTIVATED",
                                    "HAILO_DEVICE_IN_USE",
                                    "HAILO_OUT_OF_PHYSICAL_DEVICES",
                                    "HAILO_INVALID_DEVICE_ARCHITECTURE",
                                    "HAILO_INVALID_DRIVER_VERSION",
                                    "HAILO_RPC_FAILED",
                                    "HAILO_INVALID_SERVICE_VERSION",
                                    "HAILO_NOT_SUPPORTED",
                                    "HAILO_NMS_BURST_INVALID_DATA",
                                    "HAILO_OUT_OF_HOST_CMA_MEMORY",
                                    "HAILO_QUEUE_IS_FULL",
                                    "HAILO_DMA_MAPPING_ALREADY_EXISTS",
                                    "HAILO_CANT_MEET_BUFFER_REQUIREMENTS",
                                    "HAILO_DRIVER_INVALID_RESPONSE",
                                    "HAILO_DRIVER_INVALID_IOCTL",
                                    "HAILO_DRIVER_TIMEOUT",
                                    "HAILO_DRIVER_INTERRUPTED",
                                    "HAILO_CONNECTION_REFUSED",
                                    "HAILO_DRIVER_WAIT_CANCELED",
                                    "HAILO_HEF_FILE_CORRUPTED",
                                    "HAILO_HEF_NOT_SUPPORTED",
                                    "HAILO_HEF_NOT_COMPATIBLE_WITH_DEVICE",
                                    "HAILO_INVALID_HEF_USE",
                                    "HAILO_OPERATION_ABORTED",
                                    "HAILO_DEVICE_NOT_CONNECTED",
                                    "HAILO_DEVICE_TEMPORARILY_UNAVAILABLE"};

const char* const kDefaultGroup = "network_group0";

struct Event {
  Nanos at;
  uint64_t seq;
  bool operator<(const Event& o) const { return at != o.at ? at < o.at : seq < o.seq; }
};

// HailoRT calls completion callbacks on its own threads, never on the thread
// that waits (configured_infer_model_hrpc_client.cpp's callback dispatcher on
// H10, the pipeline's threads on other devices; v5.1.1). The double hands
// each callback to one thread of its own and waits for it to return, so the
// order of events stays deterministic.
class CallbackThread {
 public:
  CallbackThread() : thread_([this] { loop(); }) {}
  ~CallbackThread() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  CallbackThread(const CallbackThread&) = delete;
  CallbackThread& operator=(const CallbackThread&) = delete;
  void run(std::function<void()> fn) {
    std::unique_lock lock(mu_);
    task_ = std::move(fn);
    cv_.notify_all();
    cv_.wait(lock, [this] { return !task_; });
  }
  std::thread::id id() const { return thread_.get_id(); }

 private:
  void loop() {
    std::unique_lock lock(mu_);
    while (true) {
      cv_.wait(lock, [this] { return stop_ || task_; });
      if (!task_) return;
      auto fn = std::move(task_);
      lock.unlock();
      fn();
      lock.lock();
      task_ = nullptr;
      cv_.notify_all();
    }
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::function<void()> task_;
  bool stop_ = false;
  std::thread thread_;
};

struct State {
  Script script;
  Counters counters;
  rig::VirtualClock clock;
  std::map<Event, std::function<void()>> events;
  uint64_t seq = 0;
  Nanos in_free{0}, compute_free{0}, out_free{0};
  bool logger_created = false;
  std::string main_log, local_log;  // "": a null sink
  // The sinks stay open for the process's life, as spdlog's file sinks do.
  std::FILE* main_file = nullptr;
  std::FILE* local_file = nullptr;
  const ConfiguredInferModelBase* active = nullptr;  // without the scheduler: the one activated
  CallbackThread callbacks;
  State() {
    clock.set_sleeper([this](Nanos t) { advance_to(t); });
  }
  // A query that is a round trip to the device over hRPC on Hailo-10H.
  void rpc() {
    if (script.architecture != HAILO_ARCH_HAILO10H) return;
    ++counters.rpc_queries;
    advance_to(clock.now() + script.rpc_round_trip);
  }
  void advance_to(Nanos t) {
    while (!events.empty() && events.begin()->first.at <= t) {
      auto node = events.extract(events.begin());
      clock.advance_to(node.key().at);
      node.mapped()();
    }
    clock.advance_to(t);
  }
  void schedule(Nanos at, std::function<void()> fn) {
    events.emplace(Event{at, seq++}, std::move(fn));
  }
  // Processes events until pred() holds or `timeout` passes on the clock.
  hailo_status wait(const std::function<bool()>& pred, std::chrono::milliseconds timeout) {
    const Nanos deadline = clock.now() + timeout;
    while (!pred()) {
      if (events.empty() || events.begin()->first.at > deadline) {
        advance_to(deadline);
        return pred() ? HAILO_SUCCESS : HAILO_TIMEOUT;
      }
      advance_to(events.begin()->first.at);
    }
    return HAILO_SUCCESS;
  }
};

State& state() {
  static State s;
  return s;
}

size_t page_size() {
  return static_cast<size_t>(::sysconf(_SC_PAGESIZE));
}

// HailoRT's logger (utils/hailort_logger.cpp, v5.1.1 and v5.2.0): created
// once, before main, by a static initializer in libhailort
// (COMPAT__INITIALIZER(hailort__initialize_logger), hailort.cpp). Its sinks:
//  * the local file $HAILORT_LOGGER_PATH/hailort.log (unset or empty: the
//    working directory; NONE: none), pattern [time] [tid] [HailoRT] [level]
//    [file:line] [function] message;
//  * the main file $HOME/.hailo/hailort/hailort.log (HOME unset: the
//    passwd entry's home), made with its folders, pattern [time] [pid] [tid]
//    [HailoRT] [level] [file:line] [function] message; none when
//    HAILORT_LOGGER_PATH is NONE.
// Both read the environment at that moment only. A file sink HailoRT cannot
// open is a null sink, dropping every record without a word in the log
// (create_file_sink: a folder it cannot write, or an existing hailort.log
// the user cannot write, by access(W_OK)); the sinks it opens stay open for
// the process's life (spdlog's file_helper). (Rotation at 1 MB is not
// modelled.)
std::FILE* open_sink(const std::string& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec) || ::access(dir.c_str(), W_OK) != 0) return nullptr;
  const std::string file = dir + "/hailort.log";
  if (std::filesystem::exists(file, ec) && ::access(file.c_str(), W_OK) != 0) return nullptr;
  return std::fopen(file.c_str(), "ab");
}

void ensure_logger() {
  State& s = state();
  if (s.logger_created) return;
  s.logger_created = true;
  const char* env = std::getenv("HAILORT_LOGGER_PATH");
  const std::string local = (env == nullptr || *env == '\0') ? "." : env;
  if (local == "NONE") return;
  std::error_code ec;
  if (!std::filesystem::is_directory(local, ec)) std::filesystem::create_directory(local, ec);
  if ((s.local_file = open_sink(local)) != nullptr) s.local_log = local + "/hailort.log";
  const char* home = std::getenv("HOME");
  if (home == nullptr) return;  // (HailoRT asks getpwuid; the double does not)
  const std::string dir = std::string(home) + "/.hailo/hailort";
  std::filesystem::create_directories(dir, ec);
  if ((s.main_file = open_sink(dir)) != nullptr) s.main_log = dir + "/hailort.log";
}

// Before main, as libhailort's logger.
const bool kLoggerBeforeMain = (ensure_logger(), true);

// `where` is the record's [file:line] [function] group pair, as HailoRT's
// pattern writes it ("[%s:%#] [%!]": the source's file name, its line, the
// unqualified function name).
void write_log(const std::string& level, const std::string& message,
               const std::string& where = "[double.cpp:1] [double]") {
  ensure_logger();
  State& s = state();
  const double t = static_cast<double>(s.clock.now().count()) / 1e9;
  char stamp[64];
  std::snprintf(stamp, sizeof stamp, "[2026-12-01 12:00:%06.3f]", t);
  const std::string tail = " [4242] [HailoRT] [" + level + "] " + where + " " + message + "\n";
  if (s.local_file) {
    std::fputs((stamp + tail).c_str(), s.local_file);
    std::fflush(s.local_file);  // warnings and above are flushed at once
  }
  if (s.main_file) {
    std::fputs((stamp + (" [" + std::to_string(::getpid()) + "]") + tail).c_str(), s.main_file);
    std::fflush(s.main_file);
  }
}

// hrpc/client.cpp's Client::execute_request (v5.1.1, v5.2.0) waits on a
// condition variable without a predicate: a reply that comes before the wait
// is lost, and the call fails with HAILO_TIMEOUT after the request's timeout
// (REQUEST_TIMEOUT, 10 s, hrpc/client.hpp; configure's
// LONG_RPC_ACTION_TIMEOUT, 45 s, hrpc_protocol/serializer.hpp). Its caller's
// TRY logs "CHECK_SUCCESS failed with status=HAILO_TIMEOUT(4)" at the
// caller's [file:line] [function] (execute_request itself logs nothing). Only
// over hRPC: the H10 client.
constexpr Nanos kRequestTimeout = std::chrono::seconds(10);
constexpr Nanos kLongRequestTimeout = std::chrono::seconds(45);
bool lose_reply(const std::string& call, const std::string& where, Nanos timeout) {
  State& s = state();
  if (s.script.architecture != HAILO_ARCH_HAILO10H) return false;
  auto& calls = s.script.lose_reply;
  auto it = std::find(calls.begin(), calls.end(), call);
  if (it == calls.end()) return false;
  calls.erase(it);
  ++s.counters.lost_replies;
  s.advance_to(s.clock.now() + timeout);
  write_log("error", "CHECK_SUCCESS failed with status=HAILO_TIMEOUT(4)", where);
  return true;
}

size_t element_bytes(hailo_format_type_t t) {
  switch (t) {
    case HAILO_FORMAT_TYPE_UINT16:
      return 2;
    case HAILO_FORMAT_TYPE_FLOAT32:
      return 4;
    default:
      return 1;
  }
}

Expected<std::shared_ptr<ModelDesc>> parse_hef(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  if (!std::getline(in, line) || line != "hailo-double-hef")
    return make_unexpected(HAILO_INVALID_HEF);
  auto desc = std::make_shared<ModelDesc>();
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::istringstream l(line);
    std::string kind, name, dims, type, flag;
    if (line.rfind("network_group ", 0) == 0) {
      if (!(l >> kind >> name)) return make_unexpected(HAILO_INVALID_HEF);
      desc->groups.push_back(name);
      continue;
    }
    if (!(l >> kind >> name >> dims >> type)) return make_unexpected(HAILO_INVALID_HEF);
    auto impl = std::make_shared<InferModel::InferStream::Impl>();
    impl->name = name;
    if (l >> flag) {
      if (flag != "nms_on_chip" || kind != "output") return make_unexpected(HAILO_INVALID_HEF);
      impl->nms = true;
      desc->nms_on_chip = true;
    }
    unsigned h = 0, w = 0, f = 0;
    if (std::sscanf(dims.c_str(), "%ux%ux%u", &h, &w, &f) != 3 || h == 0 || w == 0 || f == 0)
      return make_unexpected(HAILO_INVALID_HEF);
    impl->shape = {h, w, f};
    impl->format.order = impl->nms ? HAILO_FORMAT_ORDER_HAILO_NMS : HAILO_FORMAT_ORDER_NHWC;
    impl->format.flags = HAILO_FORMAT_FLAGS_NONE;
    if (type == "uint8")
      impl->format.type = HAILO_FORMAT_TYPE_UINT8;
    else if (type == "uint16")
      impl->format.type = HAILO_FORMAT_TYPE_UINT16;
    else if (type == "float32")
      impl->format.type = HAILO_FORMAT_TYPE_FLOAT32;
    else
      return make_unexpected(HAILO_INVALID_HEF);
    if (kind == "input") {
      desc->inputs.emplace_back(impl);
      desc->input_names.push_back(name);
    } else if (kind == "output") {
      desc->outputs.emplace_back(impl);
      desc->output_names.push_back(name);
    } else {
      return make_unexpected(HAILO_INVALID_HEF);
    }
  }
  if (desc->inputs.empty() || desc->outputs.empty()) return make_unexpected(HAILO_INVALID_HEF);
  if (desc->groups.empty()) desc->groups.push_back(kDefaultGroup);
  return Expected<std::shared_ptr<ModelDesc>>(std::move(desc));
}

// The name create_infer_model takes, as HailoRT resolves it
// (Hef::Impl::get_network_group_and_network_name, hef/hef.cpp, and
// InferModelBase::create, net_flow/pipeline/infer_model.cpp; v5.1.1 and
// v5.2.0): "" is the first network group; a group's name is that group; a
// network's name ("GROUP/NETWORK", or HailoRT's default "GROUP/GROUP") is
// found but refused with HAILO_NOT_IMPLEMENTED; anything else is
// HAILO_NOT_FOUND, logged at error level.
hailo_status resolve_name(const ModelDesc& desc, const std::string& name) {
  if (name.empty()) return HAILO_SUCCESS;
  for (const auto& g : desc.groups) {
    if (name == g) return HAILO_SUCCESS;
    if (name == g + "/" + g) {
      write_log("error", "Passing network name is not supported yet!");
      return HAILO_NOT_IMPLEMENTED;
    }
  }
  write_log("error", "Failed to find network or network_group with the name '" + name + "'");
  return HAILO_NOT_FOUND;
}

class DoubleDevice final : public Device {
 public:
  explicit DoubleDevice(std::string id) : Device(state().script.device_type), id_(std::move(id)) {}
  Expected<hailo_device_identity_t> identify() override {
    state().rpc();
    if (lose_reply("identify", "[device_hrpc_client.cpp:111] [identify]", kRequestTimeout))
      return make_unexpected(HAILO_TIMEOUT);
    const Script& sc = state().script;
    hailo_device_identity_t i{};
    i.fw_version = sc.firmware;
    i.device_architecture = sc.architecture;
    const size_t n = std::min(sc.board_name.size(), sizeof i.board_name);
    std::memcpy(i.board_name, sc.board_name.data(), n);
    i.board_name_length = static_cast<uint8_t>(n);
    i.is_release = true;
    return Expected<hailo_device_identity_t>(std::move(i));
  }
  Expected<float32_t> power_measurement(hailo_dvm_options_t,
                                        hailo_power_measurement_types_t) override {
    state().rpc();
    if (lose_reply("power_measurement", "[device_hrpc_client.cpp:178] [power_measurement]",
                   kRequestTimeout))
      return make_unexpected(HAILO_TIMEOUT);
    const Script& sc = state().script;
    if (!sc.power_w) return make_unexpected(sc.power_status);
    return Expected<float32_t>(float32_t(*sc.power_w));
  }
  Expected<hailo_chip_temperature_info_t> get_chip_temperature() override {
    state().rpc();
    if (lose_reply("get_chip_temperature", "[device_hrpc_client.cpp:136] [get_chip_temperature]",
                   kRequestTimeout))
      return make_unexpected(HAILO_TIMEOUT);
    const Script& sc = state().script;
    if (!sc.temperature_c) return make_unexpected(sc.temperature_status);
    hailo_chip_temperature_info_t t{*sc.temperature_c, *sc.temperature_c, 1};
    return Expected<hailo_chip_temperature_info_t>(std::move(t));
  }
  Expected<hailo_device_architecture_t> get_architecture() const override {
    if (lose_reply("get_architecture", "[device_hrpc_client.cpp:251] [get_architecture]",
                   kRequestTimeout))
      return make_unexpected(HAILO_TIMEOUT);
    return Expected<hailo_device_architecture_t>(
        hailo_device_architecture_t(state().script.architecture));
  }
  const char* get_dev_id() const override { return id_.c_str(); }

 private:
  std::string id_;
};

// Configured models the device made although their reply was lost: the
// server keeps them until the client's VDevice goes.
using Orphans = std::vector<std::shared_ptr<ConfiguredInferModelBase>>;

class DoubleInferModel final : public InferModel {
 public:
  DoubleInferModel(std::shared_ptr<ModelDesc> desc, bool scheduled, std::string name,
                   std::weak_ptr<Orphans> orphans)
      : desc_(std::move(desc)),
        scheduled_(scheduled),
        name_(std::move(name)),
        orphans_(std::move(orphans)) {}
  void set_batch_size(uint16_t batch_size) override {
    state().counters.batch_size = batch_size;
    batch_ = batch_size;
  }
  void set_power_mode(hailo_power_mode_t mode) override { state().counters.power_mode = mode; }
  void set_hw_latency_measurement_flags(hailo_latency_measurement_flags_t flags) override {
    state().counters.latency_flags = static_cast<uint32_t>(flags);
    latency_ = (flags & HAILO_LATENCY_MEASURE) != 0;
  }
  // Refused where HailoRT's configure refuses (v5.1.1 and v5.2.0): a latency
  // meter for an on-chip NMS output or more than one physical input
  // (create_hw_latency_meter, core_op/resource_manager/resource_manager.cpp:
  // HAILO_INVALID_OPERATION, its warning written where the core runs: on H10
  // the device's server, whose status the client's TRY logs); "" for a HEF of
  // several network groups (InferModelBase::configure, net_flow/pipeline/
  // infer_model.cpp: HAILO_INVALID_ARGUMENT); a batch above the queue
  // (same function: HAILO_INVALID_OPERATION).
  Expected<ConfiguredInferModel> configure() override {
    State& s = state();
    ++s.counters.configures;
    s.advance_to(s.clock.now() + s.script.configure_time);
    for (const auto& [level, message] : s.script.log_at_configure) write_log(level, message);
    if (s.script.configure_status != HAILO_SUCCESS)
      return make_unexpected(s.script.configure_status);
    const bool h10 = s.script.architecture == HAILO_ARCH_HAILO10H;
    auto refuse = [&](hailo_status st, const std::string& core_level, const std::string& why) {
      if (!h10) write_log(core_level, why, "[resource_manager.cpp:213] [create_hw_latency_meter]");
      write_log("error",
                "CHECK_SUCCESS failed with status=" + std::string(kStatusNames[st]) + "(" +
                    std::to_string(static_cast<int>(st)) + ")",
                h10 ? "[infer_model_hrpc_client.cpp:113] [configure]"
                    : "[infer_model.cpp:327] [configure]");
      return make_unexpected(st);
    };
    if (latency_ && desc_->nms_on_chip)
      return refuse(HAILO_INVALID_OPERATION, "warning",
                    "HW Latency measurement is not supported on NMS networks");
    if (latency_ && desc_->inputs.size() > 1)
      return refuse(HAILO_INVALID_OPERATION, "warning",
                    "HW Latency measurement is supported on networks with a single input. the "
                    "model has " +
                        std::to_string(desc_->inputs.size()) + " physical inputs.");
    if (name_.empty() && desc_->groups.size() > 1)
      return refuse(HAILO_INVALID_ARGUMENT, "error",
                    "HEF contains multiple network groups (" +
                        std::to_string(desc_->groups.size()) +
                        "). Please provide a specific model name to infer.");
    if (batch_ > s.script.queue_size)
      return refuse(
          HAILO_INVALID_OPERATION, "error",
          "CHECK failed - Trying to configure a model with a batch=" + std::to_string(batch_) +
              " bigger than internal_queue_size=" + std::to_string(s.script.queue_size) +
              ", which is not supported. Try using a smaller batch.");
    auto base = std::make_shared<ConfiguredInferModelBase>();
    base->model = desc_;
    base->scheduled = scheduled_;
    base->latency_measured = latency_;
    if (lose_reply("configure", "[infer_model_hrpc_client.cpp:113] [configure]",
                   kLongRequestTimeout)) {
      if (auto orphans = orphans_.lock()) orphans->push_back(std::move(base));
      return make_unexpected(HAILO_TIMEOUT);
    }
    s.counters.latency_frames = 0;
    return Expected<ConfiguredInferModel>(ConfiguredInferModel(std::move(base)));
  }
  Expected<InferStream> input(const std::string& name) override {
    return find(desc_->inputs, name);
  }
  Expected<InferStream> output(const std::string& name) override {
    return find(desc_->outputs, name);
  }
  const std::vector<InferStream>& inputs() const override { return desc_->inputs; }
  const std::vector<InferStream>& outputs() const override { return desc_->outputs; }
  const std::vector<std::string>& get_input_names() const override { return desc_->input_names; }
  const std::vector<std::string>& get_output_names() const override { return desc_->output_names; }

 private:
  static Expected<InferStream> find(const std::vector<InferStream>& streams,
                                    const std::string& name) {
    for (const auto& s : streams)
      if (s.name() == name) return Expected<InferStream>(InferStream(s));
    return make_unexpected(HAILO_NOT_FOUND);
  }
  std::shared_ptr<ModelDesc> desc_;
  bool scheduled_;
  std::string name_;  // create_infer_model's name ("": the first group)
  std::weak_ptr<Orphans> orphans_;
  uint16_t batch_ = 0;
  bool latency_ = false;
};

class DoubleVDevice final : public VDevice {
 public:
  DoubleVDevice(const std::vector<std::string>& ids, bool scheduled) : scheduled_(scheduled) {
    for (const auto& id : ids) devices_.push_back(std::make_unique<DoubleDevice>(id));
    ++state().counters.vdevices_alive;
  }
  ~DoubleVDevice() override { --state().counters.vdevices_alive; }
  DoubleVDevice(const DoubleVDevice&) = delete;
  DoubleVDevice& operator=(const DoubleVDevice&) = delete;
  Expected<std::shared_ptr<InferModel>> create_infer_model(const std::string& hef_path,
                                                           const std::string& name) override {
    std::ifstream in(hef_path, std::ios::binary);
    if (!in) return make_unexpected(HAILO_OPEN_FILE_FAILURE);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return from_text(text, name);
  }
  Expected<std::shared_ptr<InferModel>> create_infer_model(const MemoryView hef,
                                                           const std::string& name) override {
    return from_text(std::string(reinterpret_cast<const char*>(hef.data()), hef.size()), name);
  }
  Expected<std::vector<std::reference_wrapper<Device>>> get_physical_devices() const override {
    std::vector<std::reference_wrapper<Device>> out;
    for (const auto& d : devices_) out.emplace_back(*d);
    return Expected<std::vector<std::reference_wrapper<Device>>>(std::move(out));
  }
  Expected<std::vector<std::string>> get_physical_devices_ids() const override {
    std::vector<std::string> out;
    for (const auto& d : devices_) out.emplace_back(d->get_dev_id());
    return Expected<std::vector<std::string>>(std::move(out));
  }
  // HailoRT maps only the part of a buffer that starts at a DMA-aligned
  // address (the system's page size: 16 KiB on the Pi 5's default kernel) and
  // succeeds, copying the rest through bounce buffers; a buffer with no
  // aligned part maps nothing and succeeds too (VdmaDevice::dma_map_impl,
  // aligned_part_to_map, vdma/vdma_device.cpp; over hRPC
  // DeviceHrpcClient::dma_map, device/device_hrpc_client.cpp; v5.2.0).
  hailo_status dma_map(void* address, size_t, hailo_dma_buffer_direction_t) override {
    if (address == nullptr) return HAILO_INVALID_ARGUMENT;  // (unchecked: the driver's refusal)
    ++state().counters.dma_maps;
    return HAILO_SUCCESS;
  }
  hailo_status dma_unmap(void*, size_t, hailo_dma_buffer_direction_t) override {
    ++state().counters.dma_unmaps;
    return HAILO_SUCCESS;
  }

 private:
  Expected<std::shared_ptr<InferModel>> from_text(const std::string& text,
                                                  const std::string& name) const {
    auto desc = parse_hef(text);
    if (!desc) return make_unexpected(desc.status());
    if (auto st = resolve_name(**desc, name); st != HAILO_SUCCESS) return make_unexpected(st);
    ++state().counters.infer_models_created;
    if (lose_reply("create_infer_model", "[vdevice_hrpc_client.cpp:142] [create_infer_model]",
                   kRequestTimeout))
      return make_unexpected(HAILO_TIMEOUT);
    std::shared_ptr<InferModel> m =
        std::make_shared<DoubleInferModel>(desc.release(), scheduled_, name, orphans_);
    return Expected<std::shared_ptr<InferModel>>(std::move(m));
  }
  std::vector<std::unique_ptr<DoubleDevice>> devices_;
  bool scheduled_;
  std::shared_ptr<Orphans> orphans_ = std::make_shared<Orphans>();
};

// Outputs are a hash of the inputs: same input, same output; different
// inputs, different outputs (every 7th byte and the last: a test that
// changes one byte elsewhere would not see it, none does).
uint64_t input_hash(const ConfiguredInferModel::Bindings& b) {
  uint64_t h = 1469598103934665603ull;
  for (const auto& [name, impl] : b.m_inputs) {
    const uint8_t* p = impl->buffer.data();
    const size_t n = impl->buffer.size();
    for (size_t i = 0; i < n; i += 7) h = (h ^ p[i]) * 1099511628211ull;
    if (n > 0) h = (h ^ p[n - 1]) * 1099511628211ull;
  }
  return h;
}

void write_outputs(const std::vector<MemoryView>& outputs, uint64_t h) {
  for (auto view : outputs) {
    uint64_t x = h;
    for (size_t i = 0; i < view.size(); ++i) {
      x ^= x >> 12;
      x ^= x << 25;
      x ^= x >> 27;
      view.data()[i] = static_cast<uint8_t>((x * 0x2545F4914F6CDD1Dull) >> 56);
    }
  }
}

// Every stream of the model has a buffer of its exact frame size: checked
// at run_async, not at set_buffer (validate_bindings, infer_model.cpp and
// configured_infer_model_hrpc_client.cpp, v5.2.0: HAILO_INVALID_OPERATION).
hailo_status check_bindings(const ModelDesc& model, const ConfiguredInferModel::Bindings& b,
                            std::vector<MemoryView>& outputs) {
  const bool h10 = state().script.architecture == HAILO_ARCH_HAILO10H;
  const std::string where =
      h10 ? "[configured_infer_model_hrpc_client.cpp:469] [validate_input_bindings]"
          : "[infer_model.cpp:962] [validate_bindings]";
  auto check = [&](const auto& map, const std::string& name, const char* what) {
    auto it = map.find(name);
    if (it == map.end() || !it->second->set) {
      write_log("error",
                "CHECK failed - Trying to get buffer as view for '" + name +
                    "', while it is not configured as view",
                where);
      return HAILO_INVALID_OPERATION;
    }
    if (it->second->buffer.size() != it->second->frame_size) {
      write_log("error",
                std::string("CHECK failed - ") + what + " buffer size " +
                    std::to_string(it->second->buffer.size()) + " is different than expected " +
                    std::to_string(it->second->frame_size) + " for " +
                    (what[0] == 'I' ? "input" : "output") + " '" + name + "'",
                where);
      return HAILO_INVALID_OPERATION;
    }
    return HAILO_SUCCESS;
  };
  for (const auto& name : model.input_names)
    if (auto st = check(b.m_inputs, name, "Input"); st != HAILO_SUCCESS) return st;
  for (const auto& name : model.output_names) {
    if (auto st = check(b.m_outputs, name, "Output"); st != HAILO_SUCCESS) return st;
    outputs.push_back(b.m_outputs.at(name)->buffer);
  }
  return HAILO_SUCCESS;
}

// Runs a request's completion once: outputs written on success, the
// callback on HailoRT's (the double's) callback thread, then the job is done
// (HailoRT's wait returns after the callback ran).
void finish(ConfiguredInferModelBase& base, const std::shared_ptr<DoubleRequest>& r,
            hailo_status status) {
  if (r->finished) return;
  r->finished = true;
  if (status == HAILO_SUCCESS) {
    write_outputs(r->outputs, r->hash);
    ++base.latency_frames;
    state().counters.latency_frames = base.latency_frames;
  }
  --base.in_flight;
  --state().counters.requests_in_flight;
  base.requests.erase(std::remove(base.requests.begin(), base.requests.end(), r),
                      base.requests.end());
  auto callback = std::move(r->callback);
  r->callback = nullptr;
  state().callbacks.run([&] {
    if (callback) callback(AsyncInferCompletionInfo(status));
    callback = nullptr;  // its captures go on HailoRT's thread, as they would
  });
  r->job->status = status;
  r->job->done = true;
  if (status != HAILO_SUCCESS) return;
  const int n = ++state().counters.completions;
  if (state().script.after_completion) state().script.after_completion(n);
}

// H10 copies every buffer that is not aligned for DMA (the page size)
// through a bounce buffer (vdma/pcie_session.cpp, TransferBuffer::
// is_aligned_for_dma in vdma/channel/transfer_common.cpp, v5.1.1).
void count_bounces(const ConfiguredInferModel::Bindings& b) {
  auto& s = state();
  if (s.script.architecture != HAILO_ARCH_HAILO10H) return;
  for (const auto* m : {&b.m_inputs, &b.m_outputs})
    for (const auto& [name, impl] : *m)
      if (reinterpret_cast<uintptr_t>(impl->buffer.data()) % page_size() != 0)
        ++s.counters.bounce_copies;
}

}  // namespace

Script& script() {
  return state().script;
}
Counters& counters() {
  return state().counters;
}
rig::VirtualClock& clock() {
  return state().clock;
}

void reset() {
  State& s = state();
  s.events.clear();  // first: what they hold may count itself out
  s.script = Script{};
  s.counters = Counters{};
  s.in_free = s.compute_free = s.out_free = s.clock.now();
}

std::string hef_text(const std::vector<std::string>& lines) {
  std::string out = "hailo-double-hef\n";
  for (const auto& l : lines) out += l + "\n";
  return out;
}

std::string main_log_file() {
  return state().main_log;
}

std::string local_log_file() {
  return state().local_log;
}

std::thread::id callback_thread() {
  return state().callbacks.id();
}

bool logger_created_before_main() {
  return kLoggerBeforeMain && state().logger_created;
}

}  // namespace hailo_double

// ---------------------------------------------------------------------------
// The API, in HailoRT's names.
using hailo_double::Nanos;
using hailo_double::state;

extern "C" hailo_status hailo_get_library_version(hailo_version_t* version) {
  hailo_double::ensure_logger();
  if (version == nullptr) return HAILO_INVALID_ARGUMENT;
  *version = state().script.library;
  return HAILO_SUCCESS;
}

extern "C" const char* hailo_get_status_message(hailo_status status) {
  if (static_cast<int>(status) < 0 || status >= HAILO_STATUS_COUNT) return nullptr;
  return hailo_double::kStatusNames[status];
}

extern "C" hailo_status hailo_init_vdevice_params(hailo_vdevice_params_t* params) {
  hailo_double::ensure_logger();
  if (params == nullptr) return HAILO_INVALID_ARGUMENT;
  // HailoRTDefaults::get_vdevice_params (hailort_defaults.cpp, v5.2.0).
  *params = hailo_vdevice_params_t{};
  params->device_count = HAILO_DEFAULT_DEVICE_COUNT;
  params->scheduling_algorithm = HAILO_SCHEDULING_ALGORITHM_ROUND_ROBIN;
  params->device_ids = nullptr;
  params->group_id = HAILO_DEFAULT_VDEVICE_GROUP_ID;
  params->multi_process_service = false;
  state().counters.scheduler = params->scheduling_algorithm;
  return HAILO_SUCCESS;
}

namespace hailort {

// A wait that times out logs at error level: on H10 AsyncInferJobHrpcClient::
// wait's CHECK_SUCCESS (configured_infer_model_hrpc_client.cpp), elsewhere
// AsyncInferJobImpl::wait's CHECK (infer_model.cpp); v5.1.1 and v5.2.0.
// On H10 a job that completed returns its completion's status
// (AsyncInferJobHrpcClient::wait: m_job_status, a HAILO_STREAM_ABORT
// included); elsewhere a completed job's wait succeeds whatever its status
// (AsyncInferJobImpl::wait waits for the callback only).
hailo_status AsyncInferJob::wait(std::chrono::milliseconds timeout) {
  if (!m_pimpl) return HAILO_SUCCESS;  // as HailoRT's, for an empty job
  auto job = m_pimpl;
  const bool h10 = state().script.architecture == HAILO_ARCH_HAILO10H;
  const auto st = state().wait([job] { return job->done; }, timeout);
  if (st == HAILO_TIMEOUT) {
    ++state().counters.wait_timeouts;
    if (h10)
      hailo_double::write_log("error", "CHECK_SUCCESS failed with status=HAILO_TIMEOUT(4)",
                              "[configured_infer_model_hrpc_client.cpp:32] [wait]");
    else
      hailo_double::write_log("error",
                              "CHECK failed - Waiting for async job to finish has failed with "
                              "timeout (" +
                                  std::to_string(timeout.count()) + "ms)",
                              "[infer_model.cpp:1147] [wait]");
    return st;
  }
  return h10 ? job->status : HAILO_SUCCESS;
}

// Any size: HailoRT checks it at run_async (InferStream::Impl::set_buffer,
// infer_model.cpp, v5.2.0).
hailo_status ConfiguredInferModel::Bindings::InferStream::set_buffer(MemoryView view) {
  m_pimpl->buffer = view;
  m_pimpl->set = true;
  return HAILO_SUCCESS;
}

Expected<MemoryView> ConfiguredInferModel::Bindings::InferStream::get_buffer() const {
  if (!m_pimpl->set) return make_unexpected(HAILO_NOT_FOUND);
  return Expected<MemoryView>(MemoryView(m_pimpl->buffer));
}

namespace {
Expected<ConfiguredInferModel::Bindings::InferStream> find_stream(
    const std::map<std::string, std::shared_ptr<ConfiguredInferModel::Bindings::InferStream::Impl>>&
        m,
    const std::string& name) {
  auto it = m.find(name);
  if (it == m.end()) return make_unexpected(HAILO_NOT_FOUND);
  return Expected<ConfiguredInferModel::Bindings::InferStream>(
      ConfiguredInferModel::Bindings::InferStream(it->second));
}
}  // namespace

Expected<ConfiguredInferModel::Bindings::InferStream> ConfiguredInferModel::Bindings::input(
    const std::string& name) {
  return find_stream(m_inputs, name);
}
Expected<ConfiguredInferModel::Bindings::InferStream> ConfiguredInferModel::Bindings::output(
    const std::string& name) {
  return find_stream(m_outputs, name);
}
Expected<ConfiguredInferModel::Bindings::InferStream> ConfiguredInferModel::Bindings::input(
    const std::string& name) const {
  return find_stream(m_inputs, name);
}
Expected<ConfiguredInferModel::Bindings::InferStream> ConfiguredInferModel::Bindings::output(
    const std::string& name) const {
  return find_stream(m_outputs, name);
}

// Also after shutdown(): HailoRT's create_bindings asks nothing of the model's
// state (ConfiguredInferModelHrpcClient::create_bindings, v5.2.0).
Expected<ConfiguredInferModel::Bindings> ConfiguredInferModel::create_bindings() {
  Bindings b;
  auto add = [](auto& map, const InferModel::InferStream& s) {
    auto impl = std::make_shared<Bindings::InferStream::Impl>();
    impl->name = s.name();
    impl->frame_size = s.get_frame_size();
    map.emplace(impl->name, impl);
  };
  for (const auto& s : m_pimpl->model->inputs) add(b.m_inputs, s);
  for (const auto& s : m_pimpl->model->outputs) add(b.m_outputs, s);
  return Expected<Bindings>(std::move(b));
}

hailo_status ConfiguredInferModel::wait_for_async_ready(std::chrono::milliseconds timeout,
                                                        uint32_t frames_count) {
  auto base = m_pimpl;
  const size_t queue = state().script.queue_size;
  if (frames_count > queue) return HAILO_INVALID_ARGUMENT;
  const auto st = state().wait(
      [base, queue, frames_count] { return base->in_flight + frames_count <= queue; }, timeout);
  if (st == HAILO_TIMEOUT) {
    ++state().counters.wait_timeouts;
    hailo_double::write_log("error", "Got timeout in `wait_for_async_ready` (" +
                                         std::to_string(timeout.count()) + "ms)");
  }
  return st;
}

// Any failure of run_async shuts the configured model down for good
// (ConfiguredInferModel::run_async, infer_model.cpp;
// ConfiguredInferModelHrpcClient::run_async, configured_infer_model_hrpc_client.cpp;
// v5.1.1 and v5.2.0). After that, on H10 the client still sends the request
// and the server's run fails on the aborted pipeline: the completion says
// HAILO_STREAM_ABORT (AsyncInferRunnerImpl::run, async_infer_runner.cpp;
// hrpc/server.cpp writes the failed status back); elsewhere run_async
// itself fails with it.
Expected<AsyncInferJob> ConfiguredInferModel::run_async(
    const Bindings& bindings, std::function<void(const AsyncInferCompletionInfo&)> callback) {
  auto& s = state();
  ++s.counters.run_async_calls;
  auto base = m_pimpl;
  const bool h10 = s.script.architecture == HAILO_ARCH_HAILO10H;
  auto impl = [&]() -> Expected<AsyncInferJob> {
    std::vector<MemoryView> outputs;
    if (auto st = hailo_double::check_bindings(*base->model, bindings, outputs);
        st != HAILO_SUCCESS)
      return make_unexpected(st);
    if (s.script.fail_run_async_at == s.counters.run_async_calls)
      return make_unexpected(s.script.run_async_failure);
    if (base->in_flight >= s.script.queue_size) return make_unexpected(HAILO_QUEUE_IS_FULL);
    auto request = std::make_shared<DoubleRequest>();
    request->job = std::make_shared<AsyncInferJobBase>();
    request->callback = std::move(callback);
    if (base->shut_down) {
      if (!h10) {
        hailo_double::write_log("error",
                                "CHECK_SUCCESS failed with status=HAILO_STREAM_ABORT(63) - Can't "
                                "handle inference request since pipeline status is "
                                "HAILO_STREAM_ABORT(63).",
                                "[async_infer_runner.cpp:316] [run]");
        return make_unexpected(HAILO_STREAM_ABORT);
      }
      ++base->in_flight;
      ++s.counters.requests_in_flight;
      base->requests.push_back(request);
      s.schedule(s.clock.now() + s.script.rpc_round_trip,
                 [request, base] { hailo_double::finish(*base, request, HAILO_STREAM_ABORT); });
      return Expected<AsyncInferJob>(AsyncInferJob(request->job));
    }
    // Without the scheduler the streams write only once activated
    // (AsyncInputStreamBase::write_async, stream_common/async_stream_base.cpp,
    // v5.1.1). The status run_async passes on through its pipeline is unchecked.
    if (!base->scheduled && !base->active) {
      hailo_double::write_log("error", "Stream is not activated");
      return make_unexpected(HAILO_STREAM_NOT_ACTIVATED);
    }
    hailo_double::count_bounces(bindings);
    const uint64_t h = hailo_double::input_hash(bindings);
    const Nanos now = s.clock.now();
    const Nanos in_start = std::max(now, s.in_free);
    s.in_free = in_start + s.script.transfer_in;
    const Nanos c_start = std::max(s.in_free, s.compute_free);
    s.compute_free = c_start + s.script.compute;
    const Nanos o_start = std::max(s.compute_free, s.out_free);
    s.out_free = o_start + s.script.transfer_out;
    request->outputs = std::move(outputs);
    request->hash = h;
    ++base->in_flight;
    ++s.counters.requests_in_flight;
    base->requests.push_back(request);
    if (s.script.hang_after >= 0 && s.counters.run_async_calls > s.script.hang_after)
      return Expected<AsyncInferJob>(AsyncInferJob(request->job));  // never completes
    s.schedule(s.out_free,
               [request, base] { hailo_double::finish(*base, request, HAILO_SUCCESS); });
    return Expected<AsyncInferJob>(AsyncInferJob(request->job));
  };
  auto job = impl();
  if (!job) {
    (void)shutdown();
    return make_unexpected(job.status());
  }
  return job;
}

hailo_status ConfiguredInferModel::run(const Bindings& bindings,
                                       std::chrono::milliseconds timeout) {
  auto job = run_async(bindings);
  if (!job) return job.status();
  return job->wait(timeout);
}

// A round trip to the device on H10. HailoRT's latency meter keeps a mean
// since configure (common/latency_meter.hpp); HAILO_NOT_AVAILABLE before any
// frame and without a meter (configured without HAILO_LATENCY_MEASURE: no
// measurement, CoreOp::get_latency_measurement, core_op/core_op.cpp; v5.2.0).
// A model of several inputs has no meter: its configure with the flag fails.
Expected<LatencyMeasurementResult> ConfiguredInferModel::get_hw_latency_measurement() {
  state().rpc();
  ++state().counters.latency_queries;
  if (hailo_double::lose_reply(
          "get_hw_latency_measurement",
          "[configured_infer_model_hrpc_client.cpp:407] [get_hw_latency_measurement]",
          hailo_double::kRequestTimeout))
    return make_unexpected(HAILO_TIMEOUT);
  const auto& sc = state().script;
  if (!sc.hw_latency) return make_unexpected(sc.hw_latency_status);
  if (!m_pimpl->latency_measured || m_pimpl->latency_frames == 0)
    return make_unexpected(HAILO_NOT_AVAILABLE);
  return Expected<LatencyMeasurementResult>(LatencyMeasurementResult{*sc.hw_latency});
}

Expected<size_t> ConfiguredInferModel::get_async_queue_size() const {
  return Expected<size_t>(size_t(state().script.queue_size));
}

// Without the scheduler (core_op/core_op.cpp, CoreOp::activate, v5.1.1):
// refused with the scheduler on, and while another model is active.
hailo_status ConfiguredInferModel::activate() {
  auto& s = state();
  s.rpc();
  if (m_pimpl->scheduled) {
    hailo_double::write_log(
        "error",
        "Manually activate a core-op is not allowed when the core-op scheduler is active!");
    return HAILO_INVALID_OPERATION;
  }
  if (s.active != nullptr) {
    hailo_double::write_log("error",
                            "Cant activate network because a network is already activated");
    return HAILO_INVALID_OPERATION;
  }
  m_pimpl->active = true;
  s.active = m_pimpl.get();
  ++s.counters.activations;
  return HAILO_SUCCESS;
}

hailo_status ConfiguredInferModel::deactivate() {
  if (m_pimpl->active && state().active == m_pimpl.get()) state().active = nullptr;
  m_pimpl->active = false;
  return HAILO_SUCCESS;
}

// Aborts what is in flight (their callbacks say HAILO_STREAM_ABORT), then
// deactivates (ConfiguredInferModelImpl::shutdown, infer_model.cpp, v5.1.1).
hailo_status ConfiguredInferModel::shutdown() {
  auto base = m_pimpl;
  const auto pending = base->requests;
  for (const auto& r : pending) hailo_double::finish(*base, r, HAILO_STREAM_ABORT);
  base->shut_down = true;
  ++state().counters.shutdowns;
  return deactivate();
}

Expected<AsyncInferJob> ConfiguredInferModel::run_async_for_duration(
    const Bindings& bindings, uint32_t duration_ms, uint32_t sleep_between_frames_ms,
    std::function<void(const AsyncInferCompletionInfo&, uint32_t)> callback) {
  auto& s = state();
  ++s.counters.for_duration_calls;
  if (m_pimpl->shut_down) {
    hailo_double::write_log("error", "The configured infer model was shut down");
    return make_unexpected(HAILO_INVALID_OPERATION);
  }
  if (m_pimpl->in_flight > 0 || duration_ms == 0) return make_unexpected(HAILO_INVALID_OPERATION);
  if (!m_pimpl->scheduled && !m_pimpl->active) return make_unexpected(HAILO_STREAM_NOT_ACTIVATED);
  std::vector<MemoryView> outputs;
  if (auto st = hailo_double::check_bindings(*m_pimpl->model, bindings, outputs);
      st != HAILO_SUCCESS)
    return make_unexpected(st);
  const uint64_t h = hailo_double::input_hash(bindings);
  // The device loops one frame: every frame that starts before the deadline
  // runs with its sleep. HailoRT's loop (ConfiguredInferModelImpl::
  // run_async_for_duration, infer_model.cpp, v5.1.1) keeps its queue full
  // and counts every callback, those of the frames its shutdown() aborts
  // included (HAILO_STREAM_ABORT); the rate is that count over the requested
  // duration, truncated to an integer. Without a sleep the queue is full at
  // the end: queue_size frames aborted and counted.
  const Nanos duration = std::chrono::milliseconds(duration_ms);
  const Nanos period = s.script.compute + std::chrono::milliseconds(sleep_between_frames_ms);
  const int64_t frames = (duration.count() + period.count() - 1) / period.count();
  const int64_t aborted =
      sleep_between_frames_ms == 0 ? static_cast<int64_t>(s.script.queue_size) : 0;
  const uint32_t fps = static_cast<uint32_t>((frames + aborted) * 1000 / duration_ms);
  const Nanos end = s.clock.now() + s.script.transfer_in + period * frames + s.script.transfer_out +
                    s.script.rpc_overhead;
  // The bug is 5.2.0's: there the reply buffer holds the header before the
  // body (RpcConnection::read_message, hrpc/rpc_connection.cpp); in 5.1.1 it
  // holds the body alone, which is what the reply is parsed from.
  const bool bug =
      s.script.for_duration == hailo_double::ForDuration::hrpc_bug && fps > 0 &&
      (s.script.library.major > 5 || (s.script.library.major == 5 && s.script.library.minor >= 2));
  const bool shut = s.script.shutdown_after_loop;
  auto job = std::make_shared<AsyncInferJobBase>();
  auto base = m_pimpl;
  ++base->in_flight;
  s.schedule(end, [job, base, outputs, h, callback, bug, fps, shut] {
    hailo_double::write_outputs(outputs, h);
    --base->in_flight;
    if (shut) {
      base->shut_down = true;
      base->active = false;
      if (state().active == base.get()) state().active = nullptr;
      ++state().counters.shutdowns;
    }
    if (bug)
      hailo_double::write_log("error",
                              "CHECK failed - Failed to de-serialize 'RunAsyncForDuration'");
    state().callbacks.run([&] {
      callback(AsyncInferCompletionInfo(bug ? HAILO_RPC_FAILED : HAILO_SUCCESS), bug ? 0 : fps);
    });
    job->status = bug ? HAILO_RPC_FAILED : HAILO_SUCCESS;
    job->done = true;
  });
  return Expected<AsyncInferJob>(AsyncInferJob(job));
}

const std::string InferModel::InferStream::name() const {
  return m_pimpl->name;
}
hailo_3d_image_shape_t InferModel::InferStream::shape() const {
  return m_pimpl->shape;
}
hailo_format_t InferModel::InferStream::format() const {
  return m_pimpl->format;
}
size_t InferModel::InferStream::get_frame_size() const {
  const auto& sh = m_pimpl->shape;
  return size_t(sh.height) * sh.width * sh.features *
         hailo_double::element_bytes(m_pimpl->format.type);
}
bool InferModel::InferStream::is_nms() const {
  return m_pimpl->nms;
}
void InferModel::InferStream::set_format_type(hailo_format_type_t type) {
  m_pimpl->format.type = type;
}

namespace {
Expected<std::unique_ptr<VDevice>> create_vdevice(const std::vector<std::string>& device_ids,
                                                  hailo_scheduling_algorithm_t scheduler) {
  hailo_double::ensure_logger();
  auto& s = state();
  s.counters.scheduler = scheduler;
  ++s.counters.vdevices_created;
  s.counters.created_with_ids = device_ids;
  for (const auto& [level, message] : s.script.log_at_create)
    hailo_double::write_log(level, message);
  if (s.script.create_status != HAILO_SUCCESS) return make_unexpected(s.script.create_status);
  if (s.script.device_ids.empty()) return make_unexpected(HAILO_OUT_OF_PHYSICAL_DEVICES);
  std::vector<std::string> ids = device_ids.empty() ? s.script.device_ids : device_ids;
  // An id the scan does not list (VDeviceBase::get_accelerator_type,
  // vdevice/vdevice.cpp, v5.2.0).
  for (const auto& id : ids)
    if (std::find(s.script.device_ids.begin(), s.script.device_ids.end(), id) ==
        s.script.device_ids.end()) {
      hailo_double::write_log(
          "error", "CHECK failed - VDevice creation failed. device_id " + id + " not found",
          "[vdevice.cpp:305] [get_accelerator_type]");
      return make_unexpected(HAILO_INVALID_ARGUMENT);
    }
  if (hailo_double::lose_reply("VDevice::create",
                               "[vdevice_hrpc_client.cpp:62] [create_available_vdevice]",
                               hailo_double::kRequestTimeout))
    return make_unexpected(HAILO_TIMEOUT);
  std::unique_ptr<VDevice> v = std::make_unique<hailo_double::DoubleVDevice>(
      ids, scheduler != HAILO_SCHEDULING_ALGORITHM_NONE);
  return Expected<std::unique_ptr<VDevice>>(std::move(v));
}
}  // namespace

// Without params: HailoRT's defaults, the round-robin scheduler among them.
Expected<std::unique_ptr<VDevice>> VDevice::create(const std::vector<std::string>& device_ids) {
  return create_vdevice(device_ids, HAILO_SCHEDULING_ALGORITHM_ROUND_ROBIN);
}

Expected<std::unique_ptr<VDevice>> VDevice::create() {
  return create(std::vector<std::string>{});
}

ConfiguredInferModelBase::ConfiguredInferModelBase() {
  auto& c = state().counters;
  c.configured_alive_max = std::max(c.configured_alive_max, ++c.configured_alive);
}

ConfiguredInferModelBase::~ConfiguredInferModelBase() {
  --state().counters.configured_alive;
  if (state().active == this) state().active = nullptr;
}

Expected<Hef> Hef::create(const std::string& hef_path) {
  std::ifstream in(hef_path, std::ios::binary);
  if (!in) return make_unexpected(HAILO_OPEN_FILE_FAILURE);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return create(MemoryView(text.data(), text.size()));
}

Expected<Hef> Hef::create(const MemoryView& hef_buffer) {
  auto desc = hailo_double::parse_hef(
      std::string(reinterpret_cast<const char*>(hef_buffer.data()), hef_buffer.size()));
  if (!desc) return make_unexpected(desc.status());
  auto impl = std::make_shared<Hef::Impl>();
  impl->desc = desc.release();
  return Expected<Hef>(Hef(std::move(impl)));
}

std::vector<std::string> Hef::get_network_groups_names() const {
  return m_pimpl->desc->groups;
}

Expected<std::unique_ptr<VDevice>> VDevice::create(const hailo_vdevice_params_t& params) {
  std::vector<std::string> ids;
  for (uint32_t i = 0; params.device_ids != nullptr && i < params.device_count; ++i)
    ids.emplace_back(params.device_ids[i].id);
  return create_vdevice(ids, params.scheduling_algorithm);
}

}  // namespace hailort

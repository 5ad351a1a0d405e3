// The fake device's script (what it answers) and record (what it saw).
//
// Script: a JSON object, every field optional; an unknown field, a wrong type
// or an unknown action name is refused (parse_script returns nullopt, *why
// names the field). Fields, with defaults:
//   reply_delay_ms        3     delay before each synchronous reply (hrpc/client.cpp's
//                               execute_request waits without a predicate: a reply
//                               that comes before the wait is lost)
//   latency_ms            2     device time per RUN_ASYNC frame; frames run one at a time
//   loop_fps              floor(1000 / (latency_ms + sleep_between_frames_ms)), per
//                               request: what RUN_ASYNC_FOR_DURATION answers
//   async_queue_size      4     CREATE_CONFIGURED_INFER_MODEL's reply `async_queue_size`
//   hw_latency_ms         latency_ms   GET_HW_LATENCY_MEASUREMENT (sent in ns)
//   hw_latency_status     -     answer GET_HW_LATENCY_MEASUREMENT with this status
//   status                {}    {"ACTION": hailo_status}: answer that action with it, no body
//   drop_reply            {}    {"ACTION": n}: send no reply to its first n requests
//   disconnect_after_frames -   close a connection once N RUN_ASYNC frames (all
//                               connections together) have completed
//   reply_chunk_bytes     0     > 0: send each message in chunks of this many bytes ...
//   reply_chunk_delay_ms  0     ... with this delay between chunks
//   garbage_reply         {}    {"ACTION": true}: answer with pseudo-random bytes
//   temperature_c         {"ts0": 40, "ts1": 41}
//   temperature_status    -     answer GET_CHIP_TEMPERATURE with this status
//   power_w               1.5   null: POWER_MEASUREMENT answers HAILO_OPEN_FILE_FAILURE (13)
//   identify              {"fw": "<HailoRT version>", "board_name": "Hailo-10H fake",
//                          "product_name": "HAILO-10H fake", "serial_number": "FAKE0001",
//                          "part_number": "HM1000000000", "protocol_version": 2,
//                          "logger_version": 0, "is_release": true}
//   architecture          6     (HAILO_ARCH_HAILO10H, hailort.h hailo_device_architecture_t)
//   throttling            []    [{"after_frames": N, "state": S}]: S a name of hailort.h's
//                               hailo_hw_throttling_state_t, with or without "HAILO_"
//                               (e.g. "THROTTLING_STATE_1_MEDIUM"), or its number
//   lifetime_s            60    exit after this long
//   idle_exit_s           5     exit when no client is left this long (after the first came)
// ACTION names are serializer.hpp's HailoRpcActionID names (e.g. "VDEVICE__CREATE").
//
// Record: counts and errors, written as JSON (record_json). Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace rig::test::fake_hailo {

// HailoRpcActionID (hrpc_protocol/serializer.hpp, enum class HailoRpcActionID):
// 0..37 in 5.1.1 and 5.2.0; SYSTEM__RESET (38) in 5.2.0 only.
enum class ActionId : uint32_t {
  vdevice_create = 0,
  vdevice_destroy,
  vdevice_create_infer_model,
  infer_model_destroy,
  infer_model_create_configured_infer_model,
  cim_destroy,
  cim_set_scheduler_timeout,
  cim_set_scheduler_threshold,
  cim_set_scheduler_priority,
  cim_get_hw_latency_measurement,
  cim_activate,
  cim_deactivate,
  cim_shutdown,
  cim_update_cache_offset,
  cim_init_cache,
  cim_finalize_cache,
  cim_get_cache_buffers,
  cim_update_cache_buffer,
  cim_run_async,
  cim_run_async_for_duration,
  device_create,
  device_destroy,
  device_identify,
  device_extended_info,
  device_get_chip_temperature,
  device_power_measurement,
  device_set_power_measurement,
  device_get_power_measurement,
  device_start_power_measurement,
  device_stop_power_measurement,
  device_query_health_stats,
  device_query_performance_stats,
  device_get_architecture,
  device_set_notification_callback,
  device_remove_notification_callback,
  device_fetch_logs,
  device_echo_buffer,
  notification,
  system_reset,
};

// The number of action ids this version's client knows (MAX_VALUE).
uint32_t action_count();
// serializer.hpp's name of `id`, or "UNKNOWN_<id>".
std::string action_name(uint32_t id);
std::optional<uint32_t> action_by_name(const std::string& name);

struct ThrottlingEvent {
  uint64_t after_frames = 0;
  uint32_t state = 0;
};

struct Identity {
  uint32_t fw_major = 0, fw_minor = 0, fw_revision = 0;
  std::string board_name = "Hailo-10H fake";
  std::string product_name = "HAILO-10H fake";
  std::string serial_number = "FAKE0001";
  std::string part_number = "HM1000000000";
  uint32_t protocol_version = 2;
  uint32_t logger_version = 0;
  bool is_release = true;
};

struct Script {
  std::chrono::microseconds reply_delay{3000};
  double latency_ms = 2;
  std::optional<uint32_t> loop_fps;  // unset: derived per request
  uint32_t async_queue_size = 4;
  double hw_latency_ms = 2;
  std::optional<uint32_t> hw_latency_status;
  std::map<uint32_t, uint32_t> status;      // action id -> status
  std::map<uint32_t, uint64_t> drop_reply;  // action id -> replies to drop
  std::optional<uint64_t> disconnect_after_frames;
  size_t reply_chunk_bytes = 0;
  std::chrono::microseconds reply_chunk_delay{0};
  std::set<uint32_t> garbage_reply;  // action ids
  float ts0_c = 40, ts1_c = 41;
  std::optional<uint32_t> temperature_status;
  std::optional<float> power_w = 1.5f;  // nullopt: no power sensor
  Identity identity;
  uint32_t architecture = 6;
  std::vector<ThrottlingEvent> throttling;
  std::chrono::milliseconds lifetime{60000};
  std::chrono::milliseconds idle_exit{5000};
};

// `fw_default` is "MAJOR.MINOR.REVISION", the identity's default firmware.
std::optional<Script> parse_script(const std::string& json_text, const std::string& fw_default,
                                   std::string* why);

struct LoopRecord {
  uint32_t duration_ms = 0, sleep_ms = 0, fps = 0;
};

class Record {
 public:
  void count_action(uint32_t id);
  void add_error(std::string error);
  void add_frame(uint64_t input_bytes, uint64_t output_bytes);
  void add_loop(LoopRecord loop);
  void set_latency_flags_requested();
  // {"actions": {...}, "frames": N, "input_bytes": N, "output_bytes": N,
  //  "loops": [...], "latency_flags_requested": bool, "errors": [...]}
  std::string to_json() const;
  // Writes to_json() to `path` through `path`.tmp and a rename.
  bool write_atomic(const std::string& path) const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, uint64_t> actions_;
  uint64_t frames_ = 0, input_bytes_ = 0, output_bytes_ = 0;
  std::vector<LoopRecord> loops_;
  bool latency_flags_requested_ = false;
  std::vector<std::string> errors_;
};

}  // namespace rig::test::fake_hailo

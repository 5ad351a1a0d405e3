#include "script.hpp"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#ifndef RIG_FAKE_HAILO_HAS_SYSTEM_RESET
#error "RIG_FAKE_HAILO_HAS_SYSTEM_RESET must be defined (targets.cmake)"
#endif

namespace rig::test::fake_hailo {

namespace {

// serializer.hpp's enum class HailoRpcActionID, in order (5.1.1 and 5.2.0
// agree on 0..37; 5.2.0 adds SYSTEM__RESET before MAX_VALUE).
constexpr const char* kActionNames[] = {
    "VDEVICE__CREATE",
    "VDEVICE__DESTROY",
    "VDEVICE__CREATE_INFER_MODEL",
    "INFER_MODEL__DESTROY",
    "INFER_MODEL__CREATE_CONFIGURED_INFER_MODEL",
    "CONFIGURED_INFER_MODEL__DESTROY",
    "CONFIGURED_INFER_MODEL__SET_SCHEDULER_TIMEOUT",
    "CONFIGURED_INFER_MODEL__SET_SCHEDULER_THRESHOLD",
    "CONFIGURED_INFER_MODEL__SET_SCHEDULER_PRIORITY",
    "CONFIGURED_INFER_MODEL__GET_HW_LATENCY_MEASUREMENT",
    "CONFIGURED_INFER_MODEL__ACTIVATE",
    "CONFIGURED_INFER_MODEL__DEACTIVATE",
    "CONFIGURED_INFER_MODEL__SHUTDOWN",
    "CONFIGURED_INFER_MODEL__UPDATE_CACHE_OFFSET",
    "CONFIGURED_INFER_MODEL__INIT_CACHE",
    "CONFIGURED_INFER_MODEL__FINALIZE_CACHE",
    "CONFIGURED_INFER_MODEL__GET_CACHE_BUFFERS",
    "CONFIGURED_INFER_MODEL__UPDATE_CACHE_BUFFER",
    "CONFIGURED_INFER_MODEL__RUN_ASYNC",
    "CONFIGURED_INFER_MODEL__RUN_ASYNC_FOR_DURATION",
    "DEVICE__CREATE",
    "DEVICE__DESTROY",
    "DEVICE__IDENTIFY",
    "DEVICE__EXTENDED_INFO",
    "DEVICE__GET_CHIP_TEMPERATURE",
    "DEVICE__POWER_MEASUREMENT",
    "DEVICE__SET_POWER_MEASUREMENT",
    "DEVICE__GET_POWER_MEASUREMENT",
    "DEVICE__START_POWER_MEASUREMENT",
    "DEVICE__STOP_POWER_MEASUREMENT",
    "DEVICE__QUERY_HEALTH_STATS",
    "DEVICE__QUERY_PERFORMANCE_STATS",
    "DEVICE__GET_ARCHITECTURE",
    "DEVICE__SET_NOTIFICATION_CALLBACK",
    "DEVICE__REMOVE_NOTIFICATION_CALLBACK",
    "DEVICE__FETCH_LOGS",
    "DEVICE__ECHO_BUFFER",
    "NOTIFICATION",
    "SYSTEM__RESET",
};

// hailort.h (5.2.0) hailo_hw_throttling_state_t, in order.
constexpr const char* kThrottlingStates[] = {
    "THROTTLING_STATE_NONE",     "THROTTLING_STATE_0_LIGHT",  "THROTTLING_STATE_1_MEDIUM",
    "THROTTLING_STATE_2_HEAVY",  "THROTTLING_STATE_3_SEVERE", "THROTTLING_STATE_4_STREAMS_OFF",
    "THROTTLING_STATE_OVERHEAT",
};

using nlohmann::json;

bool fail(std::string* why, std::string text) {
  *why = std::move(text);
  return false;
}

bool get_number(const json& v, const std::string& key, double min, double* out, std::string* why) {
  if (!v.is_number()) return fail(why, key + ": a number is required");
  double d = v.get<double>();
  if (!std::isfinite(d) || d < min)
    return fail(why, key + ": must be a finite number >= " + std::to_string(min));
  *out = d;
  return true;
}

bool get_u32(const json& v, const std::string& key, uint32_t* out, std::string* why) {
  if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > 0xFFFFFFFFll)
    return fail(why, key + ": an unsigned 32-bit integer is required");
  *out = static_cast<uint32_t>(v.get<int64_t>());
  return true;
}

bool get_u64(const json& v, const std::string& key, uint64_t* out, std::string* why) {
  if (!v.is_number_integer() || v.get<int64_t>() < 0)
    return fail(why, key + ": a non-negative integer is required");
  *out = static_cast<uint64_t>(v.get<int64_t>());
  return true;
}

bool get_string(const json& v, const std::string& key, std::string* out, std::string* why) {
  if (!v.is_string()) return fail(why, key + ": a string is required");
  *out = v.get<std::string>();
  return true;
}

std::chrono::microseconds to_us(double ms) {
  return std::chrono::microseconds(static_cast<int64_t>(std::llround(ms * 1000.0)));
}

bool parse_action_map(const json& v, const std::string& key,
                      const std::function<bool(uint32_t, const json&, const std::string&)>& each,
                      std::string* why) {
  if (!v.is_object()) return fail(why, key + ": an object of ACTION_NAME keys is required");
  for (auto it = v.begin(); it != v.end(); ++it) {
    auto id = action_by_name(it.key());
    if (!id) return fail(why, key + ": unknown action \"" + it.key() + "\"");
    if (!each(*id, it.value(), key + "." + it.key())) return false;
  }
  return true;
}

bool parse_fw(const std::string& text, Identity* id) {
  unsigned a = 0, b = 0, c = 0;
  char tail = 0;
  if (std::sscanf(text.c_str(), "%u.%u.%u%c", &a, &b, &c, &tail) != 3) return false;
  id->fw_major = a;
  id->fw_minor = b;
  id->fw_revision = c;
  return true;
}

bool parse_throttling_state(const json& v, const std::string& key, uint32_t* out,
                            std::string* why) {
  if (v.is_number_integer()) return get_u32(v, key, out, why);
  if (!v.is_string()) return fail(why, key + ": a state name or number is required");
  std::string name = v.get<std::string>();
  if (name.rfind("HAILO_", 0) == 0) name = name.substr(6);
  for (uint32_t i = 0; i < std::size(kThrottlingStates); ++i)
    if (name == kThrottlingStates[i]) {
      *out = i;
      return true;
    }
  return fail(why, key + ": unknown throttling state \"" + v.get<std::string>() + "\"");
}

}  // namespace

uint32_t action_count() {
  return RIG_FAKE_HAILO_HAS_SYSTEM_RESET ? 39u : 38u;
}

std::string action_name(uint32_t id) {
  if (id < action_count()) return kActionNames[id];
  return "UNKNOWN_" + std::to_string(id);
}

std::optional<uint32_t> action_by_name(const std::string& name) {
  for (uint32_t i = 0; i < action_count(); ++i)
    if (name == kActionNames[i]) return i;
  return std::nullopt;
}

std::optional<Script> parse_script(const std::string& json_text, const std::string& fw_default,
                                   std::string* why) {
  json doc = json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    *why = "not valid JSON";
    return std::nullopt;
  }
  if (!doc.is_object()) {
    *why = "the script must be a JSON object";
    return std::nullopt;
  }
  Script s;
  parse_fw(fw_default, &s.identity);
  bool hw_latency_set = false;
  double d = 0;
  uint32_t u = 0;
  uint64_t u64 = 0;
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    const std::string& key = it.key();
    const json& v = it.value();
    bool ok = true;
    if (key == "reply_delay_ms") {
      ok = get_number(v, key, 0, &d, why);
      s.reply_delay = to_us(d);
    } else if (key == "latency_ms") {
      ok = get_number(v, key, 0, &d, why);
      s.latency_ms = d;
    } else if (key == "loop_fps") {
      ok = get_u32(v, key, &u, why);
      s.loop_fps = u;
    } else if (key == "async_queue_size") {
      ok = get_u32(v, key, &u, why);
      s.async_queue_size = u;
    } else if (key == "hw_latency_ms") {
      ok = get_number(v, key, 0, &d, why);
      s.hw_latency_ms = d;
      hw_latency_set = true;
    } else if (key == "hw_latency_status") {
      ok = get_u32(v, key, &u, why);
      s.hw_latency_status = u;
    } else if (key == "temperature_status") {
      ok = get_u32(v, key, &u, why);
      s.temperature_status = u;
    } else if (key == "status") {
      ok = parse_action_map(
          v, key,
          [&](uint32_t id, const json& x, const std::string& k) {
            return get_u32(x, k, &s.status[id], why);
          },
          why);
    } else if (key == "drop_reply") {
      ok = parse_action_map(
          v, key,
          [&](uint32_t id, const json& x, const std::string& k) {
            return get_u64(x, k, &s.drop_reply[id], why);
          },
          why);
    } else if (key == "garbage_reply") {
      ok = parse_action_map(
          v, key,
          [&](uint32_t id, const json& x, const std::string& k) {
            if (!x.is_boolean()) return fail(why, k + ": true or false is required");
            if (x.get<bool>()) s.garbage_reply.insert(id);
            return true;
          },
          why);
    } else if (key == "disconnect_after_frames") {
      ok = get_u64(v, key, &u64, why);
      s.disconnect_after_frames = u64;
    } else if (key == "reply_chunk_bytes") {
      ok = get_u64(v, key, &u64, why);
      s.reply_chunk_bytes = static_cast<size_t>(u64);
    } else if (key == "reply_chunk_delay_ms") {
      ok = get_number(v, key, 0, &d, why);
      s.reply_chunk_delay = to_us(d);
    } else if (key == "temperature_c") {
      if (!v.is_object()) {
        ok = fail(why, key + ": an object {\"ts0\": C, \"ts1\": C} is required");
      } else {
        for (auto t = v.begin(); ok && t != v.end(); ++t) {
          if (t.key() != "ts0" && t.key() != "ts1") {
            ok = fail(why, key + ": unknown field \"" + t.key() + "\"");
            break;
          }
          if (!t.value().is_number()) {
            ok = fail(why, key + "." + t.key() + ": a number is required");
            break;
          }
          (t.key() == "ts0" ? s.ts0_c : s.ts1_c) = t.value().get<float>();
        }
      }
    } else if (key == "power_w") {
      if (v.is_null()) {
        s.power_w.reset();
      } else {
        ok = get_number(v, key, 0, &d, why);
        s.power_w = static_cast<float>(d);
      }
    } else if (key == "identify") {
      if (!v.is_object()) {
        ok = fail(why, key + ": an object is required");
      } else {
        Identity& id = s.identity;
        for (auto f = v.begin(); ok && f != v.end(); ++f) {
          const std::string k = key + "." + f.key();
          std::string text;
          if (f.key() == "fw") {
            ok = get_string(f.value(), k, &text, why) &&
                 (parse_fw(text, &id) || fail(why, k + ": \"MAJOR.MINOR.REVISION\" is required"));
          } else if (f.key() == "board_name") {
            ok = get_string(f.value(), k, &id.board_name, why);
          } else if (f.key() == "product_name") {
            ok = get_string(f.value(), k, &id.product_name, why);
          } else if (f.key() == "serial_number") {
            ok = get_string(f.value(), k, &id.serial_number, why);
          } else if (f.key() == "part_number") {
            ok = get_string(f.value(), k, &id.part_number, why);
          } else if (f.key() == "protocol_version") {
            ok = get_u32(f.value(), k, &id.protocol_version, why);
          } else if (f.key() == "logger_version") {
            ok = get_u32(f.value(), k, &id.logger_version, why);
          } else if (f.key() == "is_release") {
            ok = f.value().is_boolean() || fail(why, k + ": true or false is required");
            if (ok) id.is_release = f.value().get<bool>();
          } else {
            ok = fail(why, key + ": unknown field \"" + f.key() + "\"");
          }
        }
      }
    } else if (key == "architecture") {
      ok = get_u32(v, key, &u, why);
      s.architecture = u;
    } else if (key == "throttling") {
      if (!v.is_array()) {
        ok = fail(why, key + ": an array is required");
      } else {
        for (size_t i = 0; ok && i < v.size(); ++i) {
          const std::string k = key + "[" + std::to_string(i) + "]";
          const json& e = v[i];
          if (!e.is_object() || !e.contains("after_frames") || !e.contains("state") ||
              e.size() != 2) {
            ok = fail(why, k + ": {\"after_frames\": N, \"state\": S} is required");
            break;
          }
          ThrottlingEvent ev;
          ok = get_u64(e["after_frames"], k + ".after_frames", &ev.after_frames, why) &&
               parse_throttling_state(e["state"], k + ".state", &ev.state, why);
          s.throttling.push_back(ev);
        }
      }
    } else if (key == "lifetime_s") {
      ok = get_number(v, key, 0, &d, why);
      s.lifetime = std::chrono::milliseconds(static_cast<int64_t>(d * 1000));
    } else if (key == "idle_exit_s") {
      ok = get_number(v, key, 0, &d, why);
      s.idle_exit = std::chrono::milliseconds(static_cast<int64_t>(d * 1000));
    } else {
      ok = fail(why, "unknown field \"" + key + "\"");
    }
    if (!ok) return std::nullopt;
  }
  if (!hw_latency_set) s.hw_latency_ms = s.latency_ms;
  return s;
}

void Record::count_action(uint32_t id) {
  std::lock_guard lock(mutex_);
  ++actions_[action_name(id)];
}

void Record::add_error(std::string error) {
  std::lock_guard lock(mutex_);
  errors_.push_back(std::move(error));
}

void Record::add_frame(uint64_t input_bytes, uint64_t output_bytes) {
  std::lock_guard lock(mutex_);
  ++frames_;
  input_bytes_ += input_bytes;
  output_bytes_ += output_bytes;
}

void Record::add_loop(LoopRecord loop) {
  std::lock_guard lock(mutex_);
  loops_.push_back(loop);
}

void Record::set_latency_flags_requested() {
  std::lock_guard lock(mutex_);
  latency_flags_requested_ = true;
}

std::string Record::to_json() const {
  std::lock_guard lock(mutex_);
  json doc;
  doc["actions"] = json::object();
  for (const auto& [name, n] : actions_) doc["actions"][name] = n;
  doc["frames"] = frames_;
  doc["input_bytes"] = input_bytes_;
  doc["output_bytes"] = output_bytes_;
  doc["loops"] = json::array();
  for (const auto& l : loops_)
    doc["loops"].push_back(
        {{"duration_ms", l.duration_ms}, {"sleep_ms", l.sleep_ms}, {"fps", l.fps}});
  doc["latency_flags_requested"] = latency_flags_requested_;
  doc["errors"] = errors_;
  return doc.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

bool Record::write_atomic(const std::string& path) const {
  const std::string text = to_json();
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return false;
    out << text;
    if (!out.flush()) return false;
  }
  return std::rename(tmp.c_str(), path.c_str()) == 0;
}

}  // namespace rig::test::fake_hailo

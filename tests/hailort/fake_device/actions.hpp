// The fake device's actions: what it answers to each hRPC request, modelled on
// the device side's own server (hailort_server/hailort_server.cpp and
// hrpc/server.cpp of the HailoRT version given at configure).
//
// Threads, as the real server has them (hrpc/server.cpp:15-60, 141-176):
//   - serve(fd), on a thread of its own per connection, reads each request and
//     the raw buffers that follow it (a HEF, a frame's inputs), then queues
//   - the action, run by the connection's action thread in order: a
//     synchronous reply is sent after the script's reply_delay;
//   - RUN_ASYNC frames go to the one device thread, which runs the frames of
//     every connection one at a time, in order, latency_ms each, and replies
//     to each with its outputs;
//   - each RUN_ASYNC_FOR_DURATION sleeps on a thread of its own.
// Handles (vdevices, infer models, configured infer models, devices) belong to
// the server and to the connection that made them; each kind counts from 0
// (hrpc/server_resource_manager.hpp:66-75, 180); a connection's handles go
// when it closes (hailort_server.cpp cleanup_client_resources).
//
// Not modelled (unchecked against a device): the VDevice manager's waiting
// for another client's vdevice (HAILO_DEVICE_IN_USE), the KV-cache actions,
// FETCH_LOGS and SYSTEM__RESET (answered HAILO_NOT_SUPPORTED / not at all and
// recorded as errors), a configured infer model shut down by
// RUN_ASYNC_FOR_DURATION (the real device's loop ends in shutdown()), the
// status a real device gives for a HEF it cannot parse (HAILO_INVALID_HEF here).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "framing.hpp"
#include "script.hpp"

namespace rig::test::fake_hailo {

struct Connection;

class Server {
 public:
  // `has_throttling`: this version's rpc.proto has ThrottlingStateChangeNotification.
  Server(Script script, Framing framing, bool has_throttling, Record& record);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Serves one accepted connection until it closes, then closes it. Call on
  // a thread of its own; `on_closed` runs after the connection's cleanup.
  void serve(int fd, const std::function<void()>& on_closed);
  // Unblocks every connection, sleep and the device; serve() calls end soon.
  void stop();
  size_t live_connections() const;

 private:
  struct Reply {
    uint32_t status = 0;
    std::string body;
    std::vector<std::vector<uint8_t>> buffers;  // sent after the message on success
    bool send = true;
  };
  struct InferModel {
    uint32_t client_id = 0;
    std::string name;
    // From the HEF (rig::test::hef::read_hef), when it could be read.
    bool hef_known = false;
    size_t hef_inputs = 0;
    std::vector<uint64_t> input_frame_bytes;
    bool hef_has_nms = false;
  };
  struct Cim {
    uint32_t client_id = 0;
    size_t inputs = 0, outputs = 0;
    std::vector<uint64_t> input_frame_bytes;  // empty: one buffer per input
    bool latency_measured = false;
    uint64_t frames = 0;
  };
  struct Frame {
    std::shared_ptr<Connection> conn;
    Header request;
    uint32_t cim = 0;
    std::vector<std::vector<uint8_t>> inputs;
    std::vector<uint32_t> output_sizes;
  };
  struct Io {  // a frame's buffers, split as the request's buffer_infos say
    std::vector<std::vector<uint32_t>> input_chunks;  // per input, its buffers' sizes
    std::vector<uint32_t> output_sizes;
    bool all_view = true;
  };

  // Reads what follows the request and queues its action; false: close.
  bool handle_request(const std::shared_ptr<Connection>& conn, const Message& m);
  Reply handle_sync(Connection& conn, const Message& m);
  bool split_io(uint32_t cim, const std::vector<std::pair<uint32_t, uint32_t>>& infos, Io* io,
                std::string* why);
  bool read_inputs(Connection& conn, const Io& io, std::vector<std::vector<uint8_t>>* inputs);
  void enqueue(Connection& conn, std::function<void()> action);
  void reply(Connection& conn, const Header& request, Reply r, bool delayed);
  void send(Connection& conn, Header h, const std::string& body,
            const std::vector<std::vector<uint8_t>>& buffers,
            std::optional<uint32_t> script_action);
  void device_loop();
  void run_loop(std::shared_ptr<Connection> conn, Header request, uint32_t duration_ms,
                uint32_t sleep_ms, std::vector<std::vector<uint8_t>> inputs,
                std::vector<uint32_t> output_sizes);
  void notify_throttling(uint32_t state);
  void release_client(uint32_t client_id);
  // Sleeps, unless stop() comes first: then false.
  bool sleep_for(std::chrono::microseconds d);
  void error(std::string text);

  Script script_;
  Framing framing_;
  bool has_throttling_;
  Record& record_;

  std::mutex state_mutex_;  // handles and counters below
  uint32_t client_count_ = 0;
  std::map<uint32_t, uint32_t> vdevices_;  // handle -> client id
  std::map<uint32_t, InferModel> infer_models_;
  std::map<uint32_t, Cim> cims_;
  std::map<uint32_t, uint32_t> devices_;  // handle -> client id
  uint32_t next_vdevice_ = 0, next_infer_model_ = 0, next_cim_ = 0, next_device_ = 0;
  std::map<uint32_t, uint64_t> dropped_;  // action id -> replies dropped
  uint64_t frames_total_ = 0;
  uint32_t notification_sequence_ = 0;

  mutable std::mutex conns_mutex_;
  std::vector<std::weak_ptr<Connection>> conns_;

  std::mutex stop_mutex_;
  std::condition_variable stop_cv_;
  std::atomic<bool> stopping_{false};

  std::mutex device_mutex_;
  std::condition_variable device_cv_;
  std::deque<Frame> frames_;
  std::thread device_thread_;
};

}  // namespace rig::test::fake_hailo

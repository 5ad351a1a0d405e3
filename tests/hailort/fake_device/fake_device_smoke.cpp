// Smoke test of the fake Hailo-10H device server: HailoRT's real host library
// (its hRPC client, over TCP) against fake_hailo_device of the same version.
// Links libhailort only, never the server's protobuf code. Each test starts
// a server with a script, reads its "listening ADDR" line, drives the real API
// at ADDR, stops the server (SIGTERM) and checks its record. The inference
// tests need the synthetic HEFs (hef/); without them they are skipped.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <hailo/hailort.hpp>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "hailort/fake_device/fake_outputs.hpp"

extern char** environ;

namespace {

using namespace hailort;
using nlohmann::json;
namespace fs = std::filesystem;

constexpr bool kFrom520 = RIG_HAILORT_MAJOR * 100 + RIG_HAILORT_MINOR >= 502;

std::string test_name() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  return std::string(info->test_suite_name()) + "." + info->name();
}

// A fake_hailo_device process, stopped (SIGTERM) and reaped by stop() or the destructor.
class FakeDevice {
 public:
  // Synchronous replies wait 20 ms unless the script says: HailoRT's client
  // loses a reply that comes before it waits (hrpc/client.cpp), and on a
  // loaded machine 3 ms can come first.
  explicit FakeDevice(const json& script) : FakeDevice(with_reply_delay(script).dump()) {}
  static json with_reply_delay(json script) {
    if (script.is_object() && !script.contains("reply_delay_ms")) script["reply_delay_ms"] = 20;
    return script;
  }
  explicit FakeDevice(const std::string& script_text) {
    fs::create_directories(RIG_FAKE_HAILO_WORK_DIR);
    const std::string base = std::string(RIG_FAKE_HAILO_WORK_DIR) + "/" + test_name();
    script_path_ = base + ".script.json";
    record_path_ = base + ".record.json";
    std::ofstream(script_path_) << script_text;
    fs::remove(record_path_);
    int out[2];
    if (::pipe2(out, O_CLOEXEC) != 0) return;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    std::vector<std::string> args = {RIG_FAKE_HAILO_SERVER, "--script", script_path_, "--record",
                                     record_path_};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    if (posix_spawn(&pid_, RIG_FAKE_HAILO_SERVER, &fa, nullptr, argv.data(), environ) != 0)
      pid_ = -1;
    posix_spawn_file_actions_destroy(&fa);
    ::close(out[1]);
    std::string line;
    pollfd p{out[0], POLLIN, 0};
    while (pid_ > 0 && line.find('\n') == std::string::npos && ::poll(&p, 1, 10000) > 0) {
      char buf[128];
      ssize_t n = ::read(out[0], buf, sizeof buf);
      if (n <= 0) break;
      line.append(buf, static_cast<size_t>(n));
    }
    ::close(out[0]);
    const std::string prefix = "listening ";
    if (line.rfind(prefix, 0) == 0 && line.find('\n') != std::string::npos)
      addr_ = line.substr(prefix.size(), line.find('\n') - prefix.size());
  }
  ~FakeDevice() { stop(); }
  FakeDevice(const FakeDevice&) = delete;
  FakeDevice& operator=(const FakeDevice&) = delete;

  const std::string& addr() const { return addr_; }

  // The exit status (-1 when it did not exit normally). With `signal` false
  // it waits for the server to exit by itself.
  int stop(bool signal = true) {
    if (pid_ <= 0) return exit_status_;
    if (signal) ::kill(pid_, SIGTERM);
    int st = 0;
    ::waitpid(pid_, &st, 0);
    pid_ = -1;
    exit_status_ = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return exit_status_;
  }

  json record() const {
    std::ifstream in(record_path_);
    return in ? json::parse(in, nullptr, false) : json();
  }

  std::unique_ptr<VDevice> vdevice() const {
    hailo_vdevice_params_t params;
    EXPECT_EQ(HAILO_SUCCESS, hailo_init_vdevice_params(&params));
    hailo_device_id_t id{};
    std::strncpy(id.id, addr_.c_str(), sizeof id.id - 1);
    params.device_ids = &id;
    params.device_count = 1;
    auto v = VDevice::create(params);
    EXPECT_EQ(HAILO_SUCCESS, v.status()) << "VDevice::create(" << addr_ << ")";
    return v ? v.release() : nullptr;
  }

 private:
  pid_t pid_ = -1;
  int exit_status_ = -1;
  std::string addr_, script_path_, record_path_;
};

uint64_t count(const json& record, const std::string& action) {
  return record["actions"].value(action, uint64_t{0});
}

std::string hef_path(const std::string& kind) {
  const std::string dir = RIG_FAKE_HAILO_HEF_DIR;
  if (dir.empty()) return {};
  const std::string path = dir + "/" + kind + ".hef";
  return fs::exists(path) ? path : std::string();
}

TEST(FakeDevice, DeviceQueries) {
  FakeDevice fake({{"temperature_c", {{"ts0", 41.5}, {"ts1", 43.0}}},
                   {"power_w", 2.25},
                   {"identify", {{"board_name", "Hailo-10H smoke"}}}});
  ASSERT_FALSE(fake.addr().empty());
  {
    auto vdevice = fake.vdevice();
    ASSERT_TRUE(vdevice);
    auto devices = vdevice->get_physical_devices();
    ASSERT_EQ(HAILO_SUCCESS, devices.status());
    ASSERT_EQ(1u, devices->size());
    Device& device = devices->at(0).get();

    auto id = device.identify();
    ASSERT_EQ(HAILO_SUCCESS, id.status());
    EXPECT_EQ("Hailo-10H smoke", std::string(id->board_name, id->board_name_length));
    EXPECT_EQ(uint32_t{RIG_HAILORT_MAJOR}, id->fw_version.major);
    EXPECT_EQ(uint32_t{RIG_HAILORT_MINOR}, id->fw_version.minor);
    EXPECT_EQ(uint32_t{RIG_HAILORT_REVISION}, id->fw_version.revision);
    EXPECT_EQ(HAILO_ARCH_HAILO10H, id->device_architecture);

    auto temp = device.get_chip_temperature();
    ASSERT_EQ(HAILO_SUCCESS, temp.status());
    EXPECT_FLOAT_EQ(41.5f, temp->ts0_temperature);
    EXPECT_FLOAT_EQ(43.0f, temp->ts1_temperature);

    auto power =
        device.power_measurement(HAILO_DVM_OPTIONS_AUTO, HAILO_POWER_MEASUREMENT_TYPES__POWER);
    ASSERT_EQ(HAILO_SUCCESS, power.status());
    EXPECT_FLOAT_EQ(2.25f, *power);

    auto arch = device.get_architecture();
    ASSERT_EQ(HAILO_SUCCESS, arch.status());
    EXPECT_EQ(HAILO_ARCH_HAILO10H, *arch);
  }
  EXPECT_EQ(0, fake.stop());
  json r = fake.record();
  ASSERT_TRUE(r.is_object());
  EXPECT_EQ(1u, count(r, "VDEVICE__CREATE"));
  EXPECT_EQ(1u, count(r, "VDEVICE__DESTROY"));
  EXPECT_EQ(1u, count(r, "DEVICE__CREATE"));
  EXPECT_EQ(1u, count(r, "DEVICE__DESTROY"));
  EXPECT_EQ(1u, count(r, "DEVICE__IDENTIFY"));
  EXPECT_EQ(1u, count(r, "DEVICE__GET_CHIP_TEMPERATURE"));
  EXPECT_EQ(1u, count(r, "DEVICE__POWER_MEASUREMENT"));
  EXPECT_EQ(1u, count(r, "DEVICE__GET_ARCHITECTURE"));
  // 5.2.0's DeviceHrpcClient::create sets the CRC and throttling callbacks; 5.1.1 none.
  EXPECT_EQ(kFrom520 ? 2u : 0u, count(r, "DEVICE__SET_NOTIFICATION_CALLBACK"));
  EXPECT_EQ(json::array(), r["errors"]);
}

TEST(FakeDevice, NoPowerSensorAndScriptedStatus) {
  FakeDevice fake({{"power_w", nullptr}, {"status", {{"DEVICE__GET_CHIP_TEMPERATURE", 8}}}});
  ASSERT_FALSE(fake.addr().empty());
  auto vdevice = fake.vdevice();
  ASSERT_TRUE(vdevice);
  auto devices = vdevice->get_physical_devices();
  ASSERT_EQ(HAILO_SUCCESS, devices.status());
  Device& device = devices->at(0).get();
  EXPECT_EQ(HAILO_OPEN_FILE_FAILURE,
            device.power_measurement(HAILO_DVM_OPTIONS_AUTO, HAILO_POWER_MEASUREMENT_TYPES__POWER)
                .status());
  EXPECT_EQ(HAILO_INTERNAL_FAILURE, device.get_chip_temperature().status());
}

struct Frame {
  std::vector<std::vector<uint8_t>> inputs, outputs;
};

Frame make_frame(InferModel& model, uint8_t seed) {
  Frame f;
  for (const auto& name : model.get_input_names()) {
    f.inputs.emplace_back(model.input(name)->get_frame_size());
    for (size_t i = 0; i < f.inputs.back().size(); ++i)
      f.inputs.back()[i] = static_cast<uint8_t>(seed * 13 + i * 7);
  }
  for (const auto& name : model.get_output_names())
    f.outputs.emplace_back(model.output(name)->get_frame_size(), 0);
  return f;
}

ConfiguredInferModel::Bindings bind(InferModel& model, ConfiguredInferModel& cim, Frame& f) {
  auto b = cim.create_bindings();
  EXPECT_EQ(HAILO_SUCCESS, b.status());
  for (size_t i = 0; i < f.inputs.size(); ++i)
    EXPECT_EQ(HAILO_SUCCESS, b->input(model.get_input_names()[i])
                                 ->set_buffer(MemoryView(f.inputs[i].data(), f.inputs[i].size())));
  for (size_t i = 0; i < f.outputs.size(); ++i)
    EXPECT_EQ(HAILO_SUCCESS,
              b->output(model.get_output_names()[i])
                  ->set_buffer(MemoryView(f.outputs[i].data(), f.outputs[i].size())));
  return b.release();
}

void expect_outputs(const Frame& f) {
  std::vector<std::span<const uint8_t>> ins(f.inputs.begin(), f.inputs.end());
  const uint64_t digest = rig::test::fake_hailo::frame_digest(ins);
  for (size_t i = 0; i < f.outputs.size(); ++i) {
    std::vector<uint8_t> want(f.outputs[i].size());
    rig::test::fake_hailo::fill_output(digest, i, want);
    EXPECT_EQ(want, f.outputs[i]) << "output " << i;
  }
}

TEST(FakeDevice, Inference) {
  const std::string hef = hef_path("single_u8");
  if (hef.empty()) GTEST_SKIP() << "no synthetic HEFs (hef/ not built)";
  FakeDevice fake({{"latency_ms", 2}, {"hw_latency_ms", 1.5}, {"loop_fps", 250}});
  ASSERT_FALSE(fake.addr().empty());
  {
    auto vdevice = fake.vdevice();
    ASSERT_TRUE(vdevice);
    auto model = vdevice->create_infer_model(hef);
    ASSERT_EQ(HAILO_SUCCESS, model.status());
    (*model)->set_hw_latency_measurement_flags(HAILO_LATENCY_MEASURE);
    auto cim = (*model)->configure();
    ASSERT_EQ(HAILO_SUCCESS, cim.status());
    auto queue = cim->get_async_queue_size();
    ASSERT_EQ(HAILO_SUCCESS, queue.status());
    EXPECT_EQ(4u, *queue);

    Frame one = make_frame(**model, 1);
    auto b1 = bind(**model, *cim, one);
    ASSERT_EQ(HAILO_SUCCESS, cim->run(b1, std::chrono::seconds(5)));
    expect_outputs(one);

    std::vector<Frame> frames;
    for (size_t i = 0; i < *queue; ++i) frames.push_back(make_frame(**model, uint8_t(10 + i)));
    std::vector<ConfiguredInferModel::Bindings> bindings;
    for (auto& f : frames) bindings.push_back(bind(**model, *cim, f));
    std::vector<AsyncInferJob> jobs;
    ASSERT_EQ(HAILO_SUCCESS,
              cim->wait_for_async_ready(std::chrono::seconds(2), static_cast<uint32_t>(*queue)));
    for (auto& b : bindings) {
      auto job = cim->run_async(b);
      ASSERT_EQ(HAILO_SUCCESS, job.status());
      jobs.push_back(job.release());
    }
    for (auto& j : jobs) EXPECT_EQ(HAILO_SUCCESS, j.wait(std::chrono::seconds(5)));
    for (auto& f : frames) expect_outputs(f);

    auto latency = cim->get_hw_latency_measurement();
    ASSERT_EQ(HAILO_SUCCESS, latency.status());
    EXPECT_EQ(std::chrono::nanoseconds(1500000), latency->avg_hw_latency);

    // 5.2.0's client parses the reply from the message buffer's start (the
    // header), not its body: any fps but 0 fails to de-serialize there.
    hailo_status loop_status = HAILO_UNINITIALIZED;
    uint32_t loop_fps = 0;
    auto loop = cim->run_async_for_duration(
        b1, 200, 0, [&](const AsyncInferCompletionInfo& info, uint32_t fps) {
          loop_status = info.status;
          loop_fps = fps;
        });
    ASSERT_EQ(HAILO_SUCCESS, loop.status());
    const hailo_status waited = loop->wait(std::chrono::seconds(5));
    if (kFrom520) {
      EXPECT_EQ(HAILO_RPC_FAILED, waited);
      EXPECT_EQ(HAILO_RPC_FAILED, loop_status);
    } else {
      EXPECT_EQ(HAILO_SUCCESS, waited);
      EXPECT_EQ(HAILO_SUCCESS, loop_status);
      EXPECT_EQ(250u, loop_fps);
    }
  }
  EXPECT_EQ(0, fake.stop());
  json r = fake.record();
  ASSERT_TRUE(r.is_object());
  EXPECT_EQ(5u, r["frames"].get<uint64_t>());
  EXPECT_EQ(5u, count(r, "CONFIGURED_INFER_MODEL__RUN_ASYNC"));
  EXPECT_EQ(1u, count(r, "VDEVICE__CREATE_INFER_MODEL"));
  EXPECT_EQ(1u, count(r, "INFER_MODEL__CREATE_CONFIGURED_INFER_MODEL"));
  EXPECT_EQ(1u, count(r, "CONFIGURED_INFER_MODEL__GET_HW_LATENCY_MEASUREMENT"));
  EXPECT_TRUE(r["latency_flags_requested"].get<bool>());
  ASSERT_EQ(1u, r["loops"].size());
  EXPECT_EQ(200u, r["loops"][0]["duration_ms"].get<uint32_t>());
  EXPECT_EQ(250u, r["loops"][0]["fps"].get<uint32_t>());
  EXPECT_EQ(json::array(), r["errors"]);
}

TEST(FakeDevice, LoopFpsZeroSucceeds) {
  const std::string hef = hef_path("single_u8");
  if (hef.empty()) GTEST_SKIP() << "no synthetic HEFs (hef/ not built)";
  FakeDevice fake(json{{"loop_fps", 0}});
  ASSERT_FALSE(fake.addr().empty());
  auto vdevice = fake.vdevice();
  ASSERT_TRUE(vdevice);
  auto model = vdevice->create_infer_model(hef);
  ASSERT_EQ(HAILO_SUCCESS, model.status());
  auto cim = (*model)->configure();
  ASSERT_EQ(HAILO_SUCCESS, cim.status());
  Frame f = make_frame(**model, 3);
  auto b = bind(**model, *cim, f);
  hailo_status loop_status = HAILO_UNINITIALIZED;
  uint32_t loop_fps = 1;
  auto loop = cim->run_async_for_duration(b, 50, 0,
                                          [&](const AsyncInferCompletionInfo& info, uint32_t fps) {
                                            loop_status = info.status;
                                            loop_fps = fps;
                                          });
  ASSERT_EQ(HAILO_SUCCESS, loop.status());
  EXPECT_EQ(HAILO_SUCCESS, loop->wait(std::chrono::seconds(5)));
  EXPECT_EQ(HAILO_SUCCESS, loop_status);
  EXPECT_EQ(0u, loop_fps);
  expect_outputs(f);
}

TEST(FakeDevice, LatencyRefusedOnNmsAndMultiInput) {
  if (!RIG_FAKE_HAILO_HAS_HEF_READER) GTEST_SKIP() << "the server has no HEF reader";
  for (const std::string kind : {"nms", "multi_input"}) {
    const std::string hef = hef_path(kind);
    if (hef.empty()) GTEST_SKIP() << "no synthetic HEF " << kind;
    FakeDevice fake(json::object());
    ASSERT_FALSE(fake.addr().empty());
    auto vdevice = fake.vdevice();
    ASSERT_TRUE(vdevice);
    auto model = vdevice->create_infer_model(hef);
    ASSERT_EQ(HAILO_SUCCESS, model.status()) << kind;
    (*model)->set_hw_latency_measurement_flags(HAILO_LATENCY_MEASURE);
    EXPECT_EQ(HAILO_INVALID_OPERATION, (*model)->configure().status()) << kind;
    (*model)->set_hw_latency_measurement_flags(HAILO_LATENCY_NONE);
    EXPECT_EQ(HAILO_SUCCESS, (*model)->configure().status()) << kind;
  }
}

// Sets an environment variable for one scope (the client reads
// HAILO_REQUEST_TIMEOUT_SECONDS at each request, hrpc/client.cpp get_request_timeout).
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (old_.empty())
      ::unsetenv(name_);
    else
      ::setenv(name_, old_.c_str(), 1);
  }

 private:
  const char* name_;
  std::string old_;
};

Device& physical(VDevice& vdevice) {
  auto devices = vdevice.get_physical_devices();
  EXPECT_EQ(HAILO_SUCCESS, devices.status());
  return devices->at(0).get();
}

TEST(FakeDevice, BadScriptExitsTwo) {
  FakeDevice fake(std::string("{\"no_such_field\": 1}"));
  EXPECT_TRUE(fake.addr().empty());
  EXPECT_EQ(2, fake.stop(false));
}

TEST(FakeDevice, IdleExitAfterLastClient) {
  FakeDevice fake(json{{"idle_exit_s", 0.2}});
  ASSERT_FALSE(fake.addr().empty());
  {
    auto vdevice = fake.vdevice();
    ASSERT_TRUE(vdevice);
  }
  EXPECT_EQ(0, fake.stop(false));
  EXPECT_EQ(1u, count(fake.record(), "VDEVICE__DESTROY"));
}

TEST(FakeDevice, ChunkedSlowReplies) {
  FakeDevice fake(json{{"reply_chunk_bytes", 5}, {"reply_chunk_delay_ms", 0.1}});
  ASSERT_FALSE(fake.addr().empty());
  auto vdevice = fake.vdevice();
  ASSERT_TRUE(vdevice);
  auto arch = physical(*vdevice).get_architecture();
  ASSERT_EQ(HAILO_SUCCESS, arch.status());
  EXPECT_EQ(HAILO_ARCH_HAILO10H, *arch);
}

TEST(FakeDevice, DroppedReplyTimesOutThenNextSucceeds) {
  ScopedEnv timeout("HAILO_REQUEST_TIMEOUT_SECONDS", "1");
  FakeDevice fake(json{{"drop_reply", {{"DEVICE__GET_ARCHITECTURE", 1}}}});
  ASSERT_FALSE(fake.addr().empty());
  auto vdevice = fake.vdevice();
  ASSERT_TRUE(vdevice);
  Device& device = physical(*vdevice);
  EXPECT_EQ(HAILO_TIMEOUT, device.get_architecture().status());
  EXPECT_EQ(HAILO_SUCCESS, device.get_architecture().status());
}

TEST(FakeDevice, GarbageReplyEndsTheConnection) {
  FakeDevice fake(json{{"garbage_reply", {{"DEVICE__GET_ARCHITECTURE", true}}}});
  ASSERT_FALSE(fake.addr().empty());
  auto vdevice = fake.vdevice();
  ASSERT_TRUE(vdevice);
  Device& device = physical(*vdevice);
  // The client's message loop refuses the magic and ends: every waiter gets
  // HAILO_COMMUNICATION_CLOSED (hrpc/client.cpp connect, message_loop).
  EXPECT_EQ(HAILO_COMMUNICATION_CLOSED, device.get_architecture().status());
}

TEST(FakeDevice, DisconnectAfterFrames) {
  const std::string hef = hef_path("single_u8");
  if (hef.empty()) GTEST_SKIP() << "no synthetic HEFs (hef/ not built)";
  FakeDevice fake(json{{"disconnect_after_frames", 1}});
  ASSERT_FALSE(fake.addr().empty());
  {
    auto vdevice = fake.vdevice();
    ASSERT_TRUE(vdevice);
    auto model = vdevice->create_infer_model(hef);
    ASSERT_EQ(HAILO_SUCCESS, model.status());
    auto cim = (*model)->configure();
    ASSERT_EQ(HAILO_SUCCESS, cim.status());
    Frame f = make_frame(**model, 5);
    auto b = bind(**model, *cim, f);
    EXPECT_EQ(HAILO_SUCCESS, cim->run(b, std::chrono::seconds(2)));
    expect_outputs(f);
    EXPECT_NE(HAILO_SUCCESS, cim->run(b, std::chrono::seconds(2)));
  }
  EXPECT_EQ(0, fake.stop());
  EXPECT_EQ(1u, fake.record()["frames"].get<uint64_t>());
}

TEST(FakeDevice, ThrottlingNotification) {
  const std::string hef = hef_path("single_u8");
  if (hef.empty()) GTEST_SKIP() << "no synthetic HEFs (hef/ not built)";
  FakeDevice fake(json{
      {"throttling", json::array({{{"after_frames", 1}, {"state", "THROTTLING_STATE_2_HEAVY"}}})}});
  ASSERT_FALSE(fake.addr().empty());
#if RIG_HAILORT_MAJOR * 100 + RIG_HAILORT_MINOR >= 502
  auto vdevice = fake.vdevice();
  ASSERT_TRUE(vdevice);
  std::mutex mutex;
  std::condition_variable cv;
  int seen_state = -1;
  ASSERT_EQ(HAILO_SUCCESS, physical(*vdevice).set_notification_callback(
                               [&](Device&, const hailo_notification_t& n, void*) {
                                 std::lock_guard lock(mutex);
                                 seen_state = n.body.throttling_state_change.new_state;
                                 cv.notify_all();
                               },
                               HAILO_NOTIFICATION_ID_THROTTLING_STATE_CHANGE_EVENT, nullptr));
  auto model = vdevice->create_infer_model(hef);
  ASSERT_EQ(HAILO_SUCCESS, model.status());
  auto cim = (*model)->configure();
  ASSERT_EQ(HAILO_SUCCESS, cim.status());
  Frame f = make_frame(**model, 6);
  auto b = bind(**model, *cim, f);
  ASSERT_EQ(HAILO_SUCCESS, cim->run(b, std::chrono::seconds(2)));
  std::unique_lock lock(mutex);
  EXPECT_TRUE(cv.wait_for(lock, std::chrono::seconds(2), [&] { return seen_state >= 0; }));
  EXPECT_EQ(int{HAILO_THROTTLING_STATE_2_HEAVY}, seen_state);
#else
  // 5.1.1's rpc.proto has no ThrottlingStateChangeNotification: the server
  // ignores the events and says so in its record.
  EXPECT_EQ(0, fake.stop());
  const json errors = fake.record()["errors"];
  ASSERT_EQ(1u, errors.size());
  EXPECT_NE(std::string::npos, errors[0].get<std::string>().find("no throttling notification"));
#endif
}

}  // namespace

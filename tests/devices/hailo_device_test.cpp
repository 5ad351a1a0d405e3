// The hailo device against the HailoRT test double (hailo_double/): the
// scenarios through the device, the run-for-duration failure seeds/000
// found, the re-configure after a loop, warnings from HailoRT's log, sensors,
// identity and the status mapping. All on the double's virtual clock.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "devices/hailo/hailo_device.hpp"
#include "devices/hailo/hailo_log.hpp"
#include "devices/hailo/hailo_status.hpp"
#include "hailo_double.hpp"
#include "rig/report/loop_report.hpp"
#include "rig/scenario/bench.hpp"
#include "rig/scenario/loop.hpp"

namespace rig {
namespace {

using namespace std::chrono_literals;
namespace hd = hailo_double;

const char* const kPowerWarning =
    "USB-C source electrical current advertised: 1.5A.\nThe module may run in reduced-performance "
    "mode.";

class HailoDeviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    hd::reset();
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ("hailo_test_" + std::to_string(reinterpret_cast<uintptr_t>(this)));
    std::filesystem::create_directories(dir_);
    // efficientnet_lite0 as seeds/002 saw it: 150,528 bytes in, 1,000 out.
    hef_ = (dir_ / "efficientnet_lite0.hef").string();
    std::ofstream(hef_) << hd::hef_text(
        {"input in0 224x224x3 uint8", "output out0 1x1x1000 uint8"});
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<Device> open(std::map<std::string, std::string> params = {}) {
    auto d = open_hailo_device(params, hd::clock());
    EXPECT_TRUE(d) << (d ? "" : d.error().to_string());
    return d ? std::move(*d) : nullptr;
  }
  ModelSource model() const {
    ModelSource m;
    m.path = hef_;
    return m;
  }

  std::filesystem::path dir_;
  std::string hef_;
};

TEST_F(HailoDeviceTest, DescribesTheModelWithExactFrameSizes) {
  auto d = open();
  ASSERT_TRUE(d);
  auto t = d->load(model());
  ASSERT_TRUE(t) << t.error().to_string();
  EXPECT_EQ(t->compile, hd::script().configure_time);  // configure() is its own phase
  const ModelInfo& m = d->model_info();
  EXPECT_EQ(m.name, "efficientnet_lite0");
  ASSERT_EQ(m.inputs.size(), 1u);
  EXPECT_EQ(m.inputs[0].name, "in0");
  EXPECT_EQ(m.inputs[0].bytes, 150528u);
  EXPECT_EQ(m.inputs[0].type, ElementType::u8);
  EXPECT_EQ(m.inputs[0].shape, (std::vector<int64_t>{1, 224, 224, 3}));
  EXPECT_EQ(m.outputs[0].bytes, 1000u);
  const DeviceInfo info = d->info();
  EXPECT_EQ(info.kind, "hailo");
  EXPECT_EQ(info.queue_depth, 32u);  // the model's async queue size
  EXPECT_EQ(info.own_queue_depth, 32u);
  EXPECT_TRUE(info.loop_whole);
  EXPECT_EQ(info.properties.at("architecture"), "HAILO10H");
  EXPECT_EQ(info.properties.at("device_type"), "PCIe");
  EXPECT_EQ(info.properties.at("firmware_version"), "5.2.0");
  EXPECT_EQ(info.properties.at("hailort_version"), "5.2.0");
  EXPECT_EQ(info.properties.at("input.in0"), "uint8 224x224x3, 150528 bytes per frame");
  EXPECT_EQ(hd::counters().power_mode, HAILO_POWER_MODE_PERFORMANCE);
  EXPECT_EQ(hd::counters().latency_flags, static_cast<uint32_t>(HAILO_LATENCY_MEASURE));
}

TEST_F(HailoDeviceTest, SpecParametersReachHailoRT) {
  auto d = open({{"device_id", "0000:01:00.0"},
                 {"power_mode", "ultra"},
                 {"scheduler", "none"},
                 {"batch", "4"},
                 {"depth", "8"}});
  ASSERT_TRUE(d);
  ASSERT_TRUE(d->load(model()));
  EXPECT_EQ(hd::counters().created_with_ids, std::vector<std::string>{"0000:01:00.0"});
  EXPECT_EQ(hd::counters().scheduler, HAILO_SCHEDULING_ALGORITHM_NONE);
  EXPECT_EQ(hd::counters().power_mode, HAILO_POWER_MODE_ULTRA_PERFORMANCE);
  EXPECT_EQ(hd::counters().batch_size, 4u);
  EXPECT_EQ(d->info().queue_depth, 8u);
  EXPECT_EQ(d->info().spec,
            "hailo:device_id=0000:01:00.0,power_mode=ultra,scheduler=none,batch=4,depth=8,"
            "dma_map=0,fallback=host_loop");
  for (const auto& [k, v] : std::map<std::string, std::string>{{"power_mode", "max"},
                                                               {"batch", "0"},
                                                               {"dma_map", "2"},
                                                               {"fallback", "guess"},
                                                               {"colour", "red"}}) {
    auto bad = open_hailo_device({{k, v}}, hd::clock());
    ASSERT_FALSE(bad) << k;
    EXPECT_EQ(bad.error().code, ErrorCode::invalid_argument);
    EXPECT_NE(bad.error().message.find(k), std::string::npos) << bad.error().message;
  }
}

TEST_F(HailoDeviceTest, BenchGivesTheThreeQuantities) {
  hd::script().hw_latency = 2270us;
  auto d = open();
  ASSERT_TRUE(d);
  BenchSettings s;
  s.device = "hailo";
  s.point.duration = 2s;
  s.point.repeats = 3;
  s.latency_samples = 50;
  auto r = run_bench(*d, model(), s);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_TRUE(r->verdict.valid) << (r->verdict.reasons.empty() ? "" : r->verdict.reasons[0]);
  // The slowest stage (compute, 2.27 ms) sets the pipelined rate.
  EXPECT_NEAR(r->steady.rate.median.value_or(0), 1e9 / 2'270'000.0, 1.0);
  // A lone frame: 0.84 + 2.27 + 0.84 ms, the seed's 3.95 ms overall latency.
  EXPECT_NEAR(r->latency.overall_ms.median.value_or(0), 3.95, 0.01);
  EXPECT_NEAR(r->latency.hardware_ms.median.value_or(0), 2.27, 0.001);
  ASSERT_TRUE(r->latency.bus_share);
  EXPECT_NEAR(*r->latency.bus_share, 1.68 / 3.95, 0.01);  // seeds/002: 43% of the latency
  EXPECT_DOUBLE_EQ(r->bytes.payload_in, 150528);
  EXPECT_DOUBLE_EQ(r->bytes.payload_out, 1000);
  EXPECT_DOUBLE_EQ(r->bytes.link_in, 150528);  // rig sees no bus overhead
  EXPECT_EQ(r->ttfo.load_breakdown.compile, hd::script().configure_time);
}

TEST_F(HailoDeviceTest, TheRpcFailureIsRecognisedAndTheLoopFallsBack) {
  auto d = open();
  ASSERT_TRUE(d);
  LoopSettings s;
  s.device = "hailo";
  auto r = run_loop(*d, model(), s);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(hd::counters().for_duration_calls, 1);
  EXPECT_TRUE(r->loop.includes_transfers);
  ASSERT_TRUE(r->loop.frames_completed);
  EXPECT_GT(*r->loop.frames_completed, 0u);
  // Full queue depth on 32 bindings: the slowest stage sets the rate.
  EXPECT_NEAR(r->loop.frames_per_second, 1e9 / 2'270'000.0, 2.0);
  EXPECT_FALSE(r->transfer_cost_ms);  // both figures include the transfers
  ASSERT_FALSE(r->loop.notes.empty());
  const std::string& why = r->loop.notes[0];
  EXPECT_NE(why.find("HailoRT 5.2.0"), std::string::npos) << why;
  EXPECT_NE(why.find("HAILO_RPC_FAILED(77)"), std::string::npos) << why;
  EXPECT_NE(why.find("reply.body.data()"), std::string::npos) << why;
  const std::string text = format_loop_text(*r);
  EXPECT_NE(text.find("HAILO_RPC_FAILED(77)"), std::string::npos) << text;
  EXPECT_NE(text.find("includes the per-frame transfers"), std::string::npos) << text;
  bool flagged = false;
  for (const auto& rule : r->verdict.rules)
    if (rule.rule == "loop_on_device") flagged = !rule.met;
  EXPECT_TRUE(flagged);
  // The log's de-serialize error came through the warnings channel, which
  // the monitor reads after the device loop, and the verdict names it.
  bool logged = false;
  for (const auto& w : r->monitor.device_warnings)
    logged |= w.text.find("Failed to de-serialize 'RunAsyncForDuration'") != std::string::npos;
  EXPECT_TRUE(logged);
  bool warned = false;
  for (const auto& rule : r->verdict.rules)
    if (rule.rule == "device_warnings") warned = !rule.met;
  EXPECT_TRUE(warned);
}

TEST_F(HailoDeviceTest, CancelStopsTheFallbackLoopWithCountsThatAddUp) {
  auto d = open();
  ASSERT_TRUE(d);
  ASSERT_TRUE(d->load(model()));
  std::vector<std::byte> in(150528, std::byte{3}), out(1000);
  auto id = d->bind(Bindings{{in}, {out}});
  ASSERT_TRUE(id);
  Device* device = d.get();
  hd::script().after_completion = [device](int n) {
    if (n == 100) device->cancel();  // as the server's stop() would, from another thread
  };
  auto run = d->run_for_duration(*id, 3s, 0ms);
  ASSERT_TRUE(run) << run.error().to_string();
  ASSERT_TRUE(run->includes_transfers);
  ASSERT_TRUE(run->frames_completed);
  ASSERT_TRUE(run->frames_aborted);
  // Stopped after the 100th completion; the frames still in flight (a full
  // queue of 32, less the one that completed) are aborted, never completed.
  EXPECT_EQ(*run->frames_completed, 100u);
  EXPECT_EQ(*run->frames_aborted, 31u);
  EXPECT_LT(run->elapsed, 3s);
  EXPECT_EQ(d->in_flight(), 0u);
  hd::script().after_completion = nullptr;
  // A later loop runs normally (the 77 case again, then the whole fallback).
  auto again = d->run_for_duration(*id, 1s, 0ms);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->elapsed, 1s);
}

TEST_F(HailoDeviceTest, WithoutFallbackTheRpcFailureIsANamedError) {
  auto d = open({{"fallback", "none"}});
  ASSERT_TRUE(d);
  LoopSettings s;
  s.device = "hailo";
  auto r = run_loop(*d, model(), s);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::device);
  EXPECT_NE(r.error().message.find("HAILO_RPC_FAILED(77)"), std::string::npos);
  EXPECT_NE(r.error().message.find("fallback=none"), std::string::npos);
}

TEST_F(HailoDeviceTest, ATruncatedRateIsAnIntervalWithUnknownCounts) {
  hd::script().for_duration = hd::ForDuration::works;
  auto d = open();
  ASSERT_TRUE(d);
  LoopSettings s;
  s.device = "hailo";
  auto r = run_loop(*d, model(), s);
  ASSERT_TRUE(r) << r.error().to_string();
  // ceil(3000 / 2.27) = 1322 frames in 3 s: 440.67 frames/s, reported as 440.
  EXPECT_FALSE(r->loop.frames_completed);
  EXPECT_FALSE(r->loop.frames_aborted);
  EXPECT_FALSE(r->loop.includes_transfers);
  EXPECT_EQ(r->loop.frames_per_second, 440);
  EXPECT_EQ(r->loop.rate_step, 1);
  ASSERT_TRUE(r->device_rate_upper);
  EXPECT_EQ(*r->device_rate_upper, 441);
  EXPECT_TRUE(r->transfer_cost_ms);
  const std::string text = format_loop_text(*r);
  EXPECT_NE(text.find("[440, 441)"), std::string::npos) << text;
  EXPECT_NE(text.find("frames completed      unknown"), std::string::npos) << text;
  const auto doc = loop_to_json(*r);
  EXPECT_NE(doc.find("\"frames_completed\": null"), std::string::npos) << doc;
  EXPECT_NE(doc.find("\"frames_per_second_upper\": 441"), std::string::npos) << doc;
}

TEST_F(HailoDeviceTest, ARateOfZeroSaysFewerThanOneFramePerSecond) {
  // seeds/000's control: a 5 s sleep in a 3 s loop, 1 frame, 0.33 -> 0; it succeeds.
  auto d = open();
  ASSERT_TRUE(d);
  LoopSettings s;
  s.device = "hailo";
  s.sleep_between_frames = 5s;
  auto r = run_loop(*d, model(), s);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(r->loop.frames_per_second, 0);
  EXPECT_FALSE(r->device_rate);
  bool said = false;
  for (const auto& w : r->verdict.warnings)
    said |= w.find("fewer than one frame per second") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST_F(HailoDeviceTest, TheModelIsReconfiguredAfterEveryLoop) {
  hd::script().for_duration = hd::ForDuration::works;
  auto d = open();
  ASSERT_TRUE(d);
  ASSERT_TRUE(d->load(model()));
  std::vector<std::byte> in(150528, std::byte{7}), out(1000), out2(1000);
  auto id = d->bind(Bindings{{in}, {out}});
  ASSERT_TRUE(id);
  ASSERT_TRUE(d->run(*id));
  EXPECT_EQ(hd::counters().configures, 1);
  for (int i = 0; i < 2; ++i) {
    auto loop = d->run_for_duration(*id, 1s, 0ms);
    ASSERT_TRUE(loop) << loop.error().to_string();
    EXPECT_EQ(hd::counters().configures, 2 + i);
    bool said = false;
    for (const auto& n : loop->notes) said |= n.find("re-configured") != std::string::npos;
    EXPECT_TRUE(said);
    // The re-configured model runs; its outputs are the loop's (same input).
    out2 = out;
    EXPECT_NE(out2, std::vector<std::byte>(1000));
    std::fill(out.begin(), out.end(), std::byte{0});
    ASSERT_TRUE(d->run(*id));
    EXPECT_EQ(out, out2);
  }
  EXPECT_EQ(hd::counters().shutdowns, 2);
}

TEST_F(HailoDeviceTest, ThePowerWarningComesOutOfTheDevice) {
  hd::script().log_at_create = {{"warning", kPowerWarning}, {"info", "not a warning"}};
  hd::script().log_at_configure = {{"warning", "descriptor list shorter than asked"}};
  auto d = open();
  ASSERT_TRUE(d);
  const std::string expected =
      "HailoRT warning: USB-C source electrical current advertised: 1.5A. The module may run in "
      "reduced-performance mode.";
  EXPECT_EQ(d->info().warnings, std::vector<std::string>{expected});
  EXPECT_EQ(d->take_warnings(), std::vector<std::string>{expected});
  EXPECT_TRUE(d->take_warnings().empty());  // each warning once
  ASSERT_TRUE(d->load(model()));
  EXPECT_EQ(d->take_warnings(),
            std::vector<std::string>{"HailoRT warning: descriptor list shorter than asked"});
  // A bench's verdict carries it (the power_limited rule reads the same text).
  BenchSettings s;
  s.device = "hailo";
  s.point.duration = 1s;
  s.point.repeats = 1;
  s.latency_samples = 20;
  auto r = run_bench(*d, model(), s);
  ASSERT_TRUE(r);
  bool found = false;
  for (const auto& w : r->verdict.warnings)
    found |= w.find("reduced-performance") != std::string::npos;
  EXPECT_TRUE(found);
  // ... as the power_limited confound flag, with the runtime's own text.
  bool flagged = false;
  for (const auto& rule : r->verdict.rules)
    if (rule.rule == "power_limited")
      for (const auto& f : rule.findings) flagged |= f.find("1.5A") != std::string::npos;
  EXPECT_TRUE(flagged);
}

TEST_F(HailoDeviceTest, SensorsAnswerOrSayWhyNot) {
  hd::script().temperature_c = 41.7f;
  auto d = open();
  ASSERT_TRUE(d);
  auto sensors = d->read_sensors();
  EXPECT_FLOAT_EQ(static_cast<float>(sensors.at("temperature_c")), 41.7f);
  EXPECT_EQ(sensors.count("power_w"), 0u);
  EXPECT_EQ(d->info().properties.at("power_w"), "unavailable: HAILO_OPEN_FILE_FAILURE(13)");
  hd::script().power_w = 2.5f;
  EXPECT_FLOAT_EQ(static_cast<float>(d->read_sensors().at("power_w")), 2.5f);
}

TEST_F(HailoDeviceTest, OpenFailuresNameTheStatus) {
  hd::script().device_ids.clear();
  auto none = open_hailo_device({}, hd::clock());
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code, ErrorCode::not_found);
  EXPECT_NE(none.error().message.find("HAILO_OUT_OF_PHYSICAL_DEVICES(74): no Hailo device found"),
            std::string::npos)
      << none.error().message;
  hd::reset();
  auto d = open();
  ASSERT_TRUE(d);
  ModelSource bad;
  bad.bytes = {std::byte{'x'}};
  auto load = d->load(bad);
  ASSERT_FALSE(load);
  EXPECT_NE(load.error().message.find("HAILO_INVALID_HEF(26)"), std::string::npos);
}

TEST_F(HailoDeviceTest, BindRefusesWrongSizes) {
  auto d = open();
  ASSERT_TRUE(d);
  ASSERT_TRUE(d->load(model()));
  std::vector<std::byte> in(150527), out(1000);
  auto id = d->bind(Bindings{{in}, {out}});
  ASSERT_FALSE(id);
  EXPECT_EQ(id.error().code, ErrorCode::invalid_argument);
}

TEST_F(HailoDeviceTest, DmaMapMapsPageAlignedBuffers) {
  auto d = open({{"dma_map", "1"}});
  ASSERT_TRUE(d);
  ASSERT_TRUE(d->load(model()));
  alignas(4096) static std::byte in[151552], out[4096];
  auto id = d->bind(
      Bindings{{std::span<const std::byte>(in, 150528)}, {std::span<std::byte>(out, 1000)}});
  ASSERT_TRUE(id);
  EXPECT_EQ(hd::counters().dma_maps, 2);
  std::vector<std::byte> vin(150528), vout(1000);
  if (reinterpret_cast<uintptr_t>(vin.data()) % 4096 != 0) {
    ASSERT_TRUE(d->bind(Bindings{{vin}, {vout}}));
    bool said = false;
    for (const auto& w : d->take_warnings())
      said |= w.find("not page-aligned") != std::string::npos;
    EXPECT_TRUE(said);
  }
}

TEST(HailoStatus, EveryStatusMapsToANamedError) {
  for (int s = 1; s < HAILO_STATUS_COUNT; ++s) {
    const Error e = hailo::status_error(static_cast<hailo_status>(s), "call");
    const char* name = hailo_get_status_message(static_cast<hailo_status>(s));
    ASSERT_NE(name, nullptr);
    EXPECT_NE(e.message.find(std::string(name) + "(" + std::to_string(s) + ")"), std::string::npos)
        << e.message;
    // internal is kept for HailoRT's own bugs; queue_full for a full queue only.
    if (e.code == ErrorCode::internal) {
      EXPECT_TRUE(
          s == HAILO_UNINITIALIZED || s == HAILO_INVALID_OPERATION || s == HAILO_INTERNAL_FAILURE ||
          (s >= HAILO_INVALID_LOGGER_LEVEL && s < 12) ||
          (s >= HAILO_EVENT_CREATE_FAIL && s <= HAILO_READ_EVENT_FAIL) ||
          (s >= HAILO_MUTEX_INIT_FAIL && s <= HAILO_MUTEX_INIT_FAIL) ||
          (s >= HAILO_ANSI_TO_UTF16_CONVERSION_FAILED && s <= HAILO_UNEXPECTED_ARP_TABLE_FAILURE) ||
          (s >= HAILO_THREAD_ALREADY_ACTIVATED && s <= HAILO_THREAD_NOT_JOINABLE))
          << e.message;
    }
    if (e.code == ErrorCode::queue_full) {
      EXPECT_EQ(s, HAILO_QUEUE_IS_FULL);
    }
  }
  EXPECT_EQ(hailo::error_code_for(HAILO_OUT_OF_PHYSICAL_DEVICES), ErrorCode::not_found);
  EXPECT_EQ(hailo::error_code_for(HAILO_RPC_FAILED), ErrorCode::protocol);
  EXPECT_EQ(hailo::error_code_for(HAILO_TIMEOUT), ErrorCode::timeout);
  EXPECT_EQ(hailo::error_code_for(HAILO_NOT_IMPLEMENTED), ErrorCode::unsupported);
  EXPECT_EQ(hailo::error_code_for(HAILO_OPEN_FILE_FAILURE), ErrorCode::io);
  EXPECT_EQ(hailo::error_code_for(HAILO_STREAM_ABORT), ErrorCode::device);
  EXPECT_EQ(hailo::status_name(static_cast<hailo_status>(500)), "hailo_status(500)");
}

TEST(HailoLog, ParsesFileAndConsoleRecords) {
  const auto r = hailo::parse_log(
      "garbage before\n"
      "[2026-08-29 10:00:00.123] [77] [HailoRT] [warning] [usb.cpp:12] [check_power] USB-C "
      "source electrical current advertised: 1.5A.\n"
      "The module may run in reduced-performance mode.\n"
      "[HailoRT] [error] CHECK failed - Failed to de-serialize 'RunAsyncForDuration'\n"
      "[2026-08-29 10:00:01.000] [77] [HailoRT] [info] [a.cpp:1] [f] hello\n"
      "[broken\n");
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].level, "warning");
  EXPECT_EQ(r[0].message,
            "USB-C source electrical current advertised: 1.5A. The module may run in "
            "reduced-performance mode.");
  EXPECT_EQ(r[1].level, "error");
  EXPECT_EQ(r[1].message, "CHECK failed - Failed to de-serialize 'RunAsyncForDuration'");
  EXPECT_EQ(hailo::warning_lines(r).size(), 2u);
  EXPECT_TRUE(hailo::parse_log("").empty());
  EXPECT_TRUE(hailo::parse_log("[[[[]]]]\n[HailoRT]\n[HailoRT] [nope] x\n").empty());
}

TEST(HailoLog, TailReadsWholeNewRecordsByOffset) {
  const auto path = std::filesystem::path(::testing::TempDir()) / "hailort_tail.log";
  std::ofstream(path) << "[t] [1] [HailoRT] [warning] [a:1] [f] old\n";
  hailo::LogTail tail(path.string());
  EXPECT_TRUE(tail.read_new().empty());  // only what comes after opening
  {
    std::ofstream out(path, std::ios::app);
    out << "[t] [1] [HailoRT] [warning] [a:1] [f] new\n[t] [1] [HailoRT] [warning] [a:1] [f] par";
  }
  auto r = tail.read_new();
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].message, "new");
  std::ofstream(path, std::ios::app) << "tial\n";
  r = tail.read_new();
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].message, "partial");
  std::ofstream(path) << "[t] [1] [HailoRT] [warning] [a:1] [f] rotated\n";  // shrank
  r = tail.read_new();
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].message, "rotated");
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace rig

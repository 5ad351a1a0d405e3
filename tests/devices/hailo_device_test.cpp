// The hailo device against the HailoRT test double (hailo_double/): the
// scenarios through the device, the run-for-duration failure seeds/000
// found, the re-configure after a loop, warnings from HailoRT's log, sensors,
// identity and the status mapping. All on the double's virtual clock.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

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
    // Per process and test: ctest runs the tests in parallel processes, where
    // `this` alone is often the same address (one test removed another's HEF).
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ("hailo_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    // efficientnet_lite0 as seeds/002 saw it: 150,528 bytes in, 1,000 out.
    // The file's name is not its network group's (HailoRT names models by
    // group; users name files as they like).
    hef_ = (dir_ / "efficientnet_lite0.hef").string();
    std::ofstream(hef_) << hd::hef_text({"network_group efficientnet_lite0_v2",
                                         "input in0 224x224x3 uint8",
                                         "output out0 1x1x1000 uint8"});
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
  EXPECT_EQ(info.properties.at("device_type"), "PCIe (as HailoRT's H10 client reports every link)");
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
  hd::script().rpc_round_trip = 1ms;  // would show in the lone-frame latency if timed
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
  // HailoRT's latency is a mean since configure, not a per-frame figure.
  EXPECT_FALSE(r->latency.hardware_ms.median);
  EXPECT_DOUBLE_EQ(r->bytes.payload_in, 150528);
  EXPECT_DOUBLE_EQ(r->bytes.payload_out, 1000);
  EXPECT_DOUBLE_EQ(r->bytes.link_in, 150528);  // rig sees no bus overhead
  EXPECT_EQ(r->ttfo.load_breakdown.compile, hd::script().configure_time);
}

// The real client showed it (tests/hailort/client): before a model is
// configured the device states HailoRT's usual 32, and a depth settled then
// ran past a loaded model's smaller queue, every submit past it refused as
// queue full. The scenarios settle the depth again after the load.
TEST_F(HailoDeviceTest, BenchPipelinesAtTheLoadedModelsQueueDepth) {
  hd::script().queue_size = 4;
  auto d = open();
  ASSERT_TRUE(d);
  EXPECT_EQ(d->info().queue_depth, 32u);  // before a model is configured
  BenchSettings s;
  s.device = "hailo";
  s.point.duration = 1s;
  s.point.repeats = 1;
  s.latency_samples = 20;
  auto r = run_bench(*d, model(), s);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_TRUE(r->verdict.valid) << (r->verdict.reasons.empty() ? "" : r->verdict.reasons[0]);
  EXPECT_EQ(r->effective.depth, 4u);
  EXPECT_EQ(r->device.queue_depth, 4u);
  EXPECT_EQ(r->device.properties.at("async_queue_size"), "4");
  ASSERT_EQ(r->steady.repeats.size(), 1u);
  EXPECT_GT(r->steady.repeats[0].inferences, 0u);
  EXPECT_EQ(r->steady.repeats[0].errors, 0u);
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
  // A device failure of the loop keeps the result (what came before it) and
  // names the failure; the command exits 3 (rig loop's verdict.failure).
  auto r = run_loop(*d, model(), s);
  ASSERT_TRUE(r) << r.error().to_string();
  ASSERT_TRUE(r->loop_error);
  EXPECT_EQ(r->loop_error->code, ErrorCode::device);
  EXPECT_NE(r->loop_error->message.find("HAILO_RPC_FAILED(77)"), std::string::npos);
  EXPECT_NE(r->loop_error->message.find("fallback=none"), std::string::npos);
  ASSERT_TRUE(r->verdict.failure);
  EXPECT_FALSE(r->verdict.valid);
}

TEST_F(HailoDeviceTest, ATruncatedRateIsAnIntervalThatHoldsTheTrueRate) {
  hd::script().for_duration = hd::ForDuration::works;
  auto d = open();
  ASSERT_TRUE(d);
  LoopSettings s;
  s.device = "hailo";
  auto r = run_loop(*d, model(), s);
  ASSERT_TRUE(r) << r.error().to_string();
  // ceil(3000 / 2.27) = 1322 frames completed in 3 s: 440.67 frames/s. HailoRT
  // also counts the 32 its shutdown aborts: (1322 + 32) / 3 = 451.33 -> 451.
  // The interval is [451 - 32 / 3, 452) and holds the true rate.
  const double truth = 1322.0 / 3;
  EXPECT_FALSE(r->loop.frames_completed);
  EXPECT_FALSE(r->loop.frames_aborted);
  EXPECT_FALSE(r->loop.includes_transfers);
  EXPECT_NEAR(r->loop.frames_per_second, 451 - 32.0 / 3, 1e-9);
  ASSERT_TRUE(r->device_rate_upper);
  EXPECT_DOUBLE_EQ(*r->device_rate_upper, 452);
  EXPECT_LE(r->loop.frames_per_second, truth);
  EXPECT_LT(truth, *r->device_rate_upper);
  EXPECT_TRUE(r->transfer_cost_ms);
  bool said = false;
  for (const auto& n : r->loop.notes)
    said |= n.find("uint32_t fps = 451") != std::string::npos &&
            n.find("[440.33, 452)") != std::string::npos;
  EXPECT_TRUE(said);
  const std::string text = format_loop_text(*r);
  EXPECT_NE(text.find("frames completed      unknown"), std::string::npos) << text;
  const auto doc = loop_to_json(*r);
  EXPECT_NE(doc.find("\"frames_completed\": null"), std::string::npos) << doc;
  EXPECT_NE(doc.find("\"frames_per_second_upper\": 452"), std::string::npos) << doc;
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
  // Aligned and padded as the device declares: the system's page size.
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  EXPECT_EQ(d->info().buffer_alignment, page);
  EXPECT_EQ(d->info().buffer_padding, page);
  auto* in = static_cast<std::byte*>(std::aligned_alloc(page, (150528 + page - 1) / page * page));
  auto* out = static_cast<std::byte*>(std::aligned_alloc(page, page));
  auto id = d->bind(
      Bindings{{std::span<const std::byte>(in, 150528)}, {std::span<std::byte>(out, 1000)}});
  ASSERT_TRUE(id);
  EXPECT_EQ(hd::counters().dma_maps, 2);
  ASSERT_TRUE(d->run(*id));
  EXPECT_EQ(hd::counters().bounce_copies, 0);  // H10 copies what is not page-aligned
  std::vector<std::byte> vin(150528), vout(1000);
  if (reinterpret_cast<uintptr_t>(vin.data()) % page != 0) {
    ASSERT_TRUE(d->bind(Bindings{{vin}, {vout}}));
    bool said = false;
    for (const auto& w : d->take_warnings())
      said |= w.find("not page-aligned") != std::string::npos;
    EXPECT_TRUE(said);
  }
  d.reset();  // unbinds before the buffers go
  std::free(in);
  std::free(out);
}

// ---------------------------------------------------------------------------
// Issue 25: the device against HailoRT's real behaviour, each through the
// double's model of it (hailo_double.hpp's table).

// Item 1: the file's name is not a network group; "" is the HEF's first.
TEST_F(HailoDeviceTest, LoadsAHefWhoseFileNameIsNoNetworkGroup) {
  auto d = open();
  ASSERT_TRUE(d);
  auto t = d->load(model());
  ASSERT_TRUE(t) << t.error().to_string();
  EXPECT_EQ(d->model_info().name, "efficientnet_lite0");  // rig's display name
  EXPECT_EQ(hd::counters().infer_models_created, 1);
}

TEST_F(HailoDeviceTest, ANamedNetworkGroupIsCheckedAgainstTheHef) {
  const auto two = (dir_ / "two.hef").string();
  std::ofstream(two) << hd::hef_text({"network_group alpha", "network_group beta",
                                      "input in0 8x8x3 uint8", "output out0 1x1x10 uint8"});
  ModelSource m;
  m.path = two;
  auto good = open({{"network_group", "beta"}});
  ASSERT_TRUE(good);
  ASSERT_TRUE(good->load(m));
  EXPECT_EQ(good->model_info().name, "beta");
  EXPECT_NE(good->info().spec.find("network_group=beta"), std::string::npos);
  auto bad = open({{"network_group", "gamma"}});
  ASSERT_TRUE(bad);
  auto load = bad->load(m);
  ASSERT_FALSE(load);
  EXPECT_EQ(load.error().code, ErrorCode::not_found);
  EXPECT_NE(load.error().message.find("no network group 'gamma' (its groups: alpha, beta)"),
            std::string::npos)
      << load.error().message;
}

TEST_F(HailoDeviceTest, DoubleLooksNamesUpAsHailoRT) {
  auto v = hailort::VDevice::create();
  ASSERT_TRUE(v);
  const std::string text =
      hd::hef_text({"network_group g", "input i 1x1x1 uint8", "output o 1x1x1 uint8"});
  const hailort::MemoryView hef(const_cast<char*>(text.data()), text.size());
  EXPECT_TRUE((*v)->create_infer_model(hef, ""));
  EXPECT_TRUE((*v)->create_infer_model(hef, "g"));
  EXPECT_EQ((*v)->create_infer_model(hef, "g/g").status(), HAILO_NOT_IMPLEMENTED);
  EXPECT_EQ((*v)->create_infer_model(hef, "model_file_stem").status(), HAILO_NOT_FOUND);
}

// Item 2: without the scheduler nothing runs until activate().
TEST_F(HailoDeviceTest, WithoutTheSchedulerTheModelIsActivated) {
  hd::script().for_duration = hd::ForDuration::works;
  auto d = open({{"scheduler", "none"}});
  ASSERT_TRUE(d);
  ASSERT_TRUE(d->load(model()));
  std::vector<std::byte> in(150528, std::byte{1}), out(1000);
  auto id = d->bind(Bindings{{in}, {out}});
  ASSERT_TRUE(id);
  auto run = d->run(*id);
  ASSERT_TRUE(run) << run.error().to_string();
  EXPECT_EQ(hd::counters().activations, 1);
  ASSERT_TRUE(d->run_for_duration(*id, 1s, 0ms));  // shut down, re-configured, re-activated
  EXPECT_EQ(hd::counters().activations, 2);
  EXPECT_TRUE(d->run(*id));
}

TEST_F(HailoDeviceTest, DoubleRefusesAnInactiveModelWithoutTheScheduler) {
  hailo_vdevice_params_t params{};
  ASSERT_EQ(hailo_init_vdevice_params(&params), HAILO_SUCCESS);
  params.scheduling_algorithm = HAILO_SCHEDULING_ALGORITHM_NONE;
  auto v = hailort::VDevice::create(params);
  ASSERT_TRUE(v);
  auto m = (*v)->create_infer_model(hef_);
  ASSERT_TRUE(m);
  auto c = (*m)->configure();
  ASSERT_TRUE(c);
  auto b = c->create_bindings();
  ASSERT_TRUE(b);
  std::vector<uint8_t> in(150528), out(1000);
  ASSERT_EQ(b->input("in0")->set_buffer(hailort::MemoryView(in.data(), in.size())), HAILO_SUCCESS);
  ASSERT_EQ(b->output("out0")->set_buffer(hailort::MemoryView(out.data(), out.size())),
            HAILO_SUCCESS);
  EXPECT_EQ(c->run_async(*b).status(), HAILO_STREAM_NOT_ACTIVATED);
  EXPECT_EQ(c->activate(), HAILO_SUCCESS);
  EXPECT_TRUE(c->run_async(*b));
  // With the scheduler on, activate() is refused.
  auto sv = hailort::VDevice::create();
  auto sm = (*sv)->create_infer_model(hef_);
  auto sc = (*sm)->configure();
  EXPECT_EQ(sc->activate(), HAILO_INVALID_OPERATION);
}

// Item 3: HailoRT's logger exists before main; rig reads the main file it
// writes in the default environment (HOME is the build tree's, see
// tests/devices/CMakeLists.txt), by this process's PID.
TEST_F(HailoDeviceTest, WarningsAreCapturedInTheDefaultEnvironment) {
  ASSERT_EQ(std::getenv("HAILORT_LOGGER_PATH"), nullptr) << "run through ctest";
  EXPECT_TRUE(hd::logger_created_before_main());
  const std::string home = std::getenv("HOME");
  EXPECT_EQ(hd::main_log_file(), home + "/.hailo/hailort/hailort.log");
  hd::script().log_at_create = {{"warning", kPowerWarning}};
  auto d = open();
  ASSERT_TRUE(d);
  EXPECT_EQ(d->info().properties.at("hailort_log"),
            hd::main_log_file() + " (this process's records, by PID)");
  auto w = d->take_warnings();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("1.5A"), std::string::npos);
  // Another process's record in the shared main file is not this device's.
  std::ofstream(hd::main_log_file(), std::ios::app)
      << "[2026-12-01 12:00:00.000] [1] [7] [HailoRT] [warning] [a.cpp:1] [f] not ours\n";
  EXPECT_TRUE(d->take_warnings().empty());
}

TEST(HailoLogOff, CaptureSaysItCannotWork) {
  const char* env = std::getenv("HAILORT_LOGGER_PATH");
  if (env == nullptr || std::string(env) != "NONE")
    GTEST_SKIP() << "runs with HAILORT_LOGGER_PATH=NONE";
  hd::reset();
  auto d = open_hailo_device({}, hd::clock());
  ASSERT_TRUE(d);
  EXPECT_EQ((*d)->info().properties.at("hailort_log"),
            "unavailable: HAILORT_LOGGER_PATH=NONE turns HailoRT's log off");
  ASSERT_EQ((*d)->info().warnings.size(), 1u);
  EXPECT_NE((*d)->info().warnings[0].find("cannot read HailoRT's warnings"), std::string::npos);
}

TEST(HailoLog, ParsesTheMainFilesPidAndSkipsWaitExpiries) {
  const auto r = hailo::parse_log(
      "[2026-08-29 10:00:00.123] [4242] [77] [HailoRT] [warning] [usb.cpp:12] [check_power] "
      "USB-C source electrical current advertised: 1.5A.\n"
      "[2026-08-29 10:00:00.124] [77] [HailoRT] [warning] [usb.cpp:12] [f] local\n"
      "[2026-08-29 10:00:00.125] [4242] [77] [HailoRT] [error] "
      "[configured_infer_model_hrpc_client.cpp:32] [wait] "
      "CHECK_SUCCESS failed with status=HAILO_TIMEOUT(4)\n");
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].pid, 4242);
  EXPECT_EQ(r[0].level, "warning");
  EXPECT_EQ(r[0].message, "USB-C source electrical current advertised: 1.5A.");
  EXPECT_EQ(r[1].pid, -1);
  EXPECT_EQ(r[1].message, "local");
  EXPECT_EQ(hailo::warning_lines(r).size(), 2u);  // not the wait's expiry
}

// Item 4: the latency query is outside the timed region, and is a mean.
TEST_F(HailoDeviceTest, TheLatencyMeanIsReadOutsideTheTimedRegion) {
  hd::script().hw_latency = 2270us;
  hd::script().rpc_round_trip = 1ms;
  auto d = open();
  ASSERT_TRUE(d);
  ASSERT_TRUE(d->load(model()));
  std::vector<std::byte> in(150528), out(1000);
  auto id = d->bind(Bindings{{in}, {out}});
  ASSERT_TRUE(id);
  const int queries = hd::counters().latency_queries;
  for (int i = 0; i < 3; ++i) {
    const Nanos t0 = hd::clock().now();
    auto t = d->run(*id);
    ASSERT_TRUE(t);
    EXPECT_EQ(hd::clock().now() - t0, 3950us);  // in + compute + out, no RPC
    EXPECT_FALSE(t->compute);
  }
  EXPECT_EQ(hd::counters().latency_queries, queries);
  auto sensors = d->read_sensors();
  EXPECT_DOUBLE_EQ(sensors.at("hw_latency_mean_ms"), 2.27);
  EXPECT_EQ(d->info().properties.at("hw_latency"),
            "2.270 ms, HailoRT's mean over the 3 frames since configure (not a per-frame figure)");
}

TEST_F(HailoDeviceTest, DoubleChargesAnRpcForH10Queries) {
  hd::script().hw_latency = 2270us;
  auto v = hailort::VDevice::create();
  auto m = (*v)->create_infer_model(hef_);
  auto c = (*m)->configure();
  EXPECT_EQ(c->get_hw_latency_measurement().status(), HAILO_NOT_AVAILABLE);  // no frame yet
  const Nanos t0 = hd::clock().now();
  (void)(*v)->get_physical_devices()->front().get().get_chip_temperature();
  EXPECT_EQ(hd::clock().now() - t0, hd::script().rpc_round_trip);
  // A model with two inputs: HAILO_NOT_AVAILABLE without a network name.
  const std::string text =
      hd::hef_text({"input a 1x1x1 uint8", "input b 1x1x1 uint8", "output o 1x1x1 uint8"});
  auto two =
      (*v)->create_infer_model(hailort::MemoryView(const_cast<char*>(text.data()), text.size()));
  auto c2 = (*two)->configure();
  auto bind = c2->create_bindings();
  uint8_t a = 0, b = 0, o = 0;
  bind->input("a")->set_buffer(hailort::MemoryView(&a, 1));
  bind->input("b")->set_buffer(hailort::MemoryView(&b, 1));
  bind->output("o")->set_buffer(hailort::MemoryView(&o, 1));
  ASSERT_EQ(c2->run(*bind, 1000ms), HAILO_SUCCESS);
  EXPECT_EQ(c2->get_hw_latency_measurement().status(), HAILO_NOT_AVAILABLE);
}

// Item 7: the server's short slices do not turn into HailoRT error lines.
TEST_F(HailoDeviceTest, ShortWaitsLogNothing) {
  auto d = open();
  ASSERT_TRUE(d);
  ASSERT_TRUE(d->load(model()));
  std::vector<std::byte> in(150528), out(1000);
  auto id = d->bind(Bindings{{in}, {out}});
  ASSERT_TRUE(id);
  (void)d->take_warnings();
  ASSERT_TRUE(d->submit(*id, 7));
  int timeouts = 0;
  Result<Completion> c = fail(ErrorCode::timeout, "");
  while (!(c = d->wait_next(200us)) && c.error().code == ErrorCode::timeout) ++timeouts;
  ASSERT_TRUE(c) << c.error().to_string();
  EXPECT_EQ(c->tag, 7u);
  EXPECT_GT(timeouts, 10);  // 3.95 ms in 0.2 ms slices
  EXPECT_EQ(hd::counters().wait_timeouts, 0);
  EXPECT_TRUE(d->take_warnings().empty());
}

TEST_F(HailoDeviceTest, DoubleLogsEveryExpiredWaitAsH10Does) {
  auto v = hailort::VDevice::create();
  auto m = (*v)->create_infer_model(hef_);
  auto c = (*m)->configure();
  auto b = c->create_bindings();
  std::vector<uint8_t> in(150528), out(1000);
  b->input("in0")->set_buffer(hailort::MemoryView(in.data(), in.size()));
  b->output("out0")->set_buffer(hailort::MemoryView(out.data(), out.size()));
  std::thread::id called_on;
  auto job = c->run_async(*b, [&](const hailort::AsyncInferCompletionInfo&) {
    called_on = std::this_thread::get_id();
  });
  ASSERT_TRUE(job);
  hailo::LogTail tail(hd::main_log_file(), static_cast<int64_t>(::getpid()));
  EXPECT_EQ(job->wait(1ms), HAILO_TIMEOUT);
  auto records = tail.read_new();
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].message, "CHECK_SUCCESS failed with status=HAILO_TIMEOUT(4)");
  EXPECT_EQ(job->wait(1000ms), HAILO_SUCCESS);
  // Callbacks come on HailoRT's thread, not the caller's.
  EXPECT_EQ(called_on, hd::callback_thread());
  EXPECT_NE(called_on, std::this_thread::get_id());
}

// Item 8: a Hailo-8 under HailoRT 5.x is named, with what is missing.
TEST_F(HailoDeviceTest, AHailo8SaysItNeedsHailoRT4) {
  hd::script().architecture = HAILO_ARCH_HAILO8;
  auto d = open();
  ASSERT_TRUE(d);
  ASSERT_FALSE(d->info().warnings.empty());
  EXPECT_NE(d->info().warnings[0].find("HAILO8: Hailo-8 devices run on HailoRT 4.x"),
            std::string::npos)
      << d->info().warnings[0];
  EXPECT_EQ(d->info().properties.at("device_type"), "PCIe");  // not the H10 client
}

TEST_F(HailoDeviceTest, ArchitectureSevenIsNamedByTheLibraryVersion) {
  hd::script().architecture = static_cast<hailo_device_architecture_t>(7);
  hd::script().library = {5, 1, 1};
  auto d = open();
  ASSERT_TRUE(d);
  EXPECT_EQ(d->info().properties.at("architecture"), "MARS");
  d.reset();
  hd::reset();
  hd::script().architecture = static_cast<hailo_device_architecture_t>(7);
  auto e = open();
  ASSERT_TRUE(e);
  EXPECT_EQ(e->info().properties.at("architecture"), "HAILO12L");  // 5.2.0
}

// Also: the old configured model goes before the new one is configured.
TEST_F(HailoDeviceTest, NeverTwoConfiguredModelsAtOnce) {
  hd::script().for_duration = hd::ForDuration::works;
  auto d = open();
  ASSERT_TRUE(d);
  ASSERT_TRUE(d->load(model()));
  std::vector<std::byte> in(150528), out(1000);
  auto id = d->bind(Bindings{{in}, {out}});
  ASSERT_TRUE(d->run_for_duration(*id, 1s, 0ms));
  ASSERT_TRUE(d->load(model()));
  EXPECT_EQ(hd::counters().configures, 3);
  EXPECT_EQ(hd::counters().configured_alive_max, 1);
}

// Also: a loop whose reply does not come in time is not re-configured under.
TEST_F(HailoDeviceTest, ALoopThatDoesNotAnswerIsNotReconfiguredUnder) {
  hd::script().for_duration = hd::ForDuration::works;
  hd::script().rpc_overhead = 20s;  // the reply comes after the 15 s grace
  auto d = open();
  ASSERT_TRUE(d);
  ASSERT_TRUE(d->load(model()));
  std::vector<std::byte> in(150528), out(1000);
  auto id = d->bind(Bindings{{in}, {out}});
  auto loop = d->run_for_duration(*id, 1s, 0ms);
  ASSERT_FALSE(loop);
  EXPECT_EQ(loop.error().code, ErrorCode::timeout);
  EXPECT_NE(loop.error().message.find("may still be looping"), std::string::npos);
  EXPECT_EQ(hd::counters().configures, 1);  // not while the loop may run
  ASSERT_TRUE(d->run(*id));                 // waits for the loop's answer, then re-configures
  EXPECT_EQ(hd::counters().configures, 2);
  EXPECT_EQ(hd::counters().configured_alive_max, 1);
}

// Also: the fallback loop's buffers outlive requests that hang.
TEST_F(HailoDeviceTest, HungFallbackRequestsAreAbortedBeforeTheirBuffersGo) {
  hd::script().hang_after = 40;  // the 41st request never completes
  auto d = open();
  ASSERT_TRUE(d);
  ASSERT_TRUE(d->load(model()));
  std::vector<std::byte> in(150528), out(1000);
  auto id = d->bind(Bindings{{in}, {out}});
  auto run = d->run_for_duration(*id, 3s, 0ms);
  ASSERT_TRUE(run) << run.error().to_string();
  EXPECT_TRUE(run->includes_transfers);
  EXPECT_EQ(hd::counters().requests_in_flight, 0);  // none left holding rig's buffers
  bool said = false;
  for (const auto& n : run->notes)
    said |= n.find("shut the configured model down") != std::string::npos;
  EXPECT_TRUE(said);
  hd::script().hang_after = -1;
  EXPECT_TRUE(d->run(*id));  // re-configured first
}

// HailoRT maps the page-aligned part of any buffer and succeeds (row 4).
TEST_F(HailoDeviceTest, DoubleMapsTheAlignedPartOfAnyBuffer) {
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  auto v = hailort::VDevice::create();
  auto* p = static_cast<std::byte*>(std::aligned_alloc(page, 2 * page));
  EXPECT_EQ((*v)->dma_map(p, page, HAILO_DMA_BUFFER_DIRECTION_H2D), HAILO_SUCCESS);
  EXPECT_EQ((*v)->dma_map(p + page / 2, page, HAILO_DMA_BUFFER_DIRECTION_H2D), HAILO_SUCCESS);
  EXPECT_EQ((*v)->dma_map(p + 1, 10, HAILO_DMA_BUFFER_DIRECTION_H2D), HAILO_SUCCESS);  // no page
  std::free(p);
}

// dma_map=1 maps every buffer (HailoRT maps the aligned part) and says which
// HailoRT still copies in part.
TEST_F(HailoDeviceTest, DmaMapMapsEveryBufferAndSaysWhichAreCopiedInPart) {
  auto d = open({{"dma_map", "1"}});
  ASSERT_TRUE(d);
  ASSERT_TRUE(d->load(model()));
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  auto* base = static_cast<std::byte*>(std::aligned_alloc(page, 40 * page));
  auto id = d->bind(Bindings{{std::span<const std::byte>(base + 8, 150528)},
                             {std::span<std::byte>(base + 39 * page + 8, 1000)}});
  ASSERT_TRUE(id);
  EXPECT_EQ(hd::counters().dma_maps, 2);
  bool said = false;
  for (const auto& w : d->take_warnings())
    said |= w.find("not page-aligned") != std::string::npos &&
            w.find("maps only their page-aligned part") != std::string::npos;
  EXPECT_TRUE(said);
  d.reset();
  EXPECT_EQ(hd::counters().dma_unmaps, 2);
  std::free(base);
}

// ---------------------------------------------------------------------------
// Issue 31: HailoRT's refusals, the lost wakeup, and the counts.

const char* const kNmsHef[] = {"network_group yolo", "input in0 8x8x3 uint8",
                               "output boxes 1x1x400 float32 nms_on_chip"};
const char* const kTwoInputHef[] = {"network_group pair", "input a 8x8x3 uint8",
                                    "input b 8x8x3 uint8", "output o 1x1x10 uint8"};

// Item 1 / row 15: configure with a latency meter fails for on-chip NMS or
// several inputs; rig configures once more without it and says why.
TEST_F(HailoDeviceTest, AModelHailoRTRefusesLatencyForIsConfiguredWithoutIt) {
  for (const bool nms : {true, false}) {
    hd::reset();
    // The core's warning reaches this host's log where the core runs here
    // (not H10, whose core runs in the device's server).
    hd::script().architecture = nms ? HAILO_ARCH_HAILO15H : HAILO_ARCH_HAILO10H;
    const auto path = (dir_ / (nms ? "nms.hef" : "pair.hef")).string();
    std::ofstream(path) << (nms ? hd::hef_text({kNmsHef[0], kNmsHef[1], kNmsHef[2]})
                                : hd::hef_text({kTwoInputHef[0], kTwoInputHef[1], kTwoInputHef[2],
                                                kTwoInputHef[3]}));
    ModelSource m;
    m.path = path;
    auto d = open();
    ASSERT_TRUE(d);
    (void)d->take_warnings();
    auto t = d->load(m);
    ASSERT_TRUE(t) << t.error().to_string();
    EXPECT_EQ(hd::counters().configures, 2);
    EXPECT_EQ(hd::counters().latency_flags, static_cast<uint32_t>(HAILO_LATENCY_NONE));
    const std::string why = d->info().properties.at("hw_latency");
    EXPECT_EQ(why.rfind("unavailable: ", 0), 0u) << why;
    EXPECT_NE(why.find("on-chip NMS or several inputs"), std::string::npos) << why;
    for (const auto& w : d->take_warnings()) {
      EXPECT_EQ(w.find("HW Latency measurement"), std::string::npos) << w;
      EXPECT_EQ(w.find("HAILO_INVALID_OPERATION"), std::string::npos) << w;
    }
    std::vector<std::byte> in(nms ? 192 : 192), in2(192), out(nms ? 1600 : 10);
    auto id = nms ? d->bind(Bindings{{in}, {out}}) : d->bind(Bindings{{in, in2}, {out}});
    ASSERT_TRUE(id) << id.error().to_string();
    EXPECT_TRUE(d->run(*id));
    (void)d->read_sensors();
    EXPECT_EQ(d->info().properties.at("hw_latency"), why);  // not asked again
  }
}

// Item 2 / row 11: a failed run_async shuts the model down; the next frame
// re-configures instead of failing with HAILO_STREAM_ABORT for ever.
TEST_F(HailoDeviceTest, AFailedSubmitReconfiguresTheModel) {
  auto d = open();
  ASSERT_TRUE(d);
  ASSERT_TRUE(d->load(model()));
  std::vector<std::byte> in(150528), out(1000);
  auto id = d->bind(Bindings{{in}, {out}});
  ASSERT_TRUE(id);
  hd::script().fail_run_async_at = 1;
  ASSERT_FALSE(d->submit(*id, 1));
  EXPECT_EQ(hd::counters().shutdowns, 1);
  ASSERT_TRUE(d->submit(*id, 2));
  auto c = d->wait_next(5s);
  ASSERT_TRUE(c) << c.error().to_string();
  EXPECT_FALSE(c->error) << c->error->to_string();
  EXPECT_EQ(hd::counters().configures, 2);
  // And a lone frame the same way.
  hd::script().fail_run_async_at = hd::counters().run_async_calls + 1;
  ASSERT_FALSE(d->run(*id));
  auto again = d->run(*id);
  EXPECT_TRUE(again) << again.error().to_string();
  EXPECT_EQ(hd::counters().configures, 3);
}

TEST_F(HailoDeviceTest, DoubleChecksBufferSizesAtRunAsyncAndShutsDown) {
  auto v = hailort::VDevice::create();
  auto m = (*v)->create_infer_model(hef_);
  auto c = (*m)->configure();
  auto b = c->create_bindings();
  std::vector<uint8_t> in(150528), out(1000), shorter(100);
  EXPECT_EQ(b->input("in0")->set_buffer(hailort::MemoryView(shorter.data(), shorter.size())),
            HAILO_SUCCESS);  // HailoRT checks at run_async
  EXPECT_EQ(b->output("out0")->set_buffer(hailort::MemoryView(out.data(), out.size())),
            HAILO_SUCCESS);
  EXPECT_EQ(c->run_async(*b).status(), HAILO_INVALID_OPERATION);
  EXPECT_EQ(hd::counters().shutdowns, 1);
  auto b2 = c->create_bindings();  // still succeeds
  ASSERT_TRUE(b2);
  b2->input("in0")->set_buffer(hailort::MemoryView(in.data(), in.size()));
  b2->output("out0")->set_buffer(hailort::MemoryView(out.data(), out.size()));
  hailo_status seen = HAILO_UNINITIALIZED;
  auto job =
      c->run_async(*b2, [&](const hailort::AsyncInferCompletionInfo& i) { seen = i.status; });
  ASSERT_TRUE(job);  // on H10 the request goes out; the server's pipeline is aborted
  EXPECT_EQ(job->wait(1000ms), HAILO_STREAM_ABORT);  // the job's status
  EXPECT_EQ(seen, HAILO_STREAM_ABORT);
}

// Items 3 and 16: a reply lost to hrpc/client.cpp's wait is retried once.
TEST_F(HailoDeviceTest, ALostQueryReplyIsRetriedOnce) {
  hd::script().temperature_c = 40.0f;
  hd::script().lose_reply = {"identify", "get_chip_temperature"};
  auto d = open();
  ASSERT_TRUE(d);
  EXPECT_EQ(hd::counters().lost_replies, 2);
  EXPECT_EQ(d->info().properties.at("firmware_version"), "5.2.0");
  EXPECT_EQ(d->info().properties.at("temperature_c"), "available");
  const auto w = d->take_warnings();
  bool retried = false, kept = false;
  for (const auto& line : w) {
    retried |= line.find("HailoRT's identify timed out (HAILO_TIMEOUT) although") == 0 &&
               line.find("retried once: ") != std::string::npos;
    kept |= line == "HailoRT error: CHECK_SUCCESS failed with status=HAILO_TIMEOUT(4)";
  }
  EXPECT_TRUE(retried) << (w.empty() ? "" : w[0]);
  EXPECT_TRUE(kept);  // not an expired wait: the client's timeout stays a warning
}

TEST_F(HailoDeviceTest, ALostConfigureReplyReopensTheVDevice) {
  hd::script().lose_reply = {"configure"};
  auto d = open();
  ASSERT_TRUE(d);
  (void)d->take_warnings();
  auto t = d->load(model());
  ASSERT_TRUE(t) << t.error().to_string();
  EXPECT_EQ(hd::counters().vdevices_created, 2);
  EXPECT_EQ(hd::counters().vdevices_alive, 1);
  // The configured model the device made for the lost reply went with its VDevice.
  EXPECT_EQ(hd::counters().configured_alive_max, 1);
  bool said = false;
  for (const auto& w : d->take_warnings())
    said |= w.find("HailoRT's configure timed out (HAILO_TIMEOUT) although") == 0;
  EXPECT_TRUE(said);
  std::vector<std::byte> in(150528), out(1000);
  auto id = d->bind(Bindings{{in}, {out}});
  ASSERT_TRUE(id);
  EXPECT_TRUE(d->run(*id));
}

TEST_F(HailoDeviceTest, ALostVDeviceCreateReplyIsRetried) {
  hd::script().lose_reply = {"VDevice::create"};
  auto d = open();
  ASSERT_TRUE(d);
  EXPECT_EQ(hd::counters().vdevices_created, 2);
  bool said = false;
  for (const auto& w : d->info().warnings)
    said |= w.find("HailoRT's VDevice::create timed out (HAILO_TIMEOUT) although") == 0;
  EXPECT_TRUE(said);
}

TEST_F(HailoDeviceTest, DoubleLosesAScriptedReplyOnce) {
  hd::script().lose_reply = {"identify"};
  auto v = hailort::VDevice::create();
  auto& dev = (*v)->get_physical_devices()->front().get();
  hailo::LogTail tail(hd::main_log_file(), static_cast<int64_t>(::getpid()));
  const Nanos t0 = hd::clock().now();
  EXPECT_EQ(dev.identify().status(), HAILO_TIMEOUT);
  EXPECT_GE(hd::clock().now() - t0, Nanos(10s));  // the request's timeout
  EXPECT_TRUE(dev.identify());                    // once
  auto records = tail.read_new();
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].message, "CHECK_SUCCESS failed with status=HAILO_TIMEOUT(4)");
  EXPECT_EQ(records[0].location, "device_hrpc_client.cpp:111");
  EXPECT_EQ(records[0].function, "identify");
}

// Item 4: Hailo-15's expired waits (infer_model.cpp's CHECK) are no warnings either.
TEST_F(HailoDeviceTest, AHailo15ExpiredWaitIsNoWarning) {
  hd::script().architecture = HAILO_ARCH_HAILO15H;
  auto d = open();
  ASSERT_TRUE(d);
  ASSERT_TRUE(d->load(model()));
  std::vector<std::byte> in(150528), out(1000);
  auto id = d->bind(Bindings{{in}, {out}});
  ASSERT_TRUE(id);
  (void)d->take_warnings();
  hd::script().hang_after = 0;
  ASSERT_TRUE(d->submit(*id, 1));
  auto c = d->wait_next(2s);  // through AsyncInferJob::wait, which expires
  ASSERT_FALSE(c);
  EXPECT_EQ(hd::counters().wait_timeouts, 1);
  EXPECT_TRUE(d->take_warnings().empty());
  hd::script().hang_after = -1;
}

TEST_F(HailoDeviceTest, DoubleLogsAHailo15ExpiredWaitAsInferModelDoes) {
  hd::script().architecture = HAILO_ARCH_HAILO15H;
  hd::script().hang_after = 0;
  auto v = hailort::VDevice::create();
  auto m = (*v)->create_infer_model(hef_);
  auto c = (*m)->configure();
  auto b = c->create_bindings();
  std::vector<uint8_t> in(150528), out(1000);
  b->input("in0")->set_buffer(hailort::MemoryView(in.data(), in.size()));
  b->output("out0")->set_buffer(hailort::MemoryView(out.data(), out.size()));
  auto job = c->run_async(*b);
  ASSERT_TRUE(job);
  hailo::LogTail tail(hd::main_log_file(), static_cast<int64_t>(::getpid()));
  EXPECT_EQ(job->wait(3ms), HAILO_TIMEOUT);
  auto records = tail.read_new();
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].message,
            "CHECK failed - Waiting for async job to finish has failed with timeout (3ms)");
  EXPECT_EQ(records[0].location, "infer_model.cpp:1147");
}

TEST(HailoLog, OnlyAsyncInferJobWaitExpiriesAreDropped) {
  const auto r = hailo::parse_log(
      "[t] [1] [2] [HailoRT] [error] [configured_infer_model_hrpc_client.cpp:32] [wait] "
      "CHECK_SUCCESS failed with status=HAILO_TIMEOUT(4)\n"
      "[t] [1] [2] [HailoRT] [error] [infer_model.cpp:1147] [wait] CHECK failed - Waiting for "
      "async job to finish has failed with timeout (1000ms)\n"
      "[t] [1] [2] [HailoRT] [error] [device_hrpc_client.cpp:111] [identify] "
      "CHECK_SUCCESS failed with status=HAILO_TIMEOUT(4)\n");
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].location, "configured_infer_model_hrpc_client.cpp:32");
  EXPECT_EQ(r[0].function, "wait");
  EXPECT_EQ(hailo::warning_lines(r),
            std::vector<std::string>{"HailoRT error: CHECK_SUCCESS failed with "
                                     "status=HAILO_TIMEOUT(4)"});
  EXPECT_EQ(hailo::warning_lines({r[2]}).size(), 1u);
}

// Item 5 / row 15: a batch above the queue fails configure with
// HAILO_INVALID_OPERATION; rig names the batch.
TEST_F(HailoDeviceTest, ABatchHailoRTRefusesIsNamed) {
  auto d = open({{"batch", "64"}});
  ASSERT_TRUE(d);
  auto t = d->load(model());
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().code, ErrorCode::invalid_argument);
  EXPECT_NE(t.error().message.find("batch=64"), std::string::npos) << t.error().message;
  EXPECT_NE(t.error().message.find("HAILO_INVALID_OPERATION(6)"), std::string::npos)
      << t.error().message;
}

// Item 6: "" with several network groups is refused up front, naming them.
TEST_F(HailoDeviceTest, SeveralNetworkGroupsNeedANameUpFront) {
  const auto two = (dir_ / "two.hef").string();
  std::ofstream(two) << hd::hef_text({"network_group alpha", "network_group beta",
                                      "input in0 8x8x3 uint8", "output out0 1x1x10 uint8"});
  ModelSource m;
  m.path = two;
  auto d = open();
  ASSERT_TRUE(d);
  auto load = d->load(m);
  ASSERT_FALSE(load);
  EXPECT_EQ(load.error().code, ErrorCode::invalid_argument);
  EXPECT_NE(load.error().message.find("the HEF holds 2 network groups (alpha, beta): name one "
                                      "with network_group=NAME"),
            std::string::npos)
      << load.error().message;
  EXPECT_EQ(hd::counters().configures, 0);
}

// Rows 15 and 6: the double's configure refuses what HailoRT's does.
TEST_F(HailoDeviceTest, DoubleConfiguresAsHailoRTRefuses) {
  auto v = hailort::VDevice::create();
  auto hef = [](std::vector<std::string> lines) { return hd::hef_text(lines); };
  auto model_of = [&](const std::string& text, const std::string& name = "") {
    return (*v)->create_infer_model(
        hailort::MemoryView(const_cast<char*>(text.data()), text.size()), name);
  };
  const std::string groups =
      hef({"network_group a", "network_group b", "input i 1x1x1 uint8", "output o 1x1x1 uint8"});
  auto both = model_of(groups);
  ASSERT_TRUE(both);  // create_infer_model takes the first group's streams
  EXPECT_EQ((*both)->configure().status(), HAILO_INVALID_ARGUMENT);
  EXPECT_TRUE((*model_of(groups, "b"))->configure());
  const std::string nms = hef({kNmsHef[0], kNmsHef[1], kNmsHef[2]});
  const std::string pair =
      hef({kTwoInputHef[0], kTwoInputHef[1], kTwoInputHef[2], kTwoInputHef[3]});
  for (const auto* text : {&nms, &pair}) {
    auto m = model_of(*text);
    ASSERT_TRUE(m);
    (*m)->set_hw_latency_measurement_flags(HAILO_LATENCY_MEASURE);
    EXPECT_EQ((*m)->configure().status(), HAILO_INVALID_OPERATION);
    (*m)->set_hw_latency_measurement_flags(HAILO_LATENCY_NONE);
    auto c = (*m)->configure();
    ASSERT_TRUE(c);
    EXPECT_EQ(c->get_hw_latency_measurement().status(), HAILO_NOT_AVAILABLE);  // no meter
  }
  auto big = model_of(hef({"input i 1x1x1 uint8", "output o 1x1x1 uint8"}));
  (*big)->set_batch_size(33);  // above the queue of 32
  EXPECT_EQ((*big)->configure().status(), HAILO_INVALID_OPERATION);
}

// Item 7: the latency's frame count includes the fallback loop's frames.
TEST_F(HailoDeviceTest, TheLatencyMeanCountsTheFallbackLoopsFrames) {
  hd::script().hw_latency = 2270us;
  auto d = open();
  ASSERT_TRUE(d);
  ASSERT_TRUE(d->load(model()));
  std::vector<std::byte> in(150528), out(1000);
  auto id = d->bind(Bindings{{in}, {out}});
  ASSERT_TRUE(id);
  ASSERT_TRUE(d->run(*id));
  auto run = d->run_for_duration(*id, 1s, 0ms);  // the 77 case: re-configured, then the fallback
  ASSERT_TRUE(run) << run.error().to_string();
  ASSERT_TRUE(run->includes_transfers);
  (void)d->read_sensors();
  const std::string expected = "HailoRT's mean over the " +
                               std::to_string(hd::counters().latency_frames) +
                               " frames since configure";
  EXPECT_NE(d->info().properties.at("hw_latency").find(expected), std::string::npos)
      << d->info().properties.at("hw_latency") << " / " << expected;
}

// Item 8: the loop's own failure is reported, the re-configure's beside it.
TEST_F(HailoDeviceTest, ALoopFailureIsReportedBeforeTheReconfigureFailure) {
  auto d = open({{"fallback", "none"}});
  ASSERT_TRUE(d);
  ASSERT_TRUE(d->load(model()));
  std::vector<std::byte> in(150528), out(1000);
  auto id = d->bind(Bindings{{in}, {out}});
  ASSERT_TRUE(id);
  hd::script().configure_status = HAILO_OUT_OF_FW_MEMORY;  // the re-configure fails
  auto run = d->run_for_duration(*id, 1s, 0ms);
  ASSERT_FALSE(run);
  const std::string& m = run.error().message;
  EXPECT_EQ(m.find("HailoRT 5.2.0's run_async_for_duration failed with HAILO_RPC_FAILED(77)"), 0u)
      << m;
  EXPECT_NE(m.find("HAILO_OUT_OF_FW_MEMORY(71)"), std::string::npos) << m;
}

// Row 10: the 77 case is 5.2.0's; 5.1.1 parses the reply right.
TEST_F(HailoDeviceTest, UnderHailoRT511TheOnDeviceLoopAnswers) {
  hd::script().library = {5, 1, 1};
  auto d = open();
  ASSERT_TRUE(d);
  LoopSettings s;
  s.device = "hailo";
  auto r = run_loop(*d, model(), s);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_FALSE(r->loop.includes_transfers);
  EXPECT_NEAR(r->loop.frames_per_second, 451 - 32.0 / 3, 1e-9);
}

// Row 16: VDevice::create and its parameters as HailoRT's.
TEST_F(HailoDeviceTest, DoubleCreatesVDevicesAsHailoRT) {
  hailo_vdevice_params_t params{};
  ASSERT_EQ(hailo_init_vdevice_params(&params), HAILO_SUCCESS);
  ASSERT_NE(params.group_id, nullptr);
  EXPECT_STREQ(params.group_id, HAILO_UNIQUE_VDEVICE_GROUP_ID);
  EXPECT_EQ(params.device_ids, nullptr);
  EXPECT_FALSE(params.multi_process_service);
  auto bad = open_hailo_device({{"device_id", "0000:09:00.0"}}, hd::clock());
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("HAILO_INVALID_ARGUMENT(2)"), std::string::npos)
      << bad.error().message;
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
          s == HAILO_UNINITIALIZED || s == HAILO_INTERNAL_FAILURE ||
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
  // HailoRT refused the call in the model's state (item 5), not rig's bug.
  EXPECT_EQ(hailo::error_code_for(HAILO_INVALID_OPERATION), ErrorCode::device);
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

// spdlog's rotating sink renames hailort.log to hailort.1.log at 1 MB
// (HailoRT keeps one spare, utils/hailort_logger.cpp): the records written
// between the last read and the rotation are read from the spare first.
TEST(HailoLog, TailReadsTheEndOfTheSpareAfterARotation) {
  const auto dir = std::filesystem::path(::testing::TempDir()) / "hailort_rotation";
  std::filesystem::create_directories(dir);
  const auto path = dir / "hailort.log";
  std::ofstream(path) << "[t] [1] [HailoRT] [warning] [a:1] [f] old old old old old\n";
  hailo::LogTail tail(path.string());
  std::ofstream(path, std::ios::app) << "[t] [1] [HailoRT] [warning] [a:1] [f] before\n";
  std::filesystem::rename(path, dir / "hailort.1.log");
  std::ofstream(path) << "[t] [1] [HailoRT] [warning] [a:1] [f] after\n";
  const auto r = tail.read_new();
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].message, "before");
  EXPECT_EQ(r[1].message, "after");
  std::filesystem::remove_all(dir);
}

// The file rig reads is one HailoRT holds open (the double, like HailoRT,
// opened its sinks before main under the test's HOME and working folder): a
// writable main folder HailoRT never opened a file in is not read.
TEST(HailoLog, TheSinkReadIsOneThisProcessHoldsOpen) {
  const auto held = hailo::locate_log();
  EXPECT_EQ(held.path, hd::main_log_file());
  EXPECT_TRUE(held.shared);
  const char* home = std::getenv("HOME");
  const std::string saved = home ? home : "";
  const auto other = std::filesystem::path(::testing::TempDir()) / "hailort_other_home";
  std::filesystem::create_directories(other / ".hailo" / "hailort");
  ::setenv("HOME", other.c_str(), 1);
  const auto moved = hailo::locate_log();
  ::setenv("HOME", saved.c_str(), 1);
  std::filesystem::remove_all(other);
  EXPECT_EQ(moved.path, std::filesystem::weakly_canonical(hd::local_log_file()).string());
  EXPECT_FALSE(moved.shared);
  EXPECT_NE(moved.note.find("is not a file this process writes"), std::string::npos) << moved.note;
}

}  // namespace
}  // namespace rig

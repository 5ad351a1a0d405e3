// The device registry: its table against what each device accepts and the
// README's table; spec text parsed once into a DeviceSpec, and opened; the
// typed facts the sim and cpu devices report.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "known_params.hpp"
#include "rig/device.hpp"
#include "rig/device_registry.hpp"
#include "rig/device_spec.hpp"
#include "rig/link_profile.hpp"
#include "rig/model.hpp"
#include "rig/units.hpp"

namespace rig {
namespace {

using Params = std::map<std::string, std::string>;

// A spec of `kind` with one parameter set (a remote one as a query option
// on a socket nobody serves: the option is parsed before connecting).
std::string spec_with(const DeviceKind& kind, const std::string& key, const std::string& value,
                      const std::string& needs = {}) {
  if (!kind.prefixes.empty()) return "unix:/nonexistent-rig-dir/rig.sock?" + key + "=" + value;
  return kind.name + ":" + (needs.empty() ? "" : needs + ",") + key + "=" + value;
}

TEST(DeviceRegistry, EveryKindHasAFormAnOpenFunctionAndHelpedParameters) {
  std::set<std::string> names;
  for (const auto& kind : device_kinds()) {
    EXPECT_TRUE(names.insert(kind.name).second) << kind.name << " listed twice";
    EXPECT_EQ(find_device_kind(kind.name), &kind);
    EXPECT_FALSE(kind.forms.empty()) << kind.name;
    EXPECT_FALSE(kind.summary.empty()) << kind.name;
    EXPECT_NE(kind.open, nullptr) << kind.name;
    if (!kind.built) {
      EXPECT_FALSE(kind.availability.empty()) << kind.name << ": say why not built";
    }
    std::set<std::string> params;
    for (const auto& p : kind.params) {
      EXPECT_TRUE(params.insert(p.name).second) << kind.name << "." << p.name << " listed twice";
      EXPECT_FALSE(p.value.empty() || p.default_text.empty() || p.help.empty() || p.example.empty())
          << kind.name << "." << p.name;
    }
  }
  EXPECT_EQ(names, (std::set<std::string>{"cpu", "sim", "null", "hailo", "remote"}));
  EXPECT_EQ(find_device_kind("gpu"), nullptr);
}

// The table's grammar is what each device accepts: every parameter with its
// example value opens the device (a remote one gets past its own options to
// the connection), and an unknown one is refused by the device, which lists
// exactly the table's parameters as the known ones.
TEST(DeviceRegistry, EveryParameterIsAcceptedByItsDeviceAndNoOtherIs) {
  for (const auto& kind : device_kinds()) {
    if (!kind.built) continue;
    for (const auto& p : kind.params) {
      const bool needs_missing =
          p.needs == "runtime=ort" &&
          kind.availability.find("runtime=ort not built") != std::string::npos;
      const std::string text = spec_with(kind, p.name, p.example, p.needs);
      auto device = open_device(text);
      if (kind.name == "cpu" || kind.name == "sim" || kind.name == "null") {
        if (needs_missing) {
          ASSERT_FALSE(device) << text;
          EXPECT_EQ(device.error().code, ErrorCode::unsupported) << device.error().message;
        } else {
          EXPECT_TRUE(device) << text << ": " << device.error().to_string();
        }
      } else if (!device) {  // hailo without hardware, remote without a server
        EXPECT_NE(device.error().code, ErrorCode::invalid_argument)
            << text << ": " << device.error().to_string();
      }
    }
    const std::string bogus = spec_with(kind, "bogus_knob", "1");
    auto refused = open_device(bogus);
    ASSERT_FALSE(refused) << bogus;
    EXPECT_EQ(refused.error().code, ErrorCode::invalid_argument) << refused.error().message;
    EXPECT_NE(refused.error().message.find("'bogus_knob'"), std::string::npos)
        << refused.error().message;
    std::set<std::string> listed;
    for (const auto& p : kind.params)
      if (p.name != "link") listed.insert(p.name);  // the registry expands a sim's link=
    EXPECT_EQ(test::known_in(refused.error().message), listed) << refused.error().message;
  }
}

TEST(DeviceRegistry, AKindNotBuiltIsParsedAndRefusedAtOpenSayingHowToBuildIt) {
  const DeviceKind* hailo = find_device_kind("hailo");
  ASSERT_NE(hailo, nullptr);
  auto spec = parse_device_spec("hailo:depth=4");
  ASSERT_TRUE(spec) << spec.error().to_string();
  if (hailo->built) GTEST_SKIP() << "HailoRT is built in";
  EXPECT_NE(hailo->availability.find("HailoRT"), std::string::npos) << hailo->availability;
  auto device = open_device(*spec);
  ASSERT_FALSE(device);
  EXPECT_EQ(device.error().code, ErrorCode::unsupported);
  EXPECT_NE(device.error().message.find("-DRIG_WITH_HAILO=ON"), std::string::npos);
  EXPECT_EQ(device_option_help().find("hailo"), std::string::npos) << device_option_help();
}

TEST(DeviceRegistry, AnUnknownKindIsNamedWithTheNearestKnownOne) {
  auto expect = [](const char* text, const std::string& needle) {
    auto spec = parse_device_spec(text);
    ASSERT_FALSE(spec) << text;
    EXPECT_EQ(spec.error().code, ErrorCode::invalid_argument);
    EXPECT_NE(spec.error().message.find(needle), std::string::npos)
        << text << ": " << spec.error().message;
  };
  expect("smi", "unknown device 'smi' (did you mean 'sim'? known: ");
  expect("nul:depth=2", "(did you mean 'null'?");
  expect("unx", "(did you mean 'unix:PATH'?");
  expect("remote", "unknown device 'remote' (known: ");  // written tcp:// or unix:, never so
  expect("accelerator", "unknown device 'accelerator' (known: cpu[:...], sim[:...]");
  EXPECT_EQ(edit_distance("smi", "sim"), 2u);
  EXPECT_EQ(edit_distance("", "cpu"), 3u);
  EXPECT_EQ(nearest_word("bnech", {"bench", "model"}), "bench");
  EXPECT_EQ(nearest_word("xyz", {"bench", "model"}), "");
}

TEST(DeviceRegistry, TheHelpTextNamesTheKindsBuiltIn) {
  const std::string help = device_option_help("device to host");
  EXPECT_EQ(help.rfind("device to host: cpu[:...], sim[:...], null[:...]", 0), 0u) << help;
  EXPECT_NE(help.find("tcp://HOST:PORT, unix:PATH"), std::string::npos) << help;
  EXPECT_NE(help.find("rig devices"), std::string::npos) << help;
}

// The README's device table is the registry's (rig devices --markdown prints it).
TEST(DeviceRegistry, TheReadmeTableIsTheRegistrys) {
  std::ifstream in(std::string(RIG_SOURCE_DIR) + "/README.md");
  ASSERT_TRUE(in) << "README.md";
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string readme = buffer.str();
  const std::string begin = "<!-- device table: generated by `rig devices --markdown` -->\n";
  const std::string end = "<!-- end of device table -->";
  const size_t from = readme.find(begin);
  ASSERT_NE(from, std::string::npos) << "README.md lacks: " << begin;
  const size_t to = readme.find(end, from);
  ASSERT_NE(to, std::string::npos) << "README.md lacks: " << end;
  EXPECT_EQ(readme.substr(from + begin.size(), to - from - begin.size()), device_table_markdown())
      << "README.md's device table differs from the registry's: replace it with the output of "
         "`rig devices --markdown`";
}

TEST(ParseDeviceSpec, KnowsCpuAndSim) {
  auto cpu = parse_device_spec("cpu");
  ASSERT_TRUE(cpu) << cpu.error().to_string();
  EXPECT_EQ(cpu->kind, "cpu");
  EXPECT_FALSE(cpu->remote());
  EXPECT_TRUE(cpu->given.empty());
  EXPECT_TRUE(cpu->endpoint.empty());

  auto threads = parse_device_spec(" cpu:threads=2, workers=1 ");
  ASSERT_TRUE(threads) << threads.error().to_string();
  EXPECT_EQ(threads->given, (Params{{"threads", "2"}, {"workers", "1"}}));
  EXPECT_EQ(threads->params, threads->given);
  EXPECT_EQ(threads->text(), "cpu:threads=2,workers=1");

  auto sim = parse_device_spec("sim:compute=2.27ms,bw=290MB/s,depth=32");
  ASSERT_TRUE(sim) << sim.error().to_string();
  EXPECT_EQ(sim->kind, "sim");
  EXPECT_EQ(sim->params, sim->given);
  EXPECT_EQ(sim->params.at("bw"), "290MB/s");
}

TEST(ParseDeviceSpec, RemoteEndpointsAreKeptAsGiven) {
  for (const char* text : {"tcp://127.0.0.1:9000", "tcp://host:1?timeout=5s&token=a=b",
                           "unix:/tmp/rig.sock", "unix:relative.sock?timeout=1s"}) {
    auto spec = parse_device_spec(text);
    ASSERT_TRUE(spec) << text << ": " << spec.error().to_string();
    EXPECT_EQ(spec->kind, "remote") << text;
    EXPECT_TRUE(spec->remote()) << text;
    EXPECT_EQ(spec->endpoint, text);
    EXPECT_TRUE(spec->given.empty()) << text;
    EXPECT_TRUE(spec->params.empty()) << text;
    EXPECT_EQ(spec->text(), redact_secrets(text));  // the display form never shows a token
  }
}

TEST(ParseDeviceSpec, ExpandsASimsLinkProfile) {
  auto spec = parse_device_spec("sim:link=usb3-gen2,compute=2ms,depth=8");
  ASSERT_TRUE(spec) << spec.error().to_string();
  EXPECT_EQ(spec->given, (Params{{"compute", "2ms"}, {"depth", "8"}, {"link", "usb3-gen2"}}));
  EXPECT_EQ(spec->params, (Params{{"bw_in", "290MB/s"},
                                  {"bw_out", "290MB/s"},
                                  {"compute", "2ms"},
                                  {"depth", "8"},
                                  {"duplex", "half"},
                                  {"lat", "0.45ms"}}));
  EXPECT_EQ(spec->given_text(), "sim:compute=2ms,depth=8,link=usb3-gen2");
  // What a device is opened with parses back to itself.
  auto again = parse_device_spec(spec->text());
  ASSERT_TRUE(again) << again.error().to_string();
  EXPECT_EQ(again->params, spec->params);
  EXPECT_EQ(again->given, spec->params);
  // Only a sim knows link=: a cpu keeps it, for the device to refuse.
  auto cpu = parse_device_spec("cpu:link=usb3-gen2");
  ASSERT_TRUE(cpu);
  EXPECT_EQ(cpu->params, cpu->given);
}

TEST(ParseDeviceSpec, ErrorsNameTheProblem) {
  auto expect = [](const char* text, const std::string& needle) {
    auto spec = parse_device_spec(text);
    ASSERT_FALSE(spec) << text;
    EXPECT_EQ(spec.error().code, ErrorCode::invalid_argument) << text;
    EXPECT_NE(spec.error().message.find(needle), std::string::npos)
        << text << ": " << spec.error().message;
  };
  expect("", "empty device spec");
  expect("sim:compute", "expected key=value");
  expect("sim:depth=1,depth=2", "given twice");
  expect("gpu:depth=1",
         "unknown device 'gpu' (did you mean 'cpu'? known: cpu[:...], sim[:...], null[:...], "
         "hailo[:...], tcp://HOST:PORT, unix:PATH; rig devices lists them)");
  expect("sim:link=usb9", "sim parameter link: unknown link profile 'usb9'");
  expect("sim:link=bw=1GB/s", "sim parameter link takes a profile name");
}

TEST(OpenDevice, OpensAParsedSpecAndRefusesUnknownKinds) {
  auto spec = parse_device_spec("sim:link=pcie-gen3-x4,compute=1ms");
  ASSERT_TRUE(spec);
  auto device = open_device(*spec);
  ASSERT_TRUE(device) << device.error().to_string();
  EXPECT_EQ((*device)->info().queue_depth, 32u);
  // A knob edited on the value reaches the device.
  ASSERT_TRUE(spec->set("depth", "4"));
  auto edited = open_device(*spec);
  ASSERT_TRUE(edited) << edited.error().to_string();
  EXPECT_EQ((*edited)->info().queue_depth, 4u);

  DeviceSpec gpu;
  gpu.kind = "gpu";
  auto unknown = open_device(gpu);
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message.find("unknown device 'gpu'"), std::string::npos);
  auto from_text = open_device("gpu");
  ASSERT_FALSE(from_text);
  EXPECT_EQ(from_text.error().message, unknown.error().message);
  // The device refuses parameters it does not know.
  auto cpu = open_device("cpu:link=usb3-gen2");
  ASSERT_FALSE(cpu);
  EXPECT_NE(cpu.error().message.find("unknown cpu parameter 'link'"), std::string::npos);
}

TEST(DeviceFacts, TheSimReportsItsDuplexAndVirtualClock) {
  for (auto [text, duplex] :
       std::vector<std::pair<std::string, Duplex>>{{"sim", Duplex::half},
                                                   {"sim:duplex=half", Duplex::half},
                                                   {"sim:duplex=full", Duplex::full},
                                                   {"sim:link=pcie-gen2-x1", Duplex::full},
                                                   {"sim:link=usb3-gen2", Duplex::half}}) {
    auto device = open_device(text);
    ASSERT_TRUE(device) << text << ": " << device.error().to_string();
    const DeviceInfo info = (*device)->info();
    EXPECT_EQ(info.duplex, duplex) << text;
    EXPECT_EQ(info.clock, ClockKind::virtual_time) << text;
    EXPECT_EQ(info.device_queue_depth(), info.queue_depth) << text;
    EXPECT_FALSE(info.memory_bytes) << text;
    EXPECT_EQ(info.properties.at("duplex"), to_string(duplex)) << text;
  }
}

TEST(DeviceFacts, TheCpuIsOnTheRealClockWithNoDuplex) {
  auto device = open_device("cpu:threads=1,workers=2");
  ASSERT_TRUE(device) << device.error().to_string();
  const DeviceInfo info = (*device)->info();
  EXPECT_EQ(info.clock, ClockKind::real);
  EXPECT_EQ(info.duplex, Duplex::unknown);
  EXPECT_EQ(info.device_queue_depth(), 4u);
}

TEST(ModelSources, TheSimNamesAModelByTheOneRule) {
  auto device = open_device("sim:load=0ms");
  ASSERT_TRUE(device);
  TransportSpec transport;
  transport.frame = {16, 16};
  auto bytes = build_transport_model(transport);
  ASSERT_TRUE(bytes) << bytes.error().to_string();
  ModelSource source;
  source.bytes = *bytes;
  source.path = "/models/net.v2.onnx";  // not read: bytes come first
  ASSERT_TRUE((*device)->load(source));
  EXPECT_EQ((*device)->model_info().name, model_display_name(source));
  EXPECT_EQ((*device)->model_info().name, "net.v2");

  ModelSource by_name;
  by_name.server_name = "sub/a.onnx";
  auto refused = (*device)->load(by_name);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::invalid_argument);
}

TEST(SimClock, SleepUntilLetsEventsHappenAtTheirOwnTimes) {
  // compute=2ms, no link cost: frames submitted at t0 land at t0+2ms, t0+4ms.
  auto device = open_device("sim:load=0ms,compute=2ms,bw=1TB/s,depth=4");
  ASSERT_TRUE(device) << device.error().to_string();
  TransportSpec transport;
  transport.frame = {8, 8};
  auto bytes = build_transport_model(transport);
  ASSERT_TRUE(bytes);
  ModelSource source;
  source.bytes = *bytes;
  ASSERT_TRUE((*device)->load(source));
  const ModelInfo& model = (*device)->model_info();
  std::vector<std::byte> in(model.input_bytes()), out(model.output_bytes());
  Bindings b;
  b.inputs = {std::span<const std::byte>(in)};
  b.outputs = {std::span<std::byte>(out)};
  auto binding = (*device)->bind(b);
  ASSERT_TRUE(binding);
  Clock& clock = (*device)->clock();
  const Nanos t0 = clock.now();
  ASSERT_TRUE((*device)->submit(*binding, 1));
  clock.sleep_until(t0 + std::chrono::milliseconds(10));
  EXPECT_EQ(clock.now(), t0 + std::chrono::milliseconds(10));
  auto c = (*device)->wait_next(Nanos(0));
  ASSERT_TRUE(c) << c.error().to_string();
  EXPECT_EQ(c->tag, 1u);
  // Completed when the frame did, not when the sleep ended.
  EXPECT_LT(c->completed_at - t0, std::chrono::microseconds(2100));
  EXPECT_GE(c->completed_at - t0, std::chrono::milliseconds(2));
  // Sleeping into the past leaves the clock where it is.
  clock.sleep_until(t0);
  EXPECT_EQ(clock.now(), t0 + std::chrono::milliseconds(10));
}

// The sim's parameters are refused outside the ranges where its arithmetic
// holds (a transfer time beyond int64 nanoseconds made bw=1e-300MB/s free);
// a step that would leave them saturates instead of wrapping.
TEST(SimArithmetic, ParametersOutOfRangeAreRefusedNaming) {
  const std::pair<std::string, std::string> refused[] = {
      {"bw=1e-300MB/s", "bw must be at least 1 B/s"},
      {"bw=1e-12MB/s", "bw must be at least 1 B/s"},
      {"bw_in=0.5B/s", "bw_in must be at least 1 B/s"},
      {"bw=1e300MB/s", "out of range"},
      {"compute=1e300s", "out of range"},
      {"lat=1e7s", "out of range"},
      {"drift=1e300", "drift must be <= 1e6"},
      {"slow_at=0s,slow_factor=1e9", "slow_factor must be <= 1e6"},
  };
  for (const auto& [params, message] : refused) {
    auto device = open_device("sim:" + params);
    ASSERT_FALSE(device) << params;
    EXPECT_EQ(device.error().code, ErrorCode::invalid_argument);
    EXPECT_NE(device.error().message.find(message), std::string::npos)
        << params << ": " << device.error().message;
  }
  auto custom = parse_link_profile("bw=1e-12MB/s,lat=1ms,depth=4");
  ASSERT_FALSE(custom);
  EXPECT_NE(custom.error().message.find("at least 1 B/s"), std::string::npos);
}

TEST(SimArithmetic, ATransferBeyondOneStepIsRefusedAtLoadAndComputeSaturates) {
  TransportSpec transport;
  transport.frame = {512, 512};  // 1 MiB in
  auto bytes = build_transport_model(transport);
  ASSERT_TRUE(bytes);
  ModelSource source;
  source.bytes = *bytes;
  // 1 MiB at 1 B/s is 12 days: beyond the 1e6 s a step may last.
  auto slow = open_device("sim:bw=1B/s");
  ASSERT_TRUE(slow) << slow.error().to_string();
  auto load = (*slow)->load(source);
  ASSERT_FALSE(load);
  EXPECT_NE(load.error().message.find("longer than the simulation's limit of 1e6 s"),
            std::string::npos)
      << load.error().message;
  // 1e5 s x 1e6 is 1e20 ns, out of int64: the compute saturates at 1e6 s.
  auto huge = open_device("sim:load=0ms,compute=1e5s,slow_at=0s,slow_factor=1e6,bw=1TB/s");
  ASSERT_TRUE(huge) << huge.error().to_string();
  ASSERT_TRUE((*huge)->load(source));
  const ModelInfo& model = (*huge)->model_info();
  std::vector<std::byte> in(model.input_bytes()), out(model.output_bytes());
  Bindings b;
  b.inputs = {std::span<const std::byte>(in)};
  b.outputs = {std::span<std::byte>(out)};
  auto binding = (*huge)->bind(b);
  ASSERT_TRUE(binding);
  const Nanos t0 = (*huge)->clock().now();
  auto t = (*huge)->run(*binding);
  ASSERT_TRUE(t) << t.error().to_string();
  ASSERT_TRUE(t->compute);
  EXPECT_EQ(*t->compute, kMaxDuration);
  EXPECT_GT((*huge)->clock().now() - t0, kMaxDuration);
  // A server passes a client's loop duration through: out of range, refused.
  auto loop = (*huge)->run_for_duration(*binding, Nanos::max(), Nanos(0));
  ASSERT_FALSE(loop);
  EXPECT_NE(loop.error().message.find("at most 1e6 s"), std::string::npos);
}

}  // namespace
}  // namespace rig

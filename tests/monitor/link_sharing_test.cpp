// The shared_link confound for a device behind rig serve on this host: a
// served cpu device (the rule is skipped for virtual clocks) over TCP on
// lo, where the kernel counts rig's bytes at both ends, and over a unix
// socket, which crosses no interface and is shared only through the
// server's other connections. Without other traffic nothing is raised; a
// second client sending during the run raises it. lo's counters are
// machine-wide: the ctest entries run serially (tests/monitor/CMakeLists.txt).
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <thread>
#include <vector>

#include "rig/device.hpp"
#include "rig/model.hpp"
#include "rig/scenario/bench.hpp"
#include "server/server.hpp"

namespace rig {
namespace {

// 64 KiB in, 16 KiB out: rig's own bytes dwarf the packets' framing.
ModelSource transport_model() {
  TransportSpec spec;
  spec.frame = {128, 128};
  ModelSource m;
  m.bytes = *build_transport_model(spec);
  m.name = "transport-128";
  return m;
}

std::string listen_address(bool unix_socket) {
  if (!unix_socket) return "127.0.0.1:0";
  return "unix:" + (std::filesystem::temp_directory_path() /
                    ("rig-link-sharing-" + std::to_string(::getpid()) + ".sock"))
                       .string();
}

std::unique_ptr<server::Server> cpu_server(bool unix_socket) {
  auto cpu = open_device("cpu:threads=1");
  EXPECT_TRUE(cpu) << cpu.error().to_string();
  if (!cpu) return nullptr;
  server::ServerSettings s;
  s.listen = listen_address(unix_socket);
  auto server = server::Server::start(std::move(*cpu), s);
  EXPECT_TRUE(server) << server.error().to_string();
  return server ? std::move(*server) : nullptr;
}

BenchSettings short_bench() {
  BenchSettings s;
  s.point.duration = std::chrono::milliseconds(300);
  s.point.repeats = 1;
  s.point.min_inferences = 10;
  s.point.warmup_max = std::chrono::milliseconds(200);
  s.latency_samples = 20;
  return s;
}

// Another client of the same server, running its frames back to back from
// start() until stop().
class OtherClient {
 public:
  explicit OtherClient(const server::Server& server) {
    auto d = open_device(server.address());
    EXPECT_TRUE(d) << d.error().to_string();
    if (!d) return;
    device_ = std::move(*d);
    EXPECT_TRUE(device_->load(transport_model()));
    in_.resize(device_->model_info().input_bytes());
    out_.resize(device_->model_info().output_bytes());
    Bindings b;
    b.inputs.emplace_back(in_);
    b.outputs.emplace_back(out_);
    binding_ = device_->bind(b).value_or(0);
  }
  void start() {
    thread_ = std::thread([this] {
      while (!stop_.load())
        if (!device_->run(binding_)) failed_ = true;
    });
  }
  void stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  bool ok() const { return device_ && !failed_; }

 private:
  std::unique_ptr<Device> device_;
  std::vector<std::byte> in_, out_;
  BindingId binding_ = 0;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  bool failed_ = false;
};

const RuleOutcome& shared_link_rule(const BenchResult& r) {
  for (const auto& o : r.verdict.rules)
    if (o.rule == "shared_link") return o;
  ADD_FAILURE() << "no shared_link rule";
  static const RuleOutcome none;
  return none;
}

class LinkSharing : public ::testing::TestWithParam<bool> {};

TEST_P(LinkSharing, RigsOwnTrafficIsNotOtherTraffic) {
  auto server = cpu_server(GetParam());
  ASSERT_TRUE(server);
  auto remote = open_device(server->address());
  ASSERT_TRUE(remote) << remote.error().to_string();
  auto r = run_bench(**remote, transport_model(), short_bench());
  ASSERT_TRUE(r) << r.error().to_string();
  const RuleOutcome& o = shared_link_rule(*r);
  EXPECT_EQ(o.evidence.rfind("skipped", 0), std::string::npos) << o.evidence;
  EXPECT_TRUE(o.met) << o.evidence << (o.findings.empty() ? "" : "\n" + o.findings[0]);
}

TEST_P(LinkSharing, ASecondClientSendingIsOtherTraffic) {
  auto server = cpu_server(GetParam());
  ASSERT_TRUE(server);
  auto remote = open_device(server->address());
  ASSERT_TRUE(remote) << remote.error().to_string();
  OtherClient other(*server);
  ASSERT_TRUE(other.ok());
  other.start();
  auto r = run_bench(**remote, transport_model(), short_bench());
  other.stop();
  EXPECT_TRUE(other.ok());
  ASSERT_TRUE(r) << r.error().to_string();
  const RuleOutcome& o = shared_link_rule(*r);
  EXPECT_FALSE(o.met) << o.evidence;
  ASSERT_FALSE(o.findings.empty());
  EXPECT_NE(o.findings[0].find("shared link"), std::string::npos) << o.findings[0];
}

INSTANTIATE_TEST_SUITE_P(Transports, LinkSharing, ::testing::Values(false, true),
                         [](const auto& param_info) {
                           return param_info.param ? std::string("UnixSocket")
                                                   : std::string("TcpLoopback");
                         });

}  // namespace
}  // namespace rig

// The warnings channel across rig serve: a remote device forwards the hosted
// device's warnings (read_sensors with take_warnings), once each, and the
// monitor reads them after the load like any device's.
#include <gtest/gtest.h>

#include "rig/device.hpp"
#include "rig/engine.hpp"
#include "rig/model.hpp"
#include "rig/monitor/monitor.hpp"
#include "server/server.hpp"

namespace rig {
namespace {

TEST(RemoteWarnings, TheHostedDevicesWarningsComeBackOnce) {
  auto sim = open_device("sim:compute=1us,load=0ms,depth=2,warn=hosted_low_power,temp=42");
  ASSERT_TRUE(sim) << sim.error().to_string();
  server::ServerSettings s;
  s.listen = "127.0.0.1:0";
  auto srv = server::Server::start(std::move(*sim), s);
  ASSERT_TRUE(srv) << srv.error().to_string();
  auto remote = open_device((*srv)->address());
  ASSERT_TRUE(remote) << remote.error().to_string();
  EXPECT_TRUE((*remote)->take_warnings().empty());  // nothing loaded yet

  TransportSpec spec;
  spec.frame = {8, 8};
  auto bytes = build_transport_model(spec);
  ASSERT_TRUE(bytes);
  ModelSource model;
  model.bytes = *bytes;
  model.name = "t8";
  MonitorSettings ms;
  Monitor monitor(ms, **remote);
  monitor.start();
  auto cold = cold_start(**remote, model, 1, 1, &monitor);
  ASSERT_TRUE(cold) << cold.error().to_string();
  const MonitorRecord r = monitor.finish();
  ASSERT_EQ(r.device_warnings.size(), 1u);
  EXPECT_EQ(r.device_warnings[0].when, "after load");
  EXPECT_EQ(r.device_warnings[0].text, "server: hosted_low_power");
  EXPECT_TRUE((*remote)->take_warnings().empty());  // taken once
  EXPECT_DOUBLE_EQ(r.samples.back().values.at("device:temperature_c"), 42);
  // The hosted sim's figures are simulated: host sources are not sampled.
  EXPECT_FALSE(r.host_sampled);
}

}  // namespace
}  // namespace rig

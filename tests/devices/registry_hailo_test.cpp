// The registry's hailo row against the hailo device's own parser, on the
// HailoRT test double: built where HailoRT is not (where it is,
// registry_test opens the real device with each parameter).
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "devices/hailo/hailo_device.hpp"
#include "hailo_double.hpp"
#include "known_params.hpp"
#include "rig/device_registry.hpp"

namespace rig {
namespace {

namespace hd = hailo_double;

TEST(HailoRegistryRow, EveryParameterIsAcceptedByTheDeviceAndNoOtherIs) {
  const DeviceKind* hailo = find_device_kind("hailo");
  ASSERT_NE(hailo, nullptr);
  std::set<std::string> listed;
  for (const auto& p : hailo->params) {
    hd::reset();
    auto device = open_hailo_device({{p.name, p.example}}, hd::clock());
    EXPECT_TRUE(device) << p.name << "=" << p.example << ": " << device.error().to_string();
    listed.insert(p.name);
  }
  hd::reset();
  auto refused = open_hailo_device({{"bogus_knob", "1"}}, hd::clock());
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::invalid_argument);
  EXPECT_EQ(test::known_in(refused.error().message), listed) << refused.error().message;
}

}  // namespace
}  // namespace rig

// rig devices, the -d help texts and the unknown-device error through the
// executable: all read from the device registry's table.
#include <gtest/gtest.h>

#include <string>

#include "cli_support.hpp"
#include "rig/device_registry.hpp"

namespace rig {
namespace {

using test::CliRun;
using test::rig;

bool has(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

TEST(DevicesCli, ListsEveryKindWithItsStatusAndParameters) {
  const CliRun r = rig("devices");
  ASSERT_EQ(r.status, 0) << r.output;
  for (const auto& kind : device_kinds()) {
    const std::string status = kind.name + (kind.built ? ": available" : ": not built (");
    EXPECT_TRUE(has(r.output, status)) << "missing '" << status << "' in:\n" << r.output;
    for (const auto& form : kind.forms) EXPECT_TRUE(has(r.output, "  " + form + "\n")) << form;
    for (const auto& p : kind.params)
      EXPECT_TRUE(has(r.output, p.name + "=" + p.value)) << kind.name << "." << p.name;
  }
  // One line per parameter: NAME=FORM, its default, its help.
  EXPECT_TRUE(has(r.output, "compute=DUR")) << r.output;
  EXPECT_TRUE(has(r.output, "default 1ms")) << r.output;
  EXPECT_TRUE(has(r.output, "device compute time per frame")) << r.output;
  EXPECT_TRUE(has(r.output, "remote: available; needs a rig serve to connect to")) << r.output;
  EXPECT_TRUE(has(r.output, "(runtime=ort only)")) << r.output;
}

TEST(DevicesCli, MarkdownIsTheRegistrysTable) {
  const CliRun r = rig("devices --markdown");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output, device_table_markdown());
}

TEST(DevicesCli, EveryDeviceOptionsHelpComesFromTheRegistry) {
  for (const char* command :
       {"bench", "loop", "ladder", "sweep", "run", "check", "compare", "soak", "profile"}) {
    const CliRun r = rig(std::string(command) + " --help");
    EXPECT_EQ(r.status, 0) << command << ": " << r.output;
    EXPECT_TRUE(has(r.output, device_option_help().substr(11))) << command << ":\n" << r.output;
  }
  EXPECT_TRUE(has(rig("serve --help").output, device_option_help("device to host")));
  EXPECT_TRUE(has(rig("ab --help").output, device_option_help("base device spec")));
}

TEST(DevicesCli, AnUnknownDeviceNamesTheNearestKind) {
  const CliRun r = rig("bench -d smi:depth=1 -q --no-history");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(has(r.output, "unknown device 'smi' (did you mean 'sim'? known: ")) << r.output;
}

}  // namespace
}  // namespace rig

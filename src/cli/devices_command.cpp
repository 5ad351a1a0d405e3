// rig devices [--markdown]
// The device kinds from the registry's table (rig/device_registry.hpp): for
// each, whether it is built into this binary and what it lacks here, its spec
// forms, and every parameter with its default and help. --markdown prints
// the README's device table instead.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>

#include "cli/command.hpp"
#include "rig/device_registry.hpp"

namespace rig::cli {
namespace {

struct DevicesOptions {
  bool markdown = false;
};

std::string pad(const std::string& text, size_t width) {
  return text + std::string(width > text.size() ? width - text.size() : 0, ' ');
}

// One kind: its status line, what it is, its forms, and a parameter per line
// in three aligned columns (NAME=FORM, the default, the help).
std::string kind_text(const DeviceKind& kind) {
  std::string status = kind.built ? "available" : "not built";
  if (!kind.availability.empty())
    status += kind.built ? "; " + kind.availability : " (" + kind.availability + ")";
  std::string out = kind.name + ": " + status + "\n  " + kind.summary;
  if (!kind.doc.empty()) out += " (" + kind.doc + ")";
  out += "\n";
  for (const auto& form : kind.forms) out += "  " + form + "\n";
  size_t name_width = 0, default_width = 0;
  for (const auto& p : kind.params) {
    name_width = std::max(name_width, p.name.size() + 1 + p.value.size());
    default_width = std::max(default_width, p.default_text.size() + 9);
  }
  for (const auto& p : kind.params) {
    std::string help = p.help;
    if (!p.needs.empty()) help += " (" + p.needs + " only)";
    out += "    " + pad(p.name + "=" + p.value, name_width) + "  " +
           pad("default " + p.default_text, default_width) + "  " + help + "\n";
  }
  return out;
}

int run_devices_command(const DevicesOptions& o) {
  if (o.markdown) {
    std::fputs(device_table_markdown().c_str(), stdout);
    return 0;
  }
  std::string out = "Device kinds (-d SPEC; rig <command> -d cpu:threads=2, ...):\n";
  for (const auto& kind : device_kinds()) out += "\n" + kind_text(kind);
  std::fputs(out.c_str(), stdout);
  return 0;
}

}  // namespace

Command add_devices_command(CLI::App& app) {
  auto o = std::make_shared<DevicesOptions>();
  CLI::App* sub = app.add_subcommand(
      "devices",
      "The device kinds: whether each is built into this binary, its spec and its parameters");
  sub->add_flag("--markdown", o->markdown,
                "print the README's device table (markdown) instead, built or not");
  return {sub, [o] { return run_devices_command(*o); }};
}

}  // namespace rig::cli

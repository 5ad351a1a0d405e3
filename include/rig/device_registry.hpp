// The device registry's table: one row per device kind, with its spec
// grammar, whether this binary has it, and the function that opens it. The
// parser (parse_device_spec), open_device, the "unknown device" message,
// every -d help text of the CLI, `rig devices` and the README's device table
// are all read from it; adding a device kind is adding a row
// (src/devices/registry.cpp).
//
// The table is built once, on first use, and never changes afterwards: the
// functions below are safe to call from any thread.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "rig/device.hpp"
#include "rig/device_spec.hpp"
#include "rig/error.hpp"

namespace rig {

// One parameter of a kind's spec (for a remote device: one query option).
struct DeviceParam {
  std::string name;          // "threads"
  std::string value;         // its form: N, DUR, BW, F, TEXT, or the choices "ort|opencv"
  std::string default_text;  // what holds when it is not given, as a person reads it
  std::string help;          // one line
  // A value the device accepts for it (tests open every kind with each
  // parameter set to this). Equal to default_text where that is a value.
  std::string example;
  // Another parameter without which the device refuses this one
  // ("runtime=ort"), or empty.
  std::string needs;
};

// Opens a device from a parsed spec of this kind. Expected failures are
// values: invalid_argument for a parameter the device refuses, unsupported for
// a kind or a parameter value this binary was built without.
using DeviceOpenFn = Result<std::unique_ptr<Device>> (*)(const DeviceSpec& spec);

struct DeviceKind {
  std::string name;  // DeviceSpec::kind: "cpu", "sim", "null", "hailo", "remote"
  // Spec text of this kind starts with one of these ("tcp://", "unix:") and
  // is kept whole as the endpoint; empty for kinds written "NAME[:KEY=VALUE,...]".
  std::vector<std::string> prefixes;
  std::vector<std::string> forms;  // the spec grammar, one line per form
  std::string summary;             // what it is, one line
  std::string doc;                 // where more is said ("docs/devices/cpu.md"), or empty
  std::vector<DeviceParam> params;
  bool built = true;  // compiled into this binary
  // Why not, when !built ("HailoRT >= 5.1.1 not found at configure time");
  // when built, what may still be missing here (a parameter value this
  // binary lacks), or empty.
  std::string availability;
  DeviceOpenFn open = nullptr;
};

// Every kind, built into this binary or not, in the order they are listed.
const std::vector<DeviceKind>& device_kinds();

// The kind named `name` (DeviceSpec::kind), or nullptr.
const DeviceKind* find_device_kind(std::string_view name);

// How a kind is written in a list of specs: "cpu[:...]", "tcp://HOST:PORT".
// The known kinds, so listed: "cpu[:...], sim[:...], ..., unix:PATH".
std::string known_device_specs();

// The help text of a -d option: `role` ("device spec", "device to host"),
// the kinds built into this binary, and where their parameters are listed.
std::string device_option_help(std::string_view role = "device spec");

// The README's device table (markdown), one row per kind whether built or
// not: the spec forms, the summary and every parameter with its default.
std::string device_table_markdown();

// The Levenshtein distance between two words, and the word of `candidates`
// nearest to `word` when it is close enough to be a likely typo (at most
// max(2, |word| / 3) edits), else empty. Also the CLI's "did you mean" for
// commands.
size_t edit_distance(std::string_view a, std::string_view b);
std::string nearest_word(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace rig

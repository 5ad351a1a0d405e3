// Notes the analyses share (ladder, sweep, sweep --rate, ab). Private to the
// scenarios.
#pragma once

#include <string>

namespace rig {

// What a sim device's figures are; a note and the real_clock rule's finding.
inline constexpr const char* kVirtualClockNote =
    "virtual clock: figures are the sim device's model, not a measurement of hardware";

// The notes a single-device result ends with: the virtual clock's, then each
// warning the device gave at open (DeviceInfo::warnings), prefixed "device: ".
template <class R>
void add_clock_and_device_notes(R& r) {
  if (r.virtual_clock) r.notes.push_back(kVirtualClockNote);
  for (const auto& w : r.device.warnings) r.notes.push_back("device: " + w);
}

}  // namespace rig

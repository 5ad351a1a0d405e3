// Conversions between rig's C++ types and their protobuf messages. Values
// that arrive from the wire are validated here (sizes agree with shapes,
// element types are known), so the rest of the code can trust them.
#pragma once

#include "proto/rig.pb.h"
#include "proto/wire.hpp"
#include "rig/device.hpp"

namespace rig::wire {

pb::ElementType to_pb(ElementType type);
void to_pb(const ModelInfo& info, pb::ModelInfo& out);
void to_pb(const Limits& limits, pb::Limits& out);

// Fails with protocol when a tensor has an unknown type, a negative
// dimension, or a byte size that disagrees with its shape.
Result<ModelInfo> from_pb(const pb::ModelInfo& info);
Limits from_pb(const pb::Limits& limits);

void to_pb(const DurationRun& run, pb::RunForDurationReply& out);
// The reply of the on-device loop, as the client reads it. Fails with
// protocol when the rate is not finite, is negative, or disagrees with
// frames_completed / elapsed (relative 1e-6): the figures must agree with
// each other, so a body decoded from the wrong bytes cannot pass as a result.
Result<DurationRun> from_pb(const pb::RunForDurationReply& reply);

}  // namespace rig::wire

// The typed conformance suite over a list of cases: include after
// `using ConformanceDevices = ::testing::Types<...>;` in namespace
// rig::conformance (device_conformance.hpp says what a case is).
#pragma once

#include "device_conformance.hpp"

namespace rig::conformance {

TYPED_TEST_SUITE(DeviceConformance, ConformanceDevices, CaseName);

TYPED_TEST(DeviceConformance, DescribesItselfAndTheModel) {
  this->conforms(check_describe);
}

TYPED_TEST(DeviceConformance, CallsBeforeLoadFailAsValues) {
  this->conforms(check_before_load);
}

TYPED_TEST(DeviceConformance, BindRefusesWrongCountsAndSizes) {
  this->conforms(check_bind);
}

TYPED_TEST(DeviceConformance, QueueDepthThenQueueFullAndEveryTagOnce) {
  this->conforms(check_queue_depth);
}

TYPED_TEST(DeviceConformance, WaitNextTimesOutAsAValue) {
  this->conforms(check_wait_timeout);
}

TYPED_TEST(DeviceConformance, RunTimingsLieInsideItsElapsedTime) {
  this->conforms(check_run);
}

TYPED_TEST(DeviceConformance, RunForDurationCountsAddUp) {
  this->conforms(check_run_for_duration);
}

TYPED_TEST(DeviceConformance, CancelEndsALoopEarly) {
  this->conforms([](Device& d, const ModelSource& m) {
    return check_cancel(d, m, loop_cancellable<TypeParam>());
  });
}

}  // namespace rig::conformance

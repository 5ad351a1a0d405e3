// rig_model_run's own buffers honour the device's DeviceInfo::buffer_alignment
// and buffer_padding (a Hailo-10H copies every unaligned buffer through a
// bounce buffer per transfer, vdma/pcie_session.cpp). Built from capi.cpp
// itself with this file's rig::open_device in place of the registry's: it
// opens a device that declares a page's alignment and records what it is
// bound to.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "core/device_base.hpp"
#include "rig/clock.hpp"
#include "rig/rig.h"

namespace rig {
namespace {

constexpr size_t kAlign = 4096;
std::vector<std::span<const std::byte>> g_bound;  // every buffer bound, in order

class AlignedDevice final : public DeviceBase {
 public:
  DeviceInfo info() const override {
    DeviceInfo i;
    i.kind = "aligned";
    i.queue_depth = 1;
    i.buffer_alignment = kAlign;
    i.buffer_padding = kAlign;
    return i;
  }
  Clock& clock() override { return clock_; }
  ByteCounters bytes() const override { return {}; }

 protected:
  Result<LoadTimings> do_load(const ModelSource&, ModelInfo& m) override {
    m.name = "aligned";
    TensorInfo in;
    in.name = "in";
    in.type = ElementType::u8;
    in.shape = {100};
    in.bytes = 100;
    TensorInfo out = in;
    out.name = "out";
    out.shape = {10};
    out.bytes = 10;
    m.inputs.push_back(in);
    m.outputs.push_back(out);
    return LoadTimings{};
  }
  Result<void> do_bind(BindingId, const Bindings& b) override {
    for (const auto& s : b.inputs) g_bound.push_back(s);
    for (const auto& s : b.outputs) g_bound.emplace_back(s.data(), s.size());
    return {};
  }
  Result<InferenceTimings> do_run(BindingId id) override {
    const Bindings& b = bound(id);
    for (size_t i = 0; i < b.outputs[0].size(); ++i)
      b.outputs[0][i] = std::byte(static_cast<uint8_t>(b.inputs[0][i]) + 1);
    return InferenceTimings{};
  }
  Result<void> do_submit(BindingId, uint64_t) override {
    return fail(ErrorCode::unsupported, "aligned: no submit");
  }
  Result<Completion> do_wait_next(Nanos) override {
    return fail(ErrorCode::unsupported, "aligned: no submit");
  }
  Result<DurationRun> do_run_for_duration(BindingId, Nanos, Nanos) override {
    return fail(ErrorCode::unsupported, "aligned: no loop");
  }
  uint32_t queue_depth() const override { return 1; }

 private:
  SteadyClock clock_;
};

}  // namespace

Result<std::unique_ptr<Device>> open_device(std::string_view) {
  return std::unique_ptr<Device>(std::make_unique<AlignedDevice>());
}
Result<std::unique_ptr<Device>> open_device(const DeviceSpec&) {
  return std::unique_ptr<Device>(std::make_unique<AlignedDevice>());
}

namespace {

TEST(CapiStaging, RunsThroughBuffersAlignedAndPaddedAsTheDeviceAsks) {
  rig_device* device = nullptr;
  ASSERT_EQ(rig_device_open("aligned", &device), RIG_OK) << rig_last_error();
  rig_model* model = nullptr;
  ASSERT_EQ(rig_model_load(device, "unused.onnx", &model), RIG_OK) << rig_last_error();
  std::vector<uint8_t> in(100, 7), out(10, 0);
  const void* inputs[] = {in.data()};
  const size_t input_sizes[] = {in.size()};
  void* outputs[] = {out.data()};
  const size_t output_sizes[] = {out.size()};
  for (int i = 0; i < 2; ++i)
    ASSERT_EQ(rig_model_run(model, inputs, input_sizes, 1, outputs, output_sizes, 1), RIG_OK)
        << rig_last_error();
  EXPECT_EQ(out, std::vector<uint8_t>(10, 8));
  ASSERT_EQ(g_bound.size(), 2u);  // bound once, the exact tensor sizes
  EXPECT_EQ(g_bound[0].size(), 100u);
  EXPECT_EQ(g_bound[1].size(), 10u);
  for (const auto& s : g_bound)
    EXPECT_EQ(reinterpret_cast<uintptr_t>(s.data()) % kAlign, 0u) << s.data();
  rig_model_free(model);
  rig_device_close(device);
}

}  // namespace
}  // namespace rig

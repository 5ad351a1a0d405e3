// Test double of HailoRT's C++ API (hailo/hailort.hpp and the headers it
// gathers: expected.hpp, buffer.hpp, device.hpp, vdevice.hpp,
// infer_model.hpp), written for rig. It declares only the subset rig's hailo
// device calls, with HailoRT 5.2's names and signatures, so the same device
// source compiles against either. The behaviour behind it is a scripted
// device on a virtual clock (tests/devices/hailo_double/hailo_double.hpp);
// nothing here is HailoRT's code.
#ifndef RIG_HAILO_DOUBLE_HAILORT_HPP_
#define RIG_HAILO_DOUBLE_HAILORT_HPP_

#include <cassert>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "hailo/hailort.h"

namespace hailort {

// ---- expected.hpp
class Unexpected final {
 public:
  explicit Unexpected(hailo_status status) : m_status(status) {}
  operator hailo_status() { return m_status; }
  hailo_status m_status;
};

inline Unexpected make_unexpected(hailo_status status) {
  return Unexpected(status);
}

template <typename T>
class Expected final {
 public:
  Expected(Unexpected unexpected) : m_status(unexpected.m_status) {
    assert(unexpected.m_status != HAILO_SUCCESS);
  }
  Expected(Expected<T>&& other) : m_status(other.m_status) {
    if (other.has_value()) new (&m_value) T(std::move(other.m_value));
  }
  Expected(T&& value) : m_value(std::move(value)), m_status(HAILO_SUCCESS) {}
  Expected(hailo_status status) = delete;
  template <typename... Args, std::enable_if_t<std::is_constructible<T, Args...>::value, int> = 0>
  explicit Expected(Args&&... args)
      : m_value(std::forward<Args>(args)...), m_status(HAILO_SUCCESS) {}
  Expected<T>& operator=(const Expected<T>& other) = delete;
  Expected<T>& operator=(Expected<T>&& other) noexcept = delete;
  ~Expected() {
    if (has_value()) m_value.~T();
  }

  bool has_value() const { return HAILO_SUCCESS == m_status; }
  T& value() & {
    assert(has_value());
    return m_value;
  }
  const T& value() const& {
    assert(has_value());
    return m_value;
  }
  hailo_status status() const { return m_status; }
  T release() {
    assert(has_value());
    T tmp = std::move(m_value);
    m_value.~T();
    m_status = HAILO_UNINITIALIZED;
    return tmp;
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  explicit operator bool() const { return has_value(); }

 private:
  union {
    T m_value;
  };
  hailo_status m_status;
};

// ---- buffer.hpp
class MemoryView final {
 public:
  MemoryView() noexcept : m_data(nullptr), m_size(0) {}
  MemoryView(void* data, size_t size) noexcept : m_data(data), m_size(size) {}
  static const MemoryView create_const(const void* data, size_t size) noexcept {
    return MemoryView(const_cast<void*>(data), size);
  }
  uint8_t* data() noexcept { return static_cast<uint8_t*>(m_data); }
  const uint8_t* data() const noexcept { return static_cast<const uint8_t*>(m_data); }
  size_t size() const noexcept { return m_size; }
  bool empty() const noexcept { return m_size == 0; }

 private:
  void* m_data;
  size_t m_size;
};

// ---- device.hpp
class Device {
 public:
  enum class Type { PCIE = 0, ETH, INTEGRATED };
  virtual ~Device() = default;
  virtual Expected<hailo_device_identity_t> identify() = 0;
  virtual Expected<float32_t> power_measurement(
      hailo_dvm_options_t dvm, hailo_power_measurement_types_t measurement_type) = 0;
  virtual Expected<hailo_chip_temperature_info_t> get_chip_temperature() = 0;
  virtual Expected<hailo_device_architecture_t> get_architecture() const = 0;
  Type get_type() const { return m_type; }
  virtual const char* get_dev_id() const = 0;

 protected:
  explicit Device(Type type) : m_type(type) {}
  Type m_type;
};

// ---- hef.hpp
class Hef final {
 public:
  static Expected<Hef> create(const std::string& hef_path);
  static Expected<Hef> create(const MemoryView& hef_buffer);
  std::vector<std::string> get_network_groups_names() const;

  Hef(Hef&&) = default;
  Hef& operator=(Hef&&) = default;
  Hef(const Hef&) = delete;
  Hef& operator=(const Hef&) = delete;

  class Impl;
  explicit Hef(std::shared_ptr<Impl> pimpl) : m_pimpl(std::move(pimpl)) {}

 private:
  std::shared_ptr<Impl> m_pimpl;
};

// ---- infer_model.hpp
class AsyncInferJobBase;
class ConfiguredInferModelBase;

struct LatencyMeasurementResult {
  std::chrono::nanoseconds avg_hw_latency;
};

class AsyncInferJob {
 public:
  AsyncInferJob() = default;
  virtual ~AsyncInferJob() = default;
  AsyncInferJob(const AsyncInferJob& other) = delete;
  AsyncInferJob& operator=(const AsyncInferJob& other) = delete;
  AsyncInferJob(AsyncInferJob&& other) = default;
  AsyncInferJob& operator=(AsyncInferJob&& other) = default;

  hailo_status wait(std::chrono::milliseconds timeout);
  void detach() {}

  explicit AsyncInferJob(std::shared_ptr<AsyncInferJobBase> pimpl) : m_pimpl(std::move(pimpl)) {}

 private:
  std::shared_ptr<AsyncInferJobBase> m_pimpl;
};

struct AsyncInferCompletionInfo {
  AsyncInferCompletionInfo(hailo_status _status) : status(_status) {}
  hailo_status status;
};

static const auto ASYNC_INFER_EMPTY_CALLBACK = [](const AsyncInferCompletionInfo&) {};

class ConfiguredInferModel {
 public:
  ConfiguredInferModel() = default;

  class Bindings {
   public:
    Bindings() = default;

    class InferStream {
     public:
      hailo_status set_buffer(MemoryView view);
      Expected<MemoryView> get_buffer() const;

      class Impl;
      explicit InferStream(std::shared_ptr<Impl> pimpl) : m_pimpl(std::move(pimpl)) {}

     private:
      std::shared_ptr<Impl> m_pimpl;
    };

    Expected<InferStream> input(const std::string& name);
    Expected<InferStream> output(const std::string& name);
    Expected<InferStream> input(const std::string& name) const;
    Expected<InferStream> output(const std::string& name) const;

    // The double's own state (HailoRT keeps maps of InferStreams here).
    std::map<std::string, std::shared_ptr<InferStream::Impl>> m_inputs, m_outputs;
  };

  Expected<Bindings> create_bindings();
  hailo_status wait_for_async_ready(std::chrono::milliseconds timeout, uint32_t frames_count = 1);
  hailo_status run(const Bindings& bindings, std::chrono::milliseconds timeout);
  Expected<AsyncInferJob> run_async(
      const Bindings& bindings,
      std::function<void(const AsyncInferCompletionInfo&)> callback = ASYNC_INFER_EMPTY_CALLBACK);
  Expected<LatencyMeasurementResult> get_hw_latency_measurement();
  Expected<size_t> get_async_queue_size() const;
  hailo_status activate();
  hailo_status deactivate();
  hailo_status shutdown();
  Expected<AsyncInferJob> run_async_for_duration(
      const Bindings& bindings, uint32_t duration_ms, uint32_t sleep_between_frames_ms,
      std::function<void(const AsyncInferCompletionInfo& completion_info, uint32_t fps)> callback);

  explicit ConfiguredInferModel(std::shared_ptr<ConfiguredInferModelBase> pimpl)
      : m_pimpl(std::move(pimpl)) {}

 private:
  std::shared_ptr<ConfiguredInferModelBase> m_pimpl;
};

class InferModel {
 public:
  virtual ~InferModel() = default;

  class InferStream {
   public:
    const std::string name() const;
    hailo_3d_image_shape_t shape() const;
    hailo_format_t format() const;
    size_t get_frame_size() const;
    bool is_nms() const;
    void set_format_type(hailo_format_type_t type);

    class Impl;
    explicit InferStream(std::shared_ptr<Impl> pimpl) : m_pimpl(std::move(pimpl)) {}

   private:
    std::shared_ptr<Impl> m_pimpl;
  };

  virtual void set_batch_size(uint16_t batch_size) = 0;
  virtual void set_power_mode(hailo_power_mode_t power_mode) = 0;
  virtual void set_hw_latency_measurement_flags(hailo_latency_measurement_flags_t latency) = 0;
  virtual Expected<ConfiguredInferModel> configure() = 0;
  virtual Expected<InferStream> input(const std::string& name) = 0;
  virtual Expected<InferStream> output(const std::string& name) = 0;
  virtual const std::vector<InferStream>& inputs() const = 0;
  virtual const std::vector<InferStream>& outputs() const = 0;
  virtual const std::vector<std::string>& get_input_names() const = 0;
  virtual const std::vector<std::string>& get_output_names() const = 0;
};

// ---- vdevice.hpp
class VDevice {
 public:
  static Expected<std::unique_ptr<VDevice>> create(const hailo_vdevice_params_t& params);
  static Expected<std::unique_ptr<VDevice>> create();
  static Expected<std::unique_ptr<VDevice>> create(const std::vector<std::string>& device_ids);

  virtual Expected<std::shared_ptr<InferModel>> create_infer_model(
      const std::string& hef_path, const std::string& name = "") = 0;
  virtual Expected<std::shared_ptr<InferModel>> create_infer_model(
      const MemoryView hef_buffer, const std::string& name = "") = 0;
  virtual Expected<std::vector<std::reference_wrapper<Device>>> get_physical_devices() const = 0;
  virtual Expected<std::vector<std::string>> get_physical_devices_ids() const = 0;
  virtual hailo_status dma_map(void* address, size_t size,
                               hailo_dma_buffer_direction_t direction) = 0;
  virtual hailo_status dma_unmap(void* address, size_t size,
                                 hailo_dma_buffer_direction_t direction) = 0;

  virtual ~VDevice() = default;
  VDevice(const VDevice&) = delete;
  VDevice& operator=(const VDevice&) = delete;

 protected:
  VDevice() = default;
};

}  // namespace hailort

#endif  // RIG_HAILO_DOUBLE_HAILORT_HPP_

// The C ABI (include/rig/rig.h): opaque handles over the Device interface,
// the bench scenario and its JSON reporter. Every entry point runs its body
// through guarded(), which turns Errors into status codes with the message as
// this thread's last error, and catches every exception.
#include "rig/rig.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "rig/device.hpp"
#include "rig/engine.hpp"
#include "rig/model.hpp"
#include "rig/report/bench_report.hpp"
#include "rig/scenario/bench.hpp"

// The handles' definitions: a device shared by its models.
struct DeviceState {
  std::mutex mutex;  // serialises every call on the device and its models
  std::unique_ptr<rig::Device> device;
  uint64_t generation = 0;  // bumped by each load; retires earlier model handles
  // A load that fails after the device dropped its model (Device::load
  // releases the old one first) retires the handle of that model too: here
  // is why, by the generation it retired (one entry per model so retired).
  std::map<uint64_t, std::string> failed_load;
  bool model_live = false;  // the current generation's model is on the device
};

struct rig_device {
  std::shared_ptr<DeviceState> state;
};

struct rig_model {
  std::shared_ptr<DeviceState> state;
  uint64_t generation = 0;
  rig::ModelInfo info;
  std::vector<std::string> input_types, output_types;  // NUL-terminated dtype names
  // rig_model_run's buffers, bound once on first use: the engine's one buffer
  // set (rig::Workspace), aligned and padded as the device's
  // DeviceInfo::buffer_alignment and buffer_padding ask (a Hailo-10H copies
  // every unaligned buffer through a bounce buffer per transfer). views: the
  // inputs, then the outputs.
  struct Staging {
    rig::Workspace workspace;
  };
  std::unique_ptr<Staging> staging;
};

namespace {

thread_local std::string last_error;

int32_t status_of(rig::ErrorCode code) {
  switch (code) {
    case rig::ErrorCode::invalid_argument:
      return RIG_ERROR_INVALID_ARGUMENT;
    case rig::ErrorCode::not_found:
      return RIG_ERROR_NOT_FOUND;
    case rig::ErrorCode::unsupported:
      return RIG_ERROR_UNSUPPORTED;
    case rig::ErrorCode::io:
      return RIG_ERROR_IO;
    case rig::ErrorCode::protocol:
      return RIG_ERROR_PROTOCOL;
    case rig::ErrorCode::limit_exceeded:
      return RIG_ERROR_LIMIT_EXCEEDED;
    case rig::ErrorCode::queue_full:
      return RIG_ERROR_QUEUE_FULL;
    case rig::ErrorCode::timeout:
      return RIG_ERROR_TIMEOUT;
    case rig::ErrorCode::disconnected:
      return RIG_ERROR_DISCONNECTED;
    case rig::ErrorCode::device:
      return RIG_ERROR_DEVICE;
    case rig::ErrorCode::permission:
      return RIG_ERROR_PERMISSION;
    case rig::ErrorCode::internal:
      return RIG_ERROR_INTERNAL;
  }
  return RIG_ERROR_INTERNAL;
}

int32_t failed(const rig::Error& e) {
  last_error = e.to_string();
  return status_of(e.code);
}

int32_t invalid(const std::string& message) {
  return failed({rig::ErrorCode::invalid_argument, message});
}

// Runs `body` (returning a status) with every exception caught.
template <class F>
int32_t guarded(F&& body) noexcept {
  try {
    last_error.clear();
    return body();
  } catch (const std::bad_alloc&) {
    try {
      last_error = "out of memory";
    } catch (...) {
    }
    return RIG_ERROR_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    try {
      last_error = std::string("internal error: ") + e.what();
    } catch (...) {
    }
    return RIG_ERROR_INTERNAL;
  } catch (...) {
    try {
      last_error = "internal error: unknown exception";
    } catch (...) {
    }
    return RIG_ERROR_INTERNAL;
  }
}

// The model's device, locked, or a status when the handle was retired.
int32_t check_current(const rig_model* model, const char* call) {
  if (model->generation == model->state->generation) return RIG_OK;
  const auto& failures = model->state->failed_load;
  if (auto it = failures.find(model->generation); it != failures.end())
    return invalid(std::string(call) + ": the model '" + model->info.name +
                   "' was retired by a later load that failed: " + it->second);
  return invalid(std::string(call) + ": the model '" + model->info.name +
                 "' was retired by a later load on its device; use the newer model handle");
}

int32_t make_model(rig_device* device, const rig::ModelSource& source, rig_model** out) {
  std::lock_guard lock(device->state->mutex);
  DeviceState& state = *device->state;
  // With requests in flight a load is refused and the model stays.
  const bool replaces = state.device->in_flight() == 0;
  auto loaded = state.device->load(source);
  if (!loaded) {
    if (replaces && state.model_live) {
      state.failed_load[state.generation] = loaded.error().to_string();
      state.model_live = false;
      ++state.generation;
    }
    return failed(loaded.error());
  }
  state.model_live = true;
  auto model = std::make_unique<rig_model>();
  model->state = device->state;
  model->generation = ++device->state->generation;
  model->info = device->state->device->model_info();
  for (const auto& t : model->info.inputs) model->input_types.emplace_back(rig::to_string(t.type));
  for (const auto& t : model->info.outputs)
    model->output_types.emplace_back(rig::to_string(t.type));
  *out = model.release();
  return RIG_OK;
}

rig::Result<rig::Bindings> to_bindings(const void** inputs, const size_t* input_sizes,
                                       size_t input_count, void** outputs,
                                       const size_t* output_sizes, size_t output_count) {
  if ((input_count > 0 && (!inputs || !input_sizes)) ||
      (output_count > 0 && (!outputs || !output_sizes)))
    return rig::fail(rig::ErrorCode::invalid_argument,
                     "buffer arrays (inputs, input_sizes, outputs, output_sizes) must not be NULL");
  rig::Bindings b;
  for (size_t i = 0; i < input_count; ++i)
    b.inputs.emplace_back(static_cast<const std::byte*>(inputs[i]), input_sizes[i]);
  for (size_t i = 0; i < output_count; ++i)
    b.outputs.emplace_back(static_cast<std::byte*>(outputs[i]), output_sizes[i]);
  return b;
}

}  // namespace

extern "C" {

int32_t rig_abi_version(void) {
  return RIG_ABI_VERSION;
}

const char* rig_last_error(void) {
  return last_error.c_str();
}

int32_t rig_device_open(const char* spec, rig_device** device) {
  return guarded([&] {
    if (!spec || !device) return invalid("rig_device_open: spec and device must not be NULL");
    auto opened = rig::open_device(std::string_view(spec));
    if (!opened) return failed(opened.error());
    auto handle = std::make_unique<rig_device>();
    handle->state = std::make_shared<DeviceState>();
    handle->state->device = std::move(*opened);
    *device = handle.release();
    return RIG_OK;
  });
}

void rig_device_close(rig_device* device) {
  (void)guarded([&] {
    delete device;
    return RIG_OK;
  });
}

int32_t rig_model_load(rig_device* device, const char* path, rig_model** model) {
  return guarded([&] {
    if (!device || !path || !model)
      return invalid("rig_model_load: device, path and model must not be NULL");
    rig::ModelSource source;
    const std::string p(path);
    if (p.rfind("server:", 0) == 0)
      source.server_name = p.substr(7);
    else
      source.path = p;
    return make_model(device, source, model);
  });
}

int32_t rig_model_load_bytes(rig_device* device, const void* bytes, size_t size, const char* name,
                             rig_model** model) {
  return guarded([&] {
    if (!device || !model || (!bytes && size > 0))
      return invalid("rig_model_load_bytes: device, bytes and model must not be NULL");
    if (size == 0) return invalid("rig_model_load_bytes: the model is 0 bytes");
    rig::ModelSource source;
    const auto* p = static_cast<const std::byte*>(bytes);
    source.bytes.assign(p, p + size);
    source.name = name ? name : "model";
    return make_model(device, source, model);
  });
}

void rig_model_free(rig_model* model) {
  (void)guarded([&] {
    if (!model) return RIG_OK;
    std::shared_ptr<DeviceState> state = model->state;
    std::lock_guard lock(state->mutex);
    delete model;
    return RIG_OK;
  });
}

int32_t rig_model_count(const rig_model* model, int32_t kind, size_t* count) {
  return guarded([&] {
    if (!model || !count) return invalid("rig_model_count: model and count must not be NULL");
    if (kind != RIG_INPUT && kind != RIG_OUTPUT)
      return invalid("rig_model_count: kind must be RIG_INPUT (0) or RIG_OUTPUT (1), got " +
                     std::to_string(kind));
    *count = kind == RIG_INPUT ? model->info.inputs.size() : model->info.outputs.size();
    return RIG_OK;
  });
}

int32_t rig_model_tensor(const rig_model* model, int32_t kind, size_t index, const char** name,
                         const char** dtype, size_t* rank, const int64_t** shape, size_t* bytes) {
  return guarded([&] {
    if (!model) return invalid("rig_model_tensor: model must not be NULL");
    if (kind != RIG_INPUT && kind != RIG_OUTPUT)
      return invalid("rig_model_tensor: kind must be RIG_INPUT (0) or RIG_OUTPUT (1), got " +
                     std::to_string(kind));
    const auto& tensors = kind == RIG_INPUT ? model->info.inputs : model->info.outputs;
    const auto& types = kind == RIG_INPUT ? model->input_types : model->output_types;
    if (index >= tensors.size())
      return invalid("rig_model_tensor: model '" + model->info.name + "' has " +
                     std::to_string(tensors.size()) + (kind == RIG_INPUT ? " inputs" : " outputs") +
                     ", index " + std::to_string(index) + " is out of range");
    const rig::TensorInfo& t = tensors[index];
    if (name) *name = t.name.c_str();
    if (dtype) *dtype = types[index].c_str();
    if (rank) *rank = t.shape.size();
    if (shape) *shape = t.shape.data();
    if (bytes) *bytes = t.bytes;
    return RIG_OK;
  });
}

int32_t rig_model_run(rig_model* model, const void** inputs, const size_t* input_sizes,
                      size_t input_count, void** outputs, const size_t* output_sizes,
                      size_t output_count) {
  return guarded([&] {
    if (!model) return invalid("rig_model_run: model must not be NULL");
    std::lock_guard lock(model->state->mutex);
    if (int32_t s = check_current(model, "rig_model_run"); s != RIG_OK) return s;
    auto b = to_bindings(inputs, input_sizes, input_count, outputs, output_sizes, output_count);
    if (!b) return failed(b.error());
    // The caller's buffers are checked as Device::bind checks them, then
    // copied through the model's own bound buffers: the device never keeps a
    // caller's pointer past the call, and one binding serves every call.
    if (auto ok = rig::check_bindings(model->info, *b); !ok) return failed(ok.error());
    rig::Device& device = *model->state->device;
    if (!model->staging) {
      auto staging = std::make_unique<rig_model::Staging>();
      if (auto ok = rig::grow_workspace(device, staging->workspace, 1, 0); !ok)
        return failed(ok.error());
      model->staging = std::move(staging);
    }
    const rig::Workspace& ws = model->staging->workspace;
    for (size_t i = 0; i < input_count; ++i)
      if (input_sizes[i] > 0) std::memcpy(ws.views[i].data(), inputs[i], input_sizes[i]);
    auto ran = device.run(ws.bindings[0]);
    if (!ran) return failed(ran.error());
    for (size_t i = 0; i < output_count; ++i)
      if (output_sizes[i] > 0)
        std::memcpy(outputs[i], ws.views[input_count + i].data(), output_sizes[i]);
    return RIG_OK;
  });
}

int32_t rig_model_bind(rig_model* model, const void** inputs, const size_t* input_sizes,
                       size_t input_count, void** outputs, const size_t* output_sizes,
                       size_t output_count, uint32_t* binding) {
  return guarded([&] {
    if (!model || !binding) return invalid("rig_model_bind: model and binding must not be NULL");
    std::lock_guard lock(model->state->mutex);
    if (int32_t s = check_current(model, "rig_model_bind"); s != RIG_OK) return s;
    auto b = to_bindings(inputs, input_sizes, input_count, outputs, output_sizes, output_count);
    if (!b) return failed(b.error());
    auto id = model->state->device->bind(*b);
    if (!id) return failed(id.error());
    *binding = *id;
    return RIG_OK;
  });
}

int32_t rig_model_submit(rig_model* model, uint32_t binding, uint64_t tag) {
  return guarded([&] {
    if (!model) return invalid("rig_model_submit: model must not be NULL");
    std::lock_guard lock(model->state->mutex);
    if (int32_t s = check_current(model, "rig_model_submit"); s != RIG_OK) return s;
    auto ok = model->state->device->submit(binding, tag);
    if (!ok) return failed(ok.error());
    return RIG_OK;
  });
}

int32_t rig_model_wait(rig_model* model, int64_t timeout_ns, uint64_t* tag) {
  return guarded([&] {
    if (!model || !tag) return invalid("rig_model_wait: model and tag must not be NULL");
    std::lock_guard lock(model->state->mutex);
    if (int32_t s = check_current(model, "rig_model_wait"); s != RIG_OK) return s;
    const rig::Nanos timeout = timeout_ns < 0 ? rig::Nanos::max() : rig::Nanos(timeout_ns);
    auto c = model->state->device->wait_next(timeout);
    if (!c) return failed(c.error());
    *tag = c->tag;
    if (c->error) return failed(*c->error);
    return RIG_OK;
  });
}

int32_t rig_bench(const char* settings_json, char** result_json) {
  return guarded([&] {
    if (!settings_json || !result_json)
      return invalid("rig_bench: settings_json and result_json must not be NULL");
    auto settings = rig::read_bench_settings_json(settings_json, "rig_bench settings");
    if (!settings) return failed(settings.error());
    if (auto ok = rig::validate(*settings); !ok) return failed(ok.error());
    auto source = rig::resolve_model_source(settings->model);
    if (!source) return failed(source.error());
    settings->model = rig::model_origin(*source);
    auto device = rig::open_device(std::string_view(settings->device));
    if (!device) return failed(device.error());
    auto result = rig::run_bench(**device, *source, *settings);
    if (!result) return failed(result.error());
    const std::string text = rig::bench_to_json(*result);
    char* out = static_cast<char*>(std::malloc(text.size() + 1));
    if (!out) throw std::bad_alloc();
    std::memcpy(out, text.c_str(), text.size() + 1);
    *result_json = out;
    return RIG_OK;
  });
}

void rig_string_free(char* text) {
  std::free(text);
}

}  // extern "C"

#include "rig/device.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "rig/units.hpp"

namespace rig {

std::optional<Error> implausible_timings(const InferenceTimings& t, Nanos limit) {
  for (const auto& [name, value] :
       {std::pair{"transfer_in", t.transfer_in}, std::pair{"queue_wait", t.queue_wait},
        std::pair{"compute", t.compute}, std::pair{"transfer_out", t.transfer_out}}) {
    if (!value || (*value >= Nanos(0) && *value <= limit)) continue;
    return Error{ErrorCode::device,
                 std::string("implausible device timing: ") + name + " " +
                     std::to_string(value->count()) + " ns is outside [0, " +
                     std::to_string(limit.count()) + " ns]" +
                     (limit == kMaxDuration ? "" : ", the inference's elapsed time")};
  }
  return std::nullopt;
}

bool timings_on_clock(const DeviceInfo& info, const Clock& clock) {
  return (info.clock == ClockKind::virtual_time) == clock.is_virtual();
}

std::string_view to_string(ElementType t) {
  switch (t) {
    case ElementType::f32:
      return "float32";
    case ElementType::f16:
      return "float16";
    case ElementType::f64:
      return "float64";
    case ElementType::u8:
      return "uint8";
    case ElementType::i8:
      return "int8";
    case ElementType::u16:
      return "uint16";
    case ElementType::i16:
      return "int16";
    case ElementType::i32:
      return "int32";
    case ElementType::i64:
      return "int64";
    case ElementType::boolean:
      return "bool";
  }
  return "unknown";
}

std::string_view to_string(Duplex duplex) {
  switch (duplex) {
    case Duplex::half:
      return "half";
    case Duplex::full:
      return "full";
    case Duplex::unknown:
      return "unknown";
  }
  return "unknown";
}

std::string_view to_string(ClockKind clock) {
  return clock == ClockKind::virtual_time ? "virtual" : "real";
}

double declared_lone_s(const DeclaredCosts& c, const ModelInfo& model) {
  return static_cast<double>(model.input_bytes()) / c.bw_in + to_seconds(c.latency) +
         to_seconds(c.compute) + static_cast<double>(model.output_bytes()) / c.bw_out +
         to_seconds(c.latency);
}

std::optional<double> declared_rate_cap(const DeclaredCosts& c, const ModelInfo& model,
                                        uint32_t depth) {
  if (!(c.bw_in > 0) || !(c.bw_out > 0) || depth == 0) return std::nullopt;
  const double in_s = static_cast<double>(model.input_bytes()) / c.bw_in;
  const double out_s = static_cast<double>(model.output_bytes()) / c.bw_out;
  const double link_s = c.duplex == Duplex::full ? std::max(in_s, out_s) : in_s + out_s;
  const double busiest = std::max(link_s, to_seconds(c.compute));
  const double lone = declared_lone_s(c, model);
  double cap = std::numeric_limits<double>::infinity();
  if (busiest > 0) cap = 1 / busiest;
  if (lone > 0) cap = std::min(cap, static_cast<double>(depth) / lone);
  if (!std::isfinite(cap)) return std::nullopt;
  return cap;
}

uint32_t DeviceInfo::device_queue_depth() const {
  return own_queue_depth != 0 ? own_queue_depth : std::max<uint32_t>(1, queue_depth);
}

size_t element_size(ElementType t) {
  switch (t) {
    case ElementType::f64:
    case ElementType::i64:
      return 8;
    case ElementType::f32:
    case ElementType::i32:
      return 4;
    case ElementType::f16:
    case ElementType::u16:
    case ElementType::i16:
      return 2;
    case ElementType::u8:
    case ElementType::i8:
    case ElementType::boolean:
      return 1;
  }
  return 1;
}

Result<LayerProfile> Device::profile_layers(BindingId, uint32_t) {
  const DeviceInfo about = info();
  return fail(ErrorCode::unsupported,
              "no per-layer profile: the " + about.kind + " device (" + about.spec +
                  ") offers none; the cpu device does (rig profile MODEL -d cpu)");
}

Result<void> check_bindings(const ModelInfo& model, const Bindings& buffers) {
  if (buffers.inputs.size() != model.inputs.size() ||
      buffers.outputs.size() != model.outputs.size())
    return fail(ErrorCode::invalid_argument,
                "bind: model '" + model.name + "' has " + std::to_string(model.inputs.size()) +
                    " inputs and " + std::to_string(model.outputs.size()) + " outputs, got " +
                    std::to_string(buffers.inputs.size()) + " and " +
                    std::to_string(buffers.outputs.size()) + " buffers");
  auto check = [](const char* role, size_t i, const TensorInfo& tensor, size_t size,
                  const void* data) -> Result<void> {
    const std::string which =
        std::string(role) + " " + std::to_string(i) + " ('" + tensor.name + "')";
    if (size != tensor.bytes)
      return fail(ErrorCode::invalid_argument, "bind: " + which + " expects " +
                                                   std::to_string(tensor.bytes) + " bytes, got " +
                                                   std::to_string(size));
    if (data == nullptr)
      return fail(ErrorCode::invalid_argument, "bind: " + which + " is a null buffer");
    return {};
  };
  for (size_t i = 0; i < buffers.inputs.size(); ++i)
    if (auto ok =
            check("input", i, model.inputs[i], buffers.inputs[i].size(), buffers.inputs[i].data());
        !ok)
      return ok;
  for (size_t i = 0; i < buffers.outputs.size(); ++i)
    if (auto ok = check("output", i, model.outputs[i], buffers.outputs[i].size(),
                        buffers.outputs[i].data());
        !ok)
      return ok;
  return {};
}

uint64_t ModelRewrites::total() const {
  uint64_t n = 0;
  for (const auto& [kind, count] : rewrites) n += count;
  return n;
}

size_t ModelInfo::input_bytes() const {
  size_t n = 0;
  for (const auto& t : inputs) n += t.bytes;
  return n;
}

size_t ModelInfo::output_bytes() const {
  size_t n = 0;
  for (const auto& t : outputs) n += t.bytes;
  return n;
}

}  // namespace rig

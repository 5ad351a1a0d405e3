#include "proto/convert.hpp"

#include <cmath>
#include <limits>

namespace rig::wire {
namespace {

Result<ElementType> from_pb(pb::ElementType type) {
  switch (type) {
    case pb::ELEMENT_TYPE_F32:
      return ElementType::f32;
    case pb::ELEMENT_TYPE_F16:
      return ElementType::f16;
    case pb::ELEMENT_TYPE_F64:
      return ElementType::f64;
    case pb::ELEMENT_TYPE_U8:
      return ElementType::u8;
    case pb::ELEMENT_TYPE_I8:
      return ElementType::i8;
    case pb::ELEMENT_TYPE_U16:
      return ElementType::u16;
    case pb::ELEMENT_TYPE_I16:
      return ElementType::i16;
    case pb::ELEMENT_TYPE_I32:
      return ElementType::i32;
    case pb::ELEMENT_TYPE_I64:
      return ElementType::i64;
    case pb::ELEMENT_TYPE_BOOL:
      return ElementType::boolean;
    default:
      break;
  }
  return fail(ErrorCode::protocol,
              "unknown element type " + std::to_string(static_cast<int>(type)));
}

void tensor_to_pb(const TensorInfo& t, pb::TensorInfo& out) {
  out.set_name(t.name);
  out.set_type(to_pb(t.type));
  for (int64_t d : t.shape) out.add_shape(d);
  out.set_bytes(t.bytes);
}

Result<TensorInfo> tensor_from_pb(const pb::TensorInfo& t) {
  TensorInfo out;
  out.name = t.name();
  auto type = from_pb(t.type());
  if (!type) return fail(ErrorCode::protocol, "tensor '" + t.name() + "': " + type.error().message);
  out.type = *type;
  // The product of the shape must equal the declared bytes, without overflow.
  uint64_t bytes = element_size(out.type);
  for (int64_t d : t.shape()) {
    if (d < 0)
      return fail(ErrorCode::protocol, "tensor '" + t.name() + "' has a negative dimension");
    if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(d), &bytes))
      return fail(ErrorCode::protocol, "tensor '" + t.name() + "' is too large");
    out.shape.push_back(d);
  }
  if (bytes != t.bytes())
    return fail(ErrorCode::protocol, "tensor '" + t.name() + "' declares " +
                                         std::to_string(t.bytes()) +
                                         " bytes, which disagrees with its shape and type");
  out.bytes = static_cast<size_t>(t.bytes());
  return out;
}

}  // namespace

pb::ElementType to_pb(ElementType type) {
  switch (type) {
    case ElementType::f32:
      return pb::ELEMENT_TYPE_F32;
    case ElementType::f16:
      return pb::ELEMENT_TYPE_F16;
    case ElementType::f64:
      return pb::ELEMENT_TYPE_F64;
    case ElementType::u8:
      return pb::ELEMENT_TYPE_U8;
    case ElementType::i8:
      return pb::ELEMENT_TYPE_I8;
    case ElementType::u16:
      return pb::ELEMENT_TYPE_U16;
    case ElementType::i16:
      return pb::ELEMENT_TYPE_I16;
    case ElementType::i32:
      return pb::ELEMENT_TYPE_I32;
    case ElementType::i64:
      return pb::ELEMENT_TYPE_I64;
    case ElementType::boolean:
      return pb::ELEMENT_TYPE_BOOL;
  }
  return pb::ELEMENT_TYPE_UNSPECIFIED;
}

void to_pb(const ModelInfo& info, pb::ModelInfo& out) {
  out.set_name(info.name);
  for (const auto& t : info.inputs) tensor_to_pb(t, *out.add_inputs());
  for (const auto& t : info.outputs) tensor_to_pb(t, *out.add_outputs());
  const ModelRewrites& n = info.normalization;
  if (n.ran) {
    auto* r = out.mutable_normalization();
    r->set_ran(true);
    r->set_nodes_before(n.nodes_before);
    r->set_nodes_after(n.nodes_after);
    for (const auto& [kind, count] : n.rewrites) {
      auto* c = r->add_rewrites();
      c->set_kind(kind);
      c->set_count(count);
    }
    for (const auto& note : n.notes) r->add_notes(note);
  }
}

Result<ModelInfo> from_pb(const pb::ModelInfo& info) {
  ModelInfo out;
  out.name = info.name();
  for (const auto& t : info.inputs()) {
    auto tensor = tensor_from_pb(t);
    if (!tensor) return tl::unexpected(tensor.error());
    out.inputs.push_back(std::move(*tensor));
  }
  for (const auto& t : info.outputs()) {
    auto tensor = tensor_from_pb(t);
    if (!tensor) return tl::unexpected(tensor.error());
    out.outputs.push_back(std::move(*tensor));
  }
  if (info.has_normalization()) {
    const auto& r = info.normalization();
    out.normalization.ran = r.ran();
    out.normalization.nodes_before = r.nodes_before();
    out.normalization.nodes_after = r.nodes_after();
    for (const auto& c : r.rewrites()) out.normalization.rewrites[c.kind()] += c.count();
    out.normalization.notes.assign(r.notes().begin(), r.notes().end());
  }
  return out;
}

void to_pb(const Limits& limits, pb::Limits& out) {
  out.set_max_body_bytes(limits.max_body_bytes);
  out.set_max_buffer_bytes(limits.max_buffer_bytes);
  out.set_max_model_bytes(limits.max_model_bytes);
  out.set_max_buffers(limits.max_buffers);
  out.set_max_frame_bytes(limits.max_frame_bytes);
  out.set_max_loop_duration_ns(static_cast<uint64_t>(limits.max_loop_duration.count()));
}

Limits from_pb(const pb::Limits& limits) {
  Limits out;
  out.max_body_bytes = static_cast<uint32_t>(
      std::min<uint64_t>(limits.max_body_bytes(), std::numeric_limits<int32_t>::max()));
  out.max_buffer_bytes = limits.max_buffer_bytes();
  out.max_model_bytes = limits.max_model_bytes();
  out.max_buffers = limits.max_buffers();
  out.max_frame_bytes = limits.max_frame_bytes();
  out.max_loop_duration = Nanos(static_cast<int64_t>(
      std::min<uint64_t>(limits.max_loop_duration_ns(), std::numeric_limits<int64_t>::max())));
  return out;
}

void to_pb(const DurationRun& run, pb::RunForDurationReply& out) {
  const bool unknown = !run.frames_completed || !run.frames_aborted;
  out.set_frames_completed(run.frames_completed.value_or(0));
  out.set_frames_aborted(run.frames_aborted.value_or(0));
  out.set_elapsed_ns(run.elapsed.count());
  out.set_frames_per_second(run.frames_per_second);
  out.set_frame_counts_unknown(unknown);
  out.set_rate_step(run.rate_step);
  out.set_includes_transfers(run.includes_transfers);
  for (const auto& note : run.notes) out.add_notes(note);
}

Result<DurationRun> from_pb(const pb::RunForDurationReply& reply) {
  DurationRun run;
  run.elapsed = Nanos(reply.elapsed_ns());
  run.frames_per_second = reply.frames_per_second();
  run.rate_step = reply.rate_step();
  run.includes_transfers = reply.includes_transfers();
  for (const auto& note : reply.notes()) run.notes.push_back(note);
  if (!std::isfinite(run.rate_step) || run.rate_step < 0)
    return fail(ErrorCode::protocol,
                "run_for_duration reply has a bad rate step: " + std::to_string(run.rate_step));
  if (reply.frame_counts_unknown()) {
    run.frames_completed.reset();
    run.frames_aborted.reset();
    if (run.elapsed < Nanos(0) || !std::isfinite(run.frames_per_second) ||
        run.frames_per_second < 0)
      return fail(ErrorCode::protocol, "run_for_duration reply is not a valid result: " +
                                           std::to_string(run.frames_per_second) + " frames/s");
    return run;
  }
  run.frames_completed = reply.frames_completed();
  run.frames_aborted = reply.frames_aborted();
  const std::string figures = std::to_string(*run.frames_completed) + " frames in " +
                              std::to_string(run.elapsed.count()) + " ns at " +
                              std::to_string(run.frames_per_second) + " frames/s";
  if (run.elapsed < Nanos(0) || !std::isfinite(run.frames_per_second) || run.frames_per_second < 0)
    return fail(ErrorCode::protocol, "run_for_duration reply is not a valid result: " + figures);
  if (run.elapsed > Nanos(0)) {
    const double expected = static_cast<double>(*run.frames_completed) / to_seconds(run.elapsed);
    if (std::abs(run.frames_per_second - expected) > 1e-6 * std::max(1.0, expected))
      return fail(ErrorCode::protocol, "run_for_duration reply disagrees with itself: " + figures +
                                           " (frames / elapsed is " + std::to_string(expected) +
                                           ")");
  } else if (*run.frames_completed != 0 || run.frames_per_second != 0) {
    return fail(ErrorCode::protocol, "run_for_duration reply counts frames in no time: " + figures);
  }
  return run;
}

}  // namespace rig::wire

// The remote device: the Device calls over a RemoteConnection to rig serve
// (remote_connection.hpp: framing, calibration, the request pump). This file
// is the adaptor: what a hello reply says of the hosted device (DeviceInfo),
// model upload and release, and each Device call as a request. The bindings,
// the in-flight count and the argument checks are DeviceBase's.
#include "devices/remote/remote_device.hpp"

#include <algorithm>
#include <atomic>

#include "core/device_base.hpp"
#include "devices/remote/remote_connection.hpp"
#include "proto/convert.hpp"
#include "rig/model.hpp"
#include "rig/units.hpp"

namespace rig {
namespace {

using remote::add_saturating;
using remote::now;
using remote::RemoteConnection;
using remote::RemoteOptions;
using wire::Action;
namespace pb = wire::pb;

class RemoteDevice final : public DeviceBase {
 public:
  // A submitted run's reply frees its slot on the server as it lands: the
  // completion waits in the base (deliver) for wait_next.
  explicit RemoteDevice(RemoteOptions options)
      : conn_(std::move(options), [this](Completion c) { deliver(std::move(c)); }) {}

  Result<void> connect() {
    if (auto ok = conn_.open(); !ok) return ok;
    const pb::HelloReply& h = conn_.hello();
    const RemoteOptions& o = conn_.options();
    std::vector<std::string> query;
    if (o.timeout_given) query.push_back("timeout=" + format_duration(o.timeout));
    if (!o.calibrate) query.push_back("calibrate=0");
    if (!o.compact) query.push_back("compact=0");
    info_.spec = o.endpoint.to_string();
    for (size_t i = 0; i < query.size(); ++i) info_.spec += (i ? "&" : "?") + query[i];
    info_.kind = "remote";
    info_.description = "rig serve at " + o.endpoint.to_string() + " hosting " + h.device_kind() +
                        ": " + h.device_description();
    info_.queue_depth = conn_.depth();
    info_.in_process = false;
    // The typed facts describe the hosted device. Duplex is the hosted
    // device's own (its "duplex" property, as the sim declares it), unknown
    // when it declares none: the network to the server declares none.
    info_.own_queue_depth = h.device_queue_depth();
    info_.clock = h.virtual_clock() ? ClockKind::virtual_time : ClockKind::real;
    info_.paced_clock = h.paced_clock();
    // The hosted device's declared costs bound what is measured through the
    // server too: the link only adds to them. Unusable ones are dropped.
    if (h.has_declared_costs()) {
      const auto& d = h.declared_costs();
      if (d.bw_in() > 0 && d.bw_out() > 0 && d.compute_ns() >= 0 && d.latency_ns() >= 0) {
        DeclaredCosts c;
        c.compute = Nanos(d.compute_ns());
        c.bw_in = d.bw_in();
        c.bw_out = d.bw_out();
        c.latency = Nanos(d.latency_ns());
        c.duplex = d.full_duplex() ? Duplex::full : Duplex::half;
        info_.declared_costs = c;
      }
    }
    if (h.memory_bytes() != 0) info_.memory_bytes = h.memory_bytes();
    info_.properties["server"] = h.server();
    info_.properties["server.protocol_version"] = std::to_string(h.version());
    info_.properties["server.device_spec"] = h.device_spec();
    info_.properties["server.device_kind"] = h.device_kind();
    // For display: the typed facts above are what code reads.
    info_.properties["device_queue_depth"] = std::to_string(h.device_queue_depth());
    info_.properties["server.device_queue_depth"] = std::to_string(h.device_queue_depth());
    info_.properties["server.memory_bytes"] = std::to_string(h.memory_bytes());
    info_.properties["server.clock"] = h.virtual_clock() ? "virtual" : "real";
    info_.properties["run_encoding"] = conn_.compact() ? "run_compact" : "run (protobuf)";
    std::string sensors;
    for (const auto& s : h.sensors()) sensors += (sensors.empty() ? "" : ",") + s;
    info_.properties["server.sensors"] = sensors;
    for (const auto& p : h.properties()) info_.properties["server." + p.key()] = p.value();
    if (const auto d = info_.properties.find("server.duplex"); d != info_.properties.end())
      info_.duplex = d->second == "full"   ? Duplex::full
                     : d->second == "half" ? Duplex::half
                                           : Duplex::unknown;
    for (const auto& w : h.warnings()) info_.warnings.push_back("server: " + w);
    // A paced clock (the sim's realtime=1) is timed like a real device.
    if (h.virtual_clock() && !h.paced_clock())
      info_.warnings.push_back(
          "serve the sim with realtime=1: the server's device runs on a virtual clock not paced "
          "to the wall clock, its compute times are simulated while client-side times are real, "
          "so the bus share is not meaningful");
    if (!o.calibrate) return {};
    auto floor = conn_.calibrate();
    if (!floor) return tl::unexpected(floor.error());
    if (*floor)
      info_.link_floor = **floor;
    else
      info_.properties["link_floor"] = "unavailable: the server does not answer ping";
    return {};
  }

  DeviceInfo info() const override { return info_; }
  Clock& clock() override { return steady_clock(); }

  // Thread-safe: a loop under way (run_for_duration) is cut short by its
  // server, which returns the frames completed so far.
  void cancel() override { cancel_.store(true); }

  ByteCounters bytes() const override { return conn_.bytes(); }

  std::map<std::string, double> read_sensors() override {
    pb::Body body;
    body.mutable_read_sensors_request();
    auto reply = conn_.call(Action::read_sensors, body, {}, Nanos(0), std::nullopt, false);
    if (!reply || !reply->frame.body.has_read_sensors_reply()) return {};
    std::map<std::string, double> readings;
    const auto& m = reply->frame.body.read_sensors_reply();
    // A bounded number kept per reply; the rest counted and said
    // (take_warnings), not kept.
    const size_t kept = std::min<size_t>(m.readings_size(), remote::kMaxSensorReadings);
    for (size_t i = 0; i < kept; ++i)
      readings[m.readings(static_cast<int>(i)).name()] = m.readings(static_cast<int>(i)).value();
    if (kept < static_cast<size_t>(m.readings_size())) {
      readings_dropped_.fetch_add(m.readings_size() - kept);
      largest_reply_.store(std::max<uint64_t>(largest_reply_.load(), m.readings_size()));
    }
    // How the server's device is shared (counts since it started: the
    // monitor's samples give their differences over a run).
    readings["server.model_reloads"] = static_cast<double>(m.model_reloads());
    readings["server.other_requests"] = static_cast<double>(m.other_requests());
    readings["server.other_connections"] = static_cast<double>(m.other_connections());
    readings["server.own_model_loads"] = static_cast<double>(m.own_model_loads());
    readings["server.other_link_bytes"] = static_cast<double>(m.other_link_bytes());
    return readings;
  }

  // The hosted device's warnings since the last take, through read_sensors
  // with take_warnings (an older server ignores the field: none come back).
  std::vector<std::string> take_warnings() override {
    pb::Body body;
    body.mutable_read_sensors_request()->set_take_warnings(true);
    auto reply = conn_.call(Action::read_sensors, body, {}, Nanos(0), std::nullopt, false);
    std::vector<std::string> out;
    if (const uint64_t dropped = readings_dropped_.exchange(0); dropped > 0)
      out.push_back("the server's read_sensors replies carried more readings than the " +
                    std::to_string(remote::kMaxSensorReadings) + " a reply may hold (the largest " +
                    std::to_string(largest_reply_.load()) + "): " + std::to_string(dropped) +
                    " readings were dropped");
    if (!reply || !reply->frame.body.has_read_sensors_reply()) return out;
    const auto& warnings = reply->frame.body.read_sensors_reply().warnings();
    for (const auto& w : warnings) {
      if (out.size() == remote::kMaxSensorReadings) {
        out.push_back("server: " + std::to_string(warnings.size() - remote::kMaxSensorReadings) +
                      " more warnings in one reply were dropped");
        break;
      }
      out.push_back("server: " + w);
    }
    return out;
  }

 protected:
  Result<LoadTimings> do_load(const ModelSource& source, ModelInfo& model_info) override {
    if (handle_ != 0) {
      pb::Body body;
      body.mutable_release_model_request()->set_handle(handle_);
      handle_ = 0;
      auto released = conn_.call(Action::release_model, body, {}, Nanos(0), std::nullopt, false);
      if (!released && released.error().code != ErrorCode::not_found)
        return tl::unexpected(released.error());
    }
    const Nanos t0 = now();
    pb::Body body;
    auto* r = body.mutable_load_model_request();
    ModelBytes model;  // what is uploaded; it must outlive call()
    std::optional<ModelRewrites> uploaded_normalization;
    std::vector<std::span<const std::byte>> buffers;
    if (source.bytes.empty() && source.path.empty() && !source.server_name.empty()) {
      // The server reads it under its --model-dir and names it.
      r->set_by_name(true);
      r->set_name(source.server_name);
      for (const auto& shape : source.shapes) {
        auto* s = r->add_shapes();
        s->set_name(shape.name);
        for (int64_t d : shape.dims) s->add_dims(d);
      }
    } else {
      auto read = read_model_source(source);
      if (!read) return tl::unexpected(read.error());
      model = std::move(*read);
      // The client normalises an ONNX model before uploading it (with the
      // shapes); the server's own pass then finds nothing left to do.
      if (parses_as_onnx(model.bytes)) {
        NormalizeOptions options;
        options.shapes = source.shapes;
        auto normalized = normalize_onnx(model.bytes, options, model_display_name(source));
        if (!normalized) return tl::unexpected(normalized.error());
        uploaded_normalization = std::move(normalized->report);
        if (normalized->changed()) {
          model.owned = std::move(normalized->bytes);
          model.bytes = model.owned;
        }
      }
      r->set_name(model_display_name(source));
      buffers.push_back(model.bytes);
    }
    auto reply =
        conn_.call(Action::load_model, body, buffers, conn_.options().timeout, std::nullopt, false);
    if (!reply) return tl::unexpected(reply.error());
    if (!reply->frame.body.has_load_model_reply()) return conn_.wrong_reply(reply->frame);
    const Nanos elapsed = now() - t0;
    const auto& m = reply->frame.body.load_model_reply();
    auto info = wire::from_pb(m.info());
    if (!info) return tl::unexpected(info.error());
    if (auto bad = unreceivable(*info)) return tl::unexpected(std::move(*bad));
    if (auto bad = implausible_load(m, elapsed)) return tl::unexpected(std::move(*bad));
    handle_ = m.handle();
    model_info = std::move(*info);
    if (uploaded_normalization) model_info.normalization = std::move(*uploaded_normalization);
    LoadTimings t;
    t.parse = Nanos(m.parse_ns());
    t.compile = Nanos(m.compile_ns());
    // Reading here, the upload and the server's own read are all "read".
    t.read = std::max(Nanos(0), elapsed - t.parse - t.compile);
    return t;
  }

  Result<InferenceTimings> do_run(BindingId binding) override {
    return conn_.run(handle_, bound(binding).inputs, bound(binding).outputs);
  }

  Result<void> do_submit(BindingId binding, uint64_t tag) override {
    return conn_.submit(handle_, bound(binding).inputs, bound(binding).outputs, binding, tag);
  }

  Result<Completion> do_wait_next(Nanos timeout) override {
    auto ok = conn_.await_completion(timeout);
    if (auto c = take_delivered()) return std::move(*c);
    return tl::unexpected(ok ? Error{ErrorCode::timeout, "no completion within the wait's timeout"}
                             : ok.error());
  }

  uint32_t queue_depth() const override { return conn_.depth(); }

  Result<DurationRun> do_run_for_duration(BindingId binding, Nanos duration,
                                          Nanos sleep_between_frames) override {
    pb::Body body;
    auto* r = body.mutable_run_for_duration_request();
    r->set_handle(handle_);
    r->set_duration_ns(duration.count());
    r->set_sleep_between_frames_ns(sleep_between_frames.count());
    // cancel() has no effect before the loop starts; while its reply is
    // awaited, each pump slice passes a pending cancel on to the server
    // (action cancel, repeated until the loop's reply comes back).
    cancel_.store(false);
    Nanos cancel_sent{0};
    const Nanos started = now();
    auto reply = conn_.call(Action::run_for_duration, body, bound(binding).inputs,
                            add_saturating(duration, sleep_between_frames),
                            remote::Outputs(bound(binding).outputs), true, [&] {
                              if (!cancel_.load() || (cancel_sent > Nanos(0) &&
                                                      now() - cancel_sent < remote::kBlockingSlice))
                                return;
                              cancel_sent = now();
                              pb::Body cancel;
                              cancel.mutable_cancel_request();
                              conn_.send_discarded(Action::cancel, cancel);
                            });
    // Not server_full: a loop's limit_exceeded is also its duration over the
    // server's max_loop_duration, which is the user's to change (exit 2).
    if (!reply) return tl::unexpected(reply.error());
    if (!reply->frame.body.has_run_for_duration_reply()) return conn_.wrong_reply(reply->frame);
    auto run = wire::from_pb(reply->frame.body.run_for_duration_reply());
    if (!run) return tl::unexpected(run.error());
    if (auto bad = implausible_loop(*run, now() - started)) return tl::unexpected(std::move(*bad));
    conn_.bytes().payload_out += model_info().output_bytes();
    return *run;
  }

 private:
  // The server's clock is the host's real one (not a virtual clock, whose
  // durations take no real time): its durations fit in the client's.
  bool real_clock() const { return !conn_.hello().virtual_clock(); }

  // A model whose tensors could never cross: an output over the client's
  // receive limits, an input over the server's advertised ones. Refused at
  // load, before a buffer is allocated for it.
  std::optional<Error> unreceivable(const ModelInfo& info) const {
    const wire::Limits mine;  // the client's parser takes replies within these
    const wire::Limits& theirs = conn_.server_limits();
    auto check = [](const std::vector<TensorInfo>& tensors, const wire::Limits& limits,
                    const char* what, const char* whose) -> std::optional<Error> {
      if (tensors.size() > limits.max_buffers)
        return Error{ErrorCode::protocol,
                     "the server's model declares " + std::to_string(tensors.size()) + " " + what +
                         "s; max_buffers is " + std::to_string(limits.max_buffers) + " (" + whose +
                         "): a run of it could never cross"};
      uint64_t total = 0;
      for (const auto& t : tensors) {
        if (t.bytes > limits.max_buffer_bytes)
          return Error{ErrorCode::protocol, "the server's model declares " + std::string(what) +
                                                " '" + t.name + "' of " + std::to_string(t.bytes) +
                                                " bytes; max_buffer_bytes is " +
                                                std::to_string(limits.max_buffer_bytes) + " (" +
                                                whose + "): it could never cross"};
        total += t.bytes;  // at most 64 x 2^64 / 2^34: no overflow past the check above
      }
      if (total > limits.max_frame_bytes)
        return Error{ErrorCode::protocol, "the server's model declares " + std::to_string(total) +
                                              " bytes of " + what + "s; max_frame_bytes is " +
                                              std::to_string(limits.max_frame_bytes) + " (" +
                                              whose + "): a run of it could never cross"};
      return std::nullopt;
    };
    if (auto bad = check(info.outputs, mine, "output", "the client's receive limit")) return bad;
    return check(info.inputs, theirs, "input", "the server's own limit");
  }

  // Durations a load reply reports: non-negative, and on a real clock
  // within the time the client waited for it.
  std::optional<Error> implausible_load(const pb::LoadModelReply& m, Nanos elapsed) const {
    const Nanos bound = real_clock() ? elapsed : kMaxDuration;
    const int64_t figures[] = {m.read_ns(), m.parse_ns(), m.compile_ns()};
    const char* names[] = {"read_ns", "parse_ns", "compile_ns"};
    int64_t sum = 0;
    for (size_t i = 0; i < 3; ++i) {
      if (figures[i] < 0 || figures[i] > bound.count() || figures[i] > bound.count() - sum)
        return Error{
            ErrorCode::protocol,
            "implausible load timings from the server: " + std::string(names[i]) + " " +
                std::to_string(figures[i]) +
                (figures[i] < 0
                     ? " is negative"
                     : " (with the other durations) exceeds the " + std::to_string(bound.count()) +
                           " ns " + (real_clock() ? "the load took" : "a duration may be"))};
      sum += figures[i];
    }
    return std::nullopt;
  }

  // A loop's figures: its elapsed time on a real clock within the time the
  // client waited for it, and at most one frame per nanosecond in each slot
  // the server declared (the connection's depth or its device's, whichever
  // is larger).
  std::optional<Error> implausible_loop(const DurationRun& run, Nanos waited) const {
    if (run.elapsed > (real_clock() ? waited : kMaxDuration))
      return Error{ErrorCode::protocol,
                   "implausible loop figures from the server: elapsed_ns " +
                       std::to_string(run.elapsed.count()) + " exceeds the " +
                       std::to_string((real_clock() ? waited : kMaxDuration).count()) + " ns " +
                       (real_clock() ? "the loop took" : "a duration may be")};
    const double slots = std::max<double>(
        {1.0, static_cast<double>(conn_.depth()), static_cast<double>(info_.own_queue_depth)});
    const double most = slots * (static_cast<double>(run.elapsed.count()) + 1);
    const double frames = static_cast<double>(run.frames_completed.value_or(0)) +
                          static_cast<double>(run.frames_aborted.value_or(0));
    if (frames > most)
      return Error{ErrorCode::protocol,
                   "implausible loop figures from the server: " + std::to_string(frames) +
                       " frames in " + std::to_string(run.elapsed.count()) +
                       " ns (at most one frame per ns in each of " + std::to_string(slots) +
                       " slots)"};
    if (!run.frames_completed && run.frames_per_second > slots * 1e9)
      return Error{ErrorCode::protocol, "implausible loop figures from the server: " +
                                            std::to_string(run.frames_per_second) +
                                            " frames/s (at most one frame per ns in each of " +
                                            std::to_string(slots) + " slots)"};
    return std::nullopt;
  }

  RemoteConnection conn_;
  DeviceInfo info_;
  uint32_t handle_ = 0;                        // the server's handle of the loaded model; 0: none
  std::atomic<bool> cancel_{false};            // cancel() was called during a loop
  std::atomic<uint64_t> readings_dropped_{0};  // over kMaxSensorReadings, since the last take
  std::atomic<uint64_t> largest_reply_{0};     // readings in the largest reply over it
};

}  // namespace

Result<std::unique_ptr<Device>> open_remote_device(std::string_view spec) {
  auto options = remote::parse_remote_spec(spec);
  if (!options) return tl::unexpected(options.error());
  auto device = std::make_unique<RemoteDevice>(std::move(*options));
  if (auto ok = device->connect(); !ok) return tl::unexpected(ok.error());
  return std::unique_ptr<Device>(std::move(device));
}

}  // namespace rig

// The session's handlers, one per action, with their admission and their
// answers. One file on purpose: every handler shares the session's handle
// table, placement and run-job state (session.hpp), and split by action that
// state would need an interface of its own with no second user.
#include "server/session.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <exception>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "proto/convert.hpp"
#include "rig/units.hpp"
#include "rig/version.hpp"
#include "server/policy.hpp"

namespace rig::server {
namespace {

using wire::Action;
using wire::Status;
namespace pb = wire::pb;

Error wrong_body(const wire::Header& h, const pb::Body& body) {
  return {ErrorCode::protocol, "message " + std::to_string(h.message_id) + " (" +
                                   wire::to_string(h.action) + ") carries the wrong body (case " +
                                   std::to_string(static_cast<int>(body.message_case())) + ")"};
}

Result<void> check_inputs(const ModelEntry& entry, const pb::Body& body) {
  const auto& sizes = body.buffer_sizes();
  const auto& inputs = entry.info.inputs;
  if (static_cast<size_t>(sizes.size()) != inputs.size())
    return fail(ErrorCode::invalid_argument,
                "model '" + entry.info.name + "' takes " + std::to_string(inputs.size()) +
                    " input buffers, got " + std::to_string(sizes.size()));
  for (size_t i = 0; i < inputs.size(); ++i)
    if (sizes[static_cast<int>(i)] != inputs[i].bytes)
      return fail(ErrorCode::invalid_argument,
                  "input " + std::to_string(i) + " '" + inputs[i].name + "' of model '" +
                      entry.info.name + "': expected " + std::to_string(inputs[i].bytes) +
                      " bytes, got " + std::to_string(sizes[static_cast<int>(i)]));
  return {};
}

// Every tensor of a model is a buffer on the wire and a slot on the server:
// a model whose tensors break the limits is refused when it is loaded.
std::optional<Error> check_model_limits(const ModelInfo& info, const wire::Limits& limits) {
  if (info.inputs.size() > limits.max_buffers || info.outputs.size() > limits.max_buffers)
    return Error{ErrorCode::limit_exceeded,
                 "model '" + info.name + "' has " + std::to_string(info.inputs.size()) +
                     " inputs and " + std::to_string(info.outputs.size()) +
                     " outputs; max_buffers is " + std::to_string(limits.max_buffers)};
  for (const auto* list : {&info.inputs, &info.outputs})
    for (const auto& t : *list)
      if (t.bytes > limits.max_buffer_bytes)
        return Error{ErrorCode::limit_exceeded, "tensor '" + t.name + "' of model '" + info.name +
                                                    "' is " + std::to_string(t.bytes) +
                                                    " bytes; max_buffer_bytes is " +
                                                    std::to_string(limits.max_buffer_bytes)};
  if (info.input_bytes() > limits.max_frame_bytes || info.output_bytes() > limits.max_frame_bytes)
    return Error{ErrorCode::limit_exceeded, "model '" + info.name +
                                                "' moves more bytes per frame than "
                                                "max_frame_bytes (" +
                                                std::to_string(limits.max_frame_bytes) + ")"};
  return std::nullopt;
}

// The outputs of a slot, sent straight from its buffers; the lease travels
// with the frame and frees the slot once the reply is written.
std::vector<std::span<const std::byte>> outputs_of(const SlotLease& lease) {
  std::vector<std::span<const std::byte>> out;
  for (const auto& b : lease.slot().outputs) out.emplace_back(b);
  return out;
}

}  // namespace

// ---- placement and admission -----------------------------------------------

wire::BufferPlan Session::place(const wire::Frame& frame) {
  Placed placed{frame.header.message_id, steady_clock().now(), reads(), nullptr, {}};
  wire::BufferPlan plan;
  plan.error = admit(frame, placed, plan);
  placed_ = std::move(placed);
  return plan;
}

std::optional<Error> Session::admit(const wire::Frame& frame, Placed& placed,
                                    wire::BufferPlan& plan) {
  const wire::Header& h = frame.header;
  const pb::Body& body = frame.body;
  const size_t buffers = static_cast<size_t>(body.buffer_sizes_size());
  if (!hello_done_ && h.action != Action::hello)
    return Error{ErrorCode::permission, "hello must be the first request on a connection"};
  if (h.action == Action::run || h.action == Action::run_for_duration ||
      h.action == Action::run_compact)
    return admit_run(frame, placed, plan);
  if (h.action == Action::load_model) return admit_load(h, body, placed);
  if (!wire::is_known(h.action))
    return Error{ErrorCode::unsupported, "unknown " + wire::to_string(h.action) + " (protocol " +
                                             std::to_string(wire::kMaxVersion) +
                                             " has actions 1 to 7 and 9 to 11)"};
  if (buffers != 0)
    return Error{ErrorCode::invalid_argument,
                 wire::to_string(h.action) + " takes no buffers, got " + std::to_string(buffers)};
  return std::nullopt;
}

std::optional<Error> Session::admit_run(const wire::Frame& frame, Placed& placed,
                                        wire::BufferPlan& plan) {
  const wire::Header& h = frame.header;
  const pb::Body& body = frame.body;
  uint32_t handle = 0;
  if (h.action == Action::run_compact) {
    // A status other than 0 made the body a protobuf one (wire::is_compact).
    if (h.status != Status::ok)
      return Error{ErrorCode::protocol, "a request must carry status 0, got " +
                                            std::to_string(static_cast<uint32_t>(h.status))};
    if (frame.compact.kind != wire::CompactRun::Kind::request)
      return Error{ErrorCode::protocol, "message " + std::to_string(h.message_id) +
                                            " (run_compact) carries a reply body in a request"};
    handle = frame.compact.handle;
  } else if (h.action == Action::run) {
    if (!body.has_run_request()) return wrong_body(h, body);
    handle = body.run_request().handle();
  } else {
    if (!body.has_run_for_duration_request()) return wrong_body(h, body);
    handle = body.run_for_duration_request().handle();
  }
  auto entry = find_model_after_loads(handle);
  if (!entry) return unknown_handle(handle);
  if (auto ok = check_inputs(*entry, body); !ok) return ok.error();
  auto lease = acquire_slot(entry);
  if (!lease) return lease.error();
  plan.borrowed = (*lease)->slot().input_spans;  // the slot outlives the frame
  placed.lease = std::move(*lease);
  return std::nullopt;
}

// What place() and dispatch() do for a run_compact request, through the
// same checks, for one whose every byte is in `bytes`: the common lone run
// of a remote device, without staging it through the parser. Whatever they
// would refuse, or a lookup that would wait (a load pending) or need the
// handle table, is left to the parser. A ping with the canonical body
// (wire::whole_ping) is answered as dispatch() answers it, without protobuf.
size_t Session::take_whole(std::span<const std::byte> bytes) {
  const wire::Limits& limits = server().settings.limits;
  if (!hello_done_ || bytes.size() < wire::kHeaderSize) return 0;
  auto h = wire::decode_header(bytes.first<wire::kHeaderSize>(), limits);
  if (!h) return 0;
  if (h->action == Action::ping) {
    uint32_t id = 0;
    const size_t ping = wire::whole_ping(bytes, false, limits, id);
    if (ping == 0) return 0;
    ++server().requests;
    ++server().whole_requests;
    reply_ping(id);  // as dispatch() answers it: the reader itself, in stream order
    return ping;
  }
  if (!wire::is_compact(*h) || bytes.size() - wire::kHeaderSize < h->body_size) return 0;
  auto head = wire::split_frame(bytes, limits);
  if (!head || !wire::decode_compact_into(*h, head->body, limits, whole_run_, whole_sizes_) ||
      whole_run_.kind != wire::CompactRun::Kind::request)
    return 0;
  const std::shared_ptr<ModelEntry>& entry = last_found_;
  if (!entry || entry->handle != whole_run_.handle || loads_pending_.load() != 0) return 0;
  const auto& inputs = entry->info.inputs;
  if (whole_sizes_.size() != inputs.size()) return 0;
  const size_t start = wire::kHeaderSize + h->body_size;
  size_t end = start;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (whole_sizes_[i] != inputs[i].bytes) return 0;
    end += inputs[i].bytes;
  }
  if (end > bytes.size()) return 0;
  const Nanos placed_at = steady_clock().now();  // as place() reads it: before the slot
  auto lease = acquire_slot(entry);
  if (!lease) return 0;
  size_t at = start;
  for (const auto& in : (*lease)->slot().input_spans) {
    std::memcpy(in.data(), bytes.data() + at, in.size());
    at += in.size();
  }
  ++server().requests;
  ++server().whole_requests;
  handle_run(*h, Placed{h->message_id, placed_at, reads(), std::move(*lease), {}});
  return end;
}

std::optional<Error> Session::admit_load(const wire::Header& h, const pb::Body& body,
                                         Placed& placed) {
  const size_t buffers = static_cast<size_t>(body.buffer_sizes_size());
  if (!body.has_load_model_request()) return wrong_body(h, body);
  if (body.load_model_request().by_name() ? buffers != 0 : buffers != 1)
    return Error{ErrorCode::invalid_argument,
                 "load_model carries the model as its one buffer, or no buffer when loading by "
                 "name; got " +
                     std::to_string(buffers)};
  if (buffers == 1 && body.buffer_sizes(0) == 0)
    return Error{ErrorCode::invalid_argument,
                 "load_model: the uploaded model is empty (0 bytes): nothing to load"};
  if (auto full = models_full()) return full;
  if (buffers == 1) {
    // The parser allocates the model buffer as its bytes arrive
    // (max_model_bytes checked); the server holds it from now on.
    const uint64_t size = body.buffer_sizes(0);
    auto hold = server().budget->reserve(size, "message " + std::to_string(h.message_id) +
                                                   " (load_model) with a model of " +
                                                   std::to_string(size) + " bytes");
    if (!hold) return hold.error();
    placed.upload = std::move(*hold);
  }
  return std::nullopt;
}

std::optional<Error> Session::models_full() {
  size_t loaded = 0;
  uint32_t loading = 0;
  {
    std::lock_guard lock(models_mu_);
    loaded = models_.size();
    loading = loads_pending_;
  }
  const uint32_t max = server().settings.max_models_per_connection;
  if (loaded + loading < max) return std::nullopt;
  return Error{ErrorCode::limit_exceeded,
               "this connection already holds " + std::to_string(loaded + loading) + " models (" +
                   std::to_string(loading) + " still loading); max_models_per_connection is " +
                   std::to_string(max) +
                   " (rig serve --max-models-per-connection): release one first"};
}

// ---- dispatch --------------------------------------------------------------

void Session::dispatch(wire::Frame& frame) {
  // The placer ran for this frame when its body was complete.
  Placed placed = placed_ ? std::move(*placed_) : Placed{};
  placed_.reset();
  ++server().requests;
  const wire::Header& h = frame.header;
  if (frame.error) return reply_error(h.message_id, h.action, *frame.error);
  if (h.status != Status::ok)
    return reply_error(h.message_id, h.action,
                       {ErrorCode::protocol, "a request must carry status 0, got " +
                                                 std::to_string(static_cast<uint32_t>(h.status))});
  switch (h.action) {
    case Action::hello:
      if (!frame.body.has_hello_request()) break;
      return handle_hello(h, frame.body.hello_request());
    case Action::load_model:
      return handle_load(frame, std::move(placed));
    case Action::describe_model:
      if (!frame.body.has_describe_model_request()) break;
      await_loads();
      return handle_describe(h, frame.body.describe_model_request().handle());
    case Action::run:
    case Action::run_compact:
      return handle_run(h, std::move(placed));
    case Action::run_for_duration:
      return handle_loop(h, frame.body.run_for_duration_request(), std::move(placed));
    case Action::read_sensors:
      if (!frame.body.has_read_sensors_request()) break;
      return handle_sensors(h, frame.body.read_sensors_request().take_warnings());
    case Action::release_model:
      if (!frame.body.has_release_model_request()) break;
      await_loads();
      return handle_release(h, frame.body.release_model_request().handle());
    case Action::ping: {
      if (!frame.body.has_ping_request()) break;
      pb::Body body;
      body.mutable_ping_reply();
      return reply(h.message_id, Action::ping, body);
    }
    case Action::cancel: {
      if (!frame.body.has_cancel_request()) break;
      pb::Body body;
      body.mutable_cancel_reply()->set_loop_cut(server().host->cancel_loops(this));
      return reply(h.message_id, Action::cancel, body);
    }
  }
  reply_error(h.message_id, h.action, wrong_body(h, frame.body));
}

void Session::closed() {
  placed_.reset();
  // A run job the host still holds finishes, or is dropped unanswered when
  // it was queued (cancelled); kept here as well, a dropped one would keep
  // its session alive (the job holds `self`, the session its jobs).
  run_jobs_.clear();
  last_found_.reset();
  std::lock_guard lock(models_mu_);
  models_.clear();
}

void Session::peer_ended() {
  if (server().host) server().host->cancel_loops(this);
}

void Session::wake() {
  { std::lock_guard lock(models_mu_); }  // a waiter is either asleep or sees gone()
  models_cv_.notify_all();
}

// ---- handlers --------------------------------------------------------------

void Session::handle_hello(const wire::Header& h, const pb::HelloRequest& r) {
  const uint32_t lo = std::max(r.min_version(), wire::kMinVersion);
  const uint32_t hi = std::min(r.max_version(), wire::kMaxVersion);
  if (lo > hi)
    return reply_error(
        h.message_id, h.action,
        {ErrorCode::unsupported,
         "no common protocol version: the client speaks " + std::to_string(r.min_version()) +
             " to " + std::to_string(r.max_version()) + ", this server " +
             std::to_string(wire::kMinVersion) + " to " + std::to_string(wire::kMaxVersion)});
  if (auto refused = authenticate(r)) {
    // Answered after the delay, unless the connection went meanwhile.
    if (refused->code != ErrorCode::disconnected) reply_error(h.message_id, h.action, *refused);
    close_after_answering();
    return;
  }
  if (!hello_done_ && !establish()) {
    ++server().refused;
    const Error full{ErrorCode::limit_exceeded,
                     "this server already serves " + std::to_string(server().served()) +
                         " connections; max_connections is " +
                         std::to_string(server().settings.max_connections) +
                         " (rig serve --max-connections)"};
    server().log(who() + ": refused: " + full.message);
    reply_error(h.message_id, h.action, full);
    close_after_answering();
    return;
  }
  hello_done_ = true;
  const DeviceInfo& info = server().host->info();
  pb::Body body;
  auto* m = body.mutable_hello_reply();
  m->set_version(hi);
  m->set_server(std::string(kVersionString));
  m->set_device_spec(info.spec);
  m->set_device_kind(info.kind);
  m->set_device_description(info.description);
  m->set_queue_depth(server().depth);
  m->set_device_queue_depth(info.device_queue_depth());
  m->set_memory_bytes(server().memory_bytes);
  for (const auto& s : server().host->sensor_names()) m->add_sensors(s);
  for (const auto& [k, v] : info.properties) {
    auto* p = m->add_properties();
    p->set_key(k);
    p->set_value(v);
  }
  for (const auto& w : info.warnings) m->add_warnings(w);
  wire::to_pb(server().settings.limits, *m->mutable_limits());
  // The device's own clock, or a device that hosts a simulated one further
  // down (a remote device serving a sim): its timings are simulated too.
  m->set_virtual_clock(server().host->virtual_clock() || info.clock == ClockKind::virtual_time);
  m->set_paced_clock(info.paced_clock);
  if (const auto& c = info.declared_costs) {
    auto* d = m->mutable_declared_costs();
    d->set_compute_ns(c->compute.count());
    d->set_bw_in(c->bw_in);
    d->set_bw_out(c->bw_out);
    d->set_latency_ns(c->latency.count());
    d->set_full_duplex(c->duplex == Duplex::full);
  }
  m->set_compact_run(true);
  reply(h.message_id, h.action, body);
}

std::optional<Error> Session::authenticate(const pb::HelloRequest& r) {
  const std::string& token = server().settings.token;
  if (token.empty()) return std::nullopt;
  // The token is always compared, and a right one always admitted: failed
  // attempts by others (on loopback every client shares one address) never
  // keep a real client out.
  if (equal_in_constant_time(r.token(), token)) return std::nullopt;
  const std::string peer = auth_peer();
  // A wrong one is answered late, on its own connection: the delay grows
  // with the peer's recent failures, and the connection holds its handshake
  // slot meanwhile, so guessing costs time and slots (docs/protocol.md).
  ++server().auth_failures;
  const Nanos delay = server().auth->failed(peer, steady_clock().now());
  server().log(who() + ": refused: wrong or missing token (answered in " + format_duration(delay) +
               ")");
  if (delay > Nanos(0) && !pause_until(steady_clock().now() + delay))
    return Error{ErrorCode::disconnected, "the connection ended during its delay"};
  return Error{ErrorCode::permission,
               "this server requires a token: tcp://HOST:PORT?token=T or RIG_TOKEN"};
}

void Session::handle_load(wire::Frame& frame, Placed placed) {
  const auto& h = frame.header;
  const auto& r = frame.body.load_model_request();
  auto entry = std::make_shared<ModelEntry>();
  entry->handle = next_handle_++;
  entry->max_slots = 2 * server().depth;
  entry->budget = server().budget;
  entry->buffer_alignment = server().host->info().buffer_alignment;
  entry->buffer_padding = server().host->info().buffer_padding;
  if (r.by_name()) {
    // Read once and kept, as an upload is: a reload uses the bytes that were
    // checked, never the path again.
    auto bytes =
        read_model_under(server().model_root, r.name(), server().settings.limits.max_model_bytes);
    if (!bytes) return reply_error(h.message_id, h.action, bytes.error());
    auto hold = server().budget->reserve(
        bytes->size(), "message " + std::to_string(h.message_id) + " (load_model) of '" + r.name() +
                           "' (" + std::to_string(bytes->size()) + " bytes)");
    if (!hold) return reply_error(h.message_id, h.action, hold.error());
    entry->source.bytes = std::move(*bytes);
    entry->source_hold = std::move(*hold);
    entry->source.name = std::filesystem::path(r.name()).stem().string();
    for (const auto& shape : r.shapes())
      entry->source.shapes.push_back({shape.name(), {shape.dims().begin(), shape.dims().end()}});
  } else {
    entry->source.bytes = std::move(frame.owned.at(0));
    entry->source_hold = std::move(placed.upload);  // kept to reload the model
    entry->source.name = r.name().empty() ? "model" : r.name();
  }
  auto job = std::make_shared<Job>();
  job->kind = Job::Kind::load;
  job->entry = entry;
  job->owner_loads = model_loads_;
  job->done = [self = keep_alive(), id = h.message_id](Job& j, JobOutcome& o) {
    if (!o.error) o.error = check_model_limits(j.entry->info, self->server().settings.limits);
    if (o.error) {
      self->reply_error(id, Action::load_model, *o.error);
      self->load_settled(nullptr);
      return;
    }
    pb::Body body;
    auto* m = body.mutable_load_model_reply();
    m->set_handle(j.entry->handle);
    wire::to_pb(j.entry->info, *m->mutable_info());
    m->set_read_ns(o.load.read.count());
    m->set_parse_ns(o.load.parse.count());
    m->set_compile_ns(o.load.compile.count());
    // The reply goes out before the handle becomes usable: a request that
    // names it waits for load_settled, and its reply follows this one.
    self->reply(id, Action::load_model, body);
    self->load_settled(j.entry);
  };
  post(std::move(job));
}

void Session::handle_describe(const wire::Header& h, uint32_t handle) {
  auto entry = find_model(handle);
  if (!entry) return reply_error(h.message_id, h.action, unknown_handle(handle));
  pb::Body body;
  wire::to_pb(entry->info, *body.mutable_describe_model_reply()->mutable_info());
  reply(h.message_id, h.action, body);
}

void Session::handle_release(const wire::Header& h, uint32_t handle) {
  bool released = false;
  {
    std::lock_guard lock(models_mu_);
    released = models_.erase(handle) > 0;
  }
  if (last_found_ && last_found_->handle == handle) last_found_.reset();
  if (!released) return reply_error(h.message_id, h.action, unknown_handle(handle));
  pb::Body body;
  body.mutable_release_model_reply();
  reply(h.message_id, h.action, body);
}

void Session::handle_sensors(const wire::Header& h, bool take_warnings) {
  auto job = std::make_shared<Job>();
  job->kind = Job::Kind::sensors;
  job->take_warnings = take_warnings;
  job->done = [self = keep_alive(), id = h.message_id](Job&, JobOutcome& o) {
    if (o.error) {
      self->reply_error(id, Action::read_sensors, *o.error);
    } else {
      pb::Body body;
      auto* m = body.mutable_read_sensors_reply();
      for (const auto& [k, v] : o.sensors) {
        auto* r = m->add_readings();
        r->set_name(k);
        r->set_value(v);
      }
      for (const auto& w : o.warnings) m->add_warnings(w);
      const DeviceHost& host = *self->server().host;
      const uint64_t all = host.requests_executed(), own = self->requests_executed_->load();
      m->set_model_reloads(host.device_loads());
      m->set_other_requests(all > own ? all - own : 0);
      const uint32_t open = self->server().served();
      m->set_other_connections(open > 0 ? open - 1 : 0);
      m->set_own_model_loads(self->model_loads_->load());
      const uint64_t bytes = self->server().link_bytes.load(), mine = self->link_bytes();
      m->set_other_link_bytes(bytes > mine ? bytes - mine : 0);
      self->reply(id, Action::read_sensors, body);
    }
  };
  post(std::move(job));
}

void Session::handle_run(const wire::Header& h, Placed placed) {
  auto job = take_run_job();
  // A request that arrived whole in the read that completed its body was
  // received when it was placed: no clock read.
  job->received_at = reads() == placed.placed_read ? placed.placed_at : steady_clock().now();
  job->id = h.message_id;
  job->action = h.action;
  job->placed_at = placed.placed_at;
  job->entry = placed.lease->entry();
  job->lease = std::move(placed.lease);
  post_run(std::move(job));
}

std::shared_ptr<Session::RunJob> Session::take_run_job() {
  for (auto& job : run_jobs_) {
    // Nobody else holds it: the host and the answer are done with it. The
    // fence pairs with the release of the last other holder's reference.
    if (job.use_count() != 1) continue;
    std::atomic_thread_fence(std::memory_order_acquire);
    job->answered = false;
    job->cut = false;
    job->submitted_at = job->device_submitted_at = Nanos(0);
    return job;
  }
  auto job = std::make_shared<RunJob>();
  job->kind = Job::Kind::run;
  job->session = this;
  job->owner = this;
  job->owner_requests = requests_executed_;
  job->done = [](Job& j, JobOutcome& o) {
    auto& run = static_cast<RunJob&>(j);
    run.session->run_done(run, o);
  };
  job->cancelled = [session = this] { return session->is_closed(); };
  if (run_jobs_.size() < kMaxRunJobs) run_jobs_.push_back(job);
  return job;
}

void Session::post_run(std::shared_ptr<RunJob> job) {
  owe_answer();
  job->self = keep_alive();
  server().host->post(std::move(job));
}

void Session::run_done(RunJob& j, const JobOutcome& o) {
  // Held until this returns: answering may drop the last other reference.
  const std::shared_ptr<Session> self = std::move(j.self);
  try {
    if (o.error) {
      reply_error(j.id, j.action, *o.error);
    } else if (j.action == Action::run_compact) {
      wire::CompactRun m;
      m.kind = wire::CompactRun::Kind::reply;
      m.receive_ns = (j.received_at - j.placed_at).count();
      m.queue_wait_ns = std::max(Nanos(0), o.started_at - j.received_at).count();
      m.compute_ns = o.compute.count();
      const Nanos now = steady_clock().now();
      m.reply_wait_ns = (now - o.completed_at).count();
      m.previous_send_ns = last_send().count();
      const std::optional<Nanos>* device[4] = {&o.timings.transfer_in, &o.timings.queue_wait,
                                               &o.timings.compute, &o.timings.transfer_out};
      for (uint32_t i = 0; i < 4; ++i)
        if (*device[i]) {
          m.device_present |= 1u << i;
          m.device[i] = (*device[i])->count();
        }
      reply_compact(j.id, m, j.lease->slot().outputs, j.lease, now);
    } else {
      // Reused: a body kept in its run_reply case keeps its submessages, and
      // every field is set again below (no allocation per reply).
      thread_local pb::Body body;
      auto* m = body.mutable_run_reply();
      m->set_receive_ns((j.received_at - j.placed_at).count());
      m->set_queue_wait_ns(std::max(Nanos(0), o.started_at - j.received_at).count());
      m->set_compute_ns(o.compute.count());
      const Nanos now = steady_clock().now();
      m->set_reply_wait_ns((now - o.completed_at).count());
      m->set_previous_send_ns(last_send().count());
      auto* d = m->mutable_device();
      d->Clear();
      if (o.timings.transfer_in) d->set_transfer_in_ns(o.timings.transfer_in->count());
      if (o.timings.queue_wait) d->set_queue_wait_ns(o.timings.queue_wait->count());
      if (o.timings.compute) d->set_compute_ns(o.timings.compute->count());
      if (o.timings.transfer_out) d->set_transfer_out_ns(o.timings.transfer_out->count());
      reply_reusing(j.id, Action::run, body, j.lease->slot().outputs, j.lease, now);
    }
  } catch (const std::exception& e) {
    abort(std::string("answering a request failed: ") + e.what());
  }
  // The lease stays: the host lets go of it once the device holds none of
  // the slot's buffers (a run answered with a device error may still be on
  // the device); a written reply holds its own reference until then.
  j.entry.reset();
  answered();
}

void Session::handle_loop(const wire::Header& h, const pb::RunForDurationRequest& r,
                          Placed placed) {
  const Nanos duration(r.duration_ns()), sleep(r.sleep_between_frames_ns());
  const Nanos max = server().settings.limits.max_loop_duration;
  if (duration <= Nanos(0) || sleep < Nanos(0))
    return reply_error(
        h.message_id, h.action,
        {ErrorCode::invalid_argument,
         "run_for_duration needs duration_ns > 0 and sleep_between_frames_ns >= "
         "0, got " +
             std::to_string(duration.count()) + " and " + std::to_string(sleep.count())});
  if (duration > max || sleep > max)
    return reply_error(
        h.message_id, h.action,
        {ErrorCode::limit_exceeded, "run_for_duration of " + std::to_string(duration.count()) +
                                        " ns (sleeping " + std::to_string(sleep.count()) +
                                        " ns between frames) exceeds max_loop_duration (" +
                                        std::to_string(max.count()) + " ns)"});
  auto job = std::make_shared<Job>();
  job->kind = Job::Kind::loop;
  job->owner_requests = requests_executed_;
  job->entry = placed.lease->entry();
  job->lease = std::move(placed.lease);
  job->duration = duration;
  job->sleep_between_frames = sleep;
  job->done = [self = keep_alive(), id = h.message_id](Job& j, JobOutcome& o) {
    if (o.error) {
      self->reply_error(id, Action::run_for_duration, *o.error);
    } else {
      pb::Body body;
      wire::to_pb(o.loop, *body.mutable_run_for_duration_reply());
      self->reply(id, Action::run_for_duration, body, outputs_of(*j.lease), j.lease);
    }
  };
  post(std::move(job));
}

// ---- jobs and the handle table ---------------------------------------------

void Session::post(std::shared_ptr<Job> job) {
  owe_answer();
  if (job->kind == Job::Kind::load) {
    std::lock_guard lock(models_mu_);
    ++loads_pending_;
  }
  job->done = [self = keep_alive(), answer = std::move(job->done)](Job& j, JobOutcome& o) {
    try {
      answer(j, o);
    } catch (const std::exception& e) {
      self->abort(std::string("answering a request failed: ") + e.what());
    }
    j.lease.reset();
    self->answered();
  };
  job->cancelled = [self = keep_alive()] { return self->is_closed(); };
  job->owner = this;
  server().host->post(std::move(job));
}

void Session::load_settled(const std::shared_ptr<ModelEntry>& loaded) {
  {
    std::lock_guard lock(models_mu_);
    if (loaded) models_[loaded->handle] = loaded;
    --loads_pending_;
  }
  models_cv_.notify_all();
}

void Session::await_loads() {
  std::unique_lock lock(models_mu_);
  models_cv_.wait(lock, [&] { return loads_pending_ == 0 || gone(); });
}

std::shared_ptr<ModelEntry> Session::find_model_after_loads(uint32_t handle) {
  // Handles are never reused and only this thread releases them: an entry
  // found before is still the handle's while no load is pending.
  if (last_found_ && last_found_->handle == handle && loads_pending_.load() == 0)
    return last_found_;
  std::unique_lock lock(models_mu_);
  models_cv_.wait(lock, [&] { return loads_pending_ == 0 || gone(); });
  auto it = models_.find(handle);
  if (it == models_.end()) return nullptr;
  last_found_ = it->second;
  return last_found_;
}

std::shared_ptr<ModelEntry> Session::find_model(uint32_t handle) {
  std::lock_guard lock(models_mu_);
  auto it = models_.find(handle);
  return it == models_.end() ? nullptr : it->second;
}

Error Session::unknown_handle(uint32_t handle) {
  std::string loaded;
  {
    std::lock_guard lock(models_mu_);
    for (const auto& [h, e] : models_) loaded += (loaded.empty() ? "" : ", ") + std::to_string(h);
  }
  return {ErrorCode::not_found,
          "unknown model handle " + std::to_string(handle) +
              " on this connection (loaded: " + (loaded.empty() ? "none" : loaded) + ")"};
}

}  // namespace rig::server

// Session: what one client's requests mean. It decides where each request's
// buffers go (run inputs land straight in a slot the device has bound), admits
// or refuses the request (hello first, known handles, exact input sizes,
// max_models_per_connection, max_pending_bytes), answers hello, describe and
// release itself, and posts load, run, loop and sensor reads to the
// DeviceHost. The socket, the threads and how the connection ends are its
// Connection's (connection.hpp).
//
// Order: place() and dispatch() run on the reader thread, one frame at a
// time in stream order, so requests take effect in the order they were sent;
// a request that names a model handle first waits until the connection's
// earlier loads have settled (await_loads), so a client may pipeline load
// then run or describe.
//
// Threads: the handlers run on the reader thread; a job's answer runs on the
// thread that drives the device (DeviceHost) and may reply, record a loaded
// model and settle a load. The handle table and the loads in progress are
// guarded by models_mu_; lock order: the connection's lock, then models_mu_
// (wake()), never the reverse.
//
// Ownership: the handle table shares its ModelEntry objects with the jobs
// that use them and with the host; every job holds the session (and with it
// the connection) until it has answered.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "server/connection.hpp"

namespace rig::server {

class Session final : public Connection {
 public:
  Session(ServerContext& server, wire::Socket socket, uint64_t id)
      : Connection(server, std::move(socket), id) {}

 private:
  // What place() decided for a frame, handed to its handler by dispatch().
  struct Placed {
    uint32_t message_id = 0;
    Nanos placed_at{0};
    uint64_t placed_read = 0;          // reads() when it was placed
    std::shared_ptr<SlotLease> lease;  // run, loop: the slot its inputs go to
    ByteHold upload;                   // load_model: its model bytes
  };

  // Connection hooks.
  wire::BufferPlan place(const wire::Frame& frame) override;
  void dispatch(wire::Frame& frame) override;
  // A run_compact request whole in the read buffer, on a model found before
  // (last_found_) with no load pending: placed and run without the parser;
  // a whole canonical ping: answered without the parser or protobuf.
  size_t take_whole(std::span<const std::byte> bytes) override;
  void reading_stopped() override { placed_.reset(); }
  void peer_ended() override;
  void closed() override;
  void wake() override;

  // Admission: the error a request is refused with, or nullopt; on success
  // `placed` and `plan` say where its buffers go.
  std::optional<Error> admit(const wire::Frame& frame, Placed& placed, wire::BufferPlan& plan);
  // run, run_compact and run_for_duration: the model, its inputs, a slot.
  std::optional<Error> admit_run(const wire::Frame& frame, Placed& placed, wire::BufferPlan& plan);
  std::optional<Error> admit_load(const wire::Header& h, const wire::pb::Body& body,
                                  Placed& placed);
  // max_models_per_connection, counting the loads still in progress.
  std::optional<Error> models_full();

  // The token check of hello: nullopt when no token is required or the
  // right one was given; else, after the peer's failure delay (AuthLimiter),
  // the error to refuse it with (disconnected: the connection ended during
  // the delay, nothing to answer).
  std::optional<Error> authenticate(const wire::pb::HelloRequest& r);

  // Handlers, on the reader thread.
  void handle_hello(const wire::Header& h, const wire::pb::HelloRequest& r);
  void handle_load(wire::Frame& frame, Placed placed);
  void handle_describe(const wire::Header& h, uint32_t handle);
  void handle_release(const wire::Header& h, uint32_t handle);
  void handle_sensors(const wire::Header& h, bool take_warnings);
  void handle_run(const wire::Header& h, Placed placed);
  void handle_loop(const wire::Header& h, const wire::pb::RunForDurationRequest& r, Placed placed);

  // Hands a job to the device host. Its completion always counts as
  // answered, and an exception while answering closes this connection only.
  void post(std::shared_ptr<Job> job);

  // A run request's job, kept by the session and reused for a later run once
  // the host has let go of it: a run allocates no job, no callbacks and no
  // keep-alive closure. Its callbacks are set once (they capture only the
  // session's address); `self` holds the session, as post()'s closure does
  // for the other jobs, from post_run() until the run is answered.
  struct RunJob final : Job {
    Session* session = nullptr;
    std::shared_ptr<Session> self;
    uint32_t id = 0;
    wire::Action action = wire::Action::run;  // run or run_compact: how it is answered
    Nanos placed_at{0}, received_at{0};
  };
  // At most this many run jobs are kept; more runs in flight at once (many
  // models, each with its slots) get jobs of their own.
  static constexpr size_t kMaxRunJobs = 64;
  // A run job nobody else holds (reset for a new run), else a new one.
  std::shared_ptr<RunJob> take_run_job();
  void post_run(std::shared_ptr<RunJob> job);
  // A run's answer (on the thread that drives the device).
  void run_done(RunJob& job, const JobOutcome& outcome);
  // A load is over (its reply is out): its model, when it loaded, joins the
  // handle table in the same step as it stops counting as loading.
  void load_settled(const std::shared_ptr<ModelEntry>& loaded);
  // Until the loads posted before now have settled (or the connection is
  // gone).
  void await_loads();
  std::shared_ptr<ModelEntry> find_model(uint32_t handle);
  // await_loads() then find_model(), under one lock.
  std::shared_ptr<ModelEntry> find_model_after_loads(uint32_t handle);
  Error unknown_handle(uint32_t handle);
  // What a job holds until it has answered: this session, and with it the
  // connection.
  std::shared_ptr<Session> keep_alive() {
    return std::static_pointer_cast<Session>(shared_from_this());
  }

  // Reader-thread state.
  std::optional<Placed> placed_;  // the frame the parser placed and has not yet emitted
  std::vector<std::shared_ptr<RunJob>> run_jobs_;  // take_run_job()
  bool hello_done_ = false;
  uint32_t next_handle_ = 1;

  // The reader and load completions (the driver) touch these.
  std::mutex models_mu_;
  std::condition_variable models_cv_;  // wakes await_loads()
  std::map<uint32_t, std::shared_ptr<ModelEntry>> models_;
  // Loads posted and not yet settled (load_settled). Changed under
  // models_mu_; atomic so that the reader sees without the lock that none
  // is pending (only the reader posts loads, so none can start meanwhile).
  std::atomic<uint32_t> loads_pending_{0};
  // Reader only: the entry the last lookup found, used while no load is
  // pending; handle_release() and closed() forget it.
  std::shared_ptr<ModelEntry> last_found_;
  wire::CompactRun whole_run_;         // take_whole()
  std::vector<uint64_t> whole_sizes_;  // take_whole()
  // Runs and loops the device executed for this connection (the others' are
  // the host's total less these: ReadSensorsReply.other_requests).
  std::shared_ptr<std::atomic<uint64_t>> requests_executed_ =
      std::make_shared<std::atomic<uint64_t>>(0);
  // Models the device loaded because this connection asked (load_model):
  // its own loads, not sharing (ReadSensorsReply.own_model_loads).
  std::shared_ptr<std::atomic<uint64_t>> model_loads_ = std::make_shared<std::atomic<uint64_t>>(0);
};

}  // namespace rig::server

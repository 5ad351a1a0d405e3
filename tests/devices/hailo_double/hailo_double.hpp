// The script behind the HailoRT test double (include/hailo/hailort.hpp): one
// scripted Hailo device per process, on a virtual clock, driven only through
// the HailoRT API subset rig's hailo device calls. Tests set script() before
// opening the device and read counters() afterwards; reset() between tests.
//
// What of the real library it models, the source it follows (hailo-ai/hailort,
// read at tags v5.1.1 and v5.2.0; paths under hailort/libhailort/src, those
// starting common/ under hailort/), and the test in
// tests/devices/hailo_device_test.cpp per row:
//
// Behaviour modelled | source it follows | test (one per row):
//  1. create_infer_model's name: "" the first network group, a group's name, a network's name
//     refused HAILO_NOT_IMPLEMENTED, else HAILO_NOT_FOUND (logged)
//     source: hef/hef.cpp Hef::Impl::get_network_group_and_network_name;
//     net_flow/pipeline/infer_model.cpp InferModelBase::create
//     test: DoubleLooksNamesUpAsHailoRT
//  2. without the scheduler a model runs only after activate(); activate() refused with the
//     scheduler on, or while another model is active; shutdown() deactivates
//     source: stream_common/async_stream_base.cpp write_async; core_op/core_op.cpp
//     CoreOp::activate; infer_model.cpp ConfiguredInferModelImpl::shutdown
//     test: DoubleRefusesAnInactiveModelWithoutTheScheduler
//  3. the logger is created before main (static initializer) and writes
//     $HOME/.hailo/hailort/hailort.log ([time] [pid] [tid] ...) and
//     $HAILORT_LOGGER_PATH/hailort.log or ./hailort.log ([time] [tid] ...); NONE turns both off
//     source: hailort.cpp COMPAT__INITIALIZER(hailort__initialize_logger); utils/hailort_logger.cpp
//     test: WarningsAreCapturedInTheDefaultEnvironment, HailoLogOff.CaptureSaysItCannotWork
//  4. DMA alignment is the system page size (sysconf(_SC_PAGESIZE)): dma_map maps the part of
//     any buffer from its first aligned address and succeeds (nothing to map succeeds too);
//     on H10 each unaligned buffer is copied through a bounce buffer (counted)
//     source: common/os/posix/os_utils.cpp OsUtils::get_page_size, common/os_utils.hpp
//     get_dma_able_alignment; vdma/vdma_device.cpp VdmaDevice::dma_map_impl,
//     aligned_part_to_map; device/device_hrpc_client.cpp dma_map (v5.2.0);
//     vdma/pcie_session.cpp; vdma/channel/transfer_common.cpp is_aligned_for_dma
//     test: DoubleMapsTheAlignedPartOfAnyBuffer, DmaMapMapsPageAlignedBuffers,
//     DmaMapMapsEveryBufferAndSaysWhichAreCopiedInPart
//  5. on H10 each query is an hRPC round trip (rpc_round_trip on the clock):
//     get_hw_latency_measurement, identify, temperature, power, activate
//     source: net_flow/pipeline/configured_infer_model_hrpc_client.cpp;
//     device/device_hrpc_client.cpp
//     test: DoubleChargesAnRpcForH10Queries, TheLatencyMeanIsReadOutsideTheTimedRegion
//  6. get_hw_latency_measurement: a mean since configure; HAILO_NOT_AVAILABLE before a frame and
//     without a meter (configured without HAILO_LATENCY_MEASURE). A model of several inputs
//     has no meter: configure with the flag fails (row 15)
//     source: common/latency_meter.hpp; core_op/core_op.cpp get_latency_measurement (v5.2.0)
//     test: DoubleChargesAnRpcForH10Queries, DoubleConfiguresAsHailoRTRefuses
//  7. completion callbacks run on HailoRT's thread, not the caller's; wait returns after the
//     callback ran
//     source: configured_infer_model_hrpc_client.cpp (callback dispatcher); infer_model.cpp
//     AsyncInferJobImpl
//     test: DoubleLogsEveryExpiredWaitAsH10Does
//  8. an AsyncInferJob::wait that times out logs at error level: on H10 "CHECK_SUCCESS failed
//     with status=HAILO_TIMEOUT(4)" at [configured_infer_model_hrpc_client.cpp:32] [wait],
//     elsewhere "CHECK failed - Waiting for async job to finish has failed with timeout (Nms)"
//     at [infer_model.cpp:1147] [wait]; so does wait_for_async_ready. On H10 a completed job's
//     wait returns its completion's status; elsewhere it succeeds
//     source: configured_infer_model_hrpc_client.cpp AsyncInferJobHrpcClient::wait; infer_model.cpp
//     AsyncInferJobImpl::wait, wait_for_async_ready; common/utils.hpp CHECK, CHECK_SUCCESS
//     test: DoubleLogsEveryExpiredWaitAsH10Does, DoubleLogsAHailo15ExpiredWaitAsInferModelDoes,
//     DoubleChecksBufferSizesAtRunAsyncAndShutsDown
//  9. the H10 client reports its Device as PCIe whatever the link
//     source: device/device_hrpc_client.hpp (Device(Device::Type::PCIE))
//     test: DescribesTheModelWithExactFrameSizes
// 10. run_async_for_duration over hRPC fails with HAILO_RPC_FAILED (77) after the whole loop when
//     the rate is non-zero (the host parses the reply from the header's offset); 0 succeeds.
//     From 5.2.0 only (Script::library): 5.1.1's reply buffer holds the body alone
//     source: configured_infer_model_hrpc_client.cpp (seeds/000); hrpc/rpc_connection.cpp
//     read_message (v5.1.1: the body; v5.2.0: header and body)
//     test: TheRpcFailureIsRecognisedAndTheLoopFallsBack,
//     ARateOfZeroSaysFewerThanOneFramePerSecond, UnderHailoRT511TheOnDeviceLoopAnswers
// 11. the loop's rate counts the frames its shutdown() aborts (a full queue without a sleep),
//     truncated to an integer; the model is shut down after the loop
//     source: infer_model.cpp ConfiguredInferModelImpl::run_async_for_duration
//     test: ATruncatedRateIsAnIntervalThatHoldsTheTrueRate, TheModelIsReconfiguredAfterEveryLoop
// 12. shutdown() aborts what is in flight (callbacks with HAILO_STREAM_ABORT)
//     source: infer_model.cpp ConfiguredInferModelImpl::shutdown
//     test: HungFallbackRequestsAreAbortedBeforeTheirBuffersGo
// 13. an empty AsyncInferJob's wait succeeds
//     source: infer_model.cpp AsyncInferJob::wait
//     test: (used by the device's release)
// 14. architecture value 7: HAILO_ARCH_MARS in 5.1.1, HAILO_ARCH_HAILO12L in 5.2.0
//     source: include/hailo/hailort.h
//     test: ArchitectureSevenIsNamedByTheLibraryVersion
// 15. configure() fails as HailoRT's: a latency meter (HAILO_LATENCY_MEASURE) for an on-chip NMS
//     output or more than one input: HAILO_INVALID_OPERATION (the core's warning "HW Latency
//     measurement is not supported on NMS networks" / "... supported on networks with a single
//     input. the model has N physical inputs." logged on this host only where the core runs
//     here, not on H10); "" for a HEF of several network groups: HAILO_INVALID_ARGUMENT (the
//     streams are the first group's until then); a batch above the queue: HAILO_INVALID_OPERATION
//     source: core_op/resource_manager/resource_manager.cpp create_hw_latency_meter;
//     net_flow/pipeline/infer_model.cpp InferModelBase::configure, InferModelBase::create
//     (v5.1.1 and v5.2.0)
//     test: DoubleConfiguresAsHailoRTRefuses, AModelHailoRTRefusesLatencyForIsConfiguredWithoutIt,
//     ABatchHailoRTRefusesIsNamed
// 16. set_buffer takes any size; run_async checks sizes (HAILO_INVALID_OPERATION); any failed
//     run_async shuts the model down; after that create_bindings succeeds and on H10 run_async's
//     completion fails with HAILO_STREAM_ABORT (elsewhere run_async itself)
//     source: infer_model.cpp InferStream::Impl::set_buffer, validate_bindings,
//     ConfiguredInferModel::run_async, ConfiguredInferModelBase::run;
//     configured_infer_model_hrpc_client.cpp run_async, validate_input_bindings;
//     async_infer_runner.cpp AsyncInferRunnerImpl::run, abort; hrpc/server.cpp (v5.2.0)
//     test: DoubleChecksBufferSizesAtRunAsyncAndShutsDown, AFailedSubmitReconfiguresTheModel
// 17. a lost hRPC reply (Script::lose_reply, H10 only): the call fails with HAILO_TIMEOUT after
//     the request's timeout (10 s; configure 45 s) and the caller's TRY logs "CHECK_SUCCESS
//     failed with status=HAILO_TIMEOUT(4)" at the caller's [file:line] [function]; a lost
//     configure's model stays on the device until its VDevice goes
//     source: hrpc/client.cpp Client::execute_request; hrpc/client.hpp REQUEST_TIMEOUT;
//     hrpc_protocol/serializer.hpp LONG_RPC_ACTION_TIMEOUT; device/device_hrpc_client.cpp,
//     vdevice/vdevice_hrpc_client.cpp, infer_model_hrpc_client.cpp (v5.1.1 and v5.2.0)
//     test: DoubleLosesAScriptedReplyOnce, ALostQueryReplyIsRetriedOnce,
//     ALostConfigureReplyReopensTheVDevice, ALostVDeviceCreateReplyIsRetried
// 18. VDevice::create with a device id the scan does not list: HAILO_INVALID_ARGUMENT;
//     hailo_init_vdevice_params: one device, no ids, round robin, group "UNIQUE"
//     (HAILO_UNIQUE_VDEVICE_GROUP_ID), no multi-process service
//     source: vdevice/vdevice.cpp VDeviceBase::get_accelerator_type; hailort_defaults.cpp
//     get_vdevice_params; include/hailo/hailort.h (v5.2.0)
//     test: DoubleCreatesVDevicesAsHailoRT
// 19. a log file sink that cannot be opened is a null sink, silently: a folder not writable, or
//     an existing hailort.log the user cannot write (access(W_OK); root passes); the sinks it
//     opens stay open for the process's life
//     source: utils/hailort_logger.cpp HailoRTLogger::create_file_sink (v5.1.1, v5.2.0)
//     test: HailoLog.TheSinkReadIsOneThisProcessHoldsOpen; through the real client,
//     hailort_<version>/RealClientLog.* under an unprivileged uid (tests/hailort/client)
//
// Unchecked (the double's own guess): the status run_async returns on an
// inactive model (the stream's HAILO_STREAM_NOT_ACTIVATED is assumed to pass
// through the pipeline), the exact log texts other than those quoted above,
// the RPC's cost (script().rpc_round_trip), the device's timing model,
// whether real HailoRT logs on a timed-out wait_for_async_ready with the same
// words, log rotation (not modelled), the queue being full when the loop
// ends, the status dma_map gives a null address, the log lines' numbers in
// 5.1.1 (the double writes 5.2.0's), HAILO_REQUEST_TIMEOUT_SECONDS (not
// modelled), what a run_async_for_duration on a shut-down model does, and
// everything only hardware shows (figures, sensors, the USB link).
// Script::fail_run_async_at and create/configure_status are forced failures,
// not HailoRT behaviour. Completion callbacks run on the double's thread
// while the caller is inside a HailoRT call (a wait, or the clock's sleep),
// never concurrently with the caller's own code: the virtual clock's order
// stays deterministic that way.
//
// The device modelled (all times on clock(), which advances only while the
// caller waits: AsyncInferJob::wait, wait_for_async_ready, run, an H10 query):
//  * a request passes three FIFO stages: transfer in, compute, transfer out;
//    a lone frame takes in + compute + out, a full queue runs at the slowest
//    stage. Outputs are a hash of the inputs, written at completion.
//  * run_async_for_duration with for_duration = hrpc_bug as above; with
//    works it returns the truncated integer rate. Either way the configured
//    model is shut down after the loop unless shutdown_after_loop is false.
// Single-threaded: call from the thread that drives the device (callbacks run
// on the double's callback thread while that thread waits for them).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "hailo/hailort.hpp"
#include "rig/clock.hpp"

namespace hailo_double {

using Nanos = std::chrono::nanoseconds;

enum class ForDuration { hrpc_bug, works };

struct Script {
  // VDevice::create
  std::vector<std::string> device_ids{"0000:01:00.0"};  // empty: HAILO_OUT_OF_PHYSICAL_DEVICES
  hailo_status create_status = HAILO_SUCCESS;           // forced failure
  hailort::Device::Type device_type = hailort::Device::Type::PCIE;
  hailo_device_architecture_t architecture = HAILO_ARCH_HAILO10H;
  hailo_firmware_version_t firmware{5, 2, 0};
  hailo_version_t library{5, 2, 0};
  std::string board_name = "Hailo-10H";
  // create_infer_model / configure
  hailo_status configure_status = HAILO_SUCCESS;
  size_t queue_size = 32;
  Nanos configure_time{std::chrono::milliseconds(120)};
  Nanos transfer_in{std::chrono::microseconds(840)};
  Nanos compute{std::chrono::microseconds(2270)};
  Nanos transfer_out{std::chrono::microseconds(840)};
  // get_hw_latency_measurement: the value, or the status when not set
  std::optional<Nanos> hw_latency;
  hailo_status hw_latency_status = HAILO_NOT_AVAILABLE;
  // Sensors: a value, or the status the call fails with
  std::optional<float> temperature_c;
  hailo_status temperature_status = HAILO_NOT_SUPPORTED;
  std::optional<float> power_w;
  hailo_status power_status = HAILO_OPEN_FILE_FAILURE;
  // Log records (level, message) written at VDevice::create and at configure
  std::vector<std::pair<std::string, std::string>> log_at_create, log_at_configure;
  // run_async_for_duration
  ForDuration for_duration = ForDuration::hrpc_bug;
  bool shutdown_after_loop = true;
  Nanos rpc_overhead{std::chrono::milliseconds(30)};  // seeds/000: 3029-3042 ms for 3000 ms
  // H10 (architecture HAILO10H): each query that is an hRPC round trip
  // (get_hw_latency_measurement, identify, sensors, activate) costs this.
  Nanos rpc_round_trip{std::chrono::microseconds(400)};
  // run_async calls after this many never complete (until shutdown() aborts
  // them); -1: all complete.
  int hang_after = -1;
  // The run_async call with this number (1: the first) fails with
  // run_async_failure before it reaches the device; -1: none does.
  int fail_run_async_at = -1;
  hailo_status run_async_failure = HAILO_INTERNAL_FAILURE;
  // hRPC replies lost to hrpc/client.cpp's lost wakeup, each once, by the
  // call's name: "identify", "get_chip_temperature", "power_measurement",
  // "get_architecture", "get_hw_latency_measurement", "VDevice::create",
  // "create_infer_model", "configure". The call fails with HAILO_TIMEOUT
  // after the request's timeout; a create or configure took effect on the
  // device all the same.
  std::vector<std::string> lose_reply;
  // Called after each run_async completion's callback with the number of
  // completions so far (a test's hook, e.g. to cancel a loop mid-way).
  std::function<void(int)> after_completion;
};

struct Counters {
  int vdevices_created = 0;
  int configures = 0;
  int shutdowns = 0;
  int for_duration_calls = 0;
  int run_async_calls = 0;
  int completions = 0;
  int dma_maps = 0, dma_unmaps = 0;
  std::vector<std::string> created_with_ids;
  uint16_t batch_size = 0;
  hailo_power_mode_t power_mode = HAILO_POWER_MODE_PERFORMANCE;
  hailo_scheduling_algorithm_t scheduler = HAILO_SCHEDULING_ALGORITHM_NONE;
  uint32_t latency_flags = 0;
  int infer_models_created = 0;
  int activations = 0;
  int rpc_queries = 0;      // H10 round trips charged
  int latency_queries = 0;  // get_hw_latency_measurement calls
  int wait_timeouts = 0;    // AsyncInferJob::wait / wait_for_async_ready that timed out
  int bounce_copies = 0;    // H10 buffers not aligned to the page size
  int configured_alive = 0, configured_alive_max = 0;  // ConfiguredInferModels in existence
  int requests_in_flight = 0;   // run_async requests not yet completed or aborted
  uint64_t latency_frames = 0;  // frames the last configured model's latency meter counted
  int lost_replies = 0;         // Script::lose_reply entries used
  int vdevices_alive = 0;       // VDevices in existence
};

Script& script();
Counters& counters();
// The device's clock; its sleeper lets scheduled completions happen.
rig::VirtualClock& clock();
// A fresh script, counters and device state; the clock keeps running and the
// logger keeps its path (as HailoRT's does within a process).
void reset();

// The double's HEF format (HailoRT's is binary; the double accepts this text):
//   hailo-double-hef
//   network_group NAME          (any number; none: one named network_group0)
//   input NAME HxWxF uint8|uint16|float32
//   output NAME HxWxF uint8|uint16|float32 [nms_on_chip]
// The streams belong to the first network group. nms_on_chip: the output is
// an NMS computed on the chip (its physical layer's order is
// HAILO_FORMAT_ORDER_HAILO_NMS_ON_CHIP; on the host, an NMS stream). Anything else fails
// create_infer_model with HAILO_INVALID_HEF.
std::string hef_text(const std::vector<std::string>& lines);

// The log files the double's logger writes ("" for a sink it has not):
// $HOME/.hailo/hailort/hailort.log and $HAILORT_LOGGER_PATH/hailort.log.
std::string main_log_file();
std::string local_log_file();

// The thread the double runs completion callbacks on.
std::thread::id callback_thread();

// Whether the logger was created by a static initializer, before main.
bool logger_created_before_main();

}  // namespace hailo_double

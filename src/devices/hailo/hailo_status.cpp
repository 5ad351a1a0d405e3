#include "devices/hailo/hailo_status.hpp"

namespace rig::hailo {
namespace {

// What a status means to a user, where HailoRT's name alone does not say.
const char* hint_for(hailo_status s) {
  switch (s) {
    case HAILO_OUT_OF_PHYSICAL_DEVICES:
      return "no Hailo device found (or none free with the ids given)";
    case HAILO_DRIVER_NOT_INSTALLED:
      return "the Hailo driver is not installed or not running";
    case HAILO_DEVICE_IN_USE:
      return "the device is in use by another process";
    case HAILO_INVALID_HEF:
    case HAILO_HEF_FILE_CORRUPTED:
      return "the model is not a valid HEF";
    case HAILO_HEF_NOT_SUPPORTED:
      return "the HEF was compiled by a Dataflow Compiler this HailoRT does not support";
    case HAILO_HEF_NOT_COMPATIBLE_WITH_DEVICE:
      return "the HEF was compiled for another Hailo architecture";
    case HAILO_INVALID_DRIVER_VERSION:
    case HAILO_DRIVER_INVALID_RESPONSE:
    case HAILO_DRIVER_INVALID_IOCTL:
      return "the driver and libhailort versions differ";
    case HAILO_UNSUPPORTED_FW_VERSION:
      return "the firmware and libhailort versions differ";
    case HAILO_NOT_IMPLEMENTED:
      return "not implemented by this HailoRT for this device";
    case HAILO_OUT_OF_HOST_MEMORY:
    case HAILO_OUT_OF_HOST_CMA_MEMORY:
      return "out of host memory";
    case HAILO_OUT_OF_FW_MEMORY:
      return "out of device memory";
    case HAILO_TIMEOUT:
    case HAILO_DRIVER_TIMEOUT:
      return "the device did not answer in time";
    case HAILO_DEVICE_NOT_CONNECTED:
    case HAILO_COMMUNICATION_CLOSED:
      return "the device went away";
    default:
      return nullptr;
  }
}

}  // namespace

std::string status_name(hailo_status status) {
  const char* name = hailo_get_status_message(status);
  return (name != nullptr ? std::string(name) : std::string("hailo_status")) + "(" +
         std::to_string(static_cast<int>(status)) + ")";
}

ErrorCode error_code_for(hailo_status s) {
  switch (s) {
    case HAILO_SUCCESS:
      return ErrorCode::internal;  // not an error: a bug to report one
    case HAILO_INVALID_ARGUMENT:
    case HAILO_INSUFFICIENT_BUFFER:
    case HAILO_DATA_ALIGNMENT_FAILURE:
    case HAILO_INVALID_HEF:
    case HAILO_HEF_FILE_CORRUPTED:
    case HAILO_INVALID_HEF_USE:
    case HAILO_INVALID_FRAME:
      return ErrorCode::invalid_argument;
    case HAILO_NOT_FOUND:
    case HAILO_OUT_OF_PHYSICAL_DEVICES:
    case HAILO_ETH_INTERFACE_NOT_FOUND:
    case HAILO_MAC_ADDRESS_NOT_FOUND:
    case HAILO_NO_IPV4_INTERFACES_FOUND:
    case HAILO_DRIVER_NOT_INSTALLED:
      return ErrorCode::not_found;
    case HAILO_NOT_IMPLEMENTED:
    case HAILO_NOT_SUPPORTED:
    case HAILO_UNSUPPORTED_OPCODE:
    case HAILO_UNSUPPORTED_CONTROL_PROTOCOL_VERSION:
    case HAILO_UNSUPPORTED_FW_VERSION:
    case HAILO_HEF_NOT_SUPPORTED:
    case HAILO_HEF_NOT_COMPATIBLE_WITH_DEVICE:
    case HAILO_INVALID_DEVICE_ARCHITECTURE:
    case HAILO_USER_MODE_RATE_LIMITER_NOT_SUPPORTED:
    case HAILO_PCIE_NOT_SUPPORTED_ON_PLATFORM:
    case HAILO_NOT_AVAILABLE:
      return ErrorCode::unsupported;
    case HAILO_OPEN_FILE_FAILURE:
    case HAILO_FILE_OPERATION_FAILURE:
    case HAILO_CLOSE_FAILURE:
      return ErrorCode::io;
    case HAILO_INVALID_CONTROL_RESPONSE:
    case HAILO_CONTROL_RESPONSE_MD5_MISMATCH:
    case HAILO_RPC_FAILED:
    case HAILO_INVALID_SERVICE_VERSION:
    case HAILO_NMS_BURST_INVALID_DATA:
    case HAILO_DRIVER_INVALID_RESPONSE:
    case HAILO_DRIVER_INVALID_IOCTL:
      return ErrorCode::protocol;
    case HAILO_OUT_OF_HOST_MEMORY:
    case HAILO_OUT_OF_HOST_CMA_MEMORY:
    case HAILO_OUT_OF_FW_MEMORY:
    case HAILO_OUT_OF_DESCRIPTORS:
    case HAILO_CHUNK_TOO_LARGE:
    case HAILO_RATE_LIMIT_MAXIMUM_BANDWIDTH_EXCEEDED:
    case HAILO_INVALID_CONTEXT_COUNT:
    case HAILO_CANT_MEET_BUFFER_REQUIREMENTS:
      return ErrorCode::limit_exceeded;
    case HAILO_QUEUE_IS_FULL:
      return ErrorCode::queue_full;
    case HAILO_TIMEOUT:
    case HAILO_DRIVER_TIMEOUT:
      return ErrorCode::timeout;
    case HAILO_COMMUNICATION_CLOSED:
    case HAILO_DEVICE_NOT_CONNECTED:
    case HAILO_CONNECTION_REFUSED:
    case HAILO_ETH_FAILURE:
    case HAILO_ETH_RECV_FAILURE:
    case HAILO_ETH_SEND_FAILURE:
    case HAILO_SHUTDOWN_EVENT_SIGNALED:
      return ErrorCode::disconnected;
    case HAILO_DEVICE_IN_USE:
      return ErrorCode::permission;
    case HAILO_INVALID_OPERATION:
      // HailoRT refused the call in the model's state or setting (a buffer
      // of the wrong size, a shut-down model, a latency meter or batch the
      // model cannot have): the device said no, not a rig bug. The device
      // names what it means per call (configure: the batch).
      return ErrorCode::device;
    case HAILO_UNINITIALIZED:
    case HAILO_INTERNAL_FAILURE:
    case HAILO_INVALID_LOGGER_LEVEL:
    case HAILO_MUTEX_INIT_FAIL:
    case HAILO_THREAD_ALREADY_ACTIVATED:
    case HAILO_THREAD_NOT_ACTIVATED:
    case HAILO_THREAD_NOT_JOINABLE:
    case HAILO_ANSI_TO_UTF16_CONVERSION_FAILED:
    case HAILO_UTF16_TO_ANSI_CONVERSION_FAILED:
    case HAILO_UNEXPECTED_INTERFACE_INFO_FAILURE:
    case HAILO_UNEXPECTED_ARP_TABLE_FAILURE:
    case HAILO_EVENT_CREATE_FAIL:
    case HAILO_READ_EVENT_FAIL:
      return ErrorCode::internal;
    default:
      // Firmware, driver, DMA, stream and pipeline failures, aborts, and
      // numbers this rig does not know: the device failed.
      return ErrorCode::device;
  }
}

Error status_error(hailo_status status, std::string_view what) {
  std::string message = std::string(what) + ": " + status_name(status);
  if (const char* hint = hint_for(status)) message += std::string(": ") + hint;
  return Error{error_code_for(status), std::move(message)};
}

}  // namespace rig::hailo

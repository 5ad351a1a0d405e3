#include "rig/error.hpp"

#include "rig/clock.hpp"

namespace rig {

std::string_view to_string(ErrorCode code) {
  switch (code) {
    case ErrorCode::invalid_argument:
      return "invalid argument";
    case ErrorCode::not_found:
      return "not found";
    case ErrorCode::unsupported:
      return "unsupported";
    case ErrorCode::io:
      return "i/o error";
    case ErrorCode::protocol:
      return "protocol error";
    case ErrorCode::limit_exceeded:
      return "limit exceeded";
    case ErrorCode::queue_full:
      return "queue full";
    case ErrorCode::timeout:
      return "timeout";
    case ErrorCode::disconnected:
      return "disconnected";
    case ErrorCode::device:
      return "device error";
    case ErrorCode::permission:
      return "permission denied";
    case ErrorCode::internal:
      return "internal error";
  }
  return "unknown error";
}

std::string Error::to_string() const {
  return std::string(rig::to_string(code)) + ": " + message;
}

int exit_code_for(ErrorCode code) {
  switch (code) {
    case ErrorCode::invalid_argument:
    case ErrorCode::not_found:
    case ErrorCode::unsupported:
    case ErrorCode::io:
    case ErrorCode::limit_exceeded:
    case ErrorCode::permission:
      return 2;
    case ErrorCode::protocol:
    case ErrorCode::queue_full:
    case ErrorCode::timeout:
    case ErrorCode::disconnected:
    case ErrorCode::device:
      return 3;
    case ErrorCode::internal:
      return 4;
  }
  return 4;
}

SteadyClock& steady_clock() {
  static SteadyClock clock;
  return clock;
}

}  // namespace rig

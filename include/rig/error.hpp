// Error values: every expected failure in rig is an Error returned through
// Result<T> (tl::expected). Exceptions are reserved for bugs and never cross
// the device interface or the C ABI.
#pragma once

#include <string>
#include <string_view>

#include <tl/expected.hpp>

namespace rig {

enum class ErrorCode {
  invalid_argument,  // caller passed something malformed (bad spec, depth 0, wrong size)
  not_found,         // a file, model or handle does not exist
  unsupported,       // valid request the device/model cannot do (e.g. unsupported ONNX op)
  io,                // filesystem or socket failure
  protocol,          // malformed bytes on the wire
  limit_exceeded,    // a configured limit (body size, buffer size, ...) would be exceeded
  queue_full,        // submit beyond the device's queue depth
  timeout,           // waited longer than allowed
  disconnected,      // the peer went away
  device,            // the device itself failed
  permission,        // authentication / access refused
  internal,          // a bug surfaced as a value
};

struct Error {
  ErrorCode code = ErrorCode::internal;
  std::string message;

  // "invalid_argument: depth must be >= 1"
  std::string to_string() const;
};

template <class T>
using Result = tl::expected<T, Error>;

// Convenience: `return fail(ErrorCode::io, "cannot open " + path);`
inline tl::unexpected<Error> fail(ErrorCode code, std::string message) {
  return tl::unexpected<Error>(Error{code, std::move(message)});
}

std::string_view to_string(ErrorCode code);

// Process exit status for an error reaching the CLI: 2 for bad input the user
// can fix (arguments, files, specs), 3 for device/transport failures, 4 for bugs.
int exit_code_for(ErrorCode code);

}  // namespace rig

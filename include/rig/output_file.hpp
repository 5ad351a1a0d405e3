// The one writer of every file a command produces (results JSON, model
// files, reports, CSV, traces, caches): what it does depends on what the
// path names, never replacing something that is not a file.
//
//  * "-" and "/dev/stdout": the bytes go to standard output (fd 1) as they
//    are; writes_to_stdout() tells a command to print its human report on
//    stderr instead.
//  * A new path, or a regular file: written to a temporary file in the same
//    directory and renamed over it, so a reader never sees half a file. An
//    existing file keeps its mode (and its owner where the process may set
//    it); a new one gets 0666 less the umask.
//  * A symlink: followed (a chain of them too, dangling ones included); its
//    final target is treated as above, and the link stays a link. A link in
//    a sticky, world-writable directory (/tmp) that belongs to neither the
//    caller, nor root, nor the directory's owner is refused with permission
//    (the kernel's fs.protected_symlinks rule, which rig's own resolution
//    would otherwise bypass).
//  * A FIFO or a character device (/dev/null, a terminal): opened and written
//    through, never replaced.
//  * Anything else (a directory, a socket, a block device): refused with
//    io, naming the path and what it is.
//
// check_output_path() applies the same rules without writing, so a command
// can refuse a bad path before it measures anything.
//
// Thread safety: concurrent writes to different paths are safe; temporary
// names are unique per process and call.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "rig/error.hpp"

namespace rig {

// "-" or "/dev/stdout".
bool writes_to_stdout(std::string_view path);

// Whether write_output_file(path, ...) can succeed as far as can be told
// before writing: io naming the path otherwise (a directory, a missing or
// unwritable directory, a socket, ...).
Result<void> check_output_path(const std::string& path);

Result<void> write_output_file(const std::string& path, std::span<const std::byte> bytes);
Result<void> write_output_file(const std::string& path, std::string_view text);

}  // namespace rig

// gnuplot as a child process: a script in on stdin, an SVG out on stdout,
// killed when it runs past a timeout. Private to the reporters.
#pragma once

#include <chrono>
#include <string>

#include "rig/error.hpp"

namespace rig::report {

// The program to run: `program` as given when it holds a '/', else searched
// on PATH. nullopt-like empty string when it cannot be found or executed.
std::string find_program(const std::string& program);

// Runs `program` (a path find_program returned) with `script` on its stdin.
// Returns its stdout when it exits 0 within `timeout`; otherwise an error
// naming what happened (timeout, exit status with the first line of its
// stderr, signal). Never raises SIGPIPE in the caller.
Result<std::string> run_gnuplot(const std::string& program, const std::string& script,
                                std::chrono::milliseconds timeout);

}  // namespace rig::report

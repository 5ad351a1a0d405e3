// Subcommands of the rig executable. Each add_*_command registers its options
// on the app and returns the function that runs it when it was chosen; that
// function returns the process exit status (0 ok, see exit_code_for).
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

#include "rig/error.hpp"

namespace rig::cli {

struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

// Prints "rig: error: <message>" to stderr and returns the exit status for it.
int report_error(const Error& error);

Command add_bench_command(CLI::App& app);
Command add_model_command(CLI::App& app);
Command add_serve_command(CLI::App& app);
Command add_loop_command(CLI::App& app);
Command add_ladder_command(CLI::App& app);
Command add_sweep_command(CLI::App& app);
Command add_ab_command(CLI::App& app);
Command add_predict_command(CLI::App& app);
Command add_run_command(CLI::App& app);
Command add_check_command(CLI::App& app);
Command add_compare_command(CLI::App& app);
Command add_report_command(CLI::App& app);  // and rig export: report_command.cpp
Command add_export_command(CLI::App& app);
Command add_soak_command(CLI::App& app);

}  // namespace rig::cli

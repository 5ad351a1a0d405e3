// Subcommands of the rig executable. Each add_*_command registers its options
// on the app and returns the function that runs it when it was chosen; that
// function returns the process exit status (0 ok, see exit_code_for).
#pragma once

#include <functional>
#include <optional>
#include <sstream>
#include <string>

#include <CLI/CLI.hpp>

#include "rig/error.hpp"

namespace rig::cli {

struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

// Prints "rig: error: <message>" to stderr and returns the exit status for it.
int report_error(const Error& error);

// After parsing, what CLI11 lets through: a model argument given as an
// empty string (rig bench '': an error, not the built-in demo model that
// leaving it out selects), a negative --seed (wrapped to 2^64 - 1).
std::optional<Error> argument_error(const CLI::App& app);

// A command-line error in the same form, exit 2: an unknown subcommand is
// named with the nearest one ("did you mean 'bench'?"). options.cpp.
int report_parse_error(const CLI::App& app, const CLI::ParseError& error, int argc,
                       const char* const* argv);

// Range checks worded as rig's other errors ("--repeats: must be in 1..1000,
// got 0"); CLI11's own say "Value 0 not in range 0.000000 to 1.797e308".
template <class T>
CLI::Validator in_range(T lo, T hi) {
  std::ostringstream text;
  text << lo << ".." << hi;
  return CLI::Validator(
      [lo, hi, range = text.str()](std::string& input) -> std::string {
        T value{};
        if (!CLI::detail::lexical_cast(input, value)) return "'" + input + "' is not a number";
        if (value < lo || value > hi) return "must be in " + range + ", got " + input;
        return {};
      },
      "in " + text.str());
}
inline CLI::Validator positive() {
  return CLI::Validator(
      [](std::string& input) -> std::string {
        double value = 0;
        if (!CLI::detail::lexical_cast(input, value)) return "'" + input + "' is not a number";
        if (!(value > 0)) return "must be positive, got " + input;
        return {};
      },
      "positive");
}

// --history PATH and --no-history, on the app itself so that every subcommand
// accepts them (the app falls through to them; call before adding
// subcommands). Read by finish() (options.hpp) and by rig history / rig diff.
struct HistoryOptions {
  std::string path;       // --history; empty: default_history_path() (RIG_HISTORY, XDG)
  bool disabled = false;  // --no-history
};
void add_history_options(CLI::App& app);
const HistoryOptions& history_options();
// The history path in effect: --history, else default_history_path(); "" when
// --no-history or no path can be found.
std::string history_path();

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
Command add_fit_command(CLI::App& app);
Command add_history_command(CLI::App& app);
Command add_diff_command(CLI::App& app);
Command add_place_command(CLI::App& app);
Command add_profile_command(CLI::App& app);
Command add_devices_command(CLI::App& app);  // the device registry's table

}  // namespace rig::cli

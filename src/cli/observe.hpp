// What every measuring subcommand attaches to the engine while it measures:
// --trace FILE (a Chrome trace-event timeline, rig/report/trace.hpp) and the
// live progress line on a terminal (rig/report/progress.hpp), combined with
// a FanOutObserver when both are on. Header-only, like point_options.hpp.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "cli/command.hpp"
#include "cli/options.hpp"
#include "rig/fanout_observer.hpp"
#include "rig/model.hpp"
#include "rig/report/progress.hpp"
#include "rig/report/trace.hpp"

namespace rig::cli {

struct ObserveOptions {
  std::string trace;            // --trace FILE
  size_t trace_limit = 100000;  // --trace-limit N events
};

inline void add_observe_options(CLI::App* sub, ObserveOptions& o) {
  sub->add_option("--trace", o.trace,
                  "write the per-inference timeline as Chrome trace-event JSON (Perfetto, "
                  "chrome://tracing)");
  sub->add_option("--trace-limit", o.trace_limit, "events the trace records at most")
      ->capture_default_str()
      ->check(in_range(size_t{1}, size_t{100000000}));
}

// Owns the observers of one command. Create it after the options are
// checked and before measuring; give get() to the scenario; call finish()
// when the scenario returns.
class RunObservers {
 public:
  // Fails (io) when the trace file cannot be created.
  static Result<std::unique_ptr<RunObservers>> make(const ObserveOptions& o, ProgressPlan plan,
                                                    bool quiet, const std::string& json_path) {
    if (!o.trace.empty())
      if (auto ok = check_writable("--trace", o.trace); !ok) return tl::unexpected(ok.error());
    auto r = std::unique_ptr<RunObservers>(new RunObservers());
    r->trace_path_ = o.trace;
    r->quiet_ = quiet;
    if (!o.trace.empty()) r->trace_.emplace(TraceSettings{o.trace_limit});
    if (ProgressLine::wanted(STDERR_FILENO, quiet, json_path == "-"))
      r->progress_ = std::make_unique<ProgressLine>(std::move(plan), STDERR_FILENO);
    r->fanout_.add(r->trace_ ? &*r->trace_ : nullptr);
    r->fanout_.add(r->progress_.get());
    return r;
  }

  EngineObserver* get() { return fanout_.get(); }

  // Erases the progress line and writes the trace (whether or not the
  // scenario succeeded: a failed run's timeline is worth having). Returns
  // `status`, or the trace write's error status.
  int finish(int status) {
    if (progress_) progress_->stop();
    if (!trace_) return status;
    if (auto ok = write_file_atomic(trace_path_, trace_->to_json()); !ok) {
      const int s = report_error(ok.error());
      return status == 0 ? s : status;
    }
    if (!quiet_) {
      std::fprintf(stderr, "rig: wrote %s (%llu inferences", trace_path_.c_str(),
                   static_cast<unsigned long long>(trace_->recorded_inferences()));
      if (trace_->stopped())
        std::fprintf(stderr,
                     "; stopped recording at the cap of --trace-limit events, %llu left out",
                     static_cast<unsigned long long>(trace_->dropped_inferences()));
      std::fprintf(stderr, ")\n");
    }
    return status;
  }

  // Stops the progress line before text goes to stdout/stderr.
  void stop_progress() {
    if (progress_) progress_->stop();
  }

 private:
  RunObservers() = default;
  std::string trace_path_;
  bool quiet_ = false;
  std::optional<TraceRecorder> trace_;
  std::unique_ptr<ProgressLine> progress_;
  FanOutObserver fanout_;
};

}  // namespace rig::cli

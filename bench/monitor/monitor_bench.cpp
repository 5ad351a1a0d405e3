// The monitor's cost on the cpu device: the steady rate with the monitor on
// (sampling every source at every window boundary, as rig bench does)
// against the same measurement with it off, in the same run. Pairs are
// interleaved (off, on, off, on, ...) so drift on a noisy host hits both;
// the figure is the median of the per-pair ratios on / off, with their
// spread. Target: median >= 0.99.
//
// usage: monitor_bench [MODEL] [--pairs N] [--seconds S] [--windows W]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/cpu_steady.hpp"
#include "rig/monitor/monitor.hpp"
#include "rig/stats.hpp"

int main(int argc, char** argv) {
  std::string model_path;
  int pairs = 9;
  double seconds = 3;
  uint32_t windows = 10;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--pairs" && i + 1 < argc)
      pairs = std::atoi(argv[++i]);
    else if (a == "--seconds" && i + 1 < argc)
      seconds = std::atof(argv[++i]);
    else if (a == "--windows" && i + 1 < argc)
      windows = static_cast<uint32_t>(std::atoi(argv[++i]));
    else
      model_path = a;
  }
  auto setup = rig::bench::cpu_steady_rig(model_path, seconds, windows);
  if (!setup) {
    std::fprintf(stderr, "%s\n", setup.error().to_string().c_str());
    return 1;
  }
  model_path = setup->model_path;
  auto& device = setup->device;
  auto& cold = setup->cold;
  rig::SteadySettings& s = setup->steady;

  std::printf("model %s, %d interleaved pairs of %.1f s, %u windows each\n", model_path.c_str(),
              pairs, seconds, windows);
  std::vector<double> ratios, off_rates, on_rates;
  size_t samples = 0, available = 0;
  for (int p = 0; p < pairs; ++p) {
    s.observer = nullptr;
    const auto off = rig::measure_steady(*device, cold.workspace, s);
    rig::MonitorSettings ms;
    rig::Monitor monitor(ms, *device);
    monitor.start();
    s.observer = &monitor;
    const auto on = rig::measure_steady(*device, cold.workspace, s);
    const rig::MonitorRecord record = monitor.finish();
    samples = record.samples.size();
    available = 0;
    for (const auto& src : record.sources)
      available += src.state == rig::SourceState::available ? 1 : 0;
    ratios.push_back(on.rate / off.rate);
    off_rates.push_back(off.rate);
    on_rates.push_back(on.rate);
    std::printf("  pair %d: off %.2f /s, on %.2f /s, ratio %.4f\n", p + 1, off.rate, on.rate,
                on.rate / off.rate);
  }
  // The sampling cost itself, apart from the machine's noise: 1000 samples of
  // every source, timed; the share of a run is cost x samples per run / run time.
  rig::MonitorSettings ms;
  rig::Monitor timed(ms, *device);
  timed.start();
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 1000; ++i) timed.sample("window");
  const double per_sample_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / 1000;
  std::printf("one sample of every source: %.1f us; %zu per %.1f s run = %.4f%% of the run\n",
              per_sample_s * 1e6, samples, seconds,
              per_sample_s * static_cast<double>(samples) / seconds * 100);
  const auto ratio = rig::summarize(ratios);
  std::printf("monitor: %zu sources available, %zu samples per run\n", available, samples);
  std::printf("median off %.2f /s, median on %.2f /s\n", *rig::summarize(off_rates).median,
              *rig::summarize(on_rates).median);
  std::printf("on / off: median %.4f (min %.4f, max %.4f); target >= 0.99: %s\n", *ratio.median,
              *ratio.min, *ratio.max, *ratio.median >= 0.99 ? "met" : "NOT met");
  return 0;
}

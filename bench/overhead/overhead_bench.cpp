// rig's overhead on the cpu device: the steady rate rig measures against a
// bare loop that calls OpenCV's forward() on the same model, in the same run.
//
// Both sides run one inference at a time on one cv::dnn::Net with the same
// thread count: the bare loop calls setInput + forward + copies the output;
// rig drives its cpu device (1 worker) at depth 1 through measure_steady.
// Pairs are interleaved A B A B so drift on a noisy host hits both; the
// figure is the median of the per-pair ratios. Target: rig / bare >= 0.98.
//
// Two more sides in each pair, interleaved with the others: rig with the
// live progress line attached (drawing to /dev/null from its thread), whose
// cost must not move rig / bare; and rig with --trace recording every
// inference, against rig alone (target: traced / rig >= 0.98).
//
// The cpu device runs runtime=opencv here; ONNX Runtime's row is
// ort_overhead_bench's (built where ONNX Runtime is).
//
// usage: overhead_bench [MODEL] [--pairs N] [--seconds S] [--threads N]
#include <fcntl.h>
#include <unistd.h>
#include <opencv2/core.hpp>
#include <opencv2/dnn.hpp>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <thread>

#include "common/cpu_steady.hpp"
#include "rig/report/progress.hpp"
#include "rig/report/trace.hpp"
#include "rig/stats.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double bare_rate(cv::dnn::Net& net, const cv::Mat& input, std::vector<float>& out, double seconds) {
  const auto start = Clock::now();
  const auto end = start + std::chrono::duration<double>(seconds);
  uint64_t n = 0;
  auto now = start;
  while (now < end) {
    net.setInput(input);
    cv::Mat y = net.forward();
    std::memcpy(out.data(), y.ptr<float>(),
                std::min(out.size() * sizeof(float), y.total() * y.elemSize()));
    ++n;
    now = Clock::now();
  }
  return static_cast<double>(n) / std::chrono::duration<double>(now - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  std::string model_path;
  int pairs = 5;
  double seconds = 4;
  int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--pairs" && i + 1 < argc)
      pairs = std::atoi(argv[++i]);
    else if (a == "--threads" && i + 1 < argc)
      threads = std::max(1, std::atoi(argv[++i]));
    else if (a == "--seconds" && i + 1 < argc)
      seconds = std::atof(argv[++i]);
    else
      model_path = a;
  }
  auto setup = rig::bench::cpu_steady_rig(
      model_path, seconds, 0,
      "cpu:runtime=opencv,threads=" + std::to_string(threads) + ",workers=1,depth=1");
  if (!setup) {
    std::fprintf(stderr, "%s\n", setup.error().to_string().c_str());
    return 1;
  }
  model_path = setup->model_path;
  auto& device = setup->device;
  auto& cold = setup->cold;
  rig::SteadySettings& s = setup->steady;
  auto bytes = rig::read_file(model_path);
  auto info = bytes ? rig::inspect_onnx(*bytes, model_path) : tl::unexpected(bytes.error());
  if (!info) {
    std::fprintf(stderr, "%s\n", info.error().to_string().c_str());
    return 1;
  }
  const auto& in = info->inputs.at(0);
  std::vector<int> shape(in.shape.begin(), in.shape.end());

  // Reference: a bare OpenCV net.
  cv::dnn::Net net = cv::dnn::readNetFromONNX(model_path);
  cv::Mat input(static_cast<int>(shape.size()), shape.data(), CV_32F);
  cv::randu(input, 0.0, 1.0);
  std::vector<float> out(info->output_bytes() / sizeof(float));
  net.setInput(input);
  net.forward();  // warm

  std::printf("model %s, %d interleaved pairs of %.1f s, OpenCV threads %d\n", model_path.c_str(),
              pairs, seconds, cv::getNumThreads());
  std::vector<double> ratios, bare_rates, rig_rates, progress_ratios, trace_ratios;
  const int devnull = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  for (int p = 0; p < pairs; ++p) {
    const double bare = bare_rate(net, input, out, seconds);
    s.observer = nullptr;
    const auto r = rig::measure_steady(*device, cold.workspace, s);
    double with_progress = 0;
    {
      rig::ProgressLine progress({"overhead_bench", 1, s.min_duration}, devnull);
      s.observer = &progress;
      with_progress = rig::measure_steady(*device, cold.workspace, s).rate;
    }
    rig::TraceRecorder trace;
    s.observer = &trace;
    const double with_trace = rig::measure_steady(*device, cold.workspace, s).rate;
    ratios.push_back(r.rate / bare);
    bare_rates.push_back(bare);
    rig_rates.push_back(r.rate);
    progress_ratios.push_back(with_progress / bare);
    trace_ratios.push_back(with_trace / r.rate);
    std::printf(
        "  pair %d: bare %.2f /s, rig %.2f /s (ratio %.4f), rig+progress %.2f /s (ratio %.4f), "
        "rig+trace %.2f /s (traced / rig %.4f, %zu events)\n",
        p + 1, bare, r.rate, r.rate / bare, with_progress, with_progress / bare, with_trace,
        with_trace / r.rate, trace.recorded_events());
  }
  if (devnull >= 0) ::close(devnull);
  const auto ratio = rig::summarize(ratios);
  std::printf("median bare %.2f /s, median rig %.2f /s\n", *rig::summarize(bare_rates).median,
              *rig::summarize(rig_rates).median);
  std::printf("rig / bare forward(): median %.4f (min %.4f, max %.4f); target >= 0.98: %s\n",
              *ratio.median, *ratio.min, *ratio.max, *ratio.median >= 0.98 ? "met" : "NOT met");
  const auto pr = rig::summarize(progress_ratios);
  std::printf("rig with the progress line / bare forward(): median %.4f (min %.4f, max %.4f)\n",
              *pr.median, *pr.min, *pr.max);
  const auto tr = rig::summarize(trace_ratios);
  std::printf("rig with --trace / rig: median %.4f (min %.4f, max %.4f); target >= 0.98: %s\n",
              *tr.median, *tr.min, *tr.max, *tr.median >= 0.98 ? "met" : "NOT met");
  return 0;
}

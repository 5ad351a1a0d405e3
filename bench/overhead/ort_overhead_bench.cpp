// rig's overhead on the cpu device's ONNX Runtime runtime, and the two
// runtimes side by side. Built where ONNX Runtime is (RIG_HAVE_ONNXRUNTIME).
//
// Default: rig's cpu device with runtime=ort (1 session, depth 1, `threads`
// intra-op threads) driven by measure_steady, against a bare loop of
// Ort::Session::Run on the same model file with the same session options
// (intra-op threads, 1 inter-op thread, all optimisations, sequential),
// inputs and outputs bound as tensors over preallocated buffers as rig binds
// them. Pairs are interleaved A B A B so drift on a noisy host hits both;
// the figure is the median of the per-pair ratios. Target: rig / bare >= 0.98.
//
// --versus-opencv: rig's cpu device with runtime=ort against the same device
// with runtime=opencv (each 1 worker, depth 1, `threads`), interleaved pairs;
// prints each side's median rate and the median of the per-pair ratios
// ort / opencv of the rates (how many times faster ONNX Runtime is).
//
// usage: ort_overhead_bench [MODEL] [--pairs N] [--seconds S] [--threads N] [--versus-opencv]
#include <onnxruntime_cxx_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "common/cpu_steady.hpp"
#include "rig/stats.hpp"

namespace {

using Clock = std::chrono::steady_clock;

// The bare reference: one session, tensors over preallocated buffers, Run in a loop.
struct BareOrt {
  // Debian 13's ONNX Runtime re-registers ONNX's schemas over the shared
  // libonnx, and ONNX reports each on std::cerr (see ort_runtime.cpp).
  static Ort::Env make_env() {
    std::streambuf* saved = std::cerr.rdbuf(nullptr);
    Ort::Env env(ORT_LOGGING_LEVEL_ERROR, "ort_overhead_bench");
    std::cerr.rdbuf(saved);
    return env;
  }
  Ort::Env env = make_env();
  std::unique_ptr<Ort::Session> session;
  std::vector<std::vector<float>> in_data, out_data;
  std::vector<Ort::Value> inputs, outputs;
  std::vector<std::string> in_names, out_names;
  std::vector<const char*> in_ptrs, out_ptrs;

  BareOrt(const std::string& path, const rig::ModelInfo& info, int threads) {
    Ort::SessionOptions options;
    options.SetIntraOpNumThreads(threads);
    options.SetInterOpNumThreads(1);
    options.SetGraphOptimizationLevel(GraphOptimizationLevel::ORT_ENABLE_ALL);
    options.SetExecutionMode(ExecutionMode::ORT_SEQUENTIAL);
    session = std::make_unique<Ort::Session>(env, path.c_str(), options);
    const auto memory = Ort::MemoryInfo::CreateCpu(OrtDeviceAllocator, OrtMemTypeDefault);
    auto wrap = [&](const rig::TensorInfo& t, std::vector<std::vector<float>>& data,
                    std::vector<Ort::Value>& values, std::vector<std::string>& names) {
      data.emplace_back(t.bytes / sizeof(float), 0.5f);
      values.push_back(Ort::Value::CreateTensor<float>(
          memory, data.back().data(), data.back().size(), t.shape.data(), t.shape.size()));
      names.push_back(t.name);
    };
    for (const auto& t : info.inputs) wrap(t, in_data, inputs, in_names);
    for (const auto& t : info.outputs) wrap(t, out_data, outputs, out_names);
    for (const auto& n : in_names) in_ptrs.push_back(n.c_str());
    for (const auto& n : out_names) out_ptrs.push_back(n.c_str());
    run();  // warm
  }
  void run() {
    session->Run(Ort::RunOptions{nullptr}, in_ptrs.data(), inputs.data(), inputs.size(),
                 out_ptrs.data(), outputs.data(), outputs.size());
  }
  double rate(double seconds) {
    const auto start = Clock::now();
    const auto end = start + std::chrono::duration<double>(seconds);
    uint64_t n = 0;
    auto now = start;
    while (now < end) {
      run();
      ++n;
      now = Clock::now();
    }
    return static_cast<double>(n) / std::chrono::duration<double>(now - start).count();
  }
};

std::string spec(const char* runtime, int threads) {
  return std::string("cpu:runtime=") + runtime + ",threads=" + std::to_string(threads) +
         ",workers=1,depth=1";
}

void print_ratio(const char* what, const std::vector<double>& ratios, double target) {
  const auto r = rig::summarize(ratios);
  std::printf("%s: median %.4f (min %.4f, max %.4f)", what, *r.median, *r.min, *r.max);
  if (target > 0)
    std::printf("; target >= %.2f: %s", target, *r.median >= target ? "met" : "NOT met");
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  std::string model_path;
  int pairs = 5;
  double seconds = 4;
  int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  bool versus_opencv = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--pairs" && i + 1 < argc)
      pairs = std::atoi(argv[++i]);
    else if (a == "--seconds" && i + 1 < argc)
      seconds = std::atof(argv[++i]);
    else if (a == "--threads" && i + 1 < argc)
      threads = std::max(1, std::atoi(argv[++i]));
    else if (a == "--versus-opencv")
      versus_opencv = true;
    else
      model_path = a;
  }
  auto ort = rig::bench::cpu_steady_rig(model_path, seconds, 0, spec("ort", threads));
  if (!ort) {
    std::fprintf(stderr, "%s\n", ort.error().to_string().c_str());
    return 1;
  }
  model_path = ort->model_path;
  std::vector<double> ratios, a_rates, b_rates;
  if (versus_opencv) {
    auto cv = rig::bench::cpu_steady_rig(model_path, seconds, 0, spec("opencv", threads));
    if (!cv) {
      std::fprintf(stderr, "%s\n", cv.error().to_string().c_str());
      return 1;
    }
    std::printf("model %s, %d interleaved pairs of %.1f s, threads %d: rig ort vs rig opencv\n",
                model_path.c_str(), pairs, seconds, threads);
    for (int p = 0; p < pairs; ++p) {
      const double o = rig::measure_steady(*cv->device, cv->cold.workspace, cv->steady).rate;
      const double r = rig::measure_steady(*ort->device, ort->cold.workspace, ort->steady).rate;
      a_rates.push_back(o);
      b_rates.push_back(r);
      ratios.push_back(r / o);
      std::printf("  pair %d: opencv %.2f /s, ort %.2f /s (ort / opencv %.3f)\n", p + 1, o, r,
                  r / o);
    }
    const double o = *rig::summarize(a_rates).median, r = *rig::summarize(b_rates).median;
    std::printf("median opencv %.2f /s (%.2f ms), median ort %.2f /s (%.2f ms)\n", o, 1e3 / o, r,
                1e3 / r);
    print_ratio("rate ort / opencv", ratios, 0);
    return 0;
  }
  auto bytes = rig::read_file(model_path);
  auto info = bytes ? rig::inspect_onnx(*bytes, model_path) : tl::unexpected(bytes.error());
  if (!info) {
    std::fprintf(stderr, "%s\n", info.error().to_string().c_str());
    return 1;
  }
  BareOrt bare(model_path, *info, threads);
  std::printf("ONNX Runtime %s: model %s, %d interleaved pairs of %.1f s, intra-op threads %d\n",
              Ort::GetVersionString().c_str(), model_path.c_str(), pairs, seconds, threads);
  for (int p = 0; p < pairs; ++p) {
    const double b = bare.rate(seconds);
    const double r = rig::measure_steady(*ort->device, ort->cold.workspace, ort->steady).rate;
    a_rates.push_back(b);
    b_rates.push_back(r);
    ratios.push_back(r / b);
    std::printf("  pair %d: bare Session::Run %.2f /s, rig ort %.2f /s (ratio %.4f)\n", p + 1, b, r,
                r / b);
  }
  std::printf("median bare %.2f /s, median rig %.2f /s\n", *rig::summarize(a_rates).median,
              *rig::summarize(b_rates).median);
  print_ratio("rig ort / bare Session::Run", ratios, 0.98);
  return 0;
}

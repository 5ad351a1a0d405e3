// The cpu device's spec parameters, validated into a CpuConfig. The one
// place that knows which parameter belongs to which runtime.
#include <algorithm>
#include <thread>

#include "devices/cpu/cpu_runtime.hpp"
#include "rig/units.hpp"

namespace rig::cpu {
namespace {

constexpr uint64_t kMaxThreads = 1024;
constexpr uint64_t kMaxWorkers = 64;
constexpr uint64_t kMaxDepth = 4096;

constexpr const char* kCommon[] = {"runtime", "threads", "workers", "depth"};
constexpr const char* kOrtOnly[] = {"inter_threads", "optimization", "execution"};

template <class List>
bool listed(const List& list, const std::string& key) {
  return std::find(std::begin(list), std::end(list), key) != std::end(list);
}

}  // namespace

std::string_view to_string(RuntimeKind kind) {
  return kind == RuntimeKind::ort ? "ort" : "opencv";
}

bool ort_built() {
#ifdef RIG_WITH_ONNXRUNTIME
  return true;
#else
  return false;
#endif
}

Result<CpuConfig> parse_cpu_config(const std::map<std::string, std::string>& params) {
  CpuConfig config;
  config.runtime = ort_built() ? RuntimeKind::ort : RuntimeKind::opencv;
  if (auto it = params.find("runtime"); it != params.end()) {
    if (it->second == "opencv") {
      config.runtime = RuntimeKind::opencv;
    } else if (it->second == "ort") {
      if (!ort_built())
        return fail(ErrorCode::unsupported,
                    "cpu:runtime=ort is not built: ONNX Runtime was not found at configure time; "
                    "on Debian 13 install libonnxruntime-dev and configure again "
                    "(runtime=opencv is built)");
      config.runtime = RuntimeKind::ort;
    } else {
      return fail(ErrorCode::invalid_argument,
                  "cpu parameter runtime='" + it->second + "' must be ort or opencv");
    }
  }
  for (const auto& [key, value] : params) {
    if (listed(kCommon, key)) continue;
    if (listed(kOrtOnly, key)) {
      if (config.runtime == RuntimeKind::ort) continue;
      return fail(ErrorCode::invalid_argument,
                  "cpu parameter '" + key +
                      "' means nothing for runtime=opencv (it is ONNX Runtime's: runtime=ort)");
    }
    return fail(ErrorCode::invalid_argument,
                "unknown cpu parameter '" + key +
                    "' (known: runtime, threads, workers, depth; with runtime=ort also "
                    "inter_threads, optimization, execution)");
  }
  auto count = [&](const std::string& key, uint64_t fallback, uint64_t max) -> Result<uint32_t> {
    auto it = params.find(key);
    if (it == params.end()) return static_cast<uint32_t>(fallback);
    auto value = parse_count(it->second);
    if (!value || *value < 1 || *value > max)
      return fail(ErrorCode::invalid_argument, "cpu parameter " + key + "='" + it->second +
                                                   "' must be an integer from 1 to " +
                                                   std::to_string(max));
    return static_cast<uint32_t>(*value);
  };
  auto choice = [&](const std::string& key, const std::vector<std::string>& allowed,
                    std::string& into) -> Result<void> {
    auto it = params.find(key);
    if (it == params.end()) return {};
    if (std::find(allowed.begin(), allowed.end(), it->second) == allowed.end()) {
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      return fail(ErrorCode::invalid_argument,
                  "cpu parameter " + key + "='" + it->second + "' must be one of " + list);
    }
    into = it->second;
    return {};
  };
  auto threads = count("threads", std::max(1u, std::thread::hardware_concurrency()), kMaxThreads);
  if (!threads) return tl::unexpected(threads.error());
  auto workers = count("workers", 1, kMaxWorkers);
  if (!workers) return tl::unexpected(workers.error());
  auto depth = count("depth", 2 * uint64_t{*workers}, kMaxDepth);
  if (!depth) return tl::unexpected(depth.error());
  auto inter = count("inter_threads", 1, kMaxThreads);
  if (!inter) return tl::unexpected(inter.error());
  if (auto ok =
          choice("optimization", {"disable", "basic", "extended", "all"}, config.optimization);
      !ok)
    return tl::unexpected(ok.error());
  if (auto ok = choice("execution", {"sequential", "parallel"}, config.execution); !ok)
    return tl::unexpected(ok.error());
  config.threads = *threads;
  config.workers = *workers;
  config.depth = *depth;
  config.inter_threads = *inter;
  return config;
}

}  // namespace rig::cpu

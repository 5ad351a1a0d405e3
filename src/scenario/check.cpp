// rig check: the scoring-loop contract (rig/scenario/check.hpp).
#include "rig/scenario/check.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>

#include "rig/scenario/run.hpp"
#include "rig/tensor_io.hpp"

namespace rig {
namespace {

// A buffer of `size` bytes between guards of `guard` bytes each side, filled
// with a position-dependent pattern nothing plausible writes.
class GuardedBuffer {
 public:
  GuardedBuffer(size_t size, size_t guard) : size_(size), guard_(guard), bytes_(size + 2 * guard) {
    for (size_t i = 0; i < guard_; ++i) {
      bytes_[i] = pattern(i);
      bytes_[guard_ + size_ + i] = pattern(guard_ + i);
    }
  }
  std::span<std::byte> data() { return {bytes_.data() + guard_, size_}; }
  // Guard bytes that no longer hold their pattern.
  uint64_t damaged() const {
    uint64_t n = 0;
    for (size_t i = 0; i < guard_; ++i) {
      n += bytes_[i] != pattern(i);
      n += bytes_[guard_ + size_ + i] != pattern(guard_ + i);
    }
    return n;
  }

 private:
  static std::byte pattern(size_t i) { return static_cast<std::byte>(0xA5 ^ (i * 37)); }
  size_t size_, guard_;
  std::vector<std::byte> bytes_;
};

// Every buffer handed to the device during the check, and the guard audit.
class Guards {
 public:
  explicit Guards(size_t guard) : guard_(guard) {}
  GuardedBuffer& add(size_t size, std::string role) {
    buffers_.push_back({std::make_unique<GuardedBuffer>(size, guard_), std::move(role)});
    return *buffers_.back().buffer;
  }
  // After each device call: the first damage seen is kept with the call.
  void audit(const std::string& call) {
    ++calls_;
    if (damage_) return;
    for (const auto& b : buffers_)
      if (uint64_t n = b.buffer->damaged(); n > 0) {
        damage_ = std::to_string(n) + " guard bytes changed around " + b.role + " after " + call;
        return;
      }
  }
  uint64_t calls() const { return calls_; }
  size_t buffers() const { return buffers_.size(); }
  const std::optional<std::string>& damage() const { return damage_; }

 private:
  struct Entry {
    std::unique_ptr<GuardedBuffer> buffer;
    std::string role;
  };
  size_t guard_;
  std::vector<Entry> buffers_;
  uint64_t calls_ = 0;
  std::optional<std::string> damage_;
};

struct GuardedRun {
  std::vector<std::span<std::byte>> outputs;
};

// Binds guarded copies of `inputs` and guarded outputs, runs once.
Result<GuardedRun> guarded_infer(Device& device, Guards& guards,
                                 const std::vector<std::vector<std::byte>>& inputs,
                                 const std::string& what) {
  const ModelInfo& model = device.model_info();
  Bindings b;
  for (size_t i = 0; i < inputs.size(); ++i) {
    GuardedBuffer& g =
        guards.add(inputs[i].size(), "input '" + model.inputs[i].name + "' of " + what);
    if (!inputs[i].empty()) std::memcpy(g.data().data(), inputs[i].data(), inputs[i].size());
    b.inputs.emplace_back(g.data().data(), g.data().size());
  }
  GuardedRun run;
  for (const auto& t : model.outputs) {
    GuardedBuffer& g = guards.add(t.bytes, "output '" + t.name + "' of " + what);
    b.outputs.push_back(g.data());
    run.outputs.push_back(g.data());
  }
  auto binding = device.bind(b);
  guards.audit("bind (" + what + ")");
  if (!binding) return tl::unexpected(binding.error());
  auto ran = device.run(*binding);
  guards.audit("run (" + what + ")");
  if (!ran) return tl::unexpected(ran.error());
  return run;
}

uint64_t total_differing(const GuardedRun& a, const GuardedRun& b) {
  uint64_t n = 0;
  for (size_t i = 0; i < a.outputs.size(); ++i) n += bytes_differing(a.outputs[i], b.outputs[i]);
  return n;
}

double max_difference(const ModelInfo& model, const GuardedRun& a, const GuardedRun& b) {
  double worst = 0;
  for (size_t i = 0; i < a.outputs.size(); ++i) {
    const ElementType type = model.outputs[i].type;
    const size_t item = element_size(type);
    for (size_t e = 0; e + item <= a.outputs[i].size(); e += item) {
      const double d = std::fabs(element_value(type, a.outputs[i].data() + e) -
                                 element_value(type, b.outputs[i].data() + e));
      if (std::isnan(d)) return std::numeric_limits<double>::infinity();
      worst = std::max(worst, d);
    }
  }
  return worst;
}

// A bind with one buffer `delta` bytes off its size must be refused with
// invalid_argument. `output` picks the buffer: input 0 or output 0.
CheckLine wrong_size(Device& device, Guards& guards, const std::vector<std::vector<std::byte>>& in,
                     bool output, long delta, const std::string& name) {
  const ModelInfo& model = device.model_info();
  CheckLine line;
  line.name = name;
  const TensorInfo& t = output ? model.outputs.at(0) : model.inputs.at(0);
  const size_t size = static_cast<size_t>(static_cast<long>(t.bytes) + delta);
  const std::string role = std::string(output ? "output" : "input") + " '" + t.name + "'";
  Bindings b;
  for (size_t i = 0; i < in.size(); ++i) {
    const size_t n = (!output && i == 0) ? size : in[i].size();
    GuardedBuffer& g = guards.add(n, "input '" + model.inputs[i].name + "' of " + name);
    if (const size_t copy = std::min(n, in[i].size()); copy > 0)
      std::memcpy(g.data().data(), in[i].data(), copy);
    b.inputs.emplace_back(g.data().data(), g.data().size());
  }
  for (size_t i = 0; i < model.outputs.size(); ++i) {
    const size_t n = (output && i == 0) ? size : model.outputs[i].bytes;
    b.outputs.push_back(guards.add(n, "output '" + model.outputs[i].name + "' of " + name).data());
  }
  auto binding = device.bind(b);
  guards.audit("bind (" + name + ")");
  const std::string sizes =
      std::to_string(size) + " bytes for " + role + " (expects " + std::to_string(t.bytes) + ")";
  if (binding) {
    line.evidence = "bind accepted " + sizes;
    return line;
  }
  line.refusal = binding.error();
  line.passed = binding.error().code == ErrorCode::invalid_argument;
  line.evidence = std::string(line.passed ? "refused " : "refused with the wrong status: ") +
                  sizes + ": " + binding.error().to_string();
  return line;
}

}  // namespace

Result<void> validate(const CheckSettings& s) {
  if (s.guard_bytes == 0 || s.guard_bytes > (1u << 20))
    return fail(ErrorCode::invalid_argument, "guard_bytes must be in 1..1048576");
  return {};
}

Result<CheckResult> run_check(Device& device, const ModelSource& source, const CheckSettings& s) {
  if (auto ok = validate(s); !ok) return tl::unexpected(ok.error());
  CheckResult r;
  r.settings = s;
  r.device = device.info();
  r.virtual_clock = device.clock().is_virtual();
  r.environment = collect_environment();
  // A model the device refuses is named, as cold_start names it.
  if (auto loaded = device.load(source); !loaded) {
    Error e = loaded.error();
    e.message = "model '" + (source.path.empty() ? source.name : source.path) + "': " + e.message;
    return tl::unexpected(e);
  }
  r.model = device.model_info();
  const ModelInfo& model = r.model;
  if (model.inputs.empty() || model.outputs.empty())
    return fail(ErrorCode::unsupported,
                "rig check needs a model with at least one input and one output; '" + model.name +
                    "' has " + std::to_string(model.inputs.size()) + " and " +
                    std::to_string(model.outputs.size()));

  Guards guards(s.guard_bytes);
  auto input_a = prepare_inputs(model, {}, s.seed, nullptr);
  auto input_b = prepare_inputs(model, {}, s.seed + 1000, nullptr);
  if (!input_a) return tl::unexpected(input_a.error());
  if (!input_b) return tl::unexpected(input_b.error());
  auto a1 = guarded_infer(device, guards, *input_a, "input A");
  if (!a1) return tl::unexpected(a1.error());
  auto b1 = guarded_infer(device, guards, *input_b, "input B");
  if (!b1) return tl::unexpected(b1.error());
  auto a2 = guarded_infer(device, guards, *input_a, "input A again");
  if (!a2) return tl::unexpected(a2.error());
  const uint64_t total = model.output_bytes();

  CheckLine different;
  different.name = "different inputs give different outputs";
  different.differing_bytes = total_differing(*a1, *b1);
  different.total_bytes = total;
  different.passed = *different.differing_bytes > 0;
  different.evidence = std::to_string(*different.differing_bytes) + " of " + std::to_string(total) +
                       " output bytes differ between inputs A and B";
  r.checks.push_back(std::move(different));

  CheckLine same;
  same.name = "the same input twice gives bit-identical outputs";
  same.differing_bytes = total_differing(*a1, *a2);
  same.total_bytes = total;
  same.max_difference = max_difference(model, *a1, *a2);
  if (*same.differing_bytes == 0) {
    same.passed = true;
    same.evidence = "0 of " + std::to_string(total) + " output bytes differ between two runs";
  } else {
    same.passed = s.allow_nondeterministic;
    char diff[64];
    std::snprintf(diff, sizeof diff, "%.6g", *same.max_difference);
    same.evidence = std::to_string(*same.differing_bytes) + " of " + std::to_string(total) +
                    " output bytes differ between two runs, max difference " + diff +
                    (s.allow_nondeterministic ? " (nondeterminism allowed)" : "");
  }
  r.checks.push_back(std::move(same));

  r.checks.push_back(
      wrong_size(device, guards, *input_a, false, -1, "an undersized input buffer is refused"));
  r.checks.push_back(
      wrong_size(device, guards, *input_a, false, +1, "an oversized input buffer is refused"));
  r.checks.push_back(
      wrong_size(device, guards, *input_a, true, -1, "an undersized output buffer is refused"));

  CheckLine intact;
  intact.name = "nothing is written outside any buffer";
  intact.passed = !guards.damage();
  intact.evidence = guards.damage()
                        ? *guards.damage()
                        : std::to_string(s.guard_bytes) + " guard bytes each side of " +
                              std::to_string(guards.buffers()) + " buffers intact after each of " +
                              std::to_string(guards.calls()) + " device calls";
  r.checks.push_back(std::move(intact));
  r.guarded_calls = guards.calls();

  r.passed = true;
  for (const auto& c : r.checks) r.passed = r.passed && c.passed;
  return r;
}

}  // namespace rig

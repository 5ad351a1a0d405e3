// A scripted Device for server tests, the wire benchmark and the dispatch
// fuzzer. Models are text, not ONNX: "in=64,out=16" (u8 tensors of those
// sizes; in= and out= may repeat). A run writes out[k][i] = in0[i % n] ^ (0x5a
// + k), so the tests can check that the right bytes came back.
//
// Time is virtual: each completion advances the clock by `compute`, which is
// also the compute time reported. The loop (run_for_duration) completes
// floor(duration / compute) frames unless the control scripts a result.
// With real_clock, the clock is the host's steady clock instead: a held
// wait_next gives up after its timeout (a timeout error), and a loop takes
// its duration in real time (the counts are still computed, not measured).
// Thread safety: driven by one thread, like every Device; FakeControl may be
// changed by the test from another thread, which may also wait on its cv for
// the counters.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "rig/device.hpp"

namespace rig::testing {

struct FakeControl {
  std::mutex mu;
  std::condition_variable cv;
  bool hold = false;                       // wait_next blocks while set
  std::optional<DurationRun> loop_result;  // scripted run_for_duration result
  std::optional<Error> loop_error;
  std::optional<Error> run_error;  // completions fail with this
  // The next wait_next fails with this (once), handing nothing back: the
  // requests stay in flight, as on a device that lost track of them.
  std::optional<Error> wait_error;
  std::optional<InferenceTimings> timings;  // reported instead of the compute time
  bool throw_on_submit = false;  // submit() breaks the Device contract: throws std::bad_alloc
  int loads = 0, runs = 0, loops = 0;
  int submits = 0;  // requests accepted by submit()

  void set_hold(bool on) {
    {
      std::lock_guard lock(mu);
      hold = on;
    }
    cv.notify_all();
  }
};

struct FakeOptions {
  uint32_t depth = 4;
  Nanos compute{std::chrono::milliseconds(1)};
  bool touch_data = true;   // false: outputs are left as they are (benchmarks)
  bool real_clock = false;  // see the top of this file
  bool loop_whole = false;  // DeviceInfo::loop_whole: the server must not split its loops
  std::map<std::string, double> sensors;
  // The test's script and counters; null: nothing is scripted or counted,
  // and the device takes no lock (the wire benchmark: what it costs the
  // server is then little more than its queue).
  std::shared_ptr<FakeControl> control = std::make_shared<FakeControl>();
};

inline Result<ModelInfo> parse_fake_model(std::string_view text, std::string name) {
  ModelInfo info;
  info.name = std::move(name);
  while (!text.empty()) {
    const size_t comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos)
      return fail(ErrorCode::invalid_argument, "fake model: expected in=N or out=N");
    const std::string key(item.substr(0, eq));
    size_t n = 0;
    try {
      n = std::stoull(std::string(item.substr(eq + 1)));
    } catch (...) {
      return fail(ErrorCode::invalid_argument, "fake model: bad size");
    }
    auto& list = key == "in" ? info.inputs : info.outputs;
    if (key != "in" && key != "out")
      return fail(ErrorCode::invalid_argument, "fake model: unknown key " + key);
    list.push_back(
        {key + std::to_string(list.size()), ElementType::u8, {static_cast<int64_t>(n)}, n});
  }
  if (info.inputs.empty()) return fail(ErrorCode::invalid_argument, "fake model: no input");
  return info;
}

class FakeDevice final : public Device {
 public:
  explicit FakeDevice(FakeOptions options = {}) : o_(std::move(options)) {}

  DeviceInfo info() const override {
    DeviceInfo i;
    i.spec = "fake:depth=" + std::to_string(o_.depth);
    i.kind = "fake";
    i.description = "scripted test device";
    i.queue_depth = o_.depth;
    i.in_process = true;
    i.properties["memory_bytes"] = "1048576";
    i.memory_bytes = 1048576;
    i.loop_whole = o_.loop_whole;
    return i;
  }
  Clock& clock() override {
    if (o_.real_clock) return steady_clock();
    return clock_;
  }

  Result<LoadTimings> load(const ModelSource& source) override {
    const auto started = std::chrono::steady_clock::now();
    bindings_.clear();
    queue_.clear();
    loaded_ = false;
    std::string text(reinterpret_cast<const char*>(source.bytes.data()), source.bytes.size());
    if (source.bytes.empty()) {
      FILE* f = std::fopen(source.path.c_str(), "rb");
      if (!f) return fail(ErrorCode::not_found, "cannot open " + source.path);
      char buf[256];
      const size_t n = std::fread(buf, 1, sizeof buf, f);
      std::fclose(f);
      text.assign(buf, n);
      while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    }
    auto info = parse_fake_model(text, source.name.empty() ? "fake" : source.name);
    if (!info) return tl::unexpected(info.error());
    model_ = *info;
    loaded_ = true;
    if (o_.control) {
      std::lock_guard lock(o_.control->mu);
      ++o_.control->loads;
    }
    LoadTimings t;
    // On the real clock a figure must fit in the time the load took (the
    // client refuses one that does not).
    t.compile = o_.real_clock
                    ? std::chrono::duration_cast<Nanos>(std::chrono::steady_clock::now() - started)
                    : std::chrono::milliseconds(5);
    return t;
  }
  const ModelInfo& model_info() const override { return model_; }

  Result<BindingId> bind(const Bindings& b) override {
    if (!loaded_) return fail(ErrorCode::invalid_argument, "bind: no model");
    if (b.inputs.size() != model_.inputs.size() || b.outputs.size() != model_.outputs.size())
      return fail(ErrorCode::invalid_argument, "bind: wrong buffer count");
    for (size_t i = 0; i < b.inputs.size(); ++i)
      if (b.inputs[i].size() != model_.inputs[i].bytes)
        return fail(ErrorCode::invalid_argument, "bind: wrong input size");
    bindings_.push_back(b);
    return static_cast<BindingId>(bindings_.size() - 1);
  }

  Result<InferenceTimings> run(BindingId binding) override {
    if (binding >= bindings_.size()) return fail(ErrorCode::invalid_argument, "unknown binding");
    compute(binding);
    return timings();
  }

  Result<void> submit(BindingId binding, uint64_t tag) override {
    if (binding >= bindings_.size()) return fail(ErrorCode::invalid_argument, "unknown binding");
    if (queue_.size() >= o_.depth) return fail(ErrorCode::queue_full, "fake queue full");
    // The Device contract: a binding has at most one request in flight.
    for (const auto& queued : queue_)
      if (queued.first == binding)
        return fail(ErrorCode::invalid_argument, "fake: binding " + std::to_string(binding) +
                                                     " already has a request in flight");
    if (o_.control) {
      {
        std::lock_guard lock(o_.control->mu);
        if (o_.control->throw_on_submit) throw std::bad_alloc();
        ++o_.control->submits;
      }
      o_.control->cv.notify_all();
    }
    queue_.push_back({binding, tag});
    return {};
  }

  Result<Completion> wait_next(Nanos timeout) override {
    if (queue_.empty()) return fail(ErrorCode::invalid_argument, "nothing in flight");
    std::optional<Error> error;
    if (o_.control) {
      std::unique_lock lock(o_.control->mu);
      const auto go = [&] { return !o_.control->hold || o_.control->wait_error; };
      if (o_.real_clock) {
        if (!o_.control->cv.wait_for(lock, timeout, go))
          return fail(ErrorCode::timeout, "fake: held");
      } else {
        o_.control->cv.wait(lock, go);
      }
      if (auto e = std::exchange(o_.control->wait_error, std::nullopt)) return tl::unexpected(*e);
      ++o_.control->runs;
      error = o_.control->run_error;
    }
    auto [binding, tag] = queue_.front();
    queue_.pop_front();
    compute(binding);
    Completion c;
    c.tag = tag;
    c.binding = binding;
    c.error = error;
    c.timings = timings();
    c.completed_at = clock().now();
    return c;
  }

  uint32_t in_flight() const override { return static_cast<uint32_t>(queue_.size()); }

  Result<DurationRun> run_for_duration(BindingId binding, Nanos duration, Nanos sleep) override {
    if (binding >= bindings_.size()) return fail(ErrorCode::invalid_argument, "unknown binding");
    if (!queue_.empty()) return fail(ErrorCode::invalid_argument, "requests in flight");
    std::optional<DurationRun> scripted;
    if (!o_.control) {
      if (o_.real_clock) std::this_thread::sleep_for(duration);
    } else {
      std::unique_lock lock(o_.control->mu);
      ++o_.control->loops;
      o_.control->cv.notify_all();
      if (o_.control->loop_error) return tl::unexpected(*o_.control->loop_error);
      scripted = o_.control->loop_result;
      // Takes its duration in real time, like a device looping a model.
      if (o_.real_clock) o_.control->cv.wait_for(lock, duration, [] { return false; });
    }
    DurationRun r;
    if (scripted) {
      r = *scripted;
    } else {
      const Nanos period = o_.compute + sleep;
      const uint64_t completed =
          duration < o_.compute ? 0 : static_cast<uint64_t>((duration - o_.compute) / period) + 1;
      r.frames_completed = completed;
      r.frames_aborted = period * static_cast<int64_t>(completed) < duration ? 1 : 0;
      r.elapsed = duration;
      r.frames_per_second =
          static_cast<double>(completed) / (static_cast<double>(duration.count()) / 1e9);
    }
    compute(binding);
    if (!o_.real_clock) clock_.advance_to(clock_.now() + r.elapsed);
    return r;
  }

  ByteCounters bytes() const override { return {}; }
  std::map<std::string, double> read_sensors() override { return o_.sensors; }

 private:
  void compute(BindingId binding) {
    if (!o_.real_clock) clock_.advance_to(clock_.now() + o_.compute);
    if (!o_.touch_data) return;
    const Bindings& b = bindings_[binding];
    const auto in = b.inputs[0];
    for (size_t k = 0; k < b.outputs.size(); ++k) {
      auto out = b.outputs[k];
      for (size_t i = 0; i < out.size(); ++i)
        out[i] = in.empty() ? std::byte{0} : (in[i % in.size()] ^ static_cast<std::byte>(0x5a + k));
    }
  }
  InferenceTimings timings() const {
    if (o_.control) {
      std::lock_guard lock(o_.control->mu);
      if (o_.control->timings) return *o_.control->timings;
    }
    InferenceTimings t;
    t.compute = o_.compute;
    return t;
  }

  FakeOptions o_;
  VirtualClock clock_;
  ModelInfo model_;
  bool loaded_ = false;
  std::vector<Bindings> bindings_;
  std::deque<std::pair<BindingId, uint64_t>> queue_;
};

// The output the fake computes for `input`, output index k, of `size` bytes.
inline std::vector<std::byte> fake_expected(std::span<const std::byte> input, size_t k,
                                            size_t size) {
  std::vector<std::byte> out(size);
  for (size_t i = 0; i < size; ++i)
    out[i] = input[i % input.size()] ^ static_cast<std::byte>(0x5a + k);
  return out;
}

}  // namespace rig::testing

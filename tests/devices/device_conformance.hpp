// The device conformance checks (the contract of rig/device.hpp): each
// check drives one device through a part of the contract and returns the
// violations it saw as text. Included by the suites that run them:
// device_conformance_test.cpp (cpu, sim, null, remote and hailo on the
// HailoRT test double) and tests/hailort/client (hailo on the real HailoRT
// client against the fake device server). A case is a struct with kName,
// open() and model(); kLoopCancellable (default true) says whether cancel()
// can cut a running run_for_duration short (HailoRT's on-device loop cannot).
//
// One header on purpose (over 400 lines): the checks read together.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "rig/device.hpp"
#include "rig/device_spec.hpp"
#include "rig/model.hpp"
#include "rig/units.hpp"

namespace rig::conformance {

using namespace std::chrono_literals;

using Violations = std::vector<std::string>;

std::string join(const Violations& v) {
  std::string s;
  for (const auto& line : v) s += "\n  " + line;
  return s;
}

// rig's own transport model at 16 x 16: one input, one output, small.
ModelSource transport_model() {
  ModelSource m;
  m.name = "transport-16";
  TransportSpec spec;
  spec.frame = FrameSize{16, 16};
  if (auto bytes = build_transport_model(spec))
    m.bytes = std::move(*bytes);
  else
    ADD_FAILURE() << bytes.error().to_string();
  return m;
}

// ---- buffers the caller owns -----------------------------------------------

constexpr size_t kGuard = 64;
constexpr auto kGuardByte = std::byte{0xA5};

// One binding's buffers, each with guard bytes before and after the span
// the device gets: a device writes inside its bytes only, and never into
// the inputs.
struct Buffers {
  std::vector<std::vector<std::byte>> inputs, outputs;
  std::vector<std::vector<std::byte>> inputs_given;  // the inputs' bytes as filled

  Buffers(const ModelInfo& model, uint32_t salt) {
    for (const auto& t : model.inputs) {
      std::vector<std::byte> b(t.bytes + 2 * kGuard, kGuardByte);
      for (size_t i = 0; i < t.bytes; ++i)
        b[kGuard + i] = static_cast<std::byte>((i * 7 + salt * 13) % 251);
      inputs_given.push_back(b);
      inputs.push_back(std::move(b));
    }
    for (const auto& t : model.outputs) outputs.emplace_back(t.bytes + 2 * kGuard, kGuardByte);
  }
  Bindings bindings() {
    Bindings b;
    for (auto& in : inputs) b.inputs.emplace_back(in.data() + kGuard, in.size() - 2 * kGuard);
    for (auto& out : outputs) b.outputs.emplace_back(out.data() + kGuard, out.size() - 2 * kGuard);
    return b;
  }
  // What the device wrote where it must not.
  void check(const std::string& when, Violations& v) const {
    for (size_t i = 0; i < inputs.size(); ++i)
      if (inputs[i] != inputs_given[i])
        v.push_back(when + ": input " + std::to_string(i) + " was modified");
    for (size_t i = 0; i < outputs.size(); ++i) {
      const auto& o = outputs[i];
      const bool before =
          std::all_of(o.begin(), o.begin() + kGuard, [](std::byte b) { return b == kGuardByte; });
      const bool after =
          std::all_of(o.end() - kGuard, o.end(), [](std::byte b) { return b == kGuardByte; });
      if (!before || !after)
        v.push_back(when + ": output " + std::to_string(i) + " written outside its bytes");
    }
  }
};

// A loaded device with `n` bindings.
struct Bound {
  std::vector<std::unique_ptr<Buffers>> buffers;
  std::vector<BindingId> ids;
};

Result<Bound> bind_n(Device& d, uint32_t n) {
  Bound b;
  for (uint32_t i = 0; i < n; ++i) {
    b.buffers.push_back(std::make_unique<Buffers>(d.model_info(), i));
    auto id = d.bind(b.buffers.back()->bindings());
    if (!id) return tl::unexpected(id.error());
    b.ids.push_back(*id);
  }
  return b;
}

// `model` loaded and `n` bindings bound; the error names the step that failed.
Result<Bound> load_and_bind(Device& d, const ModelSource& model, uint32_t n) {
  if (auto ok = d.load(model); !ok) return fail(ok.error().code, "load: " + ok.error().to_string());
  auto bound = bind_n(d, n);
  if (!bound) return fail(bound.error().code, "bind: " + bound.error().to_string());
  return bound;
}

// A loop's rate is its completed frames over its elapsed time; a device that
// does not count says how exact its rate is instead.
void check_rate(const DurationRun& r, const std::string& what, Violations& v) {
  if (!r.frames_completed) {
    if (!(r.rate_step > 0))
      v.push_back(what + ": no frame count and no rate_step to say how exact the rate is");
    return;
  }
  if (!r.frames_aborted) v.push_back(what + ": completed counted, aborted not");
  if (r.elapsed <= Nanos(0)) return;
  const double expected = static_cast<double>(*r.frames_completed) / to_seconds(r.elapsed);
  if (std::abs(r.frames_per_second - expected) > 1e-9 * std::max(1.0, expected))
    v.push_back(what + ": rate " + std::to_string(r.frames_per_second) +
                " is not completed / elapsed = " + std::to_string(expected));
}

// The engine's plausibility bound of a device's timings (rig/device.hpp).
Nanos timing_limit(Device& d, Nanos elapsed) {
  return timings_on_clock(d.info(), d.clock()) ? elapsed : kMaxDuration;
}

void expect_code(const Result<void>& r, ErrorCode code, const std::string& what, Violations& v) {
  if (r)
    v.push_back(what + ": succeeded, expected " + std::string(to_string(code)));
  else if (r.error().code != code)
    v.push_back(what + ": " + r.error().to_string() + ", expected " + std::string(to_string(code)));
}
template <class T>
void expect_code(const Result<T>& r, ErrorCode code, const std::string& what, Violations& v) {
  expect_code(r ? Result<void>{} : Result<void>(tl::unexpected(r.error())), code, what, v);
}

// ---- the checks: each returns what it saw break the contract ----------------

// Describe: the device's facts, and the model's exact frame sizes.
Violations check_describe(Device& d, const ModelSource& model) {
  Violations v;
  const DeviceInfo info = d.info();
  if (info.kind.empty()) v.push_back("info().kind is empty");
  if (info.spec.empty()) v.push_back("info().spec is empty");
  if (info.queue_depth < 1) v.push_back("info().queue_depth is 0");
  auto loaded = d.load(model);
  if (!loaded) return {"load: " + loaded.error().to_string()};
  for (const Nanos t : {loaded->read, loaded->parse, loaded->compile})
    if (t < Nanos(0)) v.push_back("load: a negative phase time");
  const ModelInfo& m = d.model_info();
  if (m.inputs.empty() || m.outputs.empty()) v.push_back("model_info(): no inputs or no outputs");
  for (const auto* tensors : {&m.inputs, &m.outputs})
    for (const auto& t : *tensors) {
      size_t n = element_size(t.type);
      for (int64_t dim : t.shape) n *= static_cast<size_t>(std::max<int64_t>(dim, 0));
      if (t.bytes == 0 || n != t.bytes)
        v.push_back("tensor '" + t.name + "': " + std::to_string(t.bytes) +
                    " bytes, its shape and type say " + std::to_string(n));
    }
  return v;
}

// Calls that need a model fail as values before one is loaded.
Violations check_before_load(Device& d, const ModelSource&) {
  Violations v;
  expect_code(d.bind(Bindings{}), ErrorCode::invalid_argument, "bind before load", v);
  expect_code(d.run(0), ErrorCode::invalid_argument, "run before load", v);
  expect_code(d.submit(0, 1), ErrorCode::invalid_argument, "submit before load", v);
  expect_code(d.run_for_duration(0, 1ms, Nanos(0)), ErrorCode::invalid_argument,
              "run_for_duration before load", v);
  expect_code(d.wait_next(0ns), ErrorCode::invalid_argument, "wait_next with nothing in flight", v);
  if (d.in_flight() != 0) v.push_back("in_flight() is not 0 before anything was submitted");
  return v;
}

// bind refuses a wrong count or size; ids bind did not give are refused.
Violations check_bind(Device& d, const ModelSource& model) {
  Violations v;
  if (auto ok = d.load(model); !ok) return {"load: " + ok.error().to_string()};
  const ModelInfo& m = d.model_info();
  expect_code(d.bind(Bindings{}), ErrorCode::invalid_argument, "bind with no buffers", v);
  Buffers short_one(m, 0);
  Bindings b = short_one.bindings();
  b.inputs[0] = b.inputs[0].first(b.inputs[0].size() - 1);
  expect_code(d.bind(b), ErrorCode::invalid_argument, "bind with an input a byte short", v);
  b = short_one.bindings();
  b.outputs.push_back(b.outputs[0]);
  expect_code(d.bind(b), ErrorCode::invalid_argument, "bind with an output too many", v);
  auto bound = bind_n(d, 1);
  if (!bound) return {"bind: " + bound.error().to_string()};
  const BindingId unknown = bound->ids[0] + 1000;
  expect_code(d.run(unknown), ErrorCode::invalid_argument, "run on an unknown binding", v);
  expect_code(d.submit(unknown, 1), ErrorCode::invalid_argument, "submit on an unknown binding", v);
  expect_code(d.run_for_duration(unknown, 1ms, Nanos(0)), ErrorCode::invalid_argument,
              "run_for_duration on an unknown binding", v);
  return v;
}

// submit takes queue_depth requests and refuses the next with queue_full;
// wait_next returns each tag once, with its binding; then nothing is in
// flight. The bindings' buffers are touched only inside their bytes.
Violations check_queue_depth(Device& d, const ModelSource& model) {
  Violations v;
  auto bound = load_and_bind(d, model, d.info().queue_depth + 1);
  if (!bound) return {bound.error().message};
  const uint32_t depth = d.info().queue_depth;
  std::map<uint64_t, BindingId> submitted;  // tag -> binding
  std::map<uint64_t, Nanos> submitted_at;
  for (uint32_t i = 0; i < depth; ++i) {
    const uint64_t tag = 100 + i;
    submitted_at[tag] = d.clock().now();
    if (auto ok = d.submit(bound->ids[i], tag); !ok) {
      v.push_back("submit " + std::to_string(i + 1) + " of the queue depth " +
                  std::to_string(depth) + ": " + ok.error().to_string());
      return v;
    }
    submitted[tag] = bound->ids[i];
  }
  if (d.in_flight() != depth)
    v.push_back("in_flight() is " + std::to_string(d.in_flight()) + " with " +
                std::to_string(depth) + " submitted and none collected");
  auto past = d.submit(bound->ids[depth], 999);
  if (past) {
    v.push_back("a submit past the queue depth (" + std::to_string(depth) +
                ") succeeded; expected queue_full");
    submitted[999] = bound->ids[depth];
    submitted_at[999] = d.clock().now();
  } else if (past.error().code != ErrorCode::queue_full) {
    v.push_back("a submit past the queue depth: " + past.error().to_string() +
                ", expected queue_full");
  }
  // A binding takes one request at a time (and the queue is full).
  if (d.submit(bound->ids[0], 1000)) {
    v.push_back("a second submit on a binding in flight succeeded");
    submitted[1000] = bound->ids[0];
    submitted_at[1000] = d.clock().now();
  }
  std::set<uint64_t> seen;
  while (!submitted.empty() && seen.size() <= depth + 1) {
    auto c = d.wait_next(30s);
    if (!c) {
      v.push_back("wait_next with " + std::to_string(submitted.size()) +
                  " in flight: " + c.error().to_string());
      break;
    }
    const Nanos at = d.clock().now();
    auto it = submitted.find(c->tag);
    if (it == submitted.end()) {
      v.push_back("wait_next returned tag " + std::to_string(c->tag) +
                  (seen.count(c->tag) ? ", already returned" : ", never submitted"));
      continue;
    }
    if (c->binding != it->second)
      v.push_back("tag " + std::to_string(c->tag) + " came back on binding " +
                  std::to_string(c->binding) + ", submitted on " + std::to_string(it->second));
    if (c->error) v.push_back("tag " + std::to_string(c->tag) + ": " + c->error->to_string());
    if (auto bad = implausible_timings(c->timings, timing_limit(d, at - submitted_at[c->tag])))
      v.push_back("tag " + std::to_string(c->tag) + ": " + bad->message);
    seen.insert(c->tag);
    submitted.erase(it);
  }
  if (d.in_flight() != 0)
    v.push_back("in_flight() is " + std::to_string(d.in_flight()) + " after every completion");
  expect_code(d.wait_next(1ms), ErrorCode::invalid_argument, "wait_next with nothing in flight", v);
  for (size_t i = 0; i < bound->buffers.size(); ++i)
    bound->buffers[i]->check("binding " + std::to_string(i), v);
  return v;
}

// A wait that expires is a timeout error and leaves the request in flight;
// the request still completes afterwards. Load refuses requests in flight.
Violations check_wait_timeout(Device& d, const ModelSource& model) {
  Violations v;
  auto bound = load_and_bind(d, model, 1);
  if (!bound) return {bound.error().message};
  if (auto ok = d.submit(bound->ids[0], 7); !ok) return {"submit: " + ok.error().to_string()};
  auto quick = d.wait_next(0ns);
  if (!quick) {
    if (quick.error().code != ErrorCode::timeout)
      v.push_back("wait_next(0): " + quick.error().to_string() +
                  ", expected a completion or "
                  "timeout");
    if (d.in_flight() != 1) v.push_back("a wait that timed out changed in_flight()");
    expect_code(d.load(model), ErrorCode::invalid_argument, "load with a request in flight", v);
    quick = d.wait_next(30s);
  }
  if (!quick) {
    v.push_back("wait_next(30s): " + quick.error().to_string());
    return v;
  }
  if (quick->tag != 7) v.push_back("the completion has tag " + std::to_string(quick->tag));
  if (d.in_flight() != 0) v.push_back("in_flight() is not 0 after the one completion");
  if (auto ok = d.load(model); !ok) v.push_back("load after collecting: " + ok.error().to_string());
  return v;
}

// run: timings inside [0, elapsed] on the device's clock; buffers untouched
// outside their bytes; a busy binding refused.
Violations check_run(Device& d, const ModelSource& model) {
  Violations v;
  auto bound = load_and_bind(d, model, 2);
  if (!bound) return {bound.error().message};
  for (int i = 0; i < 3; ++i) {
    const Nanos t0 = d.clock().now();
    auto t = d.run(bound->ids[0]);
    const Nanos elapsed = d.clock().now() - t0;
    if (!t) {
      v.push_back("run: " + t.error().to_string());
      continue;
    }
    if (auto bad = implausible_timings(*t, timing_limit(d, elapsed)))
      v.push_back("run: " + bad->message);
  }
  if (auto ok = d.submit(bound->ids[1], 1); ok) {
    expect_code(d.run(bound->ids[1]), ErrorCode::invalid_argument,
                "run on a binding with a request in flight", v);
    expect_code(d.run_for_duration(bound->ids[0], 1ms, Nanos(0)), ErrorCode::invalid_argument,
                "run_for_duration with a request in flight", v);
    if (auto c = d.wait_next(30s); !c) v.push_back("wait_next: " + c.error().to_string());
  } else {
    v.push_back("submit: " + ok.error().to_string());
  }
  bound->buffers[0]->check("run", v);
  return v;
}

// run_for_duration: its arguments checked; the counts add up (rate =
// completed / elapsed); the outputs land inside the binding's bytes.
Violations check_run_for_duration(Device& d, const ModelSource& model) {
  Violations v;
  auto bound = load_and_bind(d, model, 1);
  if (!bound) return {bound.error().message};
  const BindingId id = bound->ids[0];
  expect_code(d.run_for_duration(id, Nanos(0), Nanos(0)), ErrorCode::invalid_argument,
              "run_for_duration of 0 s", v);
  expect_code(d.run_for_duration(id, 10ms, Nanos(-1)), ErrorCode::invalid_argument,
              "run_for_duration with a negative sleep", v);
  auto r = d.run_for_duration(id, 50ms, Nanos(0));
  if (!r) return {"run_for_duration: " + r.error().to_string()};
  if (r->elapsed <= Nanos(0)) v.push_back("run_for_duration: elapsed is not > 0");
  check_rate(*r, "run_for_duration", v);
  bound->buffers[0]->check("run_for_duration", v);
  return v;
}

// cancel() from another thread makes a running loop return early with what
// it completed so far; a device on a virtual clock loops in no real time.
// A loop that cannot be cancelled (HailoRT's on-device loop, once it is on
// the device: configured_infer_model_hrpc_client.cpp run_async_for_duration
// has no cancel, 5.1.1 and 5.2.0) is checked instead to run a short loop to
// its end, and to answer within the device's stated bound, the duration and
// 15 s (hailo_device.cpp's wait budget), on its own clock.
Violations check_cancel(Device& d, const ModelSource& model, bool cancellable) {
  Violations v;
  auto bound = load_and_bind(d, model, 1);
  if (!bound) return {bound.error().message};
  const bool real = d.info().clock == ClockKind::real;
  const Nanos duration = !cancellable ? Nanos(1s) : real ? Nanos(60s) : Nanos(1s);
  std::atomic<bool> done{false};
  // cancel() before the loop starts has no effect: repeated until it returns.
  std::thread canceller([&] {
    while (!done.load()) {
      d.cancel();
      std::this_thread::sleep_for(1ms);
    }
  });
  const Nanos t0 = d.clock().now();
  auto r = d.run_for_duration(bound->ids[0], duration, Nanos(0));
  const Nanos took = d.clock().now() - t0;
  done.store(true);
  canceller.join();
  if (!r) return {"cancelled run_for_duration: " + r.error().to_string()};
  if (cancellable && real && r->elapsed >= duration)
    v.push_back("a cancelled loop of " + format_duration(duration) + " ran " +
                format_duration(r->elapsed));
  if (!cancellable && took > duration + Nanos(15s))
    v.push_back("a loop of " + format_duration(duration) + " that cannot be cancelled took " +
                format_duration(took) + ", past its duration and 15 s");
  check_rate(*r, "cancelled run_for_duration", v);
  // A later loop runs normally.
  auto again = d.run_for_duration(bound->ids[0], 5ms, Nanos(0));
  if (!again) v.push_back("a loop after a cancel: " + again.error().to_string());
  return v;
}

// Whether a case's device can cut a running loop short (Case::kLoopCancellable,
// true where the case does not say).
template <class Case>
constexpr bool loop_cancellable() {
  if constexpr (requires { Case::kLoopCancellable; })
    return Case::kLoopCancellable;
  else
    return true;
}

// ---- the typed suite -------------------------------------------------------

template <class Case>
class DeviceConformance : public ::testing::Test {
 protected:
  void SetUp() override {
    auto d = case_.open();
    ASSERT_TRUE(d) << d.error().to_string();
    device_ = std::move(*d);
  }
  // Runs `check` on this case's device and model: no violation expected.
  template <class Check>
  void conforms(const Check& check) {
    const Violations v = check(*device_, case_.model());
    EXPECT_TRUE(v.empty()) << Case::kName << ":" << join(v);
  }

  Case case_;  // outlives the device
  std::unique_ptr<Device> device_;
};

struct CaseName {
  template <class Case>
  static std::string GetName(int) {
    return Case::kName;
  }
};

// Every device: append a factory above and its name here.

}  // namespace rig::conformance

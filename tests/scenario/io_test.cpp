// rig run, rig check and rig compare as scenarios: on the cpu device with
// generated models, over rig serve, and on a device that breaks the contract
// on purpose (each check must then fail, with its evidence).
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <utility>

#include "rig/device.hpp"
#include "rig/model.hpp"
#include "rig/report/loop_report.hpp"
#include "rig/report/run_report.hpp"
#include "rig/scenario/check.hpp"
#include "rig/scenario/compare.hpp"
#include "rig/scenario/loop.hpp"
#include "rig/scenario/run.hpp"
#include "rig/tensor_io.hpp"
#include "server/server.hpp"

namespace rig {
namespace {

ModelSource cnn(uint64_t seed, const std::string& name) {
  CnnSpec spec;
  spec.frame = {16, 16};
  spec.layers = 2;
  spec.channels = 4;
  spec.seed = seed;
  auto bytes = build_cnn_model(spec);
  EXPECT_TRUE(bytes) << bytes.error().to_string();
  ModelSource s;
  s.bytes = std::move(*bytes);
  s.name = name;
  return s;
}

std::unique_ptr<Device> cpu() {
  auto d = open_device("cpu:threads=1");
  EXPECT_TRUE(d) << d.error().to_string();
  return std::move(*d);
}

ModelSource faulty() {
  ModelSource s;
  s.name = "faulty";
  return s;
}

// `prefix` is a C string: gcc 14's -Wdangling-reference takes a temporary
// std::string argument for what the returned reference may point into.
const CheckLine& line(const CheckResult& r, const char* prefix) {
  for (const auto& c : r.checks)
    if (c.name.rfind(prefix, 0) == 0) return c;
  ADD_FAILURE() << "no check line starting with " << prefix;
  return r.checks.front();
}

// One u8 input and one u8 output of `size` bytes: out[i] = in[i] ^ 0x5a, on a
// virtual clock. Its faults are switched on one at a time.
struct Faults {
  bool accept_any_size = false;   // bind checks nothing
  bool overrun = false;           // run writes one byte past the output
  bool underrun = false;          // run writes one byte before the output
  bool nondeterministic = false;  // each run flips the output's first byte differently
  bool constant = false;          // the output ignores the input
};

class FaultyDevice final : public Device {
 public:
  FaultyDevice(size_t size, Faults faults) : faults_(faults) {
    model_.name = "faulty";
    model_.inputs.push_back({"in", ElementType::u8, {static_cast<int64_t>(size)}, size});
    model_.outputs.push_back({"out", ElementType::u8, {static_cast<int64_t>(size)}, size});
  }
  DeviceInfo info() const override {
    DeviceInfo i;
    i.spec = i.kind = "faulty";
    return i;
  }
  Clock& clock() override { return clock_; }
  Result<LoadTimings> load(const ModelSource&) override {
    bindings_.clear();
    return LoadTimings{};
  }
  const ModelInfo& model_info() const override { return model_; }
  Result<BindingId> bind(const Bindings& b) override {
    if (!faults_.accept_any_size)
      if (auto ok = check_bindings(model_, b); !ok) return tl::unexpected(ok.error());
    bindings_.push_back(b);
    return static_cast<BindingId>(bindings_.size() - 1);
  }
  Result<InferenceTimings> run(BindingId id) override {
    const Bindings& b = bindings_.at(id);
    auto in = b.inputs[0];
    auto out = b.outputs[0];
    for (size_t i = 0; i < out.size(); ++i)
      out[i] = faults_.constant ? std::byte{7} : in[i % in.size()] ^ std::byte{0x5a};
    if (faults_.nondeterministic) out[0] ^= static_cast<std::byte>(++runs_);
    if (faults_.overrun) out.data()[out.size()] = std::byte{0};
    if (faults_.underrun) out.data()[-1] = std::byte{0};
    return InferenceTimings{};
  }
  Result<void> submit(BindingId, uint64_t) override {
    return fail(ErrorCode::unsupported, "faulty: no submit");
  }
  Result<Completion> wait_next(Nanos) override {
    return fail(ErrorCode::invalid_argument, "faulty: nothing in flight");
  }
  uint32_t in_flight() const override { return 0; }
  Result<DurationRun> run_for_duration(BindingId, Nanos, Nanos) override {
    return fail(ErrorCode::unsupported, "faulty: no loop");
  }
  ByteCounters bytes() const override { return {}; }

 private:
  Faults faults_;
  ModelInfo model_;
  std::vector<Bindings> bindings_;
  VirtualClock clock_;
  int runs_ = 0;
};

TEST(Check, TheCpuDeviceKeepsTheContract) {
  auto device = cpu();
  auto r = run_check(*device, cnn(1, "cnn"), {});
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_TRUE(r->passed);
  ASSERT_EQ(r->checks.size(), 6u);
  for (const auto& c : r->checks) EXPECT_TRUE(c.passed) << c.name << ": " << c.evidence;
  const CheckLine& differ = line(*r, "different inputs");
  EXPECT_GT(*differ.differing_bytes, 0u);
  EXPECT_EQ(*differ.total_bytes, r->model.output_bytes());
  EXPECT_EQ(*line(*r, "the same input").differing_bytes, 0u);
  const CheckLine& under = line(*r, "an undersized input");
  ASSERT_TRUE(under.refusal);
  EXPECT_EQ(under.refusal->code, ErrorCode::invalid_argument);
  const std::string expected = std::to_string(r->model.inputs[0].bytes);
  const std::string got = std::to_string(r->model.inputs[0].bytes - 1);
  EXPECT_NE(under.evidence.find("expects " + expected + " bytes, got " + got), std::string::npos)
      << under.evidence;
  EXPECT_NE(line(*r, "nothing is written").evidence.find("intact"), std::string::npos);
  EXPECT_EQ(r->guarded_calls, 9u);  // 3 x (bind + run) + 3 refused binds
}

TEST(Check, EveryBreachFailsItsLine) {
  struct Case {
    Faults faults;
    std::vector<std::string> failing;
  };
  const std::vector<Case> cases = {
      {{.accept_any_size = true},
       {"an undersized input", "an oversized input", "an undersized output"}},
      {{.overrun = true}, {"nothing is written"}},
      {{.underrun = true}, {"nothing is written"}},
      {{.nondeterministic = true}, {"the same input"}},
      {{.constant = true}, {"different inputs"}},
  };
  for (const auto& c : cases) {
    FaultyDevice device(32, c.faults);
    auto r = run_check(device, faulty(), {});
    ASSERT_TRUE(r) << r.error().to_string();
    EXPECT_FALSE(r->passed);
    for (const auto& l : r->checks) {
      bool should_fail = false;
      for (const auto& f : c.failing) should_fail = should_fail || l.name.rfind(f, 0) == 0;
      EXPECT_EQ(l.passed, !should_fail) << l.name << ": " << l.evidence;
    }
  }
  FaultyDevice overrun(32, {.overrun = true});
  auto r = run_check(overrun, faulty(), {});
  ASSERT_TRUE(r);
  EXPECT_NE(line(*r, "nothing is written")
                .evidence.find("1 guard bytes changed around output 'out' "
                               "of input A after run (input A)"),
            std::string::npos)
      << line(*r, "nothing is written").evidence;
  FaultyDevice lax(32, {.accept_any_size = true});
  r = run_check(lax, faulty(), {});
  ASSERT_TRUE(r);
  EXPECT_NE(line(*r, "an oversized input")
                .evidence.find("bind accepted 33 bytes for input 'in' "
                               "(expects 32)"),
            std::string::npos);
}

TEST(Check, NondeterminismAllowedReportsTheLargestDifference) {
  FaultyDevice device(32, {.nondeterministic = true});
  CheckSettings s;
  s.allow_nondeterministic = true;
  auto r = run_check(device, faulty(), s);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_TRUE(r->passed);
  const CheckLine& same = line(*r, "the same input");
  EXPECT_EQ(*same.differing_bytes, 1u);
  // out[0] ^= 1 on the first run, ^= 3 on the third: A's byte differs by
  // (x ^ 1) - (x ^ 3), at most 2 in magnitude, never 0.
  ASSERT_TRUE(same.max_difference);
  EXPECT_GT(*same.max_difference, 0);
  EXPECT_LE(*same.max_difference, 2);
  EXPECT_NE(same.evidence.find("nondeterminism allowed"), std::string::npos);
}

TEST(Check, WorksOverRigServe) {
  server::ServerSettings settings;
  settings.listen = "127.0.0.1:0";
  auto server = server::Server::start(cpu(), settings);
  ASSERT_TRUE(server) << server.error().to_string();
  auto remote = open_device((*server)->address());
  ASSERT_TRUE(remote) << remote.error().to_string();
  auto r = run_check(**remote, cnn(1, "cnn"), {});
  ASSERT_TRUE(r) << r.error().to_string();
  for (const auto& c : r->checks) EXPECT_TRUE(c.passed) << c.name << ": " << c.evidence;
  // The remote path refuses wrong sizes with the same status.
  EXPECT_EQ(line(*r, "an oversized input").refusal->code, ErrorCode::invalid_argument);
}

// A server that stops under a remote rig loop (issue 26 item 7): the loop
// fails with a link failure, and the client's result keeps what came before
// it, names the failure, is INVALID with exit status 3, and is written.
struct StopServerAfterTheColdStart final : EngineObserver {
  server::Server* server = nullptr;
  void phase_end(EnginePhase phase, Nanos) override {
    if (phase == EnginePhase::first_inference && server) std::exchange(server, nullptr)->stop();
  }
};

TEST(Loop, AServerThatStopsLeavesAResultThatSaysWhy) {
  server::ServerSettings settings;
  settings.listen = "127.0.0.1:0";
  auto sim = open_device("sim:compute=1ms,realtime=1");
  ASSERT_TRUE(sim);
  auto server = server::Server::start(std::move(*sim), settings);
  ASSERT_TRUE(server) << server.error().to_string();
  auto remote = open_device((*server)->address());
  ASSERT_TRUE(remote) << remote.error().to_string();
  StopServerAfterTheColdStart stopper;
  stopper.server = server->get();
  LoopSettings s;
  s.device = (*server)->address();
  s.point.duration = std::chrono::seconds(30);
  s.point.observer = &stopper;
  s.monitor.enabled = false;
  auto r = run_loop(**remote, cnn(1, "cnn"), s);
  ASSERT_TRUE(r) << "the loop's failure lost the result: " << r.error().to_string();
  ASSERT_TRUE(r->loop_error);
  EXPECT_EQ(exit_code_for(r->loop_error->code), 3);
  EXPECT_FALSE(r->verdict.valid);
  ASSERT_TRUE(r->verdict.failure);
  EXPECT_GT(r->ttfo.total, Nanos(0));  // the cold start is kept
  const std::string json = loop_to_json(*r);
  EXPECT_NE(json.find("\"error\""), std::string::npos);
  EXPECT_NE(json.find("loop_ran"), std::string::npos);
}

TEST(Compare, VariantsDifferAndARerunDoesNot) {
  auto device = cpu();
  const std::vector<ModelSource> models = {cnn(1, "base"), cnn(2, "other-weights"),
                                           cnn(1, "base-again")};
  CompareSettings s;
  auto r = run_compare(*device, models, s);
  ASSERT_TRUE(r) << r.error().to_string();
  ASSERT_EQ(r->variants.size(), 3u);
  const auto& base = r->variants[0];
  const auto& other = r->variants[1];
  const auto& again = r->variants[2];
  EXPECT_EQ(*base.bytes_differing_from_first, 0u);
  EXPECT_GT(*other.bytes_differing_from_first, 0u);
  EXPECT_EQ(*again.bytes_differing_from_first, 0u);
  for (const auto& v : r->variants) {
    EXPECT_TRUE(v.deterministic) << v.name;
    EXPECT_EQ(v.rerun_bytes_differing, 0u);
    EXPECT_EQ(v.output_bytes, 40u);  // 10 float32 logits
    EXPECT_EQ(v.weights.artifact_sha256.size(), 64u);
    ASSERT_TRUE(v.weights.weights_sha256);
  }
  EXPECT_NE(*base.weights.weights_sha256, *other.weights.weights_sha256);
  EXPECT_EQ(*base.weights.weights_sha256, *again.weights.weights_sha256);
  EXPECT_EQ(base.weights.artifact_sha256, again.weights.artifact_sha256);
  // Same architecture: the same parameter count.
  ASSERT_GE(base.weights.facts.size(), 2u);
  EXPECT_EQ(base.weights.facts[1].fact, "parameters");
  EXPECT_EQ(base.weights.facts[1].value, other.weights.facts[1].value);
  EXPECT_NE(base.outputs[0].stats.sha256, other.outputs[0].stats.sha256);

  EXPECT_FALSE(run_compare(*device, std::vector<ModelSource>{cnn(1, "one")}, s));
}

// The sim does not compute the model (issue 38, item 6): two different
// models' outputs are not reported as identical; the result says why.
TEST(Compare, OnTheSimOutputsAreNotTheModelsAndNotCompared) {
  auto device = open_device("sim");
  ASSERT_TRUE(device) << device.error().to_string();
  auto r = run_compare(**device, std::vector<ModelSource>{cnn(1, "base"), cnn(2, "other")}, {});
  ASSERT_TRUE(r) << r.error().to_string();
  ASSERT_TRUE(r->outputs_not_the_models);
  EXPECT_NE(r->outputs_not_the_models->find("not the model's"), std::string::npos);
  EXPECT_FALSE(r->variants[1].bytes_differing_from_first);
  const std::string text = format_compare_text(*r);
  EXPECT_NE(text.find("warning: the sim does not compute the model"), std::string::npos) << text;
  EXPECT_NE(compare_to_json(*r).find("\"outputs_not_the_models\": \"the sim does not"),
            std::string::npos);
  // On the cpu device the outputs are the model's.
  auto cpu_device = cpu();
  auto on_cpu = run_compare(*cpu_device, std::vector<ModelSource>{cnn(1, "a"), cnn(2, "b")}, {});
  ASSERT_TRUE(on_cpu) << on_cpu.error().to_string();
  EXPECT_FALSE(on_cpu->outputs_not_the_models);
}

TEST(Compare, DifferentOutputSizesAreNotCompared) {
  auto device = cpu();
  CnnSpec wide;
  wide.frame = {16, 16};
  wide.layers = 2;
  wide.channels = 4;
  wide.classes = 12;
  ModelSource twelve;
  twelve.bytes = *build_cnn_model(wide);
  twelve.name = "twelve";
  auto r = run_compare(*device, std::vector<ModelSource>{cnn(1, "ten"), twelve}, {});
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_FALSE(r->variants[1].bytes_differing_from_first);
  ASSERT_TRUE(r->variants[1].note);
}

TEST(Run, ReferencesPassOnTheirOwnOutputsAndFailPerturbed) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("rig-run-scenario-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto device = cpu();
  const ModelSource model = cnn(3, "cnn");
  auto first = run_model(*device, model, {});
  ASSERT_TRUE(first) << first.error().to_string();
  ASSERT_EQ(first->outputs.size(), 1u);
  const OutputRecord& out = first->outputs[0];
  EXPECT_EQ(out.stats.elements, 10u);
  const std::string ref = (dir / "ref.npy").string();
  ASSERT_TRUE(write_file_atomic(ref, encode_npy(out.info.type, out.info.shape, out.bytes)));

  RunSettings s;
  s.references = {ref};
  auto same = run_model(*device, model, s);
  ASSERT_TRUE(same) << same.error().to_string();
  EXPECT_TRUE(same->references_passed);
  EXPECT_EQ(same->references[0].comparison.outside, 0u);
  EXPECT_DOUBLE_EQ(*same->references[0].comparison.cosine, 1.0);

  std::vector<std::byte> perturbed = out.bytes;
  float v;
  std::memcpy(&v, perturbed.data() + 8, 4);
  v += 0.5f;
  std::memcpy(perturbed.data() + 8, &v, 4);
  ASSERT_TRUE(write_file_atomic(ref, encode_npy(out.info.type, out.info.shape, perturbed)));
  auto off = run_model(*device, model, s);
  ASSERT_TRUE(off) << off.error().to_string();
  EXPECT_FALSE(off->references_passed);
  EXPECT_EQ(off->references[0].comparison.outside, 1u);
  EXPECT_NEAR(off->references[0].comparison.max_abs_error, 0.5, 1e-6);

  // A reference of the wrong shape is bad input, named with both shapes.
  const std::vector<int64_t> wrong = {10};
  ASSERT_TRUE(write_file_atomic(ref, encode_npy(out.info.type, wrong, out.bytes)));
  auto bad = run_model(*device, model, s);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, ErrorCode::invalid_argument);
  EXPECT_NE(bad.error().message.find("is float32 [1, 10], the reference holds float32 [10]"),
            std::string::npos)
      << bad.error().message;
  std::filesystem::remove_all(dir);
}

TEST(Run, InputsMapByPositionOrName) {
  ModelInfo m;
  m.name = "two";
  m.inputs.push_back({"a", ElementType::u8, {4}, 4});
  m.inputs.push_back({"b", ElementType::u8, {2}, 2});
  const auto dir =
      std::filesystem::temp_directory_path() / ("rig-run-inputs-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string fa = (dir / "a.bin").string(), fb = (dir / "b.bin").string();
  const std::byte four[4] = {std::byte{1}, std::byte{2}, std::byte{3}, std::byte{4}};
  ASSERT_TRUE(write_file_atomic(fa, std::span<const std::byte>(four, 4)));
  ASSERT_TRUE(write_file_atomic(fb, std::span<const std::byte>(four, 2)));
  std::vector<std::string> sources;
  auto by_position = prepare_inputs(m, {fa, fb}, 1, &sources);
  ASSERT_TRUE(by_position) << by_position.error().to_string();
  EXPECT_EQ(sources, (std::vector<std::string>{fa, fb}));
  auto by_name = prepare_inputs(m, {"b=" + fb, fa}, 1, &sources);
  ASSERT_TRUE(by_name) << by_name.error().to_string();
  EXPECT_EQ((*by_name)[1].size(), 2u);
  auto swapped = prepare_inputs(m, {fb, fa}, 1, nullptr);
  ASSERT_FALSE(swapped);
  EXPECT_NE(swapped.error().message.find("input 'a' (uint8 [4]) takes 4 bytes, the file has 2"),
            std::string::npos)
      << swapped.error().message;
  auto one = prepare_inputs(m, {fa}, 1, nullptr);
  ASSERT_FALSE(one);
  EXPECT_NE(one.error().message.find("has 2 inputs ('a', 'b'); --input gave 1 file"),
            std::string::npos)
      << one.error().message;
  auto generated = prepare_inputs(m, {}, 5, &sources);
  ASSERT_TRUE(generated);
  EXPECT_EQ(sources[0], "generated (seed 5)");
  EXPECT_NE(generated_input(m.inputs[0], 1), generated_input(m.inputs[0], 2));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace rig

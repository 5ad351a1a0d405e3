// The cpu device's OpenCV DNN runtime on generated models (every spec here
// names runtime=opencv; the ort runtime and the spec's runtime rules are
// cpu_runtime_test.cpp's).
#include "devices/cpu/cpu_device.hpp"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <set>
#include <string>

#include <unistd.h>

#include <gtest/gtest.h>

#include <onnx/onnx_pb.h>
#include <atomic>
#include <thread>

#include "rig/model.hpp"
#include "rig/units.hpp"

namespace rig {
namespace {

// `text` with runtime=opencv added: the default is ort where it is built.
std::unique_ptr<Device> open_cpu(std::string text) {
  text += text.find(':') == std::string::npos ? ":runtime=opencv" : ",runtime=opencv";
  auto spec = parse_spec(text);
  EXPECT_TRUE(spec) << text;
  auto device = open_cpu_device(spec->params);
  EXPECT_TRUE(device) << text << ": " << device.error().to_string();
  return device ? std::move(*device) : nullptr;
}

std::vector<std::byte> small_transport(ElementType type) {
  TransportSpec spec;
  spec.frame = {64, 64};
  spec.input_type = type;
  auto bytes = build_transport_model(spec);
  EXPECT_TRUE(bytes);
  return *bytes;
}

std::vector<std::byte> small_cnn() {
  CnnSpec spec;
  spec.frame = {32, 32};
  spec.channels = 4;
  spec.layers = 2;
  auto bytes = build_cnn_model(spec);
  EXPECT_TRUE(bytes);
  return *bytes;
}

// Buffers for one binding, sized from the model.
struct Buffers {
  std::vector<std::vector<std::byte>> inputs, outputs;

  explicit Buffers(const ModelInfo& info) {
    for (const auto& t : info.inputs) inputs.emplace_back(t.bytes);
    for (const auto& t : info.outputs) outputs.emplace_back(t.bytes);
  }
  Bindings bindings() {
    Bindings b;
    for (auto& in : inputs) b.inputs.emplace_back(in);
    for (auto& out : outputs) b.outputs.emplace_back(out);
    return b;
  }
  // Deterministic input pattern; `salt` varies it.
  void fill(const ModelInfo& info, uint32_t salt) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      auto& buffer = inputs[i];
      if (info.inputs[i].type == ElementType::f32) {
        for (size_t k = 0; k < buffer.size() / 4; ++k) {
          float v = static_cast<float>((k * 7 + salt * 13) % 101) / 101.0f - 0.3f;
          std::memcpy(buffer.data() + 4 * k, &v, 4);
        }
      } else {
        for (size_t k = 0; k < buffer.size(); ++k)
          buffer[k] = static_cast<std::byte>((k * 7 + salt * 13) % 251);
      }
    }
  }
  std::vector<float> output_floats(size_t i) const {
    std::vector<float> values(outputs[i].size() / 4);
    std::memcpy(values.data(), outputs[i].data(), outputs[i].size());
    return values;
  }
};

ModelSource from_bytes(std::vector<std::byte> bytes, std::string name = "test") {
  ModelSource source;
  source.bytes = std::move(bytes);
  source.name = std::move(name);
  return source;
}

TEST(CpuDevice, InfoDescribesTheDevice) {
  auto device = open_cpu("cpu:threads=1,workers=2,depth=5");
  ASSERT_TRUE(device);
  DeviceInfo info = device->info();
  EXPECT_EQ(info.kind, "cpu");
  EXPECT_EQ(info.queue_depth, 5u);
  EXPECT_TRUE(info.in_process);
  EXPECT_EQ(info.spec, "cpu:runtime=opencv,threads=1,workers=2,depth=5");
  EXPECT_EQ(info.properties.at("runtime"), "opencv");
  EXPECT_EQ(info.properties.at("threads"), "1");
  EXPECT_EQ(info.properties.at("workers"), "2");
  EXPECT_FALSE(info.properties.at("opencv_version").empty());
  EXPECT_FALSE(device->clock().is_virtual());
  EXPECT_EQ(&device->clock(), &steady_clock());

  auto defaults = open_cpu("cpu:workers=3");
  ASSERT_TRUE(defaults);
  EXPECT_EQ(defaults->info().queue_depth, 6u);  // 2 x workers
}

TEST(CpuDevice, RejectsBadSpecs) {
  for (const char* text : {"cpu:thread=2", "cpu:threads=0", "cpu:workers=1.5", "cpu:depth=-1",
                           "cpu:depth=two", "cpu:workers=0"}) {
    auto spec = parse_spec(text);
    ASSERT_TRUE(spec) << text;
    auto device = open_cpu_device(spec->params);
    ASSERT_FALSE(device) << text;
    EXPECT_EQ(device.error().code, ErrorCode::invalid_argument) << text;
  }
  auto unknown = open_cpu_device(parse_spec("cpu:thread=2")->params);
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message.find("'thread'"), std::string::npos);
  EXPECT_NE(unknown.error().message.find("threads, workers, depth"), std::string::npos);
}

class TransportOnCpu : public testing::TestWithParam<ElementType> {};

TEST_P(TransportOnCpu, LoadsAndRuns) {
  auto device = open_cpu("cpu:threads=1");
  ASSERT_TRUE(device);
  auto timings = device->load(from_bytes(small_transport(GetParam()), "transport"));
  ASSERT_TRUE(timings) << timings.error().to_string();
  const ModelInfo& info = device->model_info();
  EXPECT_EQ(info.name, "transport");
  EXPECT_EQ(info.output_bytes() * 4, info.input_bytes());

  Buffers buffers(info);
  buffers.fill(info, 1);
  auto binding = device->bind(buffers.bindings());
  ASSERT_TRUE(binding) << binding.error().to_string();
  auto run = device->run(*binding);
  ASSERT_TRUE(run) << run.error().to_string();
  EXPECT_TRUE(run->transfer_in && run->compute && run->transfer_out);
  auto first = buffers.output_floats(0);
  for (float v : first) ASSERT_TRUE(std::isfinite(v));

  // The output is the channel mean (scaled for u8) at stride 2 or 1.
  if (GetParam() == ElementType::u8) {
    double mean = 0;
    for (size_t c = 0; c < 4; ++c) mean += static_cast<double>(buffers.inputs[0][c * 64 * 64]);
    EXPECT_NEAR(first[0], mean / 4 / 255, 1e-5);
  }

  ByteCounters counters = device->bytes();
  EXPECT_EQ(counters.payload_in, info.input_bytes());
  EXPECT_EQ(counters.payload_out, info.output_bytes());
  EXPECT_EQ(counters.link_in, 0u);
  EXPECT_EQ(counters.link_out, 0u);
}

INSTANTIATE_TEST_SUITE_P(Types, TransportOnCpu, testing::Values(ElementType::u8, ElementType::f32));

TEST(CpuDevice, CnnOutputsAreFiniteDeterministicAndFollowTheInput) {
  auto device = open_cpu("cpu:threads=1");
  ASSERT_TRUE(device);
  ASSERT_TRUE(device->load(from_bytes(small_cnn())));
  const ModelInfo& info = device->model_info();
  ASSERT_EQ(info.outputs.size(), 1u);
  EXPECT_EQ(info.outputs[0].shape, (std::vector<int64_t>{1, 10}));

  Buffers buffers(info);
  auto binding = device->bind(buffers.bindings());
  ASSERT_TRUE(binding);

  buffers.fill(info, 1);
  ASSERT_TRUE(device->run(*binding));
  auto a = buffers.output_floats(0);
  ASSERT_TRUE(device->run(*binding));
  auto a_again = buffers.output_floats(0);
  buffers.fill(info, 2);
  ASSERT_TRUE(device->run(*binding));
  auto b = buffers.output_floats(0);

  for (float v : a) ASSERT_TRUE(std::isfinite(v));
  EXPECT_EQ(std::memcmp(a.data(), a_again.data(), a.size() * 4), 0) << "not bit-identical";
  EXPECT_NE(a, b) << "outputs ignore the input";
}

// cancel() from another thread makes an hour-long loop return with the
// frames completed so far; it is repeated until the loop has returned
// (cancel has no effect before the loop starts), so the test waits on the
// loop's return, not on a clock.
TEST(CpuDevice, CancelEndsARunningLoopWithConsistentCounts) {
  auto device = open_cpu("cpu:threads=1");
  ASSERT_TRUE(device);
  ASSERT_TRUE(device->load(from_bytes(small_cnn())));
  Buffers buffers(device->model_info());
  auto binding = device->bind(buffers.bindings());
  ASSERT_TRUE(binding);
  std::atomic<bool> done{false};
  Result<DurationRun> run = fail(ErrorCode::internal, "not run");
  std::thread loop([&] {
    run = device->run_for_duration(*binding, std::chrono::hours(1), std::chrono::milliseconds(1));
    done = true;
  });
  while (!done) {
    device->cancel();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  loop.join();
  ASSERT_TRUE(run) << run.error().to_string();
  EXPECT_LT(run->elapsed, std::chrono::hours(1));
  EXPECT_LE(run->frames_aborted, 1u);
  const double seconds = std::chrono::duration<double>(run->elapsed).count();
  ASSERT_TRUE(run->frames_completed);  // the cpu device counts its frames
  EXPECT_NEAR(run->frames_per_second * seconds, static_cast<double>(*run->frames_completed), 1e-6);
  // A later loop runs normally.
  auto again = device->run_for_duration(*binding, std::chrono::milliseconds(20), Nanos(0));
  ASSERT_TRUE(again);
  EXPECT_EQ(again->elapsed, std::chrono::milliseconds(20));
}

TEST(CpuDevice, AsyncCompletesEveryTagOnce) {
  auto device = open_cpu("cpu:threads=1,workers=2,depth=8");
  ASSERT_TRUE(device);
  ASSERT_TRUE(device->load(from_bytes(small_transport(ElementType::u8))));
  const ModelInfo& info = device->model_info();

  // One binding per slot: a binding carries at most one request at a time.
  std::vector<Buffers> buffers;
  std::vector<BindingId> free_bindings;
  for (uint32_t i = 0; i < 8; ++i) {
    buffers.emplace_back(info);
    buffers.back().fill(info, i);
  }
  for (auto& b : buffers) free_bindings.push_back(*device->bind(b.bindings()));

  constexpr uint64_t kRequests = 200;
  std::set<uint64_t> seen;
  uint64_t next_tag = 0;
  while (seen.size() < kRequests) {
    while (next_tag < kRequests && !free_bindings.empty()) {
      ASSERT_TRUE(device->submit(free_bindings.back(), next_tag));
      free_bindings.pop_back();
      ++next_tag;
    }
    EXPECT_LE(device->in_flight(), 8u);
    auto done = device->wait_next(std::chrono::seconds(30));
    ASSERT_TRUE(done) << done.error().to_string();
    EXPECT_FALSE(done->error) << done->error->to_string();
    EXPECT_TRUE(done->timings.compute && done->timings.queue_wait);
    EXPECT_TRUE(seen.insert(done->tag).second) << "tag " << done->tag << " completed twice";
    free_bindings.push_back(done->binding);
  }
  EXPECT_EQ(device->in_flight(), 0u);
  EXPECT_EQ(*seen.rbegin(), kRequests - 1);
  EXPECT_EQ(device->bytes().payload_in, kRequests * info.input_bytes());

  auto idle = device->wait_next(std::chrono::milliseconds(1));
  ASSERT_FALSE(idle);
  EXPECT_EQ(idle.error().code, ErrorCode::invalid_argument);
}

TEST(CpuDevice, SubmitBeyondDepthIsQueueFull) {
  auto device = open_cpu("cpu:threads=1,workers=1,depth=2");
  ASSERT_TRUE(device);
  ASSERT_TRUE(device->load(from_bytes(small_transport(ElementType::u8))));
  std::vector<Buffers> buffers(3, Buffers(device->model_info()));
  std::vector<BindingId> ids;
  for (auto& b : buffers) ids.push_back(*device->bind(b.bindings()));

  ASSERT_TRUE(device->submit(ids[0], 0));
  ASSERT_TRUE(device->submit(ids[1], 1));
  auto full = device->submit(ids[2], 2);
  ASSERT_FALSE(full);
  EXPECT_EQ(full.error().code, ErrorCode::queue_full);
  EXPECT_EQ(device->in_flight(), 2u);

  // A binding stays in flight until wait_next() returns it.
  auto busy = device->submit(ids[0], 3);
  ASSERT_FALSE(busy);
  EXPECT_EQ(busy.error().code, ErrorCode::invalid_argument);

  ASSERT_TRUE(device->wait_next(std::chrono::seconds(30)));
  ASSERT_TRUE(device->wait_next(std::chrono::seconds(30)));
  EXPECT_EQ(device->in_flight(), 0u);
}

TEST(CpuDevice, WaitNextWithZeroTimeoutTimesOutOrCompletes) {
  auto device = open_cpu("cpu:threads=1,workers=1,depth=2");
  ASSERT_TRUE(device);
  CnnSpec spec;  // slow enough that a 0 ns wait almost always times out
  ASSERT_TRUE(device->load(from_bytes(*build_cnn_model(spec))));
  Buffers buffers(device->model_info());
  auto id = *device->bind(buffers.bindings());
  ASSERT_TRUE(device->submit(id, 7));
  auto quick = device->wait_next(Nanos{0});
  if (!quick) {
    EXPECT_EQ(quick.error().code, ErrorCode::timeout);
    EXPECT_EQ(device->in_flight(), 1u);
    quick = device->wait_next(std::chrono::seconds(30));
  }
  ASSERT_TRUE(quick) << quick.error().to_string();
  EXPECT_EQ(quick->tag, 7u);
  EXPECT_EQ(quick->binding, id);
  EXPECT_GT(quick->completed_at.count(), 0);
  EXPECT_EQ(device->in_flight(), 0u);
}

TEST(CpuDevice, BindRejectsWrongSizes) {
  auto device = open_cpu("cpu:threads=1");
  ASSERT_TRUE(device);
  ASSERT_TRUE(device->load(from_bytes(small_transport(ElementType::u8))));
  const ModelInfo& info = device->model_info();
  std::vector<std::byte> in(info.inputs[0].bytes - 1), out(info.outputs[0].bytes);
  Bindings bindings{{std::span<const std::byte>(in)}, {std::span<std::byte>(out)}};
  auto binding = device->bind(bindings);
  ASSERT_FALSE(binding);
  EXPECT_EQ(binding.error().code, ErrorCode::invalid_argument);
  const std::string& message = binding.error().message;
  EXPECT_NE(message.find(std::to_string(info.inputs[0].bytes)), std::string::npos) << message;
  EXPECT_NE(message.find(std::to_string(in.size())), std::string::npos) << message;

  auto missing = device->bind(Bindings{});
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ErrorCode::invalid_argument);

  auto unknown = device->run(12345);
  ASSERT_FALSE(unknown);
}

TEST(CpuDevice, RunForDurationCountsFrames) {
  auto device = open_cpu("cpu:threads=1");
  ASSERT_TRUE(device);
  ASSERT_TRUE(device->load(from_bytes(small_transport(ElementType::f32))));
  Buffers buffers(device->model_info());
  buffers.fill(device->model_info(), 3);
  auto id = *device->bind(buffers.bindings());
  ASSERT_TRUE(device->run(id));
  auto expected = buffers.output_floats(0);
  std::fill(buffers.outputs[0].begin(), buffers.outputs[0].end(), std::byte{0});

  auto run = device->run_for_duration(id, std::chrono::milliseconds(200), Nanos{0});
  ASSERT_TRUE(run) << run.error().to_string();
  EXPECT_LE(run->frames_aborted, 1u);
  EXPECT_LE(run->elapsed, std::chrono::milliseconds(200));
  // The rate is the device's own count over its own elapsed time, a real number.
  ASSERT_GT(run->elapsed.count(), 0);
  EXPECT_DOUBLE_EQ(run->frames_per_second, static_cast<double>(run->frames_completed.value_or(0)) /
                                               (static_cast<double>(run->elapsed.count()) / 1e9));
  if (run->frames_completed > 0) {
    EXPECT_EQ(buffers.output_floats(0), expected);
  }
  EXPECT_FALSE(device->run_for_duration(id, Nanos{0}, Nanos{0}));
}

TEST(CpuDevice, UnsupportedOpIsNamed) {
  // TopK has no OpenCV 4.6 layer.
  onnx::ModelProto model;
  model.set_ir_version(7);
  auto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(13);
  auto* graph = model.mutable_graph();
  graph->set_name("topk");
  auto add_value = [](onnx::ValueInfoProto* value, const char* name, int32_t type,
                      std::vector<int64_t> shape) {
    value->set_name(name);
    auto* tensor = value->mutable_type()->mutable_tensor_type();
    tensor->set_elem_type(type);
    for (int64_t d : shape) tensor->mutable_shape()->add_dim()->set_dim_value(d);
  };
  add_value(graph->add_input(), "x", onnx::TensorProto::FLOAT, {1, 16});
  add_value(graph->add_output(), "values", onnx::TensorProto::FLOAT, {1, 4});
  add_value(graph->add_output(), "indices", onnx::TensorProto::INT64, {1, 4});
  auto* k = graph->add_initializer();
  k->set_name("k");
  k->set_data_type(onnx::TensorProto::INT64);
  k->add_dims(1);
  k->add_int64_data(4);
  auto* node = graph->add_node();
  node->set_op_type("TopK");
  node->set_name("topk0");
  node->add_input("x");
  node->add_input("k");
  node->add_output("values");
  node->add_output("indices");
  std::string text = model.SerializeAsString();
  std::vector<std::byte> bytes(text.size());
  std::memcpy(bytes.data(), text.data(), text.size());

  auto device = open_cpu("cpu:threads=1");
  ASSERT_TRUE(device);
  auto loaded = device->load(from_bytes(bytes));
  ASSERT_FALSE(loaded);
  EXPECT_EQ(loaded.error().code, ErrorCode::unsupported);
  EXPECT_NE(loaded.error().message.find("TopK"), std::string::npos) << loaded.error().message;
}

TEST(CpuDevice, LoadsModelsWithoutDeclaredOutputShapes) {
  // OpenCV 4.6 needs output shapes; the device fills them in from inference.
  onnx::ModelProto model;
  auto bytes = small_cnn();
  ASSERT_TRUE(model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())));
  model.mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  std::string text = model.SerializeAsString();
  std::vector<std::byte> stripped(text.size());
  std::memcpy(stripped.data(), text.data(), text.size());

  auto device = open_cpu("cpu:threads=1");
  ASSERT_TRUE(device);
  auto loaded = device->load(from_bytes(stripped));
  ASSERT_TRUE(loaded) << loaded.error().to_string();
  EXPECT_EQ(device->model_info().outputs[0].shape, (std::vector<int64_t>{1, 10}));
  Buffers buffers(device->model_info());
  buffers.fill(device->model_info(), 5);
  ASSERT_TRUE(device->run(*device->bind(buffers.bindings())));
  for (float v : buffers.output_floats(0)) EXPECT_TRUE(std::isfinite(v));
}

TEST(CpuDevice, MissingAndCorruptFiles) {
  auto device = open_cpu("cpu:threads=1");
  ASSERT_TRUE(device);
  const auto dir = std::filesystem::temp_directory_path();
  ModelSource missing;
  missing.path = (dir / "rig-cpu-test-does-not-exist.onnx").string();
  auto not_found = device->load(missing);
  ASSERT_FALSE(not_found);
  EXPECT_EQ(not_found.error().code, ErrorCode::not_found);
  EXPECT_NE(not_found.error().message.find(missing.path), std::string::npos);

  ModelSource corrupt;
  corrupt.path = (dir / ("rig-cpu-test-corrupt-" + std::to_string(::getpid()) + ".onnx")).string();
  ASSERT_TRUE(write_file_atomic(corrupt.path, std::string_view("definitely not onnx \x01\x02")));
  auto invalid = device->load(corrupt);
  std::filesystem::remove(corrupt.path);
  ASSERT_FALSE(invalid);
  EXPECT_EQ(invalid.error().code, ErrorCode::invalid_argument);
}

TEST(CpuDevice, LoadsFromAPathAndNamesTheModelAfterIt) {
  auto device = open_cpu("cpu:threads=1");
  ASSERT_TRUE(device);
  const auto path = std::filesystem::temp_directory_path() /
                    ("rig-cpu-test-" + std::to_string(::getpid()) + ".onnx");
  ASSERT_TRUE(write_file_atomic(path.string(), small_cnn()));
  ModelSource source;
  source.path = path.string();
  auto loaded = device->load(source);
  std::filesystem::remove(path);
  ASSERT_TRUE(loaded) << loaded.error().to_string();
  EXPECT_EQ(device->model_info().name, path.stem().string());
  EXPECT_GE(loaded->read.count(), 0);
  EXPECT_GT(loaded->parse.count(), 0);
}

}  // namespace
}  // namespace rig

// The load time the normalisation pass adds (issue 8): on the demo CNN and on
// a generated graph of 680 nodes in the form PyTorch exports (Identity on
// every weight), interleaved pairs of
//   reference: inspect + OpenCV import of the model as the pass leaves it
//              (what loading costs without the pass), and
//   subject:   normalize_onnx + inspect + OpenCV import of the original,
// each timed over `--reps` loads. Prints the medians and subject / reference.
//   build/bench/model/normalize_bench [--pairs 7] [--reps 5]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>
#include <opencv2/core/utils/logger.hpp>
#include <opencv2/dnn.hpp>

#include "rig/model.hpp"

namespace {

std::vector<std::byte> to_bytes(const onnx::ModelProto& m) {
  std::string s = m.SerializeAsString();
  std::vector<std::byte> b(s.size());
  std::memcpy(b.data(), s.data(), s.size());
  return b;
}

// 170 blocks of y = Relu(x * Identity(w) + b) on a [1, 64] tensor.
std::vector<std::byte> exported_chain() {
  onnx::ModelProto m;
  m.set_ir_version(7);
  m.add_opset_import()->set_version(13);
  auto* g = m.mutable_graph();
  g->set_name("chain");
  auto value = [](onnx::ValueInfoProto* v, const std::string& name) {
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    t->mutable_shape()->add_dim()->set_dim_value(1);
    t->mutable_shape()->add_dim()->set_dim_value(64);
  };
  value(g->add_input(), "x0");
  std::string x = "x0";
  for (int i = 0; i < 170; ++i) {
    const std::string n = std::to_string(i);
    for (const char* kind : {"w", "b"}) {
      auto* t = g->add_initializer();
      t->set_name(kind + n);
      t->set_data_type(onnx::TensorProto::FLOAT);
      t->add_dims(1);
      t->add_dims(64);
      for (int k = 0; k < 64; ++k) t->add_float_data(kind[0] == 'w' ? 1.0f : 0.01f);
    }
    auto node = [&](const char* op, std::vector<std::string> in, std::string out) {
      auto* nd = g->add_node();
      nd->set_op_type(op);
      nd->set_name(out);
      for (auto& s : in) nd->add_input(s);
      nd->add_output(out);
    };
    node("Identity", {"w" + n}, "wi" + n);
    node("Mul", {x, "wi" + n}, "m" + n);
    node("Add", {"m" + n, "b" + n}, "a" + n);
    node("Relu", {"a" + n}, "x" + std::to_string(i + 1));
    x = "x" + std::to_string(i + 1);
  }
  value(g->add_output(), x);
  return to_bytes(m);
}

double seconds_of(auto&& f, int reps) {
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < reps; ++i) f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / reps;
}

void import(std::span<const std::byte> b) {
  auto net = cv::dnn::readNetFromONNX(reinterpret_cast<const char*>(b.data()), b.size());
  if (net.empty()) std::abort();
}

}  // namespace

int main(int argc, char** argv) {
  int pairs = 7, reps = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::string(argv[i]) == "--pairs") pairs = std::atoi(argv[i + 1]);
    if (std::string(argv[i]) == "--reps") reps = std::atoi(argv[i + 1]);
  }
  cv::utils::logging::setLogLevel(cv::utils::logging::LOG_LEVEL_SILENT);
  auto cnn = rig::build_cnn_model({});
  if (!cnn) return 1;
  struct Case {
    const char* name;
    std::vector<std::byte> original;
  } cases[] = {{"demo CNN (11 nodes)", *cnn}, {"exported chain (680 nodes)", exported_chain()}};
  std::printf("%-28s %14s %14s %8s %s\n", "model", "without (ms)", "with (ms)", "ratio",
              "pairs (min-max)");
  for (auto& c : cases) {
    auto normalized = rig::normalize_onnx(c.original, {}, c.name);
    if (!normalized) {
      std::fprintf(stderr, "%s\n", normalized.error().message.c_str());
      return 1;
    }
    const std::vector<std::byte> as_left = normalized->changed() ? normalized->bytes : c.original;
    std::vector<double> without, with, ratios;
    for (int p = 0; p < pairs; ++p) {
      const double a = seconds_of(
          [&] {
            if (!rig::inspect_onnx(as_left, "m")) std::abort();
            import(as_left);
          },
          reps);
      const double b = seconds_of(
          [&] {
            auto n = rig::normalize_onnx(c.original, {}, "m");
            if (!n) std::abort();
            const std::span<const std::byte> bytes =
                n->changed() ? std::span<const std::byte>(n->bytes) : c.original;
            if (!rig::inspect_onnx(bytes, "m")) std::abort();
            import(bytes);
          },
          reps);
      without.push_back(a);
      with.push_back(b);
      ratios.push_back(b / a);
    }
    auto median = [](std::vector<double> v) {
      std::sort(v.begin(), v.end());
      return v[v.size() / 2];
    };
    std::printf("%-28s %14.3f %14.3f %8.3f %.3f-%.3f (rewrites %llu, nodes %llu -> %llu)\n", c.name,
                median(without) * 1e3, median(with) * 1e3, median(ratios),
                *std::min_element(ratios.begin(), ratios.end()),
                *std::max_element(ratios.begin(), ratios.end()),
                static_cast<unsigned long long>(normalized->report.total()),
                static_cast<unsigned long long>(normalized->report.nodes_before),
                static_cast<unsigned long long>(normalized->report.nodes_after));
  }
  return 0;
}

// The load-time normalisation pass (normalize_onnx in rig/model.hpp) and the
// --shape syntax. The pass works on the parsed graph: it fixes the inputs'
// shapes, runs ONNX shape inference once in a child process when a rewrite
// needs shape facts, then applies its rewrites in topological order, round
// after round, until a round changes nothing or the cap on work is reached.
//
// One file on purpose: the rewrites share the pass's graph index, its shape
// facts and its per-kind counters, and each is a few lines on top of them;
// the constant evaluator they call is const_eval.cpp.
#include <algorithm>
#include <charconv>
#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <onnx/defs/schema.h>

#include "model/const_eval.hpp"
#include "model/onnx_util.hpp"
#include "rig/model.hpp"

namespace rig {
namespace {

using const_eval::Value;

// The rewrite kinds, as counted in ModelRewrites::rewrites.
constexpr const char* kIdentity = "identity_removed";
constexpr const char* kClip = "clip_bounds_to_attributes";
constexpr const char* kFolded = "constant_folded";
constexpr const char* kKernelShape = "kernel_shape_set";
constexpr const char* kResize = "resize_defaults_set";
constexpr const char* kNoopExpand = "noop_expand_removed";
constexpr const char* kEmptyInput = "empty_input_dropped";
constexpr const char* kDeadNode = "dead_node_removed";
constexpr const char* kDeadInitializer = "unused_initializer_removed";

// Errors do not repeat the model's name: the caller that loads a model names
// it (cold_start: "model 'PATH': ..."), as `rig model normalize` does.
Error named(const std::string& /*model*/, Error e) {
  return e;
}

std::string dims_text(const std::vector<int64_t>& dims) {
  std::string s;
  for (int64_t d : dims) s += (s.empty() ? "" : "x") + std::to_string(d);
  return s.empty() ? "scalar" : s;
}

int64_t default_opset(const onnx::ModelProto& model) {
  for (const auto& o : model.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") return o.version();
  return 0;
}

// Opsets the installed ONNX library does not know. (External data and tensors
// whose data does not match their shape were refused by parse_model.)
Result<void> check_model_scope(const onnx::ModelProto& model) {
  const auto& ranges = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  for (const auto& o : model.opset_import()) {
    const std::string domain = o.domain() == "ai.onnx" ? "" : o.domain();
    auto it = ranges.find(domain);
    if (it == ranges.end()) continue;  // a custom domain: its nodes are judged by the device
    if (o.version() > it->second.second)
      return fail(ErrorCode::unsupported,
                  "the model uses opset " + std::to_string(o.version()) + " of " +
                      (domain.empty() ? std::string("ai.onnx") : domain) +
                      ", newer than the installed ONNX library knows (" +
                      std::to_string(it->second.second) +
                      "): its ops' shapes cannot be checked; export at opset " +
                      std::to_string(it->second.second) + " or lower");
  }
  return {};
}

// Applies --shape and the dynamic-dimension rules to the real inputs.
Result<void> fix_input_shapes(onnx::GraphProto& graph, const std::vector<InputShape>& shapes,
                              std::vector<std::string>& notes, bool& changed) {
  std::set<std::string> initializers;
  for (const auto& t : graph.initializer()) initializers.insert(t.name());
  std::map<std::string, const InputShape*> given;
  for (const auto& s : shapes) {
    if (!given.emplace(s.name, &s).second)
      return fail(ErrorCode::invalid_argument, "--shape gives input '" + s.name + "' twice");
    // The CLI refuses these too; shapes also come from the wire (a by-name
    // load on rig serve).
    for (size_t i = 0; i < s.dims.size(); ++i)
      if (s.dims[i] < 1)
        return fail(ErrorCode::invalid_argument,
                    "--shape " + s.name + "=" + dims_text(s.dims) + ": dimension " +
                        std::to_string(i) + " is " + std::to_string(s.dims[i]) +
                        " (zero or negative); every dimension must be at least 1");
  }
  std::string names;
  for (const auto& input : graph.input())
    if (!initializers.count(input.name()))
      names += (names.empty() ? "" : ", ") + ("'" + input.name() + "'");
  for (const auto& s : shapes) {
    bool found = false;
    for (const auto& input : graph.input())
      found = found || (input.name() == s.name && !initializers.count(s.name));
    if (!found)
      return fail(ErrorCode::invalid_argument,
                  "--shape names input '" + s.name +
                      "', which the model does not have (inputs: " + names + ")");
  }
  for (auto& input : *graph.mutable_input()) {
    if (initializers.count(input.name())) continue;
    if (!input.type().has_tensor_type()) continue;  // inspect refuses it by name
    auto* tensor = input.mutable_type()->mutable_tensor_type();
    auto it = given.find(input.name());
    const std::string what = "input '" + input.name() + "'";
    if (it != given.end()) {
      const auto& dims = it->second->dims;
      if (tensor->has_shape() && tensor->shape().dim_size() != static_cast<int>(dims.size()))
        return fail(ErrorCode::invalid_argument, "--shape " + input.name() + "=" + dims_text(dims) +
                                                     ": " + what + " has rank " +
                                                     std::to_string(tensor->shape().dim_size()) +
                                                     ", not " + std::to_string(dims.size()));
      if (!tensor->has_shape())
        for (size_t i = 0; i < dims.size(); ++i) tensor->mutable_shape()->add_dim();
      for (int i = 0; i < tensor->shape().dim_size(); ++i) {
        auto* dim = tensor->mutable_shape()->mutable_dim(i);
        const int64_t want = dims[static_cast<size_t>(i)];
        if (dim->has_dim_value() && dim->dim_value() >= 1 && dim->dim_value() != want)
          return fail(ErrorCode::invalid_argument,
                      "--shape " + input.name() + "=" + dims_text(dims) + ": " + what +
                          " dimension " + std::to_string(i) + " is fixed at " +
                          std::to_string(dim->dim_value()) + " in the model, not " +
                          std::to_string(want));
        if (!dim->has_dim_value() || dim->dim_value() != want) changed = true;
        dim->set_dim_value(want);
      }
      continue;
    }
    if (!tensor->has_shape())
      return fail(ErrorCode::invalid_argument,
                  what + " declares no shape: give one with --shape " + input.name() + "=DIMS");
    for (int i = 0; i < tensor->shape().dim_size(); ++i) {
      auto* dim = tensor->mutable_shape()->mutable_dim(i);
      if (dim->has_dim_value() && dim->dim_value() >= 1) continue;
      if (dim->has_dim_value() && dim->dim_value() < 0)
        return fail(ErrorCode::invalid_argument,
                    what + " dimension " + std::to_string(i) + " is " +
                        std::to_string(dim->dim_value()) +
                        " in the model: a dimension cannot be negative; give its size with "
                        "--shape " +
                        input.name() + "=DIMS");
      const std::string label =
          dim->has_dim_param() && !dim->dim_param().empty() ? " ('" + dim->dim_param() + "')" : "";
      if (i == 0) {
        notes.push_back(what + ": free batch dimension 0" + label +
                        " set to 1 (choose it with --shape " + input.name() + "=...)");
        dim->set_dim_value(1);
        changed = true;
        continue;
      }
      return fail(ErrorCode::invalid_argument, what + " dimension " + std::to_string(i) + label +
                                                   " is dynamic: give its size with --shape " +
                                                   input.name() + "=DIMS");
    }
  }
  return {};
}

std::optional<std::vector<int64_t>> static_dims(const onnx::TypeProto& type) {
  if (!type.has_tensor_type() || !type.tensor_type().has_shape()) return std::nullopt;
  std::vector<int64_t> dims;
  for (const auto& d : type.tensor_type().shape().dim()) {
    if (!d.has_dim_value() || d.dim_value() < 0) return std::nullopt;
    dims.push_back(d.dim_value());
  }
  return dims;
}

bool needs_shape_facts(const onnx::GraphProto& graph) {
  std::set<std::string> initializers;
  for (const auto& t : graph.initializer()) initializers.insert(t.name());
  for (const auto& node : graph.node()) {
    const std::string& op = node.op_type();
    if (op == "Shape" || op == "Size" || op == "Expand") return true;
    if ((op == "Conv" || op == "ConvTranspose") && node.input_size() > 1 &&
        !initializers.count(node.input(1))) {
      bool has_kernel = false;
      for (const auto& a : node.attribute()) has_kernel = has_kernel || a.name() == "kernel_shape";
      if (!has_kernel) return true;
    }
  }
  return false;
}

// Shape inference runs again after a round that folded something, because
// folding a Reshape's or a Pad's computed input makes the next shapes known:
// one chain of blocks further each time (Swin's shifted windows need about
// one run per block, Swin-S and -B 24 blocks). At most this many runs, as
// many as the pass has rounds.
constexpr int kMaxInferenceRounds = 64;

// What shape inference needs of the model: everything but the data of large
// floating-point initializers, which become typed graph inputs instead (their
// values never decide a shape; integer initializers, which may, stay). The
// child process then copies kilobytes, not the weights, once per run.
onnx::ModelProto inference_copy(onnx::ModelProto& model) {
  auto* graph = model.mutable_graph();
  std::vector<int> moved;
  std::set<std::string> inputs;
  for (const auto& i : graph->input()) inputs.insert(i.name());
  for (int i = 0; i < graph->initializer_size(); ++i) {
    auto* t = graph->mutable_initializer(i);
    const bool real = t->data_type() == onnx::TensorProto::FLOAT ||
                      t->data_type() == onnx::TensorProto::DOUBLE ||
                      t->data_type() == onnx::TensorProto::FLOAT16;
    if (!real || inputs.count(t->name())) continue;
    uint64_t n = 1;
    for (int64_t d : t->dims()) n *= d > 0 ? static_cast<uint64_t>(d) : 1;
    if (n < 4096) continue;
    moved.push_back(i);
  }
  // Take the large initializers out for the copy, then put them back.
  google::protobuf::RepeatedPtrField<onnx::TensorProto> all;
  all.Swap(graph->mutable_initializer());
  std::vector<bool> is_moved(static_cast<size_t>(all.size()), false);
  for (int i : moved) is_moved[static_cast<size_t>(i)] = true;
  for (int i = 0; i < all.size(); ++i)
    if (!is_moved[static_cast<size_t>(i)]) *graph->add_initializer() = all.Get(i);
  onnx::ModelProto copy = model;
  graph->mutable_initializer()->Swap(&all);
  for (int i : moved) {
    const auto& t = graph->initializer(i);
    auto* input = copy.mutable_graph()->add_input();
    input->set_name(t.name());
    auto* tensor = input->mutable_type()->mutable_tensor_type();
    tensor->set_elem_type(t.data_type());
    auto* shape = tensor->mutable_shape();
    for (int64_t d : t.dims()) shape->add_dim()->set_dim_value(d);
  }
  return copy;
}

// The shapes shape inference found (value_info and the outputs' types),
// taken into the model itself.
void take_shape_facts(onnx::ModelProto& model, onnx::ModelProto& inferred) {
  auto* graph = model.mutable_graph();
  graph->mutable_value_info()->Swap(inferred.mutable_graph()->mutable_value_info());
  for (int i = 0; i < graph->output_size() && i < inferred.graph().output_size(); ++i)
    if (inferred.graph().output(i).name() == graph->output(i).name())
      *graph->mutable_output(i)->mutable_type() = inferred.graph().output(i).type();
}

class Pass {
 public:
  Pass(onnx::ModelProto& model, const NormalizeOptions& options, ModelRewrites& report)
      : model_(model), graph_(*model.mutable_graph()), options_(options), report_(report) {
    opset_ = default_opset(model);
  }

  void load_facts() {
    for (const auto& v : graph_.value_info())
      if (auto d = static_dims(v.type())) shapes_[v.name()] = *d;
    for (const auto& v : graph_.input())
      if (auto d = static_dims(v.type())) shapes_[v.name()] = *d;
    for (const auto& v : graph_.output())
      if (auto d = static_dims(v.type())) shapes_[v.name()] = *d;
    for (int i = 0; i < graph_.initializer_size(); ++i)
      initializer_index_[graph_.initializer(i).name()] = i;
    for (const auto& o : graph_.output()) graph_outputs_.insert(o.name());
    for (const auto& i : graph_.input()) graph_inputs_.insert(i.name());
  }

  void run() {
    bool changed = true;
    uint64_t round = 0;
    while (changed) {
      if (round++ >= options_.max_rounds) {
        report_.notes.push_back("normalisation stopped at its cap of " +
                                std::to_string(options_.max_rounds) + " rounds");
        break;
      }
      changed = false;
      changed |= sweep_nodes();
      changed |= remove_dead();
      if (capped_) break;
    }
    if (capped_)
      report_.notes.push_back("normalisation stopped folding at its cap of " +
                              std::to_string(options_.max_folded_elements) + " folded elements");
  }

  void tidy_value_info() {
    std::unordered_set<std::string> live;
    for (const auto& node : graph_.node())
      for (const auto& o : node.output()) live.insert(o);
    auto* vi = graph_.mutable_value_info();
    for (int i = vi->size(); i-- > 0;)
      if (!live.count(vi->Get(i).name()) || graph_outputs_.count(vi->Get(i).name()))
        vi->DeleteSubrange(i, 1);
  }

 private:
  void count(const char* kind) { ++report_.rewrites[kind]; }

  const Value* constant(const std::string& name) {
    if (name.empty()) return nullptr;
    auto cached = values_.find(name);
    if (cached != values_.end()) return &cached->second;
    auto it = initializer_index_.find(name);
    if (it == initializer_index_.end()) return nullptr;
    // A graph input with an initializer may be overridden at run time (IR >= 4):
    // its initializer is a default, not a constant.
    if (graph_inputs_.count(name) && model_.ir_version() >= 4) return nullptr;
    auto v = const_eval::from_tensor(graph_.initializer(it->second));
    if (!v) return nullptr;
    return &values_.emplace(name, std::move(*v)).first->second;
  }

  void add_initializer(const std::string& name, const Value& v) {
    *graph_.add_initializer() = const_eval::to_tensor(v, name);
    initializer_index_[name] = graph_.initializer_size() - 1;
    values_[name] = v;
    shapes_[name] = v.dims;
  }

  std::unordered_map<std::string, int> use_counts() const {
    std::unordered_map<std::string, int> uses;
    for (const auto& node : graph_.node())
      for (const auto& in : node.input())
        if (!in.empty()) ++uses[in];
    return uses;
  }

  void rename_uses(const std::string& from, const std::string& to) {
    for (auto& node : *graph_.mutable_node())
      for (auto& in : *node.mutable_input())
        if (in == from) in = to;
  }

  // Replaces every use of node `i`'s only output by its input `source`;
  // false when that cannot be done without renaming a graph output.
  bool bypass(int i, const std::string& source) {
    const auto& node = graph_.node(i);
    const std::string out = node.output(0);
    if (!graph_outputs_.count(out)) {
      rename_uses(out, source);
      return true;
    }
    // The output is the graph's: rename the source instead, when a node of
    // this graph produces it and nothing else reads it as a graph output.
    if (graph_outputs_.count(source) || graph_inputs_.count(source) ||
        initializer_index_.count(source))
      return false;
    for (auto& other : *graph_.mutable_node())
      for (auto& o : *other.mutable_output())
        if (o == source) o = out;
    rename_uses(source, out);
    return true;
  }

  bool has_attr(const onnx::NodeProto& node, const std::string& name) const {
    for (const auto& a : node.attribute())
      if (a.name() == name) return true;
    return false;
  }

  // One pass over the nodes in order; nodes removed are marked and dropped
  // at the end so that indices stay valid.
  bool sweep_nodes() {
    bool changed = false;
    std::vector<bool> remove(static_cast<size_t>(graph_.node_size()), false);
    for (int i = 0; i < graph_.node_size(); ++i) {
      auto* node = graph_.mutable_node(i);
      const std::string& op = node->op_type();
      const bool default_domain = node->domain().empty() || node->domain() == "ai.onnx";
      if (!default_domain || node->output_size() < 1) continue;
      // A trailing optional input given as "" is the same as one not given;
      // OpenCV 4.6 looks the empty name up (Pad's constant_value).
      if (node->input_size() > 1 && node->input(node->input_size() - 1).empty()) {
        while (node->input_size() > 1 && node->input(node->input_size() - 1).empty())
          node->mutable_input()->RemoveLast();
        count(kEmptyInput);
        changed = true;
      }
      if (op == "Identity" && node->input_size() == 1 && node->output_size() == 1) {
        if (bypass(i, node->input(0))) {
          remove[static_cast<size_t>(i)] = true;
          count(kIdentity);
          changed = true;
        }
        continue;
      }
      // Dropout in inference (training_mode absent or a constant false; or a
      // ratio of 0; the mask unused) passes its input through: an Identity by
      // ONNX's definition.
      if (op == "Dropout" && inference_dropout(*node) && bypass(i, node->input(0))) {
        remove[static_cast<size_t>(i)] = true;
        count(kIdentity);
        changed = true;
        continue;
      }
      if (try_fold(*node)) {
        remove[static_cast<size_t>(i)] = true;
        count(kFolded);
        changed = true;
        continue;
      }
      if (op == "Clip" && opset_ >= 11 && options_.opencv_forms && node->input_size() > 1 &&
          rewrite_clip(*node)) {
        count(kClip);
        changed = true;
        continue;
      }
      if ((op == "Conv" || op == "ConvTranspose") && !has_attr(*node, "kernel_shape") &&
          set_kernel_shape(*node)) {
        count(kKernelShape);
        changed = true;
        continue;
      }
      if (op == "Resize" && set_resize_defaults(*node)) {
        count(kResize);
        changed = true;
        continue;
      }
      if (op == "Expand" && node->input_size() == 2 && node->output_size() == 1) {
        auto in = shapes_.find(node->input(0));
        auto out = shapes_.find(node->output(0));
        if (in != shapes_.end() && out != shapes_.end() && in->second == out->second &&
            bypass(i, node->input(0))) {
          remove[static_cast<size_t>(i)] = true;
          count(kNoopExpand);
          changed = true;
        }
      }
    }
    if (changed) drop_marked(remove);
    return changed;
  }

  void drop_marked(const std::vector<bool>& remove) {
    google::protobuf::RepeatedPtrField<onnx::NodeProto> kept;
    for (int i = 0; i < graph_.node_size(); ++i)
      if (!remove[static_cast<size_t>(i)]) *kept.Add() = std::move(*graph_.mutable_node(i));
    graph_.mutable_node()->Swap(&kept);
  }

  bool try_fold(const onnx::NodeProto& node) {
    if (capped_ || !const_eval::foldable_op(node.op_type())) return false;
    for (const auto& o : node.output())
      if (graph_outputs_.count(o)) return false;  // a graph output stays computed
    const_eval::Context context;
    context.opset = opset_;
    context.max_elements =
        std::min<uint64_t>(uint64_t{1} << 20, options_.max_folded_elements - folded_elements_);
    std::vector<const Value*> inputs;
    for (const auto& in : node.input()) {
      inputs.push_back(constant(in));
      auto s = shapes_.find(in);
      context.input_shapes.push_back(s == shapes_.end() ? std::nullopt : std::optional(s->second));
    }
    auto outputs = const_eval::evaluate(node, inputs, context);
    if (!outputs || outputs->size() != static_cast<size_t>(node.output_size())) return false;
    for (size_t k = 0; k < outputs->size(); ++k) {
      folded_elements_ += (*outputs)[k].count();
      add_initializer(node.output(static_cast<int>(k)), (*outputs)[k]);
    }
    if (folded_elements_ >= options_.max_folded_elements) capped_ = true;
    return true;
  }

  bool inference_dropout(const onnx::NodeProto& node) {
    if (node.input_size() < 1 || node.input(0).empty()) return false;
    if (node.output_size() > 1 && !node.output(1).empty()) {
      const std::string& mask = node.output(1);
      if (graph_outputs_.count(mask)) return false;
      for (const auto& other : graph_.node())
        for (const auto& in : other.input())
          if (in == mask) return false;
    }
    if (opset_ < 12) {
      // Dropout-7 and -10 have no training mode; an is_test attribute (<= 6) is not handled.
      return opset_ >= 7;
    }
    if (node.input_size() < 3 || node.input(2).empty()) return true;
    const Value* mode = constant(node.input(2));
    if (!mode || mode->type != onnx::TensorProto::BOOL || mode->count() != 1) return false;
    if (mode->raw[0] == 0) return true;
    // Training mode with a ratio of exactly 0 drops nothing and scales by 1
    // (torchvision's Swin exports its attention dropout so).
    if (node.input_size() < 2 || node.input(1).empty()) return false;  // ratio 0.5
    const Value* ratio = constant(node.input(1));
    if (!ratio || ratio->type != onnx::TensorProto::FLOAT || ratio->count() != 1) return false;
    float r = 1;
    std::memcpy(&r, ratio->raw.data(), 4);
    return r == 0.0f;
  }

  bool rewrite_clip(onnx::NodeProto& node) {
    // Float bounds only (at least one given), each absent or a constant scalar.
    bool any = false;
    for (int k = 1; k < node.input_size() && k <= 2; ++k) any = any || !node.input(k).empty();
    if (!any) return false;
    float bounds[2] = {std::numeric_limits<float>::lowest(), std::numeric_limits<float>::max()};
    for (int k = 1; k < node.input_size() && k <= 2; ++k) {
      if (node.input(k).empty()) continue;
      const Value* v = constant(node.input(k));
      if (!v || v->type != onnx::TensorProto::FLOAT || v->count() != 1) return false;
      std::memcpy(&bounds[k - 1], v->raw.data(), 4);
    }
    if (node.input_size() > 3) return false;
    const char* names[2] = {"min", "max"};
    for (int k = 0; k < 2; ++k) {
      auto* a = node.add_attribute();
      a->set_name(names[k]);
      a->set_type(onnx::AttributeProto::FLOAT);
      a->set_f(bounds[k]);
    }
    while (node.input_size() > 1) node.mutable_input()->RemoveLast();
    return true;
  }

  bool set_kernel_shape(onnx::NodeProto& node) {
    if (node.input_size() < 2) return false;
    std::optional<std::vector<int64_t>> weight;
    if (const Value* w = constant(node.input(1))) weight = w->dims;
    if (!weight) {
      auto it = initializer_index_.find(node.input(1));
      if (it != initializer_index_.end()) {
        const auto& t = graph_.initializer(it->second);
        weight = std::vector<int64_t>(t.dims().begin(), t.dims().end());
      }
    }
    if (!weight) {
      auto s = shapes_.find(node.input(1));
      if (s != shapes_.end()) weight = s->second;
    }
    if (!weight || weight->size() < 3) return false;
    auto* a = node.add_attribute();
    a->set_name("kernel_shape");
    a->set_type(onnx::AttributeProto::INTS);
    for (size_t i = 2; i < weight->size(); ++i) a->add_ints((*weight)[i]);
    return true;
  }

  bool set_resize_defaults(onnx::NodeProto& node) {
    if (opset_ < 10) return false;
    bool changed = false;
    auto set_string = [&](const char* name, const char* value) {
      if (has_attr(node, name)) return;
      auto* a = node.add_attribute();
      a->set_name(name);
      a->set_type(onnx::AttributeProto::STRING);
      a->set_s(value);
      changed = true;
    };
    set_string("mode", "nearest");
    if (opset_ >= 11) {
      // The defaults of Resize-11 and Resize-13, spelled out.
      set_string("coordinate_transformation_mode", "half_pixel");
      std::string mode = "nearest";
      for (const auto& a : node.attribute())
        if (a.name() == "mode") mode = a.s();
      if (mode == "nearest") set_string("nearest_mode", "round_prefer_floor");
    } else {
      // Resize-10 samples as "asymmetric" does.
      set_string("coordinate_transformation_mode", "asymmetric");
    }
    return changed;
  }

  bool remove_dead() {
    bool changed = false;
    for (;;) {
      auto uses = use_counts();
      std::vector<bool> remove(static_cast<size_t>(graph_.node_size()), false);
      bool any = false;
      for (int i = 0; i < graph_.node_size(); ++i) {
        const auto& node = graph_.node(i);
        bool used = false;
        for (const auto& o : node.output())
          used = used || (!o.empty() && (uses.count(o) || graph_outputs_.count(o)));
        if (!used) {
          remove[static_cast<size_t>(i)] = true;
          count(kDeadNode);
          any = true;
        }
      }
      if (!any) break;
      drop_marked(remove);
      changed = true;
    }
    // Initializers nothing reads (and that are not graph outputs).
    auto uses = use_counts();
    std::vector<int> unused;
    for (int i = 0; i < graph_.initializer_size(); ++i) {
      const std::string& name = graph_.initializer(i).name();
      if (!uses.count(name) && !graph_outputs_.count(name)) unused.push_back(i);
    }
    if (!unused.empty()) {
      std::set<std::string> gone;
      for (int i = static_cast<int>(unused.size()); i-- > 0;) {
        gone.insert(graph_.initializer(unused[static_cast<size_t>(i)]).name());
        graph_.mutable_initializer()->DeleteSubrange(unused[static_cast<size_t>(i)], 1);
        count(kDeadInitializer);
      }
      auto* inputs = graph_.mutable_input();
      for (int i = inputs->size(); i-- > 0;)
        if (gone.count(inputs->Get(i).name())) inputs->DeleteSubrange(i, 1);
      for (const auto& name : gone) values_.erase(name);
      initializer_index_.clear();
      for (int i = 0; i < graph_.initializer_size(); ++i)
        initializer_index_[graph_.initializer(i).name()] = i;
      changed = true;
    }
    return changed;
  }

  onnx::ModelProto& model_;
  onnx::GraphProto& graph_;
  const NormalizeOptions& options_;
  ModelRewrites& report_;
  int64_t opset_ = 0;
  std::unordered_map<std::string, std::vector<int64_t>> shapes_;  // static shape facts
  std::unordered_map<std::string, int> initializer_index_;
  std::unordered_map<std::string, Value> values_;  // decoded constants
  std::unordered_set<std::string> graph_outputs_, graph_inputs_;
  uint64_t folded_elements_ = 0;
  bool capped_ = false;
};

}  // namespace

Result<InputShape> parse_input_shape(std::string_view text) {
  const std::string quoted = "--shape '" + std::string(text) + "'";
  const size_t eq = text.rfind('=');
  if (eq == std::string_view::npos || eq == 0)
    return fail(ErrorCode::invalid_argument,
                quoted + ": expected NAME=DIMS, e.g. input=1x3x224x224");
  InputShape shape;
  shape.name = std::string(text.substr(0, eq));
  std::string_view dims = text.substr(eq + 1);
  if (dims.empty()) return fail(ErrorCode::invalid_argument, quoted + ": no dimensions after '='");
  size_t start = 0;
  for (;;) {
    const size_t x = dims.find('x', start);
    std::string_view part = dims.substr(start, x == std::string_view::npos ? x : x - start);
    int64_t d = 0;
    auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), d);
    if (part.empty() || ec != std::errc() || end != part.data() + part.size())
      return fail(ErrorCode::invalid_argument,
                  quoted + ": dimension '" + std::string(part) + "' is not a whole number");
    if (d < 1)
      return fail(ErrorCode::invalid_argument,
                  quoted + ": dimension " + std::to_string(shape.dims.size()) + " is " +
                      std::to_string(d) + "; every dimension must be at least 1");
    if (d > std::numeric_limits<int32_t>::max())
      return fail(ErrorCode::invalid_argument,
                  quoted + ": dimension " + std::string(part) + " is larger than rig handles");
    shape.dims.push_back(d);
    if (x == std::string_view::npos) break;
    start = x + 1;
  }
  return shape;
}

Result<NormalizedModel> normalize_onnx(std::span<const std::byte> bytes,
                                       const NormalizeOptions& options, const std::string& name) {
  auto parsed = onnx_util::parse_model(bytes);
  if (!parsed) return tl::unexpected(named(name, parsed.error()));
  onnx::ModelProto& model = *parsed;
  if (auto ok = check_model_scope(model); !ok) return tl::unexpected(named(name, ok.error()));
  if (auto ok = onnx_util::check_attributes(model.graph()); !ok)
    return tl::unexpected(named(name, ok.error()));

  NormalizedModel out;
  ModelRewrites& report = out.report;
  report.ran = true;
  report.nodes_before = static_cast<uint64_t>(model.graph().node_size());
  bool inputs_changed = false;
  if (auto ok =
          fix_input_shapes(*model.mutable_graph(), options.shapes, report.notes, inputs_changed);
      !ok)
    return tl::unexpected(named(name, ok.error()));

  bool outputs_static = true;
  for (const auto& output : model.graph().output())
    outputs_static = outputs_static && static_dims(output.type()).has_value();
  // Shape facts come from ONNX shape inference; a round of folding can make
  // more of them known (a Reshape's target shape, once folded), so inference
  // runs again after a round that folded something, a few times at most.
  bool facts_failed = false;
  for (int attempt = 0;; ++attempt) {
    bool inferred = false;
    if (!facts_failed &&
        (needs_shape_facts(model.graph()) || (attempt == 0 && inputs_changed && !outputs_static))) {
      onnx::ModelProto inferring = inference_copy(model);
      auto* graph = inferring.mutable_graph();
      graph->clear_value_info();
      for (auto& output : *graph->mutable_output())
        if (!static_dims(output.type()) && output.type().has_tensor_type())
          output.mutable_type()->mutable_tensor_type()->clear_shape();
      // Without shape facts the pass still applies every rewrite that needs none.
      if (auto ok = onnx_util::infer_shapes_isolated(inferring, true); ok) {
        take_shape_facts(model, inferring);
        inferred = true;
      } else if (ok.error().code == ErrorCode::timeout) {
        return tl::unexpected(named(name, ok.error()));  // inspect would wait as long again
      } else {
        facts_failed = true;
        report.notes.push_back("shape facts unavailable (" + ok.error().message +
                               "): shape arithmetic was not folded");
      }
    }
    Pass pass(model, options, report);
    pass.load_facts();
    const uint64_t before_round = report.total();
    pass.run();
    const bool more =
        report.total() != before_round && inferred && needs_shape_facts(model.graph());
    if (more && attempt + 1 >= kMaxInferenceRounds)
      report.notes.push_back("normalisation stopped re-running shape inference at its cap of " +
                             std::to_string(kMaxInferenceRounds) + " runs");
    if (!more || attempt + 1 >= kMaxInferenceRounds) {
      pass.tidy_value_info();
      break;
    }
  }
  report.nodes_after = static_cast<uint64_t>(model.graph().node_size());
  if (report.total() == 0 && !inputs_changed) return out;  // the model as it was
  out.bytes = onnx_util::serialize(model);
  return out;
}

bool parses_as_onnx(std::span<const std::byte> bytes) {
  return onnx_util::parse_model(bytes).has_value();
}

Result<OnnxFacts> onnx_facts(std::span<const std::byte> bytes) {
  auto parsed = onnx_util::parse_model(bytes);
  if (!parsed) return tl::unexpected(parsed.error());
  const auto& graph = parsed->graph();
  OnnxFacts facts;
  facts.nodes = static_cast<uint64_t>(graph.node_size());
  for (const auto& o : parsed->opset_import())
    facts.opsets[o.domain() == "ai.onnx" ? "" : o.domain()] = o.version();
  for (const auto& node : graph.node()) {
    const std::string domain = node.domain() == "ai.onnx" ? "" : node.domain();
    ++facts.op_histogram[domain.empty() ? node.op_type() : domain + "::" + node.op_type()];
  }
  std::set<std::string> initializers;
  for (const auto& t : graph.initializer()) {
    initializers.insert(t.name());
    uint64_t n = 1;
    for (int64_t d : t.dims()) n = d > 0 ? n * static_cast<uint64_t>(d) : 0;
    facts.parameters += n;
    const auto type = static_cast<onnx::TensorProto::DataType>(t.data_type());
    const std::string type_name = onnx::TensorProto::DataType_IsValid(type)
                                      ? onnx::TensorProto::DataType_Name(type)
                                      : std::to_string(t.data_type());
    const size_t es = const_eval::element_size(t.data_type());
    facts.weight_bytes[type_name] += t.has_raw_data() ? t.raw_data().size() : n * es;
  }
  for (const auto& input : graph.input()) {
    if (initializers.count(input.name()) || !input.type().has_tensor_type()) continue;
    const auto& tensor = input.type().tensor_type();
    if (!tensor.has_shape()) {
      facts.dynamic_dimensions.push_back("input '" + input.name() + "': no shape declared");
      continue;
    }
    for (int i = 0; i < tensor.shape().dim_size(); ++i) {
      const auto& d = tensor.shape().dim(i);
      if (d.has_dim_value() && d.dim_value() >= 1) continue;
      facts.dynamic_dimensions.push_back(
          "input '" + input.name() + "' dimension " + std::to_string(i) +
          (d.has_dim_param() && !d.dim_param().empty() ? " ('" + d.dim_param() + "')" : ""));
    }
  }
  return facts;
}

}  // namespace rig

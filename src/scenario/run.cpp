// rig run, and the input/inference pieces rig check and rig compare share.
#include "rig/scenario/run.hpp"

#include <cstring>
#include <set>

#include "rig/model.hpp"
#include "rig/sha256.hpp"
#include "rig/units.hpp"

namespace rig {
namespace {

bool ends_with_npy(const std::string& path) {
  return path.size() >= 4 && path.compare(path.size() - 4, 4, ".npy") == 0;
}

std::string tensor_text(ElementType type, std::span<const int64_t> shape) {
  return std::string(to_string(type)) + " " + shape_text(shape);
}

std::string input_names(const ModelInfo& model) {
  std::string out;
  for (const auto& t : model.inputs) out += (out.empty() ? "'" : ", '") + t.name + "'";
  return out;
}

}  // namespace

Result<void> validate(const RunSettings& s) {
  if (!(s.atol >= 0)) return fail(ErrorCode::invalid_argument, "--atol must be >= 0");
  if (!(s.rtol >= 0)) return fail(ErrorCode::invalid_argument, "--rtol must be >= 0");
  return {};
}

// The most bytes an input file for `tensor` can hold and be accepted: its
// frame (a raw file), or its frame after the largest .npy preamble and
// header. read_file refuses a larger regular file before reading it, and
// reads a stream (/dev/zero, a pipe) at most one byte past it.
uint64_t input_file_limit(const TensorInfo& tensor, const std::string& path) {
  return tensor.bytes + (ends_with_npy(path) ? 12 + kNpyMaxHeaderBytes : 0);
}

Result<std::vector<std::byte>> input_from_file(const TensorInfo& tensor, const std::string& path,
                                               std::span<const std::byte> file) {
  if (!ends_with_npy(path)) {
    if (file.size() != tensor.bytes)
      return fail(ErrorCode::invalid_argument, path + ": input '" + tensor.name + "' (" +
                                                   tensor_text(tensor.type, tensor.shape) +
                                                   ") takes " + std::to_string(tensor.bytes) +
                                                   " bytes, the file has " +
                                                   std::to_string(file.size()));
    return std::vector<std::byte>(file.begin(), file.end());
  }
  auto npy = parse_npy(file);
  if (!npy) return fail(ErrorCode::invalid_argument, path + ": " + npy.error().message);
  if (npy->type != tensor.type || npy->shape != tensor.shape)
    return fail(ErrorCode::invalid_argument, path + ": input '" + tensor.name + "' expects " +
                                                 tensor_text(tensor.type, tensor.shape) +
                                                 ", the file holds " +
                                                 tensor_text(npy->type, npy->shape));
  return std::vector<std::byte>(npy->data.begin(), npy->data.end());
}

Result<std::vector<std::vector<std::byte>>> prepare_inputs(const ModelInfo& model,
                                                           const std::vector<InputItem>& items,
                                                           uint64_t seed,
                                                           std::vector<std::string>* sources) {
  const size_t n = model.inputs.size();
  std::vector<std::vector<std::byte>> inputs(n);
  std::vector<std::string> from(n);
  if (items.empty()) {
    for (size_t i = 0; i < n; ++i) {
      inputs[i] = generated_input(model.inputs[i], seed + i);
      from[i] = "generated (seed " + std::to_string(seed + i) + ")";
    }
    if (sources) *sources = std::move(from);
    return inputs;
  }
  // Named items first, then the positional ones fill the inputs left, in order.
  std::vector<std::string> paths(n);
  std::vector<std::string> positional;
  for (const InputItem& item : items) {
    const size_t eq = item.find('=');
    bool named = false;
    if (eq != std::string::npos) {
      const std::string name = item.substr(0, eq);
      for (size_t i = 0; i < n; ++i) {
        if (model.inputs[i].name != name) continue;
        if (!paths[i].empty())
          return fail(ErrorCode::invalid_argument,
                      "--input names input '" + name + "' more than once");
        paths[i] = item.substr(eq + 1);
        named = true;
      }
    }
    if (!named) positional.push_back(item);
  }
  size_t next = 0;
  for (size_t i = 0; i < n && next < positional.size(); ++i)
    if (paths[i].empty()) paths[i] = positional[next++];
  size_t given = 0;
  for (const auto& p : paths) given += !p.empty();
  if (next < positional.size() || given < n)
    return fail(ErrorCode::invalid_argument,
                "model '" + model.name + "' has " + std::to_string(n) + " input" +
                    (n == 1 ? "" : "s") + " (" + input_names(model) + "); --input gave " +
                    std::to_string(items.size()) + " file" + (items.size() == 1 ? "" : "s"));
  for (size_t i = 0; i < n; ++i) {
    auto file = read_file(paths[i], input_file_limit(model.inputs[i], paths[i]));
    if (!file) {
      Error e = file.error();
      if (e.code == ErrorCode::limit_exceeded)
        e.message = "input '" + model.inputs[i].name + "' (" +
                    tensor_text(model.inputs[i].type, model.inputs[i].shape) + ") takes " +
                    std::to_string(model.inputs[i].bytes) + " bytes: " + e.message;
      return tl::unexpected(e);
    }
    auto bytes = input_from_file(model.inputs[i], paths[i], *file);
    if (!bytes) return tl::unexpected(bytes.error());
    inputs[i] = std::move(*bytes);
    from[i] = paths[i];
  }
  if (sources) *sources = std::move(from);
  return inputs;
}

Result<std::shared_ptr<const InputFiles>> read_input_files(const std::vector<InputItem>& items) {
  if (items.empty()) return std::shared_ptr<const InputFiles>();
  struct Item {
    std::string name;  // "" for a positional item
    std::string path;
    std::vector<std::byte> bytes;
  };
  auto read = std::make_shared<std::vector<Item>>();
  auto files = std::make_shared<InputFiles>();
  for (const InputItem& item : items) {
    Item it;
    const size_t eq = item.find('=');
    // A path may hold '=': NAME=FILE only when the part before it is a
    // plausible input name (no '/').
    if (eq != std::string::npos && eq > 0 && item.substr(0, eq).find('/') == std::string::npos) {
      it.name = item.substr(0, eq);
      it.path = item.substr(eq + 1);
    } else {
      it.path = item;
    }
    auto bytes = read_file(it.path);
    if (!bytes) return fail(bytes.error().code, "--input: " + bytes.error().message);
    it.bytes = std::move(*bytes);
    files->files.push_back({it.path, sha256_hex(it.bytes), it.bytes.size()});
    read->push_back(std::move(it));
  }
  files->map = [read](const ModelInfo& model) -> Result<std::vector<InputFrame>> {
    const size_t n = model.inputs.size();
    std::vector<std::vector<const Item*>> per_input(n);
    std::vector<const Item*> positional;
    for (const Item& it : *read) {
      if (it.name.empty()) {
        positional.push_back(&it);
        continue;
      }
      size_t i = 0;
      while (i < n && model.inputs[i].name != it.name) ++i;
      if (i == n)
        return fail(ErrorCode::invalid_argument, "--input " + it.name + "=" + it.path +
                                                     ": model '" + model.name + "' has no input '" +
                                                     it.name +
                                                     "' (its inputs: " + input_names(model) + ")");
      per_input[i].push_back(&it);
    }
    std::vector<size_t> unnamed;
    for (size_t i = 0; i < n; ++i)
      if (per_input[i].empty()) unnamed.push_back(i);
    if (!positional.empty() && unnamed.empty())
      return fail(ErrorCode::invalid_argument,
                  "--input " + positional.front()->path + ": every input of model '" + model.name +
                      "' is named by NAME=FILE; give this file a NAME= too");
    for (size_t j = 0; j < positional.size(); ++j)
      per_input[unnamed[j % unnamed.size()]].push_back(positional[j]);
    const size_t frames = per_input.empty() ? 0 : per_input.front().size();
    for (size_t i = 0; i < n; ++i)
      if (per_input[i].size() != frames || frames == 0)
        return fail(ErrorCode::invalid_argument,
                    "--input: model '" + model.name + "' has " + std::to_string(n) + " input" +
                        (n == 1 ? "" : "s") + " (" + input_names(model) + "); each needs the " +
                        "same number of files (one per frame), and input '" + model.inputs[i].name +
                        "' got " + std::to_string(per_input[i].size()) + " where '" +
                        model.inputs.front().name + "' got " + std::to_string(frames));
    std::vector<InputFrame> out(frames, InputFrame(n));
    for (size_t i = 0; i < n; ++i)
      for (size_t k = 0; k < frames; ++k) {
        const Item& it = *per_input[i][k];
        auto bytes = input_from_file(model.inputs[i], it.path, it.bytes);
        if (!bytes) return fail(bytes.error().code, "--input " + bytes.error().message);
        out[k][i] = std::move(*bytes);
      }
    return out;
  };
  return std::shared_ptr<const InputFiles>(std::move(files));
}

Result<Inference> infer(Device& device, std::span<const std::vector<std::byte>> inputs) {
  const ModelInfo& model = device.model_info();
  Inference out;
  out.outputs.resize(model.outputs.size());
  Bindings b;
  for (const auto& in : inputs) b.inputs.emplace_back(in.data(), in.size());
  for (size_t i = 0; i < model.outputs.size(); ++i) {
    out.outputs[i].assign(model.outputs[i].bytes, std::byte{0});
    b.outputs.emplace_back(out.outputs[i].data(), out.outputs[i].size());
  }
  auto binding = device.bind(b);
  if (!binding) return tl::unexpected(binding.error());
  const Nanos t0 = device.clock().now();
  auto timings = device.run(*binding);
  if (!timings) return tl::unexpected(timings.error());
  const Nanos elapsed = device.clock().now() - t0;
  if (auto bad = implausible_timings(
          *timings, timings_on_clock(device.info(), device.clock()) ? elapsed : kMaxDuration))
    return tl::unexpected(std::move(*bad));
  out.timings = *timings;
  return out;
}

Result<RunResult> run_model(Device& device, const ModelSource& source, const RunSettings& s) {
  if (auto ok = validate(s); !ok) return tl::unexpected(ok.error());
  RunResult r;
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

  // References are read (and checked against the outputs) before running, so
  // a bad file is reported without a device run.
  std::vector<NpyView> refs;
  std::vector<std::vector<std::byte>> ref_files;
  if (!s.references.empty() && s.references.size() != r.model.outputs.size())
    return fail(ErrorCode::invalid_argument,
                "model '" + r.model.name + "' has " + std::to_string(r.model.outputs.size()) +
                    " outputs; --reference gave " + std::to_string(s.references.size()) + " files");
  for (size_t i = 0; i < s.references.size(); ++i) {
    auto file = read_file(s.references[i]);
    if (!file) return tl::unexpected(file.error());
    ref_files.push_back(std::move(*file));
  }
  for (size_t i = 0; i < s.references.size(); ++i) {
    auto npy = parse_npy(ref_files[i]);
    if (!npy)
      return fail(ErrorCode::invalid_argument, s.references[i] + ": " + npy.error().message);
    const TensorInfo& t = r.model.outputs[i];
    if (npy->type != t.type || npy->shape != t.shape)
      return fail(ErrorCode::invalid_argument,
                  s.references[i] + ": output '" + t.name + "' is " + tensor_text(t.type, t.shape) +
                      ", the reference holds " + tensor_text(npy->type, npy->shape));
    refs.push_back(std::move(*npy));
  }

  std::vector<std::string> sources;
  auto inputs = prepare_inputs(r.model, s.inputs, s.seed, &sources);
  if (!inputs) return tl::unexpected(inputs.error());
  for (size_t i = 0; i < inputs->size(); ++i)
    r.inputs.push_back(
        {r.model.inputs[i], sources[i], tensor_stats(r.model.inputs[i].type, (*inputs)[i])});
  auto run = infer(device, *inputs);
  if (!run) return tl::unexpected(run.error());
  r.timings = run->timings;
  for (size_t i = 0; i < run->outputs.size(); ++i) {
    const TensorInfo& t = r.model.outputs[i];
    r.outputs.push_back({t, tensor_stats(t.type, run->outputs[i]), std::move(run->outputs[i])});
  }
  for (size_t i = 0; i < refs.size(); ++i) {
    auto c =
        compare_tensors(r.outputs[i].info.type, r.outputs[i].bytes, refs[i].data, s.atol, s.rtol);
    if (!c) return tl::unexpected(c.error());
    ReferenceRecord rec{s.references[i], *c, c->outside == 0};
    r.references_passed = r.references_passed && rec.passed;
    r.references.push_back(std::move(rec));
  }
  return r;
}

}  // namespace rig

#include "cli/options.hpp"

#include <unistd.h>

#include <filesystem>

#include "rig/units.hpp"

namespace rig::cli {

Result<Nanos> positive_duration(const std::string& option, const std::string& text) {
  auto d = parse_duration(text);
  if (!d) return fail(ErrorCode::invalid_argument, option + ": " + d.error().message);
  if (*d <= Nanos(0))
    return fail(ErrorCode::invalid_argument, option + " must be positive, got '" + text + "'");
  return *d;
}

Result<void> check_writable(const std::string& option, const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(path, ec))
    return fail(ErrorCode::io, option + ": '" + path + "' is a directory");
  fs::path dir = fs::path(path).parent_path();
  if (dir.empty()) dir = ".";
  if (!fs::is_directory(dir, ec))
    return fail(ErrorCode::io, option + ": directory '" + dir.string() + "' does not exist");
  if (::access(dir.c_str(), W_OK) != 0)
    return fail(ErrorCode::io, option + ": directory '" + dir.string() + "' is not writable");
  return {};
}

Result<ModelSource> resolve_model(const std::string& path) {
  ModelSource source;
  if (path.empty()) {
    auto demo = ensure_demo_model(default_cache_dir());
    if (!demo) return tl::unexpected(demo.error());
    source.path = *demo;
    source.name = "demo-cnn";
    return source;
  }
  if (path.rfind("server:", 0) == 0) {  // loaded by name under the server's --model-dir
    source.path = path;
    source.name = std::filesystem::path(path.substr(7)).stem().string();
    return source;
  }
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    return fail(ErrorCode::not_found, "model file '" + path + "' does not exist");
  source.path = path;
  return source;
}

}  // namespace rig::cli

#include "cli/environment_info.hpp"

#include <google/protobuf/stubs/common.h>
#include <opencv2/core/version.hpp>

#include <string>

#include "rig/version.hpp"

namespace rig::cli {

void add_library_versions(Environment& env) {
  env.facts["rig_version"] = std::string(kVersion);
  env.facts["opencv_version"] = CV_VERSION;
  env.facts["protobuf_version"] =
      google::protobuf::internal::VersionString(GOOGLE_PROTOBUF_VERSION);
  env.facts["onnx_version"] = RIG_ONNX_VERSION;
}

}  // namespace rig::cli

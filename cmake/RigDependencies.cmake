# Every dependency comes from a Debian 12 or Debian 13 package (scripts/install-deps.sh).
find_package(Threads REQUIRED)
find_package(tl-expected CONFIG REQUIRED)
find_package(nlohmann_json CONFIG REQUIRED)
find_package(CLI11 CONFIG REQUIRED)
find_package(Protobuf REQUIRED)
find_package(ONNX CONFIG REQUIRED)
find_package(SQLite3 REQUIRED)  # libsqlite3-dev: the run history

# libopencv-dnn-dev ships no CMake config: find the headers and libraries.
find_path(OPENCV_INCLUDE_DIR opencv2/dnn.hpp PATH_SUFFIXES opencv4 REQUIRED)
find_library(OPENCV_CORE_LIBRARY opencv_core REQUIRED)
find_library(OPENCV_DNN_LIBRARY opencv_dnn REQUIRED)
add_library(rig_opencv INTERFACE)
target_include_directories(rig_opencv SYSTEM INTERFACE ${OPENCV_INCLUDE_DIR})
target_link_libraries(rig_opencv INTERFACE ${OPENCV_DNN_LIBRARY} ${OPENCV_CORE_LIBRARY})

# ONNX's CMake package names its targets `onnx` and `onnx_proto` in 1.12
# (Debian 12), `ONNX::onnx` and `ONNX::onnx_proto` in 1.17 (Debian 13).
if(TARGET ONNX::onnx)
  set(_onnx_lib ONNX::onnx)
  set(_onnx_proto_lib ONNX::onnx_proto)
elseif(TARGET onnx)
  set(_onnx_lib onnx)
  set(_onnx_proto_lib onnx_proto)
else()
  message(FATAL_ERROR "ONNX ${ONNX_VERSION}'s CMake package (${ONNX_DIR}) defines neither "
    "ONNX::onnx (as 1.17 does) nor onnx (as 1.12 does); install libonnx-dev "
    "(scripts/install-deps.sh)")
endif()
# ONNX's imported targets carry no SYSTEM flag; re-export its headers as
# system headers so its warnings do not trip -Werror.
get_target_property(_onnx_inc ${_onnx_lib} INTERFACE_INCLUDE_DIRECTORIES)
add_library(rig_onnx INTERFACE)
target_include_directories(rig_onnx SYSTEM INTERFACE ${_onnx_inc})
target_link_libraries(rig_onnx INTERFACE ${_onnx_lib} ${_onnx_proto_lib} protobuf::libprotobuf)
target_compile_definitions(rig_onnx INTERFACE ONNX_NAMESPACE=onnx ONNX_ML=1)

# HailoRT (optional): the hailo device needs >= 5.1.1, where
# ConfiguredInferModel::run_async_for_duration first appears. HailoRT 5.x
# serves Hailo-10 and Hailo-15 only; Hailo-8 needs HailoRT 4.x, which rig does
# not support. AUTO builds the device when HailoRT is found, ON requires it,
# OFF skips it. What configure prints, in each case, is in docs/devices/hailo.md.
set(RIG_WITH_HAILO AUTO CACHE STRING "Build the hailo device: AUTO, ON or OFF")
set_property(CACHE RIG_WITH_HAILO PROPERTY STRINGS AUTO ON OFF)
set(RIG_HAVE_HAILORT OFF)
# AUTO/ON/OFF in any case; anything else is refused by name.
string(TOUPPER "${RIG_WITH_HAILO}" _rig_hailo_mode)
if(NOT _rig_hailo_mode MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "RIG_WITH_HAILO=${RIG_WITH_HAILO}: must be AUTO, ON or OFF")
endif()
if(NOT _rig_hailo_mode STREQUAL "OFF")
  find_package(HailoRT 5.1.1 CONFIG QUIET)
  if(HailoRT_FOUND AND TARGET HailoRT::libhailort)
    set(RIG_HAVE_HAILORT ON)
    message(STATUS "HailoRT ${HailoRT_VERSION}: building the hailo device")
  else()
    set(_found "no HailoRT CMake package was found")
    if(HailoRT_CONSIDERED_VERSIONS)
      set(_found "found HailoRT ${HailoRT_CONSIDERED_VERSIONS}, which is not >= 5.1.1 (5.x)")
      if(HailoRT_CONSIDERED_VERSIONS MATCHES "(^|;)4\\.")
        string(APPEND _found
          ": HailoRT 4.x is the Hailo-8/8L runtime, with no InferModel::run_async_for_duration"
          " and a different API; rig's hailo device needs HailoRT 5.x (Hailo-10H, Hailo-15)")
      endif()
    endif()
    if(_rig_hailo_mode STREQUAL "ON")
      message(FATAL_ERROR
        "RIG_WITH_HAILO=ON, but ${_found}. Install HailoRT >= 5.1.1 (libhailort with its "
        "CMake package, from Hailo's developer zone, Raspberry Pi OS's h10-hailort package, or "
        "a source build of hailo-ai/hailort), point CMAKE_PREFIX_PATH or HailoRT_DIR at it, or "
        "configure with -DRIG_WITH_HAILO=AUTO or OFF. See docs/devices/hailo.md.")
    else()
      message(STATUS "HailoRT >= 5.1.1 not found (${_found}): the hailo device is not built")
    endif()
  endif()
endif()

# Every dependency comes from a Debian 12 package (scripts/install-deps.sh).
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

# ONNX's imported targets carry no SYSTEM flag; re-export its headers as
# system headers so its warnings do not trip -Werror.
get_target_property(_onnx_inc onnx INTERFACE_INCLUDE_DIRECTORIES)
add_library(rig_onnx INTERFACE)
target_include_directories(rig_onnx SYSTEM INTERFACE ${_onnx_inc})
target_link_libraries(rig_onnx INTERFACE onnx onnx_proto protobuf::libprotobuf)
target_compile_definitions(rig_onnx INTERFACE ONNX_NAMESPACE=onnx ONNX_ML=1)

# The fake Hailo-10H device server for one HailoRT version, and its smoke test
# against that version's real client. Included by per_version/CMakeLists.txt
# with RIG_HAILORT_VERSION, RIG_HAILORT_SUFFIX, RIG_HAILORT_SRC set and
# HailoRT::libhailort found; hef/targets.cmake comes first.
set(_fd_dir ${CMAKE_CURRENT_LIST_DIR})
set(_fd_sfx ${RIG_HAILORT_SUFFIX})

# What differs between versions, read from the version's own source:
# fixed 2068-byte frames where rpc_connection.hpp has fill_message_buffer
# (5.2.0) and header + body otherwise (5.1.1); the throttling notification
# where rpc.proto has it (5.2.0); SYSTEM__RESET where serializer.hpp has it.
file(READ ${RIG_HAILORT_SRC}/hrpc/rpc_connection.hpp _fd_rpc_connection)
file(READ ${RIG_HAILORT_SRC}/hrpc_protocol/rpc.proto _fd_rpc_proto)
file(READ ${RIG_HAILORT_SRC}/hrpc_protocol/serializer.hpp _fd_serializer)
string(FIND "${_fd_rpc_connection}" "fill_message_buffer" _fd_pos)
if(_fd_pos GREATER -1)
  set(_fd_fixed_frames 1)
else()
  set(_fd_fixed_frames 0)
endif()
string(FIND "${_fd_rpc_proto}" "ThrottlingStateChangeNotification" _fd_pos)
if(_fd_pos GREATER -1)
  set(_fd_throttling 1)
else()
  set(_fd_throttling 0)
endif()
string(FIND "${_fd_serializer}" "SYSTEM__RESET" _fd_pos)
if(_fd_pos GREATER -1)
  set(_fd_system_reset 1)
else()
  set(_fd_system_reset 0)
endif()

# The C++ of this version's rpc.proto, in its own library without rig's
# warning flags; SYSTEM headers for the server. rpc.proto is LITE_RUNTIME;
# libprotobuf-lite, as the HEF reader links, so one runtime is in the process.
set(_fd_gen ${CMAKE_CURRENT_BINARY_DIR}/fake_device_generated)
add_custom_command(
  OUTPUT ${_fd_gen}/rpc.pb.cc ${_fd_gen}/rpc.pb.h
  COMMAND ${CMAKE_COMMAND} -E make_directory ${_fd_gen}
  COMMAND protobuf::protoc --cpp_out=${_fd_gen} -I ${RIG_HAILORT_SRC}/hrpc_protocol
          ${RIG_HAILORT_SRC}/hrpc_protocol/rpc.proto
  DEPENDS ${RIG_HAILORT_SRC}/hrpc_protocol/rpc.proto protobuf::protoc
  COMMENT "protoc rpc.proto (HailoRT ${RIG_HAILORT_VERSION})"
  VERBATIM)
add_library(fake_hailo_rpc_pb_${_fd_sfx} STATIC ${_fd_gen}/rpc.pb.cc)
target_include_directories(fake_hailo_rpc_pb_${_fd_sfx} SYSTEM PUBLIC ${_fd_gen})
target_link_libraries(fake_hailo_rpc_pb_${_fd_sfx} PUBLIC protobuf::libprotobuf-lite)
target_compile_options(fake_hailo_rpc_pb_${_fd_sfx} PRIVATE -w)

add_executable(fake_hailo_device_${_fd_sfx}
  ${_fd_dir}/fake_device_server.cpp
  ${_fd_dir}/actions.cpp
  ${_fd_dir}/framing.cpp
  ${_fd_dir}/script.cpp)
target_include_directories(fake_hailo_device_${_fd_sfx} PRIVATE ${PROJECT_SOURCE_DIR}/tests)
target_compile_definitions(fake_hailo_device_${_fd_sfx} PRIVATE
  RIG_HAILORT_VERSION="${RIG_HAILORT_VERSION}"
  RIG_FAKE_HAILO_FIXED_FRAMES=${_fd_fixed_frames}
  RIG_FAKE_HAILO_HAS_THROTTLING=${_fd_throttling}
  RIG_FAKE_HAILO_HAS_SYSTEM_RESET=${_fd_system_reset})
target_link_libraries(fake_hailo_device_${_fd_sfx} PRIVATE fake_hailo_rpc_pb_${_fd_sfx}
  nlohmann_json::nlohmann_json Threads::Threads rig_build_flags)
# The HEF reader, once hef/ builds it: without it the server cannot refuse
# latency measurement on NMS or multi-input models, and takes one buffer per input.
if(TARGET synthetic_hef_${_fd_sfx})
  target_link_libraries(fake_hailo_device_${_fd_sfx} PRIVATE synthetic_hef_${_fd_sfx})
  target_compile_definitions(fake_hailo_device_${_fd_sfx} PRIVATE RIG_FAKE_HAILO_HAS_HEF_READER=1)
else()
  target_compile_definitions(fake_hailo_device_${_fd_sfx} PRIVATE RIG_FAKE_HAILO_HAS_HEF_READER=0)
endif()

# The smoke test: the real client (libhailort, not the server's protobuf
# code) against the server. HailoRT writes $HOME/.hailo/hailort/hailort.log
# and ./hailort.log at load, so HOME and the working directory are in the
# build tree, and the tests are listed from the source (gtest_add_tests).
add_executable(fake_device_smoke_${_fd_sfx} ${_fd_dir}/fake_device_smoke.cpp)
target_include_directories(fake_device_smoke_${_fd_sfx} PRIVATE ${PROJECT_SOURCE_DIR}/tests)
target_link_libraries(fake_device_smoke_${_fd_sfx} PRIVATE HailoRT::libhailort GTest::gtest
  GTest::gtest_main nlohmann_json::nlohmann_json Threads::Threads rig_build_flags)
set(_fd_hef_dir "")
if(DEFINED RIG_TEST_HEF_DIR AND TARGET test_hefs_${_fd_sfx})
  set(_fd_hef_dir ${RIG_TEST_HEF_DIR})
  add_dependencies(fake_device_smoke_${_fd_sfx} test_hefs_${_fd_sfx})
endif()
add_dependencies(fake_device_smoke_${_fd_sfx} fake_hailo_device_${_fd_sfx})
target_compile_definitions(fake_device_smoke_${_fd_sfx} PRIVATE
  RIG_FAKE_HAILO_SERVER="$<TARGET_FILE:fake_hailo_device_${_fd_sfx}>"
  RIG_FAKE_HAILO_HEF_DIR="${_fd_hef_dir}"
  RIG_FAKE_HAILO_WORK_DIR="${CMAKE_CURRENT_BINARY_DIR}/fake_device_smoke"
  RIG_HAILORT_MAJOR=${RIG_HAILORT_MAJOR}
  RIG_HAILORT_MINOR=${RIG_HAILORT_MINOR}
  RIG_HAILORT_REVISION=${RIG_HAILORT_REVISION}
  RIG_FAKE_HAILO_HAS_HEF_READER=$<BOOL:$<TARGET_EXISTS:synthetic_hef_${_fd_sfx}>>)
set(_fd_home ${CMAKE_CURRENT_BINARY_DIR}/fake_device_smoke/home)
set(_fd_cwd ${CMAKE_CURRENT_BINARY_DIR}/fake_device_smoke/cwd)
file(MAKE_DIRECTORY ${_fd_home} ${_fd_cwd})
gtest_add_tests(TARGET fake_device_smoke_${_fd_sfx} SOURCES ${_fd_dir}/fake_device_smoke.cpp
                WORKING_DIRECTORY ${_fd_cwd} TEST_PREFIX "hailort_${_fd_sfx}."
                TEST_LIST _fd_tests)
set_tests_properties(${_fd_tests} PROPERTIES
  ENVIRONMENT "HOME=${_fd_home};HAILO_REQUEST_TIMEOUT_SECONDS=3"
  ENVIRONMENT_MODIFICATION "HAILORT_LOGGER_PATH=unset:"
  LABELS "hailort" TIMEOUT 60)
add_dependencies(rig_hailort_real_tests fake_device_smoke_${_fd_sfx})

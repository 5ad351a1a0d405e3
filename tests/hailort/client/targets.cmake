# rig's hailo device and CLI on one HailoRT version's real client, and the
# tests that drive them against the fake device server (included by
# per_version/CMakeLists.txt; every target ends in _${RIG_HAILORT_SUFFIX}).
#
# rig_hailo_real_*: the hailo device's sources and the device registry,
# compiled against this version's headers with the hailo device built in. An
# OBJECT library: its objects are linked first, so the registry in
# librig_devices.a (built without HailoRT) is never pulled into these links.
set(_sfx ${RIG_HAILORT_SUFFIX})
add_library(rig_hailo_real_${_sfx} OBJECT ${RIG_HAILO_DEVICE_SOURCES}
                                          ${PROJECT_SOURCE_DIR}/src/devices/registry.cpp)
target_include_directories(rig_hailo_real_${_sfx} PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_compile_definitions(rig_hailo_real_${_sfx} PRIVATE
  RIG_WITH_HAILO_DEVICE=1 RIG_HAILO_SETTING="ON" RIG_ONNXRUNTIME_SETTING="${RIG_WITH_ONNXRUNTIME}"
  $<TARGET_PROPERTY:rig_devices,COMPILE_DEFINITIONS>)
target_link_libraries(rig_hailo_real_${_sfx} PUBLIC HailoRT::libhailort rig_core rig_model
                                             PRIVATE rig_build_flags)

# The CLI on the real client: the main build's CLI objects and this registry.
add_executable(rig_hailort_${_sfx} ${PROJECT_SOURCE_DIR}/src/cli/main.cpp)
target_include_directories(rig_hailort_${_sfx} PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_link_libraries(rig_hailort_${_sfx} PRIVATE rig_hailo_real_${_sfx} rig_cli_objects
                                                  rig_devices HailoRT::libhailort rig_build_flags)

# The tests: the conformance suite on hailo:device_id=<the fake's address>,
# and the CLI's commands end to end (bench, loop, run, check, serve).
add_executable(hailo_real_client_test_${_sfx} ${CMAKE_CURRENT_LIST_DIR}/../client/real_client_test.cpp
                                             ${CMAKE_CURRENT_LIST_DIR}/../client/real_client_log_test.cpp)
target_include_directories(hailo_real_client_test_${_sfx} PRIVATE
  ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/tests ${PROJECT_SOURCE_DIR}/tests/devices
  ${CMAKE_CURRENT_LIST_DIR}/..)
target_link_libraries(hailo_real_client_test_${_sfx} PRIVATE
  rig_hailo_real_${_sfx} rig_server rig_scenario rig_report rig_devices rig_model rig_core
  HailoRT::libhailort nlohmann_json::nlohmann_json rig_build_flags GTest::gtest GTest::gtest_main)
add_dependencies(hailo_real_client_test_${_sfx} rig_hailort_${_sfx} fake_hailo_device_${_sfx}
                 test_hefs_${_sfx})
target_compile_definitions(hailo_real_client_test_${_sfx} PRIVATE
  RIG_HAILORT_VERSION="${RIG_HAILORT_VERSION}"
  RIG_HAILORT_MAJOR=${RIG_HAILORT_MAJOR} RIG_HAILORT_MINOR=${RIG_HAILORT_MINOR}
  RIG_BINARY="$<TARGET_FILE:rig_hailort_${_sfx}>"
  RIG_FAKE_DEVICE="$<TARGET_FILE:fake_hailo_device_${_sfx}>"
  RIG_TEST_HEF_DIR="${RIG_TEST_HEF_DIR}")
# HailoRT creates its logger before main and writes $HOME/.hailo/hailort/
# hailort.log and ./hailort.log: HOME and the working directory are in the
# build tree (as for the tests on the double). Requests time out after 3 s
# (HAILO_REQUEST_TIMEOUT_SECONDS, hrpc/client.cpp) rather than 10.
set(_home ${CMAKE_CURRENT_BINARY_DIR}/hailo_home)
set(_cwd ${CMAKE_CURRENT_BINARY_DIR}/hailo_cwd)
file(MAKE_DIRECTORY ${_home} ${_cwd})
gtest_add_tests(TARGET hailo_real_client_test_${_sfx}
                SOURCES ${CMAKE_CURRENT_LIST_DIR}/../client/real_client_test.cpp
                        ${PROJECT_SOURCE_DIR}/tests/devices/device_conformance_suite.hpp
                WORKING_DIRECTORY ${_cwd} TEST_PREFIX "hailort_${RIG_HAILORT_VERSION}/"
                TEST_LIST _real_tests)
set_tests_properties(${_real_tests} PROPERTIES
  ENVIRONMENT "HOME=${_home};HAILO_REQUEST_TIMEOUT_SECONDS=3;RIG_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache;RIG_HISTORY=${CMAKE_BINARY_DIR}/test-history/history.sqlite"
  ENVIRONMENT_MODIFICATION "HAILORT_LOGGER_PATH=unset:"
  LABELS "hailort" TIMEOUT 120)
add_dependencies(rig_hailort_real_tests hailo_real_client_test_${_sfx})

# Which log file rig reads, as a user HailoRT's access(W_OK) checks apply to
# (root passes them): run_unprivileged.sh lays out HOME and the working
# folder per case, and runs the test as uid 65534 when ctest runs as root.
foreach(_case readonly_main no_log)
  set(_test RealClientLog.AMainLogFileThisUserCannotWriteIsNotTheOneRead)
  if(_case STREQUAL "no_log")
    set(_test RealClientLog.NoLogFileThisUserCanWriteIsSaidAtOpen)
  endif()
  add_test(NAME hailort_${RIG_HAILORT_VERSION}/${_test}
           COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/../client/run_unprivileged.sh
                   ${CMAKE_CURRENT_BINARY_DIR}/log_${_case} ${_case}
                   $<TARGET_FILE:hailo_real_client_test_${_sfx}> --gtest_filter=${_test})
  set_tests_properties(hailort_${RIG_HAILORT_VERSION}/${_test} PROPERTIES
    ENVIRONMENT "HAILO_REQUEST_TIMEOUT_SECONDS=1" LABELS "hailort" TIMEOUT 60
    FAIL_REGULAR_EXPRESSION "\\[  SKIPPED \\]")
endforeach()

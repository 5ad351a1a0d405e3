# Configures rig with RIG_WITH_HAILO=ON twice: with no HailoRT, and with a
# HailoRT 5.0.0 package; both must fail at configure and say what to install.
foreach(case none old)
  set(dir ${WORK_DIR}/${case})
  file(REMOVE_RECURSE ${dir})
  set(args -S ${SOURCE_DIR} -B ${dir} -DRIG_WITH_HAILO=ON -DRIG_BUILD_TESTS=OFF
           -DRIG_BUILD_BENCH=OFF)
  if(case STREQUAL "old")
    list(APPEND args -DHailoRT_DIR=${FAKE_OLD})
  else()
    list(APPEND args -DHailoRT_DIR=${dir}/nowhere)
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} ${args} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  if(rc EQUAL 0)
    message(FATAL_ERROR "${case}: configure with RIG_WITH_HAILO=ON succeeded without HailoRT >= 5.1.1")
  endif()
  string(REGEX REPLACE "[ \t\r\n]+" " " err "${err}")  # CMake wraps its messages
  if(NOT err MATCHES "Install HailoRT >= 5.1.1")
    message(FATAL_ERROR "${case}: the error does not say what to install:\n${err}")
  endif()
  if(case STREQUAL "old" AND NOT err MATCHES "found HailoRT 5.0.0")
    message(FATAL_ERROR "old: the error does not name the version found:\n${err}")
  endif()
  file(REMOVE_RECURSE ${dir})
endforeach()

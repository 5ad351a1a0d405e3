# Configures rig with RIG_WITH_HAILO=ON three times: with no HailoRT, with a
# HailoRT 5.0.0 package and with a 4.20.0 one (the Hailo-8 runtime); each
# must fail at configure and say what to install, naming a version found.
# The first spells the value in lower case (the switch is case-insensitive);
# a value that is none of AUTO, ON and OFF is refused by name.
foreach(case none old four)
  set(dir ${WORK_DIR}/${case})
  file(REMOVE_RECURSE ${dir})
  set(mode ON)
  if(case STREQUAL "none")
    set(mode on)
  endif()
  set(args -S ${SOURCE_DIR} -B ${dir} -DRIG_WITH_HAILO=${mode} -DRIG_BUILD_TESTS=OFF
           -DRIG_BUILD_BENCH=OFF)
  if(case STREQUAL "old")
    list(APPEND args -DHailoRT_DIR=${FAKE_OLD})
  elseif(case STREQUAL "four")
    list(APPEND args -DHailoRT_DIR=${FAKE_FOUR})
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
  if(case STREQUAL "four" AND NOT err MATCHES "found HailoRT 4.20.0.*Hailo-8.*needs HailoRT 5.x")
    message(FATAL_ERROR "four: the error does not say 4.x is Hailo-8's and 5.x is needed:\n${err}")
  endif()
  file(REMOVE_RECURSE ${dir})
endforeach()

set(dir ${WORK_DIR}/bogus)
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${dir} -DRIG_WITH_HAILO=maybe
                        -DRIG_BUILD_TESTS=OFF -DRIG_BUILD_BENCH=OFF
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
string(REGEX REPLACE "[ \t\r\n]+" " " err "${err}")
if(rc EQUAL 0 OR NOT err MATCHES "RIG_WITH_HAILO=maybe: must be AUTO, ON or OFF")
  message(FATAL_ERROR "bogus: RIG_WITH_HAILO=maybe was not refused by name:\n${err}")
endif()
file(REMOVE_RECURSE ${dir})

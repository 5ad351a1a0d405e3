# Synthetic HEFs for one HailoRT version (included by per_version/, which sets
# RIG_HAILORT_VERSION, RIG_HAILORT_SUFFIX, RIG_HAILORT_SRC, RIG_HAILORT_MAJOR,
# _MINOR, _REVISION and imports HailoRT::libhailort). Defines, each name
# ending in _${RIG_HAILORT_SUFFIX}:
#   synthetic_hef_pb_    hef.proto's generated code (protoc at build time)
#   synthetic_hef_spec_  named_spec, host_frame_bytes, hailort_group_order:
#                        no protobuf, links
#                        beside libhailort
#   synthetic_hef_       write_hef, read_hef (+ the two above); never in a
#                        process with libhailort, which exports the same
#                        global ProtoHEF* types
#   make_test_hef_       make_test_hef KIND OUT.hef [--header-version N]
#   test_hefs_           (ALL) the named HEFs: hefs/KIND.hef, header
#                        version 0, and hefs/v3/KIND.hef, version 3
#   synthetic_hef_test_  the writer and reader, without libhailort
#   check_hef_           the HEFs through libhailort's real parser
# and, for later includes in this scope:
#   RIG_TEST_HEF_DIR     the folder of the version 0 HEFs (v3/ in it)
#   RIG_TEST_HEF_KINDS   the named kinds
#   RIG_TEST_HEF_TARGET  test_hefs_${RIG_HAILORT_SUFFIX}, to depend on

set(_hef_src ${CMAKE_CURRENT_LIST_DIR})
set(_sfx ${RIG_HAILORT_SUFFIX})

# xxh3 for the version 3 header, header-only (XXH_INLINE_ALL) as HailoRT
# uses it: Debian's libxxhash-dev.
find_path(RIG_XXHASH_INCLUDE_DIR xxhash.h)
if(NOT RIG_XXHASH_INCLUDE_DIR)
  message(FATAL_ERROR "real-client tests (RIG_HAILORT_ROOT): xxhash.h not found; "
    "install libxxhash-dev (scripts/install-deps.sh, test profile)")
endif()

# Generated code in its own target without rig's warnings; its headers are
# SYSTEM headers for the writer.
set(_hef_gen ${CMAKE_CURRENT_BINARY_DIR}/hef_proto)
add_custom_command(
  OUTPUT ${_hef_gen}/hef.pb.cc ${_hef_gen}/hef.pb.h
  COMMAND ${CMAKE_COMMAND} -E make_directory ${_hef_gen}
  COMMAND protobuf::protoc --cpp_out=${_hef_gen} -I ${RIG_HAILORT_SRC}/libhailort
          ${RIG_HAILORT_SRC}/libhailort/hef.proto
  DEPENDS ${RIG_HAILORT_SRC}/libhailort/hef.proto protobuf::protoc
  COMMENT "protoc hef.proto (HailoRT ${RIG_HAILORT_VERSION})"
  VERBATIM)
add_library(synthetic_hef_pb_${_sfx} STATIC ${_hef_gen}/hef.pb.cc)
target_include_directories(synthetic_hef_pb_${_sfx} SYSTEM PUBLIC ${_hef_gen})
target_link_libraries(synthetic_hef_pb_${_sfx} PUBLIC protobuf::libprotobuf-lite)
target_compile_options(synthetic_hef_pb_${_sfx} PRIVATE -w)

add_library(synthetic_hef_spec_${_sfx} STATIC ${_hef_src}/named_specs.cpp)
target_include_directories(synthetic_hef_spec_${_sfx} PUBLIC ${_hef_src})
target_compile_definitions(synthetic_hef_spec_${_sfx} PRIVATE
  RIG_HAILORT_MAJOR=${RIG_HAILORT_MAJOR} RIG_HAILORT_MINOR=${RIG_HAILORT_MINOR})
target_link_libraries(synthetic_hef_spec_${_sfx} PRIVATE rig_build_flags)

add_library(synthetic_hef_${_sfx} STATIC ${_hef_src}/synthetic_hef.cpp)
target_include_directories(synthetic_hef_${_sfx} PUBLIC ${_hef_src})
target_include_directories(synthetic_hef_${_sfx} SYSTEM PRIVATE ${RIG_XXHASH_INCLUDE_DIR})
target_compile_definitions(synthetic_hef_${_sfx} PRIVATE
  RIG_HAILORT_MAJOR=${RIG_HAILORT_MAJOR} RIG_HAILORT_MINOR=${RIG_HAILORT_MINOR}
  RIG_HAILORT_REVISION=${RIG_HAILORT_REVISION})
target_link_libraries(synthetic_hef_${_sfx} PRIVATE rig_build_flags synthetic_hef_pb_${_sfx}
                                            PUBLIC synthetic_hef_spec_${_sfx})

add_executable(make_test_hef_${_sfx} ${_hef_src}/make_test_hef.cpp)
target_link_libraries(make_test_hef_${_sfx} PRIVATE synthetic_hef_${_sfx} rig_build_flags)

set(RIG_TEST_HEF_DIR ${CMAKE_CURRENT_BINARY_DIR}/hefs)
set(RIG_TEST_HEF_KINDS single_u8 multi_input nms two_groups)
set(_hef_files "")
foreach(_kind ${RIG_TEST_HEF_KINDS})
  add_custom_command(
    OUTPUT ${RIG_TEST_HEF_DIR}/${_kind}.hef ${RIG_TEST_HEF_DIR}/v3/${_kind}.hef
    COMMAND ${CMAKE_COMMAND} -E make_directory ${RIG_TEST_HEF_DIR}/v3
    COMMAND make_test_hef_${_sfx} ${_kind} ${RIG_TEST_HEF_DIR}/${_kind}.hef
    COMMAND make_test_hef_${_sfx} ${_kind} ${RIG_TEST_HEF_DIR}/v3/${_kind}.hef
            --header-version 3
    DEPENDS make_test_hef_${_sfx}
    COMMENT "synthetic HEF ${_kind} (HailoRT ${RIG_HAILORT_VERSION})"
    VERBATIM)
  list(APPEND _hef_files ${RIG_TEST_HEF_DIR}/${_kind}.hef ${RIG_TEST_HEF_DIR}/v3/${_kind}.hef)
endforeach()
add_custom_target(test_hefs_${_sfx} ALL DEPENDS ${_hef_files})
set(RIG_TEST_HEF_TARGET test_hefs_${_sfx})

# Writer and reader in one process, no libhailort: round trips, and hostile
# bytes the reader must refuse without crashing.
add_executable(synthetic_hef_test_${_sfx} ${_hef_src}/synthetic_hef_test.cpp)
target_link_libraries(synthetic_hef_test_${_sfx} PRIVATE synthetic_hef_${_sfx}
                      synthetic_hef_pb_${_sfx} rig_build_flags GTest::gtest GTest::gtest_main)
gtest_discover_tests(synthetic_hef_test_${_sfx} TEST_PREFIX "synthetic_hef_${_sfx}."
                     DISCOVERY_TIMEOUT 60 PROPERTIES LABELS "hailort")

# libhailort creates its logger before main and writes
# $HOME/.hailo/hailort/hailort.log and ./hailort.log, so the tests are listed
# from the source (gtest_add_tests; discovery would run the binary with the
# real HOME) and run with HOME and the working directory in the build tree.
add_executable(check_hef_${_sfx} ${_hef_src}/check_hef.cpp)
target_link_libraries(check_hef_${_sfx} PRIVATE HailoRT::libhailort synthetic_hef_spec_${_sfx}
                                                rig_build_flags GTest::gtest GTest::gtest_main)
target_compile_definitions(check_hef_${_sfx} PRIVATE RIG_TEST_HEF_DIR="${RIG_TEST_HEF_DIR}")
add_dependencies(check_hef_${_sfx} test_hefs_${_sfx})
set(_check_hef_home ${CMAKE_CURRENT_BINARY_DIR}/check_hef_home)
set(_check_hef_cwd ${CMAKE_CURRENT_BINARY_DIR}/check_hef_cwd)
file(MAKE_DIRECTORY ${_check_hef_home} ${_check_hef_cwd})
gtest_add_tests(TARGET check_hef_${_sfx} SOURCES ${_hef_src}/check_hef.cpp
                TEST_PREFIX "check_hef_${_sfx}." WORKING_DIRECTORY ${_check_hef_cwd}
                TEST_LIST _check_hef_tests)
set_tests_properties(${_check_hef_tests} PROPERTIES
  ENVIRONMENT "HOME=${_check_hef_home}"
  ENVIRONMENT_MODIFICATION "HAILORT_LOGGER_PATH=unset:" LABELS "hailort")
add_dependencies(rig_hailort_real_tests check_hef_${_sfx} synthetic_hef_test_${_sfx})

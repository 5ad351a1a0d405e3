# rig_component(NAME SOURCES...) helpers: warnings, -Werror and sanitizers in one place.
add_library(rig_build_flags INTERFACE)
target_compile_options(rig_build_flags INTERFACE -Wall -Wextra -Wpedantic -Wshadow
                                                 -Wnon-virtual-dtor -Wconversion -Wno-sign-conversion)
if(RIG_WERROR)
  target_compile_options(rig_build_flags INTERFACE -Werror)
endif()
if(RIG_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer
                      -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()

# Declares a static component library with its explicit source list.
function(rig_component name)
  add_library(${name} STATIC ${ARGN})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR}/include
                                            PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(${name} PRIVATE rig_build_flags)
  target_link_libraries(${name} PUBLIC tl::expected Threads::Threads)
endfunction()

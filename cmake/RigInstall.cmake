# cmake --install: the rig executable, librig_c.so with rig.h and rig.sigs,
# the Python package, a CMake package (find_package(rig) -> rig::rig_c) and a
# pkg-config file (rig.pc).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(RIG_PYTHON_DIR "lib/python3/dist-packages"
    CACHE STRING "where the Python package is installed, relative to the prefix")

install(TARGETS rig_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS rig_c EXPORT rigTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${PROJECT_SOURCE_DIR}/include/rig/rig.h ${PROJECT_SOURCE_DIR}/include/rig/rig.sigs
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/rig)

# The package finds rig.sigs beside it and the library through _location.py:
# the library directory relative to the package.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/python/rig DESTINATION ${RIG_PYTHON_DIR}
        PATTERN __pycache__ EXCLUDE)
install(FILES ${PROJECT_SOURCE_DIR}/include/rig/rig.sigs DESTINATION ${RIG_PYTHON_DIR}/rig)
file(RELATIVE_PATH rig_python_to_lib /prefix/${RIG_PYTHON_DIR}/rig /prefix/${CMAKE_INSTALL_LIBDIR})
file(WRITE ${PROJECT_BINARY_DIR}/python-install/_location.py
     "# Written by cmake/RigInstall.cmake: librig_c.so relative to this package.\n"
     "LIBRARY_DIR = \"${rig_python_to_lib}\"\n")
install(FILES ${PROJECT_BINARY_DIR}/python-install/_location.py DESTINATION ${RIG_PYTHON_DIR}/rig)

install(EXPORT rigTargets NAMESPACE rig:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/rig)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/rigConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/rigConfig.cmake
                              INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/rig)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/rigConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/rigConfig.cmake ${PROJECT_BINARY_DIR}/rigConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/rig)

# Relocatable: the prefix is found from where rig.pc lies.
file(RELATIVE_PATH RIG_PC_TO_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
configure_file(${PROJECT_SOURCE_DIR}/cmake/rig.pc.in ${PROJECT_BINARY_DIR}/rig.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/rig.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

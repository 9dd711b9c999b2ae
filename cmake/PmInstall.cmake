# Install rules: the headers (with the generated pm/version.hpp), pmach, a
# CMake config package (find_package(ParametricMachines CONFIG) gives the
# target ParametricMachines::pm) and a pkg-config file (parametric-machines).
# Components: `dev` (headers and package files) and `cli` (pmach).
include(CMakePackageConfigHelpers)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/src/pm DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        COMPONENT dev FILES_MATCHING PATTERN "*.hpp")
install(FILES ${PROJECT_BINARY_DIR}/include/pm/version.hpp
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/pm COMPONENT dev)
install(TARGETS pm EXPORT ParametricMachinesTargets COMPONENT dev)
install(TARGETS pmach RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT cli)

# Header-only, so the package files are architecture-independent (share/).
set(PM_CMAKE_DIR ${CMAKE_INSTALL_DATADIR}/cmake/ParametricMachines)
install(EXPORT ParametricMachinesTargets NAMESPACE ParametricMachines::
        DESTINATION ${PM_CMAKE_DIR} COMPONENT dev)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/ParametricMachinesConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/ParametricMachinesConfig.cmake
                              INSTALL_DESTINATION ${PM_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/ParametricMachinesConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion ARCH_INDEPENDENT)
install(FILES ${PROJECT_BINARY_DIR}/ParametricMachinesConfig.cmake
              ${PROJECT_BINARY_DIR}/ParametricMachinesConfigVersion.cmake
        DESTINATION ${PM_CMAKE_DIR} COMPONENT dev)

# pkg-config: Boost has no .pc file; its headers are in the default path on
# Debian. OpenMP is a compiler flag.
configure_file(${PROJECT_SOURCE_DIR}/cmake/parametric-machines.pc.in
               ${PROJECT_BINARY_DIR}/parametric-machines.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/parametric-machines.pc
        DESTINATION ${CMAKE_INSTALL_DATADIR}/pkgconfig COMPONENT dev)

# cmake -P: builds and runs consumer/ against the project, MODE=installed
# (cmake --install into WORK_DIR/prefix, then find_package; also pmach from
# the prefix and the pkg-config file) or MODE=subdirectory (add_subdirectory).
include(${CMAKE_CURRENT_LIST_DIR}/run.cmake)

file(REMOVE_RECURSE ${WORK_DIR})
set(configure_args)
if(MODE STREQUAL "installed")
  set(prefix ${WORK_DIR}/prefix)
  foreach(component dev cli)
    run("cmake --install --component ${component}"
        ${CMAKE_COMMAND} --install ${PM_BUILD_DIR} --prefix ${prefix} --component ${component})
  endforeach()
  run("installed pmach --version" ${prefix}/bin/pmach --version)
  if(NOT out STREQUAL "pmach ${VERSION}\n")
    message(FATAL_ERROR "installed pmach --version printed '${out}', expected 'pmach ${VERSION}'")
  endif()
  # pkg-config: the same program compiled with the flags of the .pc file.
  find_program(PKG_CONFIG pkg-config REQUIRED)
  set(ENV{PKG_CONFIG_PATH} ${prefix}/share/pkgconfig)
  run("pkg-config" ${PKG_CONFIG} --cflags --libs parametric-machines)
  separate_arguments(pc_flags UNIX_COMMAND "${out}")
  run("compile with pkg-config flags"
      ${CXX} -std=c++20 ${pc_flags} -DPM_EXPECTED_VERSION="${VERSION}" ${CONSUMER_DIR}/main.cpp
      -o ${WORK_DIR}/consumer_pkg_config)
  run("consumer built with pkg-config" ${WORK_DIR}/consumer_pkg_config)
  message(STATUS "pkg-config: ${out}")
  list(APPEND configure_args -DCMAKE_PREFIX_PATH=${prefix})
else()
  # The test tools must not be needed: tell find_package they are absent.
  list(APPEND configure_args -DPM_SOURCE_DIR=${PM_SOURCE_DIR} -DCMAKE_DISABLE_FIND_PACKAGE_Catch2=ON
       -DCMAKE_DISABLE_FIND_PACKAGE_rapidcheck=ON -DCMAKE_DISABLE_FIND_PACKAGE_benchmark=ON)
endif()

run("configure the consumer (${MODE})"
    ${CMAKE_COMMAND} -S ${CONSUMER_DIR} -B ${WORK_DIR}/build -G ${GENERATOR}
    -DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM} -DCMAKE_CXX_COMPILER=${CXX}
    -DPM_CONSUMER_MODE=${MODE} -DPM_EXPECTED_VERSION=${VERSION} ${configure_args})
run("build the consumer (${MODE})" ${CMAKE_COMMAND} --build ${WORK_DIR}/build --target consumer)
run("consumer (${MODE})" ${WORK_DIR}/build/consumer)
message(STATUS "${MODE}: ${out}")

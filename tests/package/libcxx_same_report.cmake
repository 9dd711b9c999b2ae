# cmake -P: builds pmach twice with the same compiler (clang++) and flags,
# once with libstdc++ and once with libc++ (under WORK_DIR, kept between runs
# so that a rerun rebuilds only what changed), runs `pmach check --json
# --cases 20` with both and requires the two reports to be the same bytes: a
# seed must name the same cases whatever the standard library. (The same
# compiler on both sides: with -march=native, GCC's and Clang's builds differ
# in the last bits of some floating-point results, which says nothing about
# seeds.) Unoptimised (-O0): what is compared is which cases a seed names,
# and at -O3 the two builds cost about 9 of the suite's minutes against 2.
include(${CMAKE_CURRENT_LIST_DIR}/run.cmake)

if(NOT CLANGXX)
  message(FATAL_ERROR "clang++ not found: install clang, libc++-14-dev and libc++abi-14-dev "
                      "(bash scripts/install-deps.sh --tests)")
endif()

# The reports may hold ';', so no CMake lists of them.
foreach(lib libstdc++ libc++)
  set(build ${WORK_DIR}/${lib})
  run("configure pmach with clang++ and ${lib}"
      ${CMAKE_COMMAND} -S ${PM_SOURCE_DIR} -B ${build} -G ${GENERATOR}
      -DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM} -DCMAKE_BUILD_TYPE=None
      -DCMAKE_CXX_COMPILER=${CLANGXX} "-DCMAKE_CXX_FLAGS=-O0 -stdlib=${lib}"
      -DCMAKE_EXE_LINKER_FLAGS=-stdlib=${lib} -DPM_NATIVE=${NATIVE} -DPM_BUILD_TESTS=OFF
      -DPM_BUILD_EXAMPLES=OFF -DPM_BUILD_BENCHMARKS=OFF -DPM_INSTALL=OFF)
  run("build pmach with clang++ and ${lib}" ${CMAKE_COMMAND} --build ${build} --target pmach)
  set(exe ${build}/src/cli/pmach)
  # Not vacuous: the binary must really use that library.
  string(REPLACE "+" "\\+" lib_regex "${lib}")
  run("ldd ${exe}" ldd ${exe})
  if(NOT out MATCHES "${lib_regex}\\.so")
    message(FATAL_ERROR "${exe} does not link ${lib}, so the comparison would prove nothing:\n${out}")
  endif()
  # 20 cases per row rather than the default 100: every row still draws its
  # cases from its seed (the same 122 rows), in about a sixth of the time
  # (measured with the release pmach: 5.9 -> 0.9 s).
  execute_process(COMMAND ${exe} check --json --cases 20 RESULT_VARIABLE code_${lib}
                  OUTPUT_VARIABLE report_${lib} ERROR_VARIABLE err)
  # The rows' timings ("seconds") differ between any two runs: left out.
  string(REGEX REPLACE "\"seconds\": [^,\n]*" "\"seconds\": -" report_${lib} "${report_${lib}}")
  file(WRITE ${WORK_DIR}/${lib}.json "${report_${lib}}")
  if(NOT report_${lib} MATCHES "\"version\": \"${VERSION}\"" OR NOT report_${lib} MATCHES "\"law\": ")
    message(FATAL_ERROR "${exe} check --json (exit ${code_${lib}}) gave no versioned report with "
                        "results:\n${report_${lib}}${err}")
  endif()
endforeach()

if(NOT code_libstdc++ STREQUAL code_libc++ OR NOT report_libstdc++ STREQUAL report_libc++)
  message(FATAL_ERROR "pmach check --json --cases 20 differs between libstdc++ (exit ${code_libstdc++}) and "
                      "libc++ (exit ${code_libc++}): diff ${WORK_DIR}/libstdc++.json "
                      "${WORK_DIR}/libc++.json")
endif()
string(LENGTH "${report_libc++}" bytes)
message(STATUS "pmach check --json: the same ${bytes} bytes (timings aside) with libstdc++ and libc++ "
               "(exit ${code_libc++})")

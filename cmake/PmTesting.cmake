# One executable per test source file, each registered with CTest, so that a
# new test file needs no edit here and a failing law fails `ctest`.

# The tests and their harness are optimised at -Og rather than the build
# type's -O3 (the sanitizers' and coverage's -O0 aside), which the suite's
# budget needs: GCC 12 compiles the template-heavy tests in 70-80 % of the
# time of -O1 (tests/validate/conformance.cpp 21.9 -> 15.6 s,
# property_tests/kernels.cpp 26.6 -> 21.2 s), itself about 60 % of -O3's,
# while they run about 5 % longer than at -O1 (114 -> 120 s over all of
# them); Catch2's main compiles in half the time of -O3 (18.5 -> 9.4 s). The
# -O3 code is tested too, through pmach (tests/cli/, pmach check --kernels)
# and the Python package.
macro(pm_test_optimisation target)
  if(NOT PM_SANITIZE AND NOT PM_COVERAGE)
    target_compile_options(${target} PRIVATE -Og)
  endif()
endmacro()

add_library(pm_catch_main STATIC ${PROJECT_SOURCE_DIR}/tests/support/catch_main.cpp)
target_link_libraries(pm_catch_main PUBLIC Catch2::Catch2)
pm_test_optimisation(pm_catch_main)

# The compile settings of every test and of the precompiled header they share.
macro(pm_test_settings target)
  target_include_directories(${target} PRIVATE ${dir} ${PROJECT_SOURCE_DIR})
  target_link_libraries(${target} PRIVATE pm pm_catch_main ${ARG_LIBS})
  pm_test_optimisation(${target})
  # Where the tests find examples/data, whatever the build's path style.
  target_compile_definitions(${target} PRIVATE PM_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
endmacro()

# The headers most tests include, precompiled once per test directory with
# PM_PCH (CMakeLists.txt): a test parses only what it adds to them.
set(PM_TEST_PCH <catch2/catch.hpp> <pm/category.hpp> <pm/layers.hpp> <pm/kernels.hpp> <pm/machine.hpp>
    <pm/validate.hpp> <pm/validate/conformance.hpp> <pm/validate/kernel_checks.hpp>
    <pm/io/machine_format.hpp> <pm/io/layer_format.hpp> <pm/io/batch_npy.hpp> <pm/io/output.hpp>)

# pm_add_test_dir(<dir> <prefix> [LIBS ...] [PCH ...] [ENVIRONMENT ...]): every
# <dir>/**/*.cpp becomes a test executable <prefix>_<stem>; PCH adds headers to
# PM_TEST_PCH; ENVIRONMENT is set for each test's run under ctest.
function(pm_add_test_dir dir prefix)
  cmake_parse_arguments(ARG "" "" "LIBS;PCH;ENVIRONMENT" ${ARGN})
  if(PM_PCH)
    # The tests reuse the header of an object of their own settings, so that
    # it is built once and never waits for a test.
    set(pch ${prefix}_pch)
    add_library(${pch} OBJECT ${PROJECT_SOURCE_DIR}/tests/support/pch.cpp)
    pm_test_settings(${pch})
    target_precompile_headers(${pch} PRIVATE ${PM_TEST_PCH} ${ARG_PCH})
  endif()
  file(GLOB_RECURSE sources CONFIGURE_DEPENDS ${dir}/*.cpp)
  foreach(src ${sources})
    file(RELATIVE_PATH rel ${dir} ${src})
    # support/ holds shared helpers; package/ builds outside projects of its own.
    if(rel MATCHES "(^|/)support/" OR rel MATCHES "^package/")
      continue()
    endif()
    string(REGEX REPLACE "\\.cpp$" "" stem ${rel})
    string(REPLACE "/" "_" stem ${stem})
    set(target ${prefix}_${stem})
    add_executable(${target} ${src})
    pm_test_settings(${target})
    if(PM_PCH)
      target_precompile_headers(${target} REUSE_FROM ${pch})
    endif()
    add_test(NAME ${target} COMMAND ${target})
    if(ARG_ENVIRONMENT)
      set_tests_properties(${target} PROPERTIES ENVIRONMENT "${ARG_ENVIRONMENT}")
    endif()
  endforeach()
endfunction()

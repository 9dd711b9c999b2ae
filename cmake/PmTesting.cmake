# One executable per test source file, each registered with CTest, so that a
# new test file needs no edit here and a failing law fails `ctest`.
add_library(pm_catch_main STATIC ${PROJECT_SOURCE_DIR}/tests/support/catch_main.cpp)
target_link_libraries(pm_catch_main PUBLIC Catch2::Catch2)

# pm_add_test_dir(<dir> <prefix> [LIBS ...]): every <dir>/**/*.cpp becomes a
# test executable <prefix>_<stem>.
function(pm_add_test_dir dir prefix)
  cmake_parse_arguments(ARG "" "" "LIBS" ${ARGN})
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
    target_include_directories(${target} PRIVATE ${dir} ${PROJECT_SOURCE_DIR})
    target_link_libraries(${target} PRIVATE pm pm_catch_main ${ARG_LIBS})
    # Optimised at -O1 rather than the build type's -O3 (the sanitizers' and
    # coverage's -O0 aside): GCC compiles the template-heavy tests in about
    # 60 % of the time, which the suite's budget needs. The -O3 code is
    # tested too, through pmach (tests/cli/, pmach check --kernels) and the
    # Python package.
    if(NOT PM_SANITIZE AND NOT PM_COVERAGE)
      target_compile_options(${target} PRIVATE -O1)
    endif()
    # Where the tests find examples/data, whatever the build's path style.
    target_compile_definitions(${target} PRIVATE PM_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
    add_test(NAME ${target} COMMAND ${target})
  endforeach()
endfunction()

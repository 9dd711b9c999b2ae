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
    # Where the tests find examples/data, whatever the build's path style.
    target_compile_definitions(${target} PRIVATE PM_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
    add_test(NAME ${target} COMMAND ${target})
  endforeach()
endfunction()

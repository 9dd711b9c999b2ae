#!/usr/bin/env bash
# Installs what is missing, then runs the whole test suite in two builds:
#  1. AddressSanitizer + UndefinedBehaviorSanitizer over the unit tests of the
#     core, the readers, the validator and the CLI, and a compile of the
#     benchmarks (build-asan/), compiled by
#     clang++ at -O0 with precompiled headers (PM_PCH), the fastest to build
#     of the compilers and levels measured (CMakeLists.txt);
#  2. the release build with warnings as errors: every unit test, property
#     test, fuzzer, the proofs, the traceability check and the package tests
#     (an outside consumer, the report with libc++) (build/).
# The ctest summary of the release build is the last thing printed.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh --tests
jobs="$(nproc)"

# test_validate_conformance runs in the release build only: under the
# sanitizers it took 54 s of the suite's 20 minutes (machines checked through
# exact rationals). Its checks of implementations (check_layer,
# check_machine) then run without them; the laws and comparisons they call
# run under them in test_validate_validate.
sanitized=(test_category_spans law_spans test_io_npy test_io_formats test_validate_validate
           test_cli_cli pmach test_machine_errors test_machine_examples law_machines
           test_layers_layers test_layers_persistence test_kernels_kernels test_numeric_uniform
           test_validate_samples)
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER=clang++ \
  -DPM_SANITIZE=ON -DPM_NATIVE=OFF -DPM_PROOFS=OFF -DPM_WERROR=ON
# The benchmarks are compiled and linked here, so that their sources cannot
# rot: clang++ at -O0 builds them in about a quarter of the time of the
# release build's GCC -O3 (34 against 128 s of compile jobs, both measured in
# two-job builds). They run, for their numbers, from a release build of their
# own (README, Benchmarks).
benchmarks=(pm_bench_machine pm_bench_check_equal pm_bench_kernels)
cmake --build build-asan -j "$jobs" --target "${sanitized[@]}" "${benchmarks[@]}"
regex="^($(IFS='|'; echo "${sanitized[*]}"))$"
(cd build-asan && ctest --output-on-failure -j "$jobs" --timeout 900 -R "$regex")

# The tests and examples are asked for by name: scripts/main.sh configures
# the same build/ without them. The benchmarks were compiled above.
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DPM_WERROR=ON -DPM_BUILD_TESTS=ON \
  -DPM_BUILD_EXAMPLES=ON -DPM_BUILD_BENCHMARKS=OFF
cmake --build build -j "$jobs"
cd build
ctest --output-on-failure -j "$jobs" --timeout 900

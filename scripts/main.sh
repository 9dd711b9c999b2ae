#!/usr/bin/env bash
# Installs what is missing for the main job (no test tools), builds pmach and
# the Python package `pmach` (installed for /usr/bin/python3), and runs the main job: the law suite
# on the built-in catalogue of layers and machines (pmach check).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DPM_BUILD_TESTS=OFF \
  -DPM_BUILD_EXAMPLES=OFF -DPM_BUILD_BENCHMARKS=OFF
cmake --build build -j "$(nproc)" --target pmach
# The Python package, installed for /usr/bin/python3 (python/CMakeLists.txt).
cmake --build build -j "$(nproc)" --target pmach_python
cmake --install build --component python
./build/src/cli/pmach check "$@"

#!/usr/bin/env bash
# Installs what is missing for the main job (no test tools), builds pmach and
# the Python package `pmach` (installed for /usr/bin/python3), and runs the main job: the law suite
# on the built-in catalogue of layers and machines (pmach check).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
# PM_WERROR=ON (as .ci/run sets it) builds with the flags of scripts/test.sh,
# whose build of build/ then reuses these objects instead of compiling them again.
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DPM_BUILD_TESTS=OFF \
  -DPM_BUILD_EXAMPLES=OFF -DPM_BUILD_BENCHMARKS=OFF -DPM_WERROR="${PM_WERROR:-OFF}"
# pmach and the Python package (installed for /usr/bin/python3, see
# python/CMakeLists.txt) in one build, so that their translation units share the cores.
cmake --build build -j "$(nproc)" --target pmach pmach_python
cmake --install build --component python
./build/src/cli/pmach check "$@"

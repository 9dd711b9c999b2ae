#!/usr/bin/env bash
# Installs what is missing, builds pmach, and runs the main job: the law
# suite on the built-in catalogue of layers and machines (pmach check).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build -j "$(nproc)" --target pmach
./build/src/cli/pmach check "$@"

#!/usr/bin/env bash
# Installs what is missing for the main job (no test tools), builds pmach and
# the Python package `pmach`, installs the package with pip, and runs the main
# job: the law suite on the built-in catalogue of layers and machines (pmach
# check).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
# PM_WERROR=ON (as .ci/run sets it) builds with the flags of scripts/test.sh,
# whose build of build/ then reuses these objects instead of compiling them again.
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DPM_BUILD_TESTS=OFF \
  -DPM_BUILD_EXAMPLES=OFF -DPM_BUILD_BENCHMARKS=OFF -DPM_WERROR="${PM_WERROR:-OFF}"
# pmach and the Python module in one build, so that their translation units share the cores.
cmake --build build -j "$(nproc)" --target pmach pmach_python
# The Python package, installed by pip from the same build tree (setup.py
# builds the target pmach_python in PMACH_CMAKE_BUILD_DIR: nothing is compiled
# twice): into the active virtual environment if there is one, else for
# /usr/bin/python3, system-wide as root and in the user's site directory
# otherwise. Debian marks its interpreter as externally managed (PEP 668);
# --no-deps leaves every Debian package alone.
pip_args=(install --no-build-isolation --no-deps --no-index --quiet .)
if [[ -n "${VIRTUAL_ENV:-}" ]]; then
  python=("$VIRTUAL_ENV/bin/python")
else
  python=(/usr/bin/python3)
  pip_args+=(--break-system-packages)
  if [[ "$(id -u)" == 0 ]]; then pip_args+=(--root-user-action=ignore); else pip_args+=(--user); fi
fi
PMACH_CMAKE_BUILD_DIR=build "${python[@]}" -m pip "${pip_args[@]}"
"${python[@]}" -c 'import pmach; print("pmach", pmach.__version__, "installed in", pmach.__path__[0])'
./build/src/cli/pmach check "$@"

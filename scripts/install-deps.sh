#!/usr/bin/env bash
# Installs every Debian package that the build, the tests, the proofs and the
# benchmarks need. Idempotent: packages already present are left alone.
set -euo pipefail

packages=(
  build-essential cmake ninja-build git
  catch2 librapidcheck-dev libeigen3-dev libboost-dev nlohmann-json3-dev
  libbenchmark-dev libomp-dev clang libclang-rt-14-dev
  gcovr python3
  coq libcoq-mathcomp-ssreflect libcoq-mathcomp-fingroup libcoq-mathcomp-algebra
  libcoq-coquelicot libcoq-mathcomp-analysis ocaml-nox
  python3-dev pybind11-dev python3-numpy python3-pytest python3-hypothesis python3-torch
  graphviz ccache
)
# The PyTorch comparison (bench/compare_pytorch.py) is not part of the tests;
# PM_WITH_TORCH=1 adds OpenBLAS so that torch does not fall back to the
# reference BLAS there.
if [[ "${PM_WITH_TORCH:-0}" == 1 ]]; then
  packages+=(libopenblas0-openmp)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]})); then
  SUDO=""
  if [[ "$(id -u)" != 0 ]]; then SUDO="sudo"; fi
  echo "install-deps: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "install-deps: all packages present"
fi

#!/usr/bin/env bash
# Installs the Debian packages a job needs; packages already present are left
# alone.
#   bash scripts/install-deps.sh          what pmach and the Python package need
#                                         (scripts/main.sh)
#   bash scripts/install-deps.sh --tests  that and what the tests, proofs,
#                                         fuzzers and benchmarks need
#                                         (scripts/test.sh)
set -euo pipefail

# Build tools, the library's headers, and the Python package's build (pip
# and setuptools over pybind11) and runtime (NumPy, PyTorch). PyTorch comes
# with OpenBLAS: without it Debian's default reference BLAS leaves torch.mm
# about 50x slower, for the user's own PyTorch code as for the comparison of
# bench/compare_pytorch.py.
packages=(
  build-essential cmake ninja-build
  libeigen3-dev libboost-dev nlohmann-json3-dev
  python3-dev pybind11-dev python3-pip python3-setuptools python3-wheel python3-venv
  python3-numpy python3-torch libopenblas0-openmp
)
# Catch2 and RapidCheck (unit tests, properties), Google Benchmark, clang with
# libFuzzer, OpenMP and libc++ (fuzzers; the same report with libc++), gcovr
# (coverage), pkg-config (the installed package's test), Coq and MathComp
# (proofs) with OCaml (extraction), pytest and Hypothesis (Python tests),
# Graphviz (pmach dot).
test_packages=(
  catch2 librapidcheck-dev libbenchmark-dev
  clang libclang-rt-14-dev libomp-dev libc++-14-dev libc++abi-14-dev
  gcovr pkgconf
  coq libcoq-mathcomp-ssreflect libcoq-mathcomp-fingroup libcoq-mathcomp-algebra
  libcoq-coquelicot libcoq-mathcomp-analysis ocaml-nox
  python3-pytest python3-hypothesis
  graphviz
)
case "${1:-}" in
  "") ;;
  --tests) packages+=("${test_packages[@]}") ;;
  *)
    echo "install-deps: unknown argument '$1', expected nothing or --tests" >&2
    exit 2
    ;;
esac

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

#!/usr/bin/env bash
# Sets up a Debian 12 machine for weft and builds it: installs the missing apt packages
# (a machine that has them all skips apt-get entirely), configures with clang-19 + Ninja
# and builds. Run it as root, or as a user with sudo (used only for apt-get).
#
#   scripts/setup.sh                       build/       Release, the tests and examples
#   WEFT_SANITIZE=1 scripts/setup.sh       build-asan/  RelWithDebInfo, -DWEFT_SANITIZE=ON
#   WEFT_SANITIZE=thread scripts/setup.sh  build-tsan/  RelWithDebInfo, -DWEFT_SANITIZE=thread
#   WEFT_FUZZ=1 scripts/setup.sh           build-fuzz/  RelWithDebInfo, -DWEFT_FUZZ=ON: the libFuzzer
#                                                       targets only (tests/fuzz, tests/README.md)
#
# Environment: WEFT_BUILD_DIR (override the build folder), WEFT_JOBS (parallel jobs,
# default 2), WEFT_CMAKE_ARGS (extra configure arguments, e.g. -DWEFT_BUILD_BENCHMARKS=ON),
# WEFT_TARGETS (build only these targets, e.g. "test_runtime"; default all).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/build_config.sh   # sets sanitize, build, config

packages=(
  cmake ninja-build g++ python3
  python3-venv                         # the ONNX node cases' virtual environment (scripts/onnx_node_cases.sh)
  clang-19 lld-19 llvm-19-dev          # compiler, linker, the LLVM backend (libLLVM.so.19.1)
  doctest-dev                          # tests
  libbenchmark-dev libeigen3-dev libopenblas-dev libdnnl-dev libhalide14-0-dev   # benchmarks and their peers
  nlohmann-json3-dev                   # schedule / tuning records
  libxgboost0                          # the model-based tuner's cost model (loaded with dlopen)
  libgrpc++-dev protobuf-compiler protobuf-compiler-grpc   # weft_rpc: the RPC runners and tracker (tools/rpc)
  libonnx-dev libprotobuf-dev libonnx-testdata   # the ONNX importer (weft_onnx) and its conformance test data
  python3-onnx                         # tests/fuzz/hostile_models.py writes its models with it
  python3-matplotlib                   # tools/plot_tuning (tuning curves) and its test
)
# The sanitizer and fuzz builds link clang-19's sanitizer (and libFuzzer) runtimes (a machine
# can have clang-19 without them: then the link fails on libclang_rt.asan.a or .tsan.a).
if [[ "$sanitize" != none ]]; then packages+=(libclang-rt-19-dev); fi
# Not needed: zlib1g-dev, libzstd-dev. LLVM's CMake config looks for them but does not
# require them, and weft links only the shared libLLVM, which carries its own dependencies.

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed$'; then
    missing+=("$p")
  fi
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=()
  if ((EUID != 0)); then
    command -v sudo >/dev/null || { echo "setup: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
    sudo=(sudo)
  fi
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update
  "${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
fi

jobs="${WEFT_JOBS:-2}"
# shellcheck disable=SC2206  # WEFT_CMAKE_ARGS and WEFT_TARGETS are split on spaces on purpose
extra=(${WEFT_CMAKE_ARGS:-})
targets=()
for t in ${WEFT_TARGETS:-}; do targets+=(--target "$t"); done

cmake -S . -B "$build" -G Ninja \
  -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 \
  "${config[@]}" "${extra[@]}"
cmake --build "$build" --parallel "$jobs" "${targets[@]}"

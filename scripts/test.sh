#!/usr/bin/env bash
# Sets up (scripts/setup.sh) and runs the whole test suite.
#   scripts/test.sh                  in build/
#   WEFT_SANITIZE=1 scripts/test.sh  in build-asan/, with AddressSanitizer and UBSan
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
scripts/setup.sh

if [[ "${WEFT_SANITIZE:-0}" == 1 ]]; then
  build="${WEFT_BUILD_DIR:-build-asan}"
  # Leak checking stays on: LLVM's JIT reports no leaks (measured; see scripts/lsan.supp).
  # What the JIT does need is -fno-sanitize=function, which CMakeLists.txt adds for clang.
  export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
  export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$PWD/scripts/lsan.supp}"
  export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1}"
else
  build="${WEFT_BUILD_DIR:-build}"
fi
ctest --test-dir "$build" --output-on-failure -j "${WEFT_JOBS:-2}"

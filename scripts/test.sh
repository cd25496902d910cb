#!/usr/bin/env bash
# Sets up (scripts/setup.sh) and runs the whole test suite.
#   scripts/test.sh                  build/, then the fuzzers in build-fuzz/ (below)
#   WEFT_SANITIZE=1 scripts/test.sh  in build-asan/, with AddressSanitizer and UBSan
#   WEFT_FUZZ=0 scripts/test.sh      build/ only;  WEFT_FUZZ=1 scripts/test.sh: build-fuzz/ only
#
# The fuzz stage (tests/README.md, "Fuzzing") builds only weft's libraries, instrumented, and
# the two fuzz targets in build-fuzz/ (WEFT_FUZZ_BUILD_DIR), then runs each fuzzer for a
# bounded time (the CMake cache variable WEFT_FUZZ_SECONDS, 60) and over its regressions.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
jobs="${WEFT_JOBS:-2}"

fuzz="${WEFT_FUZZ:-both}"
if [[ "${WEFT_SANITIZE:-0}" == 1 ]]; then fuzz=0; fi  # build-asan is its own sanitizer run
fuzz_build="${WEFT_FUZZ_BUILD_DIR:-build-fuzz}"

if [[ "$fuzz" != 1 ]]; then WEFT_FUZZ=0 scripts/setup.sh; fi
if [[ "$fuzz" != 0 ]]; then WEFT_FUZZ=1 WEFT_BUILD_DIR="$fuzz_build" scripts/setup.sh; fi

if [[ "$fuzz" != 1 ]]; then
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
  ctest --test-dir "$build" --output-on-failure -j "$jobs"
fi
if [[ "$fuzz" != 0 ]]; then
  ctest --test-dir "$fuzz_build" --output-on-failure -j "$jobs"
fi

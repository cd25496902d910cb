#!/usr/bin/env bash
# Sets up (scripts/setup.sh) and runs the whole test suite; arguments go to ctest.
#   scripts/test.sh                       build/, then the fuzzers in build-fuzz/ (below)
#   WEFT_SANITIZE=1 scripts/test.sh       in build-asan/, with AddressSanitizer and UBSan
#   WEFT_SANITIZE=thread scripts/test.sh  in build-tsan/, with ThreadSanitizer; the thread
#                                         pool's tests alone (a TSan build of everything
#                                         takes long on two cores):
#     WEFT_SANITIZE=thread WEFT_TARGETS=test_runtime scripts/test.sh -R '^runtime/'
#   WEFT_FUZZ=0 scripts/test.sh           build/ only;  WEFT_FUZZ=1 scripts/test.sh: build-fuzz/ only
#
# The fuzz stage (tests/README.md, "Fuzzing") builds only weft's libraries, instrumented, and
# the two fuzz targets in build-fuzz/ (WEFT_FUZZ_BUILD_DIR), then runs each fuzzer for a
# bounded time (the CMake cache variable WEFT_FUZZ_SECONDS, 60) and over its regressions.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
jobs="${WEFT_JOBS:-2}"

fuzz="${WEFT_FUZZ:-both}"
case "${WEFT_SANITIZE:-0}" in 0|OFF|off) ;; *) fuzz=0 ;; esac  # a sanitizer build is its own run
fuzz_build="${WEFT_FUZZ_BUILD_DIR:-build-fuzz}"

if [[ "$fuzz" != 1 ]]; then
  WEFT_FUZZ=0 scripts/setup.sh
  WEFT_FUZZ=0 source scripts/build_config.sh   # sets sanitize, build, config
  if [[ "$sanitize" == address ]]; then
    # Leak checking stays on: LLVM's JIT reports no leaks (measured; see scripts/lsan.supp).
    # What the JIT does need is -fno-sanitize=function, which CMakeLists.txt adds for clang.
    export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
    export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$PWD/scripts/lsan.supp}"
    export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1}"
  elif [[ "$sanitize" == thread ]]; then
    # A report fails the test (exit 66) instead of only printing.
    export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1 second_deadlock_stack=1}"
  fi
  ctest --test-dir "$build" --output-on-failure -j "$jobs" "$@"
fi
if [[ "$fuzz" != 0 ]]; then
  WEFT_FUZZ=1 WEFT_BUILD_DIR="$fuzz_build" scripts/setup.sh
  ctest --test-dir "$fuzz_build" --output-on-failure -j "$jobs"
fi

#!/usr/bin/env bash
# Sets up (scripts/setup.sh) and runs the whole test suite, in three stages; arguments go to
# the first stage's ctest.
#   1. build/: every test.
#   2. build-tsan/: the concurrency tests (the thread pool, the kernel cache, concurrent JIT
#      compiles: the runtime/ and codegen/ folders) under ThreadSanitizer; only those two
#      test programs are built (~1.5 min on two cores).
#   3. build-fuzz/: the fuzz targets, run for a bounded time (the CMake cache variable
#      WEFT_FUZZ_SECONDS, 60) and over their regressions (tests/README.md, "Fuzzing").
#
#   WEFT_SANITIZE=1 scripts/test.sh       stage 1 alone, in build-asan/, with ASan and UBSan
#   WEFT_SANITIZE=thread scripts/test.sh  stage 1 alone, in build-tsan/, every test under
#                                         TSan (long on two cores)
#   WEFT_TSAN=0 / WEFT_FUZZ=0             skip stage 2 / stage 3
#   WEFT_FUZZ=1                           stage 3 alone
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
jobs="${WEFT_JOBS:-2}"

fuzz="${WEFT_FUZZ:-both}"
tsan="${WEFT_TSAN:-1}"
case "${WEFT_SANITIZE:-0}" in 0|OFF|off) ;; *) fuzz=0; tsan=0 ;; esac  # a sanitizer build is its own run
if [[ "$fuzz" == 1 ]]; then tsan=0; fi
fuzz_build="${WEFT_FUZZ_BUILD_DIR:-build-fuzz}"

tsan_environment() {
  # A report fails the test (exit 66) instead of only printing. The suppressions cover
  # libLLVM, which is not instrumented (scripts/tsan.supp says why).
  export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/scripts/tsan.supp}"
}

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
    tsan_environment
  fi
  ctest --test-dir "$build" --output-on-failure -j "$jobs" "$@"
fi
if [[ "$tsan" != 0 ]]; then
  tsan_build="${WEFT_TSAN_BUILD_DIR:-build-tsan}"
  WEFT_FUZZ=0 WEFT_SANITIZE=thread WEFT_BUILD_DIR="$tsan_build" WEFT_TARGETS="test_runtime test_codegen" scripts/setup.sh
  (tsan_environment; ctest --test-dir "$tsan_build" --output-on-failure -j "$jobs" -R '^(runtime|codegen)/')
fi
if [[ "$fuzz" != 0 ]]; then
  WEFT_FUZZ=1 WEFT_BUILD_DIR="$fuzz_build" scripts/setup.sh
  ctest --test-dir "$fuzz_build" --output-on-failure -j "$jobs"
fi

#!/usr/bin/env bash
# Tuned against default against OpenBLAS and oneDNN on GEMM shapes topi was not hand-tuned
# for (benchmarks/tune_gemm.cpp); rewrites the "Tuning GEMMs" section of
# benchmarks/RESULTS.md. Arguments go to weft_tune_gemm, e.g. --trials 64 --rounds 7.
# OPENBLAS_CORETYPE=SkylakeX is forced on AVX-512 CPUs (Debian's OpenBLAS takes some for Haswell).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
WEFT_TARGETS=weft_tune_gemm WEFT_CMAKE_ARGS="${WEFT_CMAKE_ARGS:-} -DWEFT_BUILD_BENCHMARKS=ON" scripts/setup.sh
if grep -qw avx512f /proc/cpuinfo; then export OPENBLAS_CORETYPE=SkylakeX; fi
"${WEFT_BUILD_DIR:-build}/benchmarks/weft_tune_gemm" "$@" | python3 benchmarks/tune_report.py gemm "$@"

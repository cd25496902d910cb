#!/usr/bin/env bash
# The model-based tuner against random search at equal trials on a GEMM, a 3x3 convolution
# and a depthwise convolution (benchmarks/tune_model.cpp); rewrites its section of
# benchmarks/RESULTS.md. Arguments go to weft_tune_model, e.g. --random-trials 1000
# --model-trials 300 (the defaults; about 10 minutes on 2 cores).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
WEFT_TARGETS=weft_tune_model WEFT_CMAKE_ARGS="${WEFT_CMAKE_ARGS:-} -DWEFT_BUILD_BENCHMARKS=ON" scripts/setup.sh
"${WEFT_BUILD_DIR:-build}/benchmarks/weft_tune_model" "$@" | python3 benchmarks/tune_report.py model "$@"

#!/usr/bin/env bash
# Tuned against default against oneDNN on convolution layers of odd widths
# (benchmarks/tune_conv.cpp); rewrites the "Tuning convolutions" section of
# benchmarks/RESULTS.md. Arguments go to weft_tune_conv, e.g. --trials 64 --tuner model.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
WEFT_TARGETS=weft_tune_conv WEFT_CMAKE_ARGS="${WEFT_CMAKE_ARGS:-} -DWEFT_BUILD_BENCHMARKS=ON" scripts/setup.sh
"${WEFT_BUILD_DIR:-build}/benchmarks/weft_tune_conv" "$@" | python3 benchmarks/tune_report.py conv "$@"

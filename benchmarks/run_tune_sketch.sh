#!/usr/bin/env bash
# Template-free schedules (autotune::auto_schedule) tuned, against their default and weft's
# hand-written templates (benchmarks/tune_sketch.cpp); rewrites the "Tuning template-free
# schedules" section of benchmarks/RESULTS.md. Arguments go to weft_tune_sketch, e.g.
# --trials 64 --rounds 5.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
WEFT_TARGETS=weft_tune_sketch WEFT_CMAKE_ARGS="${WEFT_CMAKE_ARGS:-} -DWEFT_BUILD_BENCHMARKS=ON" scripts/setup.sh
"${WEFT_BUILD_DIR:-build}/benchmarks/weft_tune_sketch" "$@" | python3 benchmarks/tune_report.py sketch "$@"

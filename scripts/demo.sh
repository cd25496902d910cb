#!/usr/bin/env bash
# Sets up (scripts/setup.sh) and runs the demo: examples/matmul, a 1024x1024 float32 matmul
# compiled by weft's LLVM JIT. Until that example exists it runs the IR demo
# (tests/package/consumer/main.cpp), which builds an expression and prints it.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
scripts/setup.sh

build="${WEFT_BUILD_DIR:-build}"
if [[ -x "$build/examples/matmul" ]]; then
  exec "$build/examples/matmul"
fi
echo "demo: $build/examples/matmul is not built yet; running the IR demo instead" >&2
cmake --build "$build" --target weft_ir_demo --parallel "${WEFT_JOBS:-2}"
exec "$build/tests/package/weft_ir_demo"

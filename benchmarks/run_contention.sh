#!/usr/bin/env bash
# weft and ONNX Runtime on a small CNN while 0, 1 and 2 other processes keep the cores busy
# (benchmarks/contention.py); rewrites the "Threads on busy cores" section of
# benchmarks/RESULTS.md. Builds weft_contention_run (scripts/setup.sh with benchmarks on, that
# target only) first. Arguments go to contention.py, e.g.
#   benchmarks/run_contention.sh --trials 7 --model resnet18
# Needs a Python with onnxruntime and onnx (PyPI): $WEFT_PYTHON, else the first of
# /root/venv/bin/python, models/.venv/bin/python and python3 that has them; one way:
#   python3 -m venv /root/venv && /root/venv/bin/pip install onnxruntime onnx
# Run it when the machine is otherwise quiet: it waits for idle CPUs before each trial.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
WEFT_TARGETS=weft_contention_run WEFT_CMAKE_ARGS="${WEFT_CMAKE_ARGS:-} -DWEFT_BUILD_BENCHMARKS=ON" scripts/setup.sh
build="${WEFT_BUILD_DIR:-build}"

python="${WEFT_PYTHON:-}"
if [[ -z "$python" ]]; then
  for p in /root/venv/bin/python models/.venv/bin/python python3; do
    if command -v "$p" >/dev/null && "$p" -c "import onnxruntime, onnx" 2>/dev/null; then python="$p"; break; fi
  done
fi
if [[ -z "$python" ]]; then
  echo "run_contention.sh: no Python with onnxruntime and onnx (set WEFT_PYTHON; see the comment at the top)" >&2
  exit 1
fi
"$python" benchmarks/contention.py --tool "$build/benchmarks/weft_contention_run" \
  --results benchmarks/RESULTS.md --json "$build/benchmarks/contention.json" "$@"

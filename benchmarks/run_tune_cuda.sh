#!/usr/bin/env bash
# graph::tune on a GPU (benchmarks/tune_cuda.cpp): float32 GEMMs tuned against default against
# cuBLAS, ResNet-50 tuned against default against PyTorch (benchmarks/torch_resnet50.py, same
# run); rewrites the "Tuning on the GPU" section of benchmarks/RESULTS.md. Arguments go to
# weft_tune_cuda, e.g.
#   benchmarks/run_tune_cuda.sh --gemm-trials 64 --resnet-trials 400 --time-budget 180
# Environment: WEFT_TUNE_CUDA (a weft_tune_cuda built elsewhere, as scripts/gpu_run.sh runs it
# on a GPU machine that cannot build weft: run it, build nothing), PYTHON (the interpreter
# with torch, default python3).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bench="${WEFT_TUNE_CUDA:-}"
if [[ -z "$bench" ]]; then
  WEFT_TARGETS=weft_tune_cuda WEFT_CMAKE_ARGS="${WEFT_CMAKE_ARGS:-} -DWEFT_BUILD_BENCHMARKS=ON" scripts/setup.sh
  bench="${WEFT_BUILD_DIR:-build}/benchmarks/weft_tune_cuda"
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# The device's architecture for Target::cuda() (the benchmark must not ask the driver before it
# has tuned: graph::tune measures in child processes, which cannot use CUDA once it has).
if command -v nvidia-smi >/dev/null; then
  cap="$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d ' .')"
  [[ -n "$cap" ]] && export WEFT_CUDA_ARCH="sm_$cap"
fi
timeout 180 "${PYTHON:-python3}" benchmarks/torch_resnet50.py --batches 1 8 --out "$work/torch.json" > /dev/null || \
  echo "run_tune_cuda.sh: PyTorch's ResNet-50 not measured" >&2
"$bench" --torch-json "$work/torch.json" "$@" > "$work/tables.md"
python3 benchmarks/tune_report.py gpu "$@" < "$work/tables.md"

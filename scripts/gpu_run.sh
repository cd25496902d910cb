#!/usr/bin/env bash
# Runs, on a machine with an NVIDIA GPU, the GPU tests and benchmarks that
# scripts/gpu_bundle.sh packed elsewhere, from a copy of this repository (for the Python
# scripts): CTest over the tests with GPU cases (cuda/, cuda_topi/, cuda_graph/, error/,
# weftc/ in parallel, cuda_runtime/ alone), then weft_cuda_bench, PyTorch's ResNet-50 and the
# GPU section of benchmarks/RESULTS.md (through benchmarks/run_cuda.sh); `tune` runs
# benchmarks/run_tune_cuda.sh (arguments after the mode go to weft_tune_cuda).
#   scripts/gpu_run.sh BUNDLE.tar.xz [tests|bench|all]      logs in $GPU_OUT (default gpu-out/)
#   scripts/gpu_run.sh BUNDLE.tar.xz tune [ARGS...]
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bundle="$1"
mode="${2:-all}"
shift $(( $# < 2 ? $# : 2 ))
out="${GPU_OUT:-gpu-out}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
unpacked="$(mktemp -d)"
tar -xJf "$bundle" -C "$unpacked" || { echo "gpu_run.sh: cannot unpack $bundle" >&2; exit 1; }
root="$(cat "$unpacked/root")"
# The build folder where CTest's files expect it (the packing machine's absolute path).
if [[ "$root" != "$PWD" ]]; then mkdir -p "$root"; fi
[[ -e "$root/build" && ! -L "$root/build" ]] && { echo "gpu_run.sh: $root/build exists; run from another copy" >&2; exit 1; }
ln -sfn "$unpacked/tree$root/build" "$root/build"
export LD_LIBRARY_PATH="$unpacked/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if ldd "$root/build/tests/test_cuda" | grep -q "not found"; then export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$unpacked/lib-fallback"; fi
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
status=0
if [[ "$mode" == tests || "$mode" == all ]]; then
  (cd "$root/build/tests" || exit 1
   rc=0
   ctest -j8 -R "^(cuda/|cuda_topi/|cuda_graph/|error/|weftc/)" --timeout 120 --output-on-failure > "$out/ctest.log" 2>&1 || rc=1
   # One at a time: these check the device's free memory and its streams.
   ctest -j1 -R "^cuda_runtime/" --timeout 60 --output-on-failure >> "$out/ctest.log" 2>&1 || rc=1
   exit $rc) || status=1
  grep -E "tests passed|\(Failed\)|\(Skipped\)|Timeout" "$out/ctest.log"
fi
if [[ "$mode" == tune ]]; then
  WEFT_TUNE_CUDA="$unpacked/bin/weft_tune_cuda" benchmarks/run_tune_cuda.sh "$@" || status=1
  cp benchmarks/RESULTS.md "$out/" || true
fi
if [[ "$mode" == bench || "$mode" == all ]]; then
  WEFT_CUDA_BENCH="$unpacked/bin/weft_cuda_bench" WEFT_BUILD_DIR="$out" benchmarks/run_cuda.sh || status=1
fi
exit $status

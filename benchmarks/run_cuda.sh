#!/usr/bin/env bash
# The GPU benchmarks in one command, for a machine with an NVIDIA GPU (H100 / H200):
# configures and builds only weft_cuda_bench (Release, clang-19, in build-cuda-bench/ or
# $WEFT_BUILD_DIR), runs it, runs PyTorch's ResNet-50 (benchmarks/torch_resnet50.py; "not
# measured" when torch, torchvision or CUDA is missing) and rewrites the "## GPU" section of
# benchmarks/RESULTS.md (the CPU sections, from run.sh, stay as they are). Arguments go to
# weft_cuda_bench, e.g.
#   benchmarks/run_cuda.sh --benchmark_filter=matmul
#   benchmarks/run_cuda.sh --build-only      # configure and build, nothing else (a first step
#                                            # where one command's time is limited)
# Environment: WEFT_JOBS (build jobs, default 16), BENCH_REPETITIONS (default 5), PYTHON
# (the interpreter with torch, default python3), WEFT_LIBCUBLAS (libcublas to open),
# BENCH_TIMEOUT (seconds for weft_cuda_bench, default 420; what it measured by then is reported),
# WEFT_CUDA_BENCH (a weft_cuda_bench built elsewhere: run it, build nothing).
# Without a GPU it still runs to the end: every case reports "no CUDA device: ...".
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

build="${WEFT_BUILD_DIR:-build-cuda-bench}"
bench="$build/benchmarks/weft_cuda_bench"
if [[ -n "${WEFT_CUDA_BENCH:-}" ]]; then
  # A weft_cuda_bench built elsewhere (a GPU machine without LLVM 19 cannot build weft): no
  # configure, no build.
  bench="$WEFT_CUDA_BENCH"
  [[ -x "$bench" ]] || { echo "run_cuda.sh: WEFT_CUDA_BENCH=$bench is not an executable" >&2; exit 1; }
else
compilers=()
if command -v clang++-19 >/dev/null; then
  compilers=(-DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19)
fi
generator=()
if command -v ninja >/dev/null; then generator=(-G Ninja); fi
cmake -S . -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release "${compilers[@]}" \
  -DWEFT_BUILD_CUDA_BENCHMARKS=ON -DWEFT_CUDA=ON -DWEFT_BUILD_TESTS=OFF -DWEFT_BUILD_EXAMPLES=OFF \
  -DWEFT_BUILD_TOOLS=OFF -DWEFT_INSTALL=OFF -DWEFT_TEST_PACKAGE=OFF ${WEFT_CMAKE_ARGS:-}
cmake --build "$build" -j "${WEFT_JOBS:-16}" --target weft_cuda_bench
if [[ "${1:-}" == --build-only ]]; then
  echo "built $bench"
  exit 0
fi
fi

out="$build/benchmarks"
mkdir -p "$out"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv || true
cmd=("$bench" --benchmark_repetitions="${BENCH_REPETITIONS:-5}"
     --benchmark_report_aggregates_only=true --benchmark_out="$out/cuda_results.json"
     --benchmark_out_format=json "$@")
timeout "${BENCH_TIMEOUT:-420}" "${cmd[@]}" || echo "run_cuda.sh: weft_cuda_bench failed (exit $?); reporting what it wrote" >&2
timeout 300 "${PYTHON:-python3}" benchmarks/torch_resnet50.py --out "$out/torch_resnet50.json" > /dev/null || \
  echo '{"available": false, "reason": "benchmarks/torch_resnet50.py failed (see its output above)"}' > "$out/torch_resnet50.json"
python3 benchmarks/report_cuda.py "$out/cuda_results.json" "$out/torch_resnet50.json" "${cmd[*]}"
echo "wrote the GPU section of benchmarks/RESULTS.md"

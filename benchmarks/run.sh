#!/usr/bin/env bash
# Builds the benchmarks (scripts/setup.sh with WEFT_BUILD_BENCHMARKS=ON, Release, in build/),
# runs them and rewrites benchmarks/RESULTS.md with the machine, the toolchain, the command
# and the tables. Arguments are passed to the benchmark binary, e.g.
#   benchmarks/run.sh --benchmark_filter=sgemm
# The machine should be otherwise idle: it has 2 cores and the numbers are noisy.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
WEFT_CMAKE_ARGS="${WEFT_CMAKE_ARGS:-} -DWEFT_BUILD_BENCHMARKS=ON" scripts/setup.sh

build="${WEFT_BUILD_DIR:-build}"
bin="$build/benchmarks/weft_bench"
out="$build/benchmarks"
# The first JIT build of a process (it also creates the JIT) needs a process of its own.
first=("$bin" --benchmark_filter='^jit/first_build' --benchmark_out="$out/first.json" --benchmark_out_format=json)
# Repetitions in random order (--benchmark_enable_random_interleaving): a slow spell of this
# shared machine then falls on weft and its peers alike instead of on one benchmark's three
# repetitions in a row.
cmd=("$bin" --benchmark_filter="${BENCH_FILTER:--jit/first_build}" --benchmark_repetitions=3
     --benchmark_enable_random_interleaving=true --benchmark_report_aggregates_only=true --benchmark_out="$out/results.json" --benchmark_out_format=json "$@")
"${first[@]}"
"${cmd[@]}"
# Through a temporary file: report.py reads the GPU section (run_cuda.sh's) of the current one.
python3 benchmarks/report.py "$out/first.json" "$out/results.json" "${cmd[*]}" > "$out/RESULTS.md"
mv "$out/RESULTS.md" benchmarks/RESULTS.md
echo "wrote benchmarks/RESULTS.md"

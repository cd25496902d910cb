#!/usr/bin/env bash
# Builds the benchmarks (scripts/setup.sh with WEFT_BUILD_BENCHMARKS=ON, Release, in build/),
# runs them and rewrites benchmarks/RESULTS.md with the machine, the toolchain, the command
# and the table. Arguments are passed to the benchmark binary, e.g.
#   benchmarks/run.sh --benchmark_filter=matmul
# The machine should be otherwise idle: the numbers are single-thread and noisy on 2 cores.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
WEFT_CMAKE_ARGS="${WEFT_CMAKE_ARGS:-} -DWEFT_BUILD_BENCHMARKS=ON" scripts/setup.sh

build="${WEFT_BUILD_DIR:-build}"
json="$build/benchmarks/results.json"
cmd=("$build/benchmarks/weft_bench" --benchmark_repetitions=3 --benchmark_report_aggregates_only=true
     --benchmark_out="$json" --benchmark_out_format=json "$@")
"${cmd[@]}"

python3 - "$json" "${cmd[*]}" > benchmarks/RESULTS.md <<'PY'
import json, platform, subprocess, sys, datetime

def sh(c):
    try:
        return subprocess.run(c, shell=True, capture_output=True, text=True).stdout.strip()
    except Exception:
        return "?"

data = json.load(open(sys.argv[1]))
ctx = data["context"]
lscpu = dict(l.split(":", 1) for l in sh("LC_ALL=C lscpu").splitlines() if ":" in l)
model = lscpu.get("Model name", "?").strip()
flags = lscpu.get("Flags", "")
isa = [f for f in ("avx2", "fma", "avx512f", "avx512_bf16", "amx_tile") if f in flags.split()]

print("# Benchmark results\n")
print("Written by `benchmarks/run.sh`; do not edit by hand.\n")
print(f"- date: {datetime.date.today()}")
print(f"- machine: {model}, {ctx.get('num_cpus', '?')} CPUs at {ctx.get('mhz_per_cpu', '?')} MHz, "
      f"{'+'.join(isa)}; {platform.system()} {platform.release()}")
print(f"- single-core fp32 FMA peak measured in the binary: "
      f"{float(ctx.get('peak_fp32_GFLOP/s_1core', 'nan')):.1f} GFLOP/s ({ctx.get('peak_isa', '?')})")
print(f"- compiler: {sh('clang++-19 --version | head -1')}; LLVM {sh('llvm-config-19 --version')}")
print(f"- Google Benchmark library built as {ctx.get('library_build_type', '?')} (Debian's package)")
print(f"- command: `{sys.argv[2]}` (median of 3 repetitions)")
print("- GFLOP/s and % of peak use the benchmark thread's CPU time (single-thread cases), so a")
print("  busy machine inflates the wall column more than them\n")

print("| benchmark | wall (ms) | CPU (ms) | GFLOP/s | % of peak | note |")
print("|---|---:|---:|---:|---:|---|")
for b in data["benchmarks"]:
    if b.get("aggregate_name", "median") != "median":
        continue
    name = b.get("run_name", b["name"])
    unit = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[b.get("time_unit", "ns")]
    t, c = b["real_time"] * unit, b["cpu_time"] * unit
    g = b.get("GFLOP/s")
    p = b.get("%peak")
    fmt = lambda v, f: (f % v) if v is not None else ""
    print(f"| {name} | {t:.2f} | {c:.2f} | {fmt(g, '%.1f')} | {fmt(p, '%.0f')} | {b.get('label', '')} |")
PY
echo "wrote benchmarks/RESULTS.md"

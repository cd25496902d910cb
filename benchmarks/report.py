"""Writes benchmarks/RESULTS.md from weft_bench's JSON output (see run.sh).

Benchmarks are named <case>/<impl>/<threads>t (harness.hpp). For every case and thread count
the table shows weft, the best peer (Eigen, OpenBLAS, oneDNN, or the hand loop where one is
the reference) and Halide, with weft's ratio to each: > 1 means weft is faster."""
import datetime, json, os, platform, re, subprocess, sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import results_sections


def sh(c):
    try:
        return subprocess.run(c, shell=True, capture_output=True, text=True).stdout.strip()
    except Exception:
        return "?"


def load(path):
    try:
        return json.load(open(path))
    except Exception:
        return {"context": {}, "benchmarks": []}


first, main, command = load(sys.argv[1]), load(sys.argv[2]), sys.argv[3]


def kept_sections(path="benchmarks/RESULTS.md"):
    """The sections of the current RESULTS.md that are not this report's, kept as they are:
    those written by hand (results_sections.hand_written), then those other scripts write
    (the GPU section, report_cuda.py's from a GPU machine's run; the threads-on-busy-cores
    one, contention.py's, ...). This report rewrites only the CPU tables."""
    try:
        text = open(path).read()
    except OSError:
        return []
    hand = results_sections.hand_written(text)
    return hand + [s for s in (results_sections.find_section(text, h) for h in results_sections.KEPT) if s]


kept = kept_sections()
ctx = main["context"]
lscpu = dict(l.split(":", 1) for l in sh("LC_ALL=C lscpu").splitlines() if ":" in l)
flags = lscpu.get("Flags", "").split()
isa = [f for f in ("avx2", "fma", "avx512f", "avx512_vnni", "avx512_bf16", "amx_tile") if f in flags]

print("# Benchmark results\n")
print("The tables down to \"All implementations per case\" are written by `benchmarks/run.sh`; the "
      "sections after them by hand or by the scripts they name (run.sh keeps them).\n")
print(f"- date: {datetime.date.today()}")
print(f"- machine: {lscpu.get('Model name', '?').strip()}, {ctx.get('num_cpus', '?')} CPUs at "
      f"{ctx.get('mhz_per_cpu', '?')} MHz, {'+'.join(isa)}; {platform.system()} {platform.release()}")
for t in (1, 2):
    p, b = ctx.get(f"peak_GFLOP/s_{t}t"), ctx.get(f"triad_GB/s_{t}t")
    if p:
        print(f"- measured in the binary, {t} thread(s): fp32 FMA peak {float(p):.1f} GFLOP/s, "
              f"triad {float(b):.1f} GB/s")
print(f"- compiler: {sh('clang++-19 --version | head -1')}; LLVM {sh('llvm-config-19 --version')}")
def version(pkg):
    return sh("dpkg-query -W -f='${Version}' " + pkg)


print(f"- peers: OpenBLAS {version('libopenblas0-pthread')}, oneDNN {version('libdnnl2')}, "
      f"Eigen {version('libeigen3-dev')}, Halide {version('libhalide14-0')}")
print(f"- command: `benchmarks/run.sh` = `{command}` (median of 3 repetitions, run in random order), after a separate")
print("  process for jit/first_build")
print("- rate = work / wall time; % peak against the FMA loop (GFLOP/s) or the triad (GB/s) at the")
print("  same thread count; ratio = weft's rate / the other's (> 1: weft is faster)")
print("- the goals these are measured against, the gaps and what explains them:")
print("  [docs/performance.md](../docs/performance.md) (written by hand from two runs)\n")

rows = defaultdict(dict)  # (case, threads) -> impl -> (rate, unit, %peak, ms)
memory = {}  # (case, impl) -> (kernels, planned MiB, naive MiB): the graph benchmarks
other = []
for b in first["benchmarks"] + main["benchmarks"]:
    if b.get("aggregate_name", "median") != "median":
        continue
    name = re.sub(r"/(real_time|iterations:\d+|min_time:[0-9.]+)", "", b.get("run_name", b["name"]))
    unit = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[b.get("time_unit", "ns")]
    ms = b["real_time"] * unit
    parts = name.split("/")
    rate_unit = "GFLOP/s" if "GFLOP/s" in b else ("GB/s" if "GB/s" in b else None)
    if rate_unit and len(parts) >= 3 and parts[-1].endswith("t"):
        case, impl, threads = "/".join(parts[:-2]), parts[-2], int(parts[-1][:-1])
        rows[(case, threads)][impl] = (b[rate_unit], rate_unit, b.get("%peak"), ms)
        if "planned_MiB" in b:
            memory[(case, impl)] = (b.get("kernels"), b["planned_MiB"], b.get("naive_MiB"), b.get("operator_MiB"))
    else:
        other.append((name, ms))


def fmt(x, f="%.1f"):
    return f % x if x is not None else ""


def over(r):
    # A compute rate above the FMA loop's at this thread count: the library used more threads.
    return " (over peak)" if r and r[1] == "GFLOP/s" and r[2] and r[2] > 105 else ""


print("A Halide rate marked *over peak* exceeds the FMA peak of its thread count: it used more")
print("threads than asked, and its ratio is not a fair comparison.\n")
print("| case | threads | weft | % peak | best peer | peer rate | weft / peer | Halide | weft / Halide |")
print("|---|---:|---:|---:|---|---:|---:|---:|---:|")
for (case, threads), impls in sorted(rows.items()):
    w = impls.get("weft")
    peers = {k: v for k, v in impls.items() if k not in ("weft", "halide")}
    best = max(peers.items(), key=lambda kv: kv[1][0]) if peers else None
    h = impls.get("halide")
    u = (w or best or h)[1]
    print(f"| {case} ({u}) | {threads} | {fmt(w and w[0])} | {fmt(w and w[2], '%.0f')} | "
          f"{best[0] if best else ''} | {fmt(best and best[1][0])} | "
          f"{fmt(w and best and w[0] / best[1][0], '%.2f')} | {fmt(h and h[0])}{over(h)} | "
          f"{fmt(w and h and w[0] / h[0], '%.2f')} |")

if memory:
    print("\nGraph memory plans (intermediate tensors): the planned arena against one buffer per kernel")
    print("output and one buffer per operator output (running the operators one by one):\n")
    print("| network | impl | kernels | planned (MiB) | per kernel (MiB) | per operator (MiB) | planned / per operator |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for (case, impl), (kernels, planned, naive, per_op) in sorted(memory.items()):
        print(f"| {case} | {impl} | {fmt(kernels, '%.0f')} | {planned:.2f} | {fmt(naive, '%.2f')} | "
              f"{fmt(per_op, '%.2f')} | {fmt(per_op and planned / per_op, '%.2f')} |")

if other:
    times = dict(other)
    peer = times.get("jit/compile/halide")
    print("\n| benchmark | wall time (ms) | Halide's JIT compile / this |\n|---|---:|---:|")
    for name, ms in other:
        # The JIT figures against Halide compiling its tiled GEMM in the same run.
        ratio = f"{peer / ms:.1f}" if peer and name.startswith("jit/") and not name.endswith("/halide") else ""
        print(f"| {name} | {ms:.3f} | {ratio} |")

# The real-model comparison with ONNX Runtime runs in its own script (models/compare.py,
# Python and ORT); its latest results section is copied here so all figures are in one place.
try:
    models = open("docs/onnx-models.md").read()
    section = models[models.index("## Results"):]
    print("\n## ONNX models against ONNX Runtime\n")
    print("Copied from [docs/onnx-models.md](../docs/onnx-models.md) (its own run, by `models/compare.py`):\n")
    print(section.split("\n", 1)[1].strip())
except (OSError, ValueError):
    pass

print("\nAll implementations per case:\n")
print("| case | threads | impl | rate | % peak | wall (ms) |\n|---|---:|---|---:|---:|---:|")
for (case, threads), impls in sorted(rows.items()):
    for impl, (rate, u, peak, ms) in sorted(impls.items()):
        print(f"| {case} | {threads} | {impl} | {rate:.1f} {u} | {fmt(peak, '%.0f')} | {ms:.3f} |")

for section in kept:
    print("\n" + section, end="")

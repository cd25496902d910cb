"""Writes the "## GPU" section of benchmarks/RESULTS.md from weft_cuda_bench's JSON and
benchmarks/torch_resnet50.py's JSON (see run_cuda.sh); the rest of the file (the CPU
sections, written by report.py) is kept as it is.

    python3 benchmarks/report_cuda.py BENCH.json TORCH.json "COMMAND" [RESULTS.md]

Cases are named gpu/<case>/<impl> (cuda_bench.cpp). For each case the table shows weft's
median next to its peer in the same run: cuBLAS for the matmuls (weft / cuBLAS, > 1: weft is
faster), the device-to-device copy of the same bytes for the memory-bound kernels (% of the
copy's bandwidth), and PyTorch for ResNet-50 (PyTorch's time / weft's, > 1: weft is faster).
A case the binary skipped shows its reason."""
import datetime, json, os, re, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from results_sections import GPU as HEADING, write_section


def sh(c):
    try:
        return subprocess.run(c, shell=True, capture_output=True, text=True).stdout.strip()
    except Exception:
        return ""


def load(path):
    """The JSON; a run that crashed leaves its benchmarks array open: what it has is kept."""
    try:
        text = open(path).read()
    except OSError as e:
        return {"context": {}, "benchmarks": [], "error": f"{path}: {e}"}
    # Google Benchmark indents each run's object by 4 spaces: close the array after the last.
    last = text.rfind("\n    }")
    for attempt in (text, text[:last + 6] + "\n  ]\n}" if last >= 0 else ""):
        try:
            data = json.loads(attempt)
            if attempt is not text:
                data["crashed"] = True
            return data
        except ValueError:
            pass
    return {"context": {}, "benchmarks": [], "error": f"{path}: not JSON"}


def medians(bench):
    """name -> {"ms", counters...} (the median aggregate, or the single run) or {"error"}."""
    out = {}
    for b in bench.get("benchmarks", []):
        name = re.sub(r"/(manual_time|real_time|iterations:\d+|repeats:\d+)", "", b.get("run_name", b["name"]))
        name = re.sub(r"_(median|mean|stddev|cv)$", "", name)
        if b.get("error_occurred"):
            out[name] = {"error": b.get("error_message", "failed")}
            continue
        if b.get("run_type") == "aggregate" and b.get("aggregate_name") != "median":
            continue
        if b.get("run_type") != "aggregate" and name in out:  # repetitions without aggregates
            continue
        unit = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[b.get("time_unit", "ns")]
        row = {k: v for k, v in b.items() if isinstance(v, (int, float))}
        row["ms"] = b["real_time"] * unit
        out[name] = row
    return out


def fmt(x, f="%.2f"):
    return f % x if isinstance(x, (int, float)) else ""


def label(ratio, f):
    return f % ratio if ratio else ""


def section(bench, torch, command):
    ctx = bench.get("context", {})
    rows = medians(bench)
    lines = [HEADING, ""]
    lines.append("Written by `benchmarks/run_cuda.sh` (`benchmarks/report_cuda.py`); do not edit by hand.\n")
    if not rows:
        lines.append(f"Not measured: {bench.get('error', 'weft_cuda_bench wrote no results')}.")
        return "\n".join(lines) + "\n"
    if str(ctx.get("gpu", "")).startswith("none"):
        lines.append(f"Not measured yet: the last run of `{command}` had {ctx['gpu'][len('none ('):-1]}, so every "
                     "case was skipped. Run `benchmarks/run_cuda.sh` on a machine with an NVIDIA GPU (H100 / H200) "
                     "to fill this section. The cases: " + ", ".join(f"`{n[len('gpu/'):]}`" for n in sorted(rows)) + "; "
                     "PyTorch's ResNet-50: " + (f"not measured ({torch.get('reason')})" if not torch.get("available")
                                                else "measured") + ".")
        return "\n".join(lines) + "\n"
    toolkit = sh("/usr/local/cuda/bin/nvcc --version 2>/dev/null | grep -o 'release [0-9.]*'") or \
        sh("readlink -f /usr/local/cuda")
    lines.append(f"- date: {datetime.date.today()}")
    lines.append(f"- device: {ctx.get('gpu', '?')} ({ctx.get('gpu_arch', '?')}, "
                 f"{ctx.get('gpu_multiprocessors', '?')} SMs, {ctx.get('gpu_memory_MiB', '?')} MiB); "
                 f"host {ctx.get('num_cpus', '?')} CPUs")
    driver = sh("nvidia-smi 2>/dev/null | grep -o 'Driver Version: [0-9.]*.*CUDA Version: [0-9.]*' | head -1")
    lines.append(f"- {re.sub(' +', ' ', driver) or 'driver: ? (no nvidia-smi)'}; toolkit (NVRTC) {toolkit or '?'}; "
                 f"cuBLAS {ctx.get('cublas', '?')}")
    if torch.get("available"):
        lines.append(f"- PyTorch {torch.get('torch')} (CUDA {torch.get('cuda')}, cuDNN {torch.get('cudnn')}), "
                     f"torchvision {torch.get('torchvision')}, on {torch.get('device')}")
    else:
        lines.append(f"- PyTorch: not measured ({torch.get('reason', 'no result')})")
    lines.append(f"- command: `benchmarks/run_cuda.sh` = `{command}`, then `benchmarks/torch_resnet50.py`")
    lines.append("- kernels timed with CUDA events (several launches back to back per sample for the short "
                 "ones); ResNet-50 with the host clock from `run()` to the device's synchronize; medians")
    lines.append("- check: the largest difference relative to the largest value, once, against cuBLAS "
                 "(matmuls), a host loop (chain, softmax) or the CPU build (ResNet-50 b1)\n")

    table = ["| case | weft | peer | peer's | weft vs peer | check |", "|---|---:|---|---:|---:|---:|"]

    def cell(r, key, f):
        if r is None:
            return "not run"
        if "error" in r:
            return "skipped"
        return fmt(r.get(key), f)

    skipped = {}
    for name, r in rows.items():
        if "error" in r:
            skipped.setdefault(r["error"], []).append(name)
    cases = sorted({n.rsplit("/", 1)[0] for n in rows})
    for case in cases:
        w = rows.get(case + "/weft")
        check = fmt(w.get("max_rel_err"), "%.1e") if w and "error" not in w else ""
        short = case[len("gpu/"):] if case.startswith("gpu/") else case
        if "matmul" in case:
            p = rows.get(case + "/cublas")
            ratio = w["TFLOP/s"] / p["TFLOP/s"] if w and p and "TFLOP/s" in w and "TFLOP/s" in p else None
            table.append(f"| {short} (TFLOP/s) | {cell(w, 'TFLOP/s', '%.1f')} | cuBLAS | "
                         f"{cell(p, 'TFLOP/s', '%.1f')} | {label(ratio, '%.2f (weft / cuBLAS)')} | {check} |")
        elif "resnet50" in case:
            batch = int(re.search(r"/b(\d+)", case).group(1))
            peer = next((t for t in torch.get("results", []) if t["batch"] == batch and t["mode"] == "fp32"), None)
            tf32 = next((t for t in torch.get("results", []) if t["batch"] == batch and t["mode"] == "tf32"), None)
            ms = w["ms"] if w and "error" not in w else None
            ratio = peer["ms"] / ms if peer and ms else None
            theirs = (f"{peer['ms']:.3f} (wall {peer['wall_ms']:.3f}; TF32 {tf32['ms']:.3f})" if peer and tf32
                      else "not measured")
            table.append(f"| {short} (ms, fp32) | {cell(w, 'ms', '%.3f')} | PyTorch | {theirs} | "
                         f"{label(ratio, '%.2f (PyTorch / weft)')} | {check} |")
        else:
            p = rows.get(case + "/copy")
            ratio = 100 * w["GB/s"] / p["GB/s"] if w and p and "GB/s" in w and "GB/s" in p else None
            table.append(f"| {short} (GB/s) | {cell(w, 'GB/s', '%.0f')} | cuMemcpyDtoD, same bytes | "
                         f"{cell(p, 'GB/s', '%.0f')} | {label(ratio, '%.0f%% of copy')} | {check} |")
    lines += table
    if bench.get("crashed"):
        lines.append("\nweft_cuda_bench stopped before the end (its JSON was cut short): the cases missing "
                     "here did not run.")
    extra = [(n, r) for n, r in rows.items() if n.endswith("/weft") and "build_s" in r]
    if extra:
        lines.append("\nResNet-50 through `graph::build(g, Target::cuda())`: "
                     + "; ".join(f"{n.split('/')[-2]} {r.get('kernels', 0):.0f} kernels, built in {r['build_s']:.1f} s"
                                 for n, r in extra))
    for error, names in skipped.items():
        lines.append(f"\nSkipped ({', '.join(n[len('gpu/'):] for n in sorted(names))}): {error}")
    return "\n".join(lines) + "\n"


def main():
    bench, torch, command = load(sys.argv[1]), load(sys.argv[2]), sys.argv[3]
    path = sys.argv[4] if len(sys.argv) > 4 else "benchmarks/RESULTS.md"
    new = section(bench, torch, command)
    write_section(path, HEADING, new)
    print(new)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Precision: the models under models/ built in float32 and with --precision bf16, in one run.

    /usr/bin/python3 models/export.py                 # once: models/out/*.onnx
    models/.venv/bin/python benchmarks/precision.py [--models mlp,transformer] [--rounds 5] [--threads 1]

(the Python of models/compare.py, whose inputs it draws: uniform floats, integers in the
manifest's range, padding masks). For each model: its outputs on the same inputs in float32 and in
bf16, the relative error max|bf16 - f32| / max|f32| per output (the worst printed), then
its latency (weftc bench's median) in alternating fresh processes, f32 then bf16, medians
over the rounds; speed-up = f32 ms / bf16 ms. "bf16 kernels" counts the kernels that run
matmul_bf16 (linear layers with an even K and a multiple of 16 columns; BuildOptions::precision
in docs/graph.md).
"""
import argparse, json, os, re, statistics, subprocess, sys, tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "models"))
import compare  # noqa: E402  (the manifest's inputs: compare.inputs_of, compare.draw)
DEFAULT = "mlp,transformer,bert_encoder,hf_bert,hf_gpt2,lstm_tagger,resnet18,mobilenet_v2,swin_t"


def model_args(entry):
    args = [a for sym, v in entry.get("dim_values", {}).items() for a in ("--dim", f"{sym}={v}")]
    if "max_loop_iterations" in entry:
        args += ["--max-loop-iterations", str(entry["max_loop_iterations"])]
    return args


def weftc(tool, *args):
    out = subprocess.run([tool, *args], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(out.stderr.strip()[-400:])
    return out.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default=DEFAULT)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--weftc", default=os.path.join(ROOT, "build", "tools", "weftc", "weftc"))
    a = ap.parse_args()
    manifest = json.load(open(os.path.join(ROOT, "models", "out", "manifest.json")))
    print("| model | bf16 kernels / kernels | relative error | f32 ms | bf16 ms | speed-up |")
    print("|---|---:|---:|---:|---:|---:|")
    for name in a.models.split(","):
        entry = manifest.get(name)
        path = os.path.join(ROOT, "models", "out", f"{name}.onnx")
        if entry is None or not os.path.exists(path):
            print(f"| {name} | (not exported) | | | | |")
            continue
        extra = model_args(entry) + ["--threads", str(a.threads), "--quiet"]
        with tempfile.TemporaryDirectory() as tmp:
            rng = np.random.default_rng(0)
            feeds = {}
            for spec in compare.inputs_of(entry):
                shape = [d if s is None else compare.dim_value(entry, s, {}) for d, s in zip(spec["shape"], spec["symbolic"])]
                feeds[spec["name"]] = compare.draw(spec, shape, rng)
            np.savez(os.path.join(tmp, "in.npz"), **feeds)
            outs = {}
            for p in ("f32", "bf16"):
                f = os.path.join(tmp, p + ".npz")
                weftc(a.weftc, "run", path, "--inputs", os.path.join(tmp, "in.npz"), "--output", f, "--precision", p,
                      *extra)
                outs[p] = np.load(f)
        errors = []
        for k in outs["f32"].files:
            x, y = outs["f32"][k], outs["bf16"][k]
            if not np.issubdtype(x.dtype, np.floating):
                errors.append(float(np.any(x != y)))
                continue
            # (compared where both are finite; a difference in where they are counts as 1)
            finite = np.isfinite(x) & np.isfinite(y)
            if np.any(finite != (np.isfinite(x) | np.isfinite(y))):
                errors.append(1.0)
                continue
            scale = float(np.max(np.abs(x[finite]), initial=0.0)) or 1.0
            errors.append(float(np.max(np.abs(x[finite].astype(np.float64) - y[finite]), initial=0.0)) / scale)
        times = {"f32": [], "bf16": []}
        kernels = ""
        for _ in range(a.rounds):
            for p in ("f32", "bf16"):
                text = weftc(a.weftc, "bench", path, "--precision", p, *extra)
                times[p].append(float(re.search(r"median ([0-9.]+) ms", text).group(1)))
        f32, bf16 = statistics.median(times["f32"]), statistics.median(times["bf16"])
        print(f"| {name} | {count_bf16_kernels(a.weftc, path, extra)} | {max(errors):.1e} | {f32:.3f} | {bf16:.3f} | "
              f"{f32 / bf16:.2f} |", flush=True)


def count_bf16_kernels(tool, path, extra):
    """'N / M': kernels named matmul_bf16... of all (weftc compile's progress lines)."""
    with tempfile.TemporaryDirectory() as tmp:
        args = [a for a in extra if a != "--quiet"]
        out = subprocess.run([tool, "compile", path, "--precision", "bf16", "-o", os.path.join(tmp, "m.weft"), *args],
                             capture_output=True, text=True)
    names = re.findall(r"compiling kernel \d+/(\d+) (\S+)", out.stdout + out.stderr)
    if not names:
        return "?"
    return f"{sum('matmul_bf16' in n for _, n in names)} / {names[-1][0]}"


if __name__ == "__main__":
    main()

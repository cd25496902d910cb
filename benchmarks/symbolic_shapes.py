#!/usr/bin/env python3
"""Symbolic dimensions against fixed sizes, in one run on one machine.

    /usr/bin/python3 models/export.py --only resnet18_dynamic,lstm_tagger,gru_stateful,bert_encoder,squeezenet1_1_dynamic
    models/.venv/bin/python models/export.py --only hf_gpt2,hf_bert   # needs transformers (models/export.py)
    /usr/bin/python3 benchmarks/symbolic_shapes.py [--tool build/tests/onnx_model_run] [--runs 5] [--threads 1]

For each model, symbols and size: onnx_model_run builds the model once with the symbols kept
symbolic (onnx::LoadOptions::symbols, bounded by the max below) and runs it at the size,
twice: on the kernels compiled once over the symbols (BuildOptions::specialize_after_runs =
0), and as built by default, where the warm-up runs start the kernels specialized for the size
(waited for before the timed runs); and it builds the model with the size fixed
(LoadOptions::dim_values). The three alternate --runs times (fresh processes, --threads
threads). Prints the median latencies, their ratios to the fixed build (> 1 is slower), the
wait for the specialized kernels after the warm-up runs, the build times, the symbolic
module's first run (which compiles the kernels compiled per size, KernelInfo::per_size, at a
size not the max) and the largest difference of the outputs (the same random inputs), as a
markdown table for benchmarks/RESULTS.md.
"""
import argparse, json, os, platform, statistics, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CASES = [  # model, {symbol: max}, sizes (one value per symbol), other dimensions fixed
    ("resnet18_dynamic", {"batch": 4}, [(1,), (2,), (4,)], {}),
    ("lstm_tagger", {"seq": 100}, [(10,), (50,), (100,)], {}),
    ("gru_stateful", {"seq": 64}, [(8,), (32,), (64,)], {}),
    ("bert_encoder", {"seq": 128}, [(16,), (64,), (128,)], {}),
    # Hugging Face exports (models/export.py --only hf_gpt2,hf_bert, with transformers): BERT's
    # batch and sequence both symbolic, so its GEMMs have batch x seq rows.
    ("hf_gpt2", {"seq": 64}, [(7,), (16,), (40,)], {}),
    ("hf_bert", {"batch": 4, "seq": 64}, [(1, 12), (2, 30), (4, 50)], {}),
    # An image size: strided convolutions make extents floor terms of the symbols (derived
    # size variables), compiled once.
    ("squeezenet1_1_dynamic", {"height": 224, "width": 224}, [(224, 224), (160, 192), (96, 128)], {"batch": 1}),
]


# The int64 inputs of the models that have them (onnx_model_run draws float32 ones itself):
# their names and whether each is a padding mask (ones, then PADDING zeros) or token ids.
INT64_INPUTS = {
    "bert_encoder": [("input_ids", False), ("attention_mask", True)],
    "hf_gpt2": [("ids", False)],
    "hf_bert": [("ids", False), ("mask", True)],
}
PADDING = {"bert_encoder": 5, "hf_bert": 3}


def int64_inputs(name, values, directory):
    """Files for a model's int64 inputs at the symbols' values: [batch, seq] token ids in
    [0, 1000) and masks, the same for both builds of a size."""
    import array, random
    batch, seq = values.get("batch", 1), values["seq"] if name in INT64_INPUTS else 0
    rng = random.Random(batch * 1000 + seq)
    args = []
    for input_name, is_mask in INT64_INPUTS.get(name, []):
        row = [1] * (seq - PADDING[name]) + [0] * PADDING[name] if is_mask else None
        data = array.array("q", [x for _ in range(batch) for x in (row or [rng.randrange(1000) for _ in range(seq)])])
        path = os.path.join(directory, f"{input_name}_{batch}x{seq}.bin")
        with open(path, "wb") as f:
            data.tofile(f)
        args += ["--input", f"{input_name}={path}"]
    return args


def cpu_name():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def run(tool, model, args, out, threads=1):
    cmd = [tool, model, "--threads", str(threads), "--min-time", "0.5", "--no-warm", "--out", out] + args
    r = subprocess.run(cmd, capture_output=True, text=True)
    js = json.loads(r.stdout)
    if "error" in js:
        sys.exit(f"{os.path.basename(model)} {' '.join(args)}: {js['error']}")
    return js


def outputs(directory):
    import array
    values = {}
    for f in sorted(os.listdir(directory)):
        a = array.array("f")
        with open(os.path.join(directory, f), "rb") as fh:
            a.frombytes(fh.read())
        values[f] = a
    return values


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tool", default=os.path.join(ROOT, "build", "tests", "onnx_model_run"))
    ap.add_argument("--models", default=os.path.join(ROOT, "models", "out"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--only", default="", help="comma-separated models (default: every case)")
    ap.add_argument("--threads", type=int, default=1, help="threads the kernels run on (default 1)")
    args = ap.parse_args()
    only = [m for m in args.only.split(",") if m]
    print(f"CPU: {cpu_name()}, {args.threads} thread(s), {args.runs} alternating runs each (medians)\n")
    print("| model | symbols (max) | size | fixed ms | symbolic ms | symbolic / fixed | specialized ms "
          "| specialized / fixed | specialize wait s | build fixed / symbolic s | symbolic first run s | max diff |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for name, tops, sizes, others in CASES:
            if only and name not in only:
                continue
            model = os.path.join(args.models, name + ".onnx")
            if not os.path.exists(model):
                print(f"| {name} | (not exported: models/export.py --only {name}) |")
                continue
            pinned = [a for sym, v in others.items() for a in ("--dim", f"{sym}={v}")]
            for size in sizes:
                values = dict(zip(tops, size))
                fixed, symbolic, special, wait, build_f, build_s, first = [], [], [], [], [], [], []
                a, b, c = (os.path.join(tmp, d) for d in ("fixed", "symbolic", "specialized"))
                for d in (a, b, c):
                    os.makedirs(d, exist_ok=True)
                extra = int64_inputs(name, values, tmp) + pinned
                at_fixed = [x for sym, v in values.items() for x in ("--dim", f"{sym}={v}")]
                at_symbolic = [x for sym, v in values.items()
                               for x in ("--symbol", f"{sym}={tops[sym]}", "--at", f"{sym}={v}")]
                for _ in range(args.runs):
                    f = run(args.tool, model, at_fixed + extra, a, args.threads)
                    s = run(args.tool, model, at_symbolic + extra + ["--specialize-after", "0"], b, args.threads)
                    p = run(args.tool, model, at_symbolic + extra, c, args.threads)
                    fixed.append(f["latency_ms"][str(args.threads)]["median"])
                    symbolic.append(s["latency_ms"][str(args.threads)]["median"])
                    special.append(p["latency_ms"][str(args.threads)]["median"])
                    wait.append(p["specialize_wait_ms"] / 1000)
                    build_f.append(f["cold_build_ms"] / 1000)
                    build_s.append(s["cold_build_ms"] / 1000)
                    first.append(s["first_run_ms"] / 1000)
                oa, ob, oc = outputs(a), outputs(b), outputs(c)
                diff = max(max((abs(x - y) for x, y in zip(oa[k], o[k])), default=0.0) for k in oa for o in (ob, oc))
                mf, ms, mp = statistics.median(fixed), statistics.median(symbolic), statistics.median(special)
                symbols = ", ".join(f"{sym} ({top})" for sym, top in tops.items())
                print(f"| {name} | {symbols} | {'x'.join(map(str, size))} | {mf:.3f} | {ms:.3f} | {ms / mf:.2f} | "
                      f"{mp:.3f} | {mp / mf:.2f} | {statistics.median(wait):.2f} | "
                      f"{statistics.median(build_f):.2f} / {statistics.median(build_s):.2f} | "
                      f"{statistics.median(first):.2f} | {diff:.1e} |", flush=True)


if __name__ == "__main__":
    main()

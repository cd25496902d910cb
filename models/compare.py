#!/usr/bin/env python3
"""weft against ONNX Runtime on the models models/export.py writes.

    /usr/bin/python3 models/export.py                      # once: models/out/*.onnx
    python3 models/compare.py [--models a,b] [--doc docs/onnx-models.md]
    python3 models/compare.py --check                      # the CTest onnx/models

For each model, in one run on one machine: the same random input (fixed seed) through ONNX
Runtime (CPU provider, graph optimizations ORT_ENABLE_ALL) and through weft (the
onnx_model_run tool, a fresh process per model: load with weft::onnx::load, a cold build
that JIT-compiles every kernel, then a warm build of the same model served by weft's kernel
cache); the outputs' max relative error, max |weft - ort| / max |ort| (must be <= 1e-4);
the latency (median of run()s, at least --min-time seconds after warm-up) at 1 and 2
threads, weft's and ORT's (intra-op threads 1 and 2), and the ratio ORT / weft (> 1: weft
is faster); build times next to ORT's session creation (median of 3, 1 thread).

--check compares outputs only, for the small models (the MLP, the transformer layer,
SqueezeNet at 1x3x64x64 through its symbolic batch and image size, ...), and SqueezeNet built
once with its batch, height and width kept symbolic, run at four sizes (CHECK_SYMBOLIC);
it prints "skipped: ..." (exit 0) when the models or onnxruntime are missing.

ONNX Runtime comes from PyPI (pip install onnxruntime); when this Python lacks it, the
script re-runs itself with models/.venv/bin/python if that exists (a venv made with
--system-site-packages, so it sees Debian's numpy; see docs/onnx-models.md).
"""
import argparse, datetime, json, os, platform, subprocess, sys, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
VENV_PY = os.path.join(HERE, ".venv", "bin", "python")

try:
    import numpy as np
    import onnxruntime as ort
except ImportError as e:
    if os.path.exists(VENV_PY) and os.path.abspath(sys.executable) != VENV_PY and not os.environ.get("WEFT_NO_REEXEC"):
        os.environ["WEFT_NO_REEXEC"] = "1"
        os.execv(VENV_PY, [VENV_PY] + sys.argv)
    print(f"skipped: {e.name or e} is not installed (pip install onnxruntime; see docs/onnx-models.md)")
    sys.exit(0)

CHECK_MODELS = ["mlp", "transformer", "squeezenet1_1_dynamic", "gru_stateful", "bert_encoder", "iterative_refiner"]
# --check also runs these built once with their symbols kept symbolic (bounded by the max) at
# each size: SqueezeNet's image height and width, its convolutions compiled once over their
# floor terms (odd sizes: its ceil-mode pools keep a last, partial window at 65 and 61 rows).
CHECK_SYMBOLIC = {"squeezenet1_1_dynamic": ({"batch": 2, "height": 96, "width": 96},
                                            [{"batch": 1, "height": 64, "width": 64},
                                             {"batch": 2, "height": 57, "width": 80},
                                             {"batch": 1, "height": 65, "width": 61},
                                             {"batch": 1, "height": 96, "width": 96}])}
TOLERANCE = 1e-4


def find_tool(arg):
    if arg:
        return arg
    for b in ("build-models", "build"):
        p = os.path.join(ROOT, b, "tests", "onnx_model_run")
        if os.path.exists(p):
            return p
    sys.exit("no onnx_model_run found: build the target onnx_model_run and pass --tool")


def inputs_of(entry):
    """The manifest's inputs; a manifest written before inputs were listed had one float input."""
    if "inputs" in entry:
        return entry["inputs"]
    return [{"name": entry["input"], "shape": entry["shape"], "symbolic": entry["symbolic"], "dtype": "float32",
             "low": -1.0, "high": 1.0, "pad": 0}]


def dim_value(entry, sym, overrides):
    return overrides.get(sym, entry["dim_values"].get(sym))


def input_shape(entry, spec, overrides=None):
    """An input's shape: the manifest's, its symbolic dimensions at their values (or `overrides`')."""
    return [dim_value(entry, sym, overrides or {}) if sym else d for d, sym in zip(spec["shape"], spec["symbolic"])]


def draw_inputs(entry, rng, overrides=None):
    """Every input of a manifest entry drawn (`draw`), by name, in the manifest's order."""
    return {spec["name"]: draw(spec, input_shape(entry, spec, overrides), rng) for spec in inputs_of(entry)}


def draw(spec, shape, rng):
    """An input's values: uniform [low, high) (integers for integer types), or a padding mask
    (ones, then `pad` zeros along the last axis)."""
    if spec["pad"]:
        x = np.ones(shape, dtype=spec["dtype"])
        x[..., -spec["pad"]:] = 0
        return x
    if spec["dtype"].startswith("int"):
        return rng.integers(int(spec["low"]), int(spec["high"]), size=shape).astype(spec["dtype"])
    return rng.uniform(spec["low"], spec["high"], size=shape).astype(spec["dtype"])


def ort_session(path, threads):
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def time_runs(fn, min_time, min_runs=10):
    fn()
    fn()
    t = []
    start = time.perf_counter()
    while len(t) < min_runs or time.perf_counter() - start < min_time:
        t0 = time.perf_counter()
        fn()
        t.append((time.perf_counter() - t0) * 1e3)
    t.sort()
    return {"median": t[len(t) // 2], "min": t[0]}


def run_model(name, entry, args, tool, work, symbolic=None):
    """symbolic: (each symbol's max, the values to run at): built once with the symbols kept
    symbolic, run at those values; else built for the manifest's values."""
    path = os.path.join(args.dir, entry["file"])
    overrides = {}
    if args.check and name == "squeezenet1_1_dynamic":
        overrides = {"batch": 1, "height": 64, "width": 64}
    if symbolic:
        overrides = symbolic[1]
    rng = np.random.default_rng(20240601)
    feed, symbols = {}, {}
    cmd = [tool, path, "--out", os.path.join(work, name)]
    os.makedirs(os.path.join(work, name), exist_ok=True)
    for spec in inputs_of(entry):
        shape = input_shape(entry, spec, overrides)
        symbols.update({sym: dim_value(entry, sym, overrides) for sym in spec["symbolic"] if sym})
        x = draw(spec, shape, rng)
        feed[spec["name"]] = x
        in_file = os.path.join(work, f"{name}.{spec['name']}.bin")
        x.tofile(in_file)
        cmd += ["--input", f"{spec['name']}={in_file}"]
    for sym, v in symbols.items():
        cmd += ["--symbol", f"{sym}={symbolic[0][sym]}", "--at", f"{sym}={v}"] if symbolic else ["--dim", f"{sym}={v}"]
    if "max_loop_iterations" in entry:
        cmd += ["--max-loop-iterations", str(entry["max_loop_iterations"])]
    r = {"model": name, "shape": ", ".join("x".join(map(str, x.shape)) for x in feed.values())}

    # weft: a fresh process (cold build), then a warm build and the timings.
    if not args.check:
        cmd += ["--threads", "1,2", "--min-time", str(args.min_time)]
    else:
        cmd += ["--no-warm"]
    r["weft_command"] = " ".join(os.path.relpath(c, ROOT) if os.path.isabs(c) else c for c in cmd)
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True)
    r["weft_process_s"] = time.perf_counter() - t0
    try:
        w = json.loads(p.stdout.strip().splitlines()[-1])
    except Exception:
        w = {"error": f"exit {p.returncode}: {p.stderr.strip()[-2000:]}"}
    r["weft"] = w
    if "error" in w:
        return r

    # ONNX Runtime: session creation (median of 3), outputs, latency.
    creations = []
    for _ in range(3):
        t0 = time.perf_counter()
        sess = ort_session(path, 1)
        creations.append((time.perf_counter() - t0) * 1e3)
    r["ort_session_ms"] = sorted(creations)[1]
    r["ort_session_first_ms"] = creations[0]
    ref = sess.run(None, feed)
    errs = []
    for k, o in enumerate(w["outputs"]):
        got = np.fromfile(o["file"], dtype=o["dtype"]).reshape(o["shape"])
        want = ref[k]
        if list(got.shape) != list(want.shape):
            errs.append({"name": o["name"], "error": f"shape {list(got.shape)} vs ORT {list(want.shape)}"})
            continue
        diff = np.abs(got.astype(np.float64) - want.astype(np.float64))
        scale = float(np.max(np.abs(want))) or 1.0
        errs.append({"name": o["name"], "max_abs": float(diff.max()), "max_rel": float(diff.max()) / scale,
                     "nonfinite": int((~np.isfinite(got)).sum())})
    r["errors"] = errs
    r["max_rel"] = max((e.get("max_rel", float("inf")) for e in errs), default=float("inf"))
    if any(e.get("nonfinite") for e in errs):
        r["max_rel"] = float("inf")
    if not args.check:
        r["ort_latency_ms"] = {}
        for t in (1, 2):
            s = ort_session(path, t)
            r["ort_latency_ms"][str(t)] = time_runs(lambda: s.run(None, feed), args.min_time)
    return r


def fmt_ms(v):
    return f"{v:.0f}" if v >= 100 else (f"{v:.1f}" if v >= 1 else f"{v:.3f}")


def machine_state():
    def sh(c):
        return subprocess.run(c, shell=True, capture_output=True, text=True).stdout.strip()
    cpu = next((l.split(":", 1)[1].strip() for l in sh("LC_ALL=C lscpu").splitlines()
                if l.startswith("Model name")), "?")
    return {
        "date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
        "cpu": cpu, "cpus": os.cpu_count(), "load": " ".join(f"{x:.2f}" for x in os.getloadavg()),
        "os": f"{platform.system()} {platform.release()}",
        "python": f"{platform.python_version()} ({sys.executable})", "numpy": np.__version__, "onnxruntime": ort.__version__,
        "commit": sh(f"git -C {ROOT} rev-parse --short HEAD") + (" (with local changes)" if sh(f"git -C {ROOT} status --porcelain --untracked-files=no") else ""),
        "compiler": sh("clang++-19 --version | head -1"),
    }


def write_doc(path, results, state, command, torch_versions):
    lines = []
    a = lines.append
    a("## Results\n")
    a(f"Written by `models/compare.py --doc`; the numbers of one run, on one machine, weft and ONNX Runtime")
    a("side by side (each model: weft's process, then ORT in the script's process).\n")
    a(f"- date: {state['date']}; machine: {state['cpu']}, {state['cpus']} CPUs, load average (1, 5, 15 min) before "
      f"the run {state['load']}, after it {' '.join(f'{x:.2f}' for x in os.getloadavg())} (a load near or above "
      f"the CPU count means other processes shared the cores: 2-thread figures suffer first); {state['os']}")
    a(f"- weft {state['commit']}, {state['compiler']}, Release; ONNX Runtime {state['onnxruntime']} (PyPI, "
      f"CPUExecutionProvider, ORT_ENABLE_ALL, sequential), Python {state['python']}, numpy {state['numpy']}; "
      f"models from torch {torch_versions.get('torch', '?')} / torchvision {torch_versions.get('torchvision', '?')}")
    a(f"- command: `{command}`\n")
    a("| model | input | opset | max rel err | weft 1t ms | ORT 1t ms | ratio 1t | weft 2t ms | ORT 2t ms | ratio 2t "
      "| weft load + cold build ms | weft warm load + build ms | ORT session ms | kernels (JIT-compiled in the cold build) |")
    a("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        w = r["weft"]
        if "error" in w:
            a(f"| {r['model']} | {r['shape']} | | **weft error**: {w['error'][:200]} |||||||||||")
            continue
        lt, ot = w["latency_ms"], r["ort_latency_ms"]
        cells = [r["model"], r["shape"], str(r["opset"]),
                 f"{r['max_rel']:.1e}" + ("" if r["max_rel"] <= TOLERANCE else " **FAIL**")]
        for t in ("1", "2"):
            cells += [fmt_ms(lt[t]["median"]), fmt_ms(ot[t]["median"]), f"{ot[t]['median'] / lt[t]['median']:.2f}"]
        cells += [f"{w['load_ms']:.0f} + {w['cold_build_ms']:.0f}", f"{w['warm_load_ms']:.0f} + {w['warm_build_ms']:.0f}",
                  f"{r['ort_session_ms']:.0f}", f"{w['kernels']} ({w['kernels_compiled']} JIT)"]
        a("| " + " | ".join(cells) + " |")
    a("")
    a("- max rel err: max |weft - ORT| / max |ORT| over the output, same input (uniform [-1, 1), seed 20240601)")
    a("- latency: median wall time of one run (weft: `Module::run()`; ORT: `InferenceSession.run`, which includes")
    a("  its Python binding and copying the output), after 2 warm-up runs, at least the `--min-time` per figure;")
    a("  ratio = ORT / weft (> 1: weft is faster)")
    a("- weft load + cold build: `onnx::load` + `graph::build` in a fresh process (every kernel JIT-compiled);")
    a("  warm: the same load + build again in that process (the kernel cache serves every kernel);")
    a("  ORT session: `InferenceSession(path)` with graph optimizations, median of 3 (1 thread)")
    a("- kernels: the module's kernels; JIT: the kernel cache's misses during the cold build (the constant")
    a("  folding's kernels included)")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", default=os.path.join(HERE, "out"), help="where export.py wrote the models")
    ap.add_argument("--tool", default="", help="the onnx_model_run binary")
    ap.add_argument("--models", default="", help="comma-separated (default: all in the manifest)")
    ap.add_argument("--min-time", type=float, default=2.0, help="seconds per latency figure")
    ap.add_argument("--check", action="store_true", help="outputs only, small models (the CTest)")
    ap.add_argument("--doc", default="", help="write the results section of this markdown file")
    ap.add_argument("--json", default="", help="write the raw results here")
    args = ap.parse_args()

    manifest_path = os.path.join(args.dir, "manifest.json")
    if not os.path.exists(manifest_path):
        print(f"skipped: no exported models in {args.dir} (run /usr/bin/python3 models/export.py)")
        return 0
    manifest = json.load(open(manifest_path))
    names = [n for n in args.models.split(",") if n] or (CHECK_MODELS if args.check else
                                                         [n for n in manifest if not n.startswith("_")])
    missing = [n for n in names if n not in manifest or not os.path.exists(os.path.join(args.dir, manifest[n]["file"]))]
    if missing:
        print(f"skipped: models not exported: {', '.join(missing)} (run /usr/bin/python3 models/export.py)")
        return 0
    tool = find_tool(args.tool)
    state = machine_state()
    failed = []
    results = []
    runs = [(n, n, None) for n in names]
    if args.check:
        runs += [(n + " (symbolic)", n, (maxes, values)) for n, (maxes, sizes) in CHECK_SYMBOLIC.items()
                 if n in names for values in sizes]
    with tempfile.TemporaryDirectory(prefix="weft-models-") as work:
        for label, n, symbolic in runs:
            r = run_model(n, manifest[n], args, tool, work, symbolic)
            r["opset"] = manifest[n]["opset"]
            results.append(r)
            w = r["weft"]
            if "error" in w:
                print(f"{label}: weft error: {w['error']}", flush=True)
                failed.append(label)
                continue
            ok = r["max_rel"] <= TOLERANCE
            if not ok:
                failed.append(label)
            line = (f"{label} {r['shape']}: max rel err {r['max_rel']:.2e} "
                    f"({'ok' if ok else 'MISMATCH'}); weft load {w['load_ms']:.0f} ms + build cold "
                    f"{w['cold_build_ms']:.0f} ms ({w['kernels']} kernels)")
            if not args.check:
                line += f", warm {w['warm_load_ms']:.0f} + {w['warm_build_ms']:.0f} ms; ORT session {r['ort_session_ms']:.0f} ms"
                for t in ("1", "2"):
                    lw, lo = w["latency_ms"][t]["median"], r["ort_latency_ms"][t]["median"]
                    line += f"; {t}t weft {fmt_ms(lw)} ms ORT {fmt_ms(lo)} ms ratio {lo / lw:.2f}"
            print(line, flush=True)
    if args.json:
        json.dump({"state": state, "results": results}, open(args.json, "w"), indent=1)
    if args.doc:
        command = "python3 models/compare.py " + " ".join(sys.argv[1:])
        section = write_doc(args.doc, results, state, command, manifest.get("_torch", {}))
        text = open(args.doc).read() if os.path.exists(args.doc) else ""
        marker = "## Results\n"
        text = (text.split(marker)[0] if marker in text else text + "\n") + section
        open(args.doc, "w").write(text)
        print(f"wrote {args.doc}")
    if failed:
        print(f"FAILED: {', '.join(failed)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

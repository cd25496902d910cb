#!/usr/bin/env python3
"""Start-up: how long until a model can run, weft against ONNX Runtime and OpenVINO, in one run.

    /usr/bin/python3 models/export.py                  # once: models/out/*.onnx
    python3 benchmarks/startup.py [--models resnet50,mobilenet_v2] [--rounds 3]

For each model and round, alternating: weft in a fresh process (tests/onnx_model_run
--no-warm: onnx::load, then graph::build), cold (no disk kernel cache: every kernel
JIT-compiled), tiered (the same with --tier tiered: until build() returns with the fast
kernels; graph.md, "Compile tiers") and warm (WEFT_KERNEL_CACHE_DIR filled by an earlier process: the kernels
come from disk; the import, the passes and the plan are redone), cached (weftc run
--cache-dir: onnx::compile loads the module an earlier process kept, no import and no
compile, --threads 1), ONNX Runtime's
InferenceSession(path) (graph optimizations on, 1 intra-op thread; also its first session in a
fresh process, which a cached weft start in a fresh process compares with like for like) and OpenVINO's
core.compile_model(path, "CPU") in this process (each the median of 3). Medians over the
rounds; the ratios weft / peer (< 1: weft starts sooner). ORT and OpenVINO come from PyPI:
the script re-runs itself with models/.venv/bin/python, then /root/venv/bin/python, when
this Python lacks them; a missing peer's columns say "-".
"""
import argparse, json, os, statistics, subprocess, sys, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def reexec_with_peers():
    """Runs this script again with a Python that has both peers (else ONNX Runtime alone)."""
    if os.environ.get("WEFT_NO_REEXEC"):
        return
    candidates = [py for py in (os.path.join(ROOT, "models", ".venv", "bin", "python"), "/root/venv/bin/python")
                  if os.path.exists(py) and os.path.abspath(sys.executable) != py]
    for imports in ("import onnxruntime, openvino", "import onnxruntime"):
        for py in candidates:
            if subprocess.run([py, "-c", imports], capture_output=True).returncode == 0:
                os.environ["WEFT_NO_REEXEC"] = "1"
                os.execv(py, [py] + sys.argv)


try:
    import onnxruntime as ort
    import openvino as ov
except ImportError:
    reexec_with_peers()
    try:
        import onnxruntime as ort
    except ImportError:
        ort = None
    try:
        import openvino as ov
    except ImportError:
        ov = None


def integer_inputs(entry, work):
    """onnx_model_run's --input arguments for the inputs that are not float32 (token ids, masks:
    it draws random floats itself), drawn as models/compare.py draws them."""
    sys.path.insert(0, os.path.join(ROOT, "models"))
    import numpy as np
    import compare
    rng = np.random.default_rng(20240601)
    args = []
    for spec in compare.inputs_of(entry):
        if spec["dtype"] == "float32":
            continue
        f = os.path.join(work, spec["name"] + ".bin")
        compare.draw(spec, compare.input_shape(entry, spec), rng).tofile(f)
        args += ["--input", f"{spec['name']}={f}"]
    return args


def weft_build(tool, path, extra, cache_dir=None):
    env = dict(os.environ)
    env.pop("WEFT_KERNEL_CACHE_DIR", None)
    if cache_dir:
        env["WEFT_KERNEL_CACHE_DIR"] = cache_dir
    out = subprocess.run([tool, path, "--no-warm"] + extra, capture_output=True, text=True, env=env)
    line = out.stdout.strip().splitlines()[-1] if out.stdout.strip() else "{}"
    r = json.loads(line)
    if "error" in r or "cold_build_ms" not in r:
        raise RuntimeError(f"{path}: {r.get('error', out.stderr.strip()[-300:])}")
    return r


def weft_cached_ms(weftc, path, extra, cache_dir):
    """weftc run MODEL.onnx --cache-dir: onnx::compile loading the module an earlier process
    kept there (no import, no compile); the "compile" time it prints, in ms."""
    env = dict(os.environ)
    env.pop("WEFT_KERNEL_CACHE_DIR", None)
    env.pop("WEFT_MODEL_CACHE_DIR", None)
    out = subprocess.run([weftc, "run", path, "--cache-dir", cache_dir, "--print-time", "--quiet", "--threads", "1"]
                         + extra, capture_output=True, text=True, env=env)
    for line in out.stdout.splitlines():
        if line.startswith("compile "):
            return float(line.split()[1])
    raise RuntimeError(f"{path}: weftc run: {out.stderr.strip()[-300:]}")


def median_of(f, n=3):
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        f()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def ort_session_ms(path):
    if ort is None:
        return None
    o = ort.SessionOptions()
    o.intra_op_num_threads = 1
    o.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return median_of(lambda: ort.InferenceSession(path, o, providers=["CPUExecutionProvider"]))


ORT_FIRST = '''
import sys, time, onnxruntime as ort
o = ort.SessionOptions()
o.intra_op_num_threads = 1
o.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
t0 = time.perf_counter()
ort.InferenceSession(sys.argv[1], o, providers=["CPUExecutionProvider"])
print((time.perf_counter() - t0) * 1e3)
'''


def ort_first_session_ms(path):
    """ONNX Runtime's first session in a fresh process (after `import onnxruntime`, untimed):
    what weft's cached start in a fresh process compares with like for like."""
    if ort is None:
        return None
    out = subprocess.run([sys.executable, "-c", ORT_FIRST, path], capture_output=True, text=True)
    return float(out.stdout.strip().splitlines()[-1])


def openvino_compile_ms(path):
    if ov is None:
        return None
    core = ov.Core()
    try:
        return median_of(lambda: core.compile_model(path, "CPU"))
    except Exception:  # (a model OpenVINO does not convert: its columns say "-")
        return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="resnet50,resnet18,mobilenet_v2,transformer,deeplabv3_mobilenet")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--dir", default=os.path.join(ROOT, "models", "out"))
    ap.add_argument("--tool", default=os.path.join(ROOT, "build", "tests", "onnx_model_run"))
    ap.add_argument("--weftc", default=os.path.join(ROOT, "build", "tools", "weftc", "weftc"))
    args = ap.parse_args()
    manifest = json.load(open(os.path.join(args.dir, "manifest.json")))
    print("| model | kernels | weft cold ms | weft tiered ms | weft warm ms | weft cached ms | ORT session ms | "
          "ORT 1st session ms | OpenVINO compile ms | cold / ORT | tiered / ORT | warm / ORT | cached / ORT | "
          "cached / ORT 1st | cold / OpenVINO |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name in [m for m in args.models.split(",") if m]:
        entry = manifest[name]
        path = os.path.join(args.dir, entry["file"])
        extra = [a for sym, v in entry.get("dim_values", {}).items() for a in ("--dim", f"{sym}={v}")]
        if "max_loop_iterations" in entry:
            extra += ["--max-loop-iterations", str(entry["max_loop_iterations"])]
        cold, tiered, warm, cached, ort_ms, ort_first, ov_ms, kernels = [], [], [], [], [], [], [], 0
        with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as models:
            run_extra = extra + integer_inputs(entry, models)
            weft_build(args.tool, path, run_extra, cache)  # fills the disk cache (untimed)
            weft_cached_ms(args.weftc, path, extra, models)  # keeps the module (untimed)
            for _ in range(args.rounds):
                r = weft_build(args.tool, path, run_extra)
                cold.append(r["load_ms"] + r["cold_build_ms"])
                kernels = r["kernels"]
                r = weft_build(args.tool, path, run_extra + ["--tier", "tiered"])
                tiered.append(r["load_ms"] + r["cold_build_ms"])
                r = weft_build(args.tool, path, run_extra, cache)
                warm.append(r["load_ms"] + r["cold_build_ms"])
                cached.append(weft_cached_ms(args.weftc, path, extra, models))
                ort_ms.append(ort_session_ms(path))
                ort_first.append(ort_first_session_ms(path))
                ov_ms.append(openvino_compile_ms(path))
        med = lambda xs: statistics.median(xs) if xs and all(x is not None for x in xs) else None
        c, t, w, k, o, f, v = med(cold), med(tiered), med(warm), med(cached), med(ort_ms), med(ort_first), med(ov_ms)
        fmt = lambda x: "-" if x is None else f"{x:.0f}"
        ratio = lambda a, b: "-" if a is None or b is None else (f"{a / b:.1f}" if a / b >= 0.95 else f"{a / b:.2f}")
        print(f"| {name} | {kernels} | {fmt(c)} | {fmt(t)} | {fmt(w)} | {fmt(k)} | {fmt(o)} | {fmt(f)} | {fmt(v)} | "
              f"{ratio(c, o)} | {ratio(t, o)} | {ratio(w, o)} | {ratio(k, o)} | {ratio(k, f)} | {ratio(c, v)} |",
              flush=True)


if __name__ == "__main__":
    main()

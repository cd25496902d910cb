#!/usr/bin/env python3
"""Precision: the models under models/ built in float32 and with --precision bf16 (or int8), in one run.

    /usr/bin/python3 models/export.py                 # once: models/out/*.onnx
    models/.venv/bin/python benchmarks/precision.py [--models mlp,transformer] [--rounds 5] [--threads 1]
    models/.venv/bin/python benchmarks/precision.py --top1 200 --models resnet18,resnet50 [--precision int8]
    models/.venv/bin/python benchmarks/precision.py --precision int8 --models mlp,transformer

With --precision int8 each model is calibrated on 8 inputs drawn as the test input is (other
seeds: weftc --calibrate), and the OpenVINO columns stay empty.

(the Python of models/compare.py, whose inputs it draws: uniform floats, integers in the
manifest's range, padding masks). For each model: its outputs on the same inputs in float32 and in
bf16, the relative error max|bf16 - f32| / max|f32| per output (the worst printed), then
its latency (weftc bench's median) in alternating fresh processes, f32 then bf16, medians
over the rounds; speed-up = f32 ms / bf16 ms. OpenVINO (PyPI, where installed): the same
model and inputs compiled with INFERENCE_PRECISION_HINT bf16 (its default on a CPU with
AVX512_BF16 or AMX) on as many threads, its error against weft's float32 output and its
median latency (in this process, after weft's rounds); weft bf16 / OpenVINO bf16 is a speed
ratio (> 1: weft faster). "bf16 kernels" counts the kernels that run
matmul_bf16 or conv2d_nchwc_bf16 (the layers that convert: BuildOptions::precision in
docs/graph.md).
"""
import argparse, json, os, re, statistics, subprocess, sys, tempfile, time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "models"))
import compare  # noqa: E402  (the manifest's inputs: compare.draw_inputs, compare.draw)
DEFAULT = ("mlp,transformer,bert_encoder,hf_bert,hf_gpt2,lstm_tagger,resnet18,resnet50,mobilenet_v2,squeezenet1_1,"
           "densenet121,swin_t")


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
    ap.add_argument("--precision", default="bf16", choices=["bf16", "int8"],
                    help="the low precision against float32 (int8: calibrated on 8 inputs drawn as the test's)")
    ap.add_argument("--percentile", type=float, default=100.0,
                    help="with --precision int8: the calibration percentile (weftc --calibrate-percentile; 100: min-max)")
    ap.add_argument("--weftc", default=os.path.join(ROOT, "build", "tools", "weftc", "weftc"))
    ap.add_argument("--top1", type=int, default=0,
                    help="instead: the classifiers' top-1 agreement with float32 over this many random inputs")
    a = ap.parse_args()
    manifest = json.load(open(os.path.join(ROOT, "models", "out", "manifest.json")))
    if a.top1:
        return top1_agreement(a, manifest)
    low = a.precision
    print(f"| model | {low} kernels / kernels | relative error | f32 ms | {low} ms | speed-up | OpenVINO bf16 error | "
          "OpenVINO bf16 ms | weft bf16 / OpenVINO |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name in a.models.split(","):
        entry = manifest.get(name)
        path = os.path.join(ROOT, "models", "out", f"{name}.onnx")
        if entry is None or not os.path.exists(path):
            print(f"| {name} | (not exported) | | | | | | | |")
            continue
        extra = model_args(entry) + ["--threads", str(a.threads), "--quiet"]
        with tempfile.TemporaryDirectory() as tmp:
            rng = np.random.default_rng(0)
            feeds = compare.draw_inputs(entry, rng)
            np.savez(os.path.join(tmp, "in.npz"), **feeds)
            # int8: calibration inputs drawn as the test input is (other seeds), kept for the
            # bench runs below (the temporary directory lives until the model's row is printed).
            settings = {"f32": ["--precision", "f32"], "bf16": ["--precision", "bf16"],
                        "int8": ["--precision", "int8", "--calibrate-percentile", str(a.percentile)]}
            for c in range(8 if low == "int8" else 0):
                np.savez(os.path.join(tmp, f"cal{c}.npz"), **compare.draw_inputs(entry, np.random.default_rng(100 + c)))
                settings["int8"] += ["--calibrate", os.path.join(tmp, f"cal{c}.npz")]
            outs = {}
            for p in ("f32", low):
                f = os.path.join(tmp, p + ".npz")
                weftc(a.weftc, "run", path, "--inputs", os.path.join(tmp, "in.npz"), "--output", f, *settings[p], *extra)
                outs[p] = np.load(f)
            row = measure(a, name, path, extra, feeds, outs, low, settings)
        print(row, flush=True)


def measure(a, name, path, extra, feeds, outs, low, settings):
    """The model's row: the low precision's error against float32, both latencies, OpenVINO's bf16."""
    errors = []
    for k in outs["f32"].files:
        x, y = outs["f32"][k], outs[low][k]
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
    times = {"f32": [], low: []}
    for _ in range(a.rounds):
        for p in ("f32", low):
            text = weftc(a.weftc, "bench", path, *settings[p], *extra)
            times[p].append(float(re.search(r"median ([0-9.]+) ms", text).group(1)))
    f32, lp = statistics.median(times["f32"]), statistics.median(times[low])
    ov_error, ov_ms = openvino_bf16(path, feeds, outs["f32"], a.threads) if low == "bf16" else (None, None)
    ov = f"{ov_error:.1e} | {ov_ms:.3f} | {ov_ms / lp:.2f}" if ov_ms else "- | - | -"
    return (f"| {name} | {count_low_kernels(a.weftc, path, extra, settings[low])} | {max(errors):.1e} | {f32:.3f} | "
            f"{lp:.3f} | {f32 / lp:.2f} | {ov} |")


def top1_agreement(a, manifest):
    """For each model (a classifier: one input, one output of class scores), the share of
    `a.top1` random inputs on which weft's low-precision build (bf16, or int8 calibrated on 8
    image-like inputs of other seeds) and OpenVINO's bf16 pick the class weft's float32 build
    picks. Each weftc process loads its module from a model cache (one compile per precision)."""
    low = a.precision
    print(f"| model | inputs | classes picked (f32) | weft {low} top-1 = f32 | OpenVINO bf16 top-1 = weft f32 |")
    print("|---|---:|---:|---:|---:|")
    for name in a.models.split(","):
        entry, path = manifest[name], os.path.join(ROOT, "models", "out", f"{name}.onnx")
        spec = compare.inputs_of(entry)[0]
        shape = compare.input_shape(entry, spec)
        draw = lambda rng: image_like(shape, rng) if len(shape) == 4 else compare.draw(spec, shape, rng)
        rng = np.random.default_rng(1)
        # (uniform noise drives a classifier to one or two classes: image_like inputs instead)
        picks = {"f32": [], low: [], "ov": []}
        ov_request = None
        with tempfile.TemporaryDirectory() as tmp:
            settings = {"f32": ["--precision", "f32"], low: ["--precision", low]}
            if low == "int8":
                settings[low] += ["--calibrate-percentile", str(a.percentile)]
            for c in range(8 if low == "int8" else 0):
                np.savez(os.path.join(tmp, f"cal{c}.npz"), **{spec["name"]: draw(np.random.default_rng(1000 + c))})
                settings[low] += ["--calibrate", os.path.join(tmp, f"cal{c}.npz")]
            for i in range(a.top1):
                x = draw(rng)
                np.savez(os.path.join(tmp, "in.npz"), **{spec["name"]: x})
                for p in ("f32", low):
                    out = os.path.join(tmp, "out.npz")
                    weftc(a.weftc, "run", path, "--inputs", os.path.join(tmp, "in.npz"), "--output", out, *settings[p],
                          "--cache-dir", os.path.join(tmp, "cache"), "--threads", str(a.threads), "--quiet",
                          *model_args(entry))
                    y = np.load(out)
                    picks[p].append(int(np.argmax(y[y.files[0]])))
                if ov_request is None:
                    ov_request = openvino_request(path, {spec["name"]: x}, a.threads)
                if ov_request:
                    result = ov_request.infer({spec["name"]: x})
                    picks["ov"].append(int(np.argmax(next(iter(result.values())))))
        same = lambda k: sum(p == q for p, q in zip(picks[k], picks["f32"])) / len(picks["f32"])
        ov = f"{same('ov'):.3f}" if picks["ov"] else "-"
        print(f"| {name} | {a.top1} | {len(set(picks['f32']))} | {same(low):.3f} | {ov} |", flush=True)


def image_like(shape, rng):
    """A random 7x7 pattern per channel blown up to the image (blocks of colour, like a
    picture's large shapes) plus noise: classifiers pick many classes on these."""
    n, c, h, w = shape
    low = rng.uniform(-1.5, 1.5, size=(n, c, 7, 7))
    base = np.repeat(np.repeat(low, -(-h // 7), axis=2), -(-w // 7), axis=3)[:, :, :h, :w]
    return (base + 0.3 * rng.standard_normal(shape)).astype(np.float32)


def openvino_request(path, feeds, threads):
    """An OpenVINO bf16 infer request for the model at `path` (None without OpenVINO, or for
    a model it does not read)."""
    try:
        import openvino as ov
        core = ov.Core()
        model = core.read_model(path)
        model.reshape({k: list(v.shape) for k, v in feeds.items()})
        compiled = core.compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "bf16", "INFERENCE_NUM_THREADS": threads})
        return compiled.create_infer_request()
    except (ImportError, RuntimeError):
        return None


def openvino_bf16(path, feeds, reference, threads, runs=200):
    """OpenVINO's bf16 inference of the model on `feeds`: (its worst relative error against
    `reference`, weft's float32 outputs by name; its median ms), or (None, None) without it."""
    request = openvino_request(path, feeds, threads)  # (swin_t: OpenVINO does not read it)
    if request is None:
        return None, None
    result = request.infer(feeds)
    errors = []
    for port in request.model_outputs:
        names = [n for n in port.get_names() if n in reference.files]  # (a port has several)
        if not names or not np.issubdtype(reference[names[0]].dtype, np.floating):
            continue
        x = reference[names[0]].astype(np.float64)
        y = np.asarray(result[port]).reshape(x.shape)
        finite = np.isfinite(x) & np.isfinite(y)
        errors.append(float(np.max(np.abs(x[finite] - y[finite]), initial=0.0)) / (float(np.max(np.abs(x[finite]), initial=0.0)) or 1.0))
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        request.infer(feeds)
        times.append((time.perf_counter() - t0) * 1e3)
    return max(errors, default=float("nan")), statistics.median(times)


def count_low_kernels(tool, path, extra, setting):
    """'N / M': the kernels of the low precision (named ..._bf16... or ...u8s8...) of all (weftc
    compile's progress lines)."""
    with tempfile.TemporaryDirectory() as tmp:
        args = [a for a in extra if a != "--quiet"]
        out = subprocess.run([tool, "compile", path, *setting, "-o", os.path.join(tmp, "m.weft"), *args],
                             capture_output=True, text=True)
    names = re.findall(r"compiling kernel \d+/(\d+) (\S+)", out.stdout + out.stderr)
    if not names:
        return "?"
    return f"{sum('_bf16' in n or 'u8s8' in n for _, n in names)} / {names[-1][0]}"


if __name__ == "__main__":
    main()

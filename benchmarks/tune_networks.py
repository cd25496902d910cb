#!/usr/bin/env python3
"""Whole networks tuned: each model under models/ tuned with `weftc tune --tuner model`, then
timed untuned, tuned, with ONNX Runtime and with OpenVINO (precision forced to f32) in
alternating rounds, at 1 and 2 threads; rewrites the "Tuning whole networks" section of
benchmarks/RESULTS.md and keeps the records (build/tuning/MODEL-tT.jsonl) for
benchmarks/pretune.py.

Run with the Python that has onnxruntime and openvino (pip-installed in a venv):

    /root/venv/bin/python benchmarks/tune_networks.py [--models resnet18,mobilenet_v2]
        [--threads 1,2] [--total-trials 300] [--time-budget 600] [--rounds 5] [--repeat 30]
        [--skip-tune] [--pretune]

The models are exported with Debian's Python (/usr/bin/python3 models/export.py) when
missing. weft's untuned figure ignores the pre-tuned records (--no-pretuned); the tuned one
uses only this run's. --pretune merges this run's records into weft's pre-tuned records.
"""
import argparse, datetime, os, platform, re, statistics, subprocess, sys, time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import results_sections

ROOT = results_sections.ROOT
MODELS_DIR = os.path.join(ROOT, "models", "out")
SECTION = results_sections.NETWORKS
DEFAULT_MODELS = "mlp,transformer,resnet18,resnet50,mobilenet_v2,squeezenet1_1"


def weftc(build):
    return os.path.join(ROOT, build, "tools", "weftc", "weftc")


def export(models):
    missing = [m for m in models if not os.path.exists(os.path.join(MODELS_DIR, m + ".onnx"))]
    if missing:
        subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "models", "export.py"), "--only", ",".join(missing)],
                       check=True)


def input_shape(model):
    import onnx
    m = onnx.load(os.path.join(MODELS_DIR, model + ".onnx"), load_external_data=False)
    inp = m.graph.input[0]
    return inp.name, [d.dim_value for d in inp.type.tensor_type.shape.dim]


def tune(args, model, threads, records):
    if os.path.exists(records):
        os.remove(records)
    t0 = time.time()
    subprocess.run([weftc(args.build), "tune", os.path.join(MODELS_DIR, model + ".onnx"), "-o", records,
                    "--tuner", "model", "--total-trials", str(args.total_trials), "--time-budget",
                    f"{args.time_budget:g}", "--threads", str(threads)], check=True, stderr=subprocess.DEVNULL)
    trials = sum(1 for line in open(records) if line.strip())
    return time.time() - t0, trials


def weft_ms(args, model, threads, records=None):
    cmd = [weftc(args.build), "bench", os.path.join(MODELS_DIR, model + ".onnx"), "--threads", str(threads),
           "--repeat", str(args.repeat), "--warmup", "5", "--quiet", "--no-pretuned"]
    if records:
        cmd += ["--records", records]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return float(re.search(r"median ([0-9.]+) ms", out).group(1))


def time_runs(run, repeat):
    for _ in range(5):
        run()
    t = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        run()
        t.append((time.perf_counter() - t0) * 1000)
    return statistics.median(t)


class Ort:
    def __init__(self, model, threads, x):
        import onnxruntime as ort
        o = ort.SessionOptions()
        o.intra_op_num_threads = threads
        o.inter_op_num_threads = 1
        o.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        self.s = ort.InferenceSession(os.path.join(MODELS_DIR, model + ".onnx"), o, providers=["CPUExecutionProvider"])
        self.feed = {self.s.get_inputs()[0].name: x}

    def __call__(self):
        self.s.run(None, self.feed)


class OpenVino:
    def __init__(self, model, threads, x):
        import openvino as ov
        core = ov.Core()
        self.c = core.compile_model(os.path.join(MODELS_DIR, model + ".onnx"), "CPU",
                                    {"INFERENCE_NUM_THREADS": threads, "INFERENCE_PRECISION_HINT": "f32",
                                     "PERFORMANCE_HINT": "LATENCY", "NUM_STREAMS": 1})
        self.r = self.c.create_infer_request()
        self.x = x

    def __call__(self):
        self.r.infer([self.x])


def fmt(v):
    return f"{v:.3f}" if v < 10 else f"{v:.1f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default=DEFAULT_MODELS)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--total-trials", type=int, default=300)
    ap.add_argument("--time-budget", type=float, default=600)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--build", default=os.environ.get("WEFT_BUILD_DIR", "build"))
    ap.add_argument("--skip-tune", action="store_true", help="use the records of an earlier run")
    ap.add_argument("--pretune", action="store_true", help="merge the records into weft's pre-tuned ones")
    args = ap.parse_args()
    models = args.models.split(",")
    threads_list = [int(t) for t in args.threads.split(",")]
    export(models)
    os.makedirs(os.path.join(ROOT, args.build, "tuning"), exist_ok=True)
    rows = []
    for model in models:
        name, shape = input_shape(model)
        x = np.random.default_rng(1).uniform(-1, 1, shape).astype(np.float32)
        for threads in threads_list:
            records = os.path.join(ROOT, args.build, "tuning", f"{model}-t{threads}.jsonl")
            tuning = (0.0, sum(1 for l in open(records) if l.strip())) if args.skip_tune else tune(args, model, threads, records)
            print(f"{model} t{threads}: tuned in {tuning[0]:.0f} s, {tuning[1]} trials", file=sys.stderr, flush=True)
            peers = {"ORT": Ort(model, threads, x), "OpenVINO-f32": OpenVino(model, threads, x)}
            figures = {k: [] for k in ["default", "tuned", *peers]}
            for _ in range(args.rounds):
                figures["default"].append(weft_ms(args, model, threads))
                figures["tuned"].append(weft_ms(args, model, threads, records))
                for k, run in peers.items():
                    figures[k].append(time_runs(run, args.repeat))
            med = {k: statistics.median(v) for k, v in figures.items()}
            best_peer = min(med["ORT"], med["OpenVINO-f32"])
            rows.append(f"| {model} {'x'.join(map(str, shape))} | {threads} | {tuning[0]:.0f} ({tuning[1]}) | "
                        f"{fmt(med['default'])} | {fmt(med['tuned'])} | {fmt(med['ORT'])} | {fmt(med['OpenVINO-f32'])} | "
                        f"{med['default'] / med['tuned']:.2f} | {best_peer / med['tuned']:.2f} |")
            print(rows[-1], file=sys.stderr, flush=True)
    # Rows of earlier runs (other models or thread counts) are kept, with their commands.
    old = results_sections.find_section(open(os.path.join(ROOT, "benchmarks", "RESULTS.md")).read(), SECTION)
    key = lambda row: tuple(c.strip() for c in row.split("|")[1:3])
    measured = {key(r) for r in rows}
    kept = [l for l in old.splitlines() if l.startswith("| ") and not l.startswith("| model ") and key(l) not in measured]
    earlier = [l.replace("- command:", "- earlier rows:", 1) for l in old.splitlines()
               if (l.startswith("- command:") or l.startswith("- earlier rows:")) and kept]
    rows = sorted(kept + rows, key=lambda r: (key(r)[0], int(key(r)[1])))
    table = ("| model | threads | tuning s (trials) | untuned ms | tuned ms | ORT ms | OpenVINO-f32 ms | tuned / untuned "
             "speed | tuned / best peer speed |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n" + "\n".join(rows) + "\n")
    import onnxruntime, openvino
    section = "\n".join([
        SECTION, "",
        "Written by `benchmarks/tune_networks.py`; do not edit by hand.", "",
        f"- date: {datetime.datetime.now():%Y-%m-%d %H:%M}; machine: {results_sections.cpu_name()}, {os.cpu_count()} CPUs; "
        f"{platform.system()} {platform.release()}; weft {results_sections.commit()}; ONNX Runtime {onnxruntime.__version__}; "
        f"OpenVINO {openvino.__version__}",
        f"- command: `benchmarks/tune_networks.py {' '.join(sys.argv[1:])}`", *earlier,
        "- method: each model (models/export.py, batch 1) tuned by `weftc tune --tuner model --total-trials "
        f"{args.total_trials} --time-budget {args.time_budget:g} --threads T` (the trials shared by the tasks' share of "
        "the run time); then in each of the rounds, alternating: `weftc bench --no-pretuned` untuned and with the "
        "records (median of its runs), ONNX Runtime (CPU provider, intra-op threads T, sequential) and OpenVINO (CPU, "
        "INFERENCE_PRECISION_HINT f32, latency hint, T threads), each the median of "
        f"{args.repeat} runs after 5 warm-ups; a figure is the median over {args.rounds} rounds. Speed ratios > 1: tuned "
        "weft is faster.",
        "", table])
    results_sections.write_section(os.path.join(ROOT, "benchmarks", "RESULTS.md"), SECTION, section)
    print(section)
    if args.pretune:
        files = [os.path.join(ROOT, args.build, "tuning", f"{m}-t{t}.jsonl") for m in models for t in threads_list]
        subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "pretune.py"), *files], check=True)


if __name__ == "__main__":
    main()

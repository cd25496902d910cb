#!/usr/bin/env python3
"""weft and ONNX Runtime on a small CNN while other processes keep the cores busy.

    benchmarks/run_contention.sh [--trials 5] [--model mobilenet_v2] [--image 64] ...

(run_contention.sh builds weft_contention_run, picks a Python with onnxruntime and onnx, and
writes the "Threads on busy cores" section of benchmarks/RESULTS.md with --results.)

The network is written here as ONNX with the onnx package (torchvision's MobileNetV2 or
ResNet-18 layer by layer, random weights from a fixed seed, batch 1), so weft
(weft::onnx::load, in the weft_contention_run process) and ONNX Runtime (CPU provider,
ORT_ENABLE_ALL, in this process) run the same model. For each trial, each load (0, 1, 2
busy processes: `while True: pass`, started before and killed after the load's
measurements) and each thread count (1, 2): weft's and ORT's median of --runs runs, one
after the other, the order alternating from trial to trial so that a slow spell of the
machine falls on both. Before each trial it waits for the CPUs to be idle (other users'
compiles). The table is the median over trials of those medians.
"""
import argparse, datetime, json, os, platform, statistics, subprocess, sys, tempfile, time

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import results_sections


class OnnxBuilder:
    """Appends nodes and random initializers (He-style uniform, like graph/testing/models.hpp)."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits, self.count = [], [], 0

    def name(self, prefix):
        self.count += 1
        return f"{prefix}_{self.count}"

    def const(self, prefix, array):
        n = self.name(prefix)
        self.inits.append(numpy_helper.from_array(array.astype(np.float32), n))
        return n

    def uniform(self, prefix, shape, lo, hi):
        return self.const(prefix, self.rng.uniform(lo, hi, size=shape))

    def node(self, op, inputs, **attrs):
        out = self.name(op.lower())
        self.nodes.append(helper.make_node(op, inputs, [out], **attrs))
        return out

    def conv_bn(self, x, cin, cout, k, stride, groups=1, act=None):
        a = np.sqrt(3.0 / (cin // groups * k * k))
        w = self.uniform("w", (cout, cin // groups, k, k), -a, a)
        y = self.node("Conv", [x, w], kernel_shape=[k, k], strides=[stride, stride], pads=[k // 2] * 4, group=groups)
        bn = [self.uniform(p, (cout,), lo, hi) for p, lo, hi in
              (("gamma", 0.5, 1.5), ("beta", -0.1, 0.1), ("mean", -0.1, 0.1), ("var", 0.5, 1.5))]
        y = self.node("BatchNormalization", [y] + bn, epsilon=1e-5)
        if act == "relu":
            y = self.node("Relu", [y])
        elif act == "relu6":
            y = self.node("Clip", [y, self.const("lo", np.array(0.0)), self.const("hi", np.array(6.0))])
        return y

    def classifier(self, x, channels, classes=1000):
        y = self.node("Flatten", [self.node("GlobalAveragePool", [x])], axis=1)
        a = np.sqrt(3.0 / channels)
        return self.node("Gemm", [y, self.uniform("fc", (classes, channels), -a, a),
                                  self.uniform("fcb", (classes,), -0.1, 0.1)], transB=1)


def mobilenet_v2(b, x):
    x = b.conv_bn(x, 3, 32, 3, 2, act="relu6")
    cin = 32
    for expand, cout, repeats, stride in ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                                          (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)):
        for r in range(repeats):
            s, hidden, y = stride if r == 0 else 1, cin * expand, x
            if expand != 1:
                y = b.conv_bn(y, cin, hidden, 1, 1, act="relu6")
            y = b.conv_bn(y, hidden, hidden, 3, s, groups=hidden, act="relu6")
            y = b.conv_bn(y, hidden, cout, 1, 1)
            x = b.node("Add", [x, y]) if s == 1 and cin == cout else y
            cin = cout
    return b.classifier(b.conv_bn(x, cin, 1280, 1, 1, act="relu6"), 1280)


def resnet18(b, x):
    x = b.node("MaxPool", [b.conv_bn(x, 3, 64, 7, 2, act="relu")], kernel_shape=[3, 3], strides=[2, 2], pads=[1] * 4)
    cin = 64
    for layer, width in enumerate((64, 128, 256, 512)):
        for block in range(2):
            s = 2 if layer > 0 and block == 0 else 1
            y = b.conv_bn(b.conv_bn(x, cin, width, 3, s, act="relu"), width, width, 3, 1)
            shortcut = b.conv_bn(x, cin, width, 1, s) if s != 1 or cin != width else x
            x = b.node("Relu", [b.node("Add", [y, shortcut])])
            cin = width
    return b.classifier(x, 512)


MODELS = {"mobilenet_v2": mobilenet_v2, "resnet18": resnet18}


def write_model(name, image, path):
    b = OnnxBuilder(seed=2)
    out = MODELS[name](b, "input")
    graph = helper.make_graph(b.nodes, name, [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, image, image])],
                              [helper.make_tensor_value_info(out, TensorProto.FLOAT, [1, 1000])], b.inits)
    # IR version 7 / opset 13: what Debian's libonnx 1.12 (weft's importer) reads.
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=7)
    onnx.checker.check_model(model)
    onnx.save(model, path)


class BusyProcesses:
    """`count` processes that spin on a core each, for the duration of a `with` block."""

    def __init__(self, count):
        self.count, self.procs = count, []

    def __enter__(self):
        self.procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(self.count)]
        time.sleep(0.3)  # let them reach the spin loop before anything is timed
        return self

    def __exit__(self, *exc):
        for p in self.procs:
            p.kill()
        for p in self.procs:
            p.wait()


class Weft:
    def __init__(self, tool, model):
        self.p = subprocess.Popen([tool, model], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        ready = json.loads(self.p.stdout.readline())
        if "error" in ready:
            sys.exit(f"weft_contention_run: {ready['error']}")
        self.kernels = ready["kernels"]

    def median_ms(self, threads, runs):
        self.p.stdin.write(f"{threads} {runs}\n")
        self.p.stdin.flush()
        return json.loads(self.p.stdout.readline())["median_ms"]

    def close(self):
        self.p.stdin.close()
        self.p.wait()


class OnnxRuntime:
    def __init__(self, model, image):
        self.sessions = {}
        for t in (1, 2):
            so = ort.SessionOptions()
            so.intra_op_num_threads = t
            so.inter_op_num_threads = 1
            so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
            so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
            self.sessions[t] = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
        x = np.random.default_rng(1234).uniform(-1, 1, size=(1, 3, image, image)).astype(np.float32)
        self.feed = {"input": x}

    def median_ms(self, threads, runs):
        s = self.sessions[threads]
        s.run(None, self.feed)
        s.run(None, self.feed)
        ms = []
        for _ in range(runs):
            t0 = time.perf_counter()
            s.run(None, self.feed)
            ms.append((time.perf_counter() - t0) * 1e3)
        return statistics.median(ms)


def idle_fraction(seconds):
    """The share of all CPUs' time spent idle over the next `seconds` (/proc/stat)."""
    def sample():
        fields = [int(v) for v in open("/proc/stat").readline().split()[1:]]
        return fields[3] + fields[4], sum(fields)  # idle + iowait, total
    idle0, total0 = sample()
    time.sleep(seconds)
    idle1, total1 = sample()
    return (idle1 - idle0) / max(1, total1 - total0)


def wait_until_idle(min_idle, timeout):
    """Waits until other processes leave the CPUs at least min_idle idle (a second's sample),
    at most `timeout` seconds; returns the last idle share measured."""
    deadline = time.time() + timeout
    while True:
        idle = idle_fraction(1.0)
        if idle >= min_idle or time.time() >= deadline:
            return idle


def results_section(args, state, figures, loads):
    """The markdown section of benchmarks/RESULTS.md: method, machine, table."""
    med = {k: statistics.median(v) for k, v in figures.items()}
    load = lambda key: " ".join(f"{v:.2f}" for v in state[key])
    lines = [results_sections.CONTENTION, "",
             "Written by `benchmarks/run_contention.sh` (`benchmarks/contention.py`); do not edit by hand.", "",
             f"- date: {state['date']}; machine: {state['cpu']}, {state['cpus']} CPUs; {state['os']}; load average "
             f"(1, 5, 15 min) before {load('load_before')}, after {load('load_after')}; CPUs idle before each trial: "
             f"{', '.join(f'{100 * v:.0f}%' for v in state['idle_before_trials'])}",
             f"- model: {state['model']} (the network written with the onnx package, random weights), "
             f"{state['kernels']} weft kernels; weft {state['commit']}; ONNX Runtime {state['onnxruntime']} "
             "(CPUExecutionProvider, ORT_ENABLE_ALL, sequential, intra-op threads = the column)",
             f"- command: `{state['command']}`",
             f"- method: {args.trials} trials; in each, for 0, 1 and 2 busy processes (`while True: pass`, started "
             "before and killed after that load's figures) and 1 and 2 threads, weft's and ORT's median of "
             f"{args.runs} runs one after the other, the order alternating between trials; a cell is the median "
             "of its trials' medians (every trial's figure follows). Before each trial the script waits until "
             f"other processes leave the CPUs {100 * args.min_idle:.0f}% idle (at most {args.idle_timeout:.0f} s). "
             "weft times `Module::run()` in C++; ORT's figure is `InferenceSession.run` from Python (its "
             "binding and output copy included, some 10-30 us).",
             "- weft / ORT < 1: weft is faster. weft / weft 1 thread: the 2-thread time against weft's own "
             "1-thread time under the same load.", "",
             "| busy processes | threads | weft ms | ORT ms | weft / ORT | weft / weft 1 thread | weft trials (ms) | ORT trials (ms) |",
             "|---:|---:|---:|---:|---:|---:|---|---|"]
    for busy in loads:
        for threads in (1, 2):
            w, o = med[(busy, threads, "weft")], med[(busy, threads, "ort")]
            lines.append(f"| {busy} | {threads} | {fmt(w)} | {fmt(o)} | {w / o:.2f} | {w / med[(busy, 1, 'weft')]:.2f} | "
                         f"{', '.join(fmt(v) for v in figures[(busy, threads, 'weft')])} | "
                         f"{', '.join(fmt(v) for v in figures[(busy, threads, 'ort')])} |")
    return "\n".join(lines) + "\n"


def fmt(v):
    return f"{v:.3f}" if v < 10 else f"{v:.1f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tool", default=os.path.join(ROOT, "build", "benchmarks", "weft_contention_run"))
    ap.add_argument("--model", default="mobilenet_v2", choices=sorted(MODELS))
    ap.add_argument("--image", type=int, default=64)
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--runs", type=int, default=100, help="runs per measurement (its median is the figure)")
    ap.add_argument("--loads", default="0,1,2", help="numbers of busy processes")
    ap.add_argument("--min-idle", type=float, default=0.9,
                    help="before each trial, wait until the CPUs are this idle (other processes: compiles, ...)")
    ap.add_argument("--idle-timeout", type=float, default=300, help="seconds to wait for that at most")
    ap.add_argument("--json", default="", help="write every figure here")
    ap.add_argument("--results", default="", help="write the table as a section of this markdown file "
                                                   "(benchmarks/RESULTS.md)")
    args = ap.parse_args()
    loads = [int(v) for v in args.loads.split(",")]

    state = {"date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"), "cpu": results_sections.cpu_name(), "cpus": os.cpu_count(),
             "load_before": os.getloadavg(), "commit": results_sections.commit(),
             "command": "benchmarks/run_contention.sh " + " ".join(sys.argv[1:]),
             "os": f"{platform.system()} {platform.release()}", "onnxruntime": ort.__version__,
             "model": f"{args.model} 1x3x{args.image}x{args.image}", "trials": args.trials, "runs": args.runs,
             "env": {k: v for k, v in os.environ.items() if k.startswith("WEFT_")}}
    print(f"# {state['cpu']}, {state['cpus']} CPUs; load average {' '.join(f'{v:.2f}' for v in state['load_before'])}",
          file=sys.stderr, flush=True)
    with tempfile.TemporaryDirectory(prefix="weft-contention-") as work:
        model = os.path.join(work, f"{args.model}.onnx")
        write_model(args.model, args.image, model)
        weft, ref = Weft(args.tool, model), OnnxRuntime(model, args.image)
        state["kernels"] = weft.kernels
        # figures[(load, threads, impl)] = the median of each trial
        figures = {}
        idle_before = []
        for trial in range(args.trials):
            idle_before.append(wait_until_idle(args.min_idle, args.idle_timeout))
            print(f"trial {trial}: CPUs {100 * idle_before[-1]:.0f}% idle before it", file=sys.stderr, flush=True)
            for load in loads:
                with BusyProcesses(load):
                    for threads in (1, 2):
                        impls = [("weft", weft), ("ort", ref)]
                        if (trial + threads) % 2:
                            impls.reverse()
                        for name, impl in impls:
                            ms = impl.median_ms(threads, args.runs)
                            figures.setdefault((load, threads, name), []).append(ms)
                            print(f"trial {trial} load {load} threads {threads} {name}: {fmt(ms)} ms",
                                  file=sys.stderr, flush=True)
        weft.close()
    state["load_after"] = os.getloadavg()
    state["idle_before_trials"] = idle_before

    section = results_section(args, state, figures, loads)
    print(section)
    if args.results:
        results_sections.write_section(args.results, results_sections.CONTENTION, section)
        print(f"wrote the section '{results_sections.CONTENTION[3:]}' of {args.results}", file=sys.stderr)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"state": state, "figures": [{"busy": k[0], "threads": k[1], "impl": k[2], "trials_ms": v}
                                                   for k, v in figures.items()]}, f, indent=1)


if __name__ == "__main__":
    main()

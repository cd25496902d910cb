#!/usr/bin/env python3
"""Seeded structured hostile ONNX models through weftc: the CTest fuzz/hostile_models.

    hostile_models.py --weftc build/tools/weftc/weftc [--count 200] [--seed 1]
                      [--work-dir DIR] [--timeout 30]
    hostile_models.py --write-only DIR [--count N] [--seed S]   # the models only: fuzz_onnx's seeds

Writes --count well-formed ONNX models, each a small graph with something hostile in it:
huge or zero or negative dimensions, repeat counts (Tile, Expand, Pad, ConstantOfShape),
pads, strides, dilations and kernel sizes; deep chains; long concatenations; axes, perms
and shapes that do not fit; operands of mismatched ranks. Each goes through
`weftc compile --quiet`, which must either exit 0 (and then `weftc run` on the artifact must
exit 0 too) or exit 1 with exactly one line on stderr, starting "weftc: error:". A signal, a
timeout (--timeout seconds per command, 30), another exit status, more output or a traceback is
a failure: the model is kept in WORK-DIR/failures/ and the script exits 1.

The models are a function of --seed alone (random.Random(seed)): a failure reproduces with
the same seed. Hostile values are either decisively over weft's default limits (2^32
elements per tensor) or small, never a legal model that is merely slow to compute.
Prints "skipped: ..." (exit 0) when Python's onnx package is missing (Debian: python3-onnx).

The same models seed fuzz_onnx (--write-only; the fuzz build's CTest fuzz/onnx_hostile_seeds),
whose sanitizers see what weftc's exit status cannot: a size that wrapped around in int64
before a check refused it.
"""
import argparse, os, random, shutil, signal, subprocess, sys, time

try:
    import onnx
    from onnx import TensorProto, helper
except ImportError as e:
    print(f"skipped: python's onnx is not installed ({e}; Debian: apt-get install python3-onnx)")
    sys.exit(0)

OPSET = 13

# ---- hostile values ---------------------------------------------------------------------------

SMALL = [1, 2, 3, 4, 5]
EDGE = [0, -1, -2, -7]
# Over the 2^32 elements of a tensor that weft allows by default, alone (2^31 is not: a
# ConstantOfShape of 2^31 floats is a legal 8 GiB tensor that takes a minute to fill).
HUGE = [2**33, 2**40, 2**62, 2**63 - 1, -2**31, -2**40, -2**63]
# Large but legal on a small tensor; at most one per model, so that a product of them stays
# far below what takes long to compute (~10^5 elements times a small tensor).
LARGE = [1000, 100000]


def hostile(rng, large_ok=True):
    pool = [EDGE, HUGE, LARGE] if large_ok else [EDGE, HUGE]
    return rng.choice(rng.choice(pool))


def hostile_ints(rng, n, base=SMALL):
    """n small ints with one to all of them hostile (at most one LARGE)."""
    values = [rng.choice(base) for _ in range(n)]
    large_used = False
    for i in rng.sample(range(n), rng.randint(1, n)) if n else []:
        values[i] = hostile(rng, not large_used)
        large_used = large_used or values[i] in LARGE
    return values


def small_shape(rng, rank=None):
    return [rng.choice(SMALL) for _ in range(rng.randint(1, 4) if rank is None else rank)]


# ---- model building ---------------------------------------------------------------------------

class Builder:
    """One graph: inputs, initializers and nodes; the last value made is the output."""

    def __init__(self):
        self.inputs, self.inits, self.nodes = [], [], []
        self.count = 0

    def name(self, prefix):
        self.count += 1
        return f"{prefix}{self.count}"

    def input(self, shape, dtype=TensorProto.FLOAT):
        n = self.name("x")
        self.inputs.append(helper.make_tensor_value_info(n, dtype, shape))
        return n

    def ints(self, values):
        n = self.name("c")
        self.inits.append(helper.make_tensor(n, TensorProto.INT64, [len(values)], values))
        return n

    def floats(self, shape, fill=0.5):
        n = self.name("w")
        count = 1
        for d in shape:
            count *= d
        self.inits.append(helper.make_tensor(n, TensorProto.FLOAT, shape, [fill] * count))
        return n

    def node(self, op, inputs, **attrs):
        out = self.name("v")
        self.nodes.append(helper.make_node(op, inputs, [out], **attrs))
        return out

    def model(self, output):
        y = helper.make_tensor_value_info(output, TensorProto.FLOAT, None)
        graph = helper.make_graph(self.nodes, "hostile", self.inputs, [y], self.inits)
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])


# ---- the families: each makes one model and says what is hostile in it -------------------------

def tile(rng, b):
    x = b.input(small_shape(rng))
    rank = len(b.inputs[0].type.tensor_type.shape.dim)
    reps = hostile_ints(rng, rank + rng.choice([0, 0, 0, -1, 1]))  # sometimes the wrong length
    return b.node("Tile", [x, b.ints(reps)]), f"Tile repeats {reps}"


def expand(rng, b):
    x = b.input(small_shape(rng, rng.randint(1, 3)))
    shape = hostile_ints(rng, rng.randint(1, 5))
    return b.node("Expand", [x, b.ints(shape)]), f"Expand to {shape}"


def pad(rng, b):
    shape = small_shape(rng)
    x = b.input(shape)
    pads = hostile_ints(rng, 2 * len(shape) + rng.choice([0, 0, 0, 1]), base=[0, 1, 2])
    mode = rng.choice(["constant"] * 4 + ["reflect", "edge"])  # weft pads with a constant only
    return b.node("Pad", [x, b.ints(pads)], mode=mode), f"Pad {mode} {pads}"


def constant_of_shape(rng, b):
    shape = hostile_ints(rng, rng.randint(1, 4))
    x = b.input([1])
    c = b.node("ConstantOfShape", [b.ints(shape)], value=helper.make_tensor("v", TensorProto.FLOAT, [1], [1.0]))
    return b.node("Add", [c, x]), f"ConstantOfShape {shape}"


def conv(rng, b):
    c = rng.choice(SMALL)
    x = b.input([1, c, rng.choice([4, 5, 8]), rng.choice([4, 5, 8])])
    k = rng.choice([1, 2, 3])
    what = rng.choice(["pads", "strides", "dilations", "kernel_shape", "group", "weight"])
    attrs = {"auto_pad": rng.choice(["SAME_UPPER", "SAME_LOWER"])} if rng.random() < 0.3 else {}
    weight = [rng.choice(SMALL), c, k, k]
    if what == "pads":
        attrs.pop("auto_pad", None)
        attrs["pads"] = hostile_ints(rng, 4, base=[0, 1])
    elif what == "strides":
        attrs["strides"] = hostile_ints(rng, 2, base=[1, 2])
    elif what == "dilations":
        attrs["dilations"] = hostile_ints(rng, 2, base=[1, 2])
    elif what == "kernel_shape":
        attrs["kernel_shape"] = hostile_ints(rng, rng.choice([1, 2, 3]), base=[k])
    elif what == "group":
        attrs["group"] = hostile(rng, large_ok=False)
    else:  # the weight's channels or rank do not fit the input's
        weight = [rng.choice(SMALL), c + rng.choice([1, 2]), k, k][: rng.choice([3, 4])]
    return b.node("Conv", [x, b.floats(weight)], **attrs), f"Conv {what} {attrs or weight}"


def pool(rng, b):
    x = b.input([1, rng.choice(SMALL), rng.choice([4, 6]), rng.choice([4, 6])])
    op = rng.choice(["MaxPool", "AveragePool"])
    attrs = {"kernel_shape": [2, 2]}
    key = rng.choice(["kernel_shape", "strides", "pads", "dilations"] if op == "MaxPool"
                     else ["kernel_shape", "strides", "pads"])
    attrs[key] = hostile_ints(rng, 4 if key == "pads" else 2, base=[1, 2])
    if rng.random() < 0.3:
        attrs["ceil_mode"] = 1
    if key != "pads" and rng.random() < 0.3:
        attrs["auto_pad"] = rng.choice(["SAME_UPPER", "SAME_LOWER"])
    return b.node(op, [x], **attrs), f"{op} {attrs}"


def deep_chain(rng, b):
    depth = rng.choice([50, 500, 3000])
    v = b.input(small_shape(rng, 2))
    ops = ["Relu", "Neg", "Abs", "Sigmoid", "Tanh", "Exp"]
    for _ in range(depth):
        v = b.node(rng.choice(ops), [v])
    return v, f"a chain of {depth} element-wise nodes"


def long_concat(rng, b):
    pieces = rng.choice([2, 300, 4096, 5000])
    shape = small_shape(rng, 2)
    x = b.input(shape)
    axis = rng.choice([0, 1, -1, 2, -3, 2**40])
    if rng.random() < 0.5:
        inputs = [x] * pieces
    else:
        inputs = [b.floats(shape) for _ in range(min(pieces, 600))] + [x]
    return b.node("Concat", inputs, axis=axis), f"Concat of {len(inputs)} pieces on axis {axis}"


def reshape(rng, b):
    shape = small_shape(rng)
    x = b.input(shape)
    target = rng.choice([hostile_ints(rng, rng.randint(1, 4), base=[-1, 0, 1, 2]),
                         [-1, -1], [0] * (len(shape) + 1)])
    return b.node("Reshape", [x, b.ints(target)]), f"Reshape {shape} to {target}"


def slice_(rng, b):
    shape = small_shape(rng, 2)
    x = b.input(shape)
    n = rng.choice([1, 2, 3])
    starts, ends = hostile_ints(rng, n, base=[0, 1]), hostile_ints(rng, n, base=[1, 2, 2**62])
    axes = hostile_ints(rng, n, base=[0, 1, -1])
    steps = hostile_ints(rng, n, base=[1, -1, 2])
    return (b.node("Slice", [x, b.ints(starts), b.ints(ends), b.ints(axes), b.ints(steps)]),
            f"Slice starts {starts} ends {ends} axes {axes} steps {steps}")


def mismatched(rng, b):
    op = rng.choice(["Add", "Mul", "MatMul", "Gemm", "Where"])
    a = b.input(small_shape(rng, rng.randint(1, 5)))
    c = b.input(small_shape(rng, rng.randint(1, 5)))
    if op == "Where":
        cond = b.input(small_shape(rng, rng.randint(1, 5)), TensorProto.BOOL)
        return b.node(op, [cond, a, c]), f"Where on {b.inputs}"
    attrs = {"transB": rng.choice([0, 1])} if op == "Gemm" else {}
    return b.node(op, [a, c], **attrs), f"{op} of mismatched ranks"


def axes(rng, b):
    shape = small_shape(rng)
    x = b.input(shape)
    op = rng.choice(["Transpose", "Softmax", "Flatten", "ReduceSum", "Squeeze", "Unsqueeze", "Split", "Gather"])
    bad = hostile_ints(rng, rng.randint(1, len(shape) + 1), base=list(range(-len(shape), len(shape))))
    if op == "Transpose":
        return b.node(op, [x], perm=bad), f"Transpose perm {bad}"
    if op in ("Softmax", "Flatten"):
        return b.node(op, [x], axis=bad[0]), f"{op} axis {bad[0]}"
    if op == "ReduceSum":
        return b.node(op, [x, b.ints(bad)]), f"ReduceSum axes {bad}"
    if op in ("Squeeze", "Unsqueeze"):
        return b.node(op, [x, b.ints(bad)]), f"{op} axes {bad}"
    if op == "Split":
        return b.node(op, [x, b.ints(bad)], axis=0), f"Split sizes {bad}"
    return b.node(op, [x, b.ints(bad)], axis=rng.choice([0, len(shape), -len(shape) - 1])), f"Gather indices {bad}"


def huge_input(rng, b):
    shape = hostile_ints(rng, rng.randint(1, 4))
    x = b.input(shape)
    return b.node(rng.choice(["Relu", "Exp", "Neg"]), [x]), f"an input of shape {shape}"


FAMILIES = [tile, expand, pad, constant_of_shape, conv, pool, deep_chain, long_concat, reshape, slice_,
            mismatched, axes, huge_input]


def hostile_models(rng, count):
    """(name, model, what is hostile in it) for `count` models, the families in turn."""
    for i in range(count):
        family = FAMILIES[i % len(FAMILIES)]
        b = Builder()
        out, what = family(rng, b)
        yield f"{i:03d}_{family.__name__.strip('_')}", b.model(out), what


# ---- running weftc ----------------------------------------------------------------------------

def run(cmd, timeout):
    """(exit status or a description of the signal / timeout, stderr)"""
    try:
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=timeout)
    except subprocess.TimeoutExpired:
        return f"no exit within {timeout} s", ""
    err = p.stderr.decode(errors="replace")
    if p.returncode < 0:
        return f"killed by {signal.Signals(-p.returncode).name}", err
    return p.returncode, err


def check(weftc, path, timeout):
    """("ran" or "refused", None) when weftc behaved; else (None, what it did)."""
    artifact = path[:-5] + ".weft"
    status, err = run([weftc, "compile", path, "-o", artifact, "--quiet"], timeout)
    lines = err.splitlines()
    if status == 1:
        if len(lines) == 1 and lines[0].startswith("weftc: error:") and "Traceback" not in err:
            return "refused", None
        return None, f"compile exited 1 but its stderr is not one 'weftc: error:' line:\n{err}"
    if status != 0:
        return None, f"compile: {status}\n{err}"
    status, err = run([weftc, "run", artifact], timeout)
    if status != 0:
        return None, f"compiled, but run: {status}\n{err}"
    return "ran", None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    what = ap.add_mutually_exclusive_group(required=True)
    what.add_argument("--weftc", help="check each model with this weftc")
    what.add_argument("--write-only", metavar="DIR", help="only write the models to DIR")
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=30, help="seconds per weftc command")
    ap.add_argument("--work-dir", default="hostile_models")
    args = ap.parse_args()

    rng = random.Random(args.seed)
    if args.write_only:
        shutil.rmtree(args.write_only, ignore_errors=True)
        os.makedirs(args.write_only)
        for name, model, _ in hostile_models(rng, args.count):
            onnx.save(model, os.path.join(args.write_only, name + ".onnx"))
        print(f"wrote {args.count} models (seed {args.seed}) to {args.write_only}")
        return 0

    models = os.path.join(args.work_dir, "models")
    failures = os.path.join(args.work_dir, "failures")
    shutil.rmtree(args.work_dir, ignore_errors=True)
    os.makedirs(models)
    start, failed, outcomes = time.time(), [], {"ran": 0, "refused": 0}
    for name, model, what in hostile_models(rng, args.count):
        path = os.path.join(models, name + ".onnx")
        onnx.save(model, path)
        t0 = time.time()
        outcome, problem = check(args.weftc, path, args.timeout)
        if problem:
            os.makedirs(failures, exist_ok=True)
            shutil.copy(path, failures)
            failed.append(name)
            print(f"FAIL {name} ({what}): {problem}", flush=True)
            continue
        outcomes[outcome] += 1
        if time.time() - t0 > 5:
            print(f"slow {name} ({what}): {time.time() - t0:.1f} s", flush=True)
    print(f"{args.count} models (seed {args.seed}): {outcomes['ran']} compiled and ran, "
          f"{outcomes['refused']} refused in one line, {len(failed)} failed; "
          f"{time.time() - start:.0f} s")
    if failed:
        print(f"failed: {' '.join(failed)} (kept in {failures})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

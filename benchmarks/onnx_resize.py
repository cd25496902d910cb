#!/usr/bin/env python3
"""weft against ONNX Runtime on two Resize layers, in one run: YOLO's / FPN's 2x nearest
upsample (1x256x40x40, asymmetric + floor, what PyTorch's nn.Upsample(scale_factor=2)
exports) and DeepLabV3's 8x bilinear upsample (1x21x28x28, half_pixel). 5 alternating runs of
each engine, 1 thread; medians. weft: Module::run() timed by tests/onnx_model_run; ORT:
InferenceSession.run, which includes its Python binding.

    models/.venv/bin/python benchmarks/onnx_resize.py [--tool build/tests/onnx_model_run]
"""
import argparse, json, os, statistics, subprocess, tempfile, time

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def model(path, mode, shape, scale, ctm, nearest="round_prefer_floor"):
    out = [shape[0], shape[1], shape[2] * scale, shape[3] * scale]
    scales = numpy_helper.from_array(np.array([1, 1, scale, scale], dtype=np.float32), "scales")
    node = helper.make_node("Resize", ["x", "", "scales"], ["y"], mode=mode, coordinate_transformation_mode=ctm,
                            nearest_mode=nearest)
    g = helper.make_graph([node], "resize", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, out)], initializer=[scales])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save(m, path)


def ort_ms(path, shape):
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    s = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    x = np.random.default_rng(0).random(shape, dtype=np.float32)
    for _ in range(5):
        s.run(None, {"x": x})
    t = []
    for _ in range(300):
        a = time.perf_counter()
        s.run(None, {"x": x})
        t.append(time.perf_counter() - a)
    return sorted(t)[len(t) // 2] * 1e3


def weft_ms(tool, path):
    out = subprocess.run([tool, path, "--threads", "1", "--min-time", "0.5", "--no-warm"], capture_output=True,
                         text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])["latency_ms"]["1"]["median"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tool", default=os.path.join(ROOT, "build", "tests", "onnx_model_run"))
    args = ap.parse_args()
    cases = [("nearest 2x, 1x256x40x40", "nearest", [1, 256, 40, 40], 2, "asymmetric", "floor"),
             ("linear 8x, 1x21x28x28", "linear", [1, 21, 28, 28], 8, "half_pixel", "round_prefer_floor")]
    with tempfile.TemporaryDirectory() as work:
        for name, mode, shape, scale, ctm, nearest in cases:
            path = os.path.join(work, mode + ".onnx")
            model(path, mode, shape, scale, ctm, nearest)
            w, o = [], []
            for _ in range(5):
                w.append(weft_ms(args.tool, path))
                o.append(ort_ms(path, shape))
            mw, mo = statistics.median(w), statistics.median(o)
            print(f"| {name} | {mw:.3f} | {mo:.3f} | {mo / mw:.2f} |", flush=True)


if __name__ == "__main__":
    main()

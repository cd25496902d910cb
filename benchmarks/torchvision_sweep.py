#!/usr/bin/env python3
"""A sweep of torchvision's models beyond models/ against ONNX Runtime: each exported to ONNX
(opset 17, random weights from a fixed seed, batch 1), run by weft (tests/onnx_model_run, a
fresh process, 1 thread) and by ORT (1 thread) on the same input; prints the outputs' max
relative difference, both latencies (medians) and their ratio, one line per model.

    models/.venv/bin/python benchmarks/torchvision_sweep.py [--out /tmp/sweep] [--models a,b]
                                                            [--tool build/tests/onnx_model_run]

The virtual environment of models/compare.py (Debian's torch and torchvision through
--system-site-packages, onnxruntime from PyPI) has everything it needs.
"""
import argparse, json, os, subprocess, time

import numpy as np
import onnx
import onnxruntime as ort
import torch
import torchvision

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = ("alexnet,convnext_tiny,densenet121,efficientnet_b0,googlenet,inception_v3,mnasnet1_0,mobilenet_v3_large,"
          "mobilenet_v3_small,regnet_y_400mf,resnext50_32x4d,seg_fcn_resnet50,seg_lraspp_mobilenet_v3_large,"
          "shufflenet_v2_x1_0,swin_t,vgg11,video_r3d_18,vit_b_16")


def export(name, path):
    M = torchvision.models
    torch.manual_seed(0)
    size = (1, 3, 224, 224)
    if name.startswith("seg_"):
        kw = {} if "lraspp" in name else {"aux_loss": False}
        m = getattr(M.segmentation, name[4:])(weights=None, weights_backbone=None, **kw)
    elif name.startswith("video_"):
        m, size = getattr(M.video, name[6:])(weights=None), (1, 3, 8, 112, 112)
    else:
        kw = {"aux_logits": False, "init_weights": True} if name in ("googlenet", "inception_v3") else {}
        m = getattr(M, name)(weights=None, **kw)
        if name == "inception_v3":
            size = (1, 3, 299, 299)

    class Out(torch.nn.Module):  # the segmentation models' dict: its "out"
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, x):
            y = self.m(x)
            return y["out"] if isinstance(y, dict) else y

    torch.onnx.export(Out(m.eval()), (torch.randn(*size),), path, input_names=["x"], output_names=["y"],
                      opset_version=17, do_constant_folding=True)


def check(name, path, tool, work):
    m = onnx.load(path, load_external_data=False)
    shape = [d.dim_value for d in m.graph.input[0].type.tensor_type.shape.dim]
    x = np.random.default_rng(0).uniform(-1, 1, size=shape).astype(np.float32)
    x.tofile(os.path.join(work, name + ".in"))
    out = os.path.join(work, name + ".out")
    os.makedirs(out, exist_ok=True)
    p = subprocess.run([tool, path, "--input", f"x={os.path.join(work, name + '.in')}", "--out", out,
                        "--threads", "1", "--min-time", "1", "--no-warm"], capture_output=True, text=True)
    w = json.loads(p.stdout.strip().splitlines()[-1]) if p.stdout.strip() else {"error": p.stderr[-400:]}
    if "error" in w:
        return f"{name}: weft error: {w['error']}"
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    s = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    ref = s.run(None, {"x": x})[0]
    o = w["outputs"][0]
    got = np.fromfile(o["file"], dtype=o["dtype"]).reshape(o["shape"])
    err = float(np.max(np.abs(got.astype(np.float64) - ref))) / (float(np.max(np.abs(ref))) or 1.0)
    t = []
    for _ in range(11):
        t0 = time.perf_counter()
        s.run(None, {"x": x})
        t.append((time.perf_counter() - t0) * 1e3)
    ort_ms, weft_ms = sorted(t)[5], w["latency_ms"]["1"]["median"]
    return (f"{name}: max rel err {err:.1e} {'ok' if err <= 1e-4 else 'MISMATCH'}; weft {weft_ms:.2f} ms, "
            f"ORT {ort_ms:.2f} ms, ORT / weft {ort_ms / weft_ms:.2f}; cold build {w['cold_build_ms']:.0f} ms")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="/tmp/weft-torchvision-sweep")
    ap.add_argument("--models", default=MODELS)
    ap.add_argument("--tool", default=os.path.join(ROOT, "build", "tests", "onnx_model_run"))
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for name in args.models.split(","):
        path = os.path.join(args.out, name + ".onnx")
        if not os.path.exists(path):
            export(name, path)
        print(check(name, path, args.tool, args.out), flush=True)


if __name__ == "__main__":
    main()

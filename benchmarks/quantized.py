#!/usr/bin/env python3
"""Quantized models: weft against ONNX Runtime on the same int8 .onnx, in one run.

    /usr/bin/python3 models/export.py                  # once: models/out/*.onnx
    python3 benchmarks/quantized.py [--models transformer,mlp] [--min-time 2] [--static]

With --static the models are quantized by quantize_static in the QDQ format instead
(QuantizeLinear / DequantizeLinear around each MatMul and Conv, calibrated on 8 inputs drawn
as the test input is, with other seeds; --per-channel: the weights' scales per output channel,
what ORT advises for CNNs).

Each model is quantized by ONNX Runtime's own tool (onnxruntime.quantization.quantize_dynamic,
int8 weights: DynamicQuantizeLinear + MatMulInteger for every MatMul with a constant weight),
which needs onnx >= 1.13 and ml_dtypes: the script makes a virtual environment for it at
models/.venv-quantize (pip install onnxruntime onnx ml_dtypes) on first use. Then
models/compare.py's run_model times the int8 model and the float32 one, weft (onnx_model_run,
a fresh process) and ORT (1 and 2 intra-op threads) on the same input: per model, the int8
output's difference from ORT's int8 output and from weft's float32 output (max |a - b| /
max |b|), and the latencies with their ratios.
"""
import argparse, json, os, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "models"))
import compare  # noqa: E402  (re-runs this script with models/.venv's Python when ORT is missing)
import numpy as np  # noqa: E402

QUANTIZE_VENV = os.path.join(ROOT, "models", ".venv-quantize")
QUANTIZE = """
import sys
from onnxruntime.quantization import quantize_dynamic, QuantType
quantize_dynamic(sys.argv[1], sys.argv[2], weight_type=QuantType.QInt8)
"""
# Static quantization in the QDQ format (QuantizeLinear / DequantizeLinear pairs around each
# MatMul and Conv: uint8 activations, int8 weights per tensor, or per channel where argv[3] is
# "1"), calibrated on the .npz files given.
QUANTIZE_STATIC = """
import sys, numpy as np
from onnxruntime.quantization import quantize_static, QuantFormat, QuantType, CalibrationDataReader
class Reader(CalibrationDataReader):
    def __init__(self, files):
        self.samples = iter([dict(np.load(f)) for f in files])
    def get_next(self):
        return next(self.samples, None)
quantize_static(sys.argv[1], sys.argv[2], Reader(sys.argv[4:]), quant_format=QuantFormat.QDQ,
                activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8, op_types_to_quantize=["MatMul", "Conv"],
                per_channel=sys.argv[3] == "1")
"""


def quantizer():
    py = os.path.join(QUANTIZE_VENV, "bin", "python")
    if not os.path.exists(py):
        subprocess.run(["/usr/bin/python3", "-m", "venv", QUANTIZE_VENV], check=True)
        subprocess.run([py, "-m", "pip", "install", "-q", "onnxruntime", "onnx", "ml_dtypes"], check=True)
    return py


def outputs_of(r):
    return [np.fromfile(o["file"], dtype=o["dtype"]).reshape(o["shape"]) for o in r["weft"]["outputs"]]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="transformer,mlp,bert_encoder,hf_bert")
    ap.add_argument("--dir", default=os.path.join(ROOT, "models", "out"))
    ap.add_argument("--tool", default=os.path.join(ROOT, "build", "tests", "onnx_model_run"))
    ap.add_argument("--min-time", type=float, default=2.0)
    ap.add_argument("--static", action="store_true",
                    help="quantize_static in the QDQ format (MatMuls and Convs; calibrated on 8 inputs drawn as the test's)")
    ap.add_argument("--per-channel", action="store_true", help="with --static: the weights' scales per output channel")
    args = ap.parse_args()
    args.check = False
    manifest = json.load(open(os.path.join(args.dir, "manifest.json")))
    py = quantizer()
    print("| model | int8 vs ORT int8 | int8 vs f32 | weft int8 1t ms | ORT int8 1t ms | ORT / weft 1t | weft f32 1t ms | "
          "weft f32 / int8 1t | weft int8 2t ms | ORT int8 2t ms | ORT / weft 2t | weft f32 2t ms | weft f32 / int8 2t |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as work:
        for name in [m for m in args.models.split(",") if m]:
            entry = dict(manifest[name])
            quantized = os.path.join(work, name + "_int8.onnx")
            calibration = []
            for k in range(8 if args.static else 0):  # (the seeds differ from the test input's)
                calibration.append(os.path.join(work, f"{name}.cal{k}.npz"))
                np.savez(calibration[-1], **compare.draw_inputs(entry, np.random.default_rng(100 + k)))
            extra = ["1" if args.per_channel else "0", *calibration] if args.static else []
            subprocess.run([py, "-c", QUANTIZE_STATIC if args.static else QUANTIZE, os.path.join(args.dir, entry["file"]),
                            quantized, *extra], check=True, capture_output=True)
            f32 = compare.run_model(name, entry, args, args.tool, os.path.join(work, "f32"))
            args_q = argparse.Namespace(**vars(args))
            args_q.dir = work
            q = compare.run_model(name, dict(entry, file=name + "_int8.onnx"), args_q, args.tool, os.path.join(work, "int8"))
            if "error" in q["weft"] or "error" in f32["weft"]:
                print(f"| {name} | weft: {q['weft'].get('error', f32['weft'].get('error'))[:200]} |")
                continue
            err = max(float(np.max(np.abs(a.astype(np.float64) - b))) / (float(np.max(np.abs(b))) or 1.0)
                      for a, b in zip(outputs_of(q), outputs_of(f32)))
            cells = [name, f"{q['max_rel']:.1e}", f"{err:.1e}"]
            for t in ("1", "2"):
                wq, oq = q["weft"]["latency_ms"][t]["median"], q["ort_latency_ms"][t]["median"]
                wf = f32["weft"]["latency_ms"][t]["median"]
                cells += [compare.fmt_ms(wq), compare.fmt_ms(oq), f"{oq / wq:.2f}", compare.fmt_ms(wf), f"{wf / wq:.2f}"]
            print("| " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()

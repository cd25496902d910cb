#!/usr/bin/python3
"""Exports the models weft is checked against ONNX Runtime with (models/compare.py) to ONNX.

Run with Debian's Python and its packages (apt-get install python3-torch python3-torchvision
python3-onnx):

    /usr/bin/python3 models/export.py [--out models/out] [--only mlp,transformer]

Random weights from a fixed seed, eval mode, batch 1. The files are generated, not committed
(models/out/ is git-ignored). Writes <out>/<name>.onnx for each model and <out>/manifest.json:
for each model its input name and shape (symbolic dimensions by name, with the values the
comparison uses), the opset and the output names.
"""
import argparse, json, os, sys

import torch
import torchvision


class MLP(torch.nn.Module):
    """Linear, GELU (Erf), LayerNorm, Linear, ReLU, Linear, Softmax."""

    def __init__(self, d_in=256, hidden=1024, d_out=10):
        super().__init__()
        self.fc1 = torch.nn.Linear(d_in, hidden)
        self.act = torch.nn.GELU()
        self.norm = torch.nn.LayerNorm(hidden)
        self.fc2 = torch.nn.Linear(hidden, 256)
        self.fc3 = torch.nn.Linear(256, d_out)

    def forward(self, x):
        x = self.norm(self.act(self.fc1(x)))
        x = torch.relu(self.fc2(x))
        return torch.softmax(self.fc3(x), dim=-1)


def transformer():
    return torch.nn.TransformerEncoderLayer(d_model=256, nhead=4, dim_feedforward=1024, dropout=0.1,
                                            activation="gelu", batch_first=True)


# name: (constructor, input shape, opset, dynamic axes of the input {axis: name} or None,
#        the values the comparison gives the symbolic dimensions)
MODELS = {
    "mlp": (lambda: MLP(), [1, 256], 17, None, None),
    "transformer": (transformer, [1, 64, 256], 14, None, None),
    "resnet18": (lambda: torchvision.models.resnet18(), [1, 3, 224, 224], 13, None, None),
    "resnet50": (lambda: torchvision.models.resnet50(), [1, 3, 224, 224], 13, None, None),
    "mobilenet_v2": (lambda: torchvision.models.mobilenet_v2(), [1, 3, 224, 224], 13, None, None),
    "squeezenet1_1": (lambda: torchvision.models.squeezenet1_1(), [1, 3, 224, 224], 13, None, None),
    # A symbolic batch: weft compiles it for the batch the user gives (LoadOptions::dim_values).
    "resnet18_dynamic": (lambda: torchvision.models.resnet18(), [1, 3, 224, 224], 13, {0: "batch"},
                         {"batch": 2}),
    # Symbolic batch and image size; the CTest compiles it at 1x3x64x64.
    "squeezenet1_1_dynamic": (lambda: torchvision.models.squeezenet1_1(), [1, 3, 224, 224], 13,
                              {0: "batch", 2: "height", 3: "width"}, {"batch": 1, "height": 64, "width": 64}),
}


def export(name, out):
    make, shape, opset, dyn, values = MODELS[name]
    torch.manual_seed(0)
    model = make().eval()
    x = torch.rand(*shape) * 2 - 1
    path = os.path.join(out, name + ".onnx")
    kwargs = {}
    if dyn:
        kwargs["dynamic_axes"] = {"input": dyn, "output": {0: dyn[0]} if 0 in dyn else {}}
    torch.onnx.export(model, (x,), path, input_names=["input"], output_names=["output"],
                      opset_version=opset, do_constant_folding=True, **kwargs)
    symbolic = [dyn.get(k) if dyn else None for k in range(len(shape))]
    return {"file": name + ".onnx", "input": "input", "shape": shape, "symbolic": symbolic,
            "dim_values": values or {}, "opset": opset, "outputs": ["output"]}


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(here, "out"))
    ap.add_argument("--only", default="", help="comma-separated model names (default: all)")
    args = ap.parse_args()
    names = [n for n in args.only.split(",") if n] or list(MODELS)
    os.makedirs(args.out, exist_ok=True)
    manifest_path = os.path.join(args.out, "manifest.json")
    manifest = json.load(open(manifest_path)) if os.path.exists(manifest_path) else {}
    for n in names:
        if n not in MODELS:
            sys.exit(f"unknown model '{n}' (have: {', '.join(MODELS)})")
        manifest[n] = export(n, args.out)
        size = os.path.getsize(os.path.join(args.out, manifest[n]["file"])) / 2**20
        print(f"{n}: {manifest[n]['file']} ({size:.1f} MiB, opset {manifest[n]['opset']})", flush=True)
    manifest["_torch"] = {"torch": torch.__version__, "torchvision": torchvision.__version__}
    with open(manifest_path, "w") as f:
        json.dump(manifest, f, indent=1)


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Exports the models weft is checked against ONNX Runtime with (models/compare.py) to ONNX.

Run with Debian's Python and its packages (apt-get install python3-torch python3-torchvision
python3-onnx):

    /usr/bin/python3 models/export.py [--out models/out] [--only mlp,transformer]

The Hugging Face models (hf_*) need `transformers` besides: in a venv that sees Debian's torch,
`python3 -m venv --system-site-packages models/.venv && models/.venv/bin/pip install
'transformers<4.50'`, then `models/.venv/bin/python models/export.py --only hf_gpt2,hf_bert`
(without it, export.py skips them and says so).

Random weights from a fixed seed, eval mode, batch 1. The files are generated, not committed
(models/out/ is git-ignored). Writes <out>/<name>.onnx for each model and <out>/manifest.json:
for each model its inputs (name, shape, dtype, symbolic dimensions by name, how the comparison
draws its values), the values the comparison gives the symbolic dimensions, the opset and the
output names.
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


class CenterNet(torch.nn.Module):
    """A detection backbone with ConvTranspose upsampling (CenterNet's ResNet head): ResNet-18
    without its pooling and classifier, three ConvTranspose2d (4x4, stride 2) + BN + ReLU,
    a 3x3 and a 1x1 conv, sigmoid heatmaps."""

    def __init__(self, classes=2):
        super().__init__()
        r = torchvision.models.resnet18()
        self.backbone = torch.nn.Sequential(*list(r.children())[:-2])
        layers, c = [], 512
        for out in (256, 128, 64):
            layers += [torch.nn.ConvTranspose2d(c, out, 4, stride=2, padding=1, bias=False),
                       torch.nn.BatchNorm2d(out), torch.nn.ReLU(inplace=True)]
            c = out
        self.up = torch.nn.Sequential(*layers)
        self.head = torch.nn.Sequential(torch.nn.Conv2d(64, 64, 3, padding=1), torch.nn.ReLU(inplace=True),
                                        torch.nn.Conv2d(64, classes, 1))

    def forward(self, x):
        return torch.sigmoid(self.head(self.up(self.backbone(x))))


class Segmentation(torch.nn.Module):
    """torchvision's DeepLabV3 on MobileNetV3-Large: dilated depthwise convs, squeeze-excite,
    hard-swish, ASPP with a global-pooling branch, bilinear upsampling to the input size."""

    def __init__(self):
        super().__init__()
        self.net = torchvision.models.segmentation.deeplabv3_mobilenet_v3_large(
            weights=None, weights_backbone=None, aux_loss=False)

    def forward(self, x):
        return self.net(x)["out"]


class LSTMTagger(torch.nn.Module):
    """A 2-layer bidirectional LSTM over a sequence of any length, a Linear per step."""

    def __init__(self):
        super().__init__()
        self.rnn = torch.nn.LSTM(64, 128, num_layers=2, bidirectional=True, batch_first=True)
        self.fc = torch.nn.Linear(256, 10)

    def forward(self, x):
        y, _ = self.rnn(x)
        return self.fc(y)


class GRUStateful(torch.nn.Module):
    """A GRU that carries its state in and out (a streaming voice-activity detector's shape):
    inputs x [1, seq, 40] and h [1, 1, 64]; outputs per-step probabilities and the new state."""

    def __init__(self):
        super().__init__()
        self.rnn = torch.nn.GRU(40, 64, batch_first=True)
        self.fc = torch.nn.Linear(64, 1)

    def forward(self, x, h):
        y, h_new = self.rnn(x, h)
        return torch.sigmoid(self.fc(y)), h_new


class IterativeRefiner(torch.nn.Module):
    """A while loop (TorchScript): h shrinks by a learned gate until max |h| < 0.05 or 32
    steps. ONNX Loop whose condition the input decides (an If inside its body: the `and`)."""

    def __init__(self, d=64):
        super().__init__()
        self.gate = torch.nn.Linear(d, d)

    def forward(self, x):
        h = x
        i = 0
        while bool(h.abs().max() > 0.05) and i < 32:
            h = 0.6 * h + 0.3 * torch.tanh(self.gate(h)) * h
            i += 1
        return h


class BertEncoder(torch.nn.Module):
    """A BERT-like encoder written as Hugging Face's is: token, position and type embeddings
    (Gather), LayerNorm, 2 layers of self-attention whose padding mask is
    `masked_fill(attention_mask == 0, min)` (Equal, Expand, Where), GELU feed-forward."""

    def __init__(self, vocab=1000, d=256, heads=4, layers=2, ff=1024, max_len=128):
        super().__init__()
        self.heads = heads
        self.tok = torch.nn.Embedding(vocab, d)
        self.pos = torch.nn.Embedding(max_len, d)
        self.typ = torch.nn.Embedding(2, d)
        self.norm = torch.nn.LayerNorm(d, eps=1e-12)
        self.qkv = torch.nn.ModuleList(torch.nn.Linear(d, 3 * d) for _ in range(layers))
        self.proj = torch.nn.ModuleList(torch.nn.Linear(d, d) for _ in range(layers))
        self.norm1 = torch.nn.ModuleList(torch.nn.LayerNorm(d, eps=1e-12) for _ in range(layers))
        self.ff1 = torch.nn.ModuleList(torch.nn.Linear(d, ff) for _ in range(layers))
        self.ff2 = torch.nn.ModuleList(torch.nn.Linear(ff, d) for _ in range(layers))
        self.norm2 = torch.nn.ModuleList(torch.nn.LayerNorm(d, eps=1e-12) for _ in range(layers))

    def forward(self, input_ids, attention_mask):
        b, s = input_ids.shape
        pos = torch.arange(s, device=input_ids.device).unsqueeze(0)
        x = self.norm(self.tok(input_ids) + self.pos(pos) + self.typ(torch.zeros_like(input_ids)))
        pad = (attention_mask == 0).view(b, 1, 1, s).expand(b, self.heads, s, s)
        d = x.shape[-1]
        hd = d // self.heads
        for k in range(len(self.qkv)):
            q, kk, v = self.qkv[k](x).split(d, dim=-1)
            q, kk, v = (t.view(b, s, self.heads, hd).transpose(1, 2) for t in (q, kk, v))
            scores = (q @ kk.transpose(-1, -2)) / hd ** 0.5
            scores = scores.masked_fill(pad, torch.finfo(scores.dtype).min)
            a = (torch.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(b, s, d)
            x = self.norm1[k](x + self.proj[k](a))
            x = self.norm2[k](x + self.ff2[k](torch.nn.functional.gelu(self.ff1[k](x))))
        return x


class HuggingFace(torch.nn.Module):
    """A Hugging Face transformers model (random weights from a small config) returning one
    tensor: GPT-2's logits, BERT's last hidden state. Needs `transformers` (see main)."""

    def __init__(self, kind):
        super().__init__()
        import transformers
        self.kind = kind
        if kind == "gpt2":
            cfg = transformers.GPT2Config(n_layer=2, n_embd=256, n_head=4, vocab_size=1000, n_positions=128)
            self.m = transformers.GPT2LMHeadModel(cfg)
        else:
            cfg = transformers.BertConfig(num_hidden_layers=2, hidden_size=256, num_attention_heads=4,
                                          intermediate_size=512, vocab_size=1000)
            self.m = transformers.BertModel(cfg)

    def forward(self, ids, mask=None):
        if self.kind == "gpt2":
            return self.m(input_ids=ids, use_cache=False).logits
        return self.m(input_ids=ids, attention_mask=mask).last_hidden_state


def inp(name, shape, symbolic=None, dtype="float32", values=None, low=-1.0, high=1.0, pad=0):
    """An input: symbolic {axis: dim name}; the comparison draws uniform [low, high) values
    (integers for integer dtypes), or, with pad, a padding mask: ones then `pad` zeros."""
    return {"name": name, "shape": shape, "symbolic": [(symbolic or {}).get(k) for k in range(len(shape))],
            "dtype": dtype, "low": low, "high": high, "pad": pad}


# name: constructor, inputs, outputs, opset, the values the comparison gives the symbolic
# dimensions (weft compiles the model for them: LoadOptions::dim_values).
MODELS = {
    "mlp": (lambda: MLP(), [inp("input", [1, 256])], ["output"], 17, {}),
    "transformer": (transformer, [inp("input", [1, 64, 256])], ["output"], 14, {}),
    "resnet18": (lambda: torchvision.models.resnet18(), [inp("input", [1, 3, 224, 224])], ["output"], 13, {}),
    "resnet50": (lambda: torchvision.models.resnet50(), [inp("input", [1, 3, 224, 224])], ["output"], 13, {}),
    "mobilenet_v2": (lambda: torchvision.models.mobilenet_v2(), [inp("input", [1, 3, 224, 224])], ["output"], 13, {}),
    "squeezenet1_1": (lambda: torchvision.models.squeezenet1_1(), [inp("input", [1, 3, 224, 224])], ["output"], 13,
                      {}),
    # A symbolic batch: weft compiles it for the batch the user gives (LoadOptions::dim_values).
    "resnet18_dynamic": (lambda: torchvision.models.resnet18(), [inp("input", [1, 3, 224, 224], {0: "batch"})],
                         ["output"], 13, {"batch": 2}),
    # Symbolic batch and image size; the CTest compiles it at 1x3x64x64.
    "squeezenet1_1_dynamic": (lambda: torchvision.models.squeezenet1_1(),
                              [inp("input", [1, 3, 224, 224], {0: "batch", 2: "height", 3: "width"})], ["output"],
                              13, {"batch": 1, "height": 64, "width": 64}),
    "deeplabv3_mobilenet": (Segmentation, [inp("input", [1, 3, 224, 224])], ["output"], 13, {}),
    "centernet_resnet18": (CenterNet, [inp("input", [1, 3, 256, 256])], ["output"], 13, {}),
    # Sequence models of any length, compared at the length given here.
    "lstm_tagger": (LSTMTagger, [inp("input", [1, 20, 64], {1: "seq"})], ["output"], 14, {"seq": 50}),
    "gru_stateful": (GRUStateful, [inp("x", [1, 20, 40], {1: "seq"}), inp("h", [1, 1, 64])], ["prob", "h_new"], 14,
                     {"seq": 32}),
    "bert_encoder": (BertEncoder, [inp("input_ids", [1, 16], {1: "seq"}, "int64", low=0, high=1000),
                                   inp("attention_mask", [1, 16], {1: "seq"}, "int64", pad=5)],
                     ["output"], 14, {"seq": 48}),
    # Grouped convolutions (ResNeXt's groups of 4 to 32 channels, RegNet's of 8), DenseNet's
    # concats and batch norms before its convs, Swin's windowed attention (opset 17).
    "resnext50_32x4d": (lambda: torchvision.models.resnext50_32x4d(), [inp("input", [1, 3, 224, 224])], ["output"],
                        17, {}),
    "regnet_y_400mf": (lambda: torchvision.models.regnet_y_400mf(), [inp("input", [1, 3, 224, 224])], ["output"],
                       17, {}),
    "densenet121": (lambda: torchvision.models.densenet121(), [inp("input", [1, 3, 224, 224])], ["output"], 17, {}),
    "swin_t": (lambda: torchvision.models.swin_t(), [inp("input", [1, 3, 224, 224])], ["output"], 17, {}),
    # Hugging Face exports (transformers' own modelling code, random weights): GPT-2 with its
    # sequence symbolic, BERT with batch and sequence symbolic (two symbols in one GEMM's rows).
    "hf_gpt2": (lambda: HuggingFace("gpt2"), [inp("ids", [1, 16], {1: "seq"}, "int64", low=0, high=1000)],
                ["logits"], 17, {"seq": 16}),
    "hf_bert": (lambda: HuggingFace("bert"), [inp("ids", [1, 16], {0: "batch", 1: "seq"}, "int64", low=0, high=1000),
                                             inp("mask", [1, 16], {0: "batch", 1: "seq"}, "int64", pad=3)],
                ["h"], 17, {"batch": 2, "seq": 30}),
    # A loop the input's values decide: weft unrolls it to a bound (LoadOptions::max_loop_iterations).
    "iterative_refiner": (lambda: torch.jit.script(IterativeRefiner()), [inp("x", [4, 64])], ["y"], 14, {}),
}

# The bound weft is given for the loops the inputs decide (onnx::LoadOptions::max_loop_iterations).
LOOP_BOUNDS = {"iterative_refiner": 32}


def example(spec):
    if spec["dtype"] == "int64":
        if spec["pad"]:
            t = torch.ones(*spec["shape"], dtype=torch.int64)
            t[..., -spec["pad"]:] = 0
            return t
        return torch.randint(int(spec["low"]), int(spec["high"]), spec["shape"])
    return torch.rand(*spec["shape"]) * (spec["high"] - spec["low"]) + spec["low"]


def export(name, out):
    make, inputs, outputs, opset, values = MODELS[name]
    torch.manual_seed(0)
    model = make().eval()
    args = tuple(example(i) for i in inputs)
    path = os.path.join(out, name + ".onnx")
    dynamic = {}
    for i in inputs:
        axes = {k: s for k, s in enumerate(i["symbolic"]) if s}
        if axes:
            dynamic[i["name"]] = axes
    # The outputs keep the batch (and sequence) axes of the first input.
    first = {k: s for k, s in enumerate(inputs[0]["symbolic"]) if s and k < 2}
    if first:
        for o in outputs:
            dynamic[o] = first
    # Not under torch.no_grad(): that takes TransformerEncoderLayer's fused path, which has no ONNX export.
    torch.onnx.export(model, args, path, input_names=[i["name"] for i in inputs], output_names=outputs,
                      opset_version=opset, do_constant_folding=True, dynamic_axes=dynamic or None)
    entry = {"file": name + ".onnx", "inputs": inputs, "dim_values": values, "opset": opset, "outputs": outputs}
    if name in LOOP_BOUNDS:
        entry["max_loop_iterations"] = LOOP_BOUNDS[name]
    return entry


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(here, "out"))
    ap.add_argument("--only", default="", help="comma-separated model names (default: all)")
    args = ap.parse_args()
    names = [n for n in args.only.split(",") if n]
    if not names:
        names = list(MODELS)
        try:
            import transformers  # noqa: F401
        except ImportError:
            skipped = [n for n in names if n.startswith("hf_")]
            names = [n for n in names if not n.startswith("hf_")]
            print(f"{', '.join(skipped)}: skipped, they need transformers: python3 -m venv --system-site-packages "
                  f"models/.venv && models/.venv/bin/pip install 'transformers<4.50', then models/.venv/bin/python "
                  f"models/export.py --only {','.join(skipped)}", flush=True)
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

"""PyTorch's ResNet-50 on the GPU, the peer of weft_cuda_bench's gpu/resnet50 cases.

torchvision.models.resnet50 (random weights: the time does not depend on them), eval mode,
float32, under torch.inference_mode, at batch 1 and 8. Each batch is timed two ways after
warm-up runs, both as the median of --runs:
  - "ms": CUDA events around one forward pass (torch.cuda.Event, the GPU's clock);
  - "wall_ms": the host clock from the call to torch.cuda.synchronize() returning, which is
    how weft_cuda_bench times its graph (run() to the device's synchronize).
Modes: "fp32" with TF32 off (cuDNN and cuBLAS in full float32, what weft computes) and
"tf32" (PyTorch's defaults for convolutions: TF32 tensor cores), for reference.

Prints one JSON object on stdout (and writes it to --out): {"available": false, "reason": ...}
when torch, torchvision or a CUDA device is missing, so the report says "not measured".
"""
import argparse, json, statistics, sys, time


def unavailable(reason):
    result = {"available": False, "reason": reason}
    print(f"torch_resnet50.py: {reason}", file=sys.stderr)
    return result


def measure(args):
    try:
        import torch
    except Exception as e:  # ImportError, or a broken install
        return unavailable(f"torch is not installed ({e})")
    try:
        import torchvision
    except Exception as e:
        return unavailable(f"torchvision is not installed ({e}); torch {torch.__version__}")
    if not torch.cuda.is_available():
        return unavailable(f"torch {torch.__version__} sees no CUDA device (torch.version.cuda="
                           f"{torch.version.cuda})")
    device = torch.device("cuda:0")
    model = torchvision.models.resnet50(weights=None).eval().to(device)
    result = {"available": True, "torch": torch.__version__, "torchvision": torchvision.__version__,
              "cuda": torch.version.cuda, "cudnn": torch.backends.cudnn.version(),
              "device": torch.cuda.get_device_name(device), "runs": args.runs, "results": []}
    for mode in ("fp32", "tf32"):
        tf32 = mode == "tf32"
        torch.backends.cuda.matmul.allow_tf32 = tf32
        torch.backends.cudnn.allow_tf32 = tf32
        for batch in args.batches:
            x = torch.randn(batch, 3, 224, 224, device=device)
            with torch.inference_mode():
                for _ in range(args.warmup):
                    model(x)
                torch.cuda.synchronize()
                event_ms, wall_ms = [], []
                for _ in range(args.runs):
                    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    t0 = time.perf_counter()
                    start.record()
                    model(x)
                    end.record()
                    torch.cuda.synchronize()
                    wall_ms.append((time.perf_counter() - t0) * 1e3)
                    event_ms.append(start.elapsed_time(end))
            result["results"].append({"mode": mode, "batch": batch, "ms": statistics.median(event_ms),
                                      "wall_ms": statistics.median(wall_ms)})
            print(f"resnet50 b{batch} {mode}: {statistics.median(event_ms):.3f} ms (events), "
                  f"{statistics.median(wall_ms):.3f} ms (wall)", file=sys.stderr)
    return result


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--batches", type=int, nargs="+", default=[1, 8])
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--runs", type=int, default=100)
    p.add_argument("--out", help="also write the JSON here")
    args = p.parse_args()
    try:
        result = measure(args)
    except Exception as e:  # a CUDA error, out of memory: still a JSON the report can read
        result = {"available": False, "reason": f"{type(e).__name__}: {e}"}
        print(f"torch_resnet50.py: {result['reason']}", file=sys.stderr)
    text = json.dumps(result, indent=1)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()

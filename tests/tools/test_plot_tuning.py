#!/usr/bin/env python3
"""tools/plot_tuning/plot_tuning.py: a PNG of the tuning curves from a records file (two
tasks, a failed candidate among them; two files over each other), and a one-line refusal
of a file that is not tuning records."""
import json, os, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "tools", "plot_tuning", "plot_tuning.py")


def record(workload, costs, error=""):
    return json.dumps({"target": "llvm -mtriple=x86_64 -mcpu=x -mattr=+avx2 -vector-bits=256 -threads=1",
                       "workload": workload, "config": {"gemm.mr": 4}, "costs_ms": costs, "error": error,
                       "timestamp": 0, "version": "0.1.0"})


def run(*args):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True)


def main():
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("skipped: no matplotlib (apt-get install python3-matplotlib)")
        return 0
    failures = 0
    with tempfile.TemporaryDirectory() as d:
        a, b, bad = (os.path.join(d, n) for n in ("a.jsonl", "b.jsonl", "bad.jsonl"))
        with open(a, "w") as f:
            for i, c in enumerate([2.0, 1.5, 1.8, 1.2]):
                f.write(record("matmul(float32[8, 8], float32[8, 8]){}", [c, c * 1.01, c * 0.99]) + "\n")
                f.write(record("dense(float32[4, 8], float32[2, 8]){}", [] if i == 1 else [0.5 - 0.1 * i],
                               "crashed: signal 11" if i == 1 else "") + "\n")
        with open(b, "w") as f:
            f.write(record("matmul(float32[8, 8], float32[8, 8]){}", [1.9]) + "\n\n")
        with open(bad, "w") as f:
            f.write('{"workload": "x"}\nnot json\n')
        png = os.path.join(d, "curves.png")
        r = run(a, b, "-o", png)
        if r.returncode != 0 or "2 task(s) from 2 file(s)" not in r.stdout:
            print("FAIL: plotting two files:", r.stdout, r.stderr)
            failures += 1
        elif not open(png, "rb").read(8).startswith(b"\x89PNG") or os.path.getsize(png) < 5000:
            print("FAIL: not a PNG image of some size:", os.path.getsize(png))
            failures += 1
        r = run(bad, "-o", png)
        if r.returncode == 0 or "bad.jsonl:2: not a tuning record" not in r.stderr:
            print("FAIL: a malformed file was not refused on its line:", r.stdout, r.stderr)
            failures += 1
        r = run(a, "--target", "cuda", "-o", png)
        if r.returncode == 0 or "no records for a target containing 'cuda'" not in r.stderr:
            print("FAIL: no records for the target was not said:", r.stdout, r.stderr)
            failures += 1
    print("ok" if not failures else f"{failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

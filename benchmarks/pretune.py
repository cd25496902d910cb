#!/usr/bin/env python3
"""Merges tuning records files into weft's pre-tuned records
(include/weft/autotune/pretuned/records.inc, read by autotune::pretuned_records()): the
fastest error-free record of each (target, workload) of the files given, replacing the
file's own record of that (target, workload); the file's records of other targets and
workloads are kept.

    python3 benchmarks/pretune.py build/tuning/*.jsonl
"""
import json, os, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INC = os.path.join(ROOT, "include", "weft", "autotune", "pretuned", "records.inc")
HEADER = """// weft's pre-tuned records: one JSON line per (target, workload), the best measured
// (autotune::pretuned_records). Written by benchmarks/pretune.py; do not edit by hand.
"""
OPEN, CLOSE = 'R"weft_records(', ')weft_records"'


def median(costs):
    c = sorted(costs)
    return c[len(c) // 2]


def ok(r):
    return not r.get("error") and r.get("costs_ms")


def read_inc():
    text = open(INC).read()
    body = text[text.index(OPEN) + len(OPEN):text.index(CLOSE)]
    return [json.loads(l) for l in body.splitlines() if l.strip()]


def main():
    best = {}
    for path in sys.argv[1:]:
        for line in open(path):
            if not line.strip():
                continue
            r = json.loads(line)
            if not ok(r):
                continue
            key = (r["target"], r["workload"])
            if key not in best or median(r["costs_ms"]) < median(best[key]["costs_ms"]):
                best[key] = r
    kept = [r for r in read_inc() if (r["target"], r["workload"]) not in best]
    records = kept + [best[k] for k in sorted(best)]
    with open(INC, "w") as f:
        f.write(HEADER + OPEN + "\n")
        for r in records:
            f.write(json.dumps(r, separators=(",", ":")) + "\n")
        f.write(CLOSE + "\n")
    print(f"{INC}: {len(records)} records ({len(best)} from {len(sys.argv) - 1} file(s), {len(kept)} kept)")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Tuning curves: the best cost measured so far against the trials, one panel per task, from
tuning records (`weftc tune -o RECORDS.jsonl`, graph::tune's records_file), as a PNG.

    python3 tools/plot_tuning/plot_tuning.py RECORDS.jsonl [MORE.jsonl ...] -o curves.png
        [--target SUBSTRING] [--max-tasks 12]

Each file's records are taken in the order they were written (a tuner appends them as it
measures); the tasks are its workloads, each drawn as its best cost (ms, log scale) after n
trials with its default config's cost (the task's first record) as a dashed line. Several
files (two tuners on the same model, say) are drawn over each other, named by file. Needs
matplotlib (Debian: apt-get install python3-matplotlib).
"""
import argparse, json, math, os, sys


def read(path, target):
    """{workload: [cost or inf, ...]} in the order measured."""
    tasks = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                r = json.loads(line)
                workload, costs, error = r["workload"], r.get("costs_ms", []), r.get("error", "")
            except (ValueError, KeyError, TypeError) as e:
                sys.exit(f"{path}:{n}: not a tuning record ({e})")
            if target and target not in r.get("target", ""):
                continue
            cost = sorted(costs)[len(costs) // 2] if costs and not error else math.inf
            tasks.setdefault(workload, []).append(cost)
    return tasks


def best_so_far(costs):
    out, best = [], math.inf
    for c in costs:
        best = min(best, c)
        out.append(best)
    return out


def short(workload, width=60):
    return workload if len(workload) <= width else workload[:width - 3] + "..."


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("records", nargs="+")
    ap.add_argument("-o", "--output", default="tuning.png")
    ap.add_argument("--target", default="", help="only records whose target contains this")
    ap.add_argument("--max-tasks", type=int, default=12, help="the tasks with the most trials first")
    args = ap.parse_args()
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = [(os.path.basename(p), read(p, args.target)) for p in args.records]
    trials = {}
    for _, tasks in runs:
        for w, costs in tasks.items():
            trials[w] = max(trials.get(w, 0), len(costs))
    if not trials:
        sys.exit("no records" + (f" for a target containing '{args.target}'" if args.target else ""))
    workloads = sorted(trials, key=lambda w: -trials[w])[:args.max_tasks]
    cols = min(3, len(workloads))
    rows = (len(workloads) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(5.5 * cols, 3.6 * rows), squeeze=False)
    for ax, w in zip(axes.flat, workloads):
        for name, tasks in runs:
            costs = tasks.get(w)
            if not costs:
                continue
            curve = best_so_far(costs)
            xs = [i + 1 for i, c in enumerate(curve) if math.isfinite(c)]
            ys = [c for c in curve if math.isfinite(c)]
            line, = ax.plot(xs, ys, label=name if len(runs) > 1 else "best so far")
            if math.isfinite(costs[0]):
                ax.axhline(costs[0], linestyle="--", linewidth=0.8, color=line.get_color(),
                           label=f"default{' (' + name + ')' if len(runs) > 1 else ''}")
        ax.set_yscale("log")
        ax.set_title(short(w), fontsize=8)
        ax.set_xlabel("trials")
        ax.set_ylabel("best ms")
        ax.grid(True, which="both", linewidth=0.3)
        ax.legend(fontsize=7)
    for ax in list(axes.flat)[len(workloads):]:
        ax.axis("off")
    fig.tight_layout()
    fig.savefig(args.output, dpi=110)
    print(f"wrote {args.output}: {len(workloads)} task(s) from {len(runs)} file(s)")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Writes the "Tuning GEMMs" section of benchmarks/RESULTS.md from weft_tune_gemm's table
(read on stdin) with the machine and the command around it."""
import datetime, os, platform, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import results_sections


def cpu_name():
    out = subprocess.run(["lscpu"], capture_output=True, text=True, env={**os.environ, "LC_ALL": "C"}).stdout
    return next((l.split(":", 1)[1].strip() for l in out.splitlines() if l.startswith("Model name")), "?")


def commit():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    git = lambda *a: subprocess.run(["git", "-C", root, *a], capture_output=True, text=True).stdout.strip()
    return git("rev-parse", "--short", "HEAD") + (" (with local changes)" if git("status", "--porcelain", "--untracked-files=no") else "")


table = sys.stdin.read()
section = "\n".join([
    results_sections.TUNING, "",
    "Written by `benchmarks/run_tune_gemm.sh` (`weft_tune_gemm`); do not edit by hand.", "",
    f"- date: {datetime.datetime.now():%Y-%m-%d %H:%M}; machine: {cpu_name()}, {os.cpu_count()} CPUs; "
    f"{platform.system()} {platform.release()}; weft {commit()}; OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')}",
    f"- command: `benchmarks/run_tune_gemm.sh {' '.join(sys.argv[1:])}`",
    "- method: one thread. For each shape `graph::tune` (random search, the default config first; each candidate "
    "checked in a child process, then timed) on a graph of one matmul; then the default module, the tuned module "
    "(the best record applied by `graph::build`), OpenBLAS `cblas_sgemm` and oneDNN `dnnl_sgemm` in alternating "
    "rounds, each round the median of 5 runs of each, a figure the median over rounds. Speed ratios > 1: tuned is faster.",
    "", table.rstrip("\n"), ""])
results_sections.write_section(os.path.join(os.path.dirname(os.path.abspath(__file__)), "RESULTS.md"),
                               results_sections.TUNING, section)
print(section)

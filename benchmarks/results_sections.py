"""The "## " sections of benchmarks/RESULTS.md that other scripts than report.py write:
report_cuda.py the GPU section, contention.py the threads-on-busy-cores section,
tune_report.py the tuning sections. report.py rewrites the CPU tables and keeps these as
they are. Also what every section states of its run: the CPU and the commit."""
import os, subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

GPU = "## GPU"
CONTENTION = "## Threads on busy cores"
TUNING = "## Tuning GEMMs"
TUNING_CONV = "## Tuning convolutions"
TUNER = "## Tuning: the model-based tuner against random search"
NETWORKS = "## Tuning whole networks"
TUNING_GPU = "## Tuning on the GPU"
TUNING_SKETCH = "## Tuning template-free schedules"
KEPT = (CONTENTION, TUNING, TUNING_CONV, TUNER, NETWORKS, GPU, TUNING_GPU, TUNING_SKETCH)  # in the order report.py appends them


def cpu_name():
    """lscpu's model name."""
    out = subprocess.run(["lscpu"], capture_output=True, text=True, env={**os.environ, "LC_ALL": "C"}).stdout
    return next((l.split(":", 1)[1].strip() for l in out.splitlines() if l.startswith("Model name")), "?")


def commit():
    """The short commit measured, marked when the tracked files differ from it."""
    def git(*a):
        return subprocess.run(["git", "-C", ROOT, *a], capture_output=True, text=True).stdout.strip()
    return git("rev-parse", "--short", "HEAD") + (" (with local changes)" if git("status", "--porcelain", "--untracked-files=no") else "")


def find_section(text, heading):
    """The section under `heading` (to the next "## " heading or the end), or ""."""
    start = text.find("\n" + heading + "\n")
    if start < 0:
        return ""
    end = text.find("\n## ", start + 1)
    return text[start + 1:end + 1 if end >= 0 else len(text)].rstrip("\n") + "\n"


# The one "## " section report.py writes itself (the copy of docs/onnx-models.md's results,
# then the table of every implementation).
REPORT_OWN = ("## ONNX models against ONNX Runtime",)


def hand_written(text):
    """The "## " sections of `text` written by hand (a session's measurements: start-up,
    precision, symbolic shapes, ...), in their order: every section neither report.py nor
    another script writes, so that report.py keeps them."""
    heads = [l for l in text.splitlines() if l.startswith("## ")]
    return [find_section(text, h) for h in heads if h not in REPORT_OWN and h not in KEPT]


def replace_section(text, heading, new):
    """text with its section under `heading` replaced by new, or new appended."""
    start = text.find("\n" + heading + "\n")
    if start < 0:
        return text.rstrip("\n") + "\n\n" + new
    start += 1
    end = text.find("\n## ", start + len(heading))
    rest = text[end + 1:] if end >= 0 else ""
    return text[:start] + new + ("\n" + rest if rest else "")


def write_section(path, heading, new):
    """Replaces (or appends) the section under `heading` of the file at path."""
    try:
        text = open(path).read()
    except OSError:
        text = "# Benchmark results\n"
    with open(path, "w") as f:
        f.write(replace_section(text, heading, new))

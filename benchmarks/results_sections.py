"""The "## " sections of benchmarks/RESULTS.md that other scripts than report.py write:
report_cuda.py the GPU section, contention.py the threads-on-busy-cores section,
tune_gemm_report.py the tuning section. report.py rewrites the CPU tables and keeps these as
they are."""

GPU = "## GPU"
CONTENTION = "## Threads on busy cores"
TUNING = "## Tuning GEMMs"
KEPT = (CONTENTION, TUNING, GPU)  # in the order report.py appends them


def find_section(text, heading):
    """The section under `heading` (to the next "## " heading or the end), or ""."""
    start = text.find("\n" + heading + "\n")
    if start < 0:
        return ""
    end = text.find("\n## ", start + 1)
    return text[start + 1:end + 1 if end >= 0 else len(text)].rstrip("\n") + "\n"


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

#!/usr/bin/env python3
"""Writes a tuning section of benchmarks/RESULTS.md from a tuning benchmark's tables (read on
stdin) with the machine and the command around it.

    weft_tune_gemm ARGS  | tune_report.py gemm ARGS    # "Tuning GEMMs" (run_tune_gemm.sh)
    weft_tune_conv ARGS  | tune_report.py conv ARGS    # "Tuning convolutions" (run_tune_conv.sh)
    weft_tune_model ARGS | tune_report.py model ARGS   # the model tuner against random search
    weft_tune_cuda ARGS  | tune_report.py gpu ARGS     # "Tuning on the GPU" (run_tune_cuda.sh)
    weft_tune_sketch ARGS | tune_report.py sketch ARGS # "Tuning template-free schedules" (run_tune_sketch.sh)"""
import datetime, os, platform, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import results_sections

SECTIONS = {
    "gemm": (results_sections.TUNING, "run_tune_gemm.sh", "weft_tune_gemm",
             "one thread. For each shape `graph::tune` (the tuner of the command, random by default; the default "
             "config first; each candidate checked in a child process, then timed) on a graph of one matmul; then the default module, the tuned "
             "module (the best record applied by `graph::build`), OpenBLAS `cblas_sgemm` and oneDNN `dnnl_sgemm` in "
             "alternating rounds, each round the median of 5 runs of each, a figure the median over rounds. Speed "
             "ratios > 1: tuned is faster."),
    "conv": (results_sections.TUNING_CONV, "run_tune_conv.sh", "weft_tune_conv",
             "one thread. For each layer (stride 1, same padding) `graph::tune` (the model tuner unless the command says "
             "--tuner random; the default config first; each candidate checked in a child process, then timed) on a graph "
             "of one conv2d; then the blocked-convolution kernel of the default module and of the tuned one (the "
             "profiler's mean of 9 runs; layout transforms left out) and oneDNN's direct convolution with the layouts it "
             "chooses (reorders outside the timing, median of 9 runs), in alternating rounds; a figure is the median over "
             "7 rounds. Speed ratios > 1: tuned is faster."),
    "model": (results_sections.TUNER, "run_tune_model.sh", "weft_tune_model",
              "one thread. For each task (the one kernel of a graph of one operator) `graph::tune` with random search "
              "and with the model tuner (XGBoost rank:pairwise over the candidates' knob and lowered-program features, "
              "simulated annealing for the GEMM's 33,792 points, the whole space ranked for the smaller ones; batches "
              "of 16, the first 16 points random), the same seed, each candidate timed as the median of 5 runs. "
              "First table: the best cost measured after n trials (the default is trial 1). Second: the best config "
              "of each tuner built and its kernel timed again (the profiler's mean of 9 runs, median of 7 "
              "alternating rounds): speed > 1 means the model's config is faster; and the first trial at which the "
              "model tuner measured a cost at or below random search's best."),
    "gpu": (results_sections.TUNING_GPU, "run_tune_cuda.sh", "weft_tune_cuda",
            "`graph::tune` for `Target::cuda()` (the model tuner unless the command says otherwise; the default config "
            "first; candidates scheduled and lowered in the tuner's process, then compiled by NVRTC and measured in child "
            "processes, up to 8 per child: each run once and checked against the default's output, then timed with CUDA "
            "events, 5 samples of about 1 ms each). GEMMs: a graph of one float32 matmul, its default and tuned modules (CUDA events on the "
            "module's stream) and cublasSgemm (no TF32) on the same device inputs, the median of 7 alternating rounds. "
            "ResNet-50: `graph::testing::resnet50` with total trials shared by its tasks by their run time, default and "
            "tuned modules timed with the host clock from `run()` to the stream's synchronize (median of 20 runs, median "
            "over 7 alternating rounds); PyTorch: `benchmarks/torch_resnet50.py` in the same run (torchvision resnet50, "
            "fp32, TF32 off, wall clock). check: tuned against cuBLAS (GEMM) or the default module (ResNet-50), largest "
            "difference over the largest value. Speed ratios > 1: tuned is faster."),
    "sketch": (results_sections.TUNING_SKETCH, "run_tune_sketch.sh", "weft_tune_sketch",
               "one thread. Each task is a plain tensor expression (a matmul as sum(A(i, k) * B(k, j)), a 3x3 "
               "convolution over a padded input, NCHW, a row sum) registered as an operator without a schedule, so it gets the "
               "template-free sketch (`autotune::auto_schedule`); `graph::tune` searches the sketch's knobs (the model "
               "tuner unless the command says otherwise, the default first). Then the sketch's default module, the "
               "tuned one, and the same computation through weft's own operator and hand-written template (topi's "
               "packed GEMM; the blocked NCHWc convolution with its layout transforms left out; `schedule_reduce`), untuned, pre-tuned "
               "records off: each kernel's profiler mean of 9 runs, in alternating rounds, a figure the median over "
               "rounds. Speed ratios > 1: the tuned sketch is faster."),
}

kind = sys.argv[1]
heading, script, program, method = SECTIONS[kind]
args = " ".join(sys.argv[2:])
section = "\n".join([
    heading, "",
    f"Written by `benchmarks/{script}` (`{program}`); do not edit by hand.", "",
    f"- date: {datetime.datetime.now():%Y-%m-%d %H:%M}; machine: {results_sections.cpu_name()}, {os.cpu_count()} CPUs; "
    f"{platform.system()} {platform.release()}; weft {results_sections.commit()}"
    + (f"; OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')}" if kind == "gemm" else ""),
    f"- command: `benchmarks/{script} {args}`",
    f"- method: {method}",
    "", sys.stdin.read().rstrip("\n"), ""])
results_sections.write_section(os.path.join(results_sections.ROOT, "benchmarks", "RESULTS.md"), heading, section)
print(section)

// Measuring one candidate of a tuning task so that nothing it does can stop the tuner: the
// candidate first runs once in a child process (fork), which checks its output; a crash, a
// hang past the timeout or a wrong output is that candidate's error. Only a candidate that
// passed is then timed, here, with the process's thread pool (warm-up runs, then each
// repeat timed alone). Its compile runs in the tuner (a compile error is caught as the
// candidate's error; a compiler that hangs is not guarded).
//
//   autotune::MeasureResult r = autotune::measure(kernel, args, output, &reference, {});
//   if (r.ok()) ... r.costs_ms ... else ... r.error ...
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "weft/runtime/buffer.hpp"
#include "weft/runtime/kernel.hpp"

namespace weft::autotune {

struct MeasureOptions {
    int warmup = 1;           // untimed runs before the timed ones
    int repeats = 5;          // timed runs (each kept in the record)
    double timeout_s = 10;    // the checking run in the child process
    double rtol = 1e-3;       // the output against the reference: |got - want| <= atol + rtol |want|
    double atol = 1e-4;
};

struct MeasureResult {
    std::vector<double> costs_ms;  // empty when it failed
    std::string error;             // "" when it did not
    bool ok() const { return error.empty() && !costs_ms.empty(); }
};

// Runs `check` in a child process: it runs the candidate once and returns "" or what was
// wrong. Returns "" when the child said "", else the child's message, "crashed: signal N
// (name)", or "timed out after S s" (the child is killed). `check` may throw: its message
// is the error.
std::string run_isolated(const std::function<std::string()>& check, double timeout_s);

// Measures kernel(args): args[output] is the output, compared with `reference` (float32,
// same shape; nullptr: not compared) in the isolated run; then timed here.
MeasureResult measure(const Kernel& kernel, const std::vector<BufferRef>& args, size_t output,
                      const BufferRef* reference, const MeasureOptions& options = {});

// The largest element-wise error of a float32 output against a reference, as a message
// ("" when every element is within atol + rtol |want|).
std::string compare_outputs(const BufferRef& got, const BufferRef& want, double rtol, double atol);

}  // namespace weft::autotune

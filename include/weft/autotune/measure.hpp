// Measuring one candidate of a tuning task so that nothing it does can stop the tuner: the
// candidate first runs once in a child process (fork), which checks its output; a crash, a
// hang past the timeout or a wrong output is that candidate's error. Only a candidate that
// passed is then timed, here, with the process's thread pool (warm-up runs, then each
// repeat timed alone). Its compile runs in the tuner (a compile error is caught as the
// candidate's error; a compiler that hangs is not guarded).
//
// A CUDA kernel is measured entirely in its child (measure_on_device): a CUDA context does
// not survive fork, so the tuner's process never touches the GPU, and a kernel that faults
// poisons only its child's context.
//
//   autotune::MeasureResult r = autotune::measure(kernel, args, output, &reference, {});
//   if (r.ok()) ... r.costs_ms ... else ... r.error ...
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "weft/runtime/buffer.hpp"
#include "weft/runtime/device.hpp"
#include "weft/runtime/kernel.hpp"

namespace weft::autotune {

struct MeasureOptions {
    int warmup = 1;           // untimed runs before the timed ones
    int repeats = 5;          // timed runs (each kept in the record)
    double timeout_s = 10;    // the checking run in the child process (on a GPU: each candidate's whole measurement)
    double rtol = 1e-3;       // the output against the reference: |got - want| <= atol + rtol |want|
    double atol = 1e-4;
    int device_batch = 8;     // on a GPU: candidates measured in one child process (graph::tune)
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

// What a child process gave back for one item of run_in_children: ok and its payload, or not
// ok and why ("crashed: signal 11 (...)", "timed out after S s", the item's own message).
struct ChildResult {
    bool ok = false;
    std::string text;
};

// Runs items [0, n) of `work` in child processes: an item returns true with a payload, or
// false with what was wrong, in its text (a throw is its error). A child goes from item to
// item until one fails, crashes or passes timeout_s (counted from the previous item's end);
// the next child goes on after that one. measure_on_device's batches are made of this.
std::vector<ChildResult> run_in_children(size_t n, const std::function<bool(size_t, std::string&)>& work,
                                         double timeout_s);

// Measures kernel(args): args[output] is the output, compared with `reference` (float32,
// same shape; nullptr: not compared) in the isolated run; then timed here.
MeasureResult measure(const Kernel& kernel, const std::vector<BufferRef>& args, size_t output,
                      const BufferRef* reference, const MeasureOptions& options = {});

// Measures a CUDA kernel in a child process, which copies `args` (host buffers) to `device`,
// runs the kernel once and compares args[output] with `reference` (nullptr: not compared),
// then runs it `warmup` times and times `repeats` samples with CUDA events, each sample
// enough launches back to back to last about a millisecond (a cost is one launch's). When
// `output_back` is given and the candidate passed, it receives the output (on the host): the
// reference of the candidates after it. The process calling this must not have used CUDA
// (cuda::fork_safe()): its children could not.
MeasureResult measure_on_device(const Kernel& kernel, const std::vector<BufferRef>& args, size_t output,
                                const BufferRef* reference, Device device, const MeasureOptions& options = {},
                                BufferRef* output_back = nullptr);

// The same for several candidates of one computation (the same arguments), in as few child
// processes as they allow: a child creates its CUDA context once (hundreds of milliseconds)
// and measures one candidate after the other until one fails, crashes or hangs; the next
// child goes on after that one. Candidate i's kernel is `kernel_of(i)`, called in the child:
// compile there, since NVRTC initializes the CUDA driver of the process it runs in (libnvrtc
// calls cuInit), which the children of that process then cannot use. `output_back`
// receives candidate 0's output.
std::vector<MeasureResult> measure_on_device(size_t count, const std::function<Kernel(size_t)>& kernel_of,
                                             const std::vector<BufferRef>& args, size_t output,
                                             const BufferRef* reference, Device device,
                                             const MeasureOptions& options = {}, BufferRef* output_back = nullptr);

// The largest element-wise error of a float32 output against a reference, as a message
// ("" when every element is within atol + rtol |want|).
std::string compare_outputs(const BufferRef& got, const BufferRef& want, double rtol, double atol);

}  // namespace weft::autotune

// Where a tuner's candidates are measured: graph::tune hands each compiled CPU candidate to a
// Runner (TuneOptions::runner). LocalRunner measures here (autotune::measure: checked in a
// child process, timed in this one); weft::rpc::RpcRunner (<weft/rpc/rpc.hpp>) on servers
// that a tracker hands out by device key, as TVM's RPC device pool does.
//
//   auto runner = std::make_shared<autotune::LocalRunner>();
//   autotune::MeasureResult r = runner->measure(kernel, target, args, args.size() - 1, &reference, {});
#pragma once
#include <vector>

#include "weft/autotune/measure.hpp"
#include "weft/ir/target.hpp"

namespace weft::autotune {

class Runner {
public:
    virtual ~Runner() = default;
    // Measures kernel(args), compiled for `target`, as autotune::measure does: args[output]
    // compared with `reference` (nullptr: not compared), then `repeats` timed runs. A
    // candidate's failure is the result's error; a Runner throws only when it cannot measure
    // at all (no server).
    virtual MeasureResult measure(const Kernel& kernel, const Target& target, const std::vector<BufferRef>& args,
                                  size_t output, const BufferRef* reference, const MeasureOptions& options) = 0;
};

// Measures on this machine: autotune::measure.
class LocalRunner final : public Runner {
public:
    MeasureResult measure(const Kernel& kernel, const Target&, const std::vector<BufferRef>& args, size_t output,
                          const BufferRef* reference, const MeasureOptions& options) override {
        return autotune::measure(kernel, args, output, reference, options);
    }
};

}  // namespace weft::autotune

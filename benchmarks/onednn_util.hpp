// oneDNN plumbing shared by the benchmarks: a CPU engine and stream, layout reorders done in
// the set-up (outside the timing), and the timed call of a primitive (execute, then wait).
#pragma once
#include <oneapi/dnnl/dnnl.hpp>

#include <memory>
#include <unordered_map>

#include "harness.hpp"

namespace bench {

struct OneDnn {
    dnnl::engine engine{dnnl::engine::kind::cpu, 0};
    dnnl::stream stream{engine};

    // A copy of `from` in the layout `desc` (the one the primitive chose), made now.
    dnnl::memory reordered(dnnl::memory from, const dnnl::memory::desc& desc) {
        dnnl::memory to(desc, engine);
        dnnl::reorder(from, to).execute(stream, from, to);
        stream.wait();
        return to;
    }
};

// Runs `prim` on `args` once per iteration. `keep` owns host data the memories point into.
inline Runner onednn_runner(std::shared_ptr<OneDnn> ctx, dnnl::primitive prim,
                            std::unordered_map<int, dnnl::memory> args, std::shared_ptr<const void> keep = nullptr) {
    return [ctx, prim, args, keep] {
        prim.execute(ctx->stream, args);
        ctx->stream.wait();
    };
}

}  // namespace bench

// The kernel of a graph's loop (Graph::loop): host code that runs the body's module once per
// iteration, the body compiled once (not unrolled), as ONNX Runtime runs a Loop's subgraph.
// A data-dependent ONNX Loop unrolled to its bound made its model's graph 30x larger and
// its start-up 26x ONNX Runtime's (benchmarks/RESULTS.md, "Start-up: loops run as loops").
#pragma once
#include <algorithm>
#include <chrono>

#include "weft/graph/module.hpp"

namespace weft::graph::detail {

// What a loop node's attributes say, beside its body.
struct LoopSpec {
    std::string node;  // describe(the node), for messages
    int64_t carried = 0, captured = 0, output = 0, max_iterations = 0;
    std::string limit_message;
};

inline LoopSpec loop_spec(const Node& n) {
    LoopSpec s;
    s.node = describe(n);
    s.carried = n.attrs.get_int("carried");
    s.output = n.attrs.get_int("output", 0);
    s.max_iterations = n.attrs.get_int("max_iterations", 0);
    s.limit_message = n.attrs.get_string("limit_message");
    s.captured = int64_t(n.inputs.size()) - 2 - s.carried;
    return s;
}

class LoopKernelModule final : public KernelModule {
public:
    LoopKernelModule(Module body, LoopSpec spec, double compile_ms)
        : body_(std::move(body)), spec_(std::move(spec)), compile_ms_(compile_ms) {
        auto index = [](const std::vector<std::string>& names, const std::string& name) {
            auto it = std::find(names.begin(), names.end(), name);
            return it == names.end() ? -1 : int(it - names.begin());
        };
        const std::vector<std::string>& in = body_.input_names();
        const std::vector<std::string>& out = body_.output_names();
        iteration_in_ = index(in, kLoopIteration);
        condition_in_ = index(in, kLoopCondition);
        condition_out_ = index(out, kLoopCondition);
        WEFT_CHECK(condition_out_ >= 0, spec_.node, ": the loop's body has no output 'condition'");
        for (int64_t k = 0; k < spec_.carried; ++k) {
            carried_in_.push_back(index(in, loop_carried_name(size_t(k))));
            carried_out_.push_back(index(out, loop_carried_name(size_t(k))));
            WEFT_CHECK(carried_out_.back() >= 0, spec_.node, ": the loop's body has no output '",
                       loop_carried_name(size_t(k)), "'");
            // An output that is the body's input itself (a value carried through unchanged) is
            // read before any input is written: staged in a buffer of its own.
            const Node& produced = body_.graph().node(body_.graph().outputs()[size_t(carried_out_.back())].second);
            staged_.push_back(produced.is_input() && carried_in_.back() >= 0
                                  ? BufferRef::allocate(produced.type.dtype, produced.type.shape)
                                  : BufferRef());
        }
        for (int64_t j = 0; j < spec_.captured; ++j) captured_in_.push_back(index(in, loop_captured_name(size_t(j))));
    }

    WeftKernelFn entry() const override { return nullptr; }
    bool runs_on_host() const override { return true; }
    double compile_ms() const override { return compile_ms_; }
    const Module& body() const { return body_; }
    const LoopSpec& spec() const { return spec_; }

    // args: trips, condition, carried..., captured..., the output.
    void call_host(std::span<const KernelArgValue> args) const override {
        const size_t n = size_t(spec_.carried);
        const int64_t trips = *static_cast<const int64_t*>(args[0].buffer().data());
        bool go = *static_cast<const bool*>(args[1].buffer().data());
        Module m = body_;  // (a handle on the same module)
        for (size_t j = 0; j < captured_in_.size(); ++j)
            if (captured_in_[j] >= 0) m.set_input(captured_in_[j], args[2 + n + j].buffer());
        for (size_t k = 0; k < n; ++k)
            if (carried_in_[k] >= 0) m.set_input(carried_in_[k], args[2 + k].buffer());
        int64_t i = 0;
        while (i < trips && go) {
            WEFT_CHECK(spec_.max_iterations <= 0 || i < spec_.max_iterations, "graph::Module::run: ",
                       spec_.limit_message.empty()
                           ? ::weft::detail::concat(spec_.node, " needs more than ", spec_.max_iterations,
                                                    " iterations on these inputs (its max_iterations)")
                           : spec_.limit_message);
            if (iteration_in_ >= 0) *static_cast<int64_t*>(m.input(iteration_in_).data()) = i;
            if (condition_in_ >= 0) *static_cast<bool*>(m.input(condition_in_).data()) = true;
            m.run();
            go = *static_cast<const bool*>(m.get_output(condition_out_).data());
            if (!(++i < trips && go)) break;
            // The next iteration's carried values: staged ones first, before any input changes.
            for (size_t k = 0; k < n; ++k)
                if (staged_[k].defined()) staged_[k].copy_from(m.get_output(carried_out_[k]));
            for (size_t k = 0; k < n; ++k)
                if (carried_in_[k] >= 0)
                    m.set_input(carried_in_[k], staged_[k].defined() ? staged_[k] : m.get_output(carried_out_[k]));
        }
        const size_t k = size_t(spec_.output);
        args.back().buffer().copy_from(i == 0 ? args[2 + k].buffer() : m.get_output(carried_out_[k]));
    }

private:
    Module body_;
    LoopSpec spec_;
    double compile_ms_ = 0;
    int iteration_in_ = -1, condition_in_ = -1, condition_out_ = -1;
    std::vector<int> carried_in_, carried_out_, captured_in_;  // -1: an input the body does not read
    std::vector<BufferRef> staged_;
};

// The kernel's signature: the node's inputs (in0, ...) and its output (out), of the graph's
// types; the call checks them as it checks a generated kernel's.
inline ir::PrimFunc loop_signature(const Graph& g, int node) {
    const Node& n = g.node(node);
    ir::PrimFunc f;
    f.name = "loop";
    auto arg = [&](const TensorType& t, std::string name, bool output) {
        std::vector<Expr> shape;
        for (int64_t d : t.shape) shape.push_back(make_int(d));
        f.args.push_back({ir::KernelArg::Kind::Tensor, name, Var(name, DataType::handle()), t.dtype, shape, 0, output, {}});
    };
    for (size_t k = 0; k < n.inputs.size(); ++k) arg(g.type(n.inputs[k]), "in" + std::to_string(k), false);
    arg(n.type, "out", true);
    return f;
}

// OpDef::make_kernel of "loop": the body built for the target, in the build's tier.
inline Kernel make_loop_kernel(const Graph& g, int node, const Target& target, bool fast_compile) {
    const Node& n = g.node(node);
    WEFT_CHECK(!target.is_cuda(), "graph::build for ", target.str(), ": ", describe(n),
               " is a loop, which runs on the CPU only; build the graph for Target::host()");
    std::shared_ptr<const Graph> body = n.attrs.get_graph("body");
    WEFT_CHECK(body, describe(n), ": the loop has no body (a module loaded from an artifact cannot compile it again)");
    BuildOptions options;
    options.tier = fast_compile ? CompileTier::fast : CompileTier::optimized;
    options.compile_threads = 1;  // (on a compile thread of the enclosing build already)
    const auto t0 = std::chrono::steady_clock::now();
    Module m;
    try {
        m = build(*body, target, options);
    } catch (const Error& e) {
        ::weft::detail::rethrow_with_context(e, "graph::build: the body of " + describe(n));
    }
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return Kernel(std::make_shared<LoopKernelModule>(std::move(m), loop_spec(n), ms), loop_signature(g, node));
}

// The loop module behind a kernel, or null for a generated kernel.
inline const LoopKernelModule* as_loop(const Kernel& k) {
    return dynamic_cast<const LoopKernelModule*>(k.module().get());
}

}  // namespace weft::graph::detail

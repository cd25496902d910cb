// Definitions of graph/inspect.hpp's debug run: Module::run_debug and DebugReport::str.
// Each kernel runs as in run(); before it, the buffers it reads are copied, and after it
// the nodes of its group, each compiled alone (the groups BuildOptions::fuse = false
// makes), run one after another on those copies. The kernel's output is compared with the
// last node's, element by element.
#pragma once
#include <cmath>
#include <cstring>
#include <sstream>

#include "weft/graph/impl/compile_group.hpp"
#include "weft/graph/impl/module.hpp"
#include "weft/graph/inspect.hpp"

namespace weft::graph {

namespace debug_detail {

inline double half_to_double(uint16_t h) {
    int exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
    double v = exponent == 0    ? std::ldexp(mantissa, -24)
               : exponent == 31 ? (mantissa ? NAN : INFINITY)
                                : std::ldexp(mantissa + 1024, exponent - 25);
    return (h & 0x8000) ? -v : v;
}

// Element i of a compact buffer, as a double.
inline double element(const BufferRef& b, int64_t i) {
    const char* p = static_cast<const char*>(b.data()) + i * b.dtype().bytes();
    DataType t = b.dtype();
    auto read = [&]<class T>(T) {
        T v;
        std::memcpy(&v, p, sizeof v);
        return double(v);
    };
    if (t.is_bfloat()) {
        uint32_t bits = uint32_t(read(uint16_t{})) << 16;
        float f;
        std::memcpy(&f, &bits, sizeof f);
        return f;
    }
    if (t.is_float()) return t.bits == 64 ? read(double{}) : t.bits == 32 ? read(float{}) : half_to_double(uint16_t(read(uint16_t{})));
    if (t.is_bool()) return double(*reinterpret_cast<const uint8_t*>(p) != 0);
    if (t.is_int())
        return t.bits == 8 ? read(int8_t{}) : t.bits == 16 ? read(int16_t{}) : t.bits == 32 ? read(int32_t{}) : read(int64_t{});
    return t.bits == 8 ? read(uint8_t{}) : t.bits == 16 ? read(uint16_t{}) : t.bits == 32 ? read(uint32_t{}) : read(uint64_t{});
}

inline BufferRef copy_of(const BufferRef& b) {
    BufferRef c = BufferRef::allocate(b.dtype(), b.shape());
    std::memcpy(c.data(), b.data(), size_t(b.size_bytes()));
    return c;
}

inline std::string format_number(double v) {
    std::ostringstream os;
    os.precision(7);
    os << v;
    return os.str();
}

}  // namespace debug_detail

std::string DebugReport::str() const {
    std::ostringstream os;
    if (ok) {
        os << "ok: " << kernels_checked << " kernel" << (kernels_checked == 1 ? "" : "s")
           << " match their nodes run one by one";
        return os.str();
    }
    os << "kernel " << kernel << " '" << kernel_name << "' (node" << (node_names.size() == 1 ? " " : "s ");
    for (size_t i = 0; i < node_names.size(); ++i) os << (i ? ", " : "") << node_names[i];
    os << ") differs from its nodes run one by one: " << mismatches << " of " << elements << " element"
       << (elements == 1 ? "" : "s") << " differ, the worst at [";
    for (size_t d = 0; d < position.size(); ++d) os << (d ? ", " : "") << position[d];
    os << "]"
       << ": fused " << debug_detail::format_number(fused) << ", reference " << debug_detail::format_number(reference)
       << " (|error| " << debug_detail::format_number(max_abs_error) << ")";
    return os.str();
}

DebugReport Module::run_debug(const DebugOptions& options) {
    State& s = state();
    WEFT_CHECK(!s.device.is_cuda(), "graph::Module::run_debug: this module runs on ", s.device.str(),
               ", and run_debug compares each kernel's output on the host: build the same graph for the CPU "
               "(graph::build(g, Target::host(), options)) and call run_debug there, or compare this module's "
               "get_output_host() with the CPU module's outputs");
    s.check_allocated("run_debug");
    const Graph& g = s.graph;
    // With symbolic dimensions, at the sizes of the inputs set: each node's reference is
    // compiled for those sizes (constant extents), from the graph made at them where kernels
    // are compiled per size (its nodes are the module's), else from the fitted shapes.
    std::optional<detail::SymbolicShapes> fixed;
    std::optional<Graph> made;
    if (!s.symbolic.empty()) {
        detail::symbol_values_of_inputs(s, s.requested_values);
        detail::bind_symbols(s, s.requested_values);
        if (s.bound_sizes) made = s.size_compiler->graph_at(s.symbol_values);
        else fixed = s.symbolic.at_values(s.symbol_values);
    }
    const Graph& ref_graph = made ? *made : g;
    auto shape_of = [&](int id) {
        return fixed ? fixed->shape_at(g, id, s.symbol_values) : ref_graph.node(id).type.shape;
    };
    DebugReport report;
    auto differs = [&](double got, double want) {
        if (std::isnan(got) || std::isnan(want)) return std::isnan(got) != std::isnan(want);
        if (std::isinf(want) || std::isinf(got)) return got != want;
        return std::abs(got - want) > options.atol + options.rtol * std::abs(want);
    };
    for (size_t k = 0; k < s.kernels.size(); ++k) {
        if (!s.needed(k)) continue;  // a branch not taken (graph/impl/guards.hpp)
        const FusedGroup& group = s.groups[k];
        // The buffers the group reads from outside itself, copied before the kernel runs (an
        // in-place kernel overwrites one of them).
        std::map<int, BufferRef> ref;
        for (int id : group.nodes)
            for (Value v : g.node(id).inputs)
                if (std::find(group.nodes.begin(), group.nodes.end(), v.id) == group.nodes.end() && !ref.count(v.id))
                    ref[v.id] = debug_detail::copy_of(s.values[size_t(v.id)]);
        s.run_kernel(k);
        ++report.kernels_checked;
        // The group's nodes one by one.
        for (int id : group.nodes) {
            OpPattern p = op_def(g.node(id).op).pattern;
            FusedGroup single{{id}, int(p) >= int(OpPattern::CommReduce) ? id : -1, p};
            detail::CompiledGroup c = detail::compile_group(ref_graph, single, s.target, {}, fixed ? &*fixed : nullptr);
            ref[id] = BufferRef::allocate(g.node(id).type.dtype, shape_of(id));
            std::vector<KernelArgValue> args;
            for (int a : c.args) args.emplace_back(ref.at(a));
            c.kernel.call(std::span<const KernelArgValue>(args.data(), args.size()));
        }
        const BufferRef& got = s.values[size_t(group.root())];
        const BufferRef& want = ref.at(group.root());
        int64_t worst = -1, count = 0;
        double worst_excess = -1;
        for (int64_t i = 0; i < got.size(); ++i) {
            double a = debug_detail::element(got, i), b = debug_detail::element(want, i);
            if (!differs(a, b)) continue;
            ++count;
            double excess = std::isnan(a - b) ? 1e300 : std::abs(a - b);
            if (excess > worst_excess) worst_excess = excess, worst = i;
        }
        if (count == 0) continue;
        report.ok = false;
        report.kernel = int(k);
        report.kernel_name = s.infos[k].name;
        report.nodes = group.nodes;
        for (int id : group.nodes) report.node_names.push_back(g.node(id).name);
        report.elements = got.size();
        report.mismatches = count;
        report.index = worst;
        report.fused = debug_detail::element(got, worst);
        report.reference = debug_detail::element(want, worst);
        report.max_abs_error = std::abs(report.fused - report.reference);
        int64_t rest = worst;
        report.position.assign(got.shape().size(), 0);
        for (size_t d = got.shape().size(); d-- > 0;) {
            report.position[d] = rest % got.shape()[d];
            rest /= got.shape()[d];
        }
        if (options.throw_on_mismatch)
            ::weft::detail::throw_user_error("graph::Module::run_debug: " + report.str() + " (tolerance: atol " +
                                             debug_detail::format_number(options.atol) + " + rtol " +
                                             debug_detail::format_number(options.rtol) + " * |reference|)");
        return report;
    }
    s.enforce_checks();
    return report;
}

}  // namespace weft::graph

// An artifact's symbolic dimensions (graph/impl/symbolic.hpp): the symbols, where the inputs
// hold them, each node's extents and changing attributes as sums of products of the symbols,
// and how each kernel runs on a symbol's samples. The loader checks every extent against the
// node's type at the symbols' max and against overflow and negative sizes anywhere in the
// bounds, and rebuilds the kernels' signatures from them (none is stored).
#pragma once
#include "weft/codegen/llvm/codegen_llvm.hpp"
#include "weft/graph/impl/artifact_encoding.hpp"
#include "weft/graph/impl/compile_group.hpp"

namespace weft::graph::detail {

inline void write_symbolic_dim(ArtifactWriter& w, const SymbolicDim& d) {
    w.u32(uint32_t(d.terms.size()));
    for (auto& [mask, c] : d.terms) {
        w.u32(mask);
        w.i64(c);
    }
    w.u32(uint32_t(d.floors.size()));
    for (const FloorTerm& f : d.floors) {
        w.u32(f.symbol);
        for (int64_t x : {f.scale, f.num, f.offset, f.den}) w.i64(x);
    }
}

inline void write_symbolic(ArtifactWriter& w, const SymbolicShapes& sym, const Graph& g) {
    w.u8(sym.empty() ? 0 : 1);
    if (sym.empty()) return;
    w.u32(uint32_t(sym.symbols.size()));
    for (const Symbol& s : sym.symbols) {
        w.str(s.name);
        w.i64(s.max);
        w.i64(s.min);
    }
    w.u32(uint32_t(sym.axes.size()));
    for (const SymbolicAxis& a : sym.axes) {
        w.str(a.input);
        w.i64(a.axis);
        w.str(a.symbol);
    }
    for (int id = 0; id < g.size(); ++id) {
        w.u32(uint32_t(sym.dims[size_t(id)].size()));
        for (const SymbolicDim& d : sym.dims[size_t(id)]) write_symbolic_dim(w, d);
        w.u8(sym.attrs_vary[size_t(id)]);
        w.u32(uint32_t(sym.attrs[size_t(id)].size()));
        for (auto& [key, entries] : sym.attrs[size_t(id)]) {
            w.str(key);
            w.u32(uint32_t(entries.size()));
            for (const SymbolicDim& d : entries) write_symbolic_dim(w, d);
        }
    }
}

inline void write_sample_run(ArtifactWriter& w, const SampleRun& run) {
    w.i32(run.symbol);
    w.i64(run.per_call);
    w.i64(run.at_least);
}

// The extent at every corner of the symbols' bounds (a multilinear function takes its
// extremes there), with overflow checked: never negative, and `at_max` at the max.
inline bool symbolic_dim_fits(const SymbolicDim& d, const std::vector<Symbol>& symbols, int64_t at_max) {
    const size_t k = symbols.size();
    for (uint32_t corner = 0; corner < (1u << k); ++corner) {
        int64_t sum = 0;
        for (auto& [mask, c] : d.terms) {
            int64_t t = c;
            for (size_t s = 0; s < k; ++s)
                if ((mask >> s & 1) && __builtin_mul_overflow(t, corner >> s & 1 ? symbols[s].min : symbols[s].max, &t))
                    return false;
            if (__builtin_add_overflow(sum, t, &sum)) return false;
        }
        for (const FloorTerm& f : d.floors) {  // nondecreasing (read_symbolic_dim checked)
            int64_t x = 0, t = 0;
            const int64_t v = corner >> f.symbol & 1 ? symbols[f.symbol].min : symbols[f.symbol].max;
            if (__builtin_mul_overflow(f.num, v, &x) || __builtin_add_overflow(x, f.offset, &x) ||
                __builtin_mul_overflow(f.scale, floor_div(x, f.den), &t) || __builtin_add_overflow(sum, t, &sum))
                return false;
        }
        if (sum < 0 || (corner == 0 && sum != at_max)) return false;
    }
    return true;
}

inline SymbolicDim read_symbolic_dim(ArtifactReader& r, size_t symbols, const char* what) {
    SymbolicDim d;
    for (size_t t = 0, n = r.count(what, 12); t < n; ++t) {
        const uint32_t mask = r.u32(what);
        if (mask >> symbols) r.fail(::weft::detail::concat(what, ": a term names symbol bits ", mask, " of ", symbols));
        d.terms.emplace_back(mask, r.i64(what));
    }
    for (size_t t = 0, n = r.count(what, 36); t < n; ++t) {
        FloorTerm f;
        f.symbol = r.u32(what);
        f.scale = r.i64(what);
        f.num = r.i64(what);
        f.offset = r.i64(what);
        f.den = r.i64(what);
        if (f.symbol >= symbols || f.scale < 1 || f.num < 1 || f.den < 1 || f.den > kMaxFloorDen || f.offset < 0 ||
            f.offset >= f.den)
            r.fail(::weft::detail::concat(what, ": a floor term that build() does not make"));
        d.floors.push_back(f);
    }
    return d;
}

// The section write_symbolic wrote, for the graph `g` the loader rebuilt (new_id: saved id ->
// its id in g), checked against it.
inline SymbolicShapes read_symbolic(ArtifactReader& r, const Graph& g, const std::vector<int>& new_id) {
    SymbolicShapes sym;
    if (r.u8("the symbolic dimensions") == 0) return sym;
    const size_t k = r.count("the symbols", 20);
    if (k == 0 || k > kMaxSymbols) r.fail(::weft::detail::concat("the module has ", k, " symbols"));
    for (size_t s = 0; s < k; ++s) {
        Symbol symbol{r.str("a symbol"), r.i64("a symbol"), 0};
        symbol.min = r.i64("a symbol");
        if (symbol.name.empty() || symbol.min < 1 || symbol.max < symbol.min || symbol.max > g.limits().max_tensor_elements)
            r.fail("symbol '" + symbol.name + "' has bounds that no graph::Symbol has");
        for (const Symbol& other : sym.symbols)
            if (other.name == symbol.name) r.fail("two symbols are named '" + symbol.name + "'");
        sym.symbols.push_back(symbol);
        sym.vars.push_back(Var::sized(symbol.name, symbol.max));
        sym.symbol_exprs.push_back(sym.vars.back());
    }
    for (size_t a = 0, n = r.count("the symbolic axes", 16); a < n; ++a) {
        SymbolicAxis axis{r.str("a symbolic axis"), r.i64("a symbolic axis"), r.str("a symbolic axis")};
        std::optional<Value> input = g.find(axis.input);
        auto symbol = std::find_if(sym.symbols.begin(), sym.symbols.end(), [&](auto& s) { return s.name == axis.symbol; });
        if (!input || !g.node(*input).is_input() || symbol == sym.symbols.end() || axis.axis < 0 ||
            axis.axis >= int64_t(g.type(*input).shape.size()) || g.type(*input).shape[size_t(axis.axis)] != symbol->max)
            r.fail("a symbolic axis of input '" + axis.input + "' does not fit the graph");
        sym.axes.push_back(std::move(axis));
    }
    const int n = g.size();
    sym.dims.assign(size_t(n), {});
    sym.attrs.assign(size_t(n), {});
    sym.attrs_vary.assign(size_t(n), false);
    for (int saved = 0; saved < n; ++saved) {
        const int id = new_id[size_t(saved)];
        const Node& node = g.node(id);
        const size_t rank = r.count("a node's symbolic extents", 4);
        if (rank != 0 && rank != node.type.shape.size())
            r.fail("node '" + node.name + "' has symbolic extents of another rank than its type's");
        for (size_t d = 0; d < rank; ++d) {
            SymbolicDim dim = read_symbolic_dim(r, k, "a symbolic extent");
            if (!symbolic_dim_fits(dim, sym.symbols, node.type.shape[d]))
                r.fail("node '" + node.name + "': a symbolic extent does not give its type at the symbols' max, or "
                       "overflows or is negative within their bounds");
            sym.dims[size_t(id)].push_back(std::move(dim));
        }
        sym.attrs_vary[size_t(id)] = r.u8("a node's symbolic attributes") != 0;
        for (size_t a = 0, na = r.count("a node's symbolic attributes", 8); a < na; ++a) {
            const std::string key = r.str("a symbolic attribute");
            const std::vector<int64_t> at_max =
                node.attrs.has(key) ? int_entries(node.attrs.items().at(key)) : std::vector<int64_t>{};
            const size_t entries = r.count("a symbolic attribute", 4);
            if (entries != at_max.size()) r.fail("node '" + node.name + "': symbolic attribute '" + key + "' does not fit");
            std::vector<SymbolicDim>& out = sym.attrs[size_t(id)][key];
            for (size_t e = 0; e < entries; ++e) {
                out.push_back(read_symbolic_dim(r, k, "a symbolic attribute"));
                if (!out.back().floors.empty()) r.fail("node '" + node.name + "': symbolic attribute '" + key + "' has a floor term");
                int64_t value = 0;
                bool overflow = false;
                std::vector<int64_t> max_values;
                for (const Symbol& s : sym.symbols) max_values.push_back(s.max);
                for (auto& [mask, c] : out.back().terms) {
                    int64_t t = c;
                    for (size_t s = 0; s < k; ++s)
                        if (mask >> s & 1) overflow |= __builtin_mul_overflow(t, max_values[s], &t);
                    overflow |= __builtin_add_overflow(value, t, &value);
                }
                if (overflow || value != at_max[e])
                    r.fail("node '" + node.name + "': symbolic attribute '" + key + "' does not give its value");
            }
        }
    }
    sym.collect_derived();
    return sym;
}

inline SampleRun read_sample_run(ArtifactReader& r, const Graph& g, const SymbolicShapes& sym,
                                 const std::vector<int>& arg_ids) {
    SampleRun run;
    run.symbol = r.i32("a kernel's samples");
    run.per_call = r.i64("a kernel's samples");
    run.at_least = r.i64("a kernel's samples");
    if (run.symbol < 0) {
        if (run.symbol != -1 || run.per_call || run.at_least) r.fail("a kernel's samples are not a SampleRun");
        return run;
    }
    if (size_t(run.symbol) >= sym.symbols.size()) r.fail("a kernel runs per sample of an unknown symbol");
    const int64_t max = sym.symbols[size_t(run.symbol)].max;
    if (run.per_call < 0 || run.per_call > max || run.at_least < 0 || run.at_least > max ||
        (run.per_call > 0) == (run.at_least > 0))
        r.fail("a kernel's samples are not a SampleRun");
    std::vector<int> tensors;
    for (int id : arg_ids)
        if (id >= 0) tensors.push_back(id);
    // Views of its samples stay inside each tensor's storage only where every tensor that
    // depends on the symbols has a multiple of it as its first dimension.
    if (per_sample_symbol(g, sym, tensors) != run.symbol)
        r.fail("a kernel runs per sample, but its tensors are not samples of the symbol");
    return run;
}


// A kernel's object code as stored (its symbol and bytes), checked against the hash saved
// with its signature and linked for `target`.
inline std::shared_ptr<const KernelModule> read_object_code(ArtifactReader& r, const std::string& kernel,
                                                            uint64_t hash, const Target& target) {
    ObjectCode object;
    object.symbol = r.str("a kernel's object code");
    object.bytes = r.str("a kernel's object code");
    if (::weft::detail::fnv1a64(object.bytes) != hash)
        r.fail("kernel '" + kernel + "': its object code does not match the hash saved with its signature "
               "(another kernel's object, or a corrupt one)");
    return codegen::load_llvm_object(object, kernel, target);
}

// A kernel argument: its name and dtype, a static module's shape (a symbolic one's follows
// from the symbolic section), whether the kernel writes it and over which inputs.
inline void write_kernel_arg(ArtifactWriter& w, const ir::KernelArg& a, const std::string& kernel, bool symbolic) {
    WEFT_CHECK(symbolic || a.kind == ir::KernelArg::Kind::Tensor, "graph::save: kernel ", kernel,
               " takes a scalar argument '", a.name, "'; artifacts hold graph kernels, which take tensors");
    w.str(a.name);
    w.dtype(a.type);
    if (!symbolic) {
        std::vector<int64_t> shape;
        for (const ir::Expr& e : a.shape) {
            const auto* imm = e.as<ir::IntImm>();
            WEFT_CHECK(imm != nullptr, "graph::save: kernel ", kernel, " argument '", a.name,
                       "' has a symbolic shape; artifacts hold graph kernels, whose shapes are static");
            shape.push_back(imm->value);
        }
        w.shape(shape);
    }
    w.u8(a.is_output);
    w.ints(a.may_overwrite);
}

// What write_kernel_arg wrote, for argument a of kernel `kernel` (arg_ids[a]: its node, or
// -1 - s for symbol s, a scalar), checked against the graph; a symbolic module's shapes from
// `shapes` (the symbols' expressions the kernel was compiled for).
inline ir::KernelArg read_kernel_arg(ArtifactReader& r, const Graph& g, const SymbolicShapes& sym,
                                     const SymbolicShapes& shapes, const std::vector<int>& arg_ids, size_t a,
                                     const std::string& kernel) {
    const size_t nargs = arg_ids.size();
    ir::KernelArg arg;
    arg.kind = ir::KernelArg::Kind::Tensor;
    arg.name = r.str("a kernel argument");
    arg.var = Var(arg.name, DataType::handle());
    arg.type = r.dtype("a kernel argument");
    const int id = arg_ids[a];
    if (id >= 0 && arg.type != g.node(id).type.dtype)
        r.fail("kernel '" + kernel + "': argument '" + arg.name + "' does not have its node's type");
    if (id >= 0 && sym.empty()) {
        std::vector<int64_t> shape = r.shape("a kernel argument");
        if (TensorType{shape, arg.type} != g.node(id).type)
            r.fail("kernel '" + kernel + "': argument '" + arg.name + "' does not have its node's type");
        for (int64_t d : shape) arg.shape.push_back(make_int(d));
    } else if (id >= 0) {
        arg.shape = shapes.shape_expr(g, id);
    }
    arg.is_output = r.u8("a kernel argument") != 0;
    arg.may_overwrite = r.ids("a kernel argument's in-place inputs", 0, int(nargs));
    if (arg.is_output != (a + 1 == nargs) || (!arg.is_output && !arg.may_overwrite.empty()))
        r.fail("kernel '" + kernel + "': argument '" + arg.name + "': only the last argument is written");
    if (id < 0) {  // a symbol's value, or a derived term's
        const bool base = SymbolicShapes::is_base_id(id);
        if ((base && size_t(-1 - id) >= sym.symbols.size()) ||
            (!base && size_t(SymbolicShapes::derived_id(0) - id) >= sym.derived.size()))
            r.fail("kernel '" + kernel + "': argument '" + arg.name + "' is no symbol of the module");
        const Var v = sym.scalar_var(id);
        if (arg.type != index_type || arg.name != v.name() || arg.is_output)
            r.fail("kernel '" + kernel + "': argument '" + arg.name + "' is not symbol " + v.name());
        arg.kind = ir::KernelArg::Kind::Scalar;
        arg.var = v;
    }
    return arg;
}

// A kernel's variant for large sizes (CompiledGroup::large): whether there is one, then its
// name, its arguments' names, dtypes and writes (the same arguments as the kernel's; their
// shapes follow from the symbolic section), and its object code, always whole.
inline void write_large_variant(ArtifactWriter& w, const Kernel& large) {
    w.u8(large.defined());
    if (!large.defined()) return;
    const ir::PrimFunc& f = large.signature();
    w.str(f.name);
    w.u8(f.fast_math);
    w.u32(uint32_t(f.args.size()));
    for (const ir::KernelArg& a : f.args) write_kernel_arg(w, a, f.name, true);
    ObjectCode object = large.module()->object_code();
    WEFT_CHECK(!object.bytes.empty(), "graph::save: kernel ", f.name, " has no object code to save");
    w.pod(::weft::detail::fnv1a64(object.bytes));
    w.str(object.symbol);
    w.str(object.bytes);
}

inline Kernel read_large_variant(ArtifactReader& r, const Graph& g, const SymbolicShapes& sym,
                                 const std::vector<int>& arg_ids, const Target& target) {
    if (r.u8("a kernel's large-size variant") == 0) return Kernel();
    ir::PrimFunc f;
    f.name = r.str("a large-size variant");
    f.fast_math = r.u8("a large-size variant") != 0;
    if (r.count("a large-size variant", 16) != arg_ids.size())
        r.fail("kernel '" + f.name + "': its large-size variant does not take the kernel's arguments");
    const std::optional<SymbolicShapes> shapes = large_variant_shapes(sym, arg_ids);
    if (!shapes)
        r.fail("kernel '" + f.name + "' has a large-size variant, but no symbol it takes reaches " +
               std::to_string(kAssumedExtent));
    for (size_t a = 0; a < arg_ids.size(); ++a) f.args.push_back(read_kernel_arg(r, g, sym, *shapes, arg_ids, a, f.name));
    const uint64_t hash = r.pod<uint64_t>("a large-size variant's object hash");
    std::shared_ptr<const KernelModule> module = read_object_code(r, f.name, hash, target);
    return Kernel(std::move(module), std::move(f));
}

}  // namespace weft::graph::detail

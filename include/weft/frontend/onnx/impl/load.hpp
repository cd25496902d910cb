// The ONNX importer: a ModelProto read by Debian's ONNX protobuf classes becomes a
// graph::Graph (initializers as constants, inputs with their shapes, one converter per node).
#pragma once
#include <new>
#include <set>

#include "weft/frontend/onnx/impl/ops.hpp"
#include "weft/frontend/onnx/impl/ops_empty.hpp"
#include "weft/graph/module.hpp"
#include "weft/runtime/bytes.hpp"

namespace weft::onnx::detail {

inline BufferRef copy_buffer(const BufferRef& b) {
    WEFT_ICHECK(b.is_compact(), "copy_buffer of a strided buffer");
    BufferRef r = BufferRef::allocate(b.dtype(), b.shape());
    if (b.size_bytes()) std::memcpy(r.data(), b.data(), size_t(b.size_bytes()));
    return r;
}

// The bytes of an .onnx (or TensorProto) file, up to options.max_file_bytes.
// The file's bytes, mapped (no copy) where it is a regular file.
inline std::shared_ptr<const ::weft::detail::FileBytes> read_model_file(const std::string& path,
                                                                         const LoadOptions& options) {
    return ::weft::detail::FileBytes::open(path, options.max_file_bytes, "onnx", "LoadOptions::max_file_bytes");
}

inline void parse_model(pb::ModelProto& m, const void* data, size_t size, const std::string& what) {
    if (size > size_t(std::numeric_limits<int>::max())) unsupported(what + " is larger than 2 GiB");
    if (!m.ParseFromArray(data, int(size)))
        malformed(what + " is not a valid ONNX model (the protobuf does not parse: truncated or corrupt)");
}

inline int default_opset(const pb::ModelProto& m) {
    int opset = 0;
    for (const pb::OperatorSetIdProto& o : m.opset_import())
        if (o.domain().empty() || o.domain() == "ai.onnx") opset = int(std::clamp<int64_t>(o.version(), 0, 1 << 20));
    return opset;
}

class Importer {
    // ONNX names in one graph: the model's, or a subgraph's (If, Loop, Scan) being converted.
    // Sequences are lists of values known at import (ops_sequence.hpp).
    struct Scope {
        std::map<std::string, Value> values;
        std::map<std::string, std::vector<Value>> sequences;
    };

public:
    Importer(const pb::ModelProto& m, const LoadOptions& o) : model_(m), opt_(o) { g_.set_limits(o.limits); }

    graph::Graph run() {
        const pb::GraphProto& gp = model_.graph();
        opset_ = default_opset(model_);
        if (gp.sparse_initializer_size()) unsupported("sparse initializers are not supported");
        std::set<std::string> inits;
        for (const pb::TensorProto& t : gp.initializer()) {
            const std::string& name = t.name();
            if (name.empty()) malformed("an initializer has no name");
            if (root_.values.count(name)) malformed("two initializers are named '" + name + "'");
            BufferRef b = tensor_to_buffer(t, opt_.limits.max_tensor_elements, "initializer '" + name + "'");
            if (is_narrow(t.data_type())) narrow_[name] = t.data_type();
            if (b.size() == 0) {  // e.g. an empty axes list: held aside, read as an omitted input
                empty_[name] = graph::TensorType{std::vector<int64_t>(t.dims().begin(), t.dims().end()),
                                                 to_dtype(t.data_type(), "initializer '" + name + "'")};
                root_.values[name] = Value{};
            } else {
                root_.values[name] = add_constant(g_, rank0_, name, b);
            }
            inits.insert(name);
        }
        std::set<std::string> input_names;
        for (const pb::ValueInfoProto& vi : gp.input())
            if (!inits.count(vi.name())) input_names.insert(vi.name());  // IR < 4 lists initializers as inputs too
        auto check_names = [&](const auto& map, const char* what) {
            for (const auto& [name, value] : map)
                if (!input_names.count(name))
                    throw Error(std::string("weft: onnx: LoadOptions::") + what + " names '" + name +
                                "', which is not an input of the model");
        };
        check_names(opt_.constant_inputs, "constant_inputs");
        check_names(opt_.input_shapes, "input_shapes");
        for (const pb::ValueInfoProto& vi : gp.input())
            if (!inits.count(vi.name())) add_input(vi);
        for (const pb::NodeProto& n : gp.node()) convert(n);
        for (const pb::ValueInfoProto& vi : gp.output()) {
            auto it = root_.values.find(vi.name());
            if (it == root_.values.end()) malformed("the graph output '" + vi.name() + "' is not computed by any node");
            if (!it->second.defined())
                unsupported("the graph output '" + vi.name() + "' is an output the importer does not compute (" +
                            producer_[vi.name()] + ")");
            if (vi.has_type() && vi.type().has_tensor_type() && vi.type().tensor_type().elem_type() != 0) {
                DataType want = to_dtype(vi.type().tensor_type().elem_type(), "the graph output '" + vi.name() + "'");
                if (want != g_.type(it->second).dtype)
                    malformed("the graph output '" + vi.name() + "' is declared " + want.str() + " but computes " +
                              g_.type(it->second).str());
            }
            g_.output(it->second, vi.name());
        }
        return std::move(g_);
    }

private:
    void add_input(const pb::ValueInfoProto& vi) {
        const std::string& name = vi.name();
        const std::string what = "the graph input '" + name + "'";
        if (name.empty()) malformed("a graph input has no name");
        if (root_.values.count(name)) malformed("two graph inputs are named '" + name + "'");
        if (!vi.has_type() || !vi.type().has_tensor_type())
            unsupported(what + " is not a tensor (sequences, maps and optionals are not supported)");
        const pb::TypeProto_Tensor& tt = vi.type().tensor_type();
        DataType dt = to_dtype(tt.elem_type(), what);
        if (is_narrow(tt.elem_type())) narrow_[name] = tt.elem_type();
        if (auto frozen = opt_.constant_inputs.find(name); frozen != opt_.constant_inputs.end()) {
            const BufferRef& b = frozen->second;
            const std::optional<std::vector<int64_t>> declared = static_shape(tt);
            // An empty value (an undefined BufferRef) has no shape to compare: it fits an input
            // that may have no elements.
            bool fits = b.size() == 0 ? !declared || std::find(declared->begin(), declared->end(), 0) != declared->end()
                                      : b.dtype() == dt && b.is_compact();
            if (fits && tt.has_shape() && b.size() != 0) {
                fits = b.shape().size() == size_t(tt.shape().dim_size());
                for (size_t k = 0; fits && k < b.shape().size(); ++k) {
                    const pb::TensorShapeProto_Dimension& d = tt.shape().dim(int(k));
                    fits = !d.has_dim_value() || d.dim_value() == b.shape()[k];
                }
            }
            if (!fits)
                throw Error("weft: onnx: LoadOptions::constant_inputs gives " + what + " a " + b.dtype().str() +
                            graph::shape_str(b.shape()) + " value, which does not fit the model's " + dt.str() +
                            " input of rank " + std::to_string(tt.has_shape() ? tt.shape().dim_size() : -1));
            if (b.size() == 0) {
                empty_[name] = declared ? std::optional<graph::TensorType>(graph::TensorType{*declared, dt}) : std::nullopt;
                root_.values[name] = Value{};
            } else {
                root_.values[name] = add_constant(g_, rank0_, name, copy_buffer(b));
            }
            return;
        }
        auto over = opt_.input_shapes.find(name);
        std::vector<int64_t> shape;
        std::vector<std::pair<int, graph::Symbol>> symbolic;  // (axis, symbol) kept symbolic
        if (tt.has_shape()) {
            for (int k = 0; k < tt.shape().dim_size(); ++k) {
                const pb::TensorShapeProto_Dimension& d = tt.shape().dim(k);
                int64_t v = -1;
                std::string sym = d.has_dim_param() ? d.dim_param() : "";
                if (d.has_dim_value()) v = d.dim_value();
                else if (!sym.empty() && opt_.dim_values.count(sym)) v = opt_.dim_values.at(sym);
                else if (const graph::Symbol* s = find_symbol(sym)) {
                    v = s->max;
                    symbolic.emplace_back(k, *s);
                }
                if (over != opt_.input_shapes.end()) {
                    const std::vector<int64_t>& o = over->second;
                    if (o.size() != size_t(tt.shape().dim_size()))
                        throw Error("weft: onnx: LoadOptions::input_shapes gives " + what + " the shape " +
                                    graph::shape_str(o) + " of rank " + std::to_string(o.size()) +
                                    ", but the model's has rank " + std::to_string(tt.shape().dim_size()));
                    if (d.has_dim_value() && d.dim_value() != o[size_t(k)])
                        throw Error("weft: onnx: LoadOptions::input_shapes gives " + what + " extent " +
                                    std::to_string(o[size_t(k)]) + " in dimension " + std::to_string(k) +
                                    ", which the model fixes at " + std::to_string(d.dim_value()));
                    v = o[size_t(k)];
                }
                if (v < 0)
                    throw UnsupportedError("weft: onnx: " + what + " has a symbolic dimension " +
                                           (sym.empty() ? std::string("(unnamed)") : "'" + sym + "'") + " (dimension " +
                                           std::to_string(k) +
                                           "); give its value in LoadOptions::input_shapes or LoadOptions::dim_values, or its bound in "
                                           "LoadOptions::symbols to keep it symbolic");
                shape.push_back(v);
            }
        } else if (over != opt_.input_shapes.end()) {
            shape = over->second;
        } else {
            throw UnsupportedError("weft: onnx: " + what + " has no shape; give one in LoadOptions::input_shapes");
        }
        checked_elements(shape, opt_.limits.max_tensor_elements, what);
        if (std::find(shape.begin(), shape.end(), 0) != shape.end()) {
            // No values to pass: an empty value of the importer, not an input of the module.
            empty_[name] = graph::TensorType{shape, dt};
            producer_[name] = "an empty tensor, which weft's graphs do not output";
            root_.values[name] = Value{};
            return;
        }
        bool scalar = shape.empty();
        root_.values[name] = g_.input(name, scalar ? std::vector<int64_t>{1} : shape, dt);
        if (scalar) rank0_.insert(root_.values[name].id);
        if (over == opt_.input_shapes.end())
            for (auto& [axis, s] : symbolic) g_.set_symbolic(root_.values[name], axis, s);
    }

    const graph::Symbol* find_symbol(const std::string& name) const {
        for (const graph::Symbol& s : opt_.symbols)
            if (!name.empty() && s.name == name) return &s;
        return nullptr;
    }

    void convert(const pb::NodeProto& n) {
        const std::string label = "node '" + (n.name().empty() ? (n.output_size() ? n.output(0) : std::string("?"))
                                                                : n.name()) +
                                  "' (" + (n.domain().empty() ? "" : n.domain() + ":") + n.op_type() + ", opset " +
                                  std::to_string(opset_) + "): ";
        try {
            if (!n.domain().empty() && n.domain() != "ai.onnx")
                unsupported("operators of the domain '" + n.domain() + "' are not supported");
            auto& table = converters();
            auto it = table.find(n.op_type());
            if (it == table.end()) unsupported("the operator " + n.op_type() + " is not supported");
            if (opset_ < kMinOpset || opset_ > kMaxOpset)
                unsupported("the model imports opset " + std::to_string(opset_) + " of the default domain; weft reads " +
                            std::to_string(kMinOpset) + " to " + std::to_string(kMaxOpset));
            if (opset_ < it->second.since)
                malformed(n.op_type() + " does not exist before opset " + std::to_string(it->second.since));
            Ctx c{g_, n, opset_, {}, [this](Value v) { return evaluate(v); }, opt_.limits.max_tensor_elements, rank0_, {}};
            c.max_loop_iterations = opt_.max_loop_iterations;
            c.empty_ins.resize(size_t(n.input_size()));
            c.empty_types.resize(size_t(n.input_size()));
            for (const std::string& in : n.input()) {
                auto narrow = narrow_.find(in);
                c.narrow_ins.push_back(narrow == narrow_.end() ? 0 : narrow->second);
                auto empty = empty_.find(in);
                if (in.empty() || empty != empty_.end()) {
                    if (!in.empty()) {
                        c.empty_ins[c.ins.size()] = 1;
                        c.empty_types[c.ins.size()] = empty->second;
                    }
                    c.ins.push_back(Value{});
                    continue;
                }
                if (const std::vector<Value>* sq = lookup_sequence(in)) {
                    c.seq_ins[c.ins.size()] = *sq;
                    c.ins.push_back(Value{});
                    continue;
                }
                const Value* v = lookup(in);
                if (!v) malformed("the input '" + in + "' is not defined before this node");
                if (!v->defined())
                    unsupported("the input '" + in + "' is an output the importer does not compute (" + producer_[in] + ")");
                c.ins.push_back(*v);
            }
            c.suffixes = &suffixes_;
            c.inline_graph = [this](const pb::GraphProto& gp, const std::vector<Value>& bound) {
                return inline_graph(gp, bound);
            };
            c.import_body = [this](const pb::GraphProto& gp, const std::vector<BodyInput>& inputs,
                                   const std::function<void(const std::vector<Value>&)>& finish) {
                return import_body(gp, inputs, finish);
            };
            const DataType half = widen_half_inputs(c);
            std::vector<Value> outs;
            if (!convert_empty_elementwise(c, n.op_type())) outs = it->second.convert(c);
            if (std::string unread = c.unread_error(); !unread.empty()) unsupported(unread);
            narrow_half_outputs(c, half, outs);
            // An element-wise result of scalars is a scalar.
            bool all_scalar = !c.ins.empty();
            for (Value v : c.ins) all_scalar = all_scalar && v.defined() && rank0_.count(v.id);
            if (all_scalar)
                for (Value v : outs)
                    if (v.defined() && g_.type(v).shape == std::vector<int64_t>{1}) rank0_.insert(v.id);
            for (int k = 0; k < n.output_size(); ++k) {
                const std::string& name = n.output(k);
                if (name.empty()) continue;
                Scope& scope = scopes_.empty() ? root_ : scopes_.back();
                if (scope.values.count(name)) malformed("the value '" + name + "' is defined twice");
                if (auto narrow = c.narrow_outs.find(size_t(k)); narrow != c.narrow_outs.end()) narrow_[name] = narrow->second;
                else narrow_.erase(name);
                scope.values[name] = size_t(k) < outs.size() ? outs[size_t(k)] : Value{};
                if (size_t(k) < c.empty_outs.size() && c.empty_outs[size_t(k)]) {
                    auto t = c.empty_out_types.find(size_t(k));
                    empty_[name] = t == c.empty_out_types.end() ? std::nullopt : std::optional<graph::TensorType>(t->second);
                    producer_[name] = "an empty tensor, which weft's graphs do not output";
                    continue;
                }
                if (auto sq = c.seq_outs.find(size_t(k)); sq != c.seq_outs.end()) {
                    scope.sequences[name] = sq->second;
                    producer_[name] = "a sequence, which weft's graphs do not output";
                    continue;
                }
                if (!scope.values[name].defined()) producer_[name] = "output " + std::to_string(k) + " of " + label.substr(0, label.size() - 2);
            }
        } catch (const InternalError& e) {
            ::weft::detail::rethrow_with_context(e, "onnx: " + label.substr(0, label.size() - 2));
        } catch (const Error& e) {  // a user error or UnsupportedError: the same kind, the node named
            e.rethrow_with("weft: onnx: " + label + strip_prefix(e.what()));
        } catch (const std::bad_alloc&) {
            throw Error("weft: onnx: " + label + "out of memory");
        } catch (const std::exception& e) {
            throw Error("weft: onnx: " + label + e.what());
        }
    }

    // The value (or sequence) named `name`: the innermost subgraph scope's first, then the
    // main graph's.
    template <class T>
    static const T* innermost(const std::vector<Scope>& scopes, const Scope& root, const std::string& name,
                              std::map<std::string, T> Scope::*table) {
        for (auto scope = scopes.rbegin(); scope != scopes.rend(); ++scope)
            if (auto it = ((*scope).*table).find(name); it != ((*scope).*table).end()) return &it->second;
        auto it = (root.*table).find(name);
        return it == (root.*table).end() ? nullptr : &it->second;
    }
    // Whether `name` is defined in a scope of the loop body being converted (import_body).
    template <class T>
    bool in_body(const std::string& name, std::map<std::string, T> Scope::*table) const {
        for (size_t s = body_scope_; s < scopes_.size(); ++s)
            if ((scopes_[s].*table).count(name)) return true;
        return false;
    }
    // While a loop's body is converted (import_body), a value of the graph around it becomes
    // the body's: a constant copied in, anything else a captured input (Graph::loop).
    const Value* lookup(const std::string& name) {
        const Value* v = innermost(scopes_, root_, name, &Scope::values);
        if (!v || !outer_ || !v->defined() || in_body(name, &Scope::values)) return v;
        const graph::Node& n = outer_->g.node(*v);
        Value inner;
        if (n.is_constant()) {
            inner = g_.constant_shared(unique_name(n.name), n.value);
        } else {
            inner = g_.input(graph::detail::loop_captured_name(captured_.size()), n.type.shape, n.type.dtype);
            captured_.push_back(*v);
        }
        if (outer_->rank0.count(v->id)) rank0_.insert(inner.id);
        return &(scopes_[body_scope_].values[name] = inner);
    }
    const std::vector<Value>* lookup_sequence(const std::string& name) const {
        const std::vector<Value>* sq = innermost(scopes_, root_, name, &Scope::sequences);
        if (sq && outer_ && !in_body(name, &Scope::sequences))
            unsupported("a loop's body that reads the sequence '" + name + "' from around it");
        return sq;
    }

    // A Loop's body converted into a graph of its own (Ctx::import_body): its inputs `inputs`
    // (names and types, scalars marked), its ONNX outputs handed to `finish` while the body
    // is the graph being built. The graph's state keyed by node ids is the body's meanwhile.
    BodyImport import_body(const pb::GraphProto& gp, const std::vector<BodyInput>& inputs,
                           const std::function<void(const std::vector<Value>&)>& finish) {
        if (outer_) unsupported("a loop inside a loop's body runs unrolled");
        if (size_t(gp.input_size()) != inputs.size())
            malformed("a subgraph with " + std::to_string(gp.input_size()) + " inputs given " + std::to_string(inputs.size()));
        GraphState outer;  // (empty: swapped in as the body's state, it keeps the graph around)
        outer.g.set_limits(g_.limits());
        swap_state(outer);
        outer_ = &outer;
        body_scope_ = scopes_.size();
        captured_.clear();
        struct Restore {
            Importer& im;
            GraphState& o;
            size_t scopes;
            ~Restore() {
                im.swap_state(o);
                im.outer_ = nullptr;
                im.scopes_.resize(scopes);
            }
        } restore{*this, outer, scopes_.size()};
        std::vector<Value> bound;  // (inline_graph makes the body's scope and binds them)
        for (const BodyInput& in : inputs) {
            bound.push_back(g_.input(in.name, in.type.shape, in.type.dtype));
            if (in.scalar) rank0_.insert(bound.back().id);
        }
        finish(inline_graph(gp, bound));
        return BodyImport{std::move(g_), std::move(captured_)};
    }

    // A subgraph (If's branch, Loop's body) converted in a scope of its own, its inputs bound to
    // `bound`; the values around it stay visible. Returns its outputs.
    std::vector<Value> inline_graph(const pb::GraphProto& gp, const std::vector<Value>& bound) {
        if (scopes_.size() >= 64) malformed("subgraphs nest deeper than 64");
        // Unrolled loops inside loops multiply: a bound on every subgraph converted, whatever
        // nodes each adds (a body of no nodes adds none for graph::Limits::max_nodes to stop).
        if (++subgraphs_converted_ > kMaxSubgraphConversions)
            unsupported("more than " + std::to_string(kMaxSubgraphConversions) +
                        " subgraph conversions (unrolled Loop / Scan iterations and If branches)");
        if (size_t(gp.input_size()) != bound.size())
            malformed("a subgraph with " + std::to_string(gp.input_size()) + " inputs given " + std::to_string(bound.size()));
        if (gp.sparse_initializer_size()) unsupported("sparse initializers are not supported");
        scopes_.emplace_back();
        struct Pop {
            std::vector<Scope>& s;
            ~Pop() { s.pop_back(); }
        } pop{scopes_};
        for (int k = 0; k < gp.input_size(); ++k) scopes_.back().values[gp.input(k).name()] = bound[size_t(k)];
        for (const pb::TensorProto& t : gp.initializer()) {
            BufferRef b = tensor_to_buffer(t, opt_.limits.max_tensor_elements, "initializer '" + t.name() + "'");
            if (b.size() == 0) unsupported("the empty initializer '" + t.name() + "' of a subgraph");
            scopes_.back().values[t.name()] = add_constant(g_, rank0_, unique_name(t.name()), b);
        }
        for (const pb::NodeProto& n : gp.node()) convert(n);
        std::vector<Value> outs;
        for (const pb::ValueInfoProto& vi : gp.output()) {
            const Value* v = lookup(vi.name());
            if (!v) malformed("the subgraph output '" + vi.name() + "' is not computed by any node");
            if (!v->defined()) unsupported("the subgraph output '" + vi.name() + "' is an output the importer does not compute");
            outs.push_back(*v);
        }
        return outs;
    }

    // float16 and bfloat16 are computed in float32, as ONNX Runtime does on CPUs: a node's
    // 16-bit float inputs are widened (returns their type; float32 when there is none) ...
    DataType widen_half_inputs(Ctx& c) {
        DataType half = DataType::float_(32);
        c.onnx_dtypes.resize(c.ins.size());
        for (size_t k = 0; k < c.ins.size(); ++k) {
            Value& v = c.ins[k];
            if (!v.defined()) continue;
            const DataType t = g_.type(v).dtype;
            c.onnx_dtypes[k] = t;
            if (!t.is_float() || t.bits != 16) continue;
            half = t;
            auto w = widened_.find(v.id);
            if (w == widened_.end()) {
                Value f = g_.cast(v, DataType::float_(32), unique_name(g_.node(v).name + "/float32"));
                if (rank0_.count(v.id)) rank0_.insert(f.id);
                w = widened_.emplace(v.id, f).first;
            }
            v = w->second;
        }
        return half;
    }

    std::string unique_name(const std::string& base) { return unique_graph_name(g_, suffixes_, base); }

    // ... and its float32 results narrowed back, except where the node names its result type
    // (Cast's `to`, CastLike, `dtype`, `output_dtype`).
    void narrow_half_outputs(Ctx& c, DataType half, std::vector<Value>& outs) {
        if (half == DataType::float_(32)) return;
        const std::string& op = c.node.op_type();
        if (op == "Cast" || op == "CastLike" || c.sets_attr("dtype") || c.sets_attr("output_dtype")) return;
        for (size_t k = 0; k < outs.size(); ++k) {
            Value& v = outs[k];
            if (!v.defined() || g_.type(v).dtype != DataType::float_(32)) continue;
            Value n = g_.cast(v, half, unique_name(g_.node(v).name + "/" + half.str()));
            if (rank0_.count(v.id)) rank0_.insert(n.id);
            v = n;
        }
    }

    // The value of v, which depends on constants only: its part of the graph built and run.
    BufferRef evaluate(Value v) {
        auto cached = evaluated_.find(v.id);
        if (cached != evaluated_.end()) return cached->second;
        std::set<int> need;
        std::vector<int> stack{v.id};
        while (!stack.empty()) {
            int id = stack.back();
            stack.pop_back();
            if (!need.insert(id).second) continue;
            const graph::Node& n = g_.node(id);
            if (n.is_input())
                unsupported("a value that must be constant ('" + g_.node(v).name + "') depends on the graph input '" +
                            n.name + "'");
            for (Value in : n.inputs) stack.push_back(in.id);
        }
        graph::Graph sub;
        sub.set_limits(opt_.limits);
        std::map<int, Value> m;
        for (int id : need) {  // ids ascend in a topological order
            const graph::Node& n = g_.node(id);
            if (n.is_constant()) m[id] = sub.constant(n.name, n.value);
            else {
                std::vector<Value> ins;
                for (Value in : n.inputs) ins.push_back(m.at(in.id));
                m[id] = sub.add_node(n.op, ins, n.attrs, n.name);
            }
        }
        for (const auto& [id, val] : m)
            checked_elements(sub.type(val).shape, opt_.limits.max_tensor_elements, "the constant value '" + sub.node(val).name + "'");
        sub.output(m.at(v.id), "value");
        graph::Module mod = graph::build(sub);
        mod.run();
        BufferRef r = copy_buffer(mod.get_output(0));
        evaluated_[v.id] = r;
        return r;
    }

    const pb::ModelProto& model_;
    const LoadOptions& opt_;
    graph::Graph g_;
    int opset_ = 0;
    // While a loop's body is converted: the graph around it and its state (import_body), the
    // first scope that is the body's, and the values around it that the body reads.
    struct GraphState {
        graph::Graph g;
        std::set<int> rank0;
        std::map<int, BufferRef> evaluated;
        std::map<int, Value> widened;
    };
    void swap_state(GraphState& s) {
        std::swap(g_, s.g);
        std::swap(rank0_, s.rank0);
        std::swap(evaluated_, s.evaluated);
        std::swap(widened_, s.widened);
    }
    GraphState* outer_ = nullptr;
    size_t body_scope_ = 0;
    std::vector<Value> captured_;
    Scope root_;
    std::vector<Scope> scopes_;  // the subgraphs being converted, innermost last (inline_graph)
    std::map<std::string, std::string> producer_;  // for outputs not computed: which node
    std::map<int, BufferRef> evaluated_;
    std::map<int, Value> widened_;          // 16-bit float values as float32 (widen_half_inputs)
    std::map<std::string, int> suffixes_;   // the next suffix per name stem (unique_graph_name)
    static constexpr int64_t kMaxSubgraphConversions = 65536;
    int64_t subgraphs_converted_ = 0;       // inline_graph calls so far
    std::set<int> rank0_;                     // values that are ONNX scalars (held as [1])
    // Values without elements, with their shapes and dtypes where known (Ctx::empty_ins,
    // Ctx::empty_types).
    std::map<std::string, std::optional<graph::TensorType>> empty_;
    std::map<std::string, int> narrow_;  // values of a narrow type (proto.hpp, is_narrow): its ONNX element type
};

}  // namespace weft::onnx::detail

namespace weft::onnx {

graph::Graph load_from_memory(const void* data, size_t size, const LoadOptions& options) {
    auto m = std::make_shared<detail::pb::ModelProto>();
    try {
        detail::parse_model(*m, data, size, "the model");
    } catch (const std::bad_alloc&) {
        throw Error("weft: onnx: out of memory while parsing the model");
    }
    graph::Graph g = detail::Importer(*m, options).run();
    for (const graph::Symbol& s : options.symbols) {
        bool used = false;
        for (const graph::Symbol& t : g.symbols()) used |= t.name == s.name;
        WEFT_CHECK(used || options.dim_values.count(s.name), "onnx: LoadOptions::symbols names '", s.name,
                   "', which no graph input has as a symbolic dimension");
    }
    if (g.symbols().empty()) return g;
    // The graph at other sizes is the model imported again with those values: the importer
    // folds shape arithmetic (Shape, Gather, Concat into Reshape) into attributes and constants.
    LoadOptions fixed = options;
    fixed.symbols.clear();
    g.set_instantiate([m, fixed](const std::map<std::string, int64_t>& values) {
        LoadOptions at = fixed;
        for (auto& [name, v] : values) at.dim_values[name] = v;
        return detail::Importer(*m, at).run();
    });
    return g;
}

graph::Graph load_from_memory(const std::string& bytes, const LoadOptions& options) {
    return load_from_memory(bytes.data(), bytes.size(), options);
}

graph::Graph load(const std::string& path, const LoadOptions& options) {
    const std::shared_ptr<const ::weft::detail::FileBytes> file = detail::read_model_file(path, options);
    try {
        return load_from_memory(file->bytes().data(), file->bytes().size(), options);
    } catch (const Error& e) {  // the same kind (user, unsupported, internal), the file named
        e.rethrow_with(std::string(e.what()) + " (in '" + path + "')");
    }
}

BufferRef load_tensor_from_memory(const void* data, size_t size, std::string* name) {
    detail::pb::TensorProto t;
    if (size > size_t(std::numeric_limits<int>::max()) || !t.ParseFromArray(data, int(size)))
        throw Error("weft: onnx: not a valid TensorProto (the protobuf does not parse)");
    if (name) *name = t.name();
    return detail::tensor_to_buffer(t, LoadOptions{}.limits.max_tensor_elements, "the tensor '" + t.name() + "'");
}

BufferRef load_tensor(const std::string& path, std::string* name) {
    const std::shared_ptr<const ::weft::detail::FileBytes> file = detail::read_model_file(path, LoadOptions{});
    return load_tensor_from_memory(file->bytes().data(), file->bytes().size(), name);
}

ModelInfo inspect(const std::string& path, const LoadOptions& options) {
    const std::shared_ptr<const ::weft::detail::FileBytes> file = detail::read_model_file(path, options);
    const std::string_view bytes = file->bytes();
    detail::pb::ModelProto m;
    detail::parse_model(m, bytes.data(), bytes.size(), "'" + path + "'");
    ModelInfo info;
    info.ir_version = m.ir_version();
    info.opset = detail::default_opset(m);
    info.producer = m.producer_name() + (m.producer_version().empty() ? "" : " " + m.producer_version());
    std::set<std::string> ops, bad;
    for (const detail::pb::NodeProto& n : m.graph().node()) {
        bool other = !n.domain().empty() && n.domain() != "ai.onnx";
        std::string op = other ? n.domain() + ":" + n.op_type() : n.op_type();
        ops.insert(op);
        if (other || !detail::converters().count(n.op_type())) bad.insert(op);
    }
    info.op_types.assign(ops.begin(), ops.end());
    info.unsupported_ops.assign(bad.begin(), bad.end());
    return info;
}

std::vector<std::string> supported_ops() {
    std::vector<std::string> r;
    for (const auto& [name, e] : detail::converters()) r.push_back(name);
    return r;
}

}  // namespace weft::onnx

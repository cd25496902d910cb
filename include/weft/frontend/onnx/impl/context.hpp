// The ONNX importer's per-node context: a node's attributes and inputs, and the graph
// builder calls converters use (graph/graph.hpp).
#pragma once
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "weft/frontend/onnx/impl/proto.hpp"
#include "weft/graph/graph.hpp"

namespace weft::onnx::detail {

using graph::Value;

// Evaluates a value whose inputs are all constants (the importer's, which builds the
// constant part with graph::build when it is not a constant node already).
using Evaluator = std::function<BufferRef(Value)>;

// The graph's tensors have at least one dimension: an ONNX scalar (rank 0) is a [1] tensor,
// and the importer remembers which values stand for scalars (`rank0`) so that converters
// whose result depends on the rank (Gather, Unsqueeze, Squeeze, Reshape) can tell.
inline BufferRef as_rank1(const BufferRef& b) {
    if (b.ndim() > 0) return b;
    BufferRef r = BufferRef::allocate(b.dtype(), {1});
    std::memcpy(r.data(), b.data(), size_t(b.size_bytes()));
    return r;
}

// `b` is shared, not copied: every caller passes a buffer made for the graph (a decoded
// initializer, a converter's result, a copy of a frozen input) or another constant's data.
inline Value add_constant(graph::Graph& g, std::set<int>& rank0, const std::string& name, const BufferRef& b) {
    if (b.size() == 0) unsupported("the constant '" + name + "' has no elements (shape " + graph::shape_str(b.shape()) + ")");
    Value v = g.constant_shared(name, as_rank1(b));
    if (b.ndim() == 0) rank0.insert(v.id);
    return v;
}

// `stem`, or stem + a number, not yet a node of g. `next` keeps the next number to try per
// stem: an unrolled loop names the same helper thousands of times, and counting up from 1
// each time would be quadratic.
inline std::string unique_graph_name(const graph::Graph& g, std::map<std::string, int>& next, const std::string& stem) {
    int& k = next[stem];
    std::string n = k ? stem + std::to_string(k) : stem;
    while (g.find(n)) n = stem + std::to_string(++k);
    ++k;
    return n;
}

// A loop body's input (Ctx::import_body): its name in the body graph, type, and whether it
// stands for an ONNX scalar.
struct BodyInput {
    std::string name;
    graph::TensorType type;
    bool scalar = false;
};

// A loop body converted into a graph of its own, and the values around it that it reads
// (its inputs captured0, captured1, ...: Graph::loop).
struct BodyImport {
    graph::Graph body;
    std::vector<Value> captured;
};

struct Ctx {
    graph::Graph& g;
    const pb::NodeProto& node;
    int opset;
    std::vector<Value> ins;  // undefined where the input name is empty (an omitted optional input)
    Evaluator evaluate;
    int64_t limit;           // LoadOptions::limits.max_tensor_elements
    std::set<int>& rank0;    // values that are ONNX scalars (held as [1])
    int64_t max_loop_iterations = 0;  // LoadOptions::max_loop_iterations
    // Constants without elements are not graph values (weft's tensors are never empty): such
    // an input reads as omitted, except that const_value() gives an empty buffer; a
    // converter sets empty_outs[k] when its output k is one.
    std::vector<char> empty_ins;
    std::vector<char> empty_outs;
    // The shape (with a 0 in it) and dtype of an empty input, where the model declares it (a
    // graph input or initializer without elements, or a value computed from one); a
    // converter that makes an empty output k gives its type in empty_out_types[k].
    std::vector<std::optional<graph::TensorType>> empty_types;
    std::map<size_t, graph::TensorType> empty_out_types;
    const graph::TensorType* empty_type(size_t k) const {
        return is_empty(k) && k < empty_types.size() && empty_types[k] ? &*empty_types[k] : nullptr;
    }
    // What the converter looked at: an attribute it never read or an input it never took is
    // one whose meaning it does not implement (an attribute or input a later opset added, say),
    // and the importer refuses the node rather than compute something else (unread_error()).
    mutable std::set<std::string> read_attrs;
    // The ONNX element type of each input of a narrow type (a sub-byte integer held in a
    // byte, a small float held as float32: proto.hpp, is_narrow), else 0; a converter whose
    // output k is one sets narrow_outs[k].
    std::vector<int> narrow_ins;
    std::map<size_t, int> narrow_outs;
    int narrow_in(size_t k) const {
        mark_read(k);
        return k < narrow_ins.size() ? narrow_ins[k] : 0;
    }
    // The ONNX dtype of each input where the importer computes it in another (float16 and
    // bfloat16 inputs arrive widened to float32; load.hpp, widen_half_inputs).
    std::vector<DataType> onnx_dtypes;
    // Converts a subgraph attribute (If's branch, Loop's body) with its inputs bound to the
    // given values and returns its outputs (load.hpp, Importer::inline_graph).
    std::function<std::vector<Value>(const pb::GraphProto&, const std::vector<Value>&)> inline_graph;
    // Converts a Loop's body into a graph of its own with inputs `inputs`; `finish` gets its
    // ONNX outputs while that graph is `g` (to add the body's outputs). load.hpp,
    // Importer::import_body; an UnsupportedError where the body cannot be one.
    std::function<BodyImport(const pb::GraphProto&, const std::vector<BodyInput>&,
                             const std::function<void(const std::vector<Value>&)>&)>
        import_body;
    // Sequences are lists of values known at import: the inputs that are sequences (their
    // `ins` entry is undefined), and the outputs a sequence operator makes (ops_sequence.hpp).
    std::map<size_t, std::vector<Value>> seq_ins, seq_outs;
    const std::vector<Value>& seq(size_t k) const {
        mark_read(k);
        auto it = seq_ins.find(k);
        if (it == seq_ins.end()) malformed("input " + std::to_string(k) + " must be a sequence");
        return it->second;
    }
    mutable std::vector<char> read_ins;

    // ---- attributes -------------------------------------------------------------------
    const pb::AttributeProto* attr(const std::string& name) const {
        read_attrs.insert(name);
        for (const pb::AttributeProto& a : node.attribute())
            if (a.name() == name) return &a;
        return nullptr;
    }
    bool has_attr(const std::string& name) const { return attr(name) != nullptr; }
    // Whether the node sets `name`, without counting it as read (for the importer's checks).
    bool sets_attr(const std::string& name) const {
        for (const pb::AttributeProto& a : node.attribute())
            if (a.name() == name) return true;
        return false;
    }
    const pb::AttributeProto& typed(const std::string& name, int type) const {
        const pb::AttributeProto* a = attr(name);
        WEFT_ICHECK(a, "typed() on a missing attribute");
        // Old exporters leave `type` unset (0); then the field that is filled decides.
        if (a->type() != 0 && a->type() != type)
            malformed("attribute '" + name + "' must be of type " + attr_type_name(type) + ", got " +
                      attr_type_name(a->type()));
        return *a;
    }
    int64_t i(const std::string& name, int64_t fallback) const {
        return has_attr(name) ? typed(name, pb::AttributeProto::INT).i() : fallback;
    }
    int64_t i(const std::string& name) const {
        if (!has_attr(name)) malformed("the required attribute '" + name + "' is missing");
        return typed(name, pb::AttributeProto::INT).i();
    }
    double f(const std::string& name, double fallback) const {
        if (!has_attr(name)) return fallback;
        const pb::AttributeProto& a = *attr(name);
        if (a.type() == pb::AttributeProto::INT) return double(a.i());
        return typed(name, pb::AttributeProto::FLOAT).f();
    }
    std::string s(const std::string& name, const std::string& fallback = "") const {
        return has_attr(name) ? typed(name, pb::AttributeProto::STRING).s() : fallback;
    }
    std::vector<int64_t> ints(const std::string& name, std::vector<int64_t> fallback = {}) const {
        if (!has_attr(name)) return fallback;
        const pb::AttributeProto& a = typed(name, pb::AttributeProto::INTS);
        return {a.ints().begin(), a.ints().end()};
    }
    std::vector<double> floats(const std::string& name, std::vector<double> fallback = {}) const {
        if (!has_attr(name)) return fallback;
        const pb::AttributeProto& a = typed(name, pb::AttributeProto::FLOATS);
        return {a.floats().begin(), a.floats().end()};
    }

    // ---- inputs -----------------------------------------------------------------------
    size_t n_in() const { return ins.size(); }
    bool has(size_t k) const {
        mark_read(k);
        return k < ins.size() && ins[k].defined();
    }
    bool is_empty(size_t k) const {
        mark_read(k);
        return k < empty_ins.size() && empty_ins[k];
    }
    void mark_read(size_t k) const {
        if (read_ins.size() <= k) read_ins.resize(k + 1);
        read_ins[k] = 1;
    }
    // Attributes and inputs with no effect on inference (a training-only seed, say): marked
    // as read, so that the node is not refused for them.
    void ignore(std::initializer_list<const char*> attrs) const {
        for (const char* a : attrs) read_attrs.insert(a);
    }
    void ignore_input(size_t k) const { mark_read(k); }
    // The first attribute set on the node that the converter never read, or input given to it
    // that it never took, as a message ("" when there is none).
    std::string unread_error() const {
        for (const pb::AttributeProto& a : node.attribute())
            // consumed_inputs (opsets < 6) told a runtime which inputs it may overwrite.
            if (!read_attrs.count(a.name()) && a.name() != "consumed_inputs") return "the attribute '" + a.name() + "' is not supported";
        for (size_t k = 0; k < size_t(node.input_size()); ++k)
            if (!node.input(int(k)).empty() && (k >= read_ins.size() || !read_ins[k]))
                return "input " + std::to_string(k) + " ('" + node.input(int(k)) + "') is not supported";
        return "";
    }
    Value in(size_t k) const {
        if (seq_ins.count(k)) unsupported("input " + std::to_string(k) + " is a sequence, which only the sequence operators take");
        if (is_empty(k)) unsupported("input " + std::to_string(k) + " is an empty tensor (weft's tensors have no empty dimensions)");
        if (!has(k)) malformed("input " + std::to_string(k) + " is required but missing");
        return ins[k];
    }
    // The ONNX dtype of input k (float16 / bfloat16 arrive as float32: onnx_dtypes).
    DataType onnx_dtype(size_t k) const {
        if (const graph::TensorType* t = empty_type(k)) return t->dtype;
        Value v = in(k);
        return k < onnx_dtypes.size() ? onnx_dtypes[k] : dtype(v);
    }
    const graph::TensorType& type(Value v) const { return g.type(v); }
    const std::vector<int64_t>& shape(Value v) const { return g.type(v).shape; }
    int64_t rank(Value v) const { return int64_t(shape(v).size()); }
    DataType dtype(Value v) const { return g.type(v).dtype; }

    // Input k's value: it must be a constant (or computed from constants only).
    BufferRef const_value(size_t k, const char* what) const {
        if (is_empty(k)) return BufferRef();
        Value v = in(k);
        const graph::Node& n = g.node(v);
        if (n.is_constant()) return n.value;
        if (n.is_input())
            unsupported(std::string(what) + " (input " + std::to_string(k) + ", '" + node.input(int(k)) +
                        "') must be a constant, but it is a graph input");
        return evaluate(v);
    }
    std::vector<int64_t> const_ints(size_t k, const char* what) const { return buffer_ints(const_value(k, what)); }
    std::vector<double> const_floats(size_t k, const char* what) const {
        return buffer_floats(const_value(k, what));
    }

    // ---- building ---------------------------------------------------------------------
    // Whether the model asks for ONNX output k (it is there and named).
    bool wants(int k) const { return k < node.output_size() && !node.output(k).empty(); }
    // The name of ONNX output k (what the node computing it is called).
    std::string out(int k = 0) const {
        std::string n = k < node.output_size() ? node.output(k) : "";
        if (n.empty() || g.find(n)) return fresh("out" + std::to_string(k));
        return n;
    }
    // "<output 0>/<what>", unique in the graph.
    std::string fresh(const std::string& what) const {
        std::string base = node.output_size() && !node.output(0).empty() ? node.output(0) : node.name();
        WEFT_ICHECK(suffixes, "Ctx::fresh without the importer's name suffixes");
        return unique_graph_name(g, *suffixes, base + "/" + what);
    }
    // The next free suffix per name stem, the importer's (load.hpp): shared across nodes.
    std::map<std::string, int>* suffixes = nullptr;
    Value add(const std::string& op, std::vector<Value> inputs, graph::Attrs attrs = {}, std::string name = "") {
        if (name.empty()) name = fresh(op);
        return g.add_node(op, std::move(inputs), std::move(attrs), std::move(name));
    }
    bool is_scalar(Value v) const { return rank0.count(v.id) != 0; }
    Value mark_scalar(Value v) {
        rank0.insert(v.id);
        return v;
    }
    // A constant named after ONNX output k; an ONNX scalar becomes [1] (see as_rank1).
    Value named_constant(int k, const BufferRef& b) { return add_constant(g, rank0, out(k), b); }
    Value constant(const BufferRef& b, const std::string& what) { return add_constant(g, rank0, fresh(what), b); }
    // A [1] constant: broadcasts against anything.
    Value scalar(double v, DataType dt, const std::string& what = "scalar") {
        return constant(filled_buffer(dt, {1}, v), what);
    }
};

// A converter adds the graph nodes for one ONNX node and returns its outputs (an undefined
// Value for an output it does not produce: reading that is an error).
using Converter = std::function<std::vector<Value>(Ctx&)>;

struct OpEntry {
    Converter convert;
    int since = 1;  // the first opset that has the operator
};

}  // namespace weft::onnx::detail

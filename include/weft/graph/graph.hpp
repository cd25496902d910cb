// graph::Graph: a network as a DAG of operator nodes, the input of the graph layer's passes,
// fusion, memory planning and executor (graph/module.hpp).
//
//   graph::Graph g;
//   graph::Value x = g.input("x", {1, 3, 224, 224});
//   graph::Value w = g.constant("w", weights);                  // a BufferRef, copied
//   graph::Value y = g.relu(g.conv2d(x, w, {.stride = 2, .pad = 3}));
//   g.output(y, "y");
//   graph::Module m = graph::build(g);                           // graph/module.hpp
//
// Every node has one output tensor (a Value). Adding a node infers its shape and dtype at
// once, so a mismatch is a weft::Error naming the node, its operator and what did not fit.
// Nodes are stored in the order they were added; the builder only refers to nodes that
// exist, so that order is topological. set_input() rewires an edge (importers, passes) and
// may break the order or make a cycle: check() finds that, and build() calls check().
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

#include "weft/ir/type.hpp"
#include "weft/runtime/buffer.hpp"

namespace weft::graph {

// The output of node `id` of a graph. A Value the graph hands out carries the graph's
// identity, so that one graph refuses another's values (which would silently mean
// whichever of its own nodes has the same id); Value{id} (graph 0) is taken by any graph.
struct Value {
    int id = -1;
    uint64_t graph = 0;  // Graph::identity() of the graph that made it; 0: unchecked
    bool defined() const { return id >= 0; }
    // The same node: values are compared within one graph.
    bool operator==(const Value& o) const { return id == o.id; }
};

struct TensorType {
    std::vector<int64_t> shape;
    DataType dtype = DataType::float_(32);
    int64_t size() const;     // elements (INT64_MAX where the product would overflow)
    int64_t bytes() const;    // size() * element bytes (INT64_MAX where it would overflow)
    std::string str() const;  // "float32[1, 64, 56, 56]"
    bool operator==(const TensorType&) const = default;
};

class Graph;

// An attribute: an integer, a float, a string, a list of integers or floats, or a graph (a
// loop's body: Graph::loop). A graph attribute is shared, never copied, and compared by
// identity: two nodes are equal only with the same body.
using AttrValue = std::variant<int64_t, double, std::string, std::vector<int64_t>, std::vector<double>,
                               std::shared_ptr<const Graph>>;

class Attrs {
public:
    Attrs() = default;
    Attrs(std::initializer_list<std::pair<const std::string, AttrValue>> init) : values_(init) {}

    Attrs& set(const std::string& key, AttrValue v) {
        values_[key] = std::move(v);
        return *this;
    }
    bool has(const std::string& key) const { return values_.count(key) != 0; }
    // Typed reads: a missing key without a default, or a value of another kind, is a
    // weft::Error naming the key. Integers read as floats where a float is asked for.
    int64_t get_int(const std::string& key) const;
    int64_t get_int(const std::string& key, int64_t fallback) const;
    double get_float(const std::string& key) const;
    double get_float(const std::string& key, double fallback) const;
    std::string get_string(const std::string& key, const std::string& fallback = "") const;
    std::vector<int64_t> get_ints(const std::string& key) const;
    std::vector<int64_t> get_ints(const std::string& key, std::vector<int64_t> fallback) const;
    std::vector<double> get_floats(const std::string& key, std::vector<double> fallback = {}) const;
    // A graph attribute; nullptr where there is none.
    std::shared_ptr<const Graph> get_graph(const std::string& key) const;

    const std::map<std::string, AttrValue>& items() const { return values_; }
    std::string str() const;  // "{pads=[1, 1, 1, 1], strides=[2, 2]}"
    bool operator==(const Attrs&) const = default;

private:
    std::map<std::string, AttrValue> values_;
};

// The name prefix of the outputs that are run-time checks (Graph::check_at_run).
inline constexpr std::string_view kRunCheckPrefix = "weft.check: ";

struct Node {
    std::string op;    // "input", "constant", or a registered operator (graph/op_registry.hpp)
    std::string name;  // unique in the graph
    std::vector<Value> inputs;
    Attrs attrs;
    TensorType type;  // the output's shape and dtype
    BufferRef value;  // a constant's data (compact, owned by the graph)

    bool is_input() const { return op == "input"; }
    bool is_constant() const { return op == "constant"; }
    bool is_op() const { return !is_input() && !is_constant(); }
};

// ---- attributes of the builder's operators --------------------------------------------
// Scalars apply to both spatial dimensions; the lists, when given, override them:
// strides/dilations {h, w}, pads {top, left, bottom, right}.

struct Conv2dAttrs {
    int64_t stride = 1, pad = 0, dilation = 1, groups = 1;
    std::vector<int64_t> strides, pads, dilations;
};

struct Pool2dAttrs {
    int64_t kernel = 1, stride = 1, pad = 0, dilation = 1;
    std::vector<int64_t> kernels, strides, pads, dilations;
    bool count_include_pad = false;  // avg_pool2d: divide by the whole window
    bool ceil_mode = false;          // output extents rounded up (ONNX's ceil_mode; topi::Pool2dParams)
};

// Graph::loop's options: which carried value the node gives, and the most iterations a run
// may take (0: no bound; past it, run() throws `limit_message`, or a message naming the node).
struct LoopAttrs {
    int64_t output = 0;
    int64_t max_iterations = 0;
    std::string limit_message;
};

// What one graph may hold, checked on every node as it is added (an input, a constant, an
// operator's inferred output), so that a hostile or mistaken model stops with a weft::Error
// naming the node and the limit instead of exhausting memory, overflowing a size or
// compiling for minutes. Graph::set_limits changes them (the ONNX importer takes
// onnx::LoadOptions::limits); copies and the passes' rewrites keep them.
struct Limits {
    int64_t max_rank = 16;                           // dimensions of one tensor (also an artifact's)
    int64_t max_tensor_elements = int64_t(1) << 32;  // elements of one tensor
    int64_t max_tensor_bytes = int64_t(1) << 34;     // bytes of one tensor (16 GiB)
    int64_t max_nodes = int64_t(1) << 20;            // nodes of the graph
    // Inputs of one node (a concat's pieces): each is a load in one kernel, and LLVM's time
    // grows faster than their count (2,000 distinct pieces: 2 s to compile).
    int64_t max_node_inputs = 4096;
};

// A dimension of a graph input that is decided when the module runs (a batch, a sequence
// length): build() compiles kernels whose extents are expressions of it and plans memory for
// `max` (docs/graph.md, "Symbolic dimensions"). Values in [min, max].
struct Symbol {
    std::string name;
    int64_t max = 0;
    int64_t min = 1;
};

// Input `input`'s dimension `axis` is symbol `symbol`.
struct SymbolicAxis {
    std::string input;
    int64_t axis = 0;
    std::string symbol;
};

class Graph;
namespace detail {
// A topological order of n nodes given each one's inputs (node ids), the smallest ready id
// first, so that nodes stored in order keep it; nodes on (or behind) a cycle are left out.
// Graph::check and the artifact loader order nodes with it.
std::vector<int> smallest_first_order(const std::vector<std::vector<int>>& inputs);
// The names of a loop body's inputs and outputs (Graph::loop).
inline const char* const kLoopIteration = "iteration";
inline const char* const kLoopCondition = "condition";
inline std::string loop_carried_name(size_t k) { return "carried" + std::to_string(k); }
inline std::string loop_captured_name(size_t k) { return "captured" + std::to_string(k); }
}  // namespace detail

// The graph at other values of its symbols (by name). The default re-infers every node from
// the inputs' new shapes; an importer that folded shape arithmetic into attributes and
// constants builds the graph again (onnx::load does).
using Instantiate = std::function<Graph(const std::map<std::string, int64_t>& values)>;

class Graph {
public:
    Graph();
    // A copy takes the values of the graph it was copied from, for the nodes that graph had
    // then (passes and build() work on copies); values it makes afterwards are its own.
    Graph(const Graph& other);
    Graph& operator=(const Graph& other);
    Graph(Graph&&) noexcept = default;
    Graph& operator=(Graph&&) noexcept = default;
    uint64_t identity() const { return identity_; }
    // The limits every node added from now on is checked against (see Limits).
    void set_limits(const Limits& limits) { limits_ = limits; }
    const Limits& limits() const { return limits_; }

    // ---- building -------------------------------------------------------------------
    Value input(const std::string& name, std::vector<int64_t> shape, DataType dtype = DataType::float_(32));
    // Makes dimension `axis` of `input` the symbol `s`: its extent becomes s.max (the graph is
    // built at the largest size), and a module built from the graph takes inputs whose extent
    // there is any value in [s.min, s.max]. Inputs marked with the same name share the symbol
    // (and must give equal bounds). Mark an input before adding nodes that read it.
    //   graph::Value x = g.input("x", {16, 256});
    //   g.set_symbolic(x, 0, {"batch", 16});         // batch 1..16
    void set_symbolic(Value input, int64_t axis, const Symbol& s);
    const std::vector<Symbol>& symbols() const { return symbols_; }
    const std::vector<SymbolicAxis>& symbolic_axes() const { return symbolic_axes_; }
    // How instantiate() makes the graph at other symbol values (see Instantiate).
    void set_instantiate(Instantiate f) { instantiate_ = std::move(f); }
    // The graph with each symbol at `values` (every symbol named; bounds checked), of fixed
    // shapes: its symbols are gone.
    Graph instantiate(const std::map<std::string, int64_t>& values) const;
    // In a graph instantiate() made, node `name`'s shape in the graph it was made from (at the
    // symbols' max); nullptr elsewhere. Passes that choose a layout by a size (the blocked
    // convolution's block by its width) choose as at the max, so that the graphs build()
    // makes at other sizes agree with the compiled one (docs/graph.md, "Symbolic dimensions").
    const std::vector<int64_t>* shape_at_max(const std::string& name) const;
    // The same table for a graph a pass makes from this one (GraphRewriter copies it).
    void inherit_shapes_at_max(const Graph& from) { shapes_at_max_ = from.shapes_at_max_; }
    // Whether the graph has symbolic dimensions or instantiate() made it from one (a pass's
    // rewrite keeps either). A pass whose rewrite depends on a size must then make the same
    // choice at every size.
    bool from_symbolic() const { return !symbols_.empty() || shapes_at_max_ != nullptr; }

    // A constant (weights): its data is copied into compact storage the graph owns.
    Value constant(const std::string& name, const BufferRef& data);
    // A constant that shares `data` instead of copying it, for data nobody writes afterwards:
    // another graph's constant (the passes' rewrites), a buffer made for this graph. A
    // non-compact `data` is copied.
    Value constant_shared(const std::string& name, const BufferRef& data);
    // A node of a registered operator; its type is inferred now. An empty name gets
    // "<op>_<id>".
    Value add_node(const std::string& op, std::vector<Value> inputs, Attrs attrs = {}, std::string name = "");
    // Marks v as an output of the graph (an empty name takes the node's name). Output names
    // are unique: a second output of the same name is a weft::Error.
    void output(Value v, std::string name = "");
    // A check made at run time: after every run, a module whose `flag` (a bool tensor of one
    // element) is true throws weft::Error(message) — for what only the data can tell, such as
    // a data-dependent loop that would run past its bound. The graph keeps it as an output
    // named kRunCheckPrefix + message (so every pass keeps it alive); a Module lists only the
    // other outputs.
    void check_at_run(Value flag, const std::string& message);

    // ---- the builder: one function per operator (see docs/graph.md for each) ----------
    Value conv2d(Value x, Value w, const Conv2dAttrs& a = {}, std::string name = "");
    Value conv2d(Value x, Value w, Value bias, const Conv2dAttrs& a = {}, std::string name = "");
    Value dense(Value x, Value w, std::string name = "");              // x [M, K] * w [N, K]^T
    Value dense(Value x, Value w, Value bias, std::string name = "");  // + bias [N]
    Value matmul(Value a, Value b, std::string name = "");
    Value batch_matmul(Value a, Value b, std::string name = "");

    Value add(Value a, Value b, std::string name = "");
    Value sub(Value a, Value b, std::string name = "");
    Value mul(Value a, Value b, std::string name = "");
    Value div(Value a, Value b, std::string name = "");
    Value pow(Value a, Value b, std::string name = "");
    Value maximum(Value a, Value b, std::string name = "");
    Value minimum(Value a, Value b, std::string name = "");

    Value relu(Value x, std::string name = "");
    Value leaky_relu(Value x, double alpha = 0.01, std::string name = "");
    Value clip(Value x, double lo, double hi, std::string name = "");
    Value sigmoid(Value x, std::string name = "");
    Value tanh(Value x, std::string name = "");
    Value gelu(Value x, std::string name = "");  // the erf form
    Value hard_swish(Value x, std::string name = "");
    Value exp(Value x, std::string name = "");
    Value log(Value x, std::string name = "");
    Value sqrt(Value x, std::string name = "");

    // x + bias along `axis` (bias has x's extent there): conv2d's and dense's bias.
    Value bias_add(Value x, Value bias, int64_t axis = 1, std::string name = "");
    // Inference batch norm over axis 1: (x - mean) / sqrt(var + eps) * gamma + beta.
    Value batch_norm(Value x, Value gamma, Value beta, Value mean, Value var, double epsilon = 1e-5,
                     std::string name = "");
    // Over the trailing gamma.ndim() axes.
    Value layer_norm(Value x, Value gamma, Value beta, double epsilon = 1e-5, std::string name = "");
    Value softmax(Value x, int axis = -1, std::string name = "");

    Value max_pool2d(Value x, const Pool2dAttrs& a, std::string name = "");
    Value avg_pool2d(Value x, const Pool2dAttrs& a, std::string name = "");
    Value global_avg_pool2d(Value x, std::string name = "");

    Value sum(Value x, std::vector<int64_t> axes = {}, bool keepdims = false, std::string name = "");
    Value mean(Value x, std::vector<int64_t> axes = {}, bool keepdims = false, std::string name = "");
    Value max(Value x, std::vector<int64_t> axes = {}, bool keepdims = false, std::string name = "");

    // Data movement and types (ONNX semantics; negative axes count from the end).
    // shape: one entry may be -1 (inferred), 0 copies the input's extent there.
    Value reshape(Value x, std::vector<int64_t> shape, std::string name = "");
    // [product of the dimensions before axis, product of the rest].
    Value flatten(Value x, int64_t axis = 1, std::string name = "");
    // Output dimension d is x's dimension perm[d]; an empty perm reverses them.
    Value transpose(Value x, std::vector<int64_t> perm = {}, std::string name = "");
    Value concat(std::vector<Value> xs, int64_t axis, std::string name = "");
    // Pieces of the given sizes along axis (they must add up to its extent): one slice node
    // each, named "<name>_<k>".
    std::vector<Value> split(Value x, int64_t axis, std::vector<int64_t> sizes, std::string name = "");
    // Empty axes: 0, 1, ...; empty steps: 1s. Starts and ends are clamped (INT64_MAX: to the end).
    Value slice(Value x, std::vector<int64_t> starts, std::vector<int64_t> ends, std::vector<int64_t> axes = {},
                std::vector<int64_t> steps = {}, std::string name = "");
    // Constant padding; pads {before_0, ..., before_{r-1}, after_0, ..., after_{r-1}} (negative crops).
    Value pad(Value x, std::vector<int64_t> pads, double value = 0.0, std::string name = "");
    // Empty axes: every dimension of extent 1.
    Value squeeze(Value x, std::vector<int64_t> axes = {}, std::string name = "");
    // axes are positions in the result.
    Value unsqueeze(Value x, std::vector<int64_t> axes, std::string name = "");
    // indices int32 or int64; negative ones count from the end, others out of range are clamped.
    Value gather(Value data, Value indices, int64_t axis = 0, std::string name = "");
    // cond (bool) ? a : b, the three broadcast together.
    Value where(Value cond, Value a, Value b, std::string name = "");
    Value cast(Value x, DataType dtype, std::string name = "");
    Value erf(Value x, std::string name = "");

    // A loop that the module runs, not unrolled (ONNX Loop's meaning): with i from 0,
    //   while (i < trips && condition) { (condition, carried...) = body(i, condition, carried..., captured...); ++i; }
    // `body` is a graph of its own whose inputs are named "iteration" (int64 [1]),
    // "condition" (bool [1]), "carried0", "carried1", ... (the types of `carried`) and
    // "captured0", ... (of `captured`, values it reads unchanged), and whose outputs are
    // "condition" (bool [1]) and "carried0", ... (each of its input's type). The node's value
    // is carried value `output` after the last iteration (one node per carried value the
    // graph reads: each runs the loop). With `max_iterations` > 0, a run that would start
    // iteration max_iterations + 1 is a weft::Error. build() compiles the body once, as a
    // module of its own (CPU targets): docs/graph.md, "Loops".
    //   graph::Graph body;   ... body.output(next_condition, "condition"); body.output(next_h, "carried0");
    //   graph::Value y = g.loop(body, trips, condition, {h0}, {weights});
    Value loop(const Graph& body, Value trips, Value condition, std::vector<Value> carried,
               std::vector<Value> captured = {}, const LoopAttrs& attrs = {}, std::string name = "");
    // The same with a body several loop nodes share (one per carried value read): not copied.
    Value loop(std::shared_ptr<const Graph> body, Value trips, Value condition, std::vector<Value> carried,
               std::vector<Value> captured = {}, const LoopAttrs& attrs = {}, std::string name = "");


    // ---- reading ----------------------------------------------------------------------
    int size() const { return int(nodes_.size()); }
    const Node& node(Value v) const;
    const Node& node(int id) const { return node(Value{id}); }
    const std::vector<Node>& nodes() const { return nodes_; }
    const TensorType& type(Value v) const { return node(v).type; }
    // The graph's inputs (input nodes, in the order added) and outputs (name, value).
    std::vector<Value> inputs() const;
    const std::vector<std::pair<std::string, Value>>& outputs() const { return outputs_; }
    // The node called `name`, if any.
    std::optional<Value> find(const std::string& name) const;

    // ---- checking and rewiring ----------------------------------------------------------
    // Replaces input `slot` of node `id` (no inference: call check()).
    void set_input(int id, int slot, Value v);
    // The nodes in an order where every node follows its inputs; a cycle, an input that is
    // not a node, an unknown operator or a type that no longer fits is a weft::Error naming
    // the node. Re-infers every type.
    std::vector<int> check();
    // Is the stored order topological (every input an earlier node)?
    bool is_ordered() const;

    // One line per node: "%3 = conv2d(%1, %2) {strides=[2, 2]} : float32[1, 64, 112, 112]  // conv1".
    std::string str() const;

private:
    Value append(Node n);
    TensorType infer(const Node& n) const;
    std::string unique_name(const std::string& wanted, const std::string& op) const;
    // v, checked to be a value of this graph (or of a graph it was copied from, made before
    // the copy); `what` says where it was passed, for the message.
    Value own(Value v, const std::string& what) const;

    // The node's type and inputs against limits_; `adding`: also the node count.
    void check_limits(const Node& n, bool adding) const;

    uint64_t identity_ = 0;
    Limits limits_;
    // The graphs this one was copied from (its own line of copies) and how many nodes each
    // had when copied: their values up to that count are this graph's too.
    std::vector<std::pair<uint64_t, int>> copied_from_;
    std::vector<Node> nodes_;
    std::vector<std::pair<std::string, Value>> outputs_;
    std::unordered_map<std::string, int> by_name_;  // (hashed: long node names share long prefixes)
    std::vector<Symbol> symbols_;
    std::vector<SymbolicAxis> symbolic_axes_;
    Instantiate instantiate_;
    std::shared_ptr<const std::map<std::string, std::vector<int64_t>>> shapes_at_max_;
};

// "[1, 64, 56, 56]" — how messages show a shape.
std::string shape_str(const std::vector<int64_t>& shape);

// "node 'conv1' (conv2d)" — how messages name a node.
std::string describe(const Node& n);

}  // namespace weft::graph

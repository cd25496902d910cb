// Definitions of graph/graph.hpp: attributes, the node store, inference, check() and printing.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstring>
#include <functional>
#include <limits>
#include <queue>
#include <sstream>

#include "weft/graph/graph.hpp"
#include "weft/graph/op_registry.hpp"

namespace weft::graph {

// ---- TensorType -------------------------------------------------------------------------

int64_t TensorType::size() const {
    int64_t n = 1;
    for (int64_t d : shape)
        if (d > 0 && __builtin_mul_overflow(n, d, &n)) return std::numeric_limits<int64_t>::max();
    return n;
}

int64_t TensorType::bytes() const {
    int64_t b = 0;
    if (__builtin_mul_overflow(size(), int64_t(dtype.bytes()), &b)) return std::numeric_limits<int64_t>::max();
    return b;
}

std::string shape_str(const std::vector<int64_t>& shape) {
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
}

std::string TensorType::str() const { return dtype.str() + shape_str(shape); }

// ---- Attrs --------------------------------------------------------------------------------

namespace detail {

template <class T>
const T* attr_as(const std::map<std::string, AttrValue>& values, const std::string& key, const char* kind) {
    auto it = values.find(key);
    if (it == values.end()) return nullptr;
    const T* v = std::get_if<T>(&it->second);
    WEFT_CHECK(v, "attribute '", key, "' must be ", kind);
    return v;
}

inline void print_attr(std::ostream& os, const AttrValue& v) {
    std::visit(
        [&](const auto& x) {
            using T = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<T, std::string>) {
                os << '"' << x << '"';
            } else if constexpr (std::is_arithmetic_v<T>) {
                os << x;
            } else if constexpr (std::is_same_v<T, std::shared_ptr<const Graph>>) {
                os << "<graph of " << (x ? x->size() : 0) << " nodes>";
            } else {
                os << '[';
                for (size_t i = 0; i < x.size(); ++i) os << (i ? ", " : "") << x[i];
                os << ']';
            }
        },
        v);
}

}  // namespace detail

int64_t Attrs::get_int(const std::string& key) const {
    const int64_t* v = detail::attr_as<int64_t>(values_, key, "an integer");
    WEFT_CHECK(v, "attribute '", key, "' is missing");
    return *v;
}

int64_t Attrs::get_int(const std::string& key, int64_t fallback) const {
    const int64_t* v = detail::attr_as<int64_t>(values_, key, "an integer");
    return v ? *v : fallback;
}

double Attrs::get_float(const std::string& key) const {
    auto it = values_.find(key);
    WEFT_CHECK(it != values_.end(), "attribute '", key, "' is missing");
    return get_float(key, 0.0);
}

double Attrs::get_float(const std::string& key, double fallback) const {
    auto it = values_.find(key);
    if (it == values_.end()) return fallback;
    if (auto* i = std::get_if<int64_t>(&it->second)) return double(*i);
    const double* v = std::get_if<double>(&it->second);
    WEFT_CHECK(v, "attribute '", key, "' must be a number");
    return *v;
}

std::string Attrs::get_string(const std::string& key, const std::string& fallback) const {
    const std::string* v = detail::attr_as<std::string>(values_, key, "a string");
    return v ? *v : fallback;
}

std::shared_ptr<const Graph> Attrs::get_graph(const std::string& key) const {
    const auto* v = detail::attr_as<std::shared_ptr<const Graph>>(values_, key, "a graph");
    return v ? *v : nullptr;
}

std::vector<int64_t> Attrs::get_ints(const std::string& key) const {
    const auto* v = detail::attr_as<std::vector<int64_t>>(values_, key, "a list of integers");
    WEFT_CHECK(v, "attribute '", key, "' is missing");
    return *v;
}

std::vector<int64_t> Attrs::get_ints(const std::string& key, std::vector<int64_t> fallback) const {
    const auto* v = detail::attr_as<std::vector<int64_t>>(values_, key, "a list of integers");
    return v ? *v : fallback;
}

std::vector<double> Attrs::get_floats(const std::string& key, std::vector<double> fallback) const {
    const auto* v = detail::attr_as<std::vector<double>>(values_, key, "a list of numbers");
    return v ? *v : fallback;
}

std::string Attrs::str() const {
    std::ostringstream os;
    os << '{';
    bool first = true;
    for (auto& [k, v] : values_) {
        os << (first ? "" : ", ") << k << '=';
        detail::print_attr(os, v);
        first = false;
    }
    os << '}';
    return os.str();
}

// ---- Graph ----------------------------------------------------------------------------------

std::string describe(const Node& n) { return "node '" + n.name + "' (" + n.op + ")"; }

namespace detail {
inline uint64_t next_graph_identity() {
    static std::atomic<uint64_t> next{1};
    return next.fetch_add(1, std::memory_order_relaxed);
}
}  // namespace detail

Graph::Graph() : identity_(detail::next_graph_identity()) {}

Graph::Graph(const Graph& other)
    : identity_(detail::next_graph_identity()),
      limits_(other.limits_),
      copied_from_(other.copied_from_),
      nodes_(other.nodes_),
      outputs_(other.outputs_),
      by_name_(other.by_name_),
      symbols_(other.symbols_),
      symbolic_axes_(other.symbolic_axes_),
      instantiate_(other.instantiate_),
      shapes_at_max_(other.shapes_at_max_) {
    copied_from_.emplace_back(other.identity_, other.size());
}

Graph& Graph::operator=(const Graph& other) {
    if (this != &other) *this = Graph(other);
    return *this;
}

Value Graph::own(Value v, const std::string& what) const {
    if (v.graph == 0 || v.graph == identity_) return v;
    for (auto& [graph, nodes] : copied_from_)
        if (v.graph == graph && v.id < nodes) return v;
    ::weft::detail::throw_user_error(::weft::detail::concat(
        "graph: ", what, ": value %", v.id, " belongs to another graph; a graph::Value works only with the graph "
        "that made it (or a copy made after it)"));
}

const Node& Graph::node(Value v) const {
    v = own(v, "node()");
    WEFT_CHECK(v.id >= 0 && v.id < size(), "graph: value %", v.id, " is not a node of this graph (it has ", size(),
               " nodes)");
    return nodes_[size_t(v.id)];
}

std::string Graph::unique_name(const std::string& wanted, const std::string& op) const {
    std::string base = wanted.empty() ? op + "_" + std::to_string(size()) : wanted;
    if (!by_name_.count(base)) return base;
    for (int k = 1;; ++k)
        if (!by_name_.count(base + "_" + std::to_string(k))) return base + "_" + std::to_string(k);
}

void Graph::check_limits(const Node& n, bool adding) const {
    const Limits& l = limits_;
    const TensorType& t = n.type;
    // "<node>: <what> <value> <unit>, over the limit <limit> (graph::Limits::<field>)"
    auto fail = [&](const std::string& what, int64_t value, const char* unit, int64_t limit, const char* field) {
        ::weft::detail::throw_user_error(::weft::detail::concat(describe(n), ": ", what, " ", value, " ", unit,
                                                                ", over the limit ", limit, " (graph::Limits::", field,
                                                                ")"));
    };
    if (adding && size() >= l.max_nodes) fail("the graph would have", size() + 1, "nodes", l.max_nodes, "max_nodes");
    if (int64_t(n.inputs.size()) > l.max_node_inputs)
        fail("it has", int64_t(n.inputs.size()), "inputs", l.max_node_inputs, "max_node_inputs");
    if (int64_t(t.shape.size()) > l.max_rank)
        fail(t.str() + " has", int64_t(t.shape.size()), "dimensions", l.max_rank, "max_rank");
    for (int64_t d : t.shape)
        WEFT_CHECK(d >= 0, describe(n), ": its type ", t.str(), " has a negative dimension");
    if (t.size() > l.max_tensor_elements)
        fail(t.str() + " has", t.size(), "elements", l.max_tensor_elements, "max_tensor_elements");
    if (t.bytes() > l.max_tensor_bytes) fail(t.str() + " has", t.bytes(), "bytes", l.max_tensor_bytes, "max_tensor_bytes");
}

Value Graph::append(Node n) {
    n.name = unique_name(n.name, n.op);
    check_limits(n, true);
    by_name_[n.name] = size();
    nodes_.push_back(std::move(n));
    return Value{size() - 1, identity_};
}

Value Graph::input(const std::string& name, std::vector<int64_t> shape, DataType dtype) {
    WEFT_CHECK(!name.empty(), "graph: an input needs a name");
    WEFT_CHECK(!by_name_.count(name), "graph: the name '", name, "' is taken");
    for (int64_t d : shape)
        WEFT_CHECK(d > 0, "graph: input '", name, "' has shape ", shape_str(shape),
                   "; every dimension must be positive");
    Node n{.op = "input", .name = name, .type = {std::move(shape), dtype}};
    return append(std::move(n));
}

void Graph::set_symbolic(Value input, int64_t axis, const Symbol& s) {
    input = own(input, "set_symbolic()");
    WEFT_CHECK(input.id >= 0 && input.id < size() && nodes_[size_t(input.id)].is_input(),
               "graph: set_symbolic: %", input.id, " is not a graph input");
    Node& n = nodes_[size_t(input.id)];
    const int64_t rank = int64_t(n.type.shape.size());
    WEFT_CHECK(axis >= 0 && axis < rank, "graph: set_symbolic: input '", n.name, "' has ", rank,
               " dimensions; axis ", axis, " is out of range");
    WEFT_CHECK(!s.name.empty(), "graph: set_symbolic: the symbol needs a name");
    WEFT_CHECK(s.min >= 1 && s.max >= s.min, "graph: set_symbolic: symbol '", s.name, "' has bounds [", s.min, ", ",
               s.max, "]; they must satisfy 1 <= min <= max");
    for (const Node& other : nodes_)
        for (Value v : other.inputs)
            WEFT_CHECK(v.id != input.id, "graph: set_symbolic: input '", n.name, "' is already read by ",
                       describe(other), "; mark it symbolic before adding nodes that read it");
    for (const SymbolicAxis& a : symbolic_axes_)
        WEFT_CHECK(a.input != n.name || a.axis != axis, "graph: set_symbolic: input '", n.name, "' dimension ", axis,
                   " is symbol '", a.symbol, "' already");
    bool known = false;
    for (const Symbol& t : symbols_) {
        if (t.name != s.name) continue;
        WEFT_CHECK(t.min == s.min && t.max == s.max, "graph: set_symbolic: symbol '", s.name, "' was declared with bounds [",
                   t.min, ", ", t.max, "], now [", s.min, ", ", s.max, "]");
        known = true;
    }
    if (!known) symbols_.push_back(s);
    symbolic_axes_.push_back({n.name, axis, s.name});
    n.type.shape[size_t(axis)] = s.max;
    check_limits(n, false);
}

Graph Graph::instantiate(const std::map<std::string, int64_t>& values) const {
    for (const Symbol& s : symbols_) {
        auto it = values.find(s.name);
        WEFT_CHECK(it != values.end(), "graph: instantiate: no value for symbol '", s.name, "'");
        WEFT_CHECK(it->second >= s.min && it->second <= s.max, "graph: symbol '", s.name, "' = ", it->second,
                   " is outside its bounds [", s.min, ", ", s.max, "]");
    }
    auto at_max = std::make_shared<std::map<std::string, std::vector<int64_t>>>();
    for (const Node& n : nodes_) (*at_max)[n.name] = n.type.shape;
    Graph g;
    if (instantiate_) {
        g = instantiate_(values);
    } else {
        g = Graph(*this);
        for (const SymbolicAxis& a : symbolic_axes_)
            g.nodes_[size_t(g.by_name_.at(a.input))].type.shape[size_t(a.axis)] = values.at(a.symbol);
        g.symbols_.clear();  // a graph of fixed shapes
        g.symbolic_axes_.clear();
        g.instantiate_ = nullptr;
        g.check();  // every node's type again, from the inputs' new shapes
    }
    g.shapes_at_max_ = std::move(at_max);
    return g;
}

const std::vector<int64_t>* Graph::shape_at_max(const std::string& name) const {
    if (!shapes_at_max_) return nullptr;
    auto it = shapes_at_max_->find(name);
    return it == shapes_at_max_->end() ? nullptr : &it->second;
}

Value Graph::constant(const std::string& name, const BufferRef& data) {
    WEFT_CHECK(data.defined(), "graph: constant '", name, "' has no data");
    WEFT_CHECK(name.empty() || !by_name_.count(name), "graph: the name '", name, "' is taken");
    // A compact host copy: strided views are gathered, device buffers copied to the host.
    BufferRef copy = data.copy_to(Device::cpu());
    Node n{.op = "constant", .name = name.empty() ? "const" : name, .type = {data.shape(), data.dtype()}, .value = copy};
    return append(std::move(n));
}

Value Graph::constant_shared(const std::string& name, const BufferRef& data) {
    WEFT_CHECK(data.defined(), "graph: constant '", name, "' has no data");
    if (!data.is_compact() || !data.device().is_cpu()) return constant(name, data);
    WEFT_CHECK(name.empty() || !by_name_.count(name), "graph: the name '", name, "' is taken");
    Node n{.op = "constant", .name = name.empty() ? "const" : name, .type = {data.shape(), data.dtype()}, .value = data};
    return append(std::move(n));
}

TensorType Graph::infer(const Node& n) const {
    const OpDef* def = find_op(n.op);
    WEFT_CHECK(def, describe(n), ": unknown operator '", n.op, "'");
    int count = int(n.inputs.size());
    WEFT_CHECK(count >= def->min_inputs && count <= def->max_inputs, describe(n), ": takes ",
               def->min_inputs == def->max_inputs ? std::to_string(def->min_inputs)
                                                  : std::to_string(def->min_inputs) + " to " + std::to_string(def->max_inputs),
               " inputs, got ", count);
    std::vector<TensorType> in;
    for (size_t i = 0; i < n.inputs.size(); ++i) {
        Value v = n.inputs[i];
        WEFT_CHECK(v.id >= 0 && v.id < size(), describe(n), ": input ", i, " is missing (%", v.id,
                   " is not a node of this graph)");
        in.push_back(nodes_[size_t(v.id)].type);
    }
    try {
        return def->infer(in, n.attrs);
    } catch (const Error& e) {
        std::string types;
        for (size_t i = 0; i < in.size(); ++i) types += (i ? ", " : "") + in[i].str();
        ::weft::detail::rethrow_with_context(e, describe(n), " (inputs: " + types + ")");
    }
}

Value Graph::add_node(const std::string& op, std::vector<Value> inputs, Attrs attrs, std::string name) {
    WEFT_CHECK(name.empty() || !by_name_.count(name), "graph: the name '", name, "' is taken");
    for (Value& v : inputs) v = own(v, "an input of a new '" + op + "' node");
    Node n{.op = op, .name = name.empty() ? unique_name("", op) : name, .inputs = std::move(inputs),
           .attrs = std::move(attrs)};
    n.type = infer(n);
    return append(std::move(n));
}

void Graph::output(Value v, std::string name) {
    const Node& n = node(own(v, "output()"));
    if (name.empty()) name = n.name;
    for (auto& [taken, value] : outputs_)
        WEFT_CHECK(taken != name, "graph: two outputs named '", name, "' (%", value.id, " and %", v.id,
                   "); give each output its own name");
    // A run-time check (check_at_run) is read as one bool by the module that runs it.
    WEFT_CHECK(!name.starts_with(kRunCheckPrefix) || (n.type.dtype.is_bool() && n.type.size() == 1),
               "graph: the output '", name, "' is a run-time check (its name starts with '", kRunCheckPrefix,
               "'), which takes a bool flag of one element, not ", n.type.str());
    outputs_.emplace_back(std::move(name), v);
}

void Graph::check_at_run(Value flag, const std::string& message) { output(flag, std::string(kRunCheckPrefix) + message); }

std::vector<Value> Graph::inputs() const {
    std::vector<Value> r;
    for (int i = 0; i < size(); ++i)
        if (nodes_[size_t(i)].is_input()) r.push_back(Value{i, identity_});
    return r;
}

std::optional<Value> Graph::find(const std::string& name) const {
    auto it = by_name_.find(name);
    if (it == by_name_.end()) return std::nullopt;
    return Value{it->second, identity_};
}

void Graph::set_input(int id, int slot, Value v) {
    WEFT_CHECK(id >= 0 && id < size(), "graph: set_input: %", id, " is not a node");
    Node& n = nodes_[size_t(id)];
    WEFT_CHECK(slot >= 0 && slot < int(n.inputs.size()), describe(n), ": has no input ", slot);
    n.inputs[size_t(slot)] = own(v, "set_input()");
}

bool Graph::is_ordered() const {
    for (int i = 0; i < size(); ++i)
        for (Value v : nodes_[size_t(i)].inputs)
            if (v.id < 0 || v.id >= i) return false;
    return true;
}

namespace detail {
std::vector<int> smallest_first_order(const std::vector<std::vector<int>>& inputs) {
    const size_t n = inputs.size();
    std::vector<int> pending(n, 0);
    std::vector<std::vector<int>> users(n);
    for (size_t i = 0; i < n; ++i)
        for (int in : inputs[i]) {
            ++pending[i];
            users[size_t(in)].push_back(int(i));
        }
    std::vector<int> order;
    std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
    for (size_t i = 0; i < n; ++i)
        if (!pending[i]) ready.push(int(i));
    while (!ready.empty()) {
        int i = ready.top();
        ready.pop();
        order.push_back(i);
        for (int u : users[size_t(i)])
            if (--pending[size_t(u)] == 0) ready.push(u);
    }
    return order;
}
}  // namespace detail

std::vector<int> Graph::check() {
    const int n = size();
    std::vector<std::vector<int>> inputs(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
        const Node& node_i = nodes_[size_t(i)];
        WEFT_CHECK(!node_i.is_op() || find_op(node_i.op), describe(node_i), ": unknown operator '", node_i.op, "'");
        for (size_t k = 0; k < node_i.inputs.size(); ++k) {
            Value v = node_i.inputs[k];
            WEFT_CHECK(v.id >= 0 && v.id < n, describe(node_i), ": input ", k, " is missing (%", v.id,
                       " is not a node of this graph)");
            inputs[size_t(i)].push_back(v.id);
        }
    }
    // What the order leaves out lies on (or behind) a cycle.
    std::vector<int> order = detail::smallest_first_order(inputs);
    if (int(order.size()) != n) {
        std::vector<bool> ordered(size_t(n), false);
        for (int i : order) ordered[size_t(i)] = true;
        int on_cycle = 0;
        while (ordered[size_t(on_cycle)]) ++on_cycle;
        ::weft::detail::throw_user_error("graph: " + describe(nodes_[size_t(on_cycle)]) +
                                         " is on a cycle (it depends on its own output)");
    }
    for (int i : order) {
        Node& node_i = nodes_[size_t(i)];
        if (node_i.is_op()) node_i.type = infer(node_i);
        check_limits(node_i, false);
    }
    for (auto& [name, v] : outputs_)
        WEFT_CHECK(v.id >= 0 && v.id < n, "graph: output '", name, "' is not a node of this graph");
    return order;
}

std::string Graph::str() const {
    std::ostringstream os;
    for (int i = 0; i < size(); ++i) {
        const Node& n = nodes_[size_t(i)];
        os << '%' << i << " = " << n.op;
        if (n.is_op()) {
            os << '(';
            for (size_t k = 0; k < n.inputs.size(); ++k) os << (k ? ", " : "") << '%' << n.inputs[k].id;
            os << ')';
            if (!n.attrs.items().empty()) os << ' ' << n.attrs.str();
        }
        os << " : " << n.type.str() << "  // " << n.name << '\n';
    }
    for (auto& [name, v] : outputs_) os << "output " << name << " = %" << v.id << '\n';
    return os.str();
}

}  // namespace weft::graph

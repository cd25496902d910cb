// The ONNX importer's control flow: If with a condition that is a constant (or computed from
// constants) becomes the chosen branch's nodes; one decided by the inputs' values becomes
// both branches and a select, of which a module runs the branch taken
// (graph/impl/guards.hpp). Loop with a constant trip count and a condition the importer can
// evaluate is unrolled, and so is Scan over its inputs' (static) length. A loop decided by
// the inputs' values is unrolled to LoadOptions::max_loop_iterations, each iteration kept
// where it runs, with a run-time check that no run needs more.
#pragma once
#include "weft/frontend/onnx/impl/ops_common.hpp"

namespace weft::onnx::detail {

namespace control_detail {

// Loops unroll up to this many iterations: each one adds its body's nodes to the graph.
constexpr int64_t kMaxUnrolledIterations = 4096;

inline const pb::GraphProto& graph_attr(Ctx& c, const char* name) {
    if (!c.has_attr(name)) malformed(std::string("the required attribute '") + name + "' is missing");
    return c.typed(name, pb::AttributeProto::GRAPH).g();
}

// The single truth value of input k, which must be known at import.
inline bool constant_truth(Ctx& c, size_t k, const char* what) {
    BufferRef b = c.const_value(k, what);
    if (b.size() != 1) malformed(std::string(what) + " must hold one value, got " + std::to_string(b.size()));
    return buffer_floats(b)[0] != 0;
}

inline bool evaluated_truth(Ctx& c, Value v) {
    const graph::Node& n = c.g.node(v);
    BufferRef b = n.is_constant() ? n.value : c.evaluate(v);
    if (b.size() != 1) malformed("a Loop's condition must hold one value, got " + std::to_string(b.size()));
    return buffer_floats(b)[0] != 0;
}

// v as a bool of shape [1] (ONNX conditions may be of any type: nonzero is true).
inline Value truth_of(Ctx& c, Value v) {
    if (c.g.type(v).size() != 1) malformed("the condition must hold one value, got " + graph::shape_str(c.g.type(v).shape));
    if (c.shape(v) != std::vector<int64_t>{1}) v = c.g.reshape(v, {1}, c.fresh("condition"));
    return c.dtype(v).is_bool() ? v : c.add("not_equal", {v, c.scalar(0, c.dtype(v), "zero")});
}

// The conjunction of the defined flags (undefined: none is).
inline Value all_of(Ctx& c, std::vector<Value> flags) {
    Value r;
    for (Value f : flags)
        if (f.defined()) r = r.defined() ? c.add("logical_and", {r, f}) : f;
    return r;
}

// How many iterations a loop that the inputs' values decide may unroll: the user's bound.
// `why` (the importer's message on the value that decides it) leads the refusals, so that
// the input to freeze (LoadOptions::constant_inputs) is named.
inline int64_t dynamic_iterations(Ctx& c, int64_t scans, const std::string& why) {
    const std::string reason = strip_prefix(why);
    if (scans > 0)
        unsupported(reason + "; a Loop with scan outputs needs its iterations known at import (their length would "
                    "be decided at run time)");
    if (c.max_loop_iterations <= 0)
        unsupported(reason + "; for a Loop whose trip count or condition the inputs' values decide, set "
                    "onnx::LoadOptions::max_loop_iterations to the most iterations it may run");
    if (c.max_loop_iterations > kMaxUnrolledIterations)
        unsupported("onnx::LoadOptions::max_loop_iterations " + std::to_string(c.max_loop_iterations) +
                    " is more than weft unrolls (" + std::to_string(kMaxUnrolledIterations) + ")");
    return c.max_loop_iterations;
}

// A loop-carried value after an iteration that runs where `runs` holds (always: undefined).
inline Value kept_where(Ctx& c, Value runs, Value next, Value before, size_t k) {
    if (!runs.defined()) return next;
    if (c.type(next) != c.type(before))
        unsupported("a Loop whose number of iterations the inputs' values decide and whose loop-carried value " +
                    std::to_string(k) + " changes from " + c.type(before).str() + " to " + c.type(next).str());
    Value y = c.g.where(runs, next, before, c.fresh("carried"));
    if (c.is_scalar(next) && c.is_scalar(before)) c.mark_scalar(y);
    return y;
}

// The Loop as a loop the module runs (Graph::loop), its body converted once into a graph of
// its own: what a loop the inputs' values decide becomes. nullopt where the body cannot be
// one (a value it needs known at import comes from the iteration number or a carried value,
// it reads a sequence, a carried value changes type, there are scan outputs, the graph has
// symbolic dimensions): the loop unrolls instead. `trips` / `dynamic_trips` and `go` / `cond`
// say what the trip count and the first condition are.
inline std::optional<std::vector<Value>> loop_of_kernels(Ctx& c, const pb::GraphProto& body, std::optional<int64_t> trips,
                                                         Value dynamic_trips, std::optional<bool> go, Value cond,
                                                         const std::string& why) {
    const size_t n = c.n_in() - 2;
    if (n == 0 || size_t(body.output_size()) != 1 + n || !c.g.symbols().empty()) return std::nullopt;
    if (dynamic_trips.defined() && c.type(dynamic_trips) != graph::TensorType{{1}, DataType::int_(64)}) return std::nullopt;
    // (Without a bound: the refusal that names it. Not unrolled, any bound will do.)
    const int64_t bound = c.max_loop_iterations > 0 ? c.max_loop_iterations : dynamic_iterations(c, 0, why);
    std::vector<Value> carried;
    std::vector<BodyInput> inputs{{graph::detail::kLoopIteration, {{1}, DataType::int_(64)}, true},
                                  {graph::detail::kLoopCondition, {{1}, DataType::bool_()}, true}};
    for (size_t k = 0; k < n; ++k) {
        carried.push_back(c.in(2 + k));
        inputs.push_back({graph::detail::loop_carried_name(k), c.type(carried.back()), c.is_scalar(carried.back())});
    }
    BodyImport b;
    try {
        b = c.import_body(body, inputs, [&](const std::vector<Value>& outs) {
            c.g.output(truth_of(c, outs[0]), graph::detail::kLoopCondition);
            for (size_t k = 0; k < n; ++k) {
                if (c.type(outs[1 + k]) != inputs[2 + k].type)
                    unsupported("loop-carried value " + std::to_string(k) + " changes type");
                c.g.output(outs[1 + k], graph::detail::loop_carried_name(k));
            }
        });
    } catch (const Error&) {  // (unrolled, the loop says what it cannot do, if anything)
        return std::nullopt;
    }
    Value m = dynamic_trips.defined() ? dynamic_trips
                                      : c.constant(int64_buffer({trips.value_or(std::numeric_limits<int64_t>::max())}, {1}), "trips");
    Value first = cond.defined() ? cond : c.constant(filled_buffer(DataType::bool_(), {1}, go.value_or(true) ? 1 : 0), "condition");
    const graph::LoopAttrs attrs{0, bound, "the Loop '" + c.node.name() + "' needs more than " + std::to_string(bound) +
                                               " iterations on these inputs (onnx::LoadOptions::max_loop_iterations)"};
    const auto body_graph = std::make_shared<const graph::Graph>(std::move(b.body));  // (one, however many read)
    std::vector<Value> results;
    for (size_t k = 0; k < n; ++k) {
        if (!c.wants(int(k))) {
            results.push_back(Value{});
            continue;
        }
        graph::LoopAttrs a = attrs;
        a.output = int64_t(k);
        results.push_back(c.g.loop(body_graph, m, first, carried, b.captured, a, c.out(int(k))));
        if (c.is_scalar(carried[k])) c.mark_scalar(results.back());
    }
    return results;
}

}  // namespace control_detail

// If: a condition known at import takes its branch alone. One that depends on the inputs'
// values imports both branches and selects each output (where on the condition): branches
// are free of side effects, so this is If's meaning, and a module runs only the branch taken
// (the kernels only a branch reads wait on the condition: graph/impl/guards.hpp). It needs
// the branches' outputs to agree in shape and dtype (a module's shapes are fixed when built).
inline std::vector<Value> convert_if(Ctx& c) {
    using namespace control_detail;
    const pb::GraphProto& then_branch = graph_attr(c, "then_branch");
    const pb::GraphProto& else_branch = graph_attr(c, "else_branch");
    auto checked = [&](std::vector<Value> outs) {
        if (int64_t(outs.size()) != c.node.output_size())
            malformed("the branch has " + std::to_string(outs.size()) + " outputs for " +
                      std::to_string(c.node.output_size()));
        return outs;
    };
    std::optional<bool> take;
    try {
        take = constant_truth(c, 0, "the condition");
    } catch (const UnsupportedError&) {  // decided by the inputs' values: both branches below
    }
    if (take) return checked(c.inline_graph(*take ? then_branch : else_branch, {}));
    Value cond = c.in(0);
    cond = truth_of(c, cond);
    std::vector<Value> a = checked(c.inline_graph(then_branch, {})), b = checked(c.inline_graph(else_branch, {}));
    std::vector<Value> outs;
    for (size_t k = 0; k < a.size(); ++k) {
        if (!a[k].defined() || !b[k].defined()) unsupported("an If on the inputs' values whose branches give sequences");
        const graph::TensorType &ta = c.type(a[k]), &tb = c.type(b[k]);
        if (ta != tb)
            unsupported("an If whose condition depends on the inputs' values and whose branches give output " +
                        std::to_string(k) + " as " + ta.str() + " and " + tb.str() +
                        " (both branches are compiled and one selected per run: their outputs must agree)");
        Value y = c.g.where(cond, a[k], b[k], c.out(int(k)));
        if (c.rank0.count(a[k].id) && c.rank0.count(b[k].id)) c.mark_scalar(y);
        outs.push_back(y);
    }
    return outs;
}

// Loop(M, cond, v...): body(iteration, cond, v...) -> (cond, v..., scan outputs...), unrolled;
// the scan outputs of the iterations stacked along a new first axis. Where the inputs' values
// decide how many iterations run (a trip count M or a condition computed from them), the
// loop unrolls LoadOptions::max_loop_iterations times and iteration i's results replace the
// loop-carried values only where it runs (a bool the graph computes: the last one ran, the
// condition holds, i < M); a run that would need more iterations fails its run-time check.
inline std::vector<Value> convert_loop(Ctx& c) {
    using namespace control_detail;
    const pb::GraphProto& body = graph_attr(c, "body");
    if (!c.has(0) && !c.has(1)) unsupported("a Loop without a trip count or a condition (it would not end)");
    // What is known at import: the trip count and the condition, each a value or a graph value.
    // `why`: what first made it the inputs' values' (the importer's message, naming the input).
    std::optional<int64_t> trips;
    Value dynamic_trips;
    std::string why;
    if (!c.has(0)) trips = std::numeric_limits<int64_t>::max();
    else try {
        trips = c.const_ints(0, "the trip count M").at(0);
    } catch (const UnsupportedError& e) {
        dynamic_trips = c.in(0);
        why = e.what();
    }
    std::optional<bool> go = true;
    Value cond;
    if (c.has(1)) try {
        go = constant_truth(c, 1, "the condition");
    } catch (const UnsupportedError& e) {
        go.reset();
        cond = truth_of(c, c.in(1));
        if (why.empty()) why = e.what();
    }
    std::vector<Value> carried;
    for (size_t k = 2; k < c.n_in(); ++k) carried.push_back(c.in(k));
    const int64_t scans = int64_t(body.output_size()) - 1 - int64_t(carried.size());
    if (scans < 0 || body.input_size() != int64_t(carried.size()) + 2)
        malformed("the body's inputs and outputs do not fit " + std::to_string(carried.size()) + " loop-carried values");
    // A loop the inputs decide runs as a loop of kernels where its body allows.
    const std::optional<bool> first_go = go;  // (go and cond change as iterations unroll)
    const Value first_cond = cond;
    auto as_loop = [&] { return loop_of_kernels(c, body, trips, dynamic_trips, first_go, first_cond, why); };
    if (scans == 0 && (dynamic_trips.defined() || cond.defined()))
        if (std::optional<std::vector<Value>> r = as_loop()) return *r;
    std::vector<std::vector<Value>> stacked(static_cast<size_t>(scans), std::vector<Value>{});
    Value ran;  // whether the last iteration ran, where the inputs' values decide it
    for (int64_t i = 0;; ++i) {
        if ((go && !*go) || (trips && i >= *trips)) break;
        Value index = c.mark_scalar(c.constant(int64_buffer({i}, {1}), "iteration"));
        // Whether iteration i runs: the last one ran (a where on it, so that a module skips
        // the test with the iteration: graph/impl/guards.hpp), the condition holds, i < M.
        Value runs = all_of(c, {cond, dynamic_trips.defined() ? c.add("less", {index, dynamic_trips}) : Value{}});
        if (ran.defined())
            runs = runs.defined() ? c.g.where(ran, runs, c.scalar(0, DataType::bool_(), "stopped"), c.fresh("runs")) : ran;
        if (runs.defined()) c.mark_scalar(runs);
        if (runs.defined() && i >= dynamic_iterations(c, scans, why)) {
            c.g.check_at_run(runs, "the Loop '" + c.node.name() + "' needs more than " + std::to_string(i) +
                                       " iterations on these inputs (onnx::LoadOptions::max_loop_iterations)");
            break;
        }
        if (i >= kMaxUnrolledIterations)
            unsupported("a Loop of more than " + std::to_string(kMaxUnrolledIterations) + " iterations (weft unrolls loops)");
        // (Where it runs, its condition is true; where it does not, its results are dropped.)
        std::vector<Value> bound{index, runs.defined() ? runs : c.mark_scalar(c.scalar(1, DataType::bool_(), "condition"))};
        bound.insert(bound.end(), carried.begin(), carried.end());
        std::vector<Value> outs = c.inline_graph(body, bound);
        for (size_t k = 0; k < carried.size(); ++k) carried[k] = kept_where(c, runs, outs[1 + k], carried[k], k);
        for (int64_t s = 0; s < scans; ++s) stacked[size_t(s)].push_back(outs[1 + carried.size() + size_t(s)]);
        if (!cond.defined()) try {  // (once the inputs' values decide it, they go on to)
            go = evaluated_truth(c, outs[0]);
        } catch (const UnsupportedError& e) {
            go.reset();
            if (why.empty()) why = e.what();
        }
        if (!go && !cond.defined() && scans == 0 && !dynamic_trips.defined())  // (decided by the data from now on)
            if (std::optional<std::vector<Value>> r = as_loop()) return *r;
        if (!go) cond = truth_of(c, outs[0]);
        ran = runs;
    }
    std::vector<Value> results;
    for (size_t k = 0; k < carried.size(); ++k) results.push_back(renamed(c, carried[k], c.out(int(k))));
    for (int64_t s = 0; s < scans; ++s) {
        if (stacked[size_t(s)].empty()) unsupported("a Loop that runs no iteration has empty scan outputs");
        results.push_back(stack(c, stacked[size_t(s)], 0, c.out(int(carried.size() + size_t(s)))));
    }
    return results;
}

// Scan (opset 9+): body(state..., slice...) -> (state..., out slice...) run once per step of
// the scan inputs' axis (reversed where a direction says so), unrolled; the out slices
// stacked along their output axes.
inline std::vector<Value> convert_scan(Ctx& c) {
    using namespace control_detail;
    if (c.opset < 9) unsupported("Scan of opset 8 (batched, with sequence_lens)");
    const pb::GraphProto& body = graph_attr(c, "body");
    const int64_t m = c.i("num_scan_inputs"), total = int64_t(c.n_in()), n = total - m;
    if (m < 1 || n < 0) malformed("num_scan_inputs " + std::to_string(m) + " for " + std::to_string(total) + " inputs");
    const int64_t k = int64_t(body.output_size()) - n;
    if (k < 0 || body.input_size() != total) malformed("the body's inputs and outputs do not fit the Scan's");
    auto per = [&](const char* name, int64_t count) {
        std::vector<int64_t> v = c.ints(name, std::vector<int64_t>(size_t(count), 0));
        if (int64_t(v.size()) != count) malformed(std::string(name) + " needs " + std::to_string(count) + " entries");
        return v;
    };
    const std::vector<int64_t> in_axes = per("scan_input_axes", m), in_dirs = per("scan_input_directions", m);
    const std::vector<int64_t> out_axes = per("scan_output_axes", k), out_dirs = per("scan_output_directions", k);
    std::vector<Value> state, scanned;
    for (int64_t j = 0; j < n; ++j) state.push_back(c.in(size_t(j)));
    int64_t steps = -1;
    std::vector<int64_t> axes;
    for (int64_t j = 0; j < m; ++j) {
        Value x = c.in(size_t(n + j));
        const int64_t a = norm_axis(in_axes[size_t(j)], c.rank(x));
        if (steps >= 0 && c.shape(x)[size_t(a)] != steps) malformed("the scan inputs have different lengths");
        steps = c.shape(x)[size_t(a)];
        scanned.push_back(x);
        axes.push_back(a);
    }
    if (steps > kMaxUnrolledIterations)
        unsupported("a Scan of more than " + std::to_string(kMaxUnrolledIterations) + " steps (weft unrolls scans)");
    std::vector<std::vector<Value>> outs(static_cast<size_t>(k), std::vector<Value>{});
    for (int64_t t = 0; t < steps; ++t) {
        std::vector<Value> bound = state;
        for (int64_t j = 0; j < m; ++j) {  // step t of scan input j, its axis dropped
            const int64_t at = in_dirs[size_t(j)] ? steps - 1 - t : t, a = axes[size_t(j)];
            Value x = scanned[size_t(j)];
            Value piece = c.g.slice(x, {at}, {at + 1}, {a}, {1}, c.fresh("step"));
            std::vector<int64_t> s = c.shape(piece);
            s.erase(s.begin() + a);
            bound.push_back(s.empty() ? c.mark_scalar(reshape(c, piece, {1})) : reshape(c, piece, s));
        }
        std::vector<Value> res = c.inline_graph(body, bound);
        for (int64_t j = 0; j < n; ++j) state[size_t(j)] = res[size_t(j)];
        for (int64_t j = 0; j < k; ++j) outs[size_t(j)].push_back(res[size_t(n + j)]);
    }
    std::vector<Value> results;
    for (int64_t j = 0; j < n; ++j) results.push_back(renamed(c, state[size_t(j)], c.out(int(j))));
    for (int64_t j = 0; j < k; ++j) {
        std::vector<Value> parts = outs[size_t(j)];
        if (parts.empty()) unsupported("a Scan of no steps has empty scan outputs");
        if (out_dirs[size_t(j)]) std::reverse(parts.begin(), parts.end());
        results.push_back(stack(c, parts, out_axes[size_t(j)], c.out(int(n + j))));
    }
    return results;
}

}  // namespace weft::onnx::detail

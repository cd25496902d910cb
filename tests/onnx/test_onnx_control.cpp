// The ONNX importer's control flow: If on a constant (or constant-computed) condition takes
// one branch, on the inputs' values it selects between both; Loop with a constant trip count
// unrolls, and one the inputs' values decide unrolls to a bound, checked at run time.
#include <doctest/doctest.h>

#include "onnx/onnx_model.hpp"

using namespace weft;
using namespace onnx_test;

namespace {

// A subgraph attribute `name` on node n: outputs `outs`, nodes added by `build`.
template <class F>
pb::GraphProto& graph_attr(pb::NodeProto& n, const std::string& name, F build) {
    auto& a = attr(n, name, pb::AttributeProto::GRAPH);
    pb::GraphProto* g = a.mutable_g();
    g->set_name(name);
    build(*g);
    return *g;
}

pb::NodeProto& add_node(pb::GraphProto& g, const std::string& op, std::vector<std::string> ins,
                        std::vector<std::string> outs) {
    auto* n = g.add_node();
    n->set_op_type(op);
    n->set_name(outs.at(0));
    for (auto& i : ins) n->add_input(i);
    for (auto& o : outs) n->add_output(o);
    return *n;
}

void add_value(google::protobuf::RepeatedPtrField<pb::ValueInfoProto>* list, const std::string& name, int elem) {
    auto* vi = list->Add();
    vi->set_name(name);
    vi->mutable_type()->mutable_tensor_type()->set_elem_type(elem);
}

// A Loop body's inputs: the iteration count, the condition and one float loop-carried value.
void loop_inputs(pb::GraphProto& g, const std::string& i, const std::string& cond, const std::string& value) {
    add_value(g.mutable_input(), i, pb::TensorProto::INT64);
    add_value(g.mutable_input(), cond, pb::TensorProto::BOOL);
    add_value(g.mutable_input(), value, pb::TensorProto::FLOAT);
}

// y = If(sum(c) > 0) then x * 2 else x + 10, the condition a constant computed from `c`.
Model if_model(const std::vector<float>& c, bool condition_is_input) {
    Model m(13);
    m.input("x", {3});
    if (condition_is_input) m.input("cond", {}, pb::TensorProto::BOOL);
    else {
        m.initializer("c", {int64_t(c.size())}, c);
        m.initializer("zero", {}, {0.f});
        set_int(m.node("ReduceSum", {"c"}, {"s"}), "keepdims", 0);
        m.node("Greater", {"s", "zero"}, {"cond"});
    }
    m.initializer("two", {1}, {2.f});
    m.initializer("ten", {1}, {10.f});
    auto& n = m.node("If", {"cond"}, {"y"});
    graph_attr(n, "then_branch", [](pb::GraphProto& g) {
        add_node(g, "Mul", {"x", "two"}, {"then_y"});
        add_value(g.mutable_output(), "then_y", pb::TensorProto::FLOAT);
    });
    graph_attr(n, "else_branch", [](pb::GraphProto& g) {
        add_node(g, "Add", {"x", "ten"}, {"else_y"});
        add_value(g.mutable_output(), "else_y", pb::TensorProto::FLOAT);
    });
    m.output("y");
    return m;
}

}  // namespace

TEST_CASE("onnx If: a condition computed from constants picks its branch at import") {
    Buffer<float> x = Buffer<float>::random({3}, -1.f, 1.f, 1);
    for (bool positive : {true, false}) {
        CAPTURE(positive);
        Model m = if_model(positive ? std::vector<float>{1, 2} : std::vector<float>{-1, -2}, false);
        Buffer<float> y = run(m.load(), {x})[0];
        for (int i = 0; i < 3; ++i) CHECK(y.data()[i] == (positive ? x.data()[i] * 2 : x.data()[i] + 10));
    }
    // Frozen, a condition the inputs would decide picks its branch at import too.
    Model runtime = if_model({}, true);
    weft::onnx::LoadOptions o;
    BufferRef t = BufferRef::allocate(DataType::bool_(), {});
    *static_cast<bool*>(t.data()) = true;
    o.constant_inputs["cond"] = t;
    graph::Graph frozen = runtime.load(o);
    Buffer<float> y = run(frozen, {x})[0];
    CHECK(y.data()[1] == x.data()[1] * 2);
    CHECK(!frozen.find("else_y"));  // only the branch taken
}

TEST_CASE("onnx If: a condition the inputs decide selects a branch per run, the other skipped") {
    Model m = if_model({}, true);
    graph::Module mod = graph::build(m.load());
    Buffer<float> x = Buffer<float>::random({3}, -1.f, 1.f, 2);
    mod.set_input("x", x);
    for (bool cond : {true, false, true}) {
        CAPTURE(cond);
        BufferRef c = BufferRef::allocate(DataType::bool_(), {1});
        *static_cast<bool*>(c.data()) = cond;
        mod.set_input("cond", c);
        mod.run();
        Buffer<float> y = Buffer<float>(mod.get_output(0)).copy();
        for (int i = 0; i < 3; ++i) CHECK(y.data()[i] == (cond ? x.data()[i] * 2 : x.data()[i] + 10));
        // Each branch is a kernel of its own that runs only when taken.
        for (const graph::KernelTiming& t : mod.profile(1).kernels) {
            const graph::KernelInfo& k = mod.kernels()[size_t(t.index)];
            CHECK(t.runs == (k.condition < 0 || k.condition_value == cond ? 1 : 0));
        }
    }
    int branches = 0;
    for (const graph::KernelInfo& k : mod.kernels()) branches += k.condition >= 0;
    CHECK(branches == 2);
    // Branches whose outputs differ in shape cannot be selected between: refused, saying why.
    Model bad = if_model({}, true);
    auto* else_branch = bad.g->mutable_node(0)->mutable_attribute(1)->mutable_g();
    else_branch->mutable_node(0)->set_op_type("ReduceSum");  // ReduceSum(x, ten): a scalar, not [3]
    else_branch->mutable_node(0)->set_input(1, "");
    std::string e = error_of([&] { bad.load(); });
    CHECK(e.find("(If, opset 13)") != std::string::npos);
    CHECK(e.find("branches give output 0 as float32[3] and float32[1]") != std::string::npos);
}

TEST_CASE("onnx Loop: a constant trip count unrolls; loop-carried values and scan outputs") {
    // for i in 0..M-1: acc = acc + x * i; scan out acc (after the step).
    for (int64_t trips : {1, 4}) {
        CAPTURE(trips);
        Model m(13);
        m.input("x", {2});
        m.initializer_i64("M", {}, {trips});
        m.initializer("acc0", {2}, {0.f, 1.f});
        auto& n = m.node("Loop", {"M", "", "acc0"}, {"acc", "history"});
        graph_attr(n, "body", [](pb::GraphProto& g) {
            loop_inputs(g, "i", "cond_in", "acc_in");
            set_int(add_node(g, "Cast", {"i"}, {"i_f"}), "to", pb::TensorProto::FLOAT);
            add_node(g, "Mul", {"x", "i_f"}, {"step"});
            add_node(g, "Add", {"acc_in", "step"}, {"acc_out"});
            add_node(g, "Identity", {"cond_in"}, {"cond_out"});
            add_node(g, "Identity", {"acc_out"}, {"scan"});
            add_value(g.mutable_output(), "cond_out", pb::TensorProto::BOOL);
            add_value(g.mutable_output(), "acc_out", pb::TensorProto::FLOAT);
            add_value(g.mutable_output(), "scan", pb::TensorProto::FLOAT);
        });
        m.output("acc");
        m.output("history");
        graph::Graph g = m.load();
        Buffer<float> x = Buffer<float>::random({2}, -1.f, 1.f, 2);
        auto outs = run(g, {x});
        REQUIRE(outs[1].shape() == std::vector<int64_t>{trips, 2});
        float acc[2] = {0.f, 1.f};
        for (int64_t i = 0; i < trips; ++i)
            for (int k = 0; k < 2; ++k) {
                acc[k] += x.data()[k] * float(i);
                CHECK(outs[1].data()[i * 2 + k] == doctest::Approx(acc[k]));
            }
        CHECK(outs[0].data()[0] == doctest::Approx(acc[0]));
        CHECK(outs[0].data()[1] == doctest::Approx(acc[1]));
    }
}

// while (cond and i < M): acc = acc * 2 + x; cond = sum(acc) < limit. M and the limit are
// graph inputs (M omitted: a while loop); no scan output unless `scan`. With `unrolled`, the
// body slices acc from i * 0, which the importer needs as a constant: the loop cannot run
// as a loop of kernels (whose i is known only when it runs) and unrolls.
// With `first_constant`, the first condition is sum(acc0) < 2 (true, known at import): the
// data decides from the first iteration's condition on.
Model while_model(bool with_trips, bool scan = false, bool unrolled = false, bool first_constant = false) {
    Model m(13);
    m.input("x", {2});
    m.input("limit", {});
    if (with_trips) m.input("M", {}, pb::TensorProto::INT64);
    m.initializer("acc0", {2}, {0.f, 0.f});
    m.initializer("two", {1}, {2.f});
    m.node("ReduceSum", {"acc0"}, {"s0"});  // (keepdims: [1], a condition of one value)
    m.node("Less", {"s0", first_constant ? "two" : "limit"}, {"cond0"});
    auto& n = m.node("Loop", {with_trips ? "M" : "", "cond0", "acc0"}, scan ? std::vector<std::string>{"acc", "trace"}
                                                                            : std::vector<std::string>{"acc"});
    if (unrolled) {
        m.initializer_i64("zero", {1}, {0});
        m.initializer_i64("end", {1}, {2});
    }
    graph_attr(n, "body", [scan, unrolled](pb::GraphProto& g) {
        loop_inputs(g, "i", "cond_in", "acc_in");
        add_node(g, "Mul", {"acc_in", "two"}, {"doubled"});
        if (unrolled) {
            add_node(g, "Mul", {"i", "zero"}, {"start"});
            add_node(g, "Slice", {"doubled", "start", "end"}, {"whole"});
            add_node(g, "Add", {"whole", "x"}, {"acc_out"});
        } else {
            add_node(g, "Add", {"doubled", "x"}, {"acc_out"});
        }
        add_node(g, "ReduceSum", {"acc_out"}, {"s"});
        add_node(g, "Less", {"s", "limit"}, {"cond_out"});
        add_value(g.mutable_output(), "cond_out", pb::TensorProto::BOOL);
        add_value(g.mutable_output(), "acc_out", pb::TensorProto::FLOAT);
        if (scan) {
            add_node(g, "Identity", {"acc_out"}, {"step"});
            add_value(g.mutable_output(), "step", pb::TensorProto::FLOAT);
        }
    });
    m.output("acc");
    if (scan) m.output("trace");
    return m;
}

// The loop above on the host: the final acc and the iterations it took.
std::pair<std::vector<float>, int64_t> while_reference(const float* x, float limit, int64_t trips) {
    std::vector<float> acc{0.f, 0.f};
    int64_t i = 0;
    for (; i < trips && acc[0] + acc[1] < limit; ++i)
        for (int k = 0; k < 2; ++k) acc[size_t(k)] = acc[size_t(k)] * 2 + x[k];
    return {acc, i};
}

TEST_CASE("onnx Loop: a condition and a trip count the inputs decide run to a bound, checked per run") {
    weft::onnx::LoadOptions o;
    o.max_loop_iterations = 8;
    for (auto [with_trips, unrolled] : {std::pair{false, false}, {true, false}, {false, true}, {true, true}}) {
        CAPTURE(with_trips);
        CAPTURE(unrolled);
        graph::Module mod = graph::build(while_model(with_trips, false, unrolled).load(o));
        REQUIRE(mod.num_outputs() == 1);  // the run-time check is not an output
        Buffer<float> x({2});
        x(0) = 1.f, x(1) = 0.5f;
        mod.set_input("x", x);
        // limits that stop the loop after 0, 1, 3 and 8 iterations, trip counts below and at them
        for (float limit : {-1.f, 1.f, 10.f, 380.f})
            for (int64_t trips : {int64_t(0), int64_t(2), int64_t(8)}) {
                if (!with_trips && trips != 8) continue;
                CAPTURE(limit);
                CAPTURE(trips);
                Buffer<float> l({1});
                l(0) = limit;
                mod.set_input("limit", l);
                if (with_trips) {
                    Buffer<int64_t> m({1});
                    m(0) = trips;
                    mod.set_input("M", m);
                }
                auto [want, iterations] = while_reference(x.data(), limit, with_trips ? trips : 100);
                REQUIRE(iterations <= 8);
                mod.run();
                Buffer<float> y(mod.get_output("acc"));
                CHECK(y(0) == want[0]);
                CHECK(y(1) == want[1]);
            }
        int skipped = 0;
        if (unrolled) {
            // Unrolled, iterations past the loop's end are skipped: their kernels wait on the
            // flag that says whether the iteration runs (KernelInfo::condition), false there.
            int guarded = 0;
            for (const graph::KernelInfo& k : mod.kernels()) guarded += k.condition >= 0;
            CHECK(guarded >= 8);
            for (const graph::KernelTiming& t : mod.profile(1).kernels) skipped += t.runs == 0;  // (the last limit: 8)
            CHECK(skipped == 0);
        } else {
            // A loop of kernels: the body compiled once, run as many times as the data says.
            int loops = 0;
            for (const graph::KernelInfo& k : mod.kernels()) loops += k.name == "loop";
            CHECK(loops == 1);
            CHECK(mod.kernels().size() <= 3);
        }
        Buffer<float> l({1});
        l(0) = 1.f;  // one iteration
        mod.set_input("limit", l);
        if (with_trips) {
            Buffer<int64_t> m({1});
            m(0) = 8;
            mod.set_input("M", m);
        }
        if (unrolled) {
            for (const graph::KernelTiming& t : mod.profile(1).kernels) skipped += t.runs == 0;
            CHECK(skipped >= 7);
        } else {
            mod.run();
        }
        CHECK(Buffer<float>(mod.get_output(0))(0) == while_reference(x.data(), 1.f, 100).first[0]);
        // A run that needs a ninth iteration fails, naming the bound; the next one is fine.
        l(0) = 1000.f;
        mod.set_input("limit", l);
        if (with_trips) {
            Buffer<int64_t> m({1});
            m(0) = 9;
            mod.set_input("M", m);
        }
        std::string e = error_of([&] { mod.run(); });
        CHECK(e.find("needs more than 8 iterations") != std::string::npos);
        CHECK(e.find("max_loop_iterations") != std::string::npos);
        l(0) = 10.f;
        mod.set_input("limit", l);
        mod.run();
        CHECK(Buffer<float>(mod.get_output(0))(0) == while_reference(x.data(), 10.f, 100).first[0]);
    }
}

TEST_CASE("onnx Loop: a condition known at first and then decided by the data runs as a loop of kernels") {
    weft::onnx::LoadOptions o;
    o.max_loop_iterations = 8;
    graph::Module mod = graph::build(while_model(false, false, false, true).load(o));
    int loops = 0;
    for (const graph::KernelInfo& k : mod.kernels()) loops += k.name == "loop";
    CHECK(loops == 1);
    Buffer<float> x({2});
    x(0) = 0.25f, x(1) = 1.5f;
    mod.set_input("x", x);
    for (float limit : {1.f, 10.f, 300.f}) {
        CAPTURE(limit);
        Buffer<float> l({1});
        l(0) = limit;
        mod.set_input("limit", l);
        mod.run();
        auto [want, iterations] = while_reference(x.data(), limit, 100);
        REQUIRE(iterations <= 8);
        CHECK(Buffer<float>(mod.get_output(0))(0) == want[0]);
        CHECK(Buffer<float>(mod.get_output(0))(1) == want[1]);
    }
}

TEST_CASE("onnx Loop: one the inputs decide needs a bound and no scan outputs, else it is refused") {
    std::string e = error_of([&] { while_model(false).load(); });
    CHECK(e.find("(Loop, opset 13)") != std::string::npos);
    CHECK(e.find("set onnx::LoadOptions::max_loop_iterations") != std::string::npos);
    CHECK(e.find("depends on the graph input 'limit'") != std::string::npos);  // which input decides it
    weft::onnx::LoadOptions o;
    o.max_loop_iterations = 4;
    e = error_of([&] { while_model(true, true).load(o); });
    CHECK(e.find("a Loop with scan outputs needs its iterations known at import") != std::string::npos);
    CHECK(e.find("'M') must be a constant, but it is a graph input") != std::string::npos);
    o.max_loop_iterations = 100000;  // a loop of kernels takes any bound; an unrolled one, not
    CHECK_NOTHROW(while_model(true).load(o));
    e = error_of([&] { while_model(true, false, true).load(o); });
    CHECK(e.find("is more than weft unrolls") != std::string::npos);
    // Frozen inputs make the same loop one the importer counts: no bound needed.
    weft::onnx::LoadOptions frozen;
    Buffer<float> limit(std::vector<int64_t>{});
    limit.data()[0] = 10.f;
    frozen.constant_inputs["limit"] = limit;
    Buffer<float> x({2});
    x(0) = 1.f, x(1) = 0.5f;
    frozen.constant_inputs["x"] = x;
    graph::Graph g = while_model(false).load(frozen);
    graph::Module mod = graph::build(g);
    mod.run();
    CHECK(Buffer<float>(mod.get_output(0))(1) == while_reference(x.data(), 10.f, 100).first[1]);
}

TEST_CASE("onnx sequences are lists known at import: split, insert, erase, at, length, concat") {
    // x [6, 2] split into 3 pieces of 2 rows; the middle one erased, x's first two rows
    // inserted at the front; y = concat of the sequence along 0, n = its length, z = element 1.
    Model m(13);
    m.input("x", {6, 2});
    m.initializer_i64("two", {}, {2});
    m.initializer_i64("one", {}, {1});
    m.initializer_i64("zero", {}, {0});
    m.node("SplitToSequence", {"x", "two"}, {"seq"});
    m.node("SequenceErase", {"seq", "one"}, {"seq2"});
    m.node("SequenceAt", {"seq", "zero"}, {"first"});
    m.node("SequenceInsert", {"seq2", "first", "zero"}, {"seq3"});
    set_int(m.node("ConcatFromSequence", {"seq3"}, {"y"}), "axis", 0);
    m.node("SequenceLength", {"seq3"}, {"n"});
    m.node("SequenceAt", {"seq3", "one"}, {"z"});
    m.output("y");
    m.output("n", pb::TensorProto::INT64);
    m.output("z");
    graph::Graph g = m.load();
    Buffer<float> x = Buffer<float>::random({6, 2}, -1.f, 1.f, 3);
    graph::Module mod = graph::build(g);
    mod.set_input("x", x);
    mod.run();
    Buffer<float> y(mod.get_output("y")), z(mod.get_output("z"));
    Buffer<int64_t> n(mod.get_output("n"));
    // The pieces after erasing: rows 0-1 (inserted), 0-1, 4-5.
    const int rows[] = {0, 1, 0, 1, 4, 5};
    REQUIRE(y.shape() == std::vector<int64_t>{6, 2});
    for (int r = 0; r < 6; ++r)
        for (int k = 0; k < 2; ++k) CHECK(y.data()[r * 2 + k] == x.data()[rows[r] * 2 + k]);
    CHECK(n.data()[0] == 3);
    CHECK(z.data()[0] == x.data()[0]);
    // A sequence is not a graph output, and a tensor operator does not take one.
    Model bad(13);
    bad.input("x", {4});
    bad.node("SplitToSequence", {"x"}, {"seq"});
    bad.node("Relu", {"seq"}, {"y"});
    bad.output("y");
    CHECK(error_of([&] { bad.load(); }).find("input 0 is a sequence") != std::string::npos);
}

TEST_CASE("onnx Loop: nested loops of empty bodies end in an error, not a hang") {
    // Loop(4096) of Loop(4096) of a body that adds no node: 16M iterations of nothing.
    Model m(13);
    m.input("x", {2});
    m.initializer_i64("M", {}, {4000});
    auto& outer = m.node("Loop", {"M", "", "x"}, {"y"});
    graph_attr(outer, "body", [](pb::GraphProto& g) {
        loop_inputs(g, "i", "c", "v");
        auto& inner = add_node(g, "Loop", {"M", "", "v"}, {"v_out"});
        graph_attr(inner, "body", [](pb::GraphProto& b) {
            loop_inputs(b, "j", "c2", "w");
            add_value(b.mutable_output(), "c2", pb::TensorProto::BOOL);
            add_value(b.mutable_output(), "w", pb::TensorProto::FLOAT);
        });
        add_value(g.mutable_output(), "c", pb::TensorProto::BOOL);
        add_value(g.mutable_output(), "v_out", pb::TensorProto::FLOAT);
    });
    m.output("y");
    std::string e = error_of([&] { m.load(); });
    CHECK(e.find("subgraph conversions") != std::string::npos);
}

TEST_CASE("onnx sequences made in a Loop body belong to each iteration") {
    // Each iteration builds a sequence (v, v) and concatenates it: the name is defined once
    // per iteration, in the body's scope, not twice in the model's.
    Model m(13);
    m.input("x", {2});
    m.initializer_i64("M", {}, {2});
    auto& n = m.node("Loop", {"M", "", "x"}, {"y"});
    graph_attr(n, "body", [](pb::GraphProto& g) {
        loop_inputs(g, "i", "c", "v");
        add_node(g, "SequenceConstruct", {"v", "v"}, {"pair"});
        set_int(add_node(g, "ConcatFromSequence", {"pair"}, {"both"}), "axis", 0);
        add_node(g, "ReduceSum", {"both"}, {"total"});
        add_node(g, "Add", {"v", "total"}, {"v_out"});
        add_value(g.mutable_output(), "c", pb::TensorProto::BOOL);
        add_value(g.mutable_output(), "v_out", pb::TensorProto::FLOAT);
    });
    m.output("y");
    Buffer<float> x = Buffer<float>::random({2}, -1.f, 1.f, 4);
    Buffer<float> y = run(m.load(), {x})[0];
    float v[2] = {x.data()[0], x.data()[1]};
    for (int it = 0; it < 2; ++it) {
        const float total = 2 * (v[0] + v[1]);
        v[0] += total, v[1] += total;
    }
    CHECK(y.data()[0] == doctest::Approx(v[0]));
    CHECK(y.data()[1] == doctest::Approx(v[1]));
}

TEST_CASE("onnx ConcatFromSequence with new_axis stacks scalars into a vector") {
    Model m(13);
    m.input("a", {});
    m.input("b", {});
    m.node("SequenceConstruct", {"a", "b"}, {"seq"});
    auto& cat = m.node("ConcatFromSequence", {"seq"}, {"y"});
    set_int(cat, "axis", 0);
    set_int(cat, "new_axis", 1);
    m.output("y");
    Buffer<float> a({1}), b({1});
    a(0) = 1.5f, b(0) = -2.f;
    graph::Module mod = graph::build(m.load());
    mod.set_input("a", a);
    mod.set_input("b", b);
    mod.run();
    Buffer<float> y(mod.get_output("y"));
    REQUIRE(y.shape() == std::vector<int64_t>{2});  // not [2, 1]: a scalar has no axis to keep
    CHECK(y(0) == 1.5f);
    CHECK(y(1) == -2.f);
}

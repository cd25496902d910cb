// Empty tensors at import (ops_empty.hpp): graph inputs and initializers with a 0 in their
// shape are types, not module inputs; element-wise operators keep them empty, reductions over
// an empty set give their identity, CastLike reads only the dtype of an empty `like`.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "onnx/onnx_model.hpp"

using namespace weft;
using namespace onnx_test;

namespace {

graph::Module build_of(const Model& m, const weft::onnx::LoadOptions& o = {}) { return graph::build(m.load(o)); }

}  // namespace

TEST_CASE("onnx: reductions over an empty set give their identity; the empty input is no module input") {
    struct Case {
        const char* op;
        float want;
    };
    const float inf = std::numeric_limits<float>::infinity();
    for (Case k : {Case{"ReduceSum", 0.f}, Case{"ReduceProd", 1.f}, Case{"ReduceMax", -inf}, Case{"ReduceMin", inf},
                   Case{"ReduceL1", 0.f}, Case{"ReduceL2", 0.f}, Case{"ReduceSumSquare", 0.f},
                   Case{"ReduceLogSum", -inf}, Case{"ReduceLogSumExp", -inf}}) {
        CAPTURE(k.op);
        Model m(18);
        m.input("data", {2, 0, 4});
        m.initializer_i64("axes", {1}, {1});
        m.node(k.op, {"data", "axes"}, {"y"});
        m.output("y");
        graph::Module mod = build_of(m);
        CHECK(mod.num_inputs() == 0);
        mod.run();
        Buffer<float> y = Buffer<float>(mod.get_output(0)).copy();
        REQUIRE(y.shape() == std::vector<int64_t>{2, 1, 4});
        for (int64_t i = 0; i < y.size(); ++i) CHECK(y.data()[i] == k.want);
    }
    // Integers: the lowest value of the type for ReduceMax, the highest for ReduceMin.
    for (const char* op : {"ReduceMax", "ReduceMin"}) {
        Model m(18);
        m.input("data", {3, 0}, pb::TensorProto::INT32);
        m.node(op, {"data"}, {"y"});
        onnx_test::set_int(m.g->mutable_node(0)[0], "keepdims", 0);
        m.output("y", pb::TensorProto::INT32);
        graph::Module mod = build_of(m);
        mod.run();
        Buffer<int32_t> y = Buffer<int32_t>(mod.get_output(0)).copy();
        CHECK(y.size() == 1);  // rank 0, held as [1]
        CHECK(y.data()[0] == (std::string(op) == "ReduceMax" ? std::numeric_limits<int32_t>::min()
                                                             : std::numeric_limits<int32_t>::max()));
    }
}

TEST_CASE("onnx: element-wise operators keep an empty tensor empty, so a reduction after them works") {
    // ReduceL1 as ONNX expands it: Abs, then ReduceSum; then a non-empty add.
    Model m(18);
    m.input("data", {2, 0, 3});
    m.input("x", {2, 1, 3});
    m.initializer_i64("axes", {1}, {1});
    m.node("Abs", {"data"}, {"a"});
    m.node("Mul", {"a", "a"}, {"sq"});
    m.node("ReduceSum", {"sq", "axes"}, {"s"});
    m.node("Add", {"s", "x"}, {"y"});
    m.output("y");
    graph::Module mod = build_of(m);
    REQUIRE(mod.num_inputs() == 1);
    Buffer<float> x = Buffer<float>::random({2, 1, 3}, -1.f, 1.f, 3);
    mod.set_input("x", x);
    mod.run();
    Buffer<float> y = Buffer<float>(mod.get_output(0)).copy();
    for (int64_t i = 0; i < y.size(); ++i) CHECK(y.data()[i] == x.data()[i]);

    // A reduction that keeps the empty extent is empty itself: no graph output can be.
    Model e(18);
    e.input("data", {2, 0, 4});
    e.initializer_i64("axes", {1}, {2});
    e.node("ReduceSum", {"data", "axes"}, {"y"});
    e.output("y");
    CHECK(error_of([&] { e.load(); }).find("the graph output 'y' is an output the importer does not compute (an empty tensor") !=
          std::string::npos);
}

TEST_CASE("onnx: CastLike takes the dtype of an empty like; frozen empty inputs must fit") {
    Model m(15);
    m.input("x", {3});
    m.input("like", {0}, pb::TensorProto::INT32);
    m.node("CastLike", {"x", "like"}, {"y"});
    m.output("y", pb::TensorProto::INT32);
    graph::Module mod = build_of(m);
    REQUIRE(mod.num_inputs() == 1);
    Buffer<float> x({3});
    x(0) = 1.f, x(1) = -2.f, x(2) = 7.f;
    mod.set_input("x", x);
    mod.run();
    Buffer<int32_t> y = Buffer<int32_t>(mod.get_output(0)).copy();
    CHECK((y(0) == 1 && y(1) == -2 && y(2) == 7));

    // An empty value frozen for an input that cannot be empty is refused.
    Model r(15);
    r.input("x", {3});
    r.input("like", {2}, pb::TensorProto::INT32);
    r.node("CastLike", {"x", "like"}, {"y"});
    r.output("y", pb::TensorProto::INT32);
    CHECK(error_of([&] { r.load({.constant_inputs = {{"like", BufferRef()}}}); }).find("does not fit") != std::string::npos);
}

TEST_CASE("onnx: Split and Slice may make empty pieces, which Concat leaves out") {
    // A rotary embedding over the whole head, as ONNX expands it: Split into the part to
    // rotate and an empty part to pass through, then Concat of the two.
    Model m(18);
    m.input("x", {2, 3, 8});
    m.initializer_i64("sizes", {2}, {8, 0});
    m.node("Split", {"x", "sizes"}, {"rotate", "pass"});
    onnx_test::set_int(m.g->mutable_node(0)[0], "axis", 2);
    m.node("Neg", {"rotate"}, {"rotated"});
    // Slice of a computed value to nothing (start past the end), also left out.
    m.initializer_i64("starts", {1}, {9});
    m.initializer_i64("ends", {1}, {12});
    m.initializer_i64("axes", {1}, {2});
    m.node("Slice", {"rotated", "starts", "ends", "axes"}, {"nothing"});
    m.node("Concat", {"rotated", "pass", "nothing"}, {"y"});
    onnx_test::set_int(m.g->mutable_node(3)[0], "axis", -1);
    m.output("y");
    graph::Module mod = build_of(m);
    Buffer<float> x = Buffer<float>::random({2, 3, 8}, -1.f, 1.f, 5);
    mod.set_input("x", x);
    mod.run();
    Buffer<float> y = Buffer<float>(mod.get_output(0)).copy();
    REQUIRE(y.shape() == std::vector<int64_t>{2, 3, 8});
    for (int64_t i = 0; i < y.size(); ++i) CHECK(y.data()[i] == -x.data()[i]);

    // An empty piece that an operator must read, or that is a graph output, is refused by name.
    Model r(18);
    r.input("x", {2, 8});
    r.initializer_i64("sizes", {2}, {8, 0});
    r.node("Split", {"x", "sizes"}, {"a", "b"});
    onnx_test::set_int(r.g->mutable_node(0)[0], "axis", 1);
    r.node("MatMul", {"a", "b"}, {"y"});
    r.output("y");
    CHECK(error_of([&] { r.load(); }).find("input 1 is an empty tensor") != std::string::npos);
    Model o(18);
    o.input("x", {2, 8});
    o.initializer_i64("starts", {1}, {3});
    o.initializer_i64("ends", {1}, {3});
    o.node("Slice", {"x", "starts", "ends"}, {"y"});
    o.output("y");
    CHECK(error_of([&] { o.load(); }).find("(an empty tensor, which weft's graphs do not output)") != std::string::npos);
}

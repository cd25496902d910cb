// OpDef::evaluate (graph/impl/host_evaluate.hpp): operators that only move data give on the
// host exactly what their compiled computation gives, for several dtypes, with and without
// the zero padding of a last partial block (and the integer arithmetic of shapes, declining
// what it cannot do exactly); fold_constants uses them and compiles no kernel for a
// constant part made of them, and mixes them with compiled folding.
#include <doctest/doctest.h>

#include <cstring>
#include <limits>

#include <weft/codegen/llvm/codegen_llvm.hpp>

#include "graph/graph_check.hpp"
#include "weft/graph/op_registry.hpp"
#include "weft/weft.hpp"

using namespace weft;

namespace {

// Random contents of any dtype (raw bytes: what moves is compared bit for bit).
BufferRef random_bytes(DataType dtype, std::vector<int64_t> shape, uint64_t seed) {
    BufferRef b = BufferRef::allocate(dtype, std::move(shape));
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 7;
    auto* p = static_cast<unsigned char*>(b.data());
    for (int64_t i = 0; i < b.size_bytes(); ++i) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        p[i] = static_cast<unsigned char>(s >> 56);
    }
    if (dtype == DataType::bool_())
        for (int64_t i = 0; i < b.size_bytes(); ++i) p[i] &= 1;
    return b;
}

// `op` with `attrs` on `xs`: evaluate on the host against the operator compiled (a graph of
// one node, built without passes). An evaluate that declines (an undefined buffer) must say
// so only where `may_decline`.
void check_op(const std::string& op, const graph::Attrs& attrs, const std::vector<BufferRef>& xs,
              bool may_decline = false) {
    CAPTURE(op);
    CAPTURE(attrs.str());
    CAPTURE(xs[0].dtype().str());
    graph::Graph g;
    std::vector<graph::Value> in;
    for (size_t k = 0; k < xs.size(); ++k) in.push_back(g.input("x" + std::to_string(k), xs[k].shape(), xs[k].dtype()));
    graph::Value y = g.add_node(op, in, attrs, "y");
    g.output(y, "y");
    graph::Module m = graph::build(g, Target::host(), {.fold_constants = false, .convert_layout = false});
    for (size_t k = 0; k < xs.size(); ++k) m.set_input("x" + std::to_string(k), xs[k]);
    m.run();
    const graph::OpDef& def = graph::op_def(op);
    REQUIRE(def.evaluate);
    BufferRef host = def.evaluate(xs, attrs, g.type(y));
    if (!host.defined()) {
        CHECK(may_decline);
        return;
    }
    const BufferRef& want = m.get_output("y");
    REQUIRE(host.shape() == want.shape());
    REQUIRE(host.dtype() == want.dtype());
    CHECK(std::memcmp(host.data(), want.data(), size_t(want.size_bytes())) == 0);
}

void check_op(const std::string& op, const graph::Attrs& attrs, const BufferRef& x) { check_op(op, attrs, std::vector{x}); }

template <class T>
BufferRef values(std::vector<int64_t> shape, std::vector<T> v) {
    Buffer<T> b(std::move(shape));
    std::copy(v.begin(), v.end(), b.data());
    return b;
}

}  // namespace

TEST_CASE("host evaluation of weight packings, layout transforms, transposes, slices and reshapes matches their kernels") {
    uint64_t seed = 1;
    for (DataType t : {DataType::float_(32), DataType::int_(64), DataType::uint(8), DataType::float_(16)}) {
        check_op("transpose", {{"perm", std::vector<int64_t>{2, 0, 1}}}, random_bytes(t, {3, 4, 5}, seed++));
        check_op("transpose", {}, random_bytes(t, {2, 3, 1, 4}, seed++));  // reversed
        check_op("transpose", {{"perm", std::vector<int64_t>{0, 1}}}, random_bytes(t, {7, 9}, seed++));
        check_op("reshape", {{"shape", std::vector<int64_t>{4, -1}}}, random_bytes(t, {2, 6, 2}, seed++));
        check_op("flatten", {{"axis", int64_t(2)}}, random_bytes(t, {2, 3, 4, 5}, seed++));
        check_op("squeeze", {{"axes", std::vector<int64_t>{1}}}, random_bytes(t, {3, 1, 4}, seed++));
        check_op("unsqueeze", {{"axes", std::vector<int64_t>{0, 3}}}, random_bytes(t, {3, 4}, seed++));
        // Slices: a conv weight's taps, negative starts and ends, steps both ways, clamping.
        check_op("slice", {{"starts", std::vector<int64_t>{1, 0}}, {"ends", std::vector<int64_t>{2, 2}},
                           {"axes", std::vector<int64_t>{2, 3}}},
                 random_bytes(t, {4, 2, 3, 3}, seed++));
        check_op("slice", {{"starts", std::vector<int64_t>{-4, 7}}, {"ends", std::vector<int64_t>{100, -9}},
                           {"steps", std::vector<int64_t>{2, -3}}},
                 random_bytes(t, {9, 8}, seed++));
        // Constant padding (a bias padded to whole channel blocks), negative pads cropping.
        if (t != DataType::float_(16)) {
            check_op("pad", {{"pads", std::vector<int64_t>{0, 8}}}, random_bytes(t, {10}, seed++));
            check_op("pad", {{"pads", std::vector<int64_t>{1, -2, 0, 2, 3, -1}}, {"value", 5.0}},
                     random_bytes(t, {3, 6, 4}, seed++));
            check_op("pad", {{"pads", std::vector<int64_t>{-2, 0}}, {"value", 1.0}}, random_bytes(t, {3}, seed++));
        }
        check_op("pad", {{"pads", std::vector<int64_t>{2, 1}}, {"mode", std::string("reflect")}},
                 std::vector{random_bytes(t, {5}, seed++)}, true);  // compiled instead
        if (!t.is_float()) continue;  // (the blocked layout's operators are for float data)
        // Packed conv weights: blocks dividing the channels, last blocks filled up with zeros.
        check_op("pack_conv2d_weight", {{"ic_bn", int64_t(4)}, {"oc_bn", int64_t(8)}}, random_bytes(t, {16, 8, 3, 3}, seed++));
        check_op("pack_conv2d_weight", {{"ic_bn", int64_t(2)}, {"oc_bn", int64_t(4)}}, random_bytes(t, {10, 3, 1, 2}, seed++));
        check_op("pack_conv2d_weight", {{"ic_bn", int64_t(16)}, {"oc_bn", int64_t(16)}}, random_bytes(t, {5, 3, 7, 7}, seed++));
        check_op("pack_conv2d_weight", {{"oc_bn", int64_t(4)}, {"depthwise", int64_t(1)}},
                 random_bytes(t, {10, 1, 3, 3}, seed++));
        // NCHW <-> NCHW[b]c, a partial last block both ways.
        check_op("layout_transform", {{"to", std::string("NCHWc")}, {"block", int64_t(4)}}, random_bytes(t, {2, 6, 3, 5}, seed++));
        check_op("layout_transform", {{"to", std::string("NCHWc")}, {"block", int64_t(8)}}, random_bytes(t, {1, 16, 2, 2}, seed++));
        check_op("layout_transform", {{"to", std::string("NCHW")}, {"channels", int64_t(6)}}, random_bytes(t, {2, 2, 3, 5, 4}, seed++));
    }
    check_op("transpose", {{"perm", std::vector<int64_t>{1, 0}}}, random_bytes(DataType::bool_(), {5, 3}, seed++));
}

TEST_CASE("host evaluation of gathers, concats, casts and shape arithmetic matches their kernels") {
    uint64_t seed = 100;
    for (DataType t : {DataType::float_(32), DataType::int_(64), DataType::uint(8)}) {
        // Indices of both types, negative ones wrapped once, out-of-range ones clamped.
        check_op("gather", {{"axis", int64_t(1)}},
                 {random_bytes(t, {2, 5, 3}, seed++), values<int64_t>({2, 2}, {0, -1, 4, 7})});
        check_op("gather", {{"axis", int64_t(0)}}, {random_bytes(t, {6}, seed++), values<int32_t>({3}, {2, -6, -9})});
        check_op("gather", {{"axis", int64_t(-1)}}, {random_bytes(t, {3, 4}, seed++), values<int64_t>({1}, {3})});
        check_op("concat", {{"axis", int64_t(1)}},
                 {random_bytes(t, {2, 1, 3}, seed++), random_bytes(t, {2, 4, 3}, seed++), random_bytes(t, {2, 2, 3}, seed++)});
        check_op("concat", {{"axis", int64_t(-1)}}, {random_bytes(t, {3, 2}, seed++), random_bytes(t, {3, 5}, seed++)});
        check_op("concat", {{"axis", int64_t(0)}}, {random_bytes(t, {1}, seed++), random_bytes(t, {3}, seed++)});
    }
    const BufferRef big = values<int64_t>({5}, {0, -7, 123456789012345, -9223372036854775807 - 1, 4294967297});
    for (const char* to : {"int32", "int64", "float32", "float64", "int8", "uint8"})
        check_op("cast", {{"dtype", std::string(to)}}, {big});
    check_op("cast", {{"dtype", std::string("int64")}}, {values<int32_t>({3}, {-5, 0, 2147483647})});
    check_op("cast", {{"dtype", std::string("int64")}}, {values<float>({2}, {1.5f, -2.5f})}, true);  // compiled instead
    check_op("cast", {{"dtype", std::string("bool")}}, {values<int64_t>({2}, {0, 3})}, true);
    // Integer arithmetic: wrap-around, division toward zero, x / 0 = 0; broadcasting.
    const BufferRef a = values<int64_t>({2, 1, 3}, {7, -7, 9223372036854775807, 0, -1, 12});
    const BufferRef b = values<int64_t>({1, 2, 1}, {2, 0});
    for (const char* op : {"add", "sub", "mul", "div"}) {
        check_op(op, {}, {a, b});
        check_op(op, {}, {values<int32_t>({4}, {5, -5, 2147483647, -8}), values<int32_t>({1}, {-3})});
        check_op(op, {}, {values<float>({3}, {1.f, -2.5f, 3e38f}), values<float>({3, 1}, {0.f, 3.f, -1e-3f})});
        check_op(op, {}, {values<double>({2}, {1.0, -2.25}), values<double>({2}, {3.0, 0.5})});
        check_op(op, {}, {random_bytes(DataType::float_(16), {3}, seed++), random_bytes(DataType::float_(16), {3}, seed++)},
                 true);
    }
    // Comparisons, broadcasting, to bools: equal values, NaNs and signed zeros included.
    const float nan = std::numeric_limits<float>::quiet_NaN();
    for (const char* op : {"equal", "not_equal", "less", "less_equal", "greater", "greater_equal"}) {
        check_op(op, {}, {a, values<int64_t>({1, 2, 1}, {7, -1})});
        check_op(op, {}, {values<uint8_t>({4}, {0, 255, 7, 7}), values<uint8_t>({1}, {7})});
        check_op(op, {}, {values<float>({2, 3}, {1.f, nan, -0.f, 2.f, 3.f, nan}), values<float>({3}, {1.f, 1.f, 0.f})});
        check_op(op, {}, {values<double>({2}, {1.0, -2.25}), values<double>({2}, {1.0, 0.5})});
        check_op(op, {}, {random_bytes(DataType::float_(16), {3}, seed++), random_bytes(DataType::float_(16), {3}, seed++)},
                 true);
    }
}

TEST_CASE("fold_constants packs a CNN's weights on the host, compiling no kernel, and mixes in compiled folding") {
    // The blocked layout's weight packings (and a transposed dense weight) are the constant part.
    graph::Graph g;
    graph::Value x = g.input("x", {1, 8, 10, 10});
    graph::Value c = g.relu(g.conv2d(x, g.constant("w1", graph_check::random_buffer({16, 8, 3, 3}, 1)), {.pad = 1}));
    // (12 output channels with a bias: the bias padded to whole blocks, on the host too.)
    c = g.conv2d(c, g.constant("w2", graph_check::random_buffer({12, 16, 1, 1}, 2)),
                 g.constant("b2", graph_check::random_buffer({12}, 6)));
    g.output(g.dense(g.flatten(g.global_avg_pool2d(c)), g.constant("w3", graph_check::random_buffer({5, 12}, 3))), "y");
    const graph::Graph passes = graph::convert_conv_layout(graph::simplify_operators(g), Target::host());
    const uint64_t compiles = codegen::compile_llvm_count();
    graph::Graph folded = graph::fold_constants(passes);
    CHECK(codegen::compile_llvm_count() == compiles);
    int packed = 0;
    for (const graph::Node& n : folded.nodes()) packed += n.is_constant() && n.name.find(".packed") != std::string::npos;
    CHECK(packed == 2);

    // A constant part with an operator that has no host evaluation (exp), between host ones.
    graph::Graph h;
    graph::Value in = h.input("in", {4, 3});
    graph::Value k = h.transpose(h.constant("k", graph_check::random_buffer({3, 4}, 4)));        // host
    k = h.reshape(h.exp(k), {4, 3});                                                             // compiled, then host
    h.output(h.add(in, k), "out");
    graph::Module with = graph::build(h), without = graph::build(h, Target::host(), {.fold_constants = false});
    const BufferRef data = graph_check::random_buffer({4, 3}, 5);
    with.set_input("in", data);
    without.set_input("in", data);
    with.run();
    without.run();
    CHECK(graph_check::max_difference(with.get_output("out"), without.get_output("out")) < 1e-6);
}

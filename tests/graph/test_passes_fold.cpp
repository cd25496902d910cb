// Constant folding and scale-axis folding (batch_norm, per-channel mul / add into conv2d and
// dense): the structure each leaves, and the same outputs with the pass on and off.
#include "graph/pass_testing.hpp"

using namespace pass_testing;

namespace {

Buffer<float> rnd(std::vector<int64_t> shape, uint64_t seed, float lo = -1.f, float hi = 1.f) {
    return Buffer<float>::random(std::move(shape), lo, hi, seed);
}

// Batch norm with constant statistics over `channels`.
graph::Value add_batch_norm(graph::Graph& g, graph::Value x, int64_t channels, uint64_t seed, const std::string& name) {
    return g.batch_norm(x, g.constant(name + ".gamma", rnd({channels}, seed, 0.5f, 1.5f)),
                        g.constant(name + ".beta", rnd({channels}, seed + 1)),
                        g.constant(name + ".mean", rnd({channels}, seed + 2)),
                        g.constant(name + ".var", rnd({channels}, seed + 3, 0.5f, 1.5f)), 1e-3, name);
}

const graph::BuildOptions no_fold_scale{.fold_scale_axis = false};
const graph::BuildOptions no_fold_constants{.fold_constants = false};

}  // namespace

// ---- fold_constants ---------------------------------------------------------------------

TEST_CASE("constant folding evaluates a constant subgraph and keeps the name it is read by") {
    graph::Graph g;
    graph::Value x = g.input("x", {3, 8});
    graph::Value a = g.constant("a", rnd({3, 8}, 1)), b = g.constant("b", rnd({8}, 2));
    graph::Value folded = g.mul(g.exp(g.add(a, b, "ab"), "e"), b, "scale");  // constants only
    graph::Value y = g.add(x, folded, "y");
    g.output(g.relu(y), "out");

    graph::Graph h = graph::fold_constants(g);
    CHECK(ops_of(h) == Ops{"add", "relu"});
    REQUIRE(h.find("scale").has_value());
    const graph::Node& c = h.node(*h.find("scale"));
    CHECK(c.is_constant());
    CHECK(c.type.shape == std::vector<int64_t>{3, 8});
    CHECK_FALSE(h.find("ab").has_value());  // read only inside the folded part
    // Its value, element by element.
    const float* v = static_cast<const float*>(c.value.data());
    double worst = 0;
    for (int64_t i = 0; i < 3; ++i)
        for (int64_t j = 0; j < 8; ++j) {
            double want = std::exp(double(Buffer<float>(g.node(a).value)(i, j)) + Buffer<float>(g.node(b).value)(j)) *
                          Buffer<float>(g.node(b).value)(j);
            worst = std::max(worst, std::abs(v[i * 8 + j] - want) / std::max(1.0, std::abs(want)));
        }
    CHECK(worst < 1e-5);

    graph::Module m = graph::build(g);
    CHECK(m.kernels().size() == 1u);
    CHECK(max_output_difference(g, {}, no_fold_constants) < 1e-5);
}

TEST_CASE("constant folding folds reductions and keeps each value the rest of the graph reads") {
    graph::Graph g;
    graph::Value x = g.input("x", {4, 6});
    graph::Value w = g.constant("w", rnd({4, 6}, 3));
    graph::Value s = g.sum(w, {0}, false, "colsum");         // read by t and by the graph
    graph::Value t = g.sqrt(g.mul(s, s), "norm");            // constant too
    graph::Value y = g.div(g.sub(x, s, "centered"), t, "y");  // reads both
    g.output(y, "y");
    g.output(t, "norm");  // an output that is a constant after folding

    graph::Graph h = graph::fold_constants(g);
    CHECK(ops_of(h) == Ops{"sub", "div"});
    CHECK(h.node(*h.find("colsum")).is_constant());
    CHECK(h.node(*h.find("norm")).is_constant());
    CHECK(h.node(h.outputs()[1].second).name == "norm");
    CHECK(max_output_difference(g, {}, no_fold_constants) < 1e-5);

    // A graph with no constant operators comes back as it was.
    graph::Graph plain;
    plain.output(plain.relu(plain.add(plain.input("p", {4}), plain.constant("q", rnd({4}, 4)))), "r");
    CHECK(graph::fold_constants(plain).str() == plain.str());
}

TEST_CASE("constant folding folds a transpose and add of constants and a reshaped weight before batch norm folding") {
    graph::Graph g;
    graph::Value x = g.input("x", {2, 3, 8});
    graph::Value t = g.transpose(g.constant("a", rnd({8, 3}, 7)), {1, 0}, "t");  // [3, 8]
    graph::Value y = g.add(x, g.add(t, g.constant("b", rnd({3, 8}, 8)), "tb"), "y");
    g.output(y, "y");
    graph::Graph h = graph::fold_constants(g);
    CHECK(ops_of(h) == Ops{"add"});
    CHECK(h.node(*h.find("tb")).is_constant());
    CHECK(max_output_difference(g, {}, no_fold_constants) < 1e-6);

    // The weight is a reshape of a constant: folded first, so the batch norm folds into it.
    graph::Graph c;
    graph::Value in = c.input("x", {1, 2, 6, 6});
    graph::Value w = c.reshape(c.constant("flat", rnd({4 * 2 * 3 * 3}, 9)), {4, 2, 3, 3}, "w");
    graph::Value v = add_batch_norm(c, c.conv2d(in, w, {.pad = 1}, "conv"), 4, 90, "bn");
    c.output(v, "out");
    CHECK(ops_of(graph::build(c, Target::host(), {.convert_layout = false}).graph()) == Ops{"conv2d", "bias_add"});
    CHECK(max_output_difference(c, {}, no_passes()) < 1e-5);
}

TEST_CASE("a graph whose every output is constant builds to a module without kernels") {
    graph::Graph g;
    graph::Value x = g.input("x", {2});
    graph::Value c = g.constant("c", rnd({2, 5}, 5));
    g.output(g.relu(g.sub(c, g.constant("d", rnd({5}, 6)))), "r");
    graph::Module m = graph::build(g);
    CHECK(m.kernels().empty());
    CHECK(m.input_names() == std::vector<std::string>{"x"});
    (void)x;
    CHECK(max_output_difference(g, {}, no_fold_constants) < 1e-6);
}

// ---- fold_scale_axis --------------------------------------------------------------------

TEST_CASE("conv2d + batch_norm + relu folds to conv2d + bias_add + relu") {
    graph::Graph g;
    graph::Value x = g.input("x", {1, 3, 10, 10});
    graph::Value y = g.conv2d(x, g.constant("w", rnd({8, 3, 3, 3}, 10)), {.pad = 1}, "conv");
    y = add_batch_norm(g, y, 8, 20, "bn");
    g.output(g.relu(y, "relu"), "out");

    graph::Graph h = graph::eliminate_dead_code(graph::fold_scale_axis(g));
    CHECK(ops_of(h) == Ops{"conv2d", "bias_add", "relu"});
    CHECK(count_of(h, "constant") == 2);  // the scaled weight and the bias
    CHECK(h.node(*h.find("conv")).op == "conv2d");
    CHECK(h.node(*h.find("bn")).op == "bias_add");
    CHECK(h.find("w.folded").has_value());

    graph::Module m = graph::build(g, Target::host(), {.convert_layout = false});
    CHECK(ops_of(m.graph()) == Ops{"conv2d", "bias_add", "relu"});
    CHECK(m.kernels().size() == 1u);
    CHECK(max_output_difference(g, {}, no_fold_scale) < 1e-5);
}

TEST_CASE("an existing bias_add merges into the folded bias and grouped convolutions fold per output channel") {
    for (int64_t groups : {1, 2, 4}) {
        CAPTURE(groups);
        graph::Graph g;
        graph::Value x = g.input("x", {2, 4, 9, 9});
        graph::Value y = g.conv2d(x, g.constant("w", rnd({8, 4 / groups, 3, 3}, 11)), g.constant("b", rnd({8}, 12)),
                                  {.stride = 2, .pad = 1, .groups = groups}, "conv");
        y = add_batch_norm(g, y, 8, 30, "bn");
        g.output(y, "out");
        graph::Module m = graph::build(g, Target::host(), {.convert_layout = false});
        CHECK(ops_of(m.graph()) == Ops{"conv2d", "bias_add"});
        CHECK(max_output_difference(g, {}, no_fold_scale) < 1e-5);
    }
}

TEST_CASE("dense + mul + add by per-channel constants folds to dense + bias_add") {
    graph::Graph g;
    graph::Value x = g.input("x", {3, 12});
    graph::Value y = g.dense(x, g.constant("w", rnd({5, 12}, 40)), "fc");
    y = g.mul(y, g.constant("s", rnd({5}, 41)), "scale");
    y = g.add(g.constant("t", rnd({1, 5}, 42)), y, "shift");  // the constant on the left
    y = g.div(y, g.constant("d", rnd({5}, 43, 0.5f, 2.f)), "div");
    y = g.sub(y, g.constant("e", rnd({1}, 44)), "sub");  // one value for every channel
    g.output(g.tanh(y, "act"), "out");

    graph::Graph h = graph::eliminate_dead_code(graph::fold_scale_axis(g));
    CHECK(ops_of(h) == Ops{"dense", "bias_add", "tanh"});
    CHECK(h.node(*h.find("fc")).op == "dense");
    CHECK(h.node(*h.find("sub")).op == "bias_add");
    CHECK(max_output_difference(g, {}, no_fold_scale) < 1e-5);

    // Only a scale: no bias_add, and the dense takes the last step's name.
    graph::Graph s;
    graph::Value v = s.dense(s.input("x", {3, 12}), s.constant("w", rnd({5, 12}, 45)), "fc");
    s.output(s.mul(v, s.constant("s", rnd({5}, 46)), "scaled"), "out");
    graph::Graph hs = graph::fold_scale_axis(s);
    CHECK(ops_of(hs) == Ops{"dense"});
    CHECK(hs.node(hs.outputs()[0].second).name == "scaled");
    CHECK(max_output_difference(s, {}, no_fold_scale) < 1e-5);
}

TEST_CASE("conv2d + mul + add by [C, 1, 1] constants folds into the weight and the bias") {
    graph::Graph g;
    graph::Value x = g.input("x", {1, 4, 7, 7});
    graph::Value y = g.conv2d(x, g.constant("w", rnd({6, 4, 3, 3}, 50)), {}, "conv");
    y = g.add(g.mul(y, g.constant("s", rnd({6, 1, 1}, 51))), g.constant("t", rnd({1, 6, 1, 1}, 52)), "affine");
    g.output(g.relu(y), "out");
    CHECK(ops_of(graph::build(g, Target::host(), {.convert_layout = false}).graph()) == Ops{"conv2d", "bias_add", "relu"});
    CHECK(max_output_difference(g, {}, no_fold_scale) < 1e-5);
}

TEST_CASE("scale-axis folding leaves what it cannot fold") {
    // The conv2d's output is also read elsewhere: folding would change that reader.
    graph::Graph shared;
    graph::Value x = shared.input("x", {1, 3, 6, 6});
    graph::Value c = shared.conv2d(x, shared.constant("w", rnd({4, 3, 3, 3}, 60)), {.pad = 1}, "conv");
    shared.output(shared.add(add_batch_norm(shared, c, 4, 61, "bn"), c), "out");
    CHECK(ops_of(graph::fold_scale_axis(shared)) == Ops{"conv2d", "batch_norm", "add"});

    // A constant that varies along the spatial axes, a weight that is an input, an output
    // in the middle of the chain.
    graph::Graph spatial;
    graph::Value y = spatial.conv2d(spatial.input("x", {1, 3, 6, 6}), spatial.constant("w", rnd({4, 3, 3, 3}, 62)),
                                    {.pad = 1}, "conv");
    spatial.output(spatial.mul(y, spatial.constant("s", rnd({6, 6}, 63))), "out");
    CHECK(ops_of(graph::fold_scale_axis(spatial)) == Ops{"conv2d", "mul"});

    graph::Graph weight_input;
    graph::Value d = weight_input.dense(weight_input.input("x", {2, 4}), weight_input.input("w", {3, 4}), "fc");
    weight_input.output(weight_input.mul(d, weight_input.constant("s", rnd({3}, 64))), "out");
    CHECK(ops_of(graph::fold_scale_axis(weight_input)) == Ops{"dense", "mul"});

    graph::Graph middle;
    graph::Value m = middle.dense(middle.input("x", {2, 4}), middle.constant("w", rnd({3, 4}, 65)), "fc");
    graph::Value scaled = middle.mul(m, middle.constant("s", rnd({3}, 66)), "scaled");
    middle.output(scaled, "scaled");
    middle.output(middle.add(scaled, middle.constant("t", rnd({3}, 67))), "shifted");
    graph::Graph hm = graph::eliminate_dead_code(graph::fold_scale_axis(middle));
    CHECK(ops_of(hm) == Ops{"dense", "add"});  // fc * s folded, the add reads an output
    CHECK(max_output_difference(middle, {}, no_fold_scale) < 1e-5);

    // A conv2d with its bias and nothing more is left as it is.
    graph::Graph plain;
    plain.output(plain.conv2d(plain.input("x", {1, 3, 6, 6}), plain.constant("w", rnd({4, 3, 3, 3}, 68)),
                              plain.constant("b", rnd({4}, 69))),
                 "out");
    CHECK(graph::fold_scale_axis(plain).str() == plain.str());
}

TEST_CASE("the whole pipeline on a small network gives the outputs of the unoptimized graph") {
    graph::Graph g;
    graph::Value x = g.input("x", {1, 3, 8, 8});
    // Weights computed from constants (folded first), two identical branches (merged), a
    // conv + batch norm (folded), dead nodes (dropped).
    graph::Value w = g.mul(g.constant("w0", rnd({6, 3, 3, 3}, 70)), g.constant("two", rnd({1}, 71, 1.5f, 2.5f)), "w");
    graph::Value left = g.relu(add_batch_norm(g, g.conv2d(x, w, {.pad = 1}, "conv_l"), 6, 72, "bn_l"), "relu_l");
    graph::Value right = g.relu(add_batch_norm(g, g.conv2d(x, w, {.pad = 1}, "conv_r"), 6, 72, "bn_r"), "relu_r");
    g.exp(left, "dead");
    graph::Value y = g.add(left, right, "sum");
    g.output(g.softmax(g.dense(g.mean(y, {2, 3}), g.constant("fc", rnd({4, 6}, 80))), -1), "p");

    graph::Module m = graph::build(g, Target::host(), {.convert_layout = false});
    CHECK(ops_of(m.graph()) == Ops{"conv2d", "bias_add", "relu", "add", "mean", "matmul", "softmax"});
    CHECK(max_output_difference(g, {}, no_passes()) < 1e-5);
}

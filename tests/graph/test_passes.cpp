// The graph pass pipeline, dead-code elimination and common subexpression elimination: the
// structure each pass leaves, and the same outputs with the pass on and off.
#include "graph/pass_testing.hpp"

using namespace pass_testing;

TEST_CASE("the default pipeline lists its passes in order and leaves out those switched off") {
    CHECK(graph::default_pipeline({}).str() ==
          "eliminate_dead_code -> eliminate_common_subexpressions -> fold_constants -> fold_scale_axis -> "
          "simplify_operators -> convert_conv_layout -> convert_quantized_convs -> pack_matmul_weights -> fold_constants -> "
          "eliminate_dead_code");
    CHECK(graph::default_pipeline({.fold_constants = false, .fold_scale_axis = false, .simplify_operators = false,
                                   .convert_layout = false})
              .str() == "eliminate_dead_code -> eliminate_common_subexpressions");
    CHECK(graph::default_pipeline({.eliminate_dead_code = false, .eliminate_common_subexpressions = false,
                                   .convert_layout = false})
              .str() == "fold_constants -> fold_scale_axis -> simplify_operators -> fold_constants");
    // For a GPU the blocked layout (a CPU's vector width) is not converted to.
    CHECK(graph::default_pipeline({}, Target::cuda()).str() ==
          "eliminate_dead_code -> eliminate_common_subexpressions -> fold_constants -> fold_scale_axis -> "
          "simplify_operators -> fold_constants -> eliminate_dead_code");
    CHECK(graph::default_pipeline(no_passes()).empty());
    CHECK(graph::default_pipeline(no_passes()).str() == "(no passes)");
}

TEST_CASE("a custom pipeline runs its passes in the order they were added") {
    std::vector<std::string> ran;
    auto tag = [&](std::string name) {
        return graph::Pass{name, [&ran, name](const graph::Graph& g) {
                               ran.push_back(name);
                               return g;
                           }};
    };
    graph::PassPipeline p;
    p.add(tag("first")).add(tag("second")).add({"dce", graph::eliminate_dead_code}).add(tag("third"));
    CHECK(p.str() == "first -> second -> dce -> third");
    graph::Graph g;
    graph::Value x = g.input("x", {4});
    g.relu(x, "dead");
    g.output(g.exp(x, "e"), "y");
    graph::Graph h = p.run(g);
    CHECK(ran == std::vector<std::string>{"first", "second", "third"});
    CHECK(ops_of(h) == Ops{"exp"});
    CHECK(ops_of(g) == Ops{"relu", "exp"});  // the argument is left alone
    CHECK_THROWS_AS(p.add({"", graph::eliminate_dead_code}), weft::Error);
}

TEST_CASE("dead code elimination drops what no output reads and keeps every input in order") {
    graph::Graph g;
    graph::Value a = g.input("a", {2, 8});
    graph::Value unused = g.input("unused", {3});
    graph::Value b = g.input("b", {2, 8});
    graph::Value c = g.constant("c", Buffer<float>::random({8}, -1.f, 1.f, 1));
    g.constant("dead_const", Buffer<float>::random({8}, -1.f, 1.f, 2));
    graph::Value dead = g.exp(g.add(a, c), "dead_exp");
    g.sigmoid(dead, "dead_sigmoid");
    g.relu(unused, "dead_relu");
    g.output(g.mul(g.tanh(a, "t"), b, "prod"), "out");

    graph::Graph h = graph::eliminate_dead_code(g);
    CHECK(ops_of(h) == Ops{"tanh", "mul"});
    CHECK(h.size() == 5);  // a, unused, b, tanh, mul
    std::vector<std::string> inputs;
    for (graph::Value v : h.inputs()) inputs.push_back(h.node(v).name);
    CHECK(inputs == std::vector<std::string>{"a", "unused", "b"});
    CHECK(h.outputs().size() == 1);
    CHECK(h.outputs()[0].first == "out");
    CHECK(h.node(h.outputs()[0].second).name == "prod");
    CHECK(h.find("t").has_value());
    CHECK_FALSE(h.find("dead_exp").has_value());
    CHECK_FALSE(h.find("dead_const").has_value());

    // Nothing dead: the same graph back.
    graph::Graph again = graph::eliminate_dead_code(h);
    CHECK(again.str() == h.str());

    // build() runs it: fewer kernels, the same outputs, and the inputs stay settable.
    graph::Module on = graph::build(g), off = graph::build(g, Target::host(), no_passes());
    CHECK(on.kernels().size() == 1u);
    CHECK(off.kernels().size() > 1u);
    CHECK(on.input_names() == std::vector<std::string>{"a", "unused", "b"});
    CHECK(ops_of(on.graph()) == Ops{"tanh", "mul"});
    CHECK(max_output_difference(g, {}, no_passes()) == 0.0);
}

TEST_CASE("common subexpression elimination merges duplicate branches") {
    auto cv = Buffer<float>::random({16}, -1.f, 1.f, 3);
    graph::Graph g;
    graph::Value x = g.input("x", {4, 16});
    graph::Value c1 = g.constant("c1", cv), c2 = g.constant("c2", cv);  // equal values
    graph::Value left = g.relu(g.add(x, c1, "add_l"), "relu_l");
    graph::Value right = g.relu(g.add(x, c2, "add_r"), "relu_r");
    graph::Value other = g.leaky_relu(x, 0.1, "lr1");
    graph::Value differs = g.leaky_relu(x, 0.2, "lr2");  // other attributes: kept
    graph::Value same = g.leaky_relu(x, 0.1, "lr3");     // merged into lr1
    g.output(g.mul(left, right, "sq"), "sq");
    g.output(g.add(g.add(other, differs), same), "sum");
    g.output(right, "right");

    graph::Graph h = graph::eliminate_common_subexpressions(g);
    CHECK(count_of(h, "constant") == 1);
    CHECK(count_of(h, "relu") == 1);
    CHECK(count_of(h, "leaky_relu") == 2);
    CHECK(count_of(h, "add") == 3);  // one x + c, two sums
    graph::Value sq = h.outputs()[0].second;
    CHECK(h.node(sq).inputs[0] == h.node(sq).inputs[1]);  // relu_l * relu_l
    CHECK(h.node(h.outputs()[2].second).name == "relu_l");  // output "right" reads the survivor
    CHECK(h.outputs()[2].first == "right");
    CHECK_FALSE(h.find("relu_r").has_value());
    CHECK_FALSE(h.find("lr3").has_value());

    // Without merging constants the two x + c stay apart (their constants differ as nodes).
    graph::Graph k = graph::eliminate_common_subexpressions(g, false);
    CHECK(count_of(k, "constant") == 2);
    CHECK(count_of(k, "relu") == 2);
    CHECK(count_of(k, "leaky_relu") == 2);

    // Constants of equal bytes but another shape are not merged.
    graph::Graph s;
    graph::Value y = s.input("y", {2, 8});
    graph::Value flat = s.constant("flat", Buffer<float>::random({16}, -1.f, 1.f, 4));
    graph::Value square = s.constant("square", Buffer<float>::random({2, 8}, -1.f, 1.f, 4));
    s.output(s.add(s.sum(s.add(y, square)), s.sum(flat)), "r");
    CHECK(count_of(graph::eliminate_common_subexpressions(s), "constant") == 2);

    CHECK(max_output_difference(g, {}, no_passes()) == 0.0);
    CHECK(max_output_difference(g, {.merge_equal_constants = false}, no_passes()) == 0.0);
}

TEST_CASE("Module graph() is the graph after the passes and the switches turn passes off") {
    graph::Graph g;
    graph::Value x = g.input("x", {8});
    g.output(g.add(g.exp(x, "e1"), g.exp(x, "e2")), "y");
    g.relu(x, "dead");
    CHECK(ops_of(graph::build(g).graph()) == Ops{"exp", "add"});
    CHECK(ops_of(graph::build(g, Target::host(), {.eliminate_common_subexpressions = false}).graph()) ==
          Ops{"exp", "exp", "add"});
    CHECK(ops_of(graph::build(g, Target::host(), {.eliminate_dead_code = false}).graph()) ==
          Ops{"exp", "add", "relu"});
    CHECK(ops_of(graph::build(g, Target::host(), no_passes()).graph()) == ops_of(g));
}

TEST_CASE("a rewriting pass shares the constants it keeps instead of copying their data") {
    graph::Graph g;
    graph::Value x = g.input("x", {2, 8});
    graph::Value w = g.constant("w", Buffer<float>::random({4, 8}, -1.f, 1.f, 91));
    g.relu(x, "unused");  // dead: eliminate_dead_code rewrites the graph
    g.output(g.dense(x, w, "fc"), "y");
    graph::Graph h = graph::eliminate_dead_code(g);
    CHECK_FALSE(h.find("unused").has_value());
    CHECK(h.node(*h.find("w")).value.data() == g.node(w).value.data());
    // Graph::constant itself copies; constant_shared copies only a strided view.
    Buffer<float> mine = Buffer<float>::random({4, 8}, -1.f, 1.f, 92);
    graph::Graph k;
    CHECK(k.node(k.constant("copied", mine)).value.data() != mine.data());
    CHECK(k.node(k.constant_shared("shared", mine)).value.data() == mine.data());
    BufferRef column(mine.data(), f32, {4}, {8});  // every 8th element: not compact
    graph::Value c = k.constant_shared("strided", column);
    CHECK(k.node(c).value.data() != mine.data());
    CHECK(static_cast<const float*>(k.node(c).value.data())[3] == mine(3, 0));
}

TEST_CASE("simplify_operators cuts a dilated conv's window taps that read only padding") {
    // 14x14 maps, 3x3 windows: with dilation 24 or 36 (and as much padding) only the middle tap
    // reads the input, a 1x1 conv; with 12 every tap reads somewhere (kept).
    graph::Graph g;
    graph::Value x = g.input("x", {1, 8, 14, 14});
    auto conv = [&](int64_t rate, std::vector<int64_t> pads, const std::string& name) {
        graph::Value w = g.constant(name + ".w", Buffer<float>::random({4, 8, 3, 3}, -1.f, 1.f, uint64_t(rate)));
        return g.conv2d(x, w, {.pads = pads, .dilations = {rate, rate}}, name);
    };
    graph::Value a = conv(36, {36, 36, 36, 36}, "r36");
    graph::Value b = conv(24, {24, 24, 24, 24}, "r24");
    graph::Value c = conv(12, {12, 12, 12, 12}, "r12");
    graph::Value d = conv(10, {20, 0, 0, 20}, "lopsided");  // top 20: row 0 of taps never reads
    g.output(g.concat({a, b, c}, 1), "aspp");
    g.output(d, "d");
    graph::Graph h = graph::simplify_operators(g);
    auto attrs = [&](const char* name) { return h.node(*h.find(name)).attrs; };
    auto weight = [&](const char* name) { return h.type(h.node(*h.find(name)).inputs[1]).shape; };
    CHECK(weight("r36") == std::vector<int64_t>{4, 8, 1, 1});
    CHECK(attrs("r36").get_ints("pads") == std::vector<int64_t>{0, 0, 0, 0});
    CHECK(weight("r24") == std::vector<int64_t>{4, 8, 1, 1});
    CHECK(weight("r12") == std::vector<int64_t>{4, 8, 3, 3});
    CHECK(attrs("r12").get_ints("pads") == std::vector<int64_t>{12, 12, 12, 12});
    // Dilation 10, padding 20 above and right: 14 output rows; tap row 0 reads rows y - 20
    // (-20..-7, never), so the window starts a row lower with 10 rows of padding above; tap
    // column 2 reads x + 20 (past 13, never), the right padding shrinks to 10.
    CHECK(weight("lopsided") == std::vector<int64_t>{4, 8, 2, 2});
    CHECK(attrs("lopsided").get_ints("pads") == std::vector<int64_t>{10, 0, 0, 10});
    CHECK(h.type(*h.find("lopsided")).shape == g.type(d).shape);
    // The same outputs as the whole windows.
    CHECK(max_output_difference(g, {}, no_passes()) < 1e-5);
    CHECK(max_output_difference(g, {.convert_layout = false}, no_passes()) < 1e-5);
}

TEST_CASE("simplify_operators folds a pad by zeros into the average pool after it") {
    // torch's avg_pool2d(3, stride 1, padding 1) with count_include_pad: Pad, AveragePool.
    graph::Graph g;
    graph::Value x = g.input("x", {1, 4, 9, 9});
    graph::Value padded = g.pad(x, {0, 0, 1, 1, 0, 0, 1, 1}, 0.0, "padded");
    g.output(g.avg_pool2d(padded, {.kernel = 3, .stride = 1}, "pool"), "y");
    // Kept: a pad by 2 (not zeros), and a pool that pads itself without counting it.
    graph::Value twos = g.pad(x, {0, 0, 1, 1, 0, 0, 1, 1}, 2.0, "twos");
    g.output(g.avg_pool2d(twos, {.kernel = 3, .stride = 1}, "pool_twos"), "z");
    graph::Value own = g.avg_pool2d(g.pad(x, {0, 0, 1, 0, 0, 0, 0, 0}, 0.0, "top"), {.kernel = 3, .stride = 2, .pad = 1},
                                    "pool_own");
    g.output(own, "w");
    graph::Graph h = graph::simplify_operators(g);
    const graph::Node& pool = h.node(*h.find("pool"));
    CHECK(h.node(pool.inputs[0]).name == "x");
    CHECK(pool.attrs.get_ints("pads") == std::vector<int64_t>{1, 1, 1, 1});
    CHECK(pool.attrs.get_int("count_include_pad", 0) == 1);
    CHECK(h.node(h.node(*h.find("pool_twos")).inputs[0]).op == "pad");
    CHECK(h.node(h.node(*h.find("pool_own")).inputs[0]).op == "pad");
    CHECK(max_output_difference(g, {}, no_passes()) < 1e-6);
}

TEST_CASE("simplify_operators drops a pad by zeros and keeps one that shifts") {
    graph::Graph g;
    graph::Value x = g.input("x", {1, 4, 6, 6});
    graph::Value none = g.pad(x, {0, 0, 0, 0, 0, 0, 0, 0}, 0.0, "none");
    graph::Value shift = g.pad(x, {0, 0, 1, 0, 0, 0, -1, 0}, 0.0, "shift");  // same shape, moved down
    g.output(g.relu(none, "r"), "y");
    g.output(shift, "z");
    graph::Graph h = graph::simplify_operators(g);
    CHECK(ops_of(h) == Ops{"pad", "relu"});
    CHECK(h.node(*h.find("r")).inputs[0] == *h.find("x"));
    CHECK(max_output_difference(g, {}, no_passes()) < 1e-6);
}

TEST_CASE("simplify_operators turns pow by a constant 2 or 3 into products and dense with constant weights into matmul") {
    graph::Graph g;
    graph::Value x = g.input("x", {3, 8});
    Buffer<float> two({1}), three({1}), half({1}), twos({2, 1, 1});
    two(0) = 2.f;
    three(0) = 3.f;
    half(0) = 0.5f;
    for (int64_t i = 0; i < 2; ++i) twos(i, 0, 0) = 2.f;
    graph::Value sq = g.pow(x, g.constant("two", two), "sq");
    // (x * x) * x: GPT-2's tanh GELU, whose powf per element dominated its kernel.
    graph::Value cube = g.pow(x, g.constant("three", three), "cube");
    graph::Value root = g.pow(g.mul(x, x, "xx"), g.constant("half", half), "root");  // another exponent: kept
    graph::Value wider = g.pow(x, g.constant("twos", twos), "wider");       // broadcasts x up: kept
    graph::Value w = g.constant("w", Buffer<float>::random({5, 8}, -1.f, 1.f, 3));
    graph::Value fc = g.dense(g.add(g.add(sq, cube, "s"), root, "t"), w, "fc");
    graph::Value w_in = g.input("w_in", {5, 8});
    g.output(fc, "y");
    g.output(g.dense(x, w_in, "fc_in"), "y_in");  // a weight that is an input: kept
    g.output(wider, "z");

    graph::Graph h = graph::simplify_operators(g);
    CHECK(ops_of(h) == Ops{"mul", "mul", "mul", "mul", "pow", "pow", "add", "add", "transpose", "matmul", "dense"});
    CHECK(h.node(*h.find("sq")).op == "mul");  // the rewritten nodes keep their names
    CHECK(h.node(*h.find("cube")).op == "mul");
    CHECK(h.node(*h.find("root")).op == "pow");
    CHECK(h.node(*h.find("fc")).op == "matmul");
    // Built with the default pipeline, the transpose is folded into a constant, packed into
    // panels (pack_matmul_weights) for a matmul_packed.
    graph::Module m = graph::build(g);
    CHECK(count_of(m.graph(), "transpose") == 0);
    CHECK(count_of(m.graph(), "matmul_packed") == 1);
    CHECK(max_output_difference(g, {}, no_passes()) < 1e-5);
    // Nothing to simplify: the graph comes back as it is.
    graph::Graph plain;
    plain.output(plain.relu(plain.input("a", {4}), "r"), "out");
    CHECK(ops_of(graph::simplify_operators(plain)) == Ops{"relu"});
}

TEST_CASE("pack_matmul_weights packs a matmul's constant weight once, at build, at any row count") {
    for (int64_t rows : {1, 5, 16, 37}) {
        CAPTURE(rows);
        graph::Graph g;
        graph::Value x = g.input("x", {rows, 48});
        graph::Value w = g.constant("w", Buffer<float>::random({48, 70}, -1.f, 1.f, 9));  // 70: a partial panel
        graph::Value b = g.constant("b", Buffer<float>::random({70}, -1.f, 1.f, 10));
        graph::Value y = g.relu(g.add(g.matmul(x, w, "fc"), b));
        g.output(y, "y");
        g.output(g.matmul(x, g.input("w_in", {48, 3}), "fc_in"), "z");  // a weight that is an input: kept
        graph::Graph h = graph::pack_matmul_weights(g);
        CHECK(count_of(h, "matmul_packed") == 1);
        CHECK(count_of(h, "pack_matmul_weight") == 1);
        CHECK(count_of(h, "matmul") == 1);
        CHECK(h.node(*h.find("fc")).op == "matmul_packed");  // the name stays
        // Built: the packing folded into a constant of panels, the bias and ReLU fused.
        graph::Module m = graph::build(g);
        CHECK(count_of(m.graph(), "pack_matmul_weight") == 0);
        CHECK(count_of(m.graph(), "matmul_packed") == 1);
        CHECK(max_output_difference(g, {}, no_passes()) < 1e-5);
    }
}

TEST_CASE("simplify_operators moves a reshape that keeps the last axis past element-wise operators") {
    // matmul [64, 32] -> reshape [1, 64, 32] -> + bias -> gelu, as an importer splits a
    // matmul's rows back into [batch, sequence]: the reshape goes after the gelu, so the
    // matmul's kernel takes the bias and the gelu as its epilogue.
    graph::Graph g;
    graph::Value x = g.input("x", {64, 16});
    graph::Value w = g.constant("w", Buffer<float>::random({16, 32}, -1, 1, 1));
    graph::Value bias = g.constant("bias", Buffer<float>::random({32}, -1, 1, 2));
    graph::Value scale = g.constant("scale", Buffer<float>::random({1, 1, 32}, -1, 1, 3));
    graph::Value rows = g.reshape(g.matmul(x, w), {1, 64, 32}, "rows");
    graph::Value y = g.mul(g.gelu(g.add(rows, bias, "biased")), scale, "y");
    g.output(y, "y");
    graph::Graph s = graph::simplify_operators(g);
    // The reshape now follows y's operators; the output keeps its name and shape.
    const graph::Node& out = s.node(s.outputs()[0].second);
    CHECK(out.op == "reshape");
    CHECK(out.name == "y");
    CHECK(s.node(out.inputs[0]).op == "mul");
    CHECK(s.type(out.inputs[0]).shape == std::vector<int64_t>{64, 32});
    // One kernel for the matmul and its epilogue, then the reshape's copy (an output).
    graph::Module m = graph::build(g);
    bool fused = false;
    for (const graph::KernelInfo& k : m.kernels()) fused |= k.name.find("gelu") != std::string::npos && k.name.find("matmul") != std::string::npos;
    CHECK(fused);
    auto xv = Buffer<float>::random({64, 16}, -1, 1, 4);
    m.set_input("x", xv);
    m.run();
    graph::Module ref = graph::build(g, Target::host(), {.fuse = false, .simplify_operators = false});
    ref.set_input("x", xv);
    ref.run();
    Buffer<float> got(m.get_output("y")), want(ref.get_output("y"));
    REQUIRE(got.shape() == want.shape());
    for (int64_t i = 0; i < got.size(); ++i) CHECK(got.data()[i] == doctest::Approx(want.data()[i]).epsilon(1e-5));
    // An operand that varies along another axis keeps the reshape where it is.
    graph::Graph h;
    graph::Value a = h.input("a", {64, 32});
    graph::Value per_row = h.constant("per_row", Buffer<float>::random({1, 64, 1}, -1, 1, 5));
    h.output(h.add(h.reshape(a, {1, 64, 32}), per_row), "z");
    graph::Graph t = graph::simplify_operators(h);
    CHECK(t.node(t.outputs()[0].second).op == "add");
}

// graph::build and graph::Module on small graphs: outputs against naive references, fused
// and unfused, with and without memory planning.
#include <doctest/doctest.h>

#include <cmath>

#include "weft/weft.hpp"

using namespace weft;

namespace {

Buffer<float> random_buffer(std::vector<int64_t> shape, uint64_t seed) { return Buffer<float>::random(shape, -1.f, 1.f, seed); }

// out[n, o, y, x] = relu(sum x[n, c, y*s + ky - p, x*s + kx - p] * w[o, c, ky, kx] + b[o]).
std::vector<double> conv_bias_relu_reference(const Buffer<float>& x, const Buffer<float>& w, const Buffer<float>& b,
                                             int64_t stride, int64_t pad, std::vector<int64_t>& shape) {
    int64_t N = x.dim(0), C = x.dim(1), H = x.dim(2), W = x.dim(3), O = w.dim(0), KH = w.dim(2), KW = w.dim(3);
    int64_t OH = (H + 2 * pad - KH) / stride + 1, OW = (W + 2 * pad - KW) / stride + 1;
    shape = {N, O, OH, OW};
    std::vector<double> out;
    for (int64_t n = 0; n < N; ++n)
        for (int64_t o = 0; o < O; ++o)
            for (int64_t oy = 0; oy < OH; ++oy)
                for (int64_t ox = 0; ox < OW; ++ox) {
                    double acc = b(o);
                    for (int64_t c = 0; c < C; ++c)
                        for (int64_t ky = 0; ky < KH; ++ky)
                            for (int64_t kx = 0; kx < KW; ++kx) {
                                int64_t iy = oy * stride + ky - pad, ix = ox * stride + kx - pad;
                                if (iy >= 0 && iy < H && ix >= 0 && ix < W) acc += double(x(n, c, iy, ix)) * w(o, c, ky, kx);
                            }
                    out.push_back(std::max(acc, 0.0));
                }
    return out;
}

double max_error(const BufferRef& got, const std::vector<double>& want) {
    const float* p = static_cast<const float*>(got.data());
    double worst = 0;
    for (size_t i = 0; i < want.size(); ++i) worst = std::max(worst, std::abs(p[i] - want[i]) / std::max(1.0, std::abs(want[i])));
    return worst;
}

}  // namespace

TEST_CASE("a conv2d + bias + relu graph runs and matches a naive reference, fused and unfused") {
    auto xv = random_buffer({1, 5, 11, 13}, 1), wv = random_buffer({7, 5, 3, 3}, 2), bv = random_buffer({7}, 3);
    graph::Graph g;
    graph::Value x = g.input("x", {1, 5, 11, 13});
    graph::Value y = g.relu(g.conv2d(x, g.constant("w", wv), g.constant("b", bv), {.stride = 2, .pad = 1}));
    g.output(y, "y");
    std::vector<int64_t> shape;
    std::vector<double> want = conv_bias_relu_reference(xv, wv, bv, 2, 1, shape);
    for (bool fuse : {true, false}) {
        CAPTURE(fuse);
        graph::Module blocked = graph::build(g, Target::host(), {.fuse = fuse});  // NCHW[x]c convolution
        blocked.set_input("x", xv);
        blocked.run();
        CHECK(max_error(blocked.get_output("y"), want) < 1e-4);
        graph::Module m = graph::build(g, Target::host(), {.fuse = fuse, .convert_layout = false});
        CHECK(m.kernels().size() == (fuse ? 1u : 3u));
        m.set_input("x", xv);
        m.run();
        CHECK(m.get_output("y").shape() == shape);
        CHECK(max_error(m.get_output(0), want) < 1e-4);
    }
}

TEST_CASE("an MLP with shared intermediate storage matches a naive reference") {
    const int64_t M = 3, K = 17, H = 33, N = 5;
    auto xv = random_buffer({M, K}, 4), w1 = random_buffer({H, K}, 5), b1 = random_buffer({H}, 6);
    auto w2 = random_buffer({N, H}, 7), b2 = random_buffer({N}, 8);
    graph::Graph g;
    graph::Value x = g.input("x", {M, K});
    graph::Value h = g.relu(g.dense(x, g.constant("w1", w1), g.constant("b1", b1)));
    graph::Value y = g.dense(h, g.constant("w2", w2), g.constant("b2", b2));
    g.output(g.softmax(y), "p");
    std::vector<double> want;
    for (int64_t i = 0; i < M; ++i) {
        std::vector<double> hid(H), logits(N);
        for (int64_t j = 0; j < H; ++j) {
            double a = b1(j);
            for (int64_t k = 0; k < K; ++k) a += double(xv(i, k)) * w1(j, k);
            hid[size_t(j)] = std::max(a, 0.0);
        }
        double mx = -1e30, total = 0;
        for (int64_t j = 0; j < N; ++j) {
            double a = b2(j);
            for (int64_t k = 0; k < H; ++k) a += hid[size_t(k)] * w2(j, k);
            logits[size_t(j)] = a;
            mx = std::max(mx, a);
        }
        for (double& l : logits) total += std::exp(l - mx);
        for (double l : logits) want.push_back(std::exp(l - mx) / total);
    }
    for (bool plan : {true, false}) {
        CAPTURE(plan);
        graph::Module m = graph::build(g, Target::host(), {.plan_memory = plan});
        m.set_input(0, xv);
        m.run();
        CHECK(max_error(m.get_output("p"), want) < 1e-5);
        CHECK(m.memory_bytes() <= m.memory_naive_bytes());
    }
}

TEST_CASE("build: a run-time check throws its message after a run whose flag is set") {
    // y = x * 2, checked: every x must be below `limit`.
    Buffer<float> two({1});
    two(0) = 2.f;
    graph::Graph g;
    graph::Value x = g.input("x", {4});
    graph::Value limit = g.input("limit", {1});
    g.output(g.mul(x, g.constant("two", two)), "y");
    graph::Value over = g.add_node("greater", {g.max(x, {0}, true), limit});
    g.check_at_run(over, "x reached the limit");
    CHECK_THROWS_WITH_AS(g.check_at_run(x, "not a flag"), doctest::Contains("a bool flag of one element"), Error);
    // (Also a plain output named like one: the module would read its first byte as the flag.)
    CHECK_THROWS_WITH_AS(g.output(x, std::string(graph::kRunCheckPrefix) + "x"),
                         doctest::Contains("a bool flag of one element, not float32[4]"), Error);
    REQUIRE(g.outputs().size() == 2);  // the graph keeps it as an output ...
    graph::Module m = graph::build(g);
    CHECK(m.num_outputs() == 1);  // ... the module lists only y
    CHECK(m.output_names() == std::vector<std::string>{"y"});
    auto xv = Buffer<float>::random({4}, -1, 1, 3);
    m.set_input("x", xv);
    Buffer<float> l({1});
    l(0) = 2.f;
    m.set_input("limit", l);
    m.run();
    CHECK(Buffer<float>(m.get_output("y"))(1) == xv(1) * 2);
    l(0) = -2.f;
    m.set_input("limit", l);
    CHECK_THROWS_WITH_AS(m.run(), doctest::Contains("graph::Module::run: x reached the limit"), Error);
    CHECK_THROWS_WITH_AS(m.profile(1), doctest::Contains("x reached the limit"), Error);
    CHECK_THROWS_WITH_AS(m.run_debug(), doctest::Contains("x reached the limit"), Error);
}

TEST_CASE("build: kernels only one branch of a where on a flag needs run only when it is taken") {
    // y = c ? relu(x w1^T) : x w2^T, z = c ? 0 : x w3^T; `shared` is read by a branch and as
    // an output: it always runs.
    const int64_t M = 8, K = 16, N = 12;
    auto x = Buffer<float>::random({M, K}, -1, 1, 1);
    auto w1 = Buffer<float>::random({N, K}, -1, 1, 2), w2 = Buffer<float>::random({N, K}, -1, 1, 3);
    graph::Graph g;
    graph::Value xv = g.input("x", {M, K});
    graph::Value c = g.input("c", {1}, DataType::bool_());
    graph::Value a = g.relu(g.dense(xv, g.constant("w1", w1)), "a");
    graph::Value b = g.dense(xv, g.constant("w2", w2), "b");
    g.output(g.where(c, a, b, "y"), "y");
    graph::Value only_else = g.dense(xv, g.constant("w3", w2), "only_else");
    g.output(g.where(c, g.constant("zero", Buffer<float>({1})), only_else, "z"), "z");
    graph::Value shared = g.dense(xv, g.constant("w4", w1), "shared");
    g.output(shared, "shared");
    g.output(g.where(c, shared, only_else, "t"), "t");
    auto product = [&](const Buffer<float>& w, int64_t i, int64_t j) {
        double s = 0;
        for (int64_t k = 0; k < K; ++k) s += double(x(i, k)) * w(j, k);
        return s;
    };
    graph::Module m = graph::build(g, Target::host(), {.eliminate_common_subexpressions = false});
    std::map<std::string, std::pair<int, bool>> conditions;  // kernel root -> condition
    for (const graph::KernelInfo& k : m.kernels())
        conditions[m.graph().node(k.nodes.back()).name] = {k.condition, k.condition_value};
    const int flag = m.graph().find("c")->id;
    CHECK(conditions.at("a") == std::pair<int, bool>{flag, true});
    CHECK(conditions.at("b") == std::pair<int, bool>{flag, false});
    CHECK(conditions.at("only_else") == std::pair<int, bool>{flag, false});
    CHECK(conditions.at("shared").first == -1);
    graph::Module loaded = graph::load_module_from_memory(graph::save_to_memory(m));
    for (graph::Module* mod : {&m, &loaded})
        for (bool taken : {true, false, true}) {
            CAPTURE(taken);
            Buffer<bool> cv({1});
            cv(0) = taken;
            mod->set_input("x", x);
            mod->set_input("c", cv);
            mod->run();
            Buffer<float> y(mod->get_output("y")), z(mod->get_output("z"));
            for (int64_t i = 0; i < M; ++i)
                for (int64_t j = 0; j < N; ++j) {
                    const double want = taken ? std::max(product(w1, i, j), 0.0) : product(w2, i, j);
                    CHECK(y(i, j) == doctest::Approx(want).epsilon(1e-5));
                    CHECK(z(i, j) == doctest::Approx(taken ? 0.0 : product(w2, i, j)).epsilon(1e-5));
                }
            // Only the branch taken ran; run_debug checks the kernels that run.
            graph::ProfileReport p = mod->profile(2);
            for (const graph::KernelTiming& t : p.kernels) {
                const std::string root = mod->graph().node(t.nodes.back()).name;
                if (root == "a") CHECK(t.runs == (taken ? 2 : 0));
                if (root == "b" || root == "only_else") CHECK(t.runs == (taken ? 0 : 2));
            }
            CHECK(mod->run_debug().ok);
        }
}

TEST_CASE("build: Module::build_phases says where the build's time went, step by step") {
    graph::Graph g;
    graph::Value x = g.input("x", {4, 8});
    g.output(g.relu(g.dense(x, g.constant("w", Buffer<float>::random({6, 8}, -1, 1, 1)))), "y");
    graph::Module m = graph::build(g);
    std::vector<std::string> names;
    double total = 0;
    for (const graph::BuildPhase& p : m.build_phases()) {
        CHECK(p.ms >= 0);
        names.push_back(p.name);
        total += p.name.starts_with("  ") ? 0 : p.ms;
    }
    const std::vector<std::string> in_order = {"pass eliminate_dead_code", "pass fold_constants", "fuse",
                                               "compile kernels", "  schedules", "  lowering", "  LLVM",
                                               "plan memory and allocate"};
    size_t at = 0;
    for (const std::string& n : names)
        if (at < in_order.size() && n == in_order[at]) ++at;
    CHECK(at == in_order.size());  // each of them, in this order
    CHECK(total > 0);
    // A loaded module was not built: no phases.
    CHECK(graph::load_module_from_memory(graph::save_to_memory(m)).build_phases().empty());
}

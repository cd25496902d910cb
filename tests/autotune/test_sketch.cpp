// Template-free schedules (autotune/sketch.hpp): for computations nobody wrote a template for,
// the sketch's default and random points of its space (every point is a schedule) compute
// what the unscheduled computation computes; graph::tune searches an operator registered with
// graph::auto_schedule_op, and build applies what it found.
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "weft/weft.hpp"

using namespace weft;

namespace {

struct Case {
    std::string name;
    std::vector<Tensor> args;  // inputs, then the output
};

// Random inputs; the output computed with the plain schedule (no primitive) is the reference.
std::vector<Buffer<float>> inputs_of(const Case& c, uint64_t seed) {
    std::vector<Buffer<float>> in;
    for (size_t i = 0; i + 1 < c.args.size(); ++i) {
        std::vector<int64_t> shape;
        for (const Expr& e : c.args[i].shape()) { int64_t d = 0; REQUIRE(ir::as_const_int(e, &d)); shape.push_back(d); }
        in.push_back(Buffer<float>::random(shape, -1, 1, seed + i));
    }
    return in;
}

std::vector<Argument> arguments(const Case& c) { return {c.args.begin(), c.args.end()}; }

Buffer<float> run(const Kernel& k, const Case& c, const std::vector<Buffer<float>>& in) {
    std::vector<int64_t> shape;
    for (const Expr& e : c.args.back().shape()) { int64_t d = 0; REQUIRE(ir::as_const_int(e, &d)); shape.push_back(d); }
    Buffer<float> out(shape);
    std::vector<KernelArgValue> values(in.begin(), in.end());
    values.emplace_back(out);
    k.call(std::span<const KernelArgValue>(values.data(), values.size()));
    return out;
}

void check_close(const Buffer<float>& got, const Buffer<float>& want) {
    REQUIRE(got.size() == want.size());
    double worst = 0, scale = 1e-6;
    for (int64_t i = 0; i < got.size(); ++i) {
        worst = std::max(worst, double(std::abs(got.data()[i] - want.data()[i])));
        scale = std::max(scale, double(std::abs(want.data()[i])));
    }
    CHECK(worst <= 1e-5 * scale + 1e-6);
}

std::vector<Case> cases() {
    std::vector<Case> out;
    {  // a matmul of odd sizes
        Tensor A = placeholder({36, 20}, f32, "A"), B = placeholder({20, 24}, f32, "B");
        IterVar k = reduce_axis(0, 20, "k");
        Tensor C = compute({36, 24}, [&](Expr i, Expr j) { return sum(A(i, k) * B(k, j), {k}); }, "C");
        out.push_back({"matmul", {A, B, C}});
    }
    {  // a matmul with a bias and ReLU epilogue: the reduction accumulates the epilogue's tile
        Tensor A = placeholder({16, 32}, f32, "A"), B = placeholder({32, 48}, f32, "B"), bias = placeholder({48}, f32, "bias");
        IterVar k = reduce_axis(0, 32, "k");
        Tensor C = compute({16, 48}, [&](Expr i, Expr j) { return sum(A(i, k) * B(k, j), {k}); }, "C");
        Tensor D = compute({16, 48}, [&](Expr i, Expr j) { return max(C(i, j) + bias(j), 0.f); }, "D");
        out.push_back({"matmul+bias+relu", {A, B, bias, D}});
    }
    {  // a convolution over a padded input (the padding stage inlined)
        Tensor X = placeholder({1, 4, 10, 10}, f32, "X"), W = placeholder({8, 4, 3, 3}, f32, "W");
        Tensor P = compute({1, 4, 12, 12}, [&](Expr n, Expr c, Expr h, Expr w) {
            return if_then_else(h >= 1 && h < 11 && w >= 1 && w < 11, X(n, c, h - 1, w - 1), 0.f);
        }, "P");
        IterVar rc = reduce_axis(0, 4, "rc"), ry = reduce_axis(0, 3, "ry"), rx = reduce_axis(0, 3, "rx");
        Tensor Y = compute({1, 8, 10, 10}, [&](Expr n, Expr f, Expr y, Expr x) {
            return sum(P(n, rc, y + ry, x + rx) * W(f, rc, ry, rx), {rc, ry, rx});
        }, "Y");
        out.push_back({"conv2d", {X, W, Y}});
    }
    {  // two reductions (a row's max, then the sum of exponentials): the output tiled alone
        Tensor X = placeholder({12, 40}, f32, "X");
        IterVar k = reduce_axis(0, 40, "k"), k2 = reduce_axis(0, 40, "k2");
        Tensor M = compute({12}, [&](Expr i) { return max(X(i, k), {k}); }, "M");
        Tensor S = compute({12}, [&](Expr i) { return sum(exp(X(i, k2) - M(i)), {k2}); }, "S");
        Tensor Y = compute({12, 40}, [&](Expr i, Expr j) { return exp(X(i, j) - M(i)) / S(i); }, "Y");
        out.push_back({"softmax", {X, Y}});
    }
    {  // a long row reduction (rfactor's case), and its mean (an epilogue)
        Tensor X = placeholder({8, 256}, f32, "X");
        IterVar k = reduce_axis(0, 256, "k"), k2 = reduce_axis(0, 256, "k2");
        Tensor S = compute({8}, [&](Expr i) { return sum(X(i, k), {k}); }, "S");
        out.push_back({"row sum", {X, S}});
        Tensor T = compute({8}, [&](Expr i) { return sum(X(i, k2), {k2}); }, "T");
        Tensor M = compute({8}, [&](Expr i) { return T(i) / 256.f; }, "M");
        out.push_back({"row mean", {X, M}});
    }
    {  // element-wise only
        Tensor X = placeholder({6, 32}, f32, "X");
        Tensor T = compute({6, 32}, [&](Expr i, Expr j) { return X(i, j) * 2.f + 1.f; }, "T");
        Tensor Y = compute({6, 32}, [&](Expr i, Expr j) { return max(T(i, j), 0.f); }, "Y");
        out.push_back({"element-wise", {X, Y}});
    }
    return out;
}

// The space the sketch defines for a case.
ConfigSpace space_of(const Case& c, const Target& target) {
    ConfigSpace space;
    Schedule s = create_schedule(c.args.back());
    autotune::auto_schedule(s, c.args.back(), target, Config::recording(&space));
    return space;
}

}  // namespace

TEST_CASE("auto_schedule: the default and random points of a sketch compute what the plain schedule computes") {
    for (const Target& target : {Target::host(), [] {
             Target t = Target::host();
             t.num_threads = 2;
             return t;
         }()}) {
        for (const Case& c : cases()) {
            CAPTURE(c.name);
            CAPTURE(target.num_threads);
            const std::vector<Buffer<float>> in = inputs_of(c, 7);
            Schedule plain = create_schedule(c.args.back());
            const Buffer<float> want = run(build(plain, arguments(c), target), c, in);
            const ConfigSpace space = space_of(c, target);
            CHECK(space.find("auto.parallel") != nullptr);
            CHECK(space.find("auto.s0.inner") != nullptr);
            if (c.name != "softmax" && c.name != "element-wise") CHECK(space.find("auto.k0") != nullptr);
            if (c.name.rfind("row", 0) == 0 || c.name.rfind("matmul", 0) == 0)
                CHECK(space.find("auto.rfactor") != nullptr);
            std::mt19937_64 rng(3);
            // The rfactor branch on its own too (where there is one).
            if (space.find("auto.rfactor") != nullptr) {
                Config with = space.defaults();
                with.set("auto.rfactor", 1);
                Schedule s = create_schedule(c.args.back());
                autotune::auto_schedule(s, c.args.back(), target, with);
                check_close(run(build(s, arguments(c), target), c, in), want);
            }
            // Every point is a schedule (no point is refused).
            for (int trial = 0; trial < 10; ++trial) {
                const Config config = trial == 0 ? space.defaults() : space.at(rng() % space.size());
                CAPTURE(config.str());
                Schedule s = create_schedule(c.args.back());
                autotune::auto_schedule(s, c.args.back(), target, config);
                check_close(run(build(s, arguments(c), target), c, in), want);
            }
        }
    }
}

TEST_CASE("auto_schedule refuses a GPU target and a tensor that is not computed") {
    Tensor A = placeholder({8}, f32, "A");
    Tensor B = compute({8}, [&](Expr i) { return A(i) + 1.f; }, "B");
    Schedule s = create_schedule(B);
    CHECK_THROWS_WITH_AS(autotune::auto_schedule(s, B, Target::cuda()), doctest::Contains("CPU targets"), Error);
    CHECK_THROWS_WITH_AS(autotune::auto_schedule(s, A, Target::host()), doctest::Contains("is not computed"), Error);
}

// A user's own operator, with no schedule of its own but the sketch: a task for graph::tune.
TEST_CASE("graph::tune searches the sketch of an operator registered with auto_schedule_op") {
    graph::register_op({.name = "test_sketch_bilinear", .pattern = graph::OpPattern::OutEWiseFusable,
                        .min_inputs = 2, .max_inputs = 2,
                        .infer = [](const std::vector<graph::TensorType>& in, const graph::Attrs&) {
                            return graph::TensorType{{in[0].shape[0], in[1].shape[1]}, f32};
                        },
                        .compute = [](const std::vector<Tensor>& in, const graph::Attrs&) {
                            // x W with each product squared: no topi template knows it.
                            IterVar k = reduce_axis(0, in[0].shape()[1], "k");
                            return compute({in[0].shape()[0], in[1].shape()[1]}, [&](Expr i, Expr j) {
                                Expr p = in[0](i, k) * in[1](k, j);
                                return sum(p * p, {k});
                            }, "bilinear");
                        },
                        .schedule = graph::auto_schedule_op});
    graph::Graph g;
    g.output(g.relu(g.add_node("test_sketch_bilinear", {g.input("x", {24, 40}), g.input("w", {40, 32})})), "y");
    std::vector<graph::TuningTask> tasks = graph::extract_tasks(g, Target::host());
    REQUIRE(tasks.size() == 1);
    CHECK(tasks[0].space.find("auto.k0") != nullptr);
    autotune::Records records =
        graph::tune(g, Target::host(), {.trials = 10, .tuner = graph::TuneOptions::Tuner::Random, .seed = 2});
    REQUIRE(records.size() == 10);
    for (const auto& r : records.all()) {
        CAPTURE(r.error);
        CHECK(r.ok());
    }
    graph::Module tuned = graph::build(g, Target::host(), {.records = std::make_shared<autotune::Records>(records)});
    CHECK(tuned.kernels()[0].tuned);
    graph::Module plain = graph::build(g, Target::host());
    Buffer<float> x = Buffer<float>::random({24, 40}, -1, 1, 5), w = Buffer<float>::random({40, 32}, -1, 1, 6);
    for (graph::Module* m : {&tuned, &plain}) {
        m->set_input("x", x);
        m->set_input("w", w);
        m->run();
    }
    Buffer<float> a({24, 32}), b({24, 32});
    a.copy_from(tuned.get_output(0));
    b.copy_from(plain.get_output(0));
    // The reference: naive loops.
    for (int i = 0; i < 24; ++i)
        for (int j = 0; j < 32; ++j) {
            double acc = 0;
            for (int k = 0; k < 40; ++k) {
                const double p = double(x.data()[i * 40 + k]) * w.data()[k * 32 + j];
                acc += p * p;
            }
            CHECK(std::abs(a.data()[i * 32 + j] - std::max(acc, 0.0)) <= 1e-4 * (1 + std::abs(acc)));
            CHECK(std::abs(b.data()[i * 32 + j] - std::max(acc, 0.0)) <= 1e-4 * (1 + std::abs(acc)));
        }
}
